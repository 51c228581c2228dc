"""baseline_gen.py OUT [ROUNDS] - synthetic SDPA baseline records, made by
scripts/sdpa_baseline.py's own round loop (measure_rounds) and record
assembly (build_records) with a stand-in measurement: no PyTorch, no GPU.

Backends flash, efficient and cudnn, modes hot, cold and batch, ROUNDS
rounds (default 3); every (backend, mode) of round r sits drift[r] above its
true time, with 0.4 % sample noise. cudnn passes the gate, then fails in
round 2, mode cold (when ROUNDS >= 2): it must be stored crashed in every
mode. Writes OUT (the JSON lines `fasweep import` reads) and OUT.calls (the
measurements in the order they were made, one "round backend mode" a line).
For tests/cli/baseline_rounds.bats.
"""
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "scripts"))
import sdpa_baseline as sb  # noqa: E402

out = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
names, modes = ["flash", "efficient", "cudnn"], ["hot", "cold", "batch"]
true_us = {"flash": 40.0, "efficient": 95.0, "cudnn": 33.0}
mode_f = {"hot": 1.0, "cold": 1.12, "batch": 0.93}
drift = [0.0, 0.012, -0.006, 0.004, 0.009, -0.003, 0.0, 0.002]
rnd = random.Random(11)
prob = sb.parse_problem("4,8,512,64", False)
env0 = {"gpu_uuid": "GPU-00000000-0000-0000-0000-000000000000", "cc": 90, "sm_count": 132,
        "driver": "555.42.06", "runtime": "12.4", "host": "test-host", "sm_clock_mhz": -1,
        "mem_clock_mhz": -1, "throttle_reasons": "0x0", "throttled": -1}
prov0 = {"space_name": "ci", "space_hash": "0123456789abcdef", "version": "torch-2.4.0"}
env, prov, calls = {}, {}, []
clock = [1.7e9]


def stamp(where):
    clock[0] += 1
    env[where] = dict(env0)
    prov[where] = dict(prov0, timestamp=clock[0])


def measure(n, mode, r):
    calls.append("%d %s %s" % (r, n, mode))
    if n == "cudnn" and r == 1 and mode == "cold":
        raise RuntimeError("CUDA error: an illegal memory access was encountered\nsecond line")
    center = true_us[n] * mode_f[mode] * (1 + drift[r])
    t = sb.timing_of([center * (1 + rnd.gauss(0, 0.004)) for _ in range(40 + 10 * r)])
    t["launches"] = 5 if mode == "batch" else 1
    stamp((n, mode))
    return t


gates = {}
for n in names:
    gates[n] = ("ok", "", (0.00031, 0.0039))
    stamp((n, None))
slept = []
timings, failed = sb.measure_rounds(names, modes, rounds, measure, pause=0.25,
                                    sleep=slept.append)
assert slept == [0.25] * (rounds - 1), slept
recs = sb.build_records(names, modes, "Test GPU", prob, gates, timings, failed, env, prov, 0.007,
                        warn=lambda s: print(s, file=sys.stderr))
with open(out, "w") as f:
    f.write(sb.json_lines(recs))
with open(out + ".calls", "w") as f:
    f.write("".join(c + "\n" for c in calls))
