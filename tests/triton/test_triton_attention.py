#!/usr/bin/env python3
"""test_triton_attention.py - scripts/triton_attention.py (the Triton column of
the benchmark) without a GPU: its kernel run by Triton's interpreter
(TRITON_INTERPRET=1, set here before Triton is imported) on CPU tensors, on
small shapes, each fixed config of several, against an fp32 PyTorch
reference within the engine's default tolerances (rel_l2 5e-3, max_abs 3e-2):
fp16 and bf16, causal and not, head dims 64, 128, 256, multi-head,
grouped-query and multi-query K/V, S = 1, S a multiple of the tiles, S with
tails, several query tiles (the causal diagonal stage after unmasked
tiles). Also the autotuning config space and its pruning, and the inputs it
refuses. The autotuned launch itself (Triton's benchmarking of configs)
needs a GPU and is not run here.

bf16 is checked only where the interpreter computes a bf16 tl.dot right
(Triton 3.9's does not: a canary kernel decides, and the bf16 cases skip
with that reason). Without triton or torch every test skips (run.sh exits 77
before, where neither imports)."""

import math
import os
import sys
import unittest

# FASWEEP_TRITON_GPU=1 (run.sh, where a GPU is visible): the same checks on the GPU, the
# kernel compiled, no interpreter. Otherwise the interpreter, set before triton is imported.
ON_GPU = os.environ.get("FASWEEP_TRITON_GPU") == "1"
if not ON_GPU:
    os.environ["TRITON_INTERPRET"] = "1"
DEV = "cuda" if ON_GPU else "cpu"
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

try:
    import torch
    import triton_attention as ta
    WHY = "" if ta.available()[0] else ta.available()[1]
except ImportError as e:
    torch = ta = None
    WHY = str(e)

RTOL, ATOL = 5e-3, 3e-2  # the engine's default tolerance (rel_l2, max_abs)


def reference(q, k, v, causal, scale):
    """fp32 attention; K/V head h // (H // KV) for query head h."""
    g = q.shape[1] // k.shape[1]
    kf = k.float().repeat_interleave(g, dim=1)
    vf = v.float().repeat_interleave(g, dim=1)
    s = torch.matmul(q.float(), kf.transpose(-1, -2)) * scale
    if causal:
        n = q.shape[2]
        s.masked_fill_(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    return torch.matmul(torch.softmax(s, dim=-1), vf)


def uniform(shape, dtype, gen):
    return (torch.rand(shape, generator=gen) * 2 - 1).to(dtype)


def run(q, k, v, *args, **kw):
    """ta.attention on DEV's copies of q, k, v; the output back on the CPU."""
    return ta.attention(q.to(DEV), k.to(DEV), v.to(DEV), *args, **kw).cpu()


def bf16_dot_ok():
    """Whether the interpreter's tl.dot of bf16 tiles is right (a canary kernel)."""
    tl, triton = ta.tl, ta.triton

    @triton.jit
    def canary(X, Y, Z, N: tl.constexpr):
        r = tl.arange(0, N)
        x = tl.load(X + r[:, None] * N + r[None, :])
        y = tl.load(Y + r[:, None] * N + r[None, :])
        tl.store(Z + r[:, None] * N + r[None, :], tl.dot(x, y))

    a = torch.rand(16, 16).to(torch.bfloat16)
    b = torch.rand(16, 16).to(torch.bfloat16)
    z = torch.empty(16, 16, device=DEV)
    canary[(1,)](a.to(DEV), b.to(DEV), z, 16)
    return bool((z.cpu() - a.float() @ b.float()).abs().max() < 1e-2)


def loop_bound_ok():
    """"" when the interpreter runs a loop whose bound is a tensor (the kernel's key loop),
    else why not: Triton's interpreter converts the bound with int() of a one-element array,
    which numpy 2.4 refuses (reported upstream to Triton; seen with Triton 3.6)."""
    if ON_GPU:
        return ""
    tl, triton = ta.tl, ta.triton

    @triton.jit
    def canary(Z, N):
        acc = 0
        for i in range(0, N * (tl.program_id(0) + 1)):
            acc += 1
        tl.store(Z, acc)

    z = torch.zeros(1, dtype=torch.int32)
    try:
        canary[(1,)](z, 3)
    except Exception as e:  # the interpreter's own error, one line
        return "%s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0])
    return "" if int(z[0]) == 3 else "the loop ran %d times, not 3" % int(z[0])


@unittest.skipIf(WHY, "triton or torch not available: %s" % WHY)
class Kernel(unittest.TestCase):
    # (B, H, KV, S, D, configs (BLOCK_M, BLOCK_N, num_warps, num_stages))
    SHAPES = [
        (1, 2, 1, 37, 64, [(64, 32, 4, 2), (64, 64, 4, 3)]),         # multi-query, a tail
        (2, 4, 2, 100, 64, [(64, 32, 4, 2), (128, 64, 8, 2)]),       # grouped-query, 2 q tiles
        (1, 2, 2, 1, 64, [(64, 32, 4, 2)]),                           # S = 1
        (1, 1, 1, 128, 128, [(64, 64, 4, 2), (128, 32, 8, 3)]),      # S a multiple of the tiles
        (1, 4, 1, 130, 128, [(64, 32, 4, 2), (128, 128, 8, 2)]),     # 3 query tiles, tails
        (1, 2, 1, 75, 256, [(64, 32, 4, 2), (64, 64, 4, 2)]),        # D = 256
    ]

    @classmethod
    def setUpClass(cls):
        why = loop_bound_ok()
        if why:
            raise unittest.SkipTest(
                "this Triton's interpreter cannot run the kernel's key loop here (%s, numpy %s); "
                "tests/triton/run.sh runs these on a GPU where one is visible" % (
                    why, __import__("numpy").__version__))
        cls.bf16 = bf16_dot_ok()

    def check(self, dtype):
        gen = torch.Generator().manual_seed(1234)
        for b, h, kv, s, d, cfgs in self.SHAPES:
            q = uniform((b, h, s, d), dtype, gen)
            k = uniform((b, kv, s, d), dtype, gen)
            v = uniform((b, kv, s, d), dtype, gen)
            scale = 1.0 / math.sqrt(d)
            for causal in (False, True):
                ref = reference(q, k, v, causal, scale)
                for cfg in cfgs:
                    with self.subTest(shape=(b, h, kv, s, d), causal=causal, cfg=cfg, dtype=dtype):
                        o = run(q, k, v, causal, scale, config=cfg)
                        self.assertEqual((o.shape, o.dtype), (q.shape, dtype))
                        self.assertTrue(bool(torch.isfinite(o).all()))
                        diff = o.double() - ref.double()
                        rel = float(diff.norm() / ref.double().norm())
                        mx = float(diff.abs().max())
                        self.assertLessEqual(rel, RTOL, "rel_l2 %g" % rel)
                        self.assertLessEqual(mx, ATOL, "max_abs %g" % mx)

    def test_fp16(self):
        self.check(torch.float16)

    def test_bf16(self):
        if not self.bf16:
            self.skipTest("this Triton's interpreter computes tl.dot of bf16 tiles wrongly "
                          "(canary kernel); bf16 needs a GPU")
        self.check(torch.bfloat16)

    def test_default_scale_and_tiny_s(self):
        gen = torch.Generator().manual_seed(7)
        q = uniform((1, 1, 3, 64), torch.float16, gen)
        k = uniform((1, 1, 3, 64), torch.float16, gen)
        v = uniform((1, 1, 3, 64), torch.float16, gen)
        o = run(q, k, v, True, config=(64, 32, 4, 2))
        ref = reference(q, k, v, True, 0.125)
        self.assertLess(float((o.float() - ref).abs().max()), ATOL)
        # causal row 0 sees key 0 only: v's row 0
        self.assertLess(float((o[0, 0, 0].float() - v[0, 0, 0].float()).abs().max()), 1e-3)

    def test_refused_inputs(self):
        f = torch.zeros
        good = f(1, 2, 8, 64, dtype=torch.float16)
        kv1 = f(1, 1, 8, 64, dtype=torch.float16)
        cases = [
            ((f(1, 2, 8, 96, dtype=torch.float16),) * 3, "head dim 96"),
            ((f(1, 2, 8, 64),) * 3, "float16 or all bfloat16"),
            ((good, kv1, kv1.to(torch.bfloat16)), "float16 or all bfloat16"),
            ((f(1, 3, 8, 64, dtype=torch.float16), f(1, 2, 8, 64, dtype=torch.float16),
              f(1, 2, 8, 64, dtype=torch.float16)), "multiple of the K/V heads"),
            ((good.transpose(1, 2).contiguous().transpose(1, 2), kv1, kv1), "contiguous"),
            ((good, f(1, 1, 9, 64, dtype=torch.float16), kv1), "[B, KV, S, D]"),
            ((good[0], kv1, kv1), "4-d"),
            ((f(1, 65536, 1, 64, dtype=torch.float16), f(1, 1, 1, 64, dtype=torch.float16),
              f(1, 1, 1, 64, dtype=torch.float16)), "at most 65535"),
        ]
        for args, want in cases:
            with self.subTest(want=want):
                with self.assertRaises(ValueError) as cm:
                    ta.attention(*args, config=(64, 32, 4, 2))
                self.assertIn(want, str(cm.exception))

    def test_autotuned_once_per_problem(self):
        """The autotuned launch with a stand-in benchmarker (Triton's needs a
        GPU): the pruned configs are each run once, the fastest is kept, the
        result is right, and the same problem does not tune again; another
        S, causality or dtype does."""
        timed = []

        def bench(kernel_call, quantiles):
            kernel_call()
            timed.append(1)
            return [100.0 - len(timed)] * len(quantiles)  # the last one run is the fastest

        tuner = ta._attn_tuned
        if not hasattr(tuner, "_do_bench"):
            self.skipTest("this Triton's Autotuner has no _do_bench to stand in for")
        old, tuner._do_bench = tuner._do_bench, bench
        try:
            gen = torch.Generator().manual_seed(3)
            for s, causal, dt in ((37, True, torch.float16), (37, True, torch.float16),
                                  (37, False, torch.float16), (70, True, torch.float16)):
                q = uniform((1, 2, s, 64), dt, gen)
                k = uniform((1, 1, s, 64), dt, gen)
                v = uniform((1, 1, s, 64), dt, gen)
                before = len(timed)
                o = run(q, k, v, causal, 0.125)
                ref = reference(q, k, v, causal, 0.125)
                self.assertLess(float((o.float() - ref).abs().max()), ATOL)
                kept = ta.configs_for(64, s, 2, ta._smem_limit())
                self.assertIn(len(timed) - before, (0, len(kept)))
                self.assertEqual(ta.best_config(q.to(DEV), k.to(DEV), v.to(DEV), causal), kept[-1])
            self.assertEqual(len(timed), 2 * len(ta.configs_for(64, 37)) +
                             len(ta.configs_for(64, 70)))
        finally:
            tuner._do_bench = old

    def test_probe(self):
        """sdpa_baseline.py's probe of this machine: on a machine without a GPU
        Triton's driver says so, and triton leaves the backends with one note
        line; with one the module comes back."""
        import sdpa_baseline as sb
        names, mod, notes = sb.drop_unavailable(["flash", "triton"], sb.triton_probe)
        if mod is None:
            self.assertEqual(names, ["flash"])
            self.assertEqual(len(notes), 1)
            self.assertTrue(notes[0].startswith("triton: not available ("), notes)
            self.assertNotIn("\n", notes[0])
        else:
            self.assertEqual((names, notes, mod), (["flash", "triton"], [], ta))

    def test_precompile_never_raises_nor_leaves_workers(self):
        """precompile_shapes spreads the configs over worker processes (forked from one
        preloaded server); here (no GPU: the caller's driver names no target, and a worker
        cannot select a CUDA device) every config fails in its worker, which comes back as
        one note line per config, nothing raised, no worker left alive."""
        import multiprocessing as mp
        shapes = [(1, 2, 1, 37, 64, False, False), (1, 2, 1, 37, 64, False, False)]
        done, notes = ta.precompile_shapes(shapes, workers=2, timeout_s=120)
        self.assertEqual(mp.active_children(), [])
        if torch.cuda.is_available():
            self.skipTest("a GPU is visible: the workers compile "
                          "(test_precompile_is_what_the_autotuning_loads covers it)")
        self.assertEqual(done, 0)
        # the duplicate shape is compiled once: one note per config of one problem
        self.assertEqual(len(notes), len(ta.configs_for(64, 37)), notes)
        for n in notes:
            self.assertTrue(n.startswith("config ("), n)
            self.assertNotIn("\n", n)

    def test_precompile_is_what_the_autotuning_loads(self):
        """On a GPU: the precompile's workers compile through a driver that only names the
        target (no CUDA of theirs); the autotuning of the same problem, in another process
        with the same cache, then compiles no kernel of its own: every config it tries is
        in the cache under the key it looks up."""
        if not ON_GPU:
            self.skipTest("needs a GPU (FASWEEP_TRITON_GPU=1: run.sh where one is visible)")
        import json
        import subprocess
        import tempfile
        script = os.path.join(HERE, "..", "..", "scripts", "triton_attention.py")
        plan = json.dumps({"problems": [{"batch": 1, "heads": 3, "kv_heads": 1, "seq_len": 77,
                                         "head_dim": 64, "causal": True, "dtype": "fp16"}]})

        def kernels(d):  # the cache's compiled kernels (not its launcher and utilities)
            return {e for e in os.listdir(d)
                    if any(f.startswith("_attn_fwd") and f.endswith(".cubin")
                           for f in os.listdir(os.path.join(d, e)))}
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, TRITON_CACHE_DIR=d)
            env.pop("TRITON_INTERPRET", None)
            r = subprocess.run([sys.executable, script, "--precompile"], input=plan, env=env,
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            pre = kernels(d)
            want = len(ta.configs_for(64, 77, 2, ta._smem_limit()))
            self.assertEqual(len(pre), want, r.stderr)
            tune = ("import sys, torch; sys.path.insert(0, %r); import triton_attention as ta\n"
                    "q = torch.randn(1, 3, 77, 64, device='cuda', dtype=torch.float16)\n"
                    "k = torch.randn(1, 1, 77, 64, device='cuda', dtype=torch.float16)\n"
                    "ta.attention(q, k, k.clone(), True); torch.cuda.synchronize()\n"
                    % os.path.dirname(script))
            r = subprocess.run([sys.executable, "-c", tune], env=env, capture_output=True,
                               text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(kernels(d), pre, "the autotuning compiled kernels of its own")

    def test_precompile_command_line(self):
        """--precompile reads fasweep's plan on stdin: exit 2 with one line for what is
        no plan or a wrong invocation; exit 0 and one summary line for a plan (head dims
        the kernel lacks are left out)."""
        import subprocess
        script = os.path.join(HERE, "..", "..", "scripts", "triton_attention.py")

        def run(args, stdin):
            r = subprocess.run([sys.executable, script] + args, input=stdin,
                               capture_output=True, text=True, timeout=300)
            return r.returncode, r.stderr.strip().splitlines()
        rc, err = run([], "")
        self.assertEqual((rc, len(err)), (2, 1), err)
        self.assertIn("usage", err[0])
        for bad in ("", "{", '{"problems": [{"batch": 1}]}', "[]"):
            rc, err = run(["--precompile"], bad)
            self.assertEqual((rc, len(err)), (2, 1), (bad, err))
            self.assertIn("no fasweep plan", err[0])
        plan = ('{"problems": [{"batch": 1, "heads": 2, "kv_heads": 1, "seq_len": 37, '
                '"head_dim": 96, "causal": false, "dtype": "fp16"}]}')
        rc, err = run(["--precompile"], plan)
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(err), 1, err)
        self.assertIn("0 configs of 0 problems precompiled", err[0])

    def test_prune_hook_is_keep_config(self):
        configs = ta._attn_tuned.configs
        self.assertEqual(len(configs), 81)
        for d in ta.HEAD_DIMS:
            for s in (1, 37, 512, 4096):
                kept = ta._prune(configs, {"HEAD_DIM": d, "S": s})
                got = sorted((c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.num_warps,
                              c.num_stages) for c in kept)
                want = sorted(ta.configs_for(d, s, 2, ta._smem_limit()))
                self.assertEqual(got, want, (d, s))


@unittest.skipIf(ta is None, "scripts/triton_attention.py did not import: %s" % WHY)
class Configs(unittest.TestCase):
    """The config space and its pruning (pure Python: no Triton needed)."""

    def test_space(self):
        self.assertEqual(len(ta.CONFIG_SPACE), 81)
        self.assertEqual(len(set(ta.CONFIG_SPACE)), 81)

    def test_pruning(self):
        for d in ta.HEAD_DIMS:
            for s in (1, 37, 64, 100, 2048, 4096, 8192):
                kept = ta.configs_for(d, s)
                self.assertTrue(kept, (d, s))
                for bm, bn, w, st in kept:
                    self.assertEqual(bm % bn, 0)
                    self.assertGreaterEqual(bm, 16 * w)
                    self.assertLessEqual(ta.tile_floats(bm, bn, d, w),
                                         ta.REG_FRACTION * ta.regs_per_thread(w))
                    self.assertLessEqual(2 * (bm * d + st * 2 * bn * d), ta.SMEM_FALLBACK)
        big = {d: ta.configs_for(d, 4096) for d in ta.HEAD_DIMS}
        self.assertGreater(len(big[64]), len(big[128]))
        self.assertGreater(len(big[128]), len(big[256]))
        # D = 256: 16 rows a warp, never 16 warps (ptxas for sm_90a: "Insufficient
        # registers" at 128 a thread), 128-key tiles never (shared memory, registers)
        self.assertEqual(sorted({c[:3] for c in big[256]}),
                         [(64, 32, 4), (64, 64, 4), (128, 32, 8), (128, 64, 8)])
        self.assertIn((256, 64, 16), {c[:3] for c in big[64]})
        self.assertIn((256, 32, 16), {c[:3] for c in big[128]})
        self.assertNotIn((256, 64, 16), {c[:3] for c in big[128]})  # 96 values: spills
        # small S: no tile much larger than S
        self.assertTrue(all(c[0] == 64 and c[1] <= 64 for c in ta.configs_for(64, 37)))
        # a GPU with little shared memory keeps at least the smallest config
        self.assertEqual(ta.configs_for(256, 4096, smem=1024), [ta.CONFIG_SPACE[0]])

    def test_version(self):
        self.assertEqual(ta.version_tuple("3.1.0"), (3, 1))
        self.assertEqual(ta.version_tuple("3.2.0+git1234abc"), (3, 2))
        self.assertEqual(ta.version_tuple("nightly"), (0, 0))


if __name__ == "__main__":
    unittest.main(verbosity=2)
