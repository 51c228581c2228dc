#!/usr/bin/env bats
# bench_evolve.bats - scripts/bench_evolve.sh (the evolution loop's acceptance run) on the
# CPU: from a seeds file (SEEDS=, skipping the GPU sweeps) with the evolve tests' stand-in
# fasweep, both kernel families run twice with the same seed and are compared candidate by
# candidate; a parting is reported within noise (overlapping intervals) or as a real
# divergence; a family with no seeds is a SKIP (exit 77, never a pass); a divergence, a run
# over the time limit and a used output folder are failures, never a pass.

load helpers

FAKE="$REPO/tests/evolve/fake_fasweep.py"

# seeds [mma|wgmma|mixed]: a seeds file of the evolve tests in ./seeds.json.
seeds() {
    python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
        skip "evolve_code.py needs Python 3.11 or later"
    python3 -c "import json, sys; sys.path.insert(0, '$REPO/tests/evolve')
import test_evolve as t
which = sys.argv[1]
d = t.seeds_doc() if which != 'wgmma' else t.wg_seeds_doc()
if which == 'mixed':
    d['seeds'] += t.wg_seeds_doc()['seeds']
json.dump(d, open('seeds.json', 'w'))" "${1:-mma}"
}

# A fasweep whose eval in run2 of every family passes its arguments on with $1 set in the
# environment (e.g. FAKE_CI_REL=0.5), and whose medians it maps through $2 (a Python
# expression of t; "t" keeps them).
wrapper() {
    cat >fasweep2 <<PY
#!/usr/bin/env python3
import json, os, subprocess, sys
run2 = any("/run2/" in a for a in sys.argv)
env = dict(os.environ)
if run2 and "$1":
    k, v = "$1".split("=")
    env[k] = v
r = subprocess.run([sys.executable, "$FAKE"] + sys.argv[1:], capture_output=True, text=True,
                   env=env)
sys.stderr.write(r.stderr)
f = lambda t: $2
for line in r.stdout.splitlines():
    try:
        d = json.loads(line)
    except ValueError:
        print(line)
        continue
    if run2 and isinstance(d, dict) and d.get("median_us"):
        d["median_us"] = f(d["median_us"])
        if d.get("ci_lo_us") and d.get("ci_hi_us"):
            d["ci_lo_us"], d["ci_hi_us"] = sorted((f(d["ci_lo_us"]), f(d["ci_hi_us"])))
    print(json.dumps(d))
sys.exit(r.returncode)
PY
    chmod +x fasweep2
}

@test "bench_evolve: both families, two runs with one seed, every candidate the same, exit 0" {
    seeds mixed
    SEEDS=seeds.json FASWEEP="$FAKE" TRIALS=8 run --separate-stderr bash "$REPO/scripts/bench_evolve.sh" out
    expect_status 0
    for fam in mma wgmma; do
        expect_in "$output" "$fam run1: exit 0, wall"
        expect_in "$output" "$fam run2: exit 0, wall"
        expect_in "$output" "$fam: run1: 13 candidates (8 children), run2: 13"
        expect_in "$output" "$fam same seed: all 13 candidates identical"
        [ -s out/$fam/run1/lineage.jsonl ] && [ -s out/$fam/run2/lineage.jsonl ] ||
            flunk "no $fam journals"
    done
    expect_in "$output" "code validity: 8 of 8"
    expect_in "$output" "at wgmma:d64."
    expect_in "$output" "bench_evolve: passed: mma wgmma; failed: none; skipped: none"
    # each family's seeds picked into a file of their own
    [ "$(json_eval out/wgmma/seeds.json 'sorted({s["family"] for s in d["seeds"]})')" = '["wgmma"]' ] ||
        flunk "wgmma seeds"
    [ "$(json_eval out/mma/seeds.json 'len(d["seeds"])')" = 6 ] || flunk "mma seeds"
}

@test "bench_evolve: a family without seeds is a SKIP, not a pass (exit 77); FAMILIES chooses" {
    seeds mma
    SEEDS=seeds.json FASWEEP="$FAKE" TRIALS=2 run --separate-stderr bash "$REPO/scripts/bench_evolve.sh" out
    expect_status 77
    expect_in "$output" "SKIP wgmma: seeds.json holds no seed of family wgmma"
    expect_in "$output" "mma same seed: all 7 candidates identical"
    expect_in "$output" "bench_evolve: passed: mma; failed: none; skipped: wgmma"
    SEEDS=seeds.json FAMILIES=mma FASWEEP="$FAKE" TRIALS=2 run --separate-stderr bash "$REPO/scripts/bench_evolve.sh" out2
    expect_status 0
    expect_not_in "$output" "wgmma"
    FAMILIES="mma tcgen05" run --separate-stderr bash "$REPO/scripts/bench_evolve.sh" out3
    expect_status 2
    expect_in "$stderr" "unknown kernel family 'tcgen05'"
}

@test "bench_evolve: a second run that measures differently diverges, and says where (exit 1)" {
    seeds mma
    # run2's medians turned around (t -> 30 us - t; the stand-in answers 10-12 us) with
    # their +-0.4 % intervals: the parents picked from measured medians change, and the
    # earlier candidates' intervals in the two runs are disjoint.
    wrapper "" "30 - t"
    SEEDS=seeds.json FAMILIES=mma FASWEEP="$WORK/fasweep2" TRIALS=8 run --separate-stderr bash "$REPO/scripts/bench_evolve.sh" out
    expect_status 1
    expect_in "$output" "mma same seed: the runs part at candidate"
    expect_in "$output" "every earlier candidate, its interval in run1 and in run2:"
    expect_in "$output" "<- apart"
    expect_in "$output" "mma same seed: a real divergence: g0-0"
    expect_in "$output" "failed: mma"
}

@test "bench_evolve: runs that part where the intervals overlap parted within noise (exit 0)" {
    seeds wgmma
    # run2's intervals +-50 %: there every candidate ties, so every tournament goes to the
    # earlier candidate, where run1 picks by median; every candidate's two intervals
    # overlap.
    wrapper "FAKE_CI_REL=0.5" "t"
    SEEDS=seeds.json FAMILIES=wgmma FASWEEP="$WORK/fasweep2" TRIALS=8 run --separate-stderr bash "$REPO/scripts/bench_evolve.sh" out
    expect_status 0
    expect_in "$output" "wgmma same seed: the runs part at candidate"
    expect_in "$output" "every earlier candidate, its interval in run1 and in run2:"
    [[ "$output" != *"<- apart"* ]] || flunk "no candidate should be apart: $output"
    expect_in "$output" "wgmma same seed: parted within noise (every earlier candidate's two intervals overlap"
    expect_in "$output" "passed: wgmma"
}

@test "bench_evolve: over the time limit is a failure; a used output folder is refused (exit 2)" {
    seeds mma
    SEEDS=seeds.json FAMILIES=mma FASWEEP="$FAKE" TRIALS=2 LIMIT=0 run --separate-stderr bash "$REPO/scripts/bench_evolve.sh" out
    expect_status 1
    expect_in "$stderr" "mma run1: over the limit"
    SEEDS=seeds.json FASWEEP="$FAKE" TRIALS=2 run --separate-stderr bash "$REPO/scripts/bench_evolve.sh" out
    expect_status 2
    expect_in "$stderr" "out exists; give a new folder"
}
