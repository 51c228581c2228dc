#!/usr/bin/env python3
"""A stand-in `fasweep` for the evolve_code.py tests: no GPU, no build.

eval --kernel FILE --config C ... --json answers from the source text:
  EVOLVE_COMPILE_ERROR in it -> compile_error (the first line with the file
  and line, as eval prints it), EVOLVE_WRONG -> wrong (the gate's error), EVOLVE_CRASH -> crashed,
  EVOLVE_HANG -> sleeps (the loop's --eval-timeout), else ok with a median
  derived from the SHA-256 of source and config and a 95 % interval.
Every result goes into the "store", a JSON file (--store, else
./fake-store.json) keyed as fasweep keys records; `show KEY` prints one.
EVAL_LOG (when set) gets one line per eval: "CONFIG SHA256-OF-SOURCE".
FAKE_KILL_AFTER=N: the Nth eval (counted in FAKE_COUNTER) stores its
record and then kills the loop (its parent) with SIGKILL: an interruption
between the store and the journal. FAKE_BASELINE_US: eval prints a
speedup_vs_baseline against it. FAKE_NO_CI=1: eval prints no ci_lo_us /
ci_hi_us (the stored record keeps them); FAKE_NO_CI=all: none anywhere.
"""
import hashlib
import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from fnv1a import fnv1a64  # noqa: E402  (eval's build id src-HASH, as evolve_code.py computes it)

DEVICE = "Fake GPU"


def opt(a, name, default=None):
    return a[a.index(name) + 1] if name in a else default


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError:
        return {}


def save(path, db):
    with open(path + ".tmp", "w") as f:
        json.dump(db, f)
    os.replace(path + ".tmp", path)


def evaluate(a, store):
    kernel, config = opt(a, "--kernel"), opt(a, "--config")
    problem, mode = opt(a, "--problem"), opt(a, "--mode", "hot")
    try:
        data = open(kernel, "rb").read()
    except OSError:
        print("fasweep eval: --kernel %s: cannot read it" % kernel, file=sys.stderr)
        return 2
    text = data.decode()
    h = hashlib.sha256(data + config.encode()).hexdigest()
    if os.environ.get("EVAL_LOG"):
        with open(os.environ["EVAL_LOG"], "a") as f:
            f.write("%s %s\n" % (config, hashlib.sha256(data).hexdigest()))
    if "EVOLVE_HANG" in text:
        time.sleep(30)
    build = "src-" + fnv1a64(data)
    r = {"status": "ok", "config": config, "problem": problem, "mode": mode, "device": DEVICE,
         "build": build, "median_us": None, "noise": None, "samples": 0, "error": ""}
    if "EVOLVE_COMPILE_ERROR" in text:
        line = text[:text.index("EVOLVE_COMPILE_ERROR")].count("\n") + 1
        r.update(status="compile_error", error="%s(%d): error: identifier is undefined"
                 % (kernel, line))
    elif "EVOLVE_CRASH" in text:
        r.update(status="crashed", error="the worker died: signal 11 (an illegal address)")
    elif "EVOLVE_WRONG" in text:
        r.update(status="wrong", error="rel_l2 0.41 > 0.005")
    else:
        us = 10 + int(h[:8], 16) % 2000 / 1000
        r.update(median_us=us, noise=0.001, samples=100, ci_lo_us=round(us * 0.996, 4),
                 ci_hi_us=round(us * 1.004, 4), rounds=3, rel_l2=0.0003, max_abs=0.004,
                 regs=128, spill_bytes=64 if "__launch_bounds__(NUM_WARPS * 32, 4)" in text else 0,
                 smem_bytes=24576)
        if os.environ.get("FAKE_BASELINE_US"):
            r["speedup_vs_baseline"] = float(os.environ["FAKE_BASELINE_US"]) / us
    if os.environ.get("FAKE_NO_CI") == "all":  # measured before intervals existed
        r.pop("ci_lo_us", None)
        r.pop("ci_hi_us", None)
    key = "|".join((DEVICE, problem, build, config, mode))
    db = load(store)
    db[key] = {"key": {"device": DEVICE, "problem": problem, "build": build, "config": config,
                       "mode": mode}, "status": r["status"], "error": r["error"],
               "time": {k: r.get(k) for k in ("median_us", "noise", "ci_lo_us", "ci_hi_us")}}
    save(store, db)
    if os.environ.get("FAKE_NO_CI"):  # the interval in the store only
        r.pop("ci_lo_us", None)
        r.pop("ci_hi_us", None)
    print(json.dumps(r))
    counter = os.environ.get("FAKE_COUNTER")
    if counter and os.environ.get("FAKE_KILL_AFTER"):
        n = int(open(counter).read() or 0) + 1 if os.path.exists(counter) else 1
        open(counter, "w").write(str(n))
        if n == int(os.environ["FAKE_KILL_AFTER"]):
            sys.stdout.flush()
            os.kill(os.getppid(), signal.SIGKILL)
    return 0 if r["status"] == "ok" else 1


def main():
    a = sys.argv[1:]
    store = opt(a, "--store", "fake-store.json")
    if a and a[0] == "eval":
        return evaluate(a, store)
    if a and a[0] == "show":
        r = load(store).get(a[1])
        if not r:
            print("fasweep show: no record %s" % a[1], file=sys.stderr)
            return 1
        print(json.dumps(r))
        return 0
    print("fake fasweep: unknown command %s" % a[:1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
