#!/usr/bin/env bash
# bench_devices.sh [SPACE] - one GPU against every GPU of this host, side by
# side in one run: sweeps SPACE (default spaces/h100.json, every mode it
# names) into two fresh stores, first with --devices 0, then with --devices
# all, and prints (stdout):
#   - each sweep's own summary lines (sweep:, time: wall X s, timed Y s,
#     overhead Zx: the timed work against the wall);
#   - both wall times (as this script timed them) and their ratio;
#   - the two stores compared (scripts/compare_sweeps.py --mode all
#     --agreement 4 --gpus N on their exports): per (GPU, problem, mode)
#     group whether the top-1 config agrees or else ties by the 95 %
#     intervals (record_tie), and the overlap of the two top-4 sets; the
#     records' checks (the same number in both stores, no point stored twice,
#     N distinct env.gpu_uuid in the all-GPU store); the share of the records
#     both stores hold whose medians tie by their intervals (at least 90 %, as
#     bench_fidelity.sh asks of two runs on one GPU) and each store's median
#     half-width; a summary line;
#   - the fixed cost: with N GPUs wall_1 = F + W and wall_N = F + W/N, so
#     F = (N*wall_N - wall_1)/(N-1) and W = wall_1 - F (N: the GPUs
#     nvidia-smi -L lists, at most 16, what --devices all takes);
#   - the ratio against the scale-out target as a PASS/FAIL line (<= 0.55 on
#     2 GPUs, <= 0.30 on 4; other counts have none).
# A missed target or a disagreement is said (FAIL), not an error.
# Exit status: 0 both sweeps ran; 1 no GPU (nvidia-smi missing or seeing
# none), a sweep that failed (its last lines shown, no wall time, no
# ratio) or a store that could not be exported or read (after the wall
# times); 2 bad arguments (one line naming the file).
set -euo pipefail
me=bench_devices.sh
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/cuda_visible.sh" # cuda_visible
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
# CUDA_VISIBLE_DEVICES as CUDA reads it (scripts/cuda_visible.sh): --devices all takes the
# GPUs it leaves.
if [ -n "${CUDA_VISIBLE_DEVICES+set}" ]; then
    vis=$(cuda_visible "$gpus" | grep -c . || true)
    [ "$vis" -le "$ngpu" ] || vis=$ngpu
    [ "$vis" -ge 1 ] || {
        printf '%s: CUDA_VISIBLE_DEVICES=%q leaves none of the %s GPUs visible: nothing measured\n' \
            "$me" "$CUDA_VISIBLE_DEVICES" "$ngpu" >&2
        exit 1
    }
    ngpu=$vis
fi
[ "$ngpu" -le 16 ] || ngpu=16 # ENGINE_MAX_DEVICES: what --devices all takes
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# text from a file or a program, without control characters (a GPU's name
# is the driver's)
clean() { LC_ALL=C tr -d '\000-\010\013-\037\177'; }
t() { # label devices: prints the sweep's wall time in seconds
    local t0 t1 st=0
    t0=$(date +%s.%N)
    "$F" grid --space "$space" --store "$tmp/$1.lmdb" --devices "$2" >"$tmp/$1.out" 2>"$tmp/$1.err" || st=$?
    t1=$(date +%s.%N)
    if [ $st -ne 0 ]; then
        # on stderr: stdout is the wall time the caller reads
        { tail -5 "$tmp/$1.err" | clean; echo "$me: the sweep on --devices $2 failed (exit $st): no wall time"; } >&2
        [ $st -eq 2 ] && exit 2 # the space or an option: bad input
        exit 1
    fi
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }'
}
one=$(t one 0)
all=$(t all all)
for s in one all; do # each sweep's own summary: the timed work beside the wall
    { grep -E "^(sweep|time):" "$tmp/$s.out" || true; } | clean | sed "s/^/  $s: /"
done
# the file's name without control characters, through the environment
# (awk -v would read backslash escapes in it)
name=$(basename -- "$space" | clean) one=$one all=$all g=$ngpu awk 'BEGIN {
    n = ENVIRON["name"]; one = ENVIRON["one"] + 0; all = ENVIRON["all"] + 0; g = ENVIRON["g"] + 0
    printf "bench_devices: %s on 1 GPU %.1f s, on %d GPU%s %.1f s, ratio %s\n", n, one, g,
        (g == 1 ? "" : "s"), all, (one > 0 ? sprintf("%.2f", all / one) : "-") }'
# the two stores: the same answer? (A: the one-GPU store, B: the all-GPU one)
bad=0
for s in one all; do
    "$F" export --store "$tmp/$s.lmdb" -o "$tmp/$s.jsonl" 2>"$tmp/$s.xerr" ||
        { tail -3 "$tmp/$s.xerr" | clean >&2; echo "$me: the $s-GPU store could not be exported" >&2; bad=1; }
done
if [ $bad -eq 0 ]; then
    cmp=0
    python3 "$here/scripts/compare_sweeps.py" "$tmp/one.jsonl" "$tmp/all.jsonl" --mode all \
        --agreement 4 --gpus "$ngpu" >"$tmp/cmp.out" 2>"$tmp/cmp.err" || cmp=$?
    echo "stores compared (A: --devices 0, B: --devices all; per GPU, problem, mode):"
    sed 's/^/  /' "$tmp/cmp.out"
    # its exit 1 is a disagreement, said in its lines: not a failure here
    if [ $cmp -ge 2 ]; then
        clean <"$tmp/cmp.err" >&2
        echo "$me: the stores could not be compared (compare_sweeps.py exit $cmp)" >&2
        bad=1
    fi
fi
one=$one all=$all g=$ngpu awk 'BEGIN {
    one = ENVIRON["one"] + 0; all = ENVIRON["all"] + 0; g = ENVIRON["g"] + 0
    if (g >= 2) {
        f = (g * all - one) / (g - 1)
        printf "fixed cost: F = %.1f s (%s of wall_1), work W = %.1f s (wall_1 = F + W, wall_%d = F + W/%d)\n",
            f, (one > 0 ? sprintf("%.0f %%", 100 * f / one) : "-"), one - f, g, g
    } else
        print "fixed cost: not estimated (one GPU: wall_1 and wall_N are the same sweep)"
    r = one > 0 ? all / one : -1
    target = g == 2 ? 0.55 : g == 4 ? 0.30 : 0
    if (target == 0)
        printf "target: none for %d GPU%s (<= 0.55 on 2 GPUs, <= 0.30 on 4)\n", g, g == 1 ? "" : "s"
    else if (r < 0)
        printf "target: ratio at most %.2f on %d GPUs: FAIL (no one-GPU wall time)\n", target, g
    else
        printf "target: ratio %.2f, at most %.2f on %d GPUs: %s\n", r, target, g,
            (r <= target ? "PASS" : "FAIL (missed)")
}'
exit $bad
