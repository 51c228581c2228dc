#!/usr/bin/env python3
"""bench_table.py EXPORT.jsonl [--json OUT] - the side-by-side table of
scripts/bench_vs_sdpa.sh: per problem (B,H,S,D, causal) the fastest ok record
of each fasweep kernel family and each SDPA backend (cuDNN, FA2 = sdpa-flash,
efficient; Triton when a record names it), in microseconds for every mode
present (hot, cold, batch) with TF/s (4*B*H*S^2*D / time, halved for causal),
and fasweep's best over the best peer per mode. Every number comes from one
store, measured in one run on one GPU with the engine's method (CUDA events,
warm-up, the median; cold = a 2xL2 flush before each launch, outside the
events; batch = back-to-back launches between one event pair:
docs/measurement.md). A record's 95 % interval, where it has one, is shown as
+-percent."""
import argparse
import json
import math
import sys

PEERS = [("sdpa-cudnn", "cuDNN"), ("sdpa-flash", "FA2"), ("sdpa-efficient", "efficient"),
         ("triton", "Triton")]
MODES = ("hot", "cold", "batch")


def flops(problem):
    parts = problem.split(".")
    b, h, s, d = (int(x[1:]) for x in parts[:4])
    f = 4.0 * b * h * s * s * d
    return f / 2 if parts[4] == "c" else f


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("export")
    ap.add_argument("--json")
    a = ap.parse_args()
    best = {}  # (problem, mode, column) -> record
    for line in open(a.export):
        r = json.loads(line)
        if r["status"] != "ok":
            continue
        k = r["key"]
        if r["kind"] == "kernel":
            if r["key"]["build"].startswith("src-"):
                continue  # edited kernels are not the families' instances
            col = "fasweep " + k.get("family", "mma")
        else:
            col = next((name for base, name in PEERS if k["config"].startswith(base)), None)
            if col is None:
                continue
        key = (k["problem"], k["mode"], col)
        if key not in best or r["time"]["median_us"] < best[key]["time"]["median_us"]:
            best[key] = r
    problems = sorted({p for p, _, _ in best})
    cols = sorted({c for _, _, c in best if c.startswith("fasweep")}) + \
        [name for _, name in PEERS if any(c == name for _, _, c in best)]
    rows = []
    for p in problems:
        print("== %s" % p)
        print("  %-6s " % "mode" + " ".join("%-22s" % c for c in cols) + "  fasweep/best peer")
        for m in MODES:
            cells, times = [], {}
            for c in cols:
                r = best.get((p, m, c))
                if not r:
                    cells.append("%-22s" % "-")
                    continue
                t = r["time"]
                us = t["median_us"]
                times[c] = us
                ci = ""
                if t.get("ci_lo_us") is not None:
                    ci = " +-%.1f%%" % (100 * (t["ci_hi_us"] - t["ci_lo_us"]) / 2 / us)
                cells.append("%-22s" % ("%.2f%s (%.0f TF/s)" % (us, ci, flops(p) / us * 1e-6)))
            if not times:
                continue
            ours = min((v for c, v in times.items() if c.startswith("fasweep")), default=None)
            peer = min((v for c, v in times.items() if not c.startswith("fasweep")), default=None)
            ratio = peer / ours if ours and peer else math.nan
            print("  %-6s " % m + " ".join(cells) + "  %.2fx" % ratio)
            rows.append({"problem": p, "mode": m, "us": times, "fasweep_over_best_peer": ratio,
                         "configs": {c: best[(p, m, c)]["key"]["config"] for c in times}})
    print("(x > 1: fasweep's best is faster than the best peer; TF/s = 4*B*H*S^2*D / time, "
          "halved for causal)")
    if a.json:
        json.dump({"rows": rows, "method": "engine: CUDA events, median; cold flushes 2xL2 "
                   "before each launch outside the events; batch = back-to-back launches"},
                  open(a.json, "w"), indent=1, default=lambda x: None)


if __name__ == "__main__":
    sys.exit(main())
