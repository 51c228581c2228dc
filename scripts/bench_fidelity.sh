#!/usr/bin/env bash
# bench_fidelity.sh [OUT] - issue 15's benchmark, on a GPU, in one go:
#   1. two back-to-back runs of a space holding only 16,16,2048,64 (the h100
#      space's axes, modes hot/cold/batch): each `fasweep grid`, then
#      `grid --refine 4` on the same store (the refine pass re-measures the
#      stored sweep's best); scripts/fidelity_report.py compares them: top-1
#      the same or a tie, top-4 refined medians within 2 %, every refined
#      median within 2 % of its own sweep median; clocks and discards;
#   2. the same for spaces/l4.json, all three modes;
#   3. the wall time of a whole sweep of spaces/h100.json and of
#      spaces/l4.json into fresh stores (targets: 25 s and 2.5 s on the H100);
#   4. the same config twice in one head-to-head at 16,16,2048,64, with the
#      rotating order and with FASWEEP_H2H_ORDER=fixed (one order every round).
# Logs and exports go to OUT (default ./fidelity). FASWEEP names the binary.
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
runs() { # name space
    for r in a b; do
        local st="$out/$1-$r.lmdb"
        /usr/bin/time -f "$1 $r sweep: wall %e s" "$F" grid --space "$2" --store "$st" \
            >"$out/$1-$r.sweep.out" 2>"$out/$1-$r.sweep.err"
        grep -E "^sweep|^clock|^time" "$out/$1-$r.sweep.out"
        tail -1 "$out/$1-$r.sweep.err"
        "$F" export --store "$st" >"$out/$1-$r.sweep.jsonl"
        "$F" grid --space "$2" --store "$st" --refine 4 >"$out/$1-$r.refine.out" \
            2>"$out/$1-$r.refine.err"
        grep -E "^refine|^  " "$out/$1-$r.refine.err" >"$out/$1-$r.refine.txt"
        "$F" export --store "$st" >"$out/$1-$r.refined.jsonl"
    done
    python3 "$here/scripts/fidelity_report.py" "$out/$1-a.sweep.jsonl" "$out/$1-a.refined.jsonl" \
        "$out/$1-b.sweep.jsonl" "$out/$1-b.refined.jsonl" -k 4 --tol 0.02
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,clocks_event_reasons.active \
    --format=csv 2>/dev/null | tee "$out/gpu.txt"
echo "== 1. 16,16,2048,64 only, two runs, --refine 4"
runs big "$out/big.json"
echo "== 2. spaces/l4.json, two runs, --refine 4"
runs l4 "$here/spaces/l4.json"
echo "== 3. whole sweeps into fresh stores"
for sp in h100 l4; do
    /usr/bin/time -f "$sp: wall %e s" "$F" grid --space "$here/spaces/$sp.json" \
        --store "$out/whole-$sp.lmdb" >"$out/whole-$sp.out" 2>"$out/whole-$sp.err"
    grep -E "^sweep|^clock|^time" "$out/whole-$sp.out"
    tail -1 "$out/whole-$sp.err"
done
echo "== 4. the same config twice in one head-to-head, 16,16,2048,64"
cfg=d64.m128.n64.w4.s2.z1
for order in rotate fixed; do
    for mode in hot cold; do
        FASWEEP_H2H_ORDER=$order "$F" eval --problem 16,16,2048,64 --config "$cfg,$cfg" \
            --mode $mode --json --store "$out/h2h.lmdb" >"$out/h2h-$order-$mode.out" 2>&1
        python3 - "$out/h2h-$order-$mode.out" "$order" "$mode" <<'PY'
import json, math, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
if len(rows) != 2:
    print("h2h %s %s: no result: %s" % (sys.argv[2], sys.argv[3], open(sys.argv[1]).read()[-300:]))
    sys.exit()
a, b = rows
d = abs(a["median_us"] - b["median_us"])
lim = 2 * math.hypot(a["noise"] * a["median_us"], b["noise"] * b["median_us"])
print("h2h order=%-6s %-4s: %.2f us vs %.2f us (first vs second), |d| %.2f us, 2x noise %.2f us,"
      " clocks %s/%s MHz: %s" % (sys.argv[2], sys.argv[3], a["median_us"], b["median_us"], d, lim,
                                a["clock_mhz"], b["clock_mhz"], "within" if d <= lim else "BIASED"))
PY
    done
done
