#!/usr/bin/env bats
# bench_evolve.bats - scripts/bench_evolve.sh (issue 25's acceptance run) on
# the CPU: from a seeds file (SEEDS=, skipping the GPU sweep) with the
# evolve tests' stand-in fasweep, two runs with the same seed are compared
# candidate by candidate; a divergence, a run over the time limit and a used
# output folder are failures, never a pass.

load helpers

FAKE="$REPO/tests/evolve/fake_fasweep.py"

seeds() {
    python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
        skip "evolve_code.py needs Python 3.11 or later"
    python3 -c "import json, sys; sys.path.insert(0, '$REPO/tests/evolve')
import test_evolve as t; json.dump(t.seeds_doc(), open('seeds.json', 'w'))"
}

@test "bench_evolve: two runs with one seed, every candidate the same, exit 0" {
    seeds
    SEEDS=seeds.json FASWEEP="$FAKE" TRIALS=8 run --separate-stderr bash "$REPO/scripts/bench_evolve.sh" out
    expect_status 0
    expect_in "$output" "run1: exit 0, wall"
    expect_in "$output" "run2: exit 0, wall"
    expect_in "$output" "run1: 13 candidates (8 children), run2: 13"
    expect_in "$output" "same seed: all 13 candidates identical"
    expect_in "$output" "code validity: 8 of 8"
    [ -s out/run1/lineage.jsonl ] && [ -s out/run2/lineage.jsonl ] || flunk "no journals"
}

@test "bench_evolve: a second run that measures differently diverges, and says where (exit 1)" {
    seeds
    # A fasweep whose eval in run2 turns the order of the medians around
    # (t -> 30 us - t; the stand-in answers 10-12 us): the parents the loop
    # picks from measured medians change, whatever the temp paths are.
    cat >fasweep2 <<PY
#!/usr/bin/env python3
import json, subprocess, sys
r = subprocess.run([sys.executable, "$FAKE"] + sys.argv[1:], capture_output=True, text=True)
sys.stderr.write(r.stderr)
run2 = any("/run2/" in a for a in sys.argv)
for line in r.stdout.splitlines():
    try:
        d = json.loads(line)
    except ValueError:
        print(line)
        continue
    if run2 and isinstance(d, dict) and d.get("median_us"):
        d["median_us"] = 30 - d["median_us"]
        if d.get("ci_lo_us") and d.get("ci_hi_us"):
            d["ci_lo_us"], d["ci_hi_us"] = 30 - d["ci_hi_us"], 30 - d["ci_lo_us"]
    print(json.dumps(d))
sys.exit(r.returncode)
PY
    chmod +x fasweep2
    SEEDS=seeds.json FASWEEP="$WORK/fasweep2" TRIALS=8 run --separate-stderr bash "$REPO/scripts/bench_evolve.sh" out
    expect_status 1
    expect_in "$output" "same seed: the runs first differ at candidate"
}

@test "bench_evolve: over the time limit is a failure; a used output folder is refused (exit 2)" {
    seeds
    SEEDS=seeds.json FASWEEP="$FAKE" TRIALS=2 LIMIT=0 run --separate-stderr bash "$REPO/scripts/bench_evolve.sh" out
    expect_status 1
    expect_in "$stderr" "run1: over the limit"
    SEEDS=seeds.json FASWEEP="$FAKE" TRIALS=2 run --separate-stderr bash "$REPO/scripts/bench_evolve.sh" out
    expect_status 2
    expect_in "$stderr" "out exists; give a new folder"
}
