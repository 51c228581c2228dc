#!/usr/bin/env bash
# bench_evolve.sh [OUT] - issue 25's acceptance run, on a GPU: the EvoEngineer
# loop over kernel source (scripts/evolve_code.py, the rule mutator) started
# from `fasweep topk -k 8` of spaces/l4.json, twice with the same seed.
#   1. `fasweep grid --space spaces/l4.json` into a fresh OUT/store.lmdb, the
#      SDPA baselines (scripts/baselines.sh; skipped with a line when PyTorch
#      cannot run), `fasweep topk -k 8 --mode MODE` with its seeds in OUT/seeds.
#   2. evolve_code.py SEEDS --out OUT/run1 --seed SEED (45 trials, population
#      5, its defaults), timed; then the same into OUT/run2.
#   3. Prints each run's summary and wall time, and compares the two journals
#      candidate by candidate (id, parent, mutation, source SHA-256): where
#      the second run first differs, if it does. Parents are chosen by measured
#      medians, so on a GPU two runs stay equal only while no two candidates
#      swap places within the noise; the comparison says which candidate
#      diverged, never hides it.
# Exit 0 when both runs finish, each in at most LIMIT seconds (default 600),
# with every candidate journalled, and the two journals agree; 1 otherwise.
# Environment: FASWEEP (default build/fasweep), MODE (batch), SEED (1),
# TRIALS (45), LIMIT (600); SEEDS=FILE skips step 1 and starts from FILE
# (with FASWEEP pointing at any fasweep, tests/evolve/fake_fasweep.py too:
# that is how tests/cli/bench_evolve.bats runs this without a GPU).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-bench-evolve}
F=${FASWEEP:-$here/build/fasweep}
mode=${MODE:-batch}
seed=${SEED:-1}
trials=${TRIALS:-45}
limit=${LIMIT:-600}
space=$here/spaces/l4.json
if [ -e "$out" ]; then
    echo "bench_evolve: $out exists; give a new folder (the runs must start fresh)" >&2
    exit 2
fi
mkdir -p "$out" || exit 1
store=$out/store.lmdb
seeds=${SEEDS:-}
if [ -z "$seeds" ]; then
    echo "== sweep of spaces/l4.json, baselines, topk -k 8 --mode $mode" >&2
    "$F" grid --space "$space" --store "$store" >"$out/grid.log" 2>&1 ||
        { tail -5 "$out/grid.log" >&2; echo "bench_evolve: the sweep failed" >&2; exit 1; }
    bash "$here/scripts/baselines.sh" "$space" "$store" "$F" 2>>"$out/grid.log" || exit 1
    "$F" topk -k 8 --mode "$mode" --space "$space" --store "$store" --seeds-dir "$out/seeds" \
        2>"$out/topk.err" || { cat "$out/topk.err" >&2; exit 1; }
    seeds=$(find "$out/seeds" -name "*_$mode.json" | head -1)
    [ -n "$seeds" ] || { echo "bench_evolve: topk wrote no $mode seeds file" >&2; exit 1; }
fi
echo "== seeds: $seeds" >&2
# Each run evals into its own copy of the swept store: eval folds a second
# measurement of the same source and config into the first's record, and the
# two runs must be independent.
[ -e "$store" ] && { cp -a "$store" "$out/store-run2.lmdb" || exit 1; }
rc=0
for run in run1 run2; do
    st_run=$store
    [ "$run" = run2 ] && st_run=$out/store-run2.lmdb
    echo "== $run: evolve_code.py --seed $seed --trials $trials" >&2
    t0=$(date +%s.%N)
    python3 "$here/scripts/evolve_code.py" "$seeds" --out "$out/$run" --fasweep "$F" \
        --store "$st_run" --space "$space" --seed "$seed" --trials "$trials" \
        >"$out/$run.summary" 2>"$out/$run.err"
    st=$?
    wall=$(python3 -c 'import sys, time; print("%.1f" % (time.time() - float(sys.argv[1])))' "$t0")
    cat "$out/$run.summary"
    echo "$run: exit $st, wall $wall s (limit $limit s)"
    [ "$st" -eq 0 ] || { tail -3 "$out/$run.err" >&2; rc=1; }
    python3 -c 'import sys; sys.exit(float(sys.argv[1]) > float(sys.argv[2]))' "$wall" "$limit" ||
        { echo "$run: over the limit" >&2; rc=1; }
done
python3 - "$out/run1/lineage.jsonl" "$out/run2/lineage.jsonl" "$trials" <<'PY' || rc=1
import json, sys

def cands(path):
    try:
        rows = [json.loads(l) for l in open(path) if l.strip()]
    except OSError as e:
        sys.exit("same seed: cannot read %s (%s)" % (path, e.strerror))
    return [r for r in rows if r.get("event") == "candidate"]

a, b = cands(sys.argv[1]), cands(sys.argv[2])
key = lambda r: (r.get("id"), r.get("parent"), r.get("mutation"), r.get("sha256"))
children = [r for r in a if str(r.get("id", "")).startswith("t")]
print("run1: %d candidates (%d children), run2: %d" % (len(a), len(children), len(b)))
ok = len(children) == int(sys.argv[3])
if not ok:
    print("run1 journalled %d children, not %s" % (len(children), sys.argv[3]))
for i, (x, y) in enumerate(zip(a, b)):
    if key(x) != key(y):
        print("same seed: the runs first differ at candidate %d: run1 %s, run2 %s" %
              (i, key(x), key(y)))
        sys.exit(1)
if len(a) != len(b):
    print("same seed: run1 has %d candidates, run2 %d" % (len(a), len(b)))
    sys.exit(1)
print("same seed: all %d candidates identical (id, parent, mutation, source SHA-256)" % len(a))
sys.exit(0 if ok else 1)
PY
exit $rc
