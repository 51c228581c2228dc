#!/usr/bin/env python3
"""make_fixture.py FASWEEP SPACE OUT.jsonl - a store fixture that covers a
space's whole grid, for the tuner tests: one record per statically valid
point of the space's first problem in the modes hot and batch, with made-up
but deterministic timings (a smooth function of the config, so the best is
one clear point), three failed points (wrong, crashed, timeout), and older
builds of a few configs (one of them the fastest record of all, so the
record that stands for a config is chosen across builds). The points come
from `fasweep plan --json --all` (accepted or not_compiled = valid), of the
space's own family's grid: a space of family wgmma gives wgmma records
(key.family "wgmma")."""
import json
import math
import subprocess
import sys

BUILD, OLD = "5e1f0c2a9b3d4e67", "0a1b2c3d4e5f6071"
DEVICE = "NVIDIA L4"


def cost(cfg):
    """A made-up time in µs, lowest near m64 n64 w4 s2 z1 (for a wgmma config,
    whose letters are d m n c s p, the fourth and sixth axes stand in for w
    and z)."""
    f = dict(zip("dmnwsz", (int(x[1:]) for x in cfg.split("."))))
    t = 140.0 * (1 + 0.08 * abs(math.log2(f["m"] / 64)) + 0.05 * abs(math.log2(f["n"] / 64))
                 + 0.04 * abs(math.log2(f["w"] / 4)) + 0.03 * abs(f["s"] - 2) + 0.02 * (1 - f["z"]))
    return t + (sum(map(ord, cfg)) % 7) * 0.01  # a small, fixed jitter: no exact ties


def record(problem, cfg, mode, status, us, build=BUILD, ts=1732290000.0, family="mma"):
    key = {"device": DEVICE, "problem": problem, "build": build, "config": cfg, "mode": mode}
    if family != "mma":  # key.family only for a family other than mma, as the store writes it
        key = {"device": DEVICE, "problem": problem, "build": build, "family": family,
               "config": cfg, "mode": mode}
    rec = {"key": key, "kind": "kernel", "status": status, "error": "",
           "env": {"gpu_uuid": "GPU-6b1e2f0a-3c4d-5e6f-7a8b-9c0d1e2f3a4b", "cc": 89,
                   "sm_count": 58, "driver": "550.54.15", "runtime": "12.4", "host": "l4-box"},
           "provenance": {"space_name": "l4", "space_hash": "9c1e0f2a3b4c5d6e",
                          "version": "0.1.0", "timestamp": ts}, "schema": 1}
    if status == "ok":
        launches = 40 if mode == "batch" else 1
        rec["time"] = {"median_us": us, "min_us": us * 0.99, "mean_us": us * 1.002,
                       "stdev_us": us * 0.004, "cv": 0.004, "noise": 0.0008, "samples": 60,
                       "launches": launches}
        rec["tflops"] = 4 * 4 * 8 * 512 * 512 * 64 / (us * 1e-6) * 1e-12
        rec["resources"] = {"regs": 128, "smem_static": 0, "smem_dynamic": 24576,
                            "local_bytes": 0, "max_blocks_per_sm": 2}
    else:
        rec["error"] = {"wrong": "rel_l2 0.41 over the tolerance 0.005",
                        "crashed": "cudaErrorIllegalAddress: an illegal memory access",
                        "timeout": "ran past timeout_s 10"}[status]
    return rec


def main():
    fasweep, space, out = sys.argv[1:4]
    plan = json.loads(subprocess.run([fasweep, "plan", "--space", space, "--json", "--all"],
                                     check=True, capture_output=True, text=True).stdout)
    problem = plan["points"][0]["problem"]
    family = plan["family"]  # the space's own grid (a wgmma space: wgmma records)
    valid = [p["config"] for p in plan["points"] if p["problem"] == problem and
             p["family"] == family and p["reason"] in ("ok", "not_compiled")]
    failed = {valid[3]: "wrong", valid[10]: "crashed", valid[20]: "timeout"}
    best = min((c for c in valid if c not in failed), key=cost)
    with open(out, "w") as f:
        for mode in ("hot", "batch"):
            scale = 0.85 if mode == "batch" else 1.0
            for c in valid:
                st = failed.get(c, "ok")
                f.write(json.dumps(record(problem, c, mode, st, round(cost(c) * scale, 3),
                                          family=family)) + "\n")
            # older builds: slower copies, a crash, and the best config faster still
            for c in valid[30:33]:
                f.write(json.dumps(record(problem, c, mode, "ok", round(cost(c) * scale * 1.1, 3),
                                          OLD, 1732200000.0, family)) + "\n")
            f.write(json.dumps(record(problem, valid[40], mode, "crashed", 0, OLD,
                                      family=family)) + "\n")
            f.write(json.dumps(record(problem, best, mode, "ok",
                                      round(cost(best) * scale * 0.97, 3), OLD,
                                      family=family)) + "\n")


if __name__ == "__main__":
    main()
