"""fidelity_gen.py OUT SEED OFFSETS REFINE_OFFSET - one synthetic bench_fidelity run.

Writes OUT.sweep.jsonl and OUT.refined.jsonl as `fasweep export` would: 30
configs of one group, each measured in one round per OFFSETS entry (every
config of round r sits OFFSETS[r] above its true time: the per-round common
mode), 0.2 % noise; the refine adds 3 rounds to the 4 fastest, all
REFINE_OFFSET above the true time (the refine's clock state). The stored
intervals are a placeholder +-1 %. For tests/cli/fidelity.bats.
"""
import json
import random
import sys

out, seed = sys.argv[1], int(sys.argv[2])
offs = [float(x) for x in sys.argv[3].split(",")]
ref_off = float(sys.argv[4])
rnd = random.Random(seed)
true = {"d64.m%d.n64.w4.s1.z0" % (16 * i + 16): 100 * (1 + 0.01 * i) for i in range(30)}
def rec(c, rounds):
    m = sum(rounds) / len(rounds)
    return {"key": {"device": "GPU", "problem": "4,8,512,64", "build": "b", "config": c,
                    "mode": "hot"}, "kind": "kernel", "status": "ok",
            "time": {"median_us": m, "ci_lo_us": m * 0.99, "ci_hi_us": m * 1.01,
                     "round_us": rounds}}
sw = {c: [t * (1 + o) * (1 + rnd.gauss(0, 0.002)) for o in offs] for c, t in true.items()}
with open(out + ".sweep.jsonl", "w") as f:
    for c in true:
        f.write(json.dumps(rec(c, sw[c])) + "\n")
top = sorted(true, key=lambda c: sum(sw[c]))[:4]
with open(out + ".refined.jsonl", "w") as f:
    for c in true:
        r = sw[c] + ([true[c] * (1 + ref_off) * (1 + rnd.gauss(0, 0.002)) for _ in range(3)]
                     if c in top else [])
        f.write(json.dumps(rec(c, r)) + "\n")
