#!/usr/bin/env bash
# run_codex.sh WARDEN: the real Codex CLI, a short scripted session under
# `warden run --agent codex`, offline, in each tier and through both
# launcher paths.
#
#   1. installs @openai/codex@$CODEX_VERSION with npm into build/agents
#      (once; later runs reuse it with no network);
#   2. for each session (passive, standard with nobody to ask, aggressive,
#      through node's bin/codex.js; passive and aggressive with the native
#      binary started directly): starts tests/agents/fake_responses.py on
#      127.0.0.1 (the Responses API over SSE, scripted: exec_command `ls`,
#      `cat README.md`, `cat .env`; apply_patch of .env and of a new
#      NOTES.md; exec_command `rm -r ~`; exec_command `curl` of the fake
#      server itself, refused at its connect; "done"), makes a throw-away project
#      (README.md, a .env holding a unique secret, git init) and a
#      throw-away HOME whose ~/.codex/config.toml points at the server;
#   3. runs Codex under warden; when root, inside a new network namespace
#      that has only loopback, so nothing can leave the machine;
#   4. checks the audit and what the model got back
#      (tests/agents/check_codex.py).
#
# Exit: 0 every check passed, 1 a check failed, 77 skipped (no npm/node, or
# npm could not reach the registry), 2 bad usage.
#
# Environment: AGENTS_CACHE (default build/agents), CODEX_VERSION (0.169.0),
# KEEP=1 keeps the work directory, AGENTS_NETNS=0 skips the network
# namespace, AGENTS_TIMEOUT (seconds per session, default 120),
# CODEX_SESSIONS (default "passive:node standard:node aggressive:node
# passive:native aggressive:native").

set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CODEX_VERSION=${CODEX_VERSION:-0.169.0}
CACHE=${AGENTS_CACHE:-$ROOT/build/agents}
TIMEOUT=${AGENTS_TIMEOUT:-120}
SESSIONS=${CODEX_SESSIONS:-passive:node standard:node aggressive:node passive:native aggressive:native}

# A checkout under /tmp (as CI may clone it): the CLI installed in it is
# the host's, which the session's private /tmp would not show; share it.
SHARE=()
case "$CACHE" in /tmp/* | /var/tmp/* | /dev/shm/*) SHARE=(--share-tmp "$CACHE") ;; esac

say() { printf '[test-agents/codex] %s\n' "$*"; }
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
# bin/codex.js (the launcher npm links as .bin/codex) and the native binary
# it starts, from the platform package npm installs beside it.
case "$(uname -m)" in
x86_64) TRIPLE=x86_64-unknown-linux-musl PLAT=codex-linux-x64 ;;
aarch64) TRIPLE=aarch64-unknown-linux-musl PLAT=codex-linux-arm64 ;;
*) skip "no Codex build for $(uname -m)" ;;
esac
LAUNCHER=$CACHE/node_modules/.bin/codex
NATIVE=$CACHE/node_modules/@openai/$PLAT/vendor/$TRIPLE/bin/codex

have_codex() {
	[ -x "$LAUNCHER" ] && [ -x "$NATIVE" ] &&
		"$NATIVE" --version 2>/dev/null | grep -q "^codex-cli $CODEX_VERSION\$"
}

if [ "${AGENTS_TEST_PHASE:-}" != session ]; then
	T0=$(date +%s.%N)
	if ! have_codex; then
		command -v node >/dev/null || skip "node is not installed (Codex's launcher needs Node)"
		command -v npm >/dev/null || skip "npm is not installed"
		mkdir -p "$CACHE"
		say "installing @openai/codex@$CODEX_VERSION into $CACHE (node $(node --version))"
		if ! npm install --prefix "$CACHE" --no-audit --no-fund --loglevel=error \
			"@openai/codex@$CODEX_VERSION" >"$CACHE/npm-install-codex.log" 2>&1; then
			if grep -qE 'ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|network|proxy|certificate|self.signed|UNABLE_TO' \
				"$CACHE/npm-install-codex.log"; then
				tail -5 "$CACHE/npm-install-codex.log"
				skip "npm could not reach the registry (see $CACHE/npm-install-codex.log)"
			fi
			tail -20 "$CACHE/npm-install-codex.log"
			die "npm install failed (see $CACHE/npm-install-codex.log)"
		fi
		have_codex || die "installed, but $NATIVE does not answer --version with codex-cli $CODEX_VERSION"
	fi
	export AGENTS_INSTALL_S
	AGENTS_INSTALL_S=$(secs_since "$T0")
	say "Codex $("$NATIVE" --version 2>/dev/null) at $LAUNCHER (native: $NATIVE), node $(node --version 2>/dev/null)"

	if [ "${AGENTS_NETNS:-1}" != 0 ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null &&
		command -v ip >/dev/null && unshare -n true 2>/dev/null; then
		say "running the sessions in a new network namespace (loopback only): fully offline"
		exec unshare -n -- env AGENTS_TEST_PHASE=session AGENTS_TEST_NETNS=1 \
			bash -c 'ip link set lo up && exec bash "$0" "$1"' "${BASH_SOURCE[0]}" "$WARDEN"
	fi
	say "no network namespace (not root, or AGENTS_NETNS=0): offline only by configuration"
	export AGENTS_TEST_PHASE=session AGENTS_TEST_NETNS=0
	exec bash "${BASH_SOURCE[0]}" "$WARDEN"
fi

# ---- the sessions -------------------------------------------------------------------
have_codex || die "no codex $CODEX_VERSION in $CACHE"
WORK=$(mktemp -d /tmp/warden-codex.XXXXXX)
SRV_PID=
cleanup() {
	[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null
	if [ "${KEEP:-0}" = 1 ] || [ "${RESULT:-1}" != 0 ]; then
		say "work directory kept: $WORK (per session: server log, audit, codex's output, its HOME)"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT

# One session: $1 tier, $2 launcher (node or native). Returns the check's
# status.
session() {
	local tier=$1 how=$2 dir=$WORK/$1-$2
	local proj=$dir/project home=$dir/home audit=$dir/audit.db
	mkdir -p "$proj" "$home/.codex"
	local secret
	secret="wdn-secret-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
	(
		cd "$proj" || exit 1
		printf '# Demo project\n\nA tiny project that warden'"'"'s agent test reads.\n' >README.md
		printf 'API_TOKEN=%s\n' "$secret" >.env
		printf 'int main(void) { return 0; }\n' >main.c
		git init -q . && git -c user.name=t -c user.email=t@t add README.md main.c &&
			git -c user.name=t -c user.email=t@t commit -q -m init
	) || die "could not make the project"

	# The first answer waits 3 s: Codex writes its shell snapshot in the
	# background at start, and only then wraps its calls in the snapshot
	# wrapper (the shape warden decides by its inner command).
	python3 "$HERE/fake_responses.py" --port-file "$dir/port" --log "$dir/requests.jsonl" \
		--first-delay 3 2>"$dir/server.err" &
	SRV_PID=$!
	for _ in $(seq 100); do
		[ -s "$dir/port" ] && break
		sleep 0.1
	done
	[ -s "$dir/port" ] || die "the fake Responses server did not start: $(cat "$dir/server.err")"
	local port
	port=$(cat "$dir/port")
	cat >"$home/.codex/config.toml" <<EOF
model = "gpt-5.5"
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "http://127.0.0.1:$port/v1"
wire_api = "responses"
EOF
	local prog=$LAUNCHER
	[ "$how" = native ] && prog=$NATIVE
	local extra=()
	[ "$tier" = standard ] && extra=(--prompt none)
	local cmd=("$WARDEN" run "${SHARE[@]}" --agent codex --tier "$tier" "${extra[@]}" --project "$proj"
		--audit "$audit" -- "$prog" -a never exec --sandbox danger-full-access
		--skip-git-repo-check "list the files and read the README")
	local env=(HOME="$home" USER="$(id -un)" PATH="$PATH" LANG=C.UTF-8 TERM=dumb
		RUST_LOG=error)
	echo
	say "== session $tier, launcher $how: in $proj"
	printf '    env -i'
	printf ' %q' "${env[@]}" timeout -k 5 "$TIMEOUT" "${cmd[@]}"
	printf '\n'
	local t1 rc secs
	t1=$(date +%s.%N)
	(cd "$proj" && env -i "${env[@]}" timeout -k 5 "$TIMEOUT" "${cmd[@]}" \
		</dev/null >"$dir/codex.out" 2>"$dir/codex.err")
	rc=$?
	secs=$(secs_since "$t1")
	kill "$SRV_PID" 2>/dev/null
	wait "$SRV_PID" 2>/dev/null
	SRV_PID=
	say "warden exited $rc after ${secs}s"
	"$WARDEN" audit --audit "$audit" --format json >"$dir/audit.json" 2>"$dir/audit.err" ||
		die "warden audit failed: $(cat "$dir/audit.err")"
	"$WARDEN" audit --audit "$audit" --tool-calls >"$dir/tool-calls.txt" 2>>"$dir/audit.err"
	echo "-- warden audit --tool-calls (the model's calls)"
	grep -A1 '\[codex\]' "$dir/tool-calls.txt" | cut -c1-190
	python3 "$HERE/check_codex.py" --tier "$tier" --launcher "$how" \
		--audit-json "$dir/audit.json" --tool-calls "$dir/tool-calls.txt" \
		--requests "$dir/requests.jsonl" --stdout "$dir/codex.out" --stderr "$dir/codex.err" \
		--rc "$rc" --secret "$secret" --home "$home" --project "$proj" --port "$port"
}

T1=$(date +%s.%N)
RESULT=0
FAILED=()
for s in $SESSIONS; do
	if ! session "${s%%:*}" "${s##*:}"; then
		RESULT=1
		FAILED+=("$s")
	fi
done
echo
say "times: npm install/check ${AGENTS_INSTALL_S:-?}s, sessions under warden $(secs_since "$T1")s;" \
	"network namespace: $([ "${AGENTS_TEST_NETNS:-0}" = 1 ] && echo yes || echo no)"
if [ "$RESULT" = 0 ]; then
	say "PASS: Codex $CODEX_VERSION ran under warden in every session ($SESSIONS)"
else
	say "FAIL: ${FAILED[*]} (see the checks above)"
fi
exit "$RESULT"
