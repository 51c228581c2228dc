#!/usr/bin/env python3
"""A stand-in `fasweep` for the evolve_code.py tests: no GPU, no build.

eval --kernel FILE --config C ... --json answers from the source text:
  EVOLVE_COMPILE_ERROR in it -> compile_error (the first line with the file
  and line, as eval prints it), EVOLVE_WRONG -> wrong (the gate's error,
  "gate: ...", check "gate"), EVOLVE_CRASH -> crashed, EVOLVE_HANG ->
  sleeps (the loop's --eval-timeout), EVOLVE_HANG_CHILD -> starts a child
  `sleep 300` (its pid in $FAKE_PIDS when set) and sleeps too,
  EVOLVE_IMPLAUSIBLE -> implausible ("floor: ...", check "floor"),
  EVOLVE_CHECK_<NAME> (NAME one of gate repeat tails magnitude inputs
  stream timed) -> wrong, refused by that check ("NAME: ..."), else ok
  with a median derived from the SHA-256 of source and config and a 95 %
  interval.
--config TEXT is family mma, FAMILY:TEXT another (mma, wgmma); a text
that is not that family's config, or a source without the family's
markers (FA_INSTANCE + flash_fwd_kernel; FA_WG_INSTANCE +
fa_wgmma_kernel) is refused as the real eval refuses it: exit 2.
Every result goes into the "store", a JSON file (--store, else
./fake-store.json) keyed as fasweep keys records (the family between
build and config for a family other than mma); `show KEY` prints one.
EVAL_LOG (when set) gets one line per eval: "CONFIG SHA256-OF-SOURCE";
FAKE_CALL_LOG one line per call of any command: its name.
FAKE_KILL_AFTER=N: the Nth eval (counted in FAKE_COUNTER) stores its
record and then kills the loop (its parent) with SIGKILL: an interruption
between the store and the journal. FAKE_BASELINE_US: eval prints a
speedup_vs_baseline against it. FAKE_NO_CI=1: eval prints no ci_lo_us /
ci_hi_us (the stored record keeps them); FAKE_NO_CI=all: none anywhere.
FAKE_CI_REL: the interval's relative half-width (default 0.004).
EVOLVE_REFUSE in the source: eval refuses it (exit 2, as for an include).
FAKE_NO_CHECK=1: no "check" key (the loop reads the error's prefix).
EVOLVE_MEDIAN=X in the source (X a float: 1e-6, inf, nan): ok with that
median (its interval +-0.4 %), printed as Python's json prints it
(Infinity, NaN). EVOLVE_ESC_ERROR: crashed, the error holding terminal
escape sequences (a window title, concealed text).
"""
import hashlib
import json
import os
import re
import signal
import subprocess
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


FAMILIES = {"mma": (r"d\d+\.m\d+\.n\d+\.w\d+\.s\d+\.z\d+", "FA_INSTANCE", "flash_fwd_kernel"),
            "wgmma": (r"d\d+\.m\d+\.n\d+\.c\d+\.s\d+\.p\d+", "FA_WG_INSTANCE",
                      "fa_wgmma_kernel")}
CHECKS = ("gate", "repeat", "tails", "magnitude", "inputs", "stream", "timed")


def evaluate(a, store):
    kernel, config = opt(a, "--kernel"), opt(a, "--config")
    config_arg = config
    problem, mode = opt(a, "--problem"), opt(a, "--mode", "hot")
    family, _, text_cfg = config.rpartition(":")
    family = family or "mma"
    if family not in FAMILIES or not re.fullmatch(FAMILIES[family][0], text_cfg):
        print("fasweep eval: --config %s: not FAMILY:TEXT of a known kernel family" % config,
              file=sys.stderr)
        return 2
    try:
        data = open(kernel, "rb").read()
    except OSError:
        print("fasweep eval: --kernel %s: cannot read it" % kernel, file=sys.stderr)
        return 2
    text = data.decode()
    if FAMILIES[family][1] not in text or FAMILIES[family][2] not in text:
        print("fasweep eval: --kernel %s is not a kernel of family %s" % (kernel, family),
              file=sys.stderr)
        return 2
    config = text_cfg
    h = hashlib.sha256(data + config.encode()).hexdigest()
    if os.environ.get("EVAL_LOG"):
        with open(os.environ["EVAL_LOG"], "a") as f:
            f.write("%s %s\n" % (config_arg, hashlib.sha256(data).hexdigest()))
    if "EVOLVE_REFUSE" in text:
        print('fasweep eval: --kernel %s includes "foo.h" (not an embedded header)' % kernel,
              file=sys.stderr)
        return 2
    if "EVOLVE_HANG_CHILD" in text:
        child = subprocess.Popen(["sleep", "300"])
        if os.environ.get("FAKE_PIDS"):
            with open(os.environ["FAKE_PIDS"], "a") as f:
                f.write("%d %d\n" % (os.getpid(), child.pid))
        time.sleep(30)
    elif "EVOLVE_HANG" in text:
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
        r.update(status="wrong", error="gate: rel_l2 0.41 > 0.005", check="gate")
    elif "EVOLVE_IMPLAUSIBLE" in text:
        r.update(status="implausible", error="floor: 0.412 us is under the GPU's physical floor "
                 "of 2.8 us (memory)", check="floor")
    elif "EVOLVE_ESC_ERROR" in text:
        r.update(status="crashed", error="\x1b]0;owned\x07the worker died \x1b[8mhidden\x1b[0m")
    elif re.search(r"EVOLVE_MEDIAN=(\S+)", text):
        us = float(re.search(r"EVOLVE_MEDIAN=(\S+)", text).group(1))
        r.update(median_us=us, noise=0.001, samples=100, ci_lo_us=us * 0.996,
                 ci_hi_us=us * 1.004)
    elif any("EVOLVE_CHECK_" + c.upper() in text for c in CHECKS):
        c = next(c for c in CHECKS if "EVOLVE_CHECK_" + c.upper() in text)
        r.update(status="wrong", error="%s: refused by the %s check" % (c, c), check=c)
    else:
        us = 10 + int(h[:8], 16) % 2000 / 1000
        rel = float(os.environ.get("FAKE_CI_REL", "0.004"))
        r.update(median_us=us, noise=0.001, samples=100, ci_lo_us=round(us * (1 - rel), 4),
                 ci_hi_us=round(us * (1 + rel), 4), rounds=3, rel_l2=0.0003, max_abs=0.004,
                 regs=128, local_bytes=64 if "__launch_bounds__(NUM_WARPS * 32, 4)" in text else 0,
                 smem_bytes=24576)
        if os.environ.get("FAKE_BASELINE_US"):
            r["speedup_vs_baseline"] = float(os.environ["FAKE_BASELINE_US"]) / us
    if os.environ.get("FAKE_NO_CI") == "all":  # measured before intervals existed
        r.pop("ci_lo_us", None)
        r.pop("ci_hi_us", None)
    if os.environ.get("FAKE_NO_CHECK"):
        r.pop("check", None)
    key = "|".join([DEVICE, problem, build] + ([family] if family != "mma" else []) +
                   [config, mode])
    db = load(store)
    k = {"device": DEVICE, "problem": problem, "build": build, "config": config, "mode": mode}
    if family != "mma":
        k["family"] = family
    db[key] = {"key": k, "status": r["status"], "error": r["error"],
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
    if os.environ.get("FAKE_CALL_LOG"):
        with open(os.environ["FAKE_CALL_LOG"], "a") as f:
            f.write("%s\n" % (a[0] if a else ""))
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
