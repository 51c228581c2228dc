#!/usr/bin/env python3
"""fidelity_report.py A_SWEEP A_REFINED B_SWEEP B_REFINED [-k 4] [--tol 0.02]
- do two back-to-back sweeps, each refined (`grid --refine K` after `grid`),
give the same answer? Inputs: `fasweep export --format jsonl` of each run
right after its sweep and right after its refine pass. Per (device, problem,
mode) group of ok kernel records (issue 15's criteria):
  * the top-1 of A and B is the same config, or a statistical tie (the other
    one's top-1 within twice the standard error of the difference of the two
    medians: record_tie, store/record.h);
  * the refined medians of A's top-k differ from B's by at most --tol;
  * every refined median is within --tol of its own sweep median;
and, for every record, the SM clock range of its blocks and how many blocks
were discarded for a clock under the threshold. Exit 0 when every group
passes, 1 otherwise."""
import argparse
import json
import math
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
        noise = r["time"]["noise"]
        groups.setdefault((k["device"], k["problem"], k["mode"]), {})[k["config"]] = {
            "us": r["time"]["median_us"], "noise": noise if noise is not None else math.inf,
            "clock": r.get("clock", {}), "launches": r["time"].get("launches", 0)}
    return groups


def ranked(g):
    """The ranking order of record_rank_order: median, noise, config."""
    return sorted(g, key=lambda c: (g[c]["us"], g[c]["noise"], c))


def tie(a, first):
    """record_tie: within twice the standard error of the difference."""
    return a["us"] / first["us"] - 1 <= 2 * math.hypot(a["noise"], first["noise"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a_sweep")
    ap.add_argument("a_refined")
    ap.add_argument("b_sweep")
    ap.add_argument("b_refined")
    ap.add_argument("-k", type=int, default=4)
    ap.add_argument("--tol", type=float, default=0.02)
    args = ap.parse_args()
    runs = {n: load(getattr(args, n)) for n in ("a_sweep", "a_refined", "b_sweep", "b_refined")}
    ok = True
    print("%-22s %-5s %-26s %-26s %-6s %9s %9s %s" % (
        "problem", "mode", "top-1 A (refined us)", "top-1 B", "top-1", "A vs B", "ref-swp",
        "verdict"))
    for g in sorted(runs["a_refined"]):
        ar, br = runs["a_refined"][g], runs["b_refined"].get(g)
        asw, bsw = runs["a_sweep"].get(g, {}), runs["b_sweep"].get(g, {})
        if not br:
            print("%s: missing from B" % (g,))
            ok = False
            continue
        ra, rb = ranked(ar), ranked(br)
        a1, b1 = ra[0], rb[0]
        same = a1 == b1
        tied = same or (b1 in ar and tie(ar[b1], ar[a1])) or (a1 in br and tie(br[a1], br[b1]))
        top = ra[: args.k]
        ab = max(abs(br[c]["us"] - ar[c]["us"]) / ar[c]["us"] for c in top if c in br)
        # Every refined median against its own sweep median, both runs.
        rs = [abs(run_r[c]["us"] - run_s[c]["us"]) / run_s[c]["us"]
              for run_r, run_s, order in ((ar, asw, ra), (br, bsw, rb))
              for c in order[: args.k] if c in run_s]
        worst_rs = max(rs) if rs else float("nan")
        passed = tied and ab <= args.tol and worst_rs <= args.tol
        ok &= passed
        print("%-22s %-5s %-26s %-26s %-6s %8.2f%% %8.2f%% %s" % (
            g[1], g[2], "%s (%.2f)" % (a1, ar[a1]["us"]), "%s (%.2f)" % (b1, br[b1]["us"]),
            "same" if same else ("tie" if tied else "DIFF"), 100 * ab, 100 * worst_rs,
            "PASS" if passed else "FAIL"))
    # Clocks and discards over every record of the refined runs.
    print("\nclocks (MHz) of the timed blocks and blocks discarded, per run and mode:")
    for name in ("a_refined", "b_refined"):
        per_mode = {}
        for g, recs in runs[name].items():
            for c, r in recs.items():
                ck = r["clock"]
                if ck.get("blocks", 0) <= 0:
                    continue
                m = per_mode.setdefault(g[2], {"n": 0, "lo": math.inf, "hi": 0, "disc": 0,
                                               "below": 0, "ref": set(), "blocks": 0})
                m["n"] += 1
                m["lo"] = min(m["lo"], ck["sm_min_mhz"])
                m["hi"] = max(m["hi"], ck["sm_max_mhz"])
                m["disc"] += ck["discarded_blocks"]
                m["blocks"] += ck["blocks"]
                m["below"] += ck["below_threshold"] == 1
                m["ref"].add(ck["ref_mhz"])
        for mode, m in sorted(per_mode.items()):
            print("  %s %-5s: %d records, block clocks %s..%s MHz (calibrated %s), %d blocks kept, "
                  "%d discarded, %d records below the threshold" % (
                      name[0].upper(), mode, m["n"], m["lo"], m["hi"],
                      ",".join(str(x) for x in sorted(m["ref"])), m["blocks"], m["disc"],
                      m["below"]))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
