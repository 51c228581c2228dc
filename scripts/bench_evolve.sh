#!/usr/bin/env bash
# bench_evolve.sh [OUT] - the acceptance run of the evolution loop over kernel source
# (the code-evolution loop, with a gate no kernel can fool), on a GPU: scripts/evolve_code.py with the rule
# mutator, for each kernel family, twice with the same seed.
#   mma    `fasweep grid --space spaces/l4.json` into OUT/mma/store.lmdb, the SDPA baselines
#          (scripts/baselines.sh; skipped with a line when PyTorch cannot run), `fasweep topk
#          -k 8 --mode MODE`: its first MODE seeds file.
#   wgmma  the same for the b16.h16.s2048.d64.nc problem of spaces/h100.json (a copy of the
#          space with that problem and MODE alone, OUT/wgmma/space.json), `topk -k 8 --mode
#          MODE --problem b16.h16.s2048.d64.nc`, and of its seeds those of family wgmma
#          (picked into a seeds file of their own). Without an sm_90a GPU (nvidia-smi says
#          another compute capability), without wgmma instances in the build, or with no
#          wgmma seed: "SKIP wgmma: why".
# Per family: evolve_code.py SEEDS --out OUT/FAM/run1 --seed SEED (TRIALS trials, population
# 5), each run into its own copy of the swept store (eval folds a second measurement of the
# same source and config into the first's record), timed; then OUT/FAM/run2. It prints both
# summaries and wall times and compares the journals candidate by candidate (id, parent,
# mutation, source SHA-256). Where they part with other parents (a selection went another
# way), it prints every earlier candidate's 95 % interval in run1 and in run2: when each
# candidate's two intervals overlap the runs "parted within noise" (they chose among
# candidates that cannot be told apart), when one's do not "a real divergence"; the same
# parent with another child is a real divergence (the mutator answered differently).
# Exit 0 when every family chosen ran and passed: both runs exit 0, each in at most LIMIT
# seconds (default 600), every trial journalled, and the journals identical or parted within
# noise; 1 when a family failed; 77 when none failed but a family was skipped (a skip never
# counts as a pass); 2 on bad usage (OUT exists, an unknown family).
# Environment: FASWEEP (default build/fasweep), FAMILIES ("mma wgmma"), MODE (batch), SEED
# (1), TRIALS (45), LIMIT (600); SEEDS=FILE skips the sweeps: each family's seeds are picked
# from FILE (a family FILE holds none of is skipped); SEEDS_MMA=FILE / SEEDS_WGMMA=FILE for
# one family. With FASWEEP pointing at any fasweep, tests/evolve/fake_fasweep.py too: that is
# how tests/cli/bench_evolve.bats runs this without a GPU.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-bench-evolve}
F=${FASWEEP:-$here/build/fasweep}
families=${FAMILIES:-mma wgmma}
mode=${MODE:-batch}
seed=${SEED:-1}
trials=${TRIALS:-45}
limit=${LIMIT:-600}
wg_problem=b16.h16.s2048.d64.nc
for fam in $families; do
    case $fam in
    mma | wgmma) ;;
    *)
        echo "bench_evolve: unknown kernel family '$fam' in FAMILIES (mma, wgmma)" >&2
        exit 2
        ;;
    esac
done
if [ -e "$out" ]; then
    echo "bench_evolve: $out exists; give a new folder (the runs must start fresh)" >&2
    exit 2
fi
mkdir -p "$out" || exit 1

# pick FAM SRC DST: the seeds of family FAM of SRC (at most 8, in their order) into DST;
# exit 3 when SRC holds none.
pick() {
    python3 - "$@" <<'PY'
import json, sys
fam, src, dst = sys.argv[1:4]
try:
    d = json.load(open(src))
    seeds = [s for s in d["seeds"] if isinstance(s, dict) and (s.get("family") or "mma") == fam]
except (OSError, ValueError, KeyError, TypeError) as e:
    sys.exit("bench_evolve: cannot read the seeds file %s: %s" % (src, e))
if not seeds:
    sys.exit(3)
d["seeds"] = seeds[:8]
with open(dst, "w") as f:
    json.dump(d, f, indent=1)
PY
}

# sweep FAM DIR SPACE: grid, baselines, topk into DIR; prints the seeds file made.
sweep() {
    local fam=$1 dir=$2 space=$3 store=$2/store.lmdb sel=()
    [ "$fam" = wgmma ] && sel=(--problem "$wg_problem")
    echo "== $fam: sweep of $space, baselines, topk -k 8 --mode $mode ${sel[*]}" >&2
    "$F" grid --space "$space" --store "$store" >"$dir/grid.log" 2>&1 ||
        { tail -5 "$dir/grid.log" >&2; echo "bench_evolve: $fam: the sweep failed" >&2; return 1; }
    # (their own output goes to the logs: this function's stdout is the seeds file's name)
    bash "$here/scripts/baselines.sh" "$space" "$store" "$F" >>"$dir/grid.log" 2>&1 || {
        tail -5 "$dir/grid.log" >&2
        return 1
    }
    "$F" topk -k 8 --mode "$mode" "${sel[@]}" --space "$space" --store "$store" \
        --seeds-dir "$dir/seeds" >"$dir/topk.out" 2>"$dir/topk.err" ||
        { cat "$dir/topk.err" >&2; return 1; }
    local f
    f=$(find "$dir/seeds" -name "*_$mode.json" | sort | head -1)
    [ -n "$f" ] || { echo "bench_evolve: $fam: topk wrote no $mode seeds file" >&2; return 1; }
    echo "$f"
}

# compare FAM J1 J2 TRIALS: the journals candidate by candidate (exit 1: they diverge).
compare() {
    python3 - "$@" <<'PY'
import json, sys

fam, j1, j2, trials = sys.argv[1:5]


def cands(path):
    try:
        rows = [json.loads(l) for l in open(path) if l.strip()]
    except (OSError, ValueError) as e:
        sys.exit("%s same seed: cannot read %s (%s)" % (fam, path, e))
    return [r for r in rows if isinstance(r, dict) and r.get("event") == "candidate"]


def iv(c):
    i = c.get("interval")
    return i if isinstance(i, list) and len(i) == 2 else None


def show(c, run):
    i = iv(c)
    if c.get("median_us") is None:
        t = c.get("status")
    else:
        t = "%.3f us %s" % (c["median_us"], "[%.3f, %.3f]" % tuple(i) if i else "(no interval)")
    return "%s's %s (%s)" % (run, c.get("id"), t)


a, b = cands(j1), cands(j2)
key = lambda r: (r.get("id"), r.get("parent"), r.get("mutation"), r.get("sha256"))
children = [r for r in a if str(r.get("id", "")).startswith("t")]
print("%s: run1: %d candidates (%d children), run2: %d" % (fam, len(a), len(children), len(b)))
ok = len(children) == int(trials)
if not ok:
    print("%s: run1 journalled %d children, not %s" % (fam, len(children), trials))


def overlap(p, q):
    return p and q and p[0] <= q[1] and q[0] <= p[1]


for i, (x, y) in enumerate(zip(a, b)):
    if key(x) == key(y):
        continue
    print("%s same seed: the runs part at candidate %d (%s): run1 %s from %s, run2 %s from %s"
          % (fam, i, x.get("id"), x.get("mutation") or "-", x.get("parent"),
             y.get("mutation") or "-", y.get("parent")))
    if x.get("parent") == y.get("parent"):
        print("%s same seed: the same parent, another child: a real divergence (the mutator "
              "answered differently; not a timing effect)" % fam)
        sys.exit(1)
    # Different parents: a selection made on the earlier candidates' timings
    # went another way. Each of them was measured in both runs: the parting is
    # within noise when every one's two intervals overlap (the runs could not
    # tell its two measurements apart, and the tie rule decided on medians of
    # candidates that tie), a real divergence when some do not.
    print("%s   every earlier candidate, its interval in run1 and in run2:" % fam)
    apart = []
    for p, q in zip(a[:i], b[:i]):
        ip, iq = iv(p), iv(q)
        same = overlap(ip, iq)
        if p.get("median_us") is not None and not same:
            apart.append(p.get("id"))
        print("%s     %-6s %s | %s%s" % (fam, p.get("id"), show(p, "run1"), show(q, "run2"),
                                         "" if same or p.get("median_us") is None
                                         else "   <- apart"))
    if apart:
        print("%s same seed: a real divergence: %s measured apart in the two runs (disjoint "
              "intervals)" % (fam, ", ".join(apart)))
        sys.exit(1)
    print("%s same seed: parted within noise (every earlier candidate's two intervals overlap: "
          "the runs chose among candidates that cannot be told apart; not a failure)" % fam)
    sys.exit(0 if ok else 1)
if len(a) != len(b):
    print("%s same seed: run1 has %d candidates, run2 %d" % (fam, len(a), len(b)))
    sys.exit(1)
print("%s same seed: all %d candidates identical (id, parent, mutation, source SHA-256)"
      % (fam, len(a)))
sys.exit(0 if ok else 1)
PY
}

passed="" failed="" skipped=""
for fam in $families; do
    dir=$out/$fam
    mkdir -p "$dir" || exit 1
    store=$dir/store.lmdb
    up=$(echo "$fam" | tr '[:lower:]' '[:upper:]')
    var=SEEDS_$up
    given=${!var:-${SEEDS:-}}
    if [ "$fam" = mma ]; then space=$here/spaces/l4.json; else space=$dir/space.json; fi
    seeds=$dir/seeds.json
    skip=""
    if [ -n "$given" ]; then
        [ "$fam" = wgmma ] && space=$here/spaces/h100.json
        pick "$fam" "$given" "$seeds"
        case $? in
        0) ;;
        3) skip="$given holds no seed of family $fam" ;;
        *) failed="$failed $fam"; continue ;;
        esac
    else
        if [ "$fam" = wgmma ]; then
            cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1)
            if [ -n "$cc" ] && [ "${cc%%.*}" != 9 ]; then
                skip="the GPU has compute capability $cc, not 9.0 (wgmma needs sm_90a)"
            elif ! "$F" list --json 2>/dev/null | python3 -c 'import json, sys
sys.exit(not any(i.get("family") == "wgmma" for i in json.load(sys.stdin)["instances"]))'; then
                skip="$F has no wgmma instances (build with ARCHS holding 90)"
            else
                python3 - "$here/spaces/h100.json" "$space" "$mode" <<'PY' || exit 1
import json, sys
src, dst, mode = sys.argv[1:4]
d = json.load(open(src))
d["problems"] = [p for p in d["problems"] if (p["batch"], p["heads"], p["seq_len"],
                 p["head_dim"], bool(p.get("causal"))) == (16, 16, 2048, 64, False)]
assert len(d["problems"]) == 1, "spaces/h100.json has no b16.h16.s2048.d64.nc problem"
d["measure"]["modes"] = [mode]
json.dump(d, open(dst, "w"), indent=2)
PY
            fi
        fi
        if [ -z "$skip" ]; then
            swept=$(sweep "$fam" "$dir" "$space") || { failed="$failed $fam"; continue; }
            pick "$fam" "$swept" "$seeds"
            case $? in
            0) ;;
            3) skip="topk -k 8 of $(basename "$swept") holds no $fam seed (no sm_90a GPU?)" ;;
            *) failed="$failed $fam"; continue ;;
            esac
        fi
    fi
    if [ -n "$skip" ]; then
        echo "SKIP $fam: $skip"
        skipped="$skipped $fam"
        continue
    fi
    echo "== $fam: seeds: $seeds" >&2
    [ -e "$store" ] && { cp -a "$store" "$dir/store-run2.lmdb" || exit 1; }
    rc=0
    for run in run1 run2; do
        st_run=$store
        [ "$run" = run2 ] && st_run=$dir/store-run2.lmdb
        echo "== $fam $run: evolve_code.py --seed $seed --trials $trials" >&2
        t0=$(date +%s.%N)
        python3 "$here/scripts/evolve_code.py" "$seeds" --out "$dir/$run" --fasweep "$F" \
            --store "$st_run" --space "$space" --seed "$seed" --trials "$trials" \
            >"$dir/$run.summary" 2>"$dir/$run.err"
        st=$?
        wall=$(python3 -c 'import sys, time; print("%.1f" % (time.time() - float(sys.argv[1])))' \
            "$t0")
        cat "$dir/$run.summary"
        echo "$fam $run: exit $st, wall $wall s (limit $limit s)"
        [ "$st" -eq 0 ] || { tail -3 "$dir/$run.err" >&2; rc=1; }
        python3 -c 'import sys; sys.exit(float(sys.argv[1]) > float(sys.argv[2]))' \
            "$wall" "$limit" || { echo "$fam $run: over the limit" >&2; rc=1; }
    done
    compare "$fam" "$dir/run1/lineage.jsonl" "$dir/run2/lineage.jsonl" "$trials" || rc=1
    if [ "$rc" -eq 0 ]; then passed="$passed $fam"; else failed="$failed $fam"; fi
done
echo "bench_evolve: passed:${passed:- none}; failed:${failed:- none}; skipped:${skipped:- none}"
[ -z "$failed" ] || exit 1
[ -z "$skipped" ] || exit 77
exit 0
