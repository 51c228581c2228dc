#!/usr/bin/env bash
# bench_fidelity.sh [OUT] - do the intervals hold? (the benchmark of the 95 % intervals), on a GPU.
#   For each space below, two independent runs (separate processes, fresh
#   stores): `fasweep grid` (timed), exported, then `grid --refine 4` on the
#   same store, exported again. scripts/fidelity_report.py prints per
#   (problem, mode): (a) the share of configs whose A-B difference lies within
#   the combined half-widths sqrt(hA^2 + hB^2) (target >= 90 %); (b) the
#   median half-width as a percent of the median (<= 1.5 %); (c) the refined
#   top-4 between runs and refine vs sweep, max percent (<= 2 %); (d) the
#   sweep wall times (L4 space <= 3 s, h100 space <= 25 s on the lent GPU).
#   Spaces: 16,16,2048,64 alone (the h100 space's axes), spaces/l4.json, and
#   the whole spaces/h100.json (its wall time).
#   It also prints a what-if that never changes the verdict: the intervals
#   recomputed from the same stores' rounds by the engine's method and with a
#   per-round common mode removed (fidelity_report.py --what-if).
# Writes OUT/fidelity.json (every number) and logs. FASWEEP names the binary.
# Exit 0 when every group of every space passes, 1 otherwise, 2 on bad input
# (one line). What was not measured never passes: no GPU (nvidia-smi missing
# or seeing none) is exit 1 before anything runs; a fasweep step that fails
# or an export with no records is a failed step (named, and the verdict is
# FAIL); a group, problem or mode no run measured fails its space
# (fidelity_report.py --space); a failed sweep has no wall time, and no wall
# time meets its target.
set -uo pipefail
me=bench_fidelity.sh
[ $# -le 1 ] || { echo "$me: usage: $me [OUT]" >&2; exit 2; }
out=${1:-fidelity}
here=$(cd "$(dirname "$0")/.." && pwd)
F=${FASWEEP:-$here/build/fasweep}
command -v -- "$F" >/dev/null || { printf '%s: FASWEEP: %q is not an executable file\n' "$me" "$F" >&2; exit 2; }
mkdir -p -- "$out" 2>/dev/null && [ -w "$out" ] ||
    { printf '%s: %q: cannot make or write this folder\n' "$me" "$out" >&2; exit 2; }
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "$me: no NVIDIA GPU found on this machine (nvidia-smi is missing or sees none): nothing measured, FAIL" >&2
    exit 1
fi
# Results of an earlier run in OUT are never read as this run's.
rm -rf "$out"/*.lmdb "$out"/big.json "$out"/l4.json "$out"/fidelity.json "$out"/failed_steps.txt
python3 - "$here/spaces/h100.json" "$out/big-space.json" <<'PY' || exit 2
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    d["name"] = "h100-big"
    d["problems"] = [p for p in d["problems"] if p["seq_len"] == 2048 and p["head_dim"] == 64]
    json.dump(d, open(sys.argv[2], "w"), indent=1)
except (OSError, ValueError, KeyError, TypeError) as e:
    sys.exit("bench_fidelity.sh: %s: %s" % (sys.argv[1], e))
if not d["problems"]:
    sys.exit("bench_fidelity.sh: %s: no problem with seq_len 2048 and head_dim 64" % sys.argv[1])
PY
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,clocks_event_reasons.active \
    --format=csv 2>/dev/null | tee "$out/gpu.txt"
rc=0
# step LABEL LOG ERR CMD...: runs CMD (stdout to LOG, stderr to ERR); a
# nonzero exit is a failed step, named on stderr and in OUT/failed_steps.txt.
step() {
    local label=$1 log=$2 err=$3 st
    shift 3
    "$@" >"$log" 2>"$err"
    st=$?
    if [ $st -ne 0 ]; then
        echo "$me: $label: fasweep exited $st (see $err): FAIL" >&2
        echo "$label: exit $st" >>"$out/failed_steps.txt"
        rc=1
    fi
    return $st
}
# exported LABEL FILE: an export with no records is nothing measured.
exported() {
    grep -q '[^[:space:]]' "$2" 2>/dev/null && return 0
    echo "$me: $1: the export holds no records: nothing was measured, FAIL" >&2
    echo "$1: empty export" >>"$out/failed_steps.txt"
    rc=1
    return 1
}
# wall T0 T1: the seconds between, two decimals.
wall() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
runs() { # name space
    local walls=() r st t0 t1
    for r in a b; do
        st="$out/$1-$r.lmdb"
        t0=$(date +%s.%N)
        if step "$1 run $r: grid" "$out/$1-$r.sweep.out" "$out/$1-$r.sweep.err" \
            "$F" grid --space "$2" --store "$st"; then
            t1=$(date +%s.%N)
            walls+=(--wall-"$r" "$(wall "$t0" "$t1")") # a failed sweep has no wall time
        fi
        grep -E "^sweep|^clock|^time|^rounds" "$out/$1-$r.sweep.out" | sed "s/^/$1 $r: /"
        step "$1 run $r: export" "$out/$1-$r.sweep.jsonl" "$out/$1-$r.sweep.jsonl.err" \
            "$F" export --store "$st" && exported "$1 run $r: export" "$out/$1-$r.sweep.jsonl"
        step "$1 run $r: grid --refine 4" "$out/$1-$r.refine.out" "$out/$1-$r.refine.err" \
            "$F" grid --space "$2" --store "$st" --refine 4
        step "$1 run $r: export after the refine" "$out/$1-$r.refined.jsonl" \
            "$out/$1-$r.refined.jsonl.err" "$F" export --store "$st" &&
            exported "$1 run $r: export after the refine" "$out/$1-$r.refined.jsonl"
    done
    python3 "$here/scripts/fidelity_report.py" "$out/$1-a.sweep.jsonl" "$out/$1-a.refined.jsonl" \
        "$out/$1-b.sweep.jsonl" "$out/$1-b.refined.jsonl" -k 4 --tol 0.02 --name "$1" \
        --space "$2" --fasweep "$F" "${walls[@]}" --json "$out/$1.json" --what-if || rc=1
}
echo "== 16,16,2048,64 (the h100 space's axes), two runs, --refine 4"
runs big "$out/big-space.json"
echo "== spaces/l4.json, two runs, --refine 4"
runs l4 "$here/spaces/l4.json"
echo "== spaces/h100.json, one whole sweep into a fresh store (wall time)"
t0=$(date +%s.%N)
h100_wall=none
if step "h100 whole sweep: grid" "$out/whole-h100.out" "$out/whole-h100.err" \
    "$F" grid --space "$here/spaces/h100.json" --store "$out/whole-h100.lmdb"; then
    t1=$(date +%s.%N)
    h100_wall=$(wall "$t0" "$t1")
    echo "h100 whole sweep: wall $h100_wall s (target <= 25 s)"
else
    echo "h100 whole sweep: no wall time, the sweep failed (target <= 25 s)"
fi
grep -E "^sweep|^time" "$out/whole-h100.out"
python3 - "$out" "$h100_wall" <<'PY'
import json, os, sys
out, wall = sys.argv[1], sys.argv[2]
wall = None if wall == "none" else float(wall)  # none: the sweep failed, nothing measured
spaces = []
for n in ("big", "l4"):
    try:
        spaces.append(json.load(open("%s/%s.json" % (out, n))))
    except (OSError, ValueError) as e:  # the report did not run to its verdict
        print("bench_fidelity.sh: %s: no report (%s): FAIL" % (n, e), file=sys.stderr)
        spaces.append({"space": n, "pass": False, "wall_s": [None, None]})
try:
    failed = [l.rstrip("\n") for l in open(out + "/failed_steps.txt")]
except FileNotFoundError:
    failed = []
doc = {"spaces": spaces, "h100_whole_wall_s": wall, "failed_steps": failed}
doc["pass"] = not failed and all(s.get("pass") is True for s in spaces) and \
    wall is not None and wall <= 25 and \
    all(w is not None and w <= 3 for w in spaces[1].get("wall_s") or [None])
json.dump(doc, open(out + "/fidelity.json", "w"), indent=1)
print("fidelity: %s (every number in %s/fidelity.json)%s" % (
    "PASS" if doc["pass"] else "FAIL", out,
    "; %d failed step%s, the first: %s (all in %s/failed_steps.txt)" % (
        len(failed), "s" if len(failed) > 1 else "", failed[0], out) if failed else ""))
sys.exit(0 if doc["pass"] else 1)
PY
[ $? -eq 0 ] || rc=1
exit $rc
