#!/bin/sh
# examples/memory/run.sh: approval memory's whole loop, offline.
#
#  1. `warden run` creates a fresh project and its audit;
#  2. people's decisions are added to that audit: this script writes them
#     with the sqlite3 CLI (the rows warden writes when a person answers a
#     prompt: source 'user', decided_by the person), because answering
#     prompts needs a terminal; one timed-out request is added too, and it is
#     not a decision;
#  3. `warden rules propose` proposes a rule from those decisions;
#  4. `warden rules accept ID --by ann` writes it into permissions.json;
#  5. `warden explain` and a real `warden run --tier passive` show a later
#     request inside the rule allowed (source accepted_rule) while one
#     outside its bounds is still refused.
#
# Usage: examples/memory/run.sh [path/to/warden]   (needs sqlite3 and make)
set -eu

WARDEN=${1:-${WARDEN:-warden}}
case $WARDEN in /*) ;; */*) WARDEN=$(cd "$(dirname "$WARDEN")" && pwd)/$(basename "$WARDEN") ;; esac
command -v sqlite3 >/dev/null || { echo "run.sh: needs the sqlite3 CLI" >&2; exit 1; }
MAKE=$(command -v make) || { echo "run.sh: needs make" >&2; exit 1; }
MAKE=$(readlink -f "$MAKE")

PROJECT=$(mktemp -d /tmp/warden-memory.XXXXXX)
trap 'rm -rf "$PROJECT"' EXIT
cd "$PROJECT"
printf 'test:\n\t@echo tests pass\nbuild:\n\t@echo built\n' >Makefile

step() { printf '\n== %s\n' "$*"; }

step "1. a fresh project and its audit, created by warden itself"
"$WARDEN" run --tier passive -- /bin/true
DB=.warden/audit.db

step "2. people's decisions in the audit (seeded with sqlite3; see the header)"
now=$(date +%s)
n=0
row() { # row DECISION SOURCE BY ARGS...
	decision=$1 source=$2 by=$3
	shift 3
	argv='"make"'
	for a in "$@"; do argv="$argv,\"$a\""; done
	n=$((n + 1))
	ts=$(((now - 86400 + n * 60) * 1000000))
	reason="approved by $by"
	[ "$decision" = deny ] && reason="refused by $by"
	[ "$source" = timeout ] && reason="nobody answered in time"
	sqlite3 "$DB" "INSERT INTO decisions (ts_us, session, pid, ppid, kind, request, summary,
		decision, source, reason, decided_by) VALUES ($ts, 'seed', 100, 1, 'exec',
		'{\"kind\":\"exec\",\"path\":\"$MAKE\",\"interp\":null,\"argv\":[$argv],\"env\":{},\"cwd\":\".\",\"parent\":\"sh\"}',
		'make $*', '$decision', '$source', '$reason', '$by');"
}
row allow user ann -j 2 test
row allow user bob -j 4 test
row allow user ann -j 4 build
row allow user bob -j 8 test
row allow user ann -j 2 build
row allow user bob -j 4 test
row deny user bob -j 64 test
row deny timeout warden -j 4 test
"$WARDEN" audit --source user

step "3. warden rules propose (data only: nothing changes)"
"$WARDEN" rules propose
ID=$("$WARDEN" rules propose | awk -v t="exec:$MAKE" '$2 == t { print $1; exit }')
[ -n "$ID" ] || { echo "run.sh: no rule was proposed" >&2; exit 1; }

step "4. warden rules accept $ID --by ann (the explicit step)"
"$WARDEN" rules accept "$ID" --by ann
"$WARDEN" config check .warden/permissions.json

step "5. later requests: explain, then a real run in the passive tier"
"$WARDEN" explain -- make -j 4 test
"$WARDEN" explain -- make -j 16 test
status=0
"$WARDEN" run --tier passive -- sh -c 'make -j 4 test && make -j 16 test' || status=$?
echo "agent exit status: $status (the second make was refused)"
"$WARDEN" audit --kind exec | grep -E 'accepted_rule|tier' || true
