#!/usr/bin/env python3
"""report_check.py REPORT.html - reads a `fasweep report` page with
html.parser and prints one line per group:
  DEVICE|PROBLEM|MODE cells=N ok=N rej-smem=N st-wrong=N missing=N ... summary=K=V,...
(the heatmap cells counted by kind, then the summary line's data-* counts),
and exits 1 when a group's cells disagree with its own summary (a cell per
grid point, the counts by kind). The CLI tests compare the lines with what
the fixture store must give."""
import sys
from html.parser import HTMLParser


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.groups = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section" and "group" in a.get("class", "").split():
            self.groups.append({"name": "%s|%s|%s" % (a["data-device"], a["data-problem"],
                                                      a["data-mode"]), "cells": {}, "sum": {}})
        elif tag == "p" and a.get("class") == "summary":
            self.groups[-1]["sum"] = {k[5:]: int(v) for k, v in a.items()
                                      if k.startswith("data-")}
        elif tag == "rect" and a.get("class", "").startswith("cell "):
            kind = a["class"].split()[1]
            cells = self.groups[-1]["cells"]
            cells[kind] = cells.get(kind, 0) + 1


def main():
    p = Page()
    p.feed(open(sys.argv[1], encoding="utf-8").read())
    bad = 0
    for g in p.groups:
        c, s = g["cells"], g["sum"]
        n = sum(c.values())
        want = {"ok": s.get("ok", 0), "missing": s.get("missing", 0)}
        for k, v in s.items():
            if k.startswith("status-") and v:
                want["st-" + k[7:]] = v
            if k.startswith("rejected-") and v:
                want["rej-" + k[9:]] = v
        want = {k: v for k, v in want.items() if v}
        if n != s.get("points") or c != want:
            print("MISMATCH %s: cells %s, summary %s" % (g["name"], c, s))
            bad = 1
        kinds = " ".join("%s=%d" % kv for kv in sorted(c.items()))
        print("%s cells=%d %s" % (g["name"], n, kinds))
    return bad


if __name__ == "__main__":
    sys.exit(main())
