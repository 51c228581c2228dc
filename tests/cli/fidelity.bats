#!/usr/bin/env bats
# fidelity.bats - scripts/fidelity_report.py, the error bars' benchmark report, on
# synthetic exports (no GPU): its port of the engine's interval arithmetic
# gives exactly what store/rounds.c gives, and the what-if with a per-round
# common mode removes an offset shared by every config of a round (the
# refine's clock state) that the engine's method keeps.

load helpers

@test "fidelity_report: the ported bootstrap is store/rounds.c's, to the last digit" {
    cat >"$WORK/drv.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include "store/rounds.h"
/* drv N GROUPS FLOOR X...: rounds_interval over the pool X..., and the interval in us of a
 * median of 17.312 us (rounds_interval_us) */
int main(int argc, char **argv)
{
    const int npool = argc - 4;
    double *pool = malloc(sizeof *pool * (size_t)npool), lo, hi, lo_us, hi_us;
    for (int i = 0; i < npool; i++)
        pool[i] = atof(argv[4 + i]);
    if (rounds_interval(atoi(argv[1]), pool, npool, atoi(argv[2]), atof(argv[3]), &lo, &hi))
        return puts("none"), 0;
    rounds_interval_us(17.312, lo, hi, &lo_us, &hi_us);
    printf("%.15g %.15g %.15g %.15g\n", lo, hi, lo_us, hi_us);
    return 0;
}
C
    cc -std=c11 -O1 -I"$REPO" "$WORK/drv.c" "$REPO/store/rounds.c" -lm -o "$WORK/drv" ||
        flunk "could not build the driver"
    # the last pool is a wild one of one config (lo below -1: the lower end is the least time)
    local groups
    for pool in "0.011 -0.004 0.002 -0.009 0.0005 0.006 -0.003 0.001 -0.0065 0.004" \
        "$(python3 -c 'import random; r = random.Random(7); print(" ".join("%.6f" % r.gauss(0, 0.01) for _ in range(120)))')" \
        "-1.06 2.12 -1.06"; do
        groups=4
        [ "$(wc -w <<<"$pool")" -gt 3 ] || groups=1
        for n in 1 3 6; do
            for floor in 0 0.007; do
                c=$("$WORK/drv" "$n" "$groups" "$floor" $pool)
                p=$(cd "$REPO/scripts" && python3 -c '
import sys, fidelity_report as f, rounds
n, g, floor, pool = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), [float(x) for x in sys.argv[4:]]
iv = f.boot_interval(n, pool, g, floor, {})
us = rounds.interval_us(17.312, n, pool, g, floor)
print("none" if iv is None else "%.15g %.15g %.15g %.15g" % (iv + us))' "$n" "$groups" "$floor" $pool)
                [ "$c" = "$p" ] || flunk "n=$n floor=$floor pool of $(wc -w <<<"$pool"): C '$c', Python '$p'"
            done
        done
    done
    # not vacuous: the wild pool's interval does reach below zero before the least time
    c=$("$WORK/drv" 1 1 0 -1.06 2.12 -1.06)
    awk -v l="${c%% *}" -v u="$(cut -d' ' -f3 <<<"$c")" 'BEGIN { exit !(l < -1 && u == 1e-6) }' ||
        flunk "the wild pool: $c"
}

@test "fidelity_report --what-if: a per-round common mode and the refine's shift are removed, the verdict unchanged" {
    python3 "$REPO/tests/cli/fidelity_gen.py" a 1 0,0.02,-0.01 0.03
    python3 "$REPO/tests/cli/fidelity_gen.py" b 2 0.01,-0.01,0 0.03
    run --separate-stderr python3 "$REPO/scripts/fidelity_report.py" a.sweep.jsonl \
        a.refined.jsonl b.sweep.jsonl b.refined.jsonl --name syn
    local plain=$status
    run --separate-stderr python3 "$REPO/scripts/fidelity_report.py" a.sweep.jsonl \
        a.refined.jsonl b.sweep.jsonl b.refined.jsonl --name syn --what-if --json f.json
    [ "$status" -eq "$plain" ] || flunk "--what-if changed the exit status ($plain -> $status)"
    expect_in "$output" "what-if (not the verdict)"
    python3 - <<'PY' || flunk "what-if numbers: $(cat f.json)"
import json
d = json.load(open("f.json"))
mean, common = d["what_if"]["mean"][0], d["what_if"]["common"][0]
# The refine's rounds sit 3 % above the sweep's: folded in, the mean moves
# the refined medians ~1.5 %; the common mode takes it out.
assert mean["refine_vs_sweep_max_pct"] > 1.0, mean
assert common["refine_vs_sweep_max_pct"] < 0.3, common
# Round offsets of 1-3 % inflate the residuals; without them only the noise
# (0.2 %) and the floor (0.7 %) are left.
assert common["median_half_pct"] < 0.8 < mean["median_half_pct"], (mean, common)
assert common["share_within"] >= 0.9, common
PY
}

@test "fidelity_report --what-if: records without rounds (older stores) are skipped, not a crash" {
    python3 "$REPO/tests/cli/fidelity_gen.py" a 1 0,0.01 0.0
    python3 - <<'PY'
import json
for f in ("a.sweep.jsonl", "a.refined.jsonl"):
    rows = [json.loads(l) for l in open(f)]
    for r in rows[:5]:
        del r["time"]["round_us"]
        r["time"]["ci_lo_us"] = r["time"]["ci_hi_us"] = None
    open(f, "w").write("".join(json.dumps(r) + "\n" for r in rows))
PY
    run --separate-stderr python3 "$REPO/scripts/fidelity_report.py" a.sweep.jsonl \
        a.refined.jsonl a.sweep.jsonl a.refined.jsonl --what-if
    [ "$status" -le 1 ] || flunk "exit $status: $stderr"
    expect_in "$output" " common "
    expect_not_in "$stderr" "Traceback"
}

@test "fidelity_report: the round bias names a round that sits above the others for every config" {
    python3 "$REPO/tests/cli/fidelity_gen.py" a 1 0.01,0,0 0
    python3 "$REPO/tests/cli/fidelity_gen.py" b 2 0,0,0 0
    run --separate-stderr python3 "$REPO/scripts/fidelity_report.py" a.sweep.jsonl \
        a.refined.jsonl b.sweep.jsonl b.refined.jsonl --name syn --json f.json
    expect_in "$output" "round bias (not the verdict"
    python3 - <<'PY' || flunk "round bias: $(cat f.json)"
import json
g = json.load(open("f.json"))["groups"][0]["round_bias_pct"]
assert len(g["a"]) == 3 and len(g["b"]) == 3, g
a, b = [x[0] for x in g["a"]], [x[0] for x in g["b"]]
# A's first round is 1 % above its others (noise 0.2 %); its others -0.5 %; B has none.
assert 0.8 < a[0] < 1.2 and -0.7 < a[1] < -0.3 and -0.7 < a[2] < -0.3, a
assert all(abs(x) < 0.2 for x in b), b
# each median inside its 95 % interval; the intervals tell A's first round from zero
# and leave B's rounds at zero
assert all(lo <= m <= hi for m, lo, hi in g["a"] + g["b"]), g
assert g["a"][0][1] > 0 and all(lo < 0 < hi for _, lo, hi in g["b"]), g
PY
}
