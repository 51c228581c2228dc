#!/usr/bin/env bash
# bench_devices.sh [SPACE] - one GPU against every GPU of this host, side by
# side in one run: sweeps SPACE (default spaces/h100.json) into two fresh
# stores, first with --devices 0, then with --devices all, and prints both
# wall times and their ratio (the scale-out target: <= 0.6 on 2 GPUs).
# Exit status: 0 both sweeps ran; 1 no GPU (nvidia-smi missing or seeing
# none) or a sweep that failed (its last lines shown, no wall time, no
# ratio); 2 bad arguments (one line naming the file).
set -euo pipefail
me=bench_devices.sh
here=$(cd "$(dirname "$0")/.." && pwd)
[ $# -le 1 ] || { echo "$me: usage: $me [SPACE]" >&2; exit 2; }
space=${1:-$here/spaces/h100.json}
[ -f "$space" ] && [ -r "$space" ] ||
    { printf '%s: %q: no such readable space file\n' "$me" "$space" >&2; exit 2; }
F=${FASWEEP:-$here/build/fasweep}
command -v -- "$F" >/dev/null ||
    { printf '%s: FASWEEP: %q is not an executable file\n' "$me" "$F" >&2; exit 2; }
if ! command -v nvidia-smi >/dev/null || ! gpus=$(nvidia-smi -L 2>/dev/null); then
    echo "$me: no NVIDIA GPU found on this machine (nvidia-smi is missing or sees none): nothing measured" >&2
    exit 1
fi
ngpu=$(grep -c '^GPU' <<<"$gpus" || true)
[ "$ngpu" -ge 1 ] || { echo "$me: nvidia-smi -L lists no GPU: nothing measured" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
t() { # label devices: prints the sweep's wall time in seconds
    local t0 t1 st=0
    t0=$(date +%s.%N)
    "$F" grid --space "$space" --store "$tmp/$1.lmdb" --devices "$2" >"$tmp/$1.out" 2>"$tmp/$1.err" || st=$?
    t1=$(date +%s.%N)
    if [ $st -ne 0 ]; then
        # on stderr: stdout is the wall time the caller reads
        { tail -5 "$tmp/$1.err"; echo "$me: the sweep on --devices $2 failed (exit $st): no wall time"; } >&2
        [ $st -eq 2 ] && exit 2 # the space or an option: bad input
        exit 1
    fi
    grep -E "^sweep|^time" "$tmp/$1.out" | sed "s/^/  $1: /" >&2 || true
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }'
}
one=$(t one 0)
all=$(t all all)
# the file's name without control characters, through the environment
# (awk -v would read backslash escapes in it)
name=$(basename -- "$space" | tr -d '\000-\037\177') one=$one all=$all g=$ngpu awk 'BEGIN {
    n = ENVIRON["name"]; one = ENVIRON["one"] + 0; all = ENVIRON["all"] + 0; g = ENVIRON["g"] + 0
    printf "bench_devices: %s on 1 GPU %.1f s, on %d GPUs %.1f s, ratio %s\n", n, one, g, all,
        (one > 0 ? sprintf("%.2f", all / one) : "-") }'
