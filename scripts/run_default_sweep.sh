#!/usr/bin/env bash
# run_default_sweep.sh BUILD - the main job: sweep the local GPU's default
# space into ./results.lmdb and print the Top-K. The space follows the GPU:
# spaces/h100.json on compute capability 9.x, spaces/l4.json otherwise
# (SPACE=... overrides).
set -euo pipefail
build=${1:-build}
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "fasweep: no NVIDIA GPU found on this machine (nvidia-smi is missing or sees no GPU)." >&2
    echo "fasweep: the sweep needs a CUDA GPU; 'make test' runs every CPU test without one." >&2
    exit 1
fi
if [ -z "${SPACE:-}" ]; then
    cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1)
    case "$cc" in 9.*) SPACE=spaces/h100.json ;; *) SPACE=spaces/l4.json ;; esac
fi
make -j"$(nproc)" BUILD="$build" "$build/fasweep"
echo "fasweep: sweeping $SPACE" >&2
"$build/fasweep" grid --space "$SPACE" --refine 4
"$build/fasweep" topk -k 8
