#!/usr/bin/env bash
# bench_vs_sdpa.sh - issues 3 and 27: the best fasweep instances against
# PyTorch scaled_dot_product_attention with each backend (flash, efficient,
# cudnn), measured side by side in one run on one GPU with the same method
# (CUDA events, warm-up, median, hot and cold L2: see docs/measurement.md "How a point is
# measured"). Needs a GPU and PyTorch.
#
#   scripts/bench_vs_sdpa.sh [SPACE] [STORE]   (default spaces/h100.json, a temp store)
#
# Sweeps SPACE, times the SDPA backends on each of its problems, imports them
# as baseline records and prints the Top-3 per problem and mode with the
# speedup over the fastest baseline. The baseline records stay in
# STORE.baselines.jsonl.
#
# Without SPACE it benchmarks issue 27's table: the axes of spaces/h100.json
# (every kernel family in it) at 16,16,2048,64; 4,16,2048,128; 4,8,512,64;
# 4,8,512,128 and 4,8,512,64 causal, and prints scripts/bench_table.py's
# side-by-side table (the best of each family, cuDNN, FA2, efficient; hot,
# cold, batch; TF/s) last.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
store=${2:-$(mktemp -d)/bench.lmdb}
mkdir -p "$(dirname "$store")"
if [ -n "${1:-}" ]; then
    space=$1
else
    space=$(dirname "$store")/bench_space.json
    python3 - "$here/../spaces/h100.json" "$space" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["name"] = "h100-bench"
shape = lambda b, h, s, dd, c=False: {"batch": b, "heads": h, "seq_len": s, "head_dim": dd,
                                      "causal": c, "dtype": "fp16"}
d["problems"] = [shape(16, 16, 2048, 64), shape(4, 16, 2048, 128), shape(4, 8, 512, 64),
                 shape(4, 8, 512, 128), shape(4, 8, 512, 64, True)]
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
fi
fasweep=${FASWEEP:-$here/../build/fasweep}
"$fasweep" grid --space "$space" --store "$store" --refine 4
bash "$here/baselines.sh" "$space" "$store" "$fasweep"
base=$store.baselines.jsonl
echo "SDPA baselines (median us and its 95 % half-width; same method as the sweep):"
python3 - "$base" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    k, t = r["key"], r["time"]
    ci = "none"  # one round, or a failed record: no interval
    if t.get("ci_lo_us") is not None and t["median_us"] > 0:
        ci = "+-%.2f%%" % (100 * (t["ci_hi_us"] - t["ci_lo_us"]) / 2 / t["median_us"])
    print(f"  {k['problem']:22s} {k['config']:16s} {k['mode']:5s} {r['status']:7s} "
          f"{t['median_us']:10.2f} us {ci:8s} {r['tflops']:7.1f} TFLOPS")
PY
for mode in hot cold batch; do
    "$fasweep" topk -k 3 --mode "$mode" --store "$store" --no-seeds
done
"$fasweep" export --store "$store" -o "$store.export.jsonl"
python3 "$here/bench_table.py" "$store.export.jsonl" --json "$store.table.json"
