#!/usr/bin/env bash
# bench_devices.sh [SPACE] - one GPU against every GPU of this host, side by
# side in one run: sweeps SPACE (default spaces/h100.json) into two fresh
# stores, first with --devices 0, then with --devices all, and prints both
# wall times and their ratio (issue 5's target: <= 0.6 on 2 GPUs).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
space=${1:-$here/spaces/h100.json}
F=${FASWEEP:-$here/build/fasweep}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ngpu=$(nvidia-smi -L | grep -c '^GPU')
t() { # label devices
    local t0 t1
    t0=$(date +%s.%N)
    "$F" grid --space "$space" --store "$tmp/$1.lmdb" --devices "$2" >"$tmp/$1.out" 2>"$tmp/$1.err" ||
        { tail -5 "$tmp/$1.err"; exit 1; }
    t1=$(date +%s.%N)
    grep -E "^sweep|^time" "$tmp/$1.out" | sed "s/^/  $1: /" >&2
    python3 -c "print($t1 - $t0)"
}
one=$(t one 0)
all=$(t all all)
printf 'bench_devices: %s on 1 GPU %.1f s, on %d GPUs %.1f s, ratio %.2f\n' \
    "$(basename "$space")" "$one" "$ngpu" "$all" "$(python3 -c "print($all / $one)")"
