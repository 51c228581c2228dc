#!/usr/bin/env python3
"""compare_sweeps.py A.jsonl B.jsonl [-k 8] [--mode hot] - are two sweeps of the
same space the same answer? For each (device, problem) group of kernel records
with status ok: whether the top-1 config agrees, and the relative difference of
the medians of the top-k configs of A as measured in A and in B (the issue-4
criterion: top-1 agrees, top-8 medians within 2 %). Input: `fasweep export
--format jsonl`. Exit 0 when every group passes, 1 otherwise."""
import argparse
import json
import sys


def load(path, mode):
    groups = {}
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            k = r["key"]
            if r["kind"] != "kernel" or r["status"] != "ok" or k["mode"] != mode:
                continue
            # The order `fasweep topk` ranks in: median, then noise, then config.
            noise = r["time"].get("noise")
            groups.setdefault((k["device"], k["problem"]), {})[k["config"]] = (
                r["time"]["median_us"], noise if noise is not None else float("inf"), k["config"])
    return groups


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("-k", type=int, default=8)
    ap.add_argument("--mode", default="hot")
    ap.add_argument("--tol", type=float, default=0.02)
    args = ap.parse_args()
    a, b = load(args.a, args.mode), load(args.b, args.mode)
    ok = True
    for g in sorted(a):
        if g not in b:
            print(f"{g}: missing from {args.b}")
            ok = False
            continue
        ra = sorted(a[g], key=a[g].get)
        rb = sorted(b[g], key=b[g].get)
        top = ra[: args.k]
        diffs = [abs(b[g][c][0] - a[g][c][0]) / a[g][c][0] for c in top if c in b[g]]
        worst = max(diffs) if diffs else float("nan")
        same1 = ra[0] == rb[0]
        passed = same1 and worst <= args.tol
        ok &= passed
        print(f"{g[0]} {g[1]} {args.mode}: top-1 A {ra[0]} ({a[g][ra[0]][0]:.3f} us) "
              f"B {rb[0]} ({b[g][rb[0]][0]:.3f} us) {'agree' if same1 else 'DIFFER'}; "
              f"top-{len(top)} medians differ by at most {100 * worst:.2f} % "
              f"(tolerance {100 * args.tol:.0f} %): {'PASS' if passed else 'FAIL'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
