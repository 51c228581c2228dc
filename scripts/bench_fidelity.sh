#!/usr/bin/env bash
# bench_fidelity.sh [OUT] - do the intervals hold? (issue 24's benchmark), on a GPU.
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
# Exit 0 when every group of every space passes, 1 otherwise.
set -uo pipefail
out=${1:-fidelity}
here=$(cd "$(dirname "$0")/.." && pwd)
F=${FASWEEP:-$here/build/fasweep}
mkdir -p "$out"
rm -rf "$out"/*.lmdb
python3 - "$here/spaces/h100.json" "$out/big.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["name"] = "h100-big"
d["problems"] = [p for p in d["problems"] if p["seq_len"] == 2048 and p["head_dim"] == 64]
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,clocks_event_reasons.active \
    --format=csv 2>/dev/null | tee "$out/gpu.txt"
rc=0
runs() { # name space
    local walls=()
    for r in a b; do
        local st="$out/$1-$r.lmdb" t0 t1
        t0=$(date +%s.%N)
        "$F" grid --space "$2" --store "$st" >"$out/$1-$r.sweep.out" 2>"$out/$1-$r.sweep.err"
        t1=$(date +%s.%N)
        walls+=("$(python3 -c "print(round($t1 - $t0, 2))")")
        grep -E "^sweep|^clock|^time|^rounds" "$out/$1-$r.sweep.out" | sed "s/^/$1 $r: /"
        "$F" export --store "$st" >"$out/$1-$r.sweep.jsonl"
        "$F" grid --space "$2" --store "$st" --refine 4 >"$out/$1-$r.refine.out" \
            2>"$out/$1-$r.refine.err"
        "$F" export --store "$st" >"$out/$1-$r.refined.jsonl"
    done
    python3 "$here/scripts/fidelity_report.py" "$out/$1-a.sweep.jsonl" "$out/$1-a.refined.jsonl" \
        "$out/$1-b.sweep.jsonl" "$out/$1-b.refined.jsonl" -k 4 --tol 0.02 --name "$1" \
        --wall-a "${walls[0]}" --wall-b "${walls[1]}" --json "$out/$1.json" --what-if || rc=1
}
echo "== 16,16,2048,64 (the h100 space's axes), two runs, --refine 4"
runs big "$out/big.json"
echo "== spaces/l4.json, two runs, --refine 4"
runs l4 "$here/spaces/l4.json"
echo "== spaces/h100.json, one whole sweep into a fresh store (wall time)"
t0=$(date +%s.%N)
"$F" grid --space "$here/spaces/h100.json" --store "$out/whole-h100.lmdb" >"$out/whole-h100.out" \
    2>"$out/whole-h100.err"
t1=$(date +%s.%N)
h100_wall=$(python3 -c "print(round($t1 - $t0, 2))")
grep -E "^sweep|^time" "$out/whole-h100.out"
echo "h100 whole sweep: wall $h100_wall s (target <= 25 s)"
python3 - "$out" "$h100_wall" <<'PY'
import json, sys
out, wall = sys.argv[1], float(sys.argv[2])
doc = {"spaces": [json.load(open("%s/%s.json" % (out, n))) for n in ("big", "l4")],
       "h100_whole_wall_s": wall}
doc["pass"] = all(s["pass"] for s in doc["spaces"]) and wall <= 25 and \
    all(w is not None and w <= 3 for w in doc["spaces"][1]["wall_s"])
json.dump(doc, open(out + "/fidelity.json", "w"), indent=1)
print("fidelity: %s (every number in %s/fidelity.json)" % ("PASS" if doc["pass"] else "FAIL", out))
sys.exit(0 if doc["pass"] else 1)
PY
[ $? -eq 0 ] || rc=1
exit $rc
