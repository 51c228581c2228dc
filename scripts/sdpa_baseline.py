#!/usr/bin/env python3
"""sdpa_baseline.py - time PyTorch scaled_dot_product_attention with each of its
backends (flash, efficient, cudnn) the way `fasweep grid` times a kernel, and
write the results as store records (JSON lines) for `fasweep import`.

Same method as the sweep engine (docs/measurement.md):
  * fresh random fp16 inputs, uniform in [-1, 1], layout [B, H, S, D];
  * a correctness gate against an fp32 reference (rel_l2 and max_abs in
    float64, any NaN/inf fails); a backend that fails it is stored "wrong"
    and not timed; one that cannot run here is stored "crashed";
  * warm-up launches, then one CUDA event pair around each call, calls
    queued in blocks behind a GPU sleep kernel so host time between the
    events is not counted, until the noise of the median
    (1.2533 * stdev / (sqrt(n) * median)) is under measure.noise after
    min_samples, or max_samples, or max_seconds of sampling;
  * hot (no flush), cold (a 2x-L2 buffer written by cudaMemsetAsync
    before every sample, outside its events: the engine's own call) and
    batch (one event pair around back-to-back calls, as many as fill
    measure.batch_us; a sample is their time / calls: throughput, the way
    users and the PyTorch benchmarks time SDPA) modes.
The measurement settings and tolerances come from --space FILE when given
(the space's "measure" and "tolerance"), else the engine's defaults.

usage:
  sdpa_baseline.py --problem 4,8,512,64 [--causal] [--space FILE]
                   [--modes hot,cold,batch] [--backends flash,efficient,cudnn]
                   [--flush memset|fill] [-o FILE] [--table]
  then: fasweep import FILE

Records: key {device, problem, build "baseline", config "sdpa-flash" |
"sdpa-efficient" | "sdpa-cudnn", mode}, kind "baseline".
"""

import argparse
import json
import math
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also when loaded by path
from fnv1a import fnv1a64  # noqa: E402  (the space hash fasweep stores)

# The engine's defaults (grid/space.h, docs/spaces.md).
DEFAULT_MEASURE = {
    "warmup_runs": 3,
    "min_samples": 10,
    "max_samples": 200,
    "noise": 0.01,
    "max_seconds": 0.5,
    "timeout_s": 10,
    "modes": ["hot"],
    "batch_us": 200,
}
DEFAULT_TOLERANCE = {"rel_l2": 5e-3, "max_abs": 3e-2}
MEDIAN_SE = 1.2533141373155001  # sqrt(pi/2), as sweep/stats.h
BLOCK_MAX = 16
BACKENDS = {"flash": "FLASH_ATTENTION", "efficient": "EFFICIENT_ATTENTION",
            "cudnn": "CUDNN_ATTENTION"}
# Throttle reasons that mean the clocks were cut (sweep/nvml.h): SW power
# cap, HW slowdown, SW thermal, HW thermal, HW power brake.
THROTTLE_MASK = 0x4 | 0x8 | 0x20 | 0x40 | 0x80


# The timing modes: a copy of the table in store/mode.h (the one definition;
# what each times: docs/measurement.md). Add a mode there first, then here,
# with its case in Bench.measure (cold = L2 flushed, batch = back to back).
MODES = ("hot", "cold", "batch")

def die(msg, code=2):
    print("sdpa_baseline: " + msg, file=sys.stderr)
    sys.exit(code)


# ---- problem and space -------------------------------------------------------------------------

def parse_problem(text, causal):
    """"B,H,S,D" or the canonical "b4.h8.s512.d64.nc" text."""
    try:
        if text.startswith("b"):
            parts = text.split(".")
            if len(parts) != 5 or parts[4] not in ("c", "nc"):
                raise ValueError
            b, h, s, d = (int(p[1:]) for p in parts[:4])
            causal = causal or parts[4] == "c"
        else:
            b, h, s, d = (int(x) for x in text.split(","))
    except ValueError:
        die("--problem wants B,H,S,D (e.g. 4,8,512,64) or b4.h8.s512.d64.nc, got %r" % text)
    if min(b, h, s, d) < 1:
        die("--problem values must be positive, got %r" % text)
    return {"batch": b, "heads": h, "seq_len": s, "head_dim": d, "causal": bool(causal)}


def problem_text(p):
    return "b%d.h%d.s%d.d%d.%s" % (p["batch"], p["heads"], p["seq_len"], p["head_dim"],
                                   "c" if p["causal"] else "nc")


def problem_flops(p):
    f = 4.0 * p["batch"] * p["heads"] * p["seq_len"] ** 2 * p["head_dim"]
    return f / 2 if p["causal"] else f


def problem_bytes(p):
    return 4.0 * p["batch"] * p["heads"] * p["seq_len"] * p["head_dim"] * 2


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
    return measure, tol, str(doc.get("name", "space"))[:63], fnv1a64(raw)


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
        torch = self.torch
        spin_us = max(20.0, 1.5 * self.enqueue_us * nb * launches)
        torch.cuda._sleep(int(spin_us * self.cycles_per_us))
        t0 = time.perf_counter()
        for i in range(nb):
            if cold:
                self.flush_l2((base + i) & 0xFF)
            self.ev[i][0].record()
            for _ in range(launches):
                fn()
            self.ev[i][1].record()
        self.enqueue_us = (time.perf_counter() - t0) * 1e6 / (nb * launches)
        self.ev[nb - 1][1].synchronize()
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

    def measure(self, fn, m, mode):
        torch = self.torch
        warm = max(1, int(m["warmup_runs"]))
        e0, e1 = self.ev[0]
        e0.record()
        for _ in range(warm):
            fn()
        e1.record()
        e1.synchronize()
        est_call = e0.elapsed_time(e1) * 1e3 / warm
        launches = batch_launches(est_call, m.get("batch_us", 200)) if mode == "batch" else 1
        samples, est = [], 0.0
        t0 = time.perf_counter()
        while True:
            nb = block_size(est, m, int(m["max_samples"]) - len(samples))
            tb = time.perf_counter()
            samples += self.block(fn, nb, mode == "cold", len(samples), launches)
            est = (time.perf_counter() - tb) * 1e6 / nb
            t = timing_of(samples)
            if should_stop(m, len(samples), t["noise"], time.perf_counter() - t0):
                t["launches"] = launches
                return t


def reference(torch, q, k, v, causal, scale):
    """fp32 attention, one (batch) slice at a time to bound the score memory."""
    out = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    s = q.shape[2]
    mask = None
    if causal:
        mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
    for b in range(q.shape[0]):
        qb, kb, vb = q[b].float(), k[b].float(), v[b].float()
        sc = torch.matmul(qb, kb.transpose(-1, -2)) * scale
        if mask is not None:
            sc.masked_fill_(mask, float("-inf"))
        out[b] = torch.matmul(torch.softmax(sc, dim=-1), vb)
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


# ---- records -----------------------------------------------------------------------------------

def record(key, status, error, timing, errs, env, prov, prob):
    t = timing or timing_of([])
    med = t["median_us"]
    rec = {
        "key": key,
        "kind": "baseline",
        "status": status,
        "error": error[:255],
        "time": t,
        "tflops": problem_flops(prob) / (med * 1e-6) * 1e-12 if med > 0 else 0.0,
        "gbps": problem_bytes(prob) / (med * 1e-6) * 1e-9 if med > 0 else 0.0,
        "errors": {"rel_l2": errs[0], "max_abs": errs[1]},
        "env": env,
        "provenance": prov,
        "schema": 1,
    }
    return rec


def finite_or_none(o):
    """JSON has no NaN: non-finite numbers become null, as the store writes them."""
    if isinstance(o, float) and not math.isfinite(o):
        return None
    if isinstance(o, dict):
        return {k: finite_or_none(v) for k, v in o.items()}
    return o


def run_backend(torch, name, backend, args, q, k, v, ref, timer, nvml, env0, prov0):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F
    p, m, tol = args.prob, args.measure, args.tol
    scale = 1.0 / math.sqrt(p["head_dim"])
    device = torch.cuda.get_device_name()[:63]
    recs = []

    def fn():
        return F.scaled_dot_product_attention(q, k, v, is_causal=p["causal"], scale=scale)

    def key(mode):
        return {"device": device, "problem": problem_text(p), "build": "baseline",
                "config": "sdpa-" + name, "mode": mode}

    def prov():
        d = dict(prov0)
        d["timestamp"] = time.time()
        return d

    with sdpa_kernel(getattr(SDPBackend, backend)):
        try:
            o = fn()
            torch.cuda.synchronize()
        except RuntimeError as e:
            msg = "backend %s cannot run this problem here: %s" % (backend, str(e).splitlines()[0])
            env = dict(env0, **nvml.read())
            return [record(key(mo), "crashed", msg, None, (None, None), env, prov(), p)
                    for mo in m["modes"]]
        rel, mx, bad = errors(torch, o, ref)
        why = bad or gate_text(rel, mx, tol)
        if why:
            env = dict(env0, **nvml.read())
            return [record(key(mo), "wrong", why, None, (rel, mx), env, prov(), p)
                    for mo in m["modes"]]
        for mode in m["modes"]:
            t = timer.measure(fn, m, mode)
            env = dict(env0, **nvml.read())  # right after the samples, like the engine
            recs.append(record(key(mode), "ok", "", t, (rel, mx), env, prov(), p))
    return recs


def print_table(recs, out):
    print("%-16s %-5s %-8s %10s %10s %8s %8s %s" % ("config", "mode", "status", "median_us",
                                                  "min_us", "noise", "TFLOPS", "samples"),
          file=out)
    for r in recs:
        t = r["time"]
        noise = "%.4f" % t["noise"] if t["noise"] is not None else "-"
        print("%-16s %-5s %-8s %10.3f %10.3f %8s %8.1f %d" % (
            r["key"]["config"], r["key"]["mode"], r["status"], t["median_us"], t["min_us"],
            noise, r["tflops"], t["samples"]), file=out)
        if r["error"]:
            print("    " + r["error"], file=out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problem", required=True, help="B,H,S,D or b4.h8.s512.d64.nc")
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--space", help="take measure settings and tolerances from this space")
    ap.add_argument("--modes", help="hot,cold,batch (default: the space's modes, else hot)")
    ap.add_argument("--backends", default="flash,efficient,cudnn")
    ap.add_argument("--device", type=int, default=0, help="CUDA device ordinal")
    ap.add_argument("--flush", choices=("memset", "fill"), default="memset",
                    help="cold flush: cudaMemsetAsync as the engine (default), or torch fill_")
    ap.add_argument("-o", "--output", help="write JSON lines here (default stdout)")
    ap.add_argument("--table", action="store_true",
                    help="also print a table (to stdout with -o, else stderr)")
    args = ap.parse_args()
    args.prob = parse_problem(args.problem, args.causal)
    args.measure, args.tol, space_name, space_hash = load_space(args.space)
    if args.modes:
        args.measure["modes"] = args.modes.split(",")
    for mo in args.measure["modes"]:
        if mo not in MODES:
            die("modes are %s, got %r" % (", ".join(MODES), mo))
    names = args.backends.split(",")
    for n in names:
        if n not in BACKENDS:
            die("--backends takes %s, got %r" % (",".join(BACKENDS), n))
    if args.prob["head_dim"] > 256:
        die("head_dim above 256 is not supported by the SDPA fused backends")

    try:
        import torch
    except ImportError:
        die("PyTorch is not installed (pip install torch)", 1)
    if not torch.cuda.is_available():
        die("no CUDA GPU visible to PyTorch", 1)
    torch.cuda.set_device(args.device)
    dev = torch.device("cuda", args.device)
    p = args.prob
    shape = (p["batch"], p["heads"], p["seq_len"], p["head_dim"])
    # Fresh inputs every run (seeded from time and pid), like the engine.
    gen = torch.Generator(device=dev)
    gen.manual_seed((time.time_ns() ^ (os.getpid() << 32)) & 0x7FFFFFFFFFFFFFFF)
    q, k, v = (torch.rand(shape, generator=gen, device=dev, dtype=torch.float32)
               .mul_(2).sub_(1).half() for _ in range(3))
    ref = reference(torch, q, k, v, p["causal"], 1.0 / math.sqrt(p["head_dim"]))
    nvml = Nvml(torch, args.device)
    env0 = device_env(torch, args.device, nvml)
    prov0 = {"space_name": space_name, "space_hash": space_hash,
             "version": ("torch-" + torch.__version__.split("+")[0])[:15]}
    timer = Timer(torch, dev, args.flush == "memset")
    recs = []
    for n in names:
        recs += run_backend(torch, n, BACKENDS[n], args, q, k, v, ref, timer, nvml, env0, prov0)
    out = open(args.output, "w") if args.output else sys.stdout
    for r in recs:
        out.write(json.dumps(finite_or_none(r), allow_nan=False) + "\n")
    if args.output:
        out.close()
    if args.table:
        print_table(recs, sys.stdout if args.output else sys.stderr)


if __name__ == "__main__":
    main()
