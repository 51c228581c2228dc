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
# Exit status: 0 every variant built and ran on every problem; 1 a failed
# build or a run that failed (named: a failed measurement is never a
# result); 2 bad arguments (one line: a problem must start with four
# positive integers B H S D), before anything is built.
set -euo pipefail
me=bench_kernel_ab.sh
# clean TEXT: the caller's text without control characters, to print
clean() { printf '%s' "$1" | tr -d '\000-\037\177'; }
variants=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do variants+=("$1"); shift; done
if [ $# -lt 2 ] || [ ${#variants[@]} -lt 1 ]; then
    echo "$me: usage: $me FLAGS_1 [FLAGS_2...] -- 'B H S D [args]'..." >&2
    exit 2
fi
shift
# Each problem split into words without globbing, checked before the builds:
# B H S D, then what fa_bench reads (it ignores any other word, so a typo
# would silently measure something else).
for p in "$@"; do
    read -r -a w <<<"$p"
    ok=1
    [ ${#w[@]} -ge 4 ] && [[ $p != *$'\n'* ]] || ok=0
    for x in "${w[@]:0:4}"; do [[ $x =~ ^[1-9][0-9]{0,8}$ ]] || ok=0; done
    for ((j = 4; ok && j < ${#w[@]}; j++)); do
        case ${w[j]} in
        causal) ;;
        --reps | --top) [[ ${w[j + 1]:-} =~ ^[1-9][0-9]{0,5}$ ]] && j=$((j + 1)) || ok=0 ;;
        --only) [ -n "${w[j + 1]:-}" ] && j=$((j + 1)) || ok=0 ;;
        *) ok=0 ;;
        esac
    done
    if [ $ok -eq 0 ]; then
        printf '%s: problem '"'%s'"': not "B H S D [causal] [--reps N] [--top K] [--only CONFIG]" (B H S D positive integers)\n' "$me" "$(clean "$p")" >&2
        exit 2
    fi
done
[[ ${TOP:-6} =~ ^[1-9][0-9]{0,5}$ ]] || { printf '%s: TOP=%s: not a positive integer\n' "$me" "$(clean "$TOP")" >&2; exit 2; }
cd "$(dirname "$0")/.."
mkdir -p build
for i in "${!variants[@]}"; do
    # shellcheck disable=SC2086  # MAKEFLAGS_EXTRA is several make variables
    make -j"$(nproc)" ${MAKEFLAGS_EXTRA:-} BUILD="build/ab-$i" NVEXTRA="${variants[$i]}" \
        "build/ab-$i/fa_bench" >"build/ab-$i.log" 2>&1 ||
        { tail -20 "build/ab-$i.log"; printf '%s: building variant %d [%s] failed (see build/ab-%d.log)\n' "$me" "$i" "$(clean "${variants[$i]}")" "$i" >&2; exit 1; }
done
rc=0
for p in "$@"; do
    read -r -a w <<<"$p"
    for i in "${!variants[@]}"; do
        printf '== variant %d [%s] %s\n' "$i" "$(clean "${variants[$i]}")" "$(clean "$p")"
        st=0
        "build/ab-$i/fa_bench" "${w[@]}" --top "${TOP:-6}" || st=$?
        if [ $st -ne 0 ]; then
            printf '%s: variant %d on %s: fa_bench exited %d: FAIL\n' "$me" "$i" "$(clean "$p")" "$st" >&2
            rc=1
        fi
    done
done
exit $rc
