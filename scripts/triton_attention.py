#!/usr/bin/env python3
"""triton_attention.py - an autotuned Triton FlashAttention forward kernel: the
Triton column of the benchmark (scripts/sdpa_baseline.py, backend "triton").

What it computes: O = softmax(Q K^T * scale [+ causal mask]) V for
Q and O [B, H, S, D], K and V [B, KV, S, D], all contiguous, fp16 or bf16,
head dims 64, 128 and 256, any S >= 1, causal or not. Grouped-query and
multi-query attention read K/V in place: query head h uses K/V head
h // (H // KV) (no copies, no expansion).

The technique is the one of Triton's fused-attention tutorial (written here
afresh): one program per (BLOCK_M query rows, batch*head), Q's tile held in
registers, a loop over BLOCK_N key/value tiles with the online softmax in
base 2 (the scale folded with log2(e), exp2), the fp32 accumulator
rescaled when the running row maximum moves, and the division by the row
sum once at the end. A causal problem runs in two stages: the key tiles
wholly left of the query tile without any mask, then the tiles on the
diagonal with the mask n <= m. A non-causal one runs its whole key tiles
without a mask and the tail tile (S not a multiple of BLOCK_N) masked.
Rows past S are loaded as zeros and never stored.

Autotuning: @triton.autotune over CONFIG_SPACE (BLOCK_M {64, 128, 256} x
BLOCK_N {32, 64, 128} x num_warps {4, 8, 16} x num_stages {2, 3, 4}: 81
configs), pruned per problem by keep_config before any is compiled: BLOCK_N
divides BLOCK_M (the causal split needs it), at least 16 query rows per
warp, the fp32 accumulator and scores within 63 % of a thread's registers
(255, or 128 at 16 warps: 160 or 80 values; past it ptxas for sm_90a
spills tens to thousands of bytes, or cannot compile at all: D=256 at 16
warps), the tiles' shared memory (Q, and K and V per stage, which is what
Triton 3.9 allocates) within the GPU's, and no tile much larger than S.
Kept for S=4096 on an H100: 33 configs at D=64, 23 at D=128, 9 at D=256. The
key is (B*H, S, D, causal, dtype): each problem tunes once, on its first
call (Triton's do_bench), and keeps that config; so the first call of a
problem is slow and is not the one to time (sdpa_baseline.py makes it its
untimed correctness gate).

Limits: forward only, no dropout, no attention mask other than causal, no
variable sequence lengths, S the same for queries and keys, contiguous
inputs only (refused otherwise), D in HEAD_DIMS, Triton MIN_TRITON or later
on an NVIDIA GPU (TRITON_INTERPRET=1 runs it on the CPU, slowly, for tests:
tests/triton/test_triton_attention.py; fp16 only there, Triton 3.9's
interpreter computes a bf16 tl.dot wrongly).

available() says whether it can run here (the reason when not);
attention(q, k, v, causal, scale) runs it; attention(..., config=(BLOCK_M,
BLOCK_N, num_warps, num_stages)) runs one config without autotuning."""

import math
import os
import re
import sys

HEAD_DIMS = (64, 128, 256)
MIN_TRITON = (3, 0)
BLOCK_MS = (64, 128, 256)
BLOCK_NS = (32, 64, 128)
WARPS = (4, 8, 16)
STAGES = (2, 3, 4)
# (BLOCK_M, BLOCK_N, num_warps, num_stages): every config autotuning may try
CONFIG_SPACE = [(m, n, w, s) for m in BLOCK_MS for n in BLOCK_NS for w in WARPS for s in STAGES]
REG_FRACTION = 0.63  # of a thread's registers the fp32 accumulator and scores may take
SMEM_FALLBACK = 227 * 1024  # shared memory per block (H100) when the GPU's is unknown
MAX_GRID_Y = 65535  # CUDA's limit on the grid's y dimension (one program column per b * h)
# Autotuning's benchmark of each config (triton.testing.do_bench): warm-up and timing budget in
# ms. Triton's defaults (25, 100) took about 11 s of the main job's baselines for the h100
# space's 89 configs; 5 and 25 ms (at least 40 launches of the slowest config there) picked
# the same configs in the runs compared (sweep/NOTES-engine.md, tenth session).
# FASWEEP_TRITON_TUNE_MS="WARMUP,REP" overrides them (a measurement hook).
TUNE_MS = (5.0, 25.0)
TUNE_ENV = "FASWEEP_TRITON_TUNE_MS"


def regs_per_thread(warps):
    """Registers a thread may hold in a block of `warps` warps (65536 an SM, at most 255)."""
    return min(255, 65536 // (32 * warps))


def tile_floats(bm, bn, d, warps):
    """fp32 values a thread holds: its share of the accumulator [bm, d] and the scores [bm, bn]."""
    return (bm * d + bm * bn) / (32.0 * warps)


def keep_config(bm, bn, warps, stages, d, s, elem_bytes=2, smem=SMEM_FALLBACK):
    """Whether config (bm, bn, warps, stages) is worth compiling for head
    dim d and sequence length s: bn divides bm, 16 query rows or more per
    warp, the accumulator and scores within REG_FRACTION of a thread's
    registers (ptxas for sm_90a: past it they spill or do not compile), Q's
    tile and K's and V's per stage within the shared memory, and no tile
    much larger than S (a 64-row, 32-column tile always is kept)."""
    if bm % bn or bm < 16 * warps:
        return False
    if tile_floats(bm, bn, d, warps) > REG_FRACTION * regs_per_thread(warps):
        return False
    if elem_bytes * (bm * d + stages * 2 * bn * d) > smem:
        return False
    cap = 1 << max(0, (max(1, s) - 1).bit_length())  # S rounded up to a power of two
    return bm <= max(BLOCK_MS[0], cap) and bn <= max(BLOCK_NS[0], cap)


def configs_for(d, s, elem_bytes=2, smem=SMEM_FALLBACK):
    """The configs of CONFIG_SPACE that keep_config keeps (never none: the
    smallest one if all were pruned)."""
    keep = [c for c in CONFIG_SPACE if keep_config(*c, d, s, elem_bytes, smem)]
    return keep or [CONFIG_SPACE[0]]


def _one_line(e):
    """An exception's first line (its type's name when it has no text)."""
    return (str(e).splitlines() or [type(e).__name__])[0]


def tune_ms(environ=None):
    """(warm-up, rep) in ms for autotuning's benchmark: TUNE_ENV's two positive numbers, else
    (unset or empty) TUNE_MS; ValueError naming the variable when it holds anything else."""
    text = (os.environ if environ is None else environ).get(TUNE_ENV, "")
    if not text:
        return TUNE_MS
    parts = text.split(",")
    try:
        w, r = (float(x) for x in parts) if len(parts) == 2 else (None, None)
    except ValueError:
        w = r = None
    if w is None or not (0 < w < 1e4 and 0 < r < 1e4):
        raise ValueError("%s=%r: expected WARMUP,REP, two numbers of milliseconds in (0, 10000), "
                         "e.g. 25,100 (Triton's own defaults)" % (TUNE_ENV, text))
    return w, r


def version_tuple(text):
    """(major, minor) of a version text ("3.1.0", "3.2.0+git1234"); (0, 0) when unreadable."""
    m = re.match(r"([0-9]+)\.([0-9]+)", str(text))
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


try:
    import triton
    import triton.language as tl
    _WHY = ""
except Exception as e:  # ImportError, or a triton that breaks on import
    triton = tl = None
    _WHY = "import triton: %s" % _one_line(e)

if triton is not None and version_tuple(triton.__version__) < MIN_TRITON:
    _WHY = "triton %s is older than %d.%d" % ((triton.__version__,) + MIN_TRITON)
try:
    _TUNE = tune_ms()
except ValueError as e:  # sdpa_baseline.py says it first, as a usage error (exit 2)
    _TUNE, _WHY = TUNE_MS, _WHY or str(e)


def available(device=False):
    """(True, "") when the kernel can be launched here, else (False, why);
    device: also ask Triton's driver for the GPU it would compile for."""
    if _WHY:
        return False, _WHY
    if device:
        try:
            target = triton.runtime.driver.active.get_current_target()
        except Exception as e:  # no driver, no GPU: Triton's own words, one line
            return False, "Triton finds no GPU: %s" % _one_line(e)
        if getattr(target, "backend", "cuda") != "cuda":
            return False, "Triton's GPU is %s, not CUDA" % target.backend
    return True, ""


def _smem_limit():
    """Shared memory a block may use on the current GPU (Triton's driver), else SMEM_FALLBACK."""
    try:
        import torch
        props = triton.runtime.driver.active.utils.get_device_properties(
            torch.cuda.current_device())
        return int(props["max_shared_mem"])
    except Exception:
        return SMEM_FALLBACK


if not _WHY:
    @triton.jit
    def _tiles(acc, l_i, m_i, q, k_base, v_base, offs_m, offs_n, offs_d, lo, hi, S,
               qk_scale, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,
               MASKED: tl.constexpr, DIAGONAL: tl.constexpr):
        """Key/value tiles [lo, hi) into the running (acc, l_i, m_i).
        MASKED: keys at or past S count as -inf (and load as zeros);
        DIAGONAL: keys right of the query row too (causal)."""
        for start_n in range(lo, hi, BLOCK_N):
            n = start_n + offs_n
            k_ptrs = k_base + n[None, :] * HEAD_DIM + offs_d[:, None]  # [D, BLOCK_N]
            v_ptrs = v_base + n[:, None] * HEAD_DIM + offs_d[None, :]  # [BLOCK_N, D]
            if MASKED:
                k = tl.load(k_ptrs, mask=n[None, :] < S, other=0.0)
            else:
                k = tl.load(k_ptrs)
            s = tl.dot(q, k) * qk_scale  # scores in log2 units, fp32
            if MASKED:
                ok = n[None, :] < S
                if DIAGONAL:
                    ok = ok & (n[None, :] <= offs_m[:, None])
                s = tl.where(ok, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.math.exp2(s - m_new[:, None])
            alpha = tl.math.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            if MASKED:
                v = tl.load(v_ptrs, mask=n[:, None] < S, other=0.0)
            else:
                v = tl.load(v_ptrs)
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
            m_i = m_new
        return acc, l_i, m_i

    @triton.jit
    def _attn_fwd(Q, K, V, O, qk_scale, H, GROUP, BH, S, HEAD_DIM: tl.constexpr,
                  CAUSAL: tl.constexpr, IS_BF16: tl.constexpr, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr):
        """Rows [BLOCK_M * program_id(0), + BLOCK_M) of head program_id(1)
        (b * H + h) of O. GROUP = H // KV query heads share a K/V head; BH
        and IS_BF16 only key the autotuning."""
        start_m = tl.program_id(0)
        bh = tl.program_id(1)
        b = bh // H
        h = bh % H
        kv_h = b * (H // GROUP) + h // GROUP
        q_off = bh.to(tl.int64) * S * HEAD_DIM
        kv_off = kv_h.to(tl.int64) * S * HEAD_DIM
        offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = tl.arange(0, BLOCK_N)
        offs_d = tl.arange(0, HEAD_DIM)
        row = offs_m[:, None] * HEAD_DIM + offs_d[None, :]
        q = tl.load(Q + q_off + row, mask=offs_m[:, None] < S, other=0.0)
        m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
        l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
        acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
        k_base = K + kv_off
        v_base = V + kv_off
        if CAUSAL:
            # tiles left of the diagonal: every key precedes every row, no mask
            diag = start_m * BLOCK_M
            acc, l_i, m_i = _tiles(acc, l_i, m_i, q, k_base, v_base, offs_m, offs_n, offs_d,
                                   0, diag, S, qk_scale, HEAD_DIM, BLOCK_N, False, False)
            acc, l_i, m_i = _tiles(acc, l_i, m_i, q, k_base, v_base, offs_m, offs_n, offs_d,
                                   diag, tl.minimum(diag + BLOCK_M, S), S, qk_scale, HEAD_DIM,
                                   BLOCK_N, True, True)
        else:
            whole = (S // BLOCK_N) * BLOCK_N
            acc, l_i, m_i = _tiles(acc, l_i, m_i, q, k_base, v_base, offs_m, offs_n, offs_d,
                                   0, whole, S, qk_scale, HEAD_DIM, BLOCK_N, False, False)
            acc, l_i, m_i = _tiles(acc, l_i, m_i, q, k_base, v_base, offs_m, offs_n, offs_d,
                                   whole, S, S, qk_scale, HEAD_DIM, BLOCK_N, True, False)
        out = acc / l_i[:, None]
        tl.store(O + q_off + row, out.to(O.dtype.element_ty), mask=offs_m[:, None] < S)

    def _prune(configs, named_args, **kwargs):
        """early_config_prune: keep_config for this call's head dim and S."""
        d, s = int(named_args["HEAD_DIM"]), int(named_args["S"])
        smem = _smem_limit()
        keep = [c for c in configs
                if keep_config(c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.num_warps,
                               c.num_stages, d, s, 2, smem)]
        return keep or [min(configs, key=lambda c: (c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"],
                                                    c.num_warps, c.num_stages))]

    def _tune_bench(fn, quantiles):
        """Autotuning's benchmark of one config: Triton's own, with the budget of tune_ms()."""
        import triton.testing
        return triton.testing.do_bench(fn, warmup=_TUNE[0], rep=_TUNE[1], quantiles=quantiles)

    _attn_tuned = triton.autotune(
        configs=[triton.Config({"BLOCK_M": m, "BLOCK_N": n}, num_warps=w, num_stages=st)
                 for m, n, w, st in CONFIG_SPACE],
        key=["BH", "S", "HEAD_DIM", "CAUSAL", "IS_BF16"],
        prune_configs_by={"early_config_prune": _prune},
        do_bench=_tune_bench,
    )(_attn_fwd)


def check_inputs(q, k, v):
    """(B, H, KV, S, D) of q [B, H, S, D], k and v [B, KV, S, D]; ValueError
    naming what is wrong: shapes, dtype (fp16, bf16, all the same), head
    dim, contiguity, H a multiple of KV, B * H within MAX_GRID_Y."""
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise ValueError("q, k and v must be 4-d: [B, H, S, D] and [B, KV, S, D]")
    b, h, s, d = q.shape
    if tuple(k.shape) != tuple(v.shape) or k.shape[0] != b or k.shape[2:] != q.shape[2:]:
        raise ValueError("k and v must be [B, KV, S, D] of q's B, S, D: q %s, k %s, v %s" % (
            tuple(q.shape), tuple(k.shape), tuple(v.shape)))
    kv = k.shape[1]
    if kv < 1 or h % kv:
        raise ValueError("the query heads (%d) must be a multiple of the K/V heads (%d)" % (h, kv))
    if d not in HEAD_DIMS:
        raise ValueError("head dim %d: this kernel has %s" % (d, ", ".join(map(str, HEAD_DIMS))))
    if s < 1:
        raise ValueError("sequence length %d: at least 1" % s)
    if b * h > MAX_GRID_Y:
        raise ValueError("batch x heads %d: the grid's second dimension takes at most %d" % (
            b * h, MAX_GRID_Y))
    if not (q.dtype == k.dtype == v.dtype) or str(q.dtype) not in ("torch.float16",
                                                                   "torch.bfloat16"):
        raise ValueError("q, k and v must all be float16 or all bfloat16, got %s, %s, %s" % (
            q.dtype, k.dtype, v.dtype))
    if not (q.is_contiguous() and k.is_contiguous() and v.is_contiguous()):
        raise ValueError("q, k and v must be contiguous")
    return b, h, kv, s, d


def _problem(q, k, v, causal):
    """(b, h, kv, s, d, causal, bf16) of these tensors (check_inputs refuses what the kernel
    would, ValueError)."""
    b, h, kv, s, d = check_inputs(q, k, v)
    return b, h, kv, s, d, bool(causal), str(q.dtype) == "torch.bfloat16"


def shape_of(p):
    """(b, h, kv, s, d, causal, bf16) of a problem as fasweep describes it (`fasweep plan
    --json`'s "problems", `fasweep problem --json`: batch, heads, kv_heads, seq_len,
    head_dim, causal, dtype): what precompile_shapes takes. KeyError or TypeError when p
    is no such description."""
    return (int(p["batch"]), int(p["heads"]), int(p.get("kv_heads", p["heads"])),
            int(p["seq_len"]), int(p["head_dim"]), bool(p["causal"]),
            p.get("dtype", "fp16") == "bf16")


def _kernel_args(ptrs, problem, scale=None):
    """_attn_fwd's arguments: the four pointers (Q, K, V, O), then the problem's scalars. The
    launch and the precompile's warm-up both take them from here: Triton's cache key holds
    the integers' values, so the warm-up compiles what the launch will look up."""
    b, h, kv, s, d, causal, bf16 = problem
    if scale is None:
        scale = 1.0 / math.sqrt(d)
    return tuple(ptrs) + (float(scale) * 1.4426950408889634, h, h // kv, b * h, s, d,
                          bool(causal), bool(bf16))


class _CompileOnly:
    """A Triton driver that only names the target: what a warm-up (compile, no launch) asks
    of one. A precompile worker compiles through it for the target its caller's driver
    named, so it starts no CUDA of its own: with CUDA, each of 16 workers' first config
    took 3.3-3.6 s on an H200 against 0.6-0.7 s for the others (sweep/NOTES-engine.md,
    thirteenth session). Triton's file cache keys a kernel by its target, not by the
    driver, so the autotuning later finds what these compiled (tests/triton checks it)."""

    def __init__(self, target):
        self._target = target

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0

    def get_current_target(self):
        return self._target


def _compile_target():
    """(backend, arch, warp size) of the GPU Triton's driver compiles for here, or None."""
    try:
        t = triton.runtime.driver.active.get_current_target()
        return (t.backend, t.arch, t.warp_size)
    except Exception:  # the workers then ask their own driver
        return None


def _warmup(problem, config):
    """Compiles one config of one problem without launching it. The pointer arguments are
    dtypes (Triton's MockTensor): Triton specializes on their dtype and alignment only."""
    import torch
    bm, bn, w, st = config
    dt = torch.bfloat16 if problem[6] else torch.float16
    _attn_fwd.warmup(*_kernel_args((dt,) * 4, problem), grid=(1,), BLOCK_M=bm, BLOCK_N=bn,
                     num_warps=w, num_stages=st)


def _compile_one(job):
    """A worker of precompile_shapes: compiles one config of one problem, for the target
    the job names through _CompileOnly (its own CUDA device where that cannot be used).
    Returns ("" or why not, seconds it took)."""
    import time
    t0 = time.monotonic()
    dev, problem, config, target = job
    err = ""
    try:
        from triton.backends.compiler import GPUTarget
        triton.runtime.driver.set_active(_CompileOnly(GPUTarget(*target)))
        _warmup(problem, config)
    except Exception:  # no target, an older Triton, or a failed compile: the plain way
        try:
            triton.runtime.driver.reset_active()
            import torch
            torch.cuda.set_device(dev)
            _warmup(problem, config)
        except Exception as e:  # the autotuning compiles (and reports) it again
            err = "config %r: %s" % (tuple(config), _one_line(e))
    return err, time.monotonic() - t0


def _pool_context():
    """The precompile's worker processes: forked from one server process that imported
    PyTorch and this module once (multiprocessing's forkserver, preloaded), not each worker
    importing both again (spawned: 16 imports of PyTorch, each seconds of CPU, beside the
    main job's build: sweep/NOTES-engine.md, thirteenth session). The server starts as a
    fresh interpreter, so no CUDA state of this process reaches a worker."""
    import multiprocessing as mp
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["torch", __name__])
    return ctx


def start_pool_server():
    """Starts the precompile's server process now (it imports PyTorch and this module),
    so that its imports overlap the caller's own; precompile_shapes then finds it up."""
    _pool_context()
    from multiprocessing import forkserver
    forkserver.ensure_running()


def precompile_shapes(shapes, device=0, workers=None, timeout_s=600.0, stats=None):
    """Compiles every config autotuning will try for each problem (b, h, kv, s, d, causal,
    bf16) of `shapes`, spread over worker processes (at most 16, _pool_context), into
    Triton's on-disk cache: each problem's autotuning then loads its configs instead of
    compiling them one after another (H100, Triton 3.6, spaces/h100.json: a problem's
    first call 33-38 s with an empty cache, 11-13 s with a full one). Returns (configs
    compiled, notes: one line per config that failed, or for the pool); never raises, and
    leaves no worker behind (one still compiling after timeout_s is terminated). stats, a
    dict, gets "workers" and "longest" (the slowest config's seconds and the config)."""
    ok, why = available()
    if not ok:
        return 0, ["not available: " + why]
    import concurrent.futures as cf
    import os
    try:
        smem, target = _smem_limit(), _compile_target()
        jobs = [(device, tuple(sh), c, target) for sh in dict.fromkeys(tuple(x) for x in shapes)
                for c in configs_for(sh[4], sh[3], 2, smem)]
        if not jobs:
            return 0, []
        n = max(1, min(workers or os.cpu_count() or 1, len(jobs), 16))
        if stats is not None:
            stats.update(workers=n, longest=(0.0, None))
        pool = cf.ProcessPoolExecutor(max_workers=n, mp_context=_pool_context())
    except Exception as e:
        return 0, ["precompile: %s" % _one_line(e)]
    notes, done, late = [], 0, True
    try:
        futs = {pool.submit(_compile_one, j): j for j in jobs}
        finished, late = cf.wait(futs, timeout=timeout_s)
        for f in finished:
            if f.exception():
                err = "worker: %s" % _one_line(f.exception())
            else:
                err, secs = f.result()
                if stats is not None and secs > stats["longest"][0]:
                    stats["longest"] = (secs, futs[f][2])
            if err:
                notes.append(err)
            else:
                done += 1
        if late:
            notes.append("precompile: %d configs still compiling after %.0f s: left to the "
                         "autotuning" % (len(late), timeout_s))
    except Exception as e:
        notes.append("precompile: %s" % _one_line(e))
    finally:
        if not late:  # every worker is idle: they exit and are joined
            pool.shutdown(wait=True)
        else:  # a worker stuck in a compile (or an error here) must not outlive us
            procs = list((getattr(pool, "_processes", None) or {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for pr in procs:
                if pr.is_alive():
                    pr.terminate()
            for pr in procs:
                pr.join(5)
    return done, notes


def attention(q, k, v, causal=False, scale=None, config=None):
    """softmax(q k^T * scale) v (causal: query row m sees keys n <= m) as a
    new tensor of q's shape and dtype; scale defaults to 1/sqrt(D). config
    (BLOCK_M, BLOCK_N, num_warps, num_stages) runs that one config, else
    the autotuned kernel (tuning on a problem's first call)."""
    ok, why = available()
    if not ok:
        raise RuntimeError("triton attention not available: " + why)
    problem = _problem(q, k, v, causal)
    b, h, _, s = problem[:4]
    o = q.new_empty(q.shape)
    args = _kernel_args((q, k, v, o), problem, scale)
    if config is None:
        grid = lambda meta: (triton.cdiv(s, meta["BLOCK_M"]), b * h)  # noqa: E731
        _attn_tuned[grid](*args)
    else:
        bm, bn, w, st = config
        if bm % bn:
            raise ValueError("config %r: BLOCK_N must divide BLOCK_M" % (config,))
        _attn_fwd[(triton.cdiv(s, bm), b * h)](*args, BLOCK_M=bm, BLOCK_N=bn, num_warps=w,
                                               num_stages=st)
    return o


def best_config(q, k, v, causal=False):
    """The config autotuning chose for this problem (after its first call), or None."""
    if _WHY:
        return None
    key_args = {"BH": q.shape[0] * q.shape[1], "S": q.shape[2], "HEAD_DIM": q.shape[3],
                "CAUSAL": bool(causal), "IS_BF16": str(q.dtype) == "torch.bfloat16"}
    for key, cfg in getattr(_attn_tuned, "cache", {}).items():
        if tuple(key[:5]) == tuple(key_args.values()):
            return (cfg.kwargs["BLOCK_M"], cfg.kwargs["BLOCK_N"], cfg.num_warps, cfg.num_stages)
    return None


def main(argv):
    """--precompile: fasweep's plan (`fasweep plan --json`) on stdin; every problem of it
    precompiled (precompile_shapes), one line on stderr saying how many configs in how
    long. Exit 0 (what failed is left to the autotuning, which reports it), 2 bad input,
    3 Triton or PyTorch does not import here (one line, before stdin is read;
    run_default_sweep.sh says nothing then: the baselines say why they skip). The main job
    asks no other process whether they import: a check of its own imported both once more
    (sweep/NOTES-engine.md, twelfth session)."""
    import json
    import time
    if argv != ["--precompile"]:
        print("triton_attention.py: usage: fasweep plan --json --space S | "
              "triton_attention.py --precompile", file=sys.stderr)
        return 2
    ok, why = available()
    if ok:
        try:  # the workers' server imports while this process does
            start_pool_server()
        except Exception:  # precompile_shapes says what fails, as a note
            pass
        try:
            import torch  # noqa: F401  (the workers pick their GPU and dtypes with it)
        except Exception as e:  # ImportError, or a torch that breaks on import
            ok, why = False, "import torch: %s" % _one_line(e)
    if not ok:
        print("triton_attention.py: --precompile: not available (%s)" % why, file=sys.stderr)
        return 3
    try:
        probs = json.load(sys.stdin)["problems"]
        shapes = [shape_of(p) for p in probs if p["head_dim"] in HEAD_DIMS]
    except (ValueError, KeyError, TypeError) as e:
        print("triton_attention.py: --precompile: stdin is no fasweep plan (%s)" % _one_line(e),
              file=sys.stderr)
        return 2
    t0 = time.monotonic()
    stats = {}
    done, notes = precompile_shapes(shapes, stats=stats)
    longest = stats.get("longest") or (0.0, None)
    print("fasweep: triton: %d configs of %d problems precompiled in %.1f s%s%s" % (
        done, len(shapes), time.monotonic() - t0,
        " (%d workers; the longest %.1f s, %r)" % ((stats["workers"],) + longest)
        if longest[1] else "", "; " + notes[0][:200] if notes else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
