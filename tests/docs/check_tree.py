#!/usr/bin/env python3
"""check_tree: the house rules docs/style.md states, checked on the tree.

- every "docs/<page>.md, section "X"" that a source file cites names a
  heading that exists on that page;
- no C source file (modules, tests, bench, fuzz) is over 1,000 lines;
- no comment in a C source file carries history: an issue number, or a
  citation of DESIGN.md / STYLE.md (pages that are not in the repository).

Exits 1 and names every file and line that breaks a rule.
"""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
DIRS = ["common", "policy", "store", "judge", "sandbox", "supervisor", "tests", "bench", "fuzz"]
MAX_LINES = 1000

CITE = re.compile(r'docs/([a-z-]+\.md),?\s+(?:\*\s+)?section\s+(?:\*\s+)?"([^"]+)"', re.S)
HISTORY = re.compile(r'\b[Ii]ssue\s+#?\d+|\bDESIGN\.md\b|\bSTYLE\.md\b')


def sources():
    for d in DIRS:
        for base, dirs, files in os.walk(os.path.join(ROOT, d)):
            dirs[:] = [x for x in dirs if x not in ("corpus", "fixtures")]
            for f in files:
                if f.endswith((".c", ".h")):
                    yield os.path.join(base, f)


def headings(page):
    path = os.path.join(ROOT, "docs", page)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as fh:
        return {m.group(1).strip() for m in re.finditer(r"^#+\s+(.*)$", fh.read(), re.M)}


def comments(text):
    for m in re.finditer(r"/\*.*?\*/|//[^\n]*", text, re.S):
        yield m.start(), m.group(0)


def main():
    bad = []
    cache = {}
    for path in sorted(sources()):
        rel = os.path.relpath(path, ROOT)
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        n = text.count("\n")
        if n > MAX_LINES:
            bad.append("%s: %d lines (the limit is %d: split it by purpose)" % (rel, n, MAX_LINES))
        for start, c in comments(text):
            line = text.count("\n", 0, start) + 1
            flat = re.sub(r"\s*\n\s*\*?\s*", " ", c)
            for m in CITE.finditer(flat):
                page, title = m.group(1), re.sub(r"\s+", " ", m.group(2))
                if page not in cache:
                    cache[page] = headings(page)
                if cache[page] is None:
                    bad.append("%s:%d: cites docs/%s, which does not exist" % (rel, line, page))
                elif title not in cache[page]:
                    bad.append('%s:%d: cites docs/%s section "%s", which has no such heading'
                               % (rel, line, page, title))
            h = HISTORY.search(flat)
            if h:
                bad.append('%s:%d: a comment carries history ("%s"): say why, not when'
                           % (rel, line, h.group(0)))
    for b in bad:
        print(b)
    if bad:
        print("check_tree: %d problem(s)" % len(bad))
        return 1
    print("check_tree: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
