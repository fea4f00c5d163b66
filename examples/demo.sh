#!/usr/bin/env bash
# make demo: runs the scripted agent (examples/agent.sh) under warden on a
# copy of examples/demo-project, then prints the audit of that session.
# Every line of the audit is a real decision taken while the agent ran.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
built=$(realpath "${1:-$here/../build/debug/supervisor/warden}")
# warden refuses to run from a tree the agent or another user could write
# (a clone of yours, run here as root): run a copy in a directory of the
# demo's own, as make install would put it where only root writes.
bindir=$(mktemp -d /tmp/warden-demo-bin-XXXXXX)
install -m 0755 "$built" "$bindir/warden"
warden=$bindir/warden
proj=$(mktemp -d /tmp/warden-demo-XXXXXX)
cp -r "$here/demo-project/." "$proj/"
mv "$proj/env.sample" "$proj/.env"
mkdir -p "$proj/.warden"
cat > "$proj/.warden/permissions.json" <<'JSON'
{
  "tier": "passive",
  "grants": [
    { "command": ["make", "-j2"], "by": "demo", "at": "2026-12-02T00:00:00Z" }
  ]
}
JSON
(cd "$proj" && git init -q && git add -A && \
	git -c user.name=demo -c user.email=demo@example.invalid commit -qm "initial commit")

echo "== warden run --tier passive -- examples/agent.sh   (project: $proj)"
cd "$proj"
set +e
"$warden" run --prompt none -- "$here/agent.sh"
status=$?
set -e
echo
echo "== the agent exited with status $status; the audit of its session:"
"$warden" audit
echo
echo "(the project copy is in $proj; warden audit --format json shows every column)"
