#!/usr/bin/env python3
"""compare_sweeps.py A.jsonl B.jsonl [-k 8] [--mode hot] - are two sweeps of the
same space the same answer? For each (device, problem) group of kernel records
with status ok: whether the top-1 config agrees, and the relative difference of
the medians of the top-k configs of A as measured in A and in B (the sweep engine's
criterion: top-1 agrees, top-8 medians within 2 %). Input: `fasweep export
--format jsonl`. Exit 0 when every group passes, 1 otherwise, 2 on bad input
(one line naming the file). What was not measured never passes: no group in
A (nothing to compare), a group one sweep lacks, or one of A's top-k that B
did not measure is a FAIL."""
import json
import math
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also when run from elsewhere
from report_io import BadInput, Parser, esc, json_lines, number  # noqa: E402  (the export readers' shared rules)

ME = "compare_sweeps.py"


def load(path, mode):
    groups = {}
    for no, where, r in json_lines(path):
        try:
            k = r["key"]
            if r["kind"] != "kernel" or r["status"] != "ok" or k["mode"] != mode:
                continue
            names = (k["device"], k["problem"], k["config"])
            us, noise = number(r["time"]["median_us"]), r["time"].get("noise")
        except (KeyError, TypeError, AttributeError) as e:
            raise BadInput("%s: not an exported record (%s)" % (
                where, esc(e if not isinstance(e, KeyError) else "no %s" % e, 100)))
        if not all(isinstance(x, str) for x in names):
            raise BadInput("%s: key.device, problem and config must be text" % where)
        if us is None or us <= 0:
            raise BadInput("%s: an ok record needs time.median_us > 0" % where)
        noise = number(noise)
        # The order `fasweep topk` ranks in: median, then noise, then config.
        groups.setdefault(names[:2], {})[names[2]] = (
            us, noise if noise is not None else float("inf"), names[2])
    return groups


def main():
    ap = Parser(prog=ME)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("-k", type=int, default=8)
    ap.add_argument("--mode", default="hot")
    ap.add_argument("--tol", type=float, default=0.02)
    args = ap.parse_args()
    if args.k < 1:
        ap.error("-k must be at least 1")
    try:
        a, b = load(args.a, args.mode), load(args.b, args.mode)
    except BadInput as e:
        print("%s: %s" % (ME, e), file=sys.stderr)
        sys.exit(2)
    mode = esc(args.mode, 8)
    if not a:
        print("%s: no ok kernel record in mode %s: nothing measured to compare: FAIL"
              % (esc(args.a, 200), mode))
        sys.exit(1)
    ok = True
    for g in sorted(b):
        if g not in a:
            print(f"{esc(g[0])} {esc(g[1])} {mode}: missing from {esc(args.a, 200)}: FAIL")
            ok = False
    for g in sorted(a):
        if g not in b:
            print(f"{esc(g[0])} {esc(g[1])} {mode}: missing from {esc(args.b, 200)}: FAIL")
            ok = False
            continue
        ra = sorted(a[g], key=a[g].get)
        rb = sorted(b[g], key=b[g].get)
        top = ra[: args.k]
        diffs = [abs(b[g][c][0] - a[g][c][0]) / a[g][c][0] for c in top if c in b[g]]
        unmeasured = len(top) - len(diffs)
        worst = max(diffs) if diffs else float("nan")
        same1 = ra[0] == rb[0]
        passed = same1 and unmeasured == 0 and worst <= args.tol
        ok &= passed
        print(f"{esc(g[0])} {esc(g[1])} {mode}: top-1 A {esc(ra[0])} ({a[g][ra[0]][0]:.3f} us) "
              f"B {esc(rb[0])} ({b[g][rb[0]][0]:.3f} us) {'agree' if same1 else 'DIFFER'}; "
              f"top-{len(top)} medians differ by at most {100 * worst:.2f} % "
              f"(tolerance {100 * args.tol:.0f} %)"
              + (f", {unmeasured} of them not measured in B" if unmeasured else "")
              + f": {'PASS' if passed else 'FAIL'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
