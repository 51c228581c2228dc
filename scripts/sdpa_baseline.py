#!/usr/bin/env python3
"""sdpa_baseline.py - time PyTorch scaled_dot_product_attention with each of its
backends (flash, efficient, cudnn), and an autotuned Triton FlashAttention
forward kernel (triton: scripts/triton_attention.py), the way `fasweep grid`
times a kernel, and write the results as store records (JSON lines) for
`fasweep import`.

The triton backend is timed where Triton imports, is recent enough
(scripts/triton_attention.py, MIN_TRITON) and finds the GPU through its own
driver, and where the kernel has the problem's head dim
(64, 128, 256); elsewhere it is left out with one note line on stderr,
"sdpa_baseline: triton: not available (WHY)", and no record, the other
backends timed as usual. Its first call of a problem (the gate call below)
autotunes it (Triton's own timing of each config, never counted); every
timed call runs the config that chose. It reads K/V of grouped-query
problems in place (no enable_gqa needed).

Same method as the sweep engine for every backend, Triton's included
(docs/measurement.md):
  * fresh random inputs of the problem's dtype (fp16 or bf16), uniform in
    [-1, 1], layout Q [B, H, S, D], K and V [B, KV, S, D]: a problem with
    kv_heads KV < H (grouped-query; 1: multi-query) calls SDPA with
    enable_gqa=True (PyTorch 2.5 or later), query head h reading K/V head
    h // (H / KV); the memory-efficient backend has no GQA kernel and is not
    timed for one (no record, a note on stderr); Triton's kernel is called
    with the same tensors;
  * a correctness gate: one call of each backend (the gate call, before
    any timing) is compared with an fp32 reference (rel_l2 and max_abs in
    float64 within the space's tolerance, any NaN/inf fails); a backend that
    fails it is stored "wrong" and not timed; one that cannot run here is
    stored "crashed". Only that gate call's output is checked: the timed
    calls of the library are not output-checked (fasweep's own kernels'
    timed launches now are; PyTorch's are trusted to compute what their
    gate call did);
  * warm-up launches, then one CUDA event pair around each call, calls
    queued in blocks behind a GPU sleep kernel so host time between the
    events is not counted, until the noise of the median
    (1.2533 * stdev / (sqrt(n) * median)) is under measure.noise after
    min_samples, or max_samples, or max_seconds of sampling;
  * hot (no flush), cold (a 2x-L2 buffer written by cudaMemsetAsync
    before every sample, outside its events: the engine's own call) and
    batch (one event pair around back-to-back calls, as many as fill
    measure.batch_us; a sample is their time / calls: throughput, the way
    users and the PyTorch benchmarks time SDPA) modes;
  * the engine's buffers (class Rotation): two input sets, hot and cold
    samples cycling through 4 copies of V, every launch of a batch sample
    reading its own copy of V, every timed call writing its own output, so
    a baseline meets the memory the engine's checked launches meet;
  * rounds and a 95 % interval (docs/measurement.md, "Intervals"): every
    (backend, mode) is measured in measure.rounds rounds (--rounds to
    override; 1 to 8), interleaved: round r times every backend still ok
    once, each with all its modes in turn (a backend is one engine job), in
    the listed order rotated by r/rounds of its length (sweep/engine.c,
    engine_round_jobs), with at least --round-pause seconds between two
    rounds of a problem so the GPU's state can move (several problems:
    every problem's round r, then round r + 1, and only what the other
    problems' rounds do not fill is slept). Later rounds warm up once (the
    engine's light rounds); the gate is not repeated. A backend that fails
    in any round is stored "crashed" in every mode, with no rounds
    (correctness first). The rounds fold into one record as
    sweep/intervals.c (intervals_combine) folds a kernel's: median_us = the
    mean of the round medians, time.round_us = the round medians in the
    order measured, min_us = the lowest of the rounds, samples = their
    sum; mean_us, stdev_us, cv, noise, launches, the clocks and the
    timestamp are the last round's burst; tflops and gbps are of median_us.
    ci_lo_us / ci_hi_us come from scripts/rounds.py (a digit-exact port of
    store/rounds.c), the pool being the residuals of the ok baseline
    records of the same (device, problem, mode) that this run measured
    (every backend), the floor measure.ci_floor. One round (or a pool that
    says nothing) gives no interval (null), as in the engine.
The measurement settings and tolerances come from --space FILE when given
(the space's "measure" and "tolerance"), else the engine's defaults.

usage:
  sdpa_baseline.py {--problem P [--problem P ...] | --space-problems} [--causal] [--space FILE]
                   [--plan FILE] [--ready-file PATH]
                   [--modes hot,cold,batch] [--backends flash,efficient,cudnn,triton]
                   [--rounds N] [--round-pause S] [--flush memset|fill]
                   [--precompiled] [--go-on-stdin] [--skip-without-torch] [-o FILE] [--table]
  then: fasweep import FILE

Several problems are timed in one process (one PyTorch start, one CUDA context, one
Triton precompile pool for all: scripts/baselines.sh passes every problem of the space):
each set up and gated, then their rounds interleaved (above), then every record written.
P is a problem text as fasweep reads it (`fasweep problem`, grid/space.c):
"4,8,512,64" (B,H,S,D, fp16, non-causal unless --causal), "1,32:8,4096,128,bf16"
(B,H:KV,S,D,DTYPE), or the canonical "b4.h8.s512.d64.nc",
"b1.h32.kv8.s4096.d128.c.bf16". The records' problem is its canonical text,
so they group with the kernels' records of the same problem.

Records: key {device, problem, build "baseline", config "sdpa-flash" |
"sdpa-efficient" | "sdpa-cudnn" | "triton" (CONFIG_NAMES), mode}, kind
"baseline"; provenance.version "torch-X.Y.Z", or "triton-X.Y.Z" for triton.

The pure parts (space, round order, folding, intervals, records) import
without PyTorch: tests/cli/baseline_rounds.bats checks them.
"""

import argparse
import contextlib
import json
import math
import os
import re
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also when loaded by path
from fnv1a import fnv1a64  # noqa: E402  (the space hash fasweep stores)
import fasweep_cli  # noqa: E402  (problem texts, modes and spaces as fasweep reads them)
from report_io import BadInput, finite_or_none  # noqa: E402  (JSON has no NaN)
import rounds as rounds_mod  # noqa: E402  (the port of store/rounds.c)

# The engine's defaults (grid/space.h, docs/spaces.md).
DEFAULT_MEASURE = {
    "warmup_runs": 3,
    "min_samples": 10,
    "max_samples": 200,
    "noise": 0.01,
    "max_seconds": 0.5,
    "timeout_s": 10,
    "batch_us": 200,
    "rounds": 3,
    "ci_floor": 0.007,
}
DEFAULT_TOLERANCE = {"rel_l2": 5e-3, "max_abs": 3e-2}
MEDIAN_SE = 1.2533141373155001  # sqrt(pi/2), as sweep/stats.h
MIN_US = 1e-6  # the shortest time an ok record may hold (store/record.c, REC_MIN_US)
CI_MAX_RATIO = 1e6  # an interval ends at most this times the median (REC_CI_MAX_RATIO)
ROUND_PAUSE_S = 1.0  # the pause between rounds: the GPU's state may move
BLOCK_MAX = 16
# backend -> its SDPBackend (None: not SDPA's, the Triton kernel)
BACKENDS = {"flash": "FLASH_ATTENTION", "efficient": "EFFICIENT_ATTENTION",
            "cudnn": "CUDNN_ATTENTION", "triton": None}
DEFAULT_BACKENDS = "flash,efficient,cudnn,triton"
# backend -> its records' config (what scripts/bench_table.py's PEERS match)
CONFIG_NAMES = {"flash": "sdpa-flash", "efficient": "sdpa-efficient", "cudnn": "sdpa-cudnn",
                "triton": "triton"}
TRITON = "triton"
TRITON_HEAD_DIMS = (64, 128, 256)  # scripts/triton_attention.py, HEAD_DIMS
# Backends without a grouped-query kernel: not timed for kv_heads < heads
# (expanding K/V for them would time another problem's memory traffic).
NO_GQA = ("efficient",)
GQA_TORCH = (2, 5)  # the first PyTorch whose SDPA takes enable_gqa
TORCH_DTYPES = {"fp16": "float16", "bf16": "bfloat16"}
# Throttle reasons that mean the clocks were cut (sweep/nvml.h): SW power
# cap, HW slowdown, SW thermal, HW thermal, HW power brake.
THROTTLE_MASK = 0x4 | 0x8 | 0x20 | 0x40 | 0x80


# The timing modes are fasweep's (the table in store/mode.h, read through
# `fasweep version --json` and, for a space, `fasweep plan --json`): no copy
# here. TIMED is what Bench.measure has a case for (cold = L2 flushed,
# batch = back to back, else hot); a mode of fasweep's outside it is refused.
TIMED = ("hot", "cold", "batch")


def fasweep_json(binary, *args):
    """The JSON document `fasweep ARGS` prints; exit 2 naming the cause when
    it cannot run or fails."""
    try:
        return fasweep_cli.document(binary, *args)
    except BadInput as e:
        die(str(e))


def fasweep_modes(binary, space=None):
    """(every mode fasweep has, the space's modes or else the default)."""
    known = fasweep_json(binary, "version", "--json").get("modes") or []
    if not known:
        die("%s version --json lists no modes" % binary)
    chosen = fasweep_json(binary, "plan", "--json", "--space", space)["modes"] if space \
        else known[:1]
    return known, chosen

def die(msg, code=2):
    print("sdpa_baseline: " + msg, file=sys.stderr)
    sys.exit(code)


NO_TORCH = 3  # --skip-without-torch: PyTorch cannot run here (baselines.sh skips, exit 0)


def error_line(e):
    """An exception as one line: its type's name and its text's first line."""
    return "%s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0])


def import_torch():
    """(torch, "") or (None, why it does not import: error_line, clipped)."""
    try:
        import torch
    except Exception as e:  # ImportError, or a broken install's own error: one line
        return None, clip_utf8(error_line(e), 200)
    return torch, ""


def wait_for_go(words=("go",)):
    """Blocks until stdin says one of words (--go-on-stdin: 'go', or first 'prepare'), and
    returns it: the caller's sweep has the GPU until 'go'. End of input (the caller exited)
    or anything else: exit 1, nothing timed."""
    line = sys.stdin.readline()
    if line.strip() not in words:
        die("--go-on-stdin: %s before 'go': nothing timed" % (
            "end of input" if not line else "%r" % clip_utf8(line.strip(), 40)), 1)
    return line.strip()


def read_plan(path):
    """(problems, modes) of a plan file: what `fasweep plan --json --space S` prints (or
    geninst --check: the same planner), its "problems" (grid/problem_json.h's objects, as
    `fasweep problem --json` gives them) and "modes"; exit 2 naming the file otherwise."""
    try:
        with open(path, "rb") as f:
            doc = json.loads(f.read())
        probs, modes = doc["problems"], doc["modes"]
        if not (isinstance(probs, list) and isinstance(modes, list) and modes and
                all(isinstance(m, str) for m in modes)):
            raise ValueError("problems and modes must be lists, modes of names")
        for p in probs:
            for key in ("problem", "batch", "heads", "seq_len", "head_dim", "causal", "flops",
                        "bytes"):
                p[key]
    except (OSError, ValueError, KeyError, TypeError) as e:
        die("--plan %s: no fasweep plan (%s)" % (clip_utf8(str(path), 200),
                                                 clip_utf8(error_line(e), 200)))
    return probs, modes


def signal_ready(path, option="--ready-file"):
    """Creates path whole (a temporary beside it, renamed): the caller waits for it."""
    tmp = "%s.%d.tmp" % (path, os.getpid())
    try:
        with open(tmp, "w") as f:
            f.write("ready\n")
        os.replace(tmp, path)
    except OSError as e:
        die("%s %s: cannot write (%s)" % (option, clip_utf8(str(path), 200), error_line(e)), 1)


# ---- problem and space -------------------------------------------------------------------------

def parse_problem(text, causal, binary=None):
    """The problem of --problem's text as fasweep reads it (`fasweep problem
    --json`: "B,H[:KV],S,D[,DTYPE]" or the canonical "b4.h8.s512.d64.nc"),
    causal with --causal: its "problem" (the canonical text), numbers,
    dtype, flops and bytes. A bad text is fasweep's one line, exit 2."""
    try:
        return fasweep_cli.problems(fasweep_cli.binary(binary), [text], causal,
                                    any_text=False)[str(text)]
    except BadInput as e:
        die("--problem: %s" % e)


def problem_text_of(p):
    """The record's problem: the canonical text fasweep keys the problem by."""
    return p["problem"]


def is_gqa(p):
    return p.get("kv_heads", p["heads"]) != p["heads"]


def shapes(p):
    """(Q's shape, K's and V's shape): [B, H, S, D] and [B, KV, S, D]."""
    return ((p["batch"], p["heads"], p["seq_len"], p["head_dim"]),
            (p["batch"], p.get("kv_heads", p["heads"]), p["seq_len"], p["head_dim"]))


def torch_dtype(torch, p):
    """The torch dtype of the problem's dtype (torch.float16, torch.bfloat16)."""
    return getattr(torch, TORCH_DTYPES[p.get("dtype", "fp16")])


def torch_version(text):
    """(major, minor) of a torch.__version__ text ("2.5.1+cu124"); (0, 0) when unreadable."""
    m = re.match(r"([0-9]+)\.([0-9]+)", str(text))
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def call_kwargs(p, scale):
    """The keyword arguments of every SDPA call of problem p: is_causal and
    scale, and enable_gqa=True when kv_heads < heads (only then: PyTorch
    before 2.5 has no such argument)."""
    kw = {"is_causal": bool(p["causal"]), "scale": scale}
    if is_gqa(p):
        kw["enable_gqa"] = True
    return kw


def backends_for(names, p):
    """(the backends to time for p, a note for each left out): a GQA problem
    leaves out NO_GQA's; a head dim the Triton kernel has no tiles for
    leaves out triton."""
    keep, notes = [], []
    for n in names:
        if is_gqa(p) and n in NO_GQA:
            notes.append("the %s backend has no grouped-query kernel (kv_heads %d < heads %d): "
                         "not timed for %s" % (n, p["kv_heads"], p["heads"], problem_text_of(p)))
        elif n == TRITON and p["head_dim"] not in TRITON_HEAD_DIMS:
            notes.append("the triton backend has head dims %s, not %d: not timed for %s" % (
                ", ".join(map(str, TRITON_HEAD_DIMS)), p["head_dim"], problem_text_of(p)))
        else:
            keep.append(n)
    return keep, notes


def triton_probe():
    """(the Triton kernel's module, "") when it can run here, else (None, why)
    (scripts/triton_attention.py's available(): Triton missing, too old,
    broken on import, or without a CUDA GPU of its own)."""
    try:
        import triton_attention
    except Exception as e:  # a broken install: one line, not a traceback
        return None, "import triton_attention: %s" % ((str(e).splitlines() or
                                                      [type(e).__name__])[0])
    ok, why = triton_attention.available(device=True)
    return (triton_attention, "") if ok else (None, why)


def drop_unavailable(names, probe=triton_probe):
    """(the backends left, the module of the Triton kernel or None, notes):
    triton leaves the list, with the note "triton: not available (WHY)",
    where probe() says it cannot run. probe is called only when triton is
    asked for."""
    if TRITON not in names:
        return list(names), None, []
    mod, why = probe()
    if mod is not None:
        return list(names), mod, []
    return [n for n in names if n != TRITON], None, [
        "triton: not available (%s)" % clip_utf8(" ".join(str(why).split()), 200)]


def random_like(torch, gen, shape, dtype, dev):
    """Uniform in [-1, 1], drawn in fp32 and rounded to dtype (as the engine's inputs)."""
    return (torch.rand(shape, generator=gen, device=dev, dtype=torch.float32)
            .mul_(2).sub_(1).to(dtype))


def random_inputs(torch, gen, p, dev):
    """Fresh q, k, v of problem p: Q [B, H, S, D], K and V [B, KV, S, D], of its dtype."""
    qs, kvs = shapes(p)
    dt = torch_dtype(torch, p)
    return (random_like(torch, gen, qs, dt, dev), random_like(torch, gen, kvs, dt, dev),
            random_like(torch, gen, kvs, dt, dev))


def load_space(path):
    """measure, tolerance, name and hash of a space file (defaults without one)."""
    measure, tol = dict(DEFAULT_MEASURE), dict(DEFAULT_TOLERANCE)
    if not path:
        return measure, tol, "sdpa", ""
    try:
        with open(path, "rb") as f:
            raw = f.read()
        doc = json.loads(raw)
    except (OSError, ValueError) as e:
        die("cannot read space %s: %s" % (path, e))
    measure.update(doc.get("measure", {}))
    tol.update(doc.get("tolerance", {}))
    check_rounds(measure["rounds"], "%s: measure.rounds" % path)
    check_floor(measure["ci_floor"], "%s: measure.ci_floor" % path)
    return measure, tol, str(doc.get("name", "space"))[:63], fnv1a64(raw)


def check_rounds(v, what):
    """The rounds a record can hold: an integer from 1 to RECORD_MAX_ROUNDS
    (grid/space.c's rule for measure.rounds); exit 2 otherwise."""
    if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= rounds_mod.MAX_ROUNDS:
        die("%s: expected an integer from 1 to %d, got %r" % (what, rounds_mod.MAX_ROUNDS, v))
    return v


def check_floor(v, what):
    """measure.ci_floor: a fraction 0 < x < 0.5 (grid/space.c); exit 2 otherwise."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < 0.5:
        die("%s: expected a fraction, 0 < x < 0.5, got %r" % (what, v))
    return float(v)


# ---- environment -------------------------------------------------------------------------------

class Nvml:
    """Clocks and throttle reasons through pynvml when it is there; -1 otherwise."""

    def __init__(self, torch, dev):
        self.nv = self.handle = None
        self.driver = ""
        try:
            import pynvml as nv
            nv.nvmlInit()
            self.nv = nv
            drv = nv.nvmlSystemGetDriverVersion()
            self.driver = drv.decode() if isinstance(drv, bytes) else str(drv)
            prop = torch.cuda.get_device_properties(dev)
            bus = "%08x:%02x:%02x.0" % (prop.pci_domain_id, prop.pci_bus_id, prop.pci_device_id)
            self.handle = nv.nvmlDeviceGetHandleByPciBusId(bus)
        except Exception:  # no pynvml, no NVML, no match: unknown, not an error
            self.handle = None

    def read(self):
        out = {"sm_clock_mhz": -1, "mem_clock_mhz": -1, "throttle_reasons": "0x0", "throttled": -1}
        if self.handle is None:
            return out
        nv = self.nv
        try:
            out["sm_clock_mhz"] = int(nv.nvmlDeviceGetClockInfo(self.handle, nv.NVML_CLOCK_SM))
            out["mem_clock_mhz"] = int(nv.nvmlDeviceGetClockInfo(self.handle, nv.NVML_CLOCK_MEM))
            r = int(nv.nvmlDeviceGetCurrentClocksThrottleReasons(self.handle))
            out["throttle_reasons"] = "0x%x" % r
            out["throttled"] = 1 if r & THROTTLE_MASK else 0
        except Exception:
            pass
        return out


def device_env(torch, dev, nvml):
    prop = torch.cuda.get_device_properties(dev)
    uuid = str(getattr(prop, "uuid", ""))
    if uuid and not uuid.startswith("GPU-"):
        uuid = "GPU-" + uuid
    cuda = torch.version.cuda or "?"
    return {
        "gpu_uuid": uuid[:47],
        "cc": prop.major * 10 + prop.minor,
        "sm_count": prop.multi_processor_count,
        "driver": (nvml.driver or "CUDA " + cuda)[:23],
        "runtime": cuda[:23],
        "host": socket.gethostname()[:63],
    }


# ---- measuring ---------------------------------------------------------------------------------

def timing_of(samples):
    """The engine's summary (sweep/stats.c): median, min, mean, stdev (n-1), cv, noise."""
    x = sorted(samples)
    n = len(x)
    t = {"median_us": 0.0, "min_us": 0.0, "mean_us": 0.0, "stdev_us": 0.0, "cv": 0.0,
         "noise": None, "samples": n}
    if n == 0:
        return t
    t["min_us"] = x[0]
    t["median_us"] = x[n // 2] if n % 2 else 0.5 * (x[n // 2 - 1] + x[n // 2])
    t["mean_us"] = sum(x) / n
    if n < 2:
        return t
    t["stdev_us"] = math.sqrt(sum((v - t["mean_us"]) ** 2 for v in x) / (n - 1))
    t["cv"] = t["stdev_us"] / t["mean_us"] if t["mean_us"] > 0 else 0.0
    if t["median_us"] > 0:
        t["noise"] = MEDIAN_SE * t["stdev_us"] / (math.sqrt(n) * t["median_us"])
    return t


def should_stop(m, n, noise, elapsed):
    if n >= m["min_samples"] and noise is not None and noise <= m["noise"]:
        return True
    return n >= m["max_samples"] or elapsed >= m["max_seconds"]


def batch_launches(est_us, batch_us):
    """Calls per batch sample: about batch_us of them, 1 to 1000 (sweep/stats.c)."""
    if not est_us or est_us <= 0 or not batch_us or batch_us <= 0:
        return 1
    return max(1, min(1000, int(math.ceil(batch_us / est_us))))


def block_size(est_us, m, remaining):
    hi = max(1, min(BLOCK_MAX, remaining))
    if not est_us or est_us <= 0:
        return hi
    fit = m["max_seconds"] * 1e6 / 4 / est_us
    return hi if fit >= hi else max(1, int(fit))


def cudart_memset():
    """cudaMemsetAsync of the CUDA runtime PyTorch has loaded (one runtime,
    one context), or None when it is not a shared library here."""
    import ctypes

    try:
        with open("/proc/self/maps") as f:
            paths = {ln.split()[-1] for ln in f if "libcudart" in ln and "/" in ln}
    except OSError:
        return None
    for path in sorted(paths):
        try:
            fn = ctypes.CDLL(path).cudaMemsetAsync
        except (OSError, AttributeError):
            continue
        fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p]
        fn.restype = ctypes.c_int
        return fn
    return None


class Rotation:
    """The input buffers of the engine's timed launches, mirrored so that a
    baseline is timed on the same memory pattern as a kernel (sweep/guard.h,
    docs/measurement.md "What is checked"): two input sets (q, k, v each);
    a launch of a one-launch sample (hot, cold) reads one of GUARD_CYCLE = 4
    copies of V in turn (the sets alternate), each launch of a batch sample
    its own copy. (The engine also flips signs of V between uses, outside
    the timing, to check every output; a baseline's outputs are not checked,
    so the copies keep their values.) Each output is a new buffer (Timer.block
    keeps them alive until the block ends)."""

    CYCLE = 4

    def __init__(self, torch, gen, q, k, v):
        self.torch = torch
        b = [random_like(torch, gen, t.shape, t.dtype, t.device) for t in (q, k, v)]
        self.q, self.k = [q, b[0]], [k, b[1]]
        self.v = [v, b[2]]
        self.room(self.CYCLE)

    def room(self, launches):
        """V copies enough for samples of `launches` launches."""
        want = max(self.CYCLE, launches)
        while len(self.v) < want:
            self.v.append(self.v[len(self.v) % 2].clone())

    def inputs(self, sample, launch, launches):
        e = launch if launches > 1 else sample % self.CYCLE
        return self.q[e % 2], self.k[e % 2], self.v[e]


class Timer:
    def __init__(self, torch, dev, use_memset=True):
        self.torch = torch
        prop = torch.cuda.get_device_properties(dev)
        l2 = getattr(prop, "L2_cache_size", 0) or (64 << 20)
        self.flush = torch.empty(2 * l2, dtype=torch.uint8, device=dev)
        self.memset = cudart_memset() if use_memset else None
        if use_memset and self.memset is None:
            print("sdpa_baseline: libcudart not found in this process; the cold flush falls "
                  "back to torch's fill_ (the engine uses cudaMemsetAsync)", file=sys.stderr)
        # torch.cuda._sleep spins for a number of GPU cycles; ~1.5 GHz assumed
        # when the clock is unknown (a longer spin only costs a little time).
        self.cycles_per_us = getattr(prop, "clock_rate", 0) / 1000.0 or 1500.0
        self.enqueue_us = 40.0  # Python + dispatcher time per sample, refined per block
        self.ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                   for _ in range(BLOCK_MAX)]

    def block(self, fn, nb, cold, base, launches=1):
        """nb samples; fn(i, l) is launch l of sample i (its buffers: Rotation).
        Every output stays alive until the block is over, so each launch
        writes its own buffer, as the engine's timed launches do."""
        torch = self.torch
        spin_us = max(20.0, 1.5 * self.enqueue_us * nb * launches)
        torch.cuda._sleep(int(spin_us * self.cycles_per_us))
        t0 = time.perf_counter()
        outs = []
        for i in range(nb):
            if cold:
                self.flush_l2((base + i) & 0xFF)
            self.ev[i][0].record()
            for l in range(launches):
                outs.append(fn(i, l))
            self.ev[i][1].record()
        self.enqueue_us = (time.perf_counter() - t0) * 1e6 / (nb * launches)
        self.ev[nb - 1][1].synchronize()
        del outs
        return [self.ev[i][0].elapsed_time(self.ev[i][1]) * 1e3 / launches for i in range(nb)]

    def flush_l2(self, byte):
        """Writes the flush buffer with the engine's call, cudaMemsetAsync on
        the current stream, so both sides start a cold sample from the same
        L2 state."""
        if self.memset is None:
            self.flush.fill_(byte)
            return
        stream = self.torch.cuda.current_stream().cuda_stream
        rc = self.memset(self.flush.data_ptr(), byte, self.flush.numel(), stream)
        if rc != 0:
            die("cudaMemsetAsync of the L2 flush buffer failed (cudaError %d)" % rc)

    def measure(self, fn, m, mode, rot):
        torch = self.torch
        warm = max(1, int(m["warmup_runs"]))
        e0, e1 = self.ev[0]
        e0.record()
        for _ in range(warm):
            fn(0, 0)
        e1.record()
        e1.synchronize()
        est_call = e0.elapsed_time(e1) * 1e3 / warm
        launches = batch_launches(est_call, m.get("batch_us", 200)) if mode == "batch" else 1
        rot.room(launches)
        call = (lambda i, l: fn(i, l, launches))
        samples, est = [], 0.0
        t0 = time.perf_counter()
        while True:
            nb = block_size(est, m, int(m["max_samples"]) - len(samples))
            tb = time.perf_counter()
            samples += self.block(call, nb, mode == "cold", len(samples), launches)
            est = (time.perf_counter() - tb) * 1e6 / nb
            t = timing_of(samples)
            if should_stop(m, len(samples), t["noise"], time.perf_counter() - t0):
                t["launches"] = launches
                return t


REF_SCORES = 1 << 28  # fp32 scores the reference holds at once (1 GiB)


def head_chunks(heads, seq_len, limit=REF_SCORES):
    """[(h0, h1), ...]: the query heads the reference takes at once, so
    that (h1 - h0) x seq_len^2 fp32 scores stay under limit (at least one
    head at a time)."""
    n = max(1, limit // max(1, seq_len * seq_len))
    return [(h, min(heads, h + n)) for h in range(0, heads, n)]


def reference(torch, q, k, v, causal, scale):
    """fp32 attention, one batch slice and a few heads at a time to bound the
    score memory (head_chunks). K and V of fewer heads than Q (GQA) serve
    heads / kv_heads query heads each: query head h reads K/V head
    h // (heads / kv_heads)."""
    out = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    s = q.shape[2]
    mask = None
    if causal:
        mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
    for b in range(q.shape[0]):
        qb, kb, vb = q[b].float(), k[b].float(), v[b].float()
        if kb.shape[0] != qb.shape[0]:
            g = qb.shape[0] // kb.shape[0]
            kb, vb = kb.repeat_interleave(g, dim=0), vb.repeat_interleave(g, dim=0)
        for h0, h1 in head_chunks(qb.shape[0], s):
            sc = torch.matmul(qb[h0:h1], kb[h0:h1].transpose(-1, -2)) * scale
            if mask is not None:
                sc.masked_fill_(mask, float("-inf"))
            out[b, h0:h1] = torch.matmul(torch.softmax(sc, dim=-1), vb[h0:h1])
    return out


def errors(torch, o, ref):
    if not bool(torch.isfinite(o).all()):
        bad = int((~torch.isfinite(o)).sum())
        return None, None, "%d of %d outputs are NaN or inf" % (bad, o.numel())
    d = o.double() - ref.double()
    rel = float(d.norm() / ref.double().norm())
    mx = float(d.abs().max())
    return rel, mx, ""


def gate_text(rel, mx, tol):
    why = []
    if not rel <= tol["rel_l2"]:
        why.append("rel_l2 %.3e over the tolerance %.3e" % (rel, tol["rel_l2"]))
    if not mx <= tol["max_abs"]:
        why.append("max_abs %.3e over the tolerance %.3e" % (mx, tol["max_abs"]))
    return " and ".join(why)


# ---- rounds (pure: no PyTorch) ----------------------------------------------------------------

def rotated(items, r, rounds):
    """items in list order rotated by r/rounds of their count: from index
    len * r // rounds to the end, then the rest (sweep/engine.c,
    engine_round_jobs, over a group's jobs still in the run)."""
    items = list(items)
    shift = len(items) * r // rounds if rounds > 0 else 0
    return items[shift:] + items[:shift]


def round_plan(names, modes, r, rounds):
    """Round r's (backend, mode) pairs in the order they are timed: the
    backends in rotated order, each with every mode in turn (the engine
    times a job's modes one after the other: sweep/measure.c, ms_task)."""
    return [(n, mo) for n in rotated(names, r, rounds) for mo in modes]


def run_round(names, modes, r, rounds, measure, timings, failed, fail_on=(RuntimeError,)):
    """Round r of every (backend, mode) of names not failed yet (round_plan's order), into
    timings and failed as measure_rounds says."""
    for n, mo in round_plan([n for n in names if n not in failed], modes, r, rounds):
        if n in failed:  # an earlier mode of this round failed it
            continue
        where = "round %d of %d, mode %s" % (r + 1, rounds, mo)
        try:
            t = measure(n, mo, r)
        except fail_on as e:
            failed[n] = "%s: %s" % (where, (str(e).splitlines() or [type(e).__name__])[0])
            continue
        med = t.get("median_us")
        if not (isinstance(med, (int, float)) and math.isfinite(med) and med >= MIN_US):
            failed[n] = "%s: the round's median %r us is not a time (at least %g us)" % (
                where, med, MIN_US)
            continue
        timings[(n, mo)].append(t)


def measure_rounds(names, modes, rounds, measure, pause=ROUND_PAUSE_S, sleep=time.sleep,
                   fail_on=(RuntimeError,)):
    """Times every (backend, mode) in `rounds` interleaved rounds.

    measure(name, mode, r) times one (backend, mode) in round r and returns
    its timing_of() dict; raising one of `fail_on` (PyTorch's errors are
    RuntimeError) fails the backend. Between rounds: sleep(pause). A backend
    that fails, or whose round median is no time a record may hold (not
    finite, under MIN_US), takes no more rounds. Returns (timings, failed):
    timings[(name, mode)] the list of its rounds' timings in the order
    measured, failed[name] why it failed."""
    return interleave_rounds([(names, modes, measure)], rounds, pause, sleep, None, fail_on)[0]


def interleave_rounds(jobs, rounds, pause=ROUND_PAUSE_S, sleep=time.sleep, clock=None,
                      fail_on=(RuntimeError,)):
    """measure_rounds for several problems at once, jobs a list of (names, modes, measure):
    round r of every problem in turn, then round r + 1. Between two rounds of one problem at
    least `pause` seconds pass: with clock (seconds), only what the other problems' rounds
    did not fill is slept (several problems in one process need no idle pause); without,
    the whole pause. Returns one (timings, failed) per job, as measure_rounds."""
    rr = RoundRunner(jobs, rounds, pause, sleep, clock, fail_on)
    rr.run(rounds)
    return rr.out


class RoundRunner:
    """interleave_rounds one round at a time: run(upto) times the rounds not yet timed below
    upto (never more than `rounds`), with the same pauses. A caller whose own work fills the
    time between two calls (run_default_sweep.sh: a sweep round between two baseline rounds,
    --round-done-file) sleeps only what it did not fill. out: as interleave_rounds returns;
    done: the rounds timed so far."""

    def __init__(self, jobs, rounds, pause=ROUND_PAUSE_S, sleep=time.sleep, clock=None,
                 fail_on=(RuntimeError,)):
        self.jobs, self.rounds, self.pause, self.sleep = jobs, rounds, pause, sleep
        self.clock, self.fail_on, self.done = clock, fail_on, 0
        self.out = [({(n, mo): [] for n in names for mo in modes}, {})
                    for names, modes, _ in jobs]
        self.last = [None] * len(jobs)

    def run(self, upto):
        while self.done < min(upto, self.rounds):
            r = self.done
            for k, (names, modes, measure) in enumerate(self.jobs):
                timings, failed = self.out[k]
                if all(n in failed for n in names):
                    continue
                if r > 0 and self.pause > 0:
                    last = self.last[k]
                    wait = self.pause if self.clock is None or last is None else \
                        self.pause - (self.clock() - last)
                    if wait > 0:
                        self.sleep(wait)
                run_round(names, modes, r, self.rounds, measure, timings, failed, self.fail_on)
                if self.clock is not None:
                    self.last[k] = self.clock()
            self.done += 1


def combine_rounds(ts):
    """One timing of the rounds ts (timing_of() dicts, in the order
    measured), folded as sweep/intervals.c (intervals_combine) folds a
    kernel's rounds: median_us the estimate (store/rounds.c: the mean of the
    round medians), round_us the round medians, min_us the lowest, samples
    the sum; mean_us, stdev_us, cv, noise and launches the last round's.
    The interval is left to set_intervals (None here)."""
    if not ts:
        raise ValueError("no rounds to combine")
    if len(ts) > rounds_mod.MAX_ROUNDS:
        raise ValueError("%d rounds, a record holds at most %d" % (len(ts), rounds_mod.MAX_ROUNDS))
    med = [float(t["median_us"]) for t in ts]
    out = dict(ts[-1])
    est = rounds_mod.estimate(med)
    if len(ts) > 1 and math.isfinite(est):  # one round: that round alone, as the C
        out["median_us"] = est
        out["min_us"] = min(t["min_us"] for t in ts)
        out["samples"] = sum(int(t["samples"]) for t in ts)
    out["ci_lo_us"] = out["ci_hi_us"] = None
    out["round_us"] = med
    return out


def set_intervals(recs, floor, warn=None):
    """Sets time.ci_lo_us / ci_hi_us of every ok record of recs (those this
    run measured): per (device, problem, mode), the pool is the residuals of
    that group's ok records with two or more rounds, taken in the store's key
    order (the bootstrap draws by index, so the order is part of the
    arithmetic), and each interval is scripts/rounds.py's (store/rounds.c)
    with the floor; a lower end that would not be a time a record holds is
    the least one (rounds.MIN_US: rounds_interval_us's rule). No interval
    (None) when the pool says nothing, or when the store would refuse it
    anyway (an upper end past CI_MAX_RATIO times the median: said through
    warn). Returns recs."""
    groups = {}
    for r in recs:
        if r["status"] == "ok":
            k = r["key"]
            groups.setdefault((k["device"], k["problem"], k["mode"]), []).append(r)
    for g in groups.values():
        g.sort(key=lambda r: store_key(r["key"]).encode("utf-8"))
        pool, n_groups = rounds_mod.pool_of([r["time"]["round_us"] for r in g])
        for r in g:
            t = r["time"]
            lo, hi = rounds_mod.interval_us(t["median_us"], len(t["round_us"]), pool, n_groups,
                                            floor)
            if math.isnan(lo) or math.isnan(hi):
                lo = hi = None
            elif not (0 < lo <= t["median_us"] <= hi <= CI_MAX_RATIO * t["median_us"]):
                if warn:
                    warn("%s %s: the interval %.6g..%.6g us of median %.6g us is no interval "
                         "a record may hold (rounds %s); stored without one" % (
                             r["key"]["config"], r["key"]["mode"], lo, hi, t["median_us"],
                             ", ".join("%.6g" % u for u in t["round_us"])))
                lo = hi = None
            t["ci_lo_us"], t["ci_hi_us"] = lo, hi
    return recs


def store_key(key):
    """The store's canonical key text (store/record.h): the order records
    are scanned in, and so the order the engine pools them in."""
    return "|".join(key[f] for f in ("device", "problem", "build", "config", "mode"))


# ---- records -----------------------------------------------------------------------------------

def record_key(device, prob, name, mode):
    return {"device": device, "problem": problem_text_of(prob), "build": "baseline",
            "config": CONFIG_NAMES[name], "mode": mode}


def clip_utf8(text, n):
    """text cut to at most n UTF-8 bytes on a character boundary (the store
    counts a field's size in bytes)."""
    return text.encode("utf-8")[:n].decode("utf-8", "ignore")


def record(key, status, error, timing, errs, env, prov, prob):
    """A store record; timing is combine_rounds()'s (ok) or None (failed:
    zero times, no rounds, no interval)."""
    t = dict(timing) if timing else timing_of([])
    t.setdefault("launches", 0)  # 0: unknown (no samples)
    t.setdefault("ci_lo_us", None)
    t.setdefault("ci_hi_us", None)
    t.setdefault("round_us", [])
    med = t["median_us"]
    rec = {
        "key": key,
        "kind": "baseline",
        "status": status,
        "error": clip_utf8(error, 255),
        "time": t,
        "tflops": prob["flops"] / (med * 1e-6) * 1e-12 if med > 0 else 0.0,
        "gbps": prob["bytes"] / (med * 1e-6) * 1e-9 if med > 0 else 0.0,
        "errors": {"rel_l2": errs[0], "max_abs": errs[1]},
        "env": env,
        "provenance": prov,
        "schema": 1,
    }
    return rec


def build_records(names, modes, device, prob, gates, timings, failed, env, prov, floor,
                  warn=None):
    """The records of one run, backend by backend, mode by mode.

    gates[name] = (status, error, (rel_l2, max_abs)): the gate's verdict;
    timings and failed as measure_rounds returns them; env[(name, mode)]
    and prov[(name, mode)] the environment and provenance of each (the last
    round's; a backend that failed the gate has them under (name, None)).
    Intervals by set_intervals."""
    recs = []
    for n in names:
        st, why, errs = gates[n]
        for mo in modes:
            key = record_key(device, prob, n, mo)
            e = env.get((n, mo)) or env.get((n, None)) or {}
            pv = prov.get((n, mo)) or prov.get((n, None)) or {}
            if st != "ok":
                recs.append(record(key, st, why, None, errs, e, pv, prob))
            elif n in failed:
                recs.append(record(key, "crashed", "timing failed in " + failed[n], None, errs,
                                   e, pv, prob))
            else:
                recs.append(record(key, "ok", "", combine_rounds(timings[(n, mo)]), errs, e,
                                   pv, prob))
    return set_intervals(recs, floor, warn)


def json_lines(recs):
    """The records as `fasweep import` lines."""
    return "".join(json.dumps(finite_or_none(r), allow_nan=False) + "\n" for r in recs)


# ---- the GPU side ------------------------------------------------------------------------------

def backend_context(name):
    """The context a backend's calls run in: sdpa_kernel(its SDPBackend), or
    none for triton."""
    if BACKENDS[name] is None:
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel
    return sdpa_kernel(getattr(SDPBackend, BACKENDS[name]))


def gate_backend(torch, name, fn, ref, tol):
    """The gate: one call of fn under the backend (for triton, the call that
    autotunes it), its output against the fp32 reference. (status, error,
    (rel_l2, max_abs))."""
    catch = RuntimeError if BACKENDS[name] is not None else Exception  # Triton's own errors
    with backend_context(name):
        try:
            o = fn()
            torch.cuda.synchronize()
        except catch as e:
            return ("crashed", "backend %s cannot run this problem here: %s" % (
                BACKENDS[name] or name, (str(e).splitlines() or [type(e).__name__])[0]),
                (None, None))
    rel, mx, bad = errors(torch, o, ref)
    why = bad or gate_text(rel, mx, tol)
    return ("wrong", why, (rel, mx)) if why else ("ok", "", (rel, mx))


def print_table(recs, out):
    print("%-16s %-5s %-8s %10s %8s %10s %8s %8s %6s %s" % (
        "config", "mode", "status", "median_us", "+-95%", "min_us", "noise", "TFLOPS", "rounds",
        "samples"), file=out)
    for r in recs:
        t = r["time"]
        noise = "%.4f" % t["noise"] if t["noise"] is not None else "-"
        ci = "-"
        if t.get("ci_lo_us") is not None and t["median_us"] > 0:
            ci = "%.2f%%" % (100 * (t["ci_hi_us"] - t["ci_lo_us"]) / 2 / t["median_us"])
        print("%-16s %-5s %-8s %10.3f %8s %10.3f %8s %8.1f %6d %d" % (
            r["key"]["config"], r["key"]["mode"], r["status"], t["median_us"], ci, t["min_us"],
            noise, r["tflops"], len(t.get("round_us") or []), t["samples"]), file=out)
        if r["error"]:
            print("    " + r["error"], file=out)


def prepare_problem(torch, args, p, names, tri, dev, timer, nvml, prov0, versions):
    """Problem p ready to time: fresh inputs, their fp32 reference, every backend of names
    through its gate. Returns (its measure(name, mode, r) for the rounds, a function of
    (timings, failed) that builds its records)."""
    import torch.nn.functional as F
    m = args.measure
    # Fresh inputs every run (seeded from time and pid), like the engine.
    gen = torch.Generator(device=dev)
    gen.manual_seed((time.time_ns() ^ (os.getpid() << 32)) & 0x7FFFFFFFFFFFFFFF)
    q, k, v = random_inputs(torch, gen, p, dev)
    scale = 1.0 / math.sqrt(p["head_dim"])
    kw = call_kwargs(p, scale)
    ref = reference(torch, q, k, v, p["causal"], scale)
    env0 = device_env(torch, args.device, nvml)
    device = torch.cuda.get_device_name()[:63]

    def call(n):
        """The call of backend n: SDPA's, or the Triton kernel's (the same tensors)."""
        if n == TRITON:
            return lambda qq, kk, vv: tri.attention(qq, kk, vv, bool(p["causal"]), scale)
        return lambda qq, kk, vv: F.scaled_dot_product_attention(qq, kk, vv, **kw)

    rot = Rotation(torch, gen, q, k, v)

    def rotated(n):
        f = call(n)

        def rotated_call(i, l, launches=1):
            return f(*rot.inputs(i, l, launches))
        return rotated_call

    env, prov = {}, {}

    def stamp(where):
        env[where] = dict(env0, **nvml.read())  # right after the samples, like the engine
        prov[where] = dict(prov0, version=versions[where[0]], timestamp=time.time())

    gates = {}
    for n in names:
        t_gate = time.monotonic()
        gates[n] = gate_backend(torch, n, lambda: call(n)(q, k, v), ref, args.tol)
        stamp((n, None))
        if n == TRITON and gates[n][0] == "ok":
            cfg = tri.best_config(q, k, v, p["causal"])
            if cfg:
                print("sdpa_baseline: triton: autotuned to BLOCK_M %d, BLOCK_N %d, num_warps %d, "
                      "num_stages %d for %s (tuning and gate %.1f s; do_bench %g/%g ms)" % (
                          cfg + (problem_text_of(p), time.monotonic() - t_gate) + tri.tune_ms()),
                      file=sys.stderr)
    del ref  # the gates are done: its memory goes to the next problem's

    def measure(n, mode, r):
        mr = m if r == 0 else dict(m, warmup_runs=min(int(m["warmup_runs"]), 1))
        with backend_context(n):
            try:
                t = timer.measure(rotated(n), mr, mode, rot)
            except RuntimeError:
                raise
            except Exception as e:  # Triton's errors: a failed backend, as PyTorch's
                raise RuntimeError(error_line(e)) from e
        stamp((n, mode))
        return t

    def records(timings, failed):
        return build_records(names, m["modes"], device, p, gates, timings, failed, env, prov,
                             float(m["ci_floor"]),
                             warn=lambda s: print("sdpa_baseline: " + s, file=sys.stderr))

    return [n for n in names if gates[n][0] == "ok"], measure, records


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problem", action="append", default=[],
                    help="B,H,S,D; B,H:KV,S,D[,bf16]; or b4.h8.s512.d64.nc, "
                         "b1.h32.kv8.s4096.d128.c.bf16; again for more problems, timed one "
                         "after another in this one process")
    ap.add_argument("--space-problems", action="store_true",
                    help="every problem of --space (`fasweep plan --json`, or --plan's), "
                         "after any --problem (baselines.sh: asked of fasweep only after "
                         "--go-on-stdin's first line, so the process can start before fasweep "
                         "is built)")
    ap.add_argument("--plan", metavar="FILE",
                    help="the space's problems (with --space-problems) and modes from this "
                         "plan, what `fasweep plan --json --space S` prints, instead of asking "
                         "fasweep (run_default_sweep.sh: geninst --check's, before fasweep is "
                         "built)")
    ap.add_argument("--ready-file", metavar="PATH",
                    help="with --go-on-stdin: a first line 'prepare' sets everything up at "
                         "once (inputs, references, the gates, Triton's autotuning: no timed "
                         "round), then creates PATH and waits for 'go' to time the rounds "
                         "(run_default_sweep.sh: under its build, the GPU idle; its sweep "
                         "starts once PATH is there)")
    ap.add_argument("--round-done-file", metavar="PATH",
                    help="with --ready-file: after 'prepare', a line 'round' times one round "
                         "(never the last, which waits for 'go') and then creates PATH (the "
                         "caller removes it before each 'round'; run_default_sweep.sh: between "
                         "two of its sweep's rounds, fasweep grid --between-rounds)")
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--space", help="take measure settings and tolerances from this space")
    ap.add_argument("--modes", help="M,M,...: fasweep's modes (`fasweep version --json`; "
                    "default: the space's modes, else fasweep's default)")
    fasweep_cli.add_option(ap, "the problem, the modes and the space's modes")
    ap.add_argument("--backends", default=DEFAULT_BACKENDS,
                    help="B,B,...: of %s (default %s; triton where it can run here)" % (
                        ", ".join(BACKENDS), DEFAULT_BACKENDS))
    ap.add_argument("--rounds", type=int,
                    help="rounds per (backend, mode), 1 to %d (default: the space's "
                         "measure.rounds, else %d)" % (rounds_mod.MAX_ROUNDS,
                                                       DEFAULT_MEASURE["rounds"]))
    ap.add_argument("--round-pause", type=float, default=ROUND_PAUSE_S, metavar="S",
                    help="seconds between rounds (default %g)" % ROUND_PAUSE_S)
    ap.add_argument("--device", type=int, default=0, help="CUDA device ordinal")
    ap.add_argument("--flush", choices=("memset", "fill"), default="memset",
                    help="cold flush: cudaMemsetAsync as the engine (default), or torch fill_")
    ap.add_argument("--precompiled", action="store_true",
                    help="Triton's configs of the problems are compiled already (baselines.sh: "
                         "triton_attention.py --precompile): no parallel precompile here")
    ap.add_argument("--go-on-stdin", action="store_true",
                    help="import PyTorch and Triton first, then wait for a line on stdin, "
                         "'go' (or 'prepare': --ready-file) before anything touches the GPU or "
                         "runs fasweep (run_default_sweep.sh: the imports overlap the build); "
                         "end of input or another line: exit 1, nothing timed")
    ap.add_argument("--skip-without-torch", action="store_true",
                    help="where PyTorch cannot run: one line 'fasweep: SDPA baselines skipped: "
                         "...' and exit %d, no records (baselines.sh), not exit 1" % NO_TORCH)
    ap.add_argument("-o", "--output", help="write JSON lines here (default stdout)")
    ap.add_argument("--table", action="store_true",
                    help="also print a table (to stdout with -o, else stderr)")
    args = ap.parse_args()
    if not args.problem and not args.space_problems:
        die("no problem: --problem P, or --space-problems with --space")
    if args.space_problems and not args.space:
        die("--space-problems takes the problems of --space FILE: no --space given")
    if args.ready_file and not args.go_on_stdin:
        die("--ready-file goes with --go-on-stdin (its 'prepare')")
    if args.round_done_file and not args.ready_file:
        die("--round-done-file goes with --ready-file (its 'round' comes after 'prepare')")
    prepare_first = False
    if args.go_on_stdin:  # the imports first, under the caller's build; then wait for it
        torch, no_torch = import_torch()
        if TRITON in args.backends.split(","):  # imported now; probed and said after 'go'
            with contextlib.suppress(Exception):
                import triton_attention  # noqa: F401
        prepare_first = wait_for_go(("go", "prepare") if args.ready_file else ("go",)) \
            == "prepare"
    binary = fasweep_cli.binary(args.fasweep)
    args.measure, args.tol, space_name, space_hash = load_space(args.space)
    plan_probs, plan_modes = read_plan(args.plan) if args.plan else (None, None)
    probs = [parse_problem(t, args.causal, args.fasweep) for t in args.problem]
    if args.space_problems:
        probs += plan_probs if plan_probs is not None else fasweep_json(  # problem --json's
            binary, "plan", "--json", "--space", args.space)["problems"]
        if not probs:
            die("%s: a space without problems" % args.space)
    if plan_modes is not None:  # the planner's: every one of them is fasweep's
        known = args.measure["modes"] = list(plan_modes)
    else:
        known, args.measure["modes"] = fasweep_modes(binary, args.space)
    if args.modes:
        args.measure["modes"] = args.modes.split(",")
    for mo in args.measure["modes"]:
        if mo not in known:
            die("modes are %s, got %r" % (", ".join(known), mo))
        if mo not in TIMED:
            die("mode %r is fasweep's but this script has no way to time it" % mo)
    if args.rounds is not None:
        args.measure["rounds"] = check_rounds(args.rounds, "--rounds")
    if not (math.isfinite(args.round_pause) and args.round_pause >= 0):
        die("--round-pause wants seconds >= 0, got %r" % args.round_pause)
    names = args.backends.split(",")
    for n in names:
        if n not in BACKENDS:
            die("--backends takes %s, got %r" % (",".join(BACKENDS), n))
    if TRITON in names:  # its tuning hook (triton_attention.TUNE_ENV) is input: exit 2 if bad
        try:
            import triton_attention
            triton_attention.tune_ms()
        except ValueError as e:
            die(str(e))
        except Exception:  # a broken install: triton_probe below says so
            pass
    per, notes = [], []  # each problem's backends, and the notes of what is left out
    for p in probs:
        if p["head_dim"] > 256:
            die("head_dim above 256 is not supported by the SDPA fused backends")
        keep, why = backends_for(names, p)
        if not keep:
            die(why[0] + ": no backend left to time (--backends)")
        per.append(keep)
        notes += why

    if not args.go_on_stdin:
        torch, no_torch = import_torch()
    hint = "; pip install torch" if torch is None else ""
    if torch is not None and not torch.cuda.is_available():
        torch, no_torch = None, "torch %s sees no CUDA GPU" % torch.__version__
    if torch is None:
        if args.skip_without_torch:
            print("fasweep: SDPA baselines skipped: PyTorch cannot run here (%s)" % no_torch,
                  file=sys.stderr)
            sys.exit(NO_TORCH)
        die("PyTorch cannot run here (%s%s)" % (no_torch, hint), 1)
    for p in probs:
        if is_gqa(p) and torch_version(torch.__version__) < GQA_TORCH:
            die("PyTorch %s has no enable_gqa for kv_heads < heads (%s): PyTorch %d.%d or "
                "later times grouped-query attention" % (torch.__version__, problem_text_of(p),
                                                         *GQA_TORCH), 1)
    names = [n for n in names if any(n in keep for keep in per)]  # triton probed if kept
    names, tri, more = drop_unavailable(names, triton_probe)
    per = [[n for n in keep if n in names] for keep in per]
    if not all(per):  # only triton was asked for: exit 1, the machine lacks it (one line)
        die(more[0] + ": no backend left to time (--backends)", 1)
    for note in notes + more:
        print("sdpa_baseline: " + note, file=sys.stderr)
    torch.cuda.set_device(args.device)
    dev = torch.device("cuda", args.device)
    nvml = Nvml(torch, args.device)
    prov0 = {"space_name": space_name, "space_hash": space_hash,
             "version": ("torch-" + torch.__version__.split("+")[0])[:15]}
    versions = {n: prov0["version"] for n in names}
    if tri is not None:
        versions[TRITON] = ("triton-" + tri.triton.__version__.split("+")[0])[:15]
    timer = Timer(torch, dev, args.flush == "memset")
    shapes = [tri.shape_of(p) for p, keep in zip(probs, per) if TRITON in keep] if tri else []
    if shapes and not args.precompiled:
        # Their configs compiled in parallel first (one pool for every problem): each
        # gate call's autotuning then loads them.
        t0 = time.monotonic()
        done, pre_notes = tri.precompile_shapes(shapes, args.device)
        print("sdpa_baseline: triton: %d configs of %d problems precompiled in %.1f s%s" % (
            done, len(shapes), time.monotonic() - t0,
            "; " + clip_utf8(pre_notes[0], 200) if pre_notes else ""), file=sys.stderr)
    ready = [prepare_problem(torch, args, p, keep, tri, dev, timer, nvml, prov0, versions)
             for p, keep in zip(probs, per)]
    # Every problem's round r, then round r + 1: a problem's rounds are apart by the others'
    # and by the caller's work between them (at least --round-pause seconds; only what they
    # do not fill is slept).
    runner = RoundRunner([(timed, args.measure["modes"], measure) for timed, measure, _ in ready],
                         args.measure["rounds"], args.round_pause, clock=time.monotonic)
    if prepare_first:  # set up under the caller's build: the rounds wait for its sweep
        torch.cuda.synchronize()
        signal_ready(args.ready_file)
        # 'round' (--round-done-file): one round now, between two of the caller's sweep
        # rounds (fasweep grid --between-rounds), the last one always after 'go'
        while wait_for_go(("go", "round") if args.round_done_file else ("go",)) == "round":
            runner.run(min(runner.done + 1, args.measure["rounds"] - 1))
            torch.cuda.synchronize()
            signal_ready(args.round_done_file, "--round-done-file")
    runner.run(args.measure["rounds"])
    results = runner.out
    recs = [r for (_, _, records), (timings, failed) in zip(ready, results)
            for r in records(timings, failed)]
    out = open(args.output, "w") if args.output else sys.stdout
    out.write(json_lines(recs))
    if args.output:
        out.close()
    if args.table:
        print_table(recs, sys.stdout if args.output else sys.stderr)


if __name__ == "__main__":
    main()
