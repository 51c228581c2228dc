#!/usr/bin/env bash
# bench_vs_sdpa.sh - issue 3's benchmark: the best fasweep instance against
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
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
space=${1:-$here/../spaces/h100.json}
store=${2:-$(mktemp -d)/bench.lmdb}
fasweep=${FASWEEP:-$here/../build/fasweep}
"$fasweep" grid --space "$space" --store "$store" --refine 4
bash "$here/baselines.sh" "$space" "$store" "$fasweep"
base=$store.baselines.jsonl
echo "SDPA baselines (median us; same method as the sweep):"
python3 - "$base" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    k = r["key"]
    print(f"  {k['problem']:22s} {k['config']:16s} {k['mode']:4s} {r['status']:6s} "
          f"{r['time']['median_us']:10.2f} us {r['tflops']:7.1f} TFLOPS")
PY
for mode in hot cold batch; do
    "$fasweep" topk -k 3 --mode "$mode" --store "$store" --no-seeds
done
