#!/usr/bin/env bash
# bench_kernel_ab.sh - kernel variants measured side by side: builds the
# kernel's benchmark (tests/gpu/fa_bench.c) once per set of extra nvcc flags
# (a -D switch an experiment puts into kernels/mma/flash_fwd.cuh, -maxrregcount,
# ...) from one tree, then runs every variant on each problem in turn, on one
# GPU in one go: the side-by-side numbers of kernels/NOTES-perf.md.
#
#   scripts/bench_kernel_ab.sh FLAGS_1 FLAGS_2 ... -- "B H S D [fa_bench args]" ...
#   e.g. scripts/bench_kernel_ab.sh "" "-maxrregcount=128" -- "4 8 512 64" "16 16 2048 64 --reps 10"
# Make variables (DEPS=..., ARCHS=..., SPACES=...) pass through MAKEFLAGS_EXTRA;
# TOP (default 6) rows per table.
set -euo pipefail
variants=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do variants+=("$1"); shift; done
if [ $# -lt 2 ] || [ ${#variants[@]} -lt 1 ]; then
    echo "usage: $0 FLAGS_1 [FLAGS_2...] -- 'B H S D [args]'..." >&2
    exit 2
fi
shift
cd "$(dirname "$0")/.."
mkdir -p build
for i in "${!variants[@]}"; do
    # shellcheck disable=SC2086  # MAKEFLAGS_EXTRA is several make variables
    make -j"$(nproc)" ${MAKEFLAGS_EXTRA:-} BUILD="build/ab-$i" NVEXTRA="${variants[$i]}" \
        "build/ab-$i/fa_bench" >"build/ab-$i.log" 2>&1 || { tail -20 "build/ab-$i.log"; exit 1; }
done
for p in "$@"; do
    for i in "${!variants[@]}"; do
        echo "== variant $i [${variants[$i]}] $p"
        # shellcheck disable=SC2086  # the problem is several words on purpose
        "build/ab-$i/fa_bench" $p --top "${TOP:-6}"
    done
done
