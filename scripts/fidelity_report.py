#!/usr/bin/env python3
"""fidelity_report.py A_SWEEP A_REFINED B_SWEEP B_REFINED [-k 4] [--tol 0.02]
       [--share 0.90] [--half 0.015] [--wall-a S --wall-b S] [--json OUT]

Do two independent runs (separate processes, fresh stores) agree, and do the
intervals they claim hold? Inputs: `fasweep export --format jsonl` of each
run right after its sweep and right after its refine pass (`grid --refine K`
on the same store). Per (device, problem, mode) group of ok kernel records
(issue 24's criteria), it prints:
  (a) share: of the configs both sweeps measured, the share whose A-B
      difference lies within the combined half-width sqrt(hA^2 + hB^2), each
      half-width the side of its interval facing the other median (the tie
      rule of store/record.h, record_tie); a record without an interval
      counts as outside (it claims nothing to check);
  (b) half: the median half-width over configs, as a percent of the median;
  (c) top-k A vs B: the largest difference between the refined medians of
      A's top-k in A and in B; refine vs sweep: the largest difference of a
      refined median from its own run's sweep median (the refine folds more
      rounds into the sweep's record, so it also prints how far the refine's
      own rounds sit from the sweep's, for the record);
  (d) wall: the sweeps' wall times when given.
A group passes when share >= --share, half <= --half, both (c) <= --tol.
--json writes the same numbers. Exit 0 when every group passes, 1 otherwise.
"""
import argparse
import json
import math
import statistics
import sys


def load(path):
    groups = {}
    for line in open(path):
        if not line.strip():
            continue
        r = json.loads(line)
        k = r["key"]
        if r["kind"] != "kernel" or r["status"] != "ok":
            continue
        t = r["time"]
        lo, hi = t.get("ci_lo_us"), t.get("ci_hi_us")
        groups.setdefault((k["device"], k["problem"], k["mode"]), {})[k["config"]] = {
            "us": t["median_us"], "lo": lo if lo is not None else math.nan,
            "hi": hi if hi is not None else math.nan, "clock": r.get("clock", {}),
            "rounds": t.get("round_us", [])}
    return groups


def ranked(g):
    """Fastest first (record_rank_order's first key)."""
    return sorted(g, key=lambda c: (g[c]["us"], c))


def half(r, other):
    """The half-width facing the other median, in us (NaN: no interval)."""
    return (r["hi"] - r["us"]) if other >= r["us"] else (r["us"] - r["lo"])


def within(a, b):
    d = abs(a["us"] - b["us"])
    h = math.hypot(half(a, b["us"]), half(b, a["us"]))
    return not math.isnan(h) and d <= h


def group_numbers(g, runs, k):
    asw, bsw = runs["a_sweep"].get(g, {}), runs["b_sweep"].get(g, {})
    ar, br = runs["a_refined"].get(g, {}), runs["b_refined"].get(g, {})
    common = [c for c in asw if c in bsw]
    share = sum(within(asw[c], bsw[c]) for c in common) / len(common) if common else math.nan
    halves = [(r["hi"] - r["lo"]) / 2 / r["us"] for run in (asw, bsw) for r in run.values()
              if not math.isnan(r["hi"])]
    top = ranked(ar)[:k]
    ab = [abs(br[c]["us"] - ar[c]["us"]) / ar[c]["us"] for c in top if c in br]
    rs = [abs(run_r[c]["us"] - run_s[c]["us"]) / run_s[c]["us"]
          for run_r, run_s in ((ar, asw), (br, bsw)) for c in ranked(run_r)[:k] if c in run_s]
    # The refine folds more rounds into the sweep's record: how far its own
    # rounds (past the sweep's) sit from the sweep's rounds, for the record.
    own = []
    for run_r, run_s in ((ar, asw), (br, bsw)):
        for c in ranked(run_r)[:k]:
            if c in run_s and len(run_r[c]["rounds"]) > len(run_s[c]["rounds"]) > 0:
                n0 = len(run_s[c]["rounds"])
                new, old = run_r[c]["rounds"][n0:], run_s[c]["rounds"]
                own.append(abs(sum(new) / len(new) / (sum(old) / len(old)) - 1))
    return {"device": g[0], "problem": g[1], "mode": g[2], "configs": len(common),
            "refine_rounds_vs_sweep_rounds_max_pct": 100 * max(own) if own else math.nan,
            "share_within": share,
            "median_half_pct": 100 * statistics.median(halves) if halves else math.nan,
            "no_interval": sum(math.isnan(r["hi"]) for run in (asw, bsw) for r in run.values()),
            "top_ab_max_pct": 100 * max(ab) if ab else math.nan,
            "refine_vs_sweep_max_pct": 100 * max(rs) if rs else math.nan,
            "top1_a": ranked(ar)[0] if ar else None, "top1_b": ranked(br)[0] if br else None}


def clean(x):
    """NaN (nothing to say) as JSON null."""
    if isinstance(x, float) and math.isnan(x):
        return None
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [clean(v) for v in x]
    return x


def main():
    ap = argparse.ArgumentParser()
    for n in ("a_sweep", "a_refined", "b_sweep", "b_refined"):
        ap.add_argument(n)
    ap.add_argument("-k", type=int, default=4)
    ap.add_argument("--tol", type=float, default=0.02)
    ap.add_argument("--share", type=float, default=0.90)
    ap.add_argument("--half", type=float, default=0.015)
    ap.add_argument("--wall-a", type=float)
    ap.add_argument("--wall-b", type=float)
    ap.add_argument("--name", default="")
    ap.add_argument("--json")
    args = ap.parse_args()
    runs = {n: load(getattr(args, n)) for n in ("a_sweep", "a_refined", "b_sweep", "b_refined")}
    rows, ok = [], True
    print("%-8s %-22s %-5s %7s %8s %9s %11s %8s %s" % (
        "space", "problem", "mode", "configs", "(a)share", "(b)half%", "(c)topA-B%", "ref-swp%",
        "verdict"))
    for g in sorted(set(runs["a_sweep"]) | set(runs["a_refined"])):
        n = group_numbers(g, runs, args.k)
        passed = (n["share_within"] >= args.share and n["median_half_pct"] <= 100 * args.half
                  and n["top_ab_max_pct"] <= 100 * args.tol
                  and n["refine_vs_sweep_max_pct"] <= 100 * args.tol)
        n["pass"] = bool(passed)
        ok &= passed
        rows.append(n)
        print("%-8s %-22s %-5s %7d %7.1f%% %9.2f %11.2f %8.2f %s  (refine's own rounds vs the "
              "sweep's: %.2f %%)" % (
                  args.name, g[1], g[2], n["configs"], 100 * n["share_within"],
                  n["median_half_pct"], n["top_ab_max_pct"], n["refine_vs_sweep_max_pct"],
                  "PASS" if passed else "FAIL", n["refine_rounds_vs_sweep_rounds_max_pct"]))
    if args.wall_a is not None:
        print("%-8s (d) sweep wall time: A %.2f s, B %.2f s" % (args.name, args.wall_a,
                                                                  args.wall_b or math.nan))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(clean({"space": args.name, "wall_s": [args.wall_a, args.wall_b],
                             "criteria": {"share_min": args.share,
                                          "half_max_pct": 100 * args.half,
                                          "top_ab_max_pct": 100 * args.tol,
                                          "refine_vs_sweep_max_pct": 100 * args.tol},
                             "groups": rows, "pass": bool(ok)}), f, indent=1)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
