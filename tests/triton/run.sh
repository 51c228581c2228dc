#!/usr/bin/env bash
# run.sh - scripts/triton_attention.py (the benchmark's Triton column) under
# Triton's interpreter on the CPU (test_triton_attention.py): the kernel
# against an fp32 reference on small shapes, its config space and pruning.
# No GPU needed; where one is visible the same checks run again on it,
# compiled. Needs Python with triton and torch (PYTHON=... to pick one, e.g. a
# venv); where they do not import it says SKIP with the reason and exits 77:
# a test that could not run never passes.
set -uo pipefail
cd "$(dirname "$0")/../.."
py=${PYTHON:-python3}
if ! why=$("$py" -c 'import torch, triton' 2>&1); then
    echo "triton: SKIP: $py cannot import torch and triton ($(printf '%s\n' "$why" | tail -1 | cut -c1-160))"
    exit 77
fi
"$py" tests/triton/test_triton_attention.py || exit 1
# Where a GPU is visible, the same checks again on it: the kernel compiled as the
# baselines run it (and where this Triton's interpreter cannot run it, the only run).
if "$py" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    echo "triton: again on the GPU (FASWEEP_TRITON_GPU=1: compiled, no interpreter)"
    FASWEEP_TRITON_GPU=1 exec "$py" tests/triton/test_triton_attention.py
fi
