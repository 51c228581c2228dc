#!/usr/bin/env bash
# bench_vs_sdpa.sh - the best fasweep instances of every family against
# PyTorch scaled_dot_product_attention with each backend (flash, efficient,
# cudnn) and an autotuned Triton FlashAttention kernel (triton:
# scripts/triton_attention.py, autotuned on each problem before timing),
# measured side by side in one run on one GPU with the same method for all
# (CUDA events, warm-up, median, hot and cold L2, batch: see
# docs/measurement.md "How a point is measured"). Needs a GPU and PyTorch;
# Triton where it is installed (without it the Triton column says n/a, and
# sdpa_baseline.py says why in one line). BASELINE_BACKENDS=B,B,... picks
# the backends (scripts/baselines.sh).
#
#   scripts/bench_vs_sdpa.sh [SPACE] [STORE]   (default spaces/h100.json, a temp store)
#
# Sweeps SPACE, times the SDPA backends and Triton on each of its problems, imports them
# as baseline records and prints the Top-3 per problem and mode with the
# speedup over the fastest baseline. The baseline records stay in
# STORE.baselines.jsonl.
#
# Without SPACE it benchmarks the standing comparison table: the axes of spaces/h100.json
# (every kernel family in it) at 16,16,2048,64; 4,16,2048,128; 1,8,512,64; 4,8,512,64;
# 4,8,512,128 and 4,8,512,64 causal (fp16, multi-head; TABLE=fp16 these alone), and the
# real models' (TABLE=models these alone; TABLE=all, the default, both)
# model shapes, bf16 and grouped-query (H query heads / KV K/V heads):
# Llama-3-8B prefill (32/8, D=128, causal, S=4096, B=1 and B=4), a
# Llama-3-70B-like layer (64/8, D=128, causal, B=4, S=2048), a Gemma-2-like
# one (16/8, D=256, B=2, S=4096, causal and not) and multi-query attention
# (32/1, D=128, causal, B=4, S=2048); it prints scripts/bench_table.py's
# side-by-side table (the best of each family, cuDNN, FA2 = the flash
# backend, efficient where it has a kernel: not for grouped-query, Triton;
# hot, cold, batch; TF/s) last. A problem a family cannot run yet has no kernel
# points (the plan rejects them) and shows the SDPA backends alone.
#
# Exit status: 0 every step ran; 1 no GPU or no PyTorch that sees it (one
# line, before the sweep: without SDPA there is nothing to benchmark
# against), or a failed step; 2 bad arguments (one line naming the file).
set -euo pipefail
me=bench_vs_sdpa.sh
here=$(cd "$(dirname "$0")" && pwd)
[ $# -le 2 ] || { echo "$me: usage: $me [SPACE] [STORE]" >&2; exit 2; }
if [ -n "${1:-}" ] && ! { [ -f "$1" ] && [ -r "$1" ]; }; then
    printf '%s: %q: no such readable space file\n' "$me" "$1" >&2
    exit 2
fi
table=${TABLE:-all}
case $table in
fp16 | models | all) ;;
*) printf '%s: TABLE=%q: not fp16, models or all\n' "$me" "$table" >&2; exit 2 ;;
esac
fasweep=${FASWEEP:-$here/../build/fasweep}
command -v -- "$fasweep" >/dev/null ||
    { printf '%s: FASWEEP: %q is not an executable file\n' "$me" "$fasweep" >&2; exit 2; }
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "$me: no NVIDIA GPU found on this machine (nvidia-smi is missing or sees none): nothing measured" >&2
    exit 1
fi
# The baselines are the point: baselines.sh skips them (exit 0) where
# PyTorch cannot run, which here would be a benchmark against nothing.
if ! why=$(python3 -c 'import torch
if not torch.cuda.is_available(): raise SystemExit("torch %s sees no CUDA GPU" % torch.__version__)' 2>&1); then
    echo "$me: PyTorch cannot run here ($(printf '%s\n' "$why" | tail -1 | tr -d '\000-\037\177' | cut -c1-200)): no SDPA to benchmark against" >&2
    exit 1
fi
store=${2:-$(mktemp -d)/bench.lmdb}
mkdir -p "$(dirname "$store")" 2>/dev/null ||
    { printf '%s: %q: cannot make its folder\n' "$me" "$store" >&2; exit 2; }
if [ -n "${1:-}" ]; then
    space=$1
else
    space=$(dirname "$store")/bench_space.json
    python3 - "$here/../spaces/h100.json" "$space" "$table" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["name"] = "h100-bench"
def shape(b, h, s, dd, c=False, kv=None, dtype="fp16"):
    p = {"batch": b, "heads": h, "seq_len": s, "head_dim": dd, "causal": c, "dtype": dtype}
    if kv is not None:
        p["kv_heads"] = kv
    return p
fp16 = [shape(16, 16, 2048, 64), shape(4, 16, 2048, 128), shape(1, 8, 512, 64),
        shape(4, 8, 512, 64), shape(4, 8, 512, 128), shape(4, 8, 512, 64, True)]
# bf16 grouped-query shapes of current models
models = [shape(1, 32, 4096, 128, True, 8, "bf16"),   # Llama-3-8B prefill
          shape(4, 32, 4096, 128, True, 8, "bf16"),
          shape(4, 64, 2048, 128, True, 8, "bf16"),   # Llama-3-70B-like
          shape(2, 16, 4096, 256, True, 8, "bf16"),   # Gemma-2-like, D=256
          shape(2, 16, 4096, 256, False, 8, "bf16"),
          shape(4, 32, 2048, 128, True, 1, "bf16")]   # multi-query
d["problems"] = {"fp16": fp16, "models": models, "all": fp16 + models}[sys.argv[3]]
# head dim 256 fits the wgmma family only with BLOCK_N 64 (registers, shared memory): the
# wgmma axes are the union of h100.json's and gemma2-d256.json's, so D=256 has points
g = json.load(open(sys.argv[1].replace("h100.json", "gemma2-d256.json")))["axes"]
w = d["families"]["wgmma"]["axes"]
for k, vals in g.items():
    w[k] = sorted(set(w.get(k, [])) | set(vals))
# bf16 keeps 8 mantissa bits to fp16's 11: rel_l2 0.01 as the model spaces
# (spaces/llama3-8b.json), still far under a wrong kernel's (about 1)
d["tolerance"] = dict(d.get("tolerance", {}), rel_l2=0.01)
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
fi
"$fasweep" grid --space "$space" --store "$store" --refine 4
bash "$here/baselines.sh" "$space" "$store" "$fasweep"
base=$store.baselines.jsonl
[ -s "$base" ] || { echo "$me: no SDPA baseline was measured ($base is empty or missing)" >&2; exit 1; }
echo "Baselines, SDPA and Triton (median us and its 95 % half-width; same method as the sweep):"
python3 - "$base" <<'PY'
import json, sys
esc = lambda x: "".join(c if c.isprintable() else ("\\x%02x" if ord(c) < 256 else "\\u%04x") % ord(c) for c in str(x))[:40]
for no, l in enumerate(open(sys.argv[1]), 1):
    try:
        r = json.loads(l)
        k, t = r["key"], r["time"]
        ci = "none"  # one round, or a failed record: no interval
        if t.get("ci_lo_us") is not None and t["median_us"] > 0:
            ci = "+-%.2f%%" % (100 * (t["ci_hi_us"] - t["ci_lo_us"]) / 2 / t["median_us"])
        print(f"  {esc(k['problem']):22s} {esc(k['config']):16s} {esc(k['mode']):5s} "
              f"{esc(r['status']):7s} {t['median_us']:10.2f} us {ci:8s} {r['tflops']:7.1f} TFLOPS")
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        sys.exit("bench_vs_sdpa.sh: %s:%d: not a baseline record (%s)" % (sys.argv[1], no, esc(e)))
PY
for mode in hot cold batch; do
    "$fasweep" topk -k 3 --mode "$mode" --store "$store" --no-seeds
done
"$fasweep" export --store "$store" -o "$store.export.jsonl"
python3 "$here/bench_table.py" "$store.export.jsonl" --json "$store.table.json" --fasweep "$fasweep"
