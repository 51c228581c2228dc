#!/usr/bin/env bash
# baselines.sh SPACE STORE [FASWEEP] - times PyTorch's scaled_dot_product_attention
# (flash, efficient, cudnn backends) on every problem of SPACE in its modes,
# with the engine's method (scripts/sdpa_baseline.py), and imports the
# results into STORE as baseline records (they stay in STORE.baselines.jsonl).
# SPACE is passed on (--space): its measure settings, tolerances, and its
# measure.rounds and measure.ci_floor, so every baseline record is measured
# in the same number of rounds as the kernels and carries its 95 % interval
# (time.ci_lo_us, ci_hi_us, round_us), pooled over the problem's backends.
# When PyTorch cannot run here it says why in one line and exits 0: the
# sweep's results stand without a baseline.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
space=${1:?usage: baselines.sh SPACE STORE [FASWEEP]}
store=${2:?usage: baselines.sh SPACE STORE [FASWEEP]}
fasweep=${3:-${FASWEEP:-$here/../build/fasweep}}
why=$(python3 -c 'import torch
if not torch.cuda.is_available(): raise SystemExit("torch %s sees no CUDA GPU" % torch.__version__)' 2>&1)
if [ $? -ne 0 ]; then
    echo "fasweep: SDPA baselines skipped: PyTorch cannot run here ($(echo "$why" | tail -1))" >&2
    exit 0
fi
problems=$(python3 -c 'import json,sys
for p in json.load(open(sys.argv[1]))["problems"]:
    print("%d,%d,%d,%d%s" % (p["batch"], p["heads"], p["seq_len"], p["head_dim"], ",causal" if p.get("causal") else ""))' "$space") || exit 1
base=$store.baselines.jsonl
: >"$base"
for p in $problems; do
    args=(--problem "${p%,causal}")
    [[ $p == *,causal ]] && args+=(--causal)
    echo "fasweep: timing PyTorch SDPA at $p" >&2
    python3 "$here/sdpa_baseline.py" "${args[@]}" --space "$space" >>"$base" || exit 1
done
"$fasweep" import "$base" --store "$store"
