#!/usr/bin/env bash
# run.sh - scripts/triton_attention.py (the benchmark's Triton column) under
# Triton's interpreter on the CPU (test_triton_attention.py): the kernel
# against an fp32 reference on small shapes, its config space and pruning.
# No GPU. Needs Python with triton and torch (PYTHON=... to pick one, e.g. a
# venv); where they do not import it says SKIP with the reason and exits 77:
# a test that could not run never passes.
set -uo pipefail
cd "$(dirname "$0")/../.."
py=${PYTHON:-python3}
if ! why=$("$py" -c 'import torch, triton' 2>&1); then
    echo "triton: SKIP: $py cannot import torch and triton ($(printf '%s\n' "$why" | tail -1 | cut -c1-160))"
    exit 77
fi
exec "$py" tests/triton/test_triton_attention.py
