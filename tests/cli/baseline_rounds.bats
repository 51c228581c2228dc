#!/usr/bin/env bats
# baseline_rounds.bats - the SDPA baselines' rounds and intervals
# (scripts/sdpa_baseline.py, scripts/rounds.py) without PyTorch or a GPU:
# the space's measure.rounds and ci_floor, the interleaved round order, a
# failure in any round, the records assembled from the rounds (median_us the
# mean of the round medians, round_us, the interval around it from the pooled
# residuals of the run's baselines), the interval against store/rounds.c to
# the last digit (built with cc), and the lines accepted by `fasweep import`
# with a two-sided speedup interval in `topk` (SKIP when no fasweep is built).

load helpers

# The pure parts need no fasweep: only the import test asks for one.
setup() {
    unset FASWEEP_STORE
    WORK="$BATS_TEST_TMPDIR/work"
    mkdir -p "$WORK" && cd "$WORK" || return 1
    STORE="$WORK/store.lmdb"
}

need_fasweep() {
    if [ -z "${FASWEEP:-}" ] || [ ! -x "$FASWEEP" ]; then
        skip "no fasweep binary: set FASWEEP=\$PWD/build/ci/fasweep (built by make BUILD=build/ci SPACES=spaces/ci.json)"
    fi
}

# py: runs Python on stdin with scripts/ importable.
py() {
    PYTHONPATH="$REPO/scripts${PYTHONPATH:+:$PYTHONPATH}" python3 - "$@"
}

@test "sdpa_baseline.py imports without PyTorch; rounds and ci_floor come from the space, the engine's defaults else" {
    cat >space.json <<'J'
{"name": "t", "problems": [], "measure": {"rounds": 5, "ci_floor": 0.01, "modes": ["hot", "batch"]}}
J
    py "$REPO" <<'PY' || flunk "see above"
import os, re, sys
import sdpa_baseline as sb
assert "torch" not in sys.modules, "importing sdpa_baseline imported torch"
m, tol, name, h = sb.load_space(None)
# the engine's defaults (grid/space.c, space_measure_defaults)
src = open(os.path.join(sys.argv[1], "grid", "space.c")).read()
assert m["rounds"] == int(re.search(r"\.rounds = (\d+)", src).group(1)), m
assert m["ci_floor"] == float(re.search(r"\.ci_floor = ([0-9.]+)", src).group(1)), m
m, tol, name, h = sb.load_space("space.json")
assert (m["rounds"], m["ci_floor"], m["modes"], name) == (5, 0.01, ["hot", "batch"], "t"), m
m, *_ = sb.load_space(os.path.join(sys.argv[1], "spaces", "h100.json"))
assert (m["rounds"], m["ci_floor"]) == (3, 0.007), m
PY
}

@test "sdpa_baseline.py: bad rounds, floor or pause are refused before PyTorch is needed, exit 2" {
    local s="$REPO/scripts/sdpa_baseline.py"
    run --separate-stderr python3 "$s" --problem 4,8,512,64 --rounds 9
    expect_status 2
    expect_in "$stderr" "--rounds: expected an integer from 1 to 8, got 9"
    run --separate-stderr python3 "$s" --problem 4,8,512,64 --rounds 0
    expect_status 2
    run --separate-stderr python3 "$s" --problem 4,8,512,64 --round-pause -1
    expect_status 2
    expect_in "$stderr" "--round-pause wants seconds >= 0"
    # the Triton tuning hook: a bad value is a usage error, whether or not Triton is here
    local v
    for v in 0,100 25 25,100,3 x,y -1,5 25,1e9 25,nan ' '; do
        FASWEEP_TRITON_TUNE_MS=$v run --separate-stderr python3 "$s" --problem 4,8,512,64 \
            --backends flash,triton
        [ "$status" -eq 2 ] || flunk "FASWEEP_TRITON_TUNE_MS='$v': exit $status, $stderr"
        expect_in "$stderr" "FASWEEP_TRITON_TUNE_MS='$v': expected WARMUP,REP"
        expect_not_in "$stderr" "Traceback"
    done
    local bad
    for bad in '"rounds": 9' '"rounds": "3"' '"rounds": true' '"rounds": 2.5' '"ci_floor": 0' \
        '"ci_floor": 0.5' '"ci_floor": "x"'; do
        echo "{\"name\": \"t\", \"measure\": {$bad}}" >bad.json
        run --separate-stderr python3 "$s" --problem 4,8,512,64 --space bad.json
        [ "$status" -eq 2 ] || flunk "$bad: exit $status, $stderr"
        expect_in "$stderr" "bad.json: measure."
        [ -z "$output" ] || flunk "$bad: stdout should be empty"
    done
}

@test "rounds are interleaved: every backend once per mode per round, in an order rotated by r/rounds" {
    py <<'PY' || flunk "see above"
import sdpa_baseline as sb
names, modes = ["flash", "efficient", "cudnn"], ["hot", "cold"]
calls, slept = [], []
def measure(n, mo, r):
    calls.append((r, n, mo))
    return sb.timing_of([10.0 + r, 10.1 + r, 9.9 + r])
timings, failed = sb.measure_rounds(names, modes, 3, measure, pause=0.5, sleep=slept.append)
# engine_round_jobs: a shift of count * r / rounds; a backend's modes one after the other
orders = [["flash", "efficient", "cudnn"], ["efficient", "cudnn", "flash"],
          ["cudnn", "flash", "efficient"]]
want = [(r, n, mo) for r, o in enumerate(orders) for n in o for mo in modes]
assert calls == want, calls
assert slept == [0.5, 0.5], slept  # between rounds only
assert failed == {}
for n in names:
    for mo in modes:
        assert [t["median_us"] for t in timings[(n, mo)]] == [10.0, 11.0, 12.0], timings[(n, mo)]
# the shift is the C's integer division: 2 backends over 3 rounds 0, 0, 1; 3 over 5 0, 0, 1, 1, 2
assert [sb.rotated(["a", "b"], r, 3) for r in range(3)] == [["a", "b"], ["a", "b"], ["b", "a"]]
assert [sb.rotated("abc", r, 5)[0] for r in range(5)] == ["a", "a", "b", "b", "c"]
assert sb.round_plan(["a", "b"], ["hot"], 2, 3) == [("b", "hot"), ("a", "hot")]
# one round: no pause at all
slept.clear()
sb.measure_rounds(names, modes, 1, measure, pause=0.5, sleep=slept.append)
assert slept == []
# several problems in one process: round r of each, then round r + 1; a problem's pause is
# what the others' rounds did not fill (a stand-in clock: each timing takes 0.1 s)
now = [0.0]
def timed(tag):
    def m(n, mo, r):
        now[0] += 0.1
        calls.append((tag, r, n, mo))
        return sb.timing_of([5.0 + r])
    return m
calls.clear()
slept.clear()
def nap(s):
    slept.append(round(s, 6))
    now[0] += s
out = sb.interleave_rounds([(["flash"], ["hot"], timed("A")), (["flash", "cudnn"], ["hot"], timed("B"))],
                           2, pause=0.25, sleep=nap, clock=lambda: now[0])
assert [c[:2] for c in calls] == [("A", 0), ("B", 0), ("B", 0), ("A", 1), ("B", 1), ("B", 1)], calls
# A waited 0.25 - 0.2 (B's two timings) = 0.05 s; B: A's one timing (0.1) plus that nap
assert slept == [0.05, 0.1], slept
assert [len(out[k][0][("flash", "hot")]) for k in (0, 1)] == [2, 2] and out[1][1] == {}, out
PY
}

@test "rounds one at a time (RoundRunner): the same order as all at once; the caller's work between fills the pause" {
    py <<'PY' || flunk "see above"
import sdpa_baseline as sb
now, calls, slept = [0.0], [], []
def timed(tag):
    def m(n, mo, r):
        now[0] += 0.1
        calls.append((tag, r, n))
        return sb.timing_of([5.0 + r])
    return m
def nap(s):
    slept.append(round(s, 6))
    now[0] += s
jobs = lambda: [(["flash", "cudnn"], ["hot"], timed("A")), (["flash"], ["hot"], timed("B"))]
whole = sb.interleave_rounds(jobs(), 3, pause=0.25, sleep=nap, clock=lambda: now[0])
want_calls, want_slept = list(calls), list(slept)
assert want_slept, "all at once, the pause is slept"
calls.clear(); slept.clear()
rr = sb.RoundRunner(jobs(), 3, pause=0.25, sleep=nap, clock=lambda: now[0])
rr.run(1)
assert rr.done == 1 and [c[1] for c in calls] == [0, 0, 0], calls
now[0] += 5.0  # the caller's sweep round: longer than the pause
rr.run(2)
assert slept == [], slept  # nothing left to wait out
now[0] += 5.0
rr.run(99)  # never more than the rounds
assert rr.done == 3 and calls == want_calls, (calls, want_calls)
assert slept == [] and rr.out == whole, (slept, rr.out, whole)
rr.run(3)
assert len(calls) == len(want_calls)  # nothing timed twice
# no time between the calls: the same pauses as all at once
calls.clear(); slept.clear()
rr = sb.RoundRunner(jobs(), 3, pause=0.25, sleep=nap, clock=lambda: now[0])
rr.run(1); rr.run(2); rr.run(3)
assert calls == want_calls and slept == want_slept, (slept, want_slept)
PY
}

@test "the baselines' rounds between the sweep's: option checks, and baseline_round.sh against a stand-in baselines process" {
    local s="$REPO/scripts/sdpa_baseline.py" h="$REPO/scripts/baseline_round.sh"
    run --separate-stderr python3 "$s" --problem 4,8,512,64 --round-done-file x --go-on-stdin
    expect_status 2
    expect_in "$stderr" "--round-done-file goes with --ready-file"
    run --separate-stderr env BASELINE_GO=stdin BASELINE_ROUND_DONE=x bash "$REPO/scripts/baselines.sh" s.json st
    expect_status 2
    expect_in "$stderr" "BASELINE_ROUND_DONE goes with BASELINE_READY"
    run --separate-stderr bash "$h" only-one
    expect_status 2
    expect_in "$stderr" "usage: baseline_round.sh DONE PID"
    run --separate-stderr bash "$h" done 0x1
    expect_status 2
    BASELINE_ROUND_TIMEOUT=0 run --separate-stderr bash "$h" done 1
    expect_status 2
    expect_in "$stderr" "BASELINE_ROUND_TIMEOUT=0: whole seconds >= 1"
    # a stand-in for sdpa_baseline.py --round-done-file: each 'round' line creates DONE
    # (after a moment), 'hang' stops answering; in a process group of its own, as the main
    # job's baselines are (setsid)
    mkfifo cmd
    setsid bash -c 'while read -r w; do
        case $w in round) sleep 0.2; echo ok > done ;; hang) sleep 1000 ;; esac
    done' <cmd &
    local pid=$! t0 gid
    exec 9>cmd
    sleep 0.2
    gid=$(awk '{print $5}' "/proc/$pid/stat") # its process group (no procps needed)
    [ "$gid" = "$pid" ] || flunk "setsid did not make the stand-in a group leader: pgid $gid, pid $pid"
    echo stale > done
    run --separate-stderr bash "$h" done "$pid"
    expect_status 0
    [ "$(cat done)" = ok ] || flunk "DONE is the stale one: the hook did not wait for the round"
    rm -f done
    run --separate-stderr bash "$h" done "$pid"
    expect_status 0
    [ -e done ] || flunk "no DONE after the second round"
    # no answer: stopped at the timeout, the group killed
    echo hang >&9
    t0=$SECONDS
    BASELINE_ROUND_TIMEOUT=2 run --separate-stderr bash "$h" done "$pid"
    expect_status 1
    expect_in "$stderr" "no baseline round within 2 s (BASELINE_ROUND_TIMEOUT): the baselines were stopped"
    [ $((SECONDS - t0)) -lt 10 ] || flunk "the timeout took $((SECONDS - t0)) s"
    sleep 0.3
    ! kill -0 "$pid" 2>/dev/null || flunk "the stand-in still runs after the timeout"
    # gone: said, exit 1
    exec 9>&-
    exec 9>/dev/null
    run --separate-stderr bash "$h" done "$pid"
    expect_status 1
    expect_in "$stderr" "baseline_round.sh: the baselines' process ended during its round"
    exec 9>&-
}

@test "a backend that fails in any round takes no more rounds and is stored crashed in every mode; a wrong gate is never timed" {
    py <<'PY' || flunk "see above"
import math
import sdpa_baseline as sb
names, modes = ["flash", "efficient", "cudnn"], ["hot", "cold"]
calls = []
def measure(n, mo, r):
    calls.append((r, n, mo))
    if (r, n, mo) == (1, "cudnn", "hot"):
        raise RuntimeError("CUDA error: an illegal memory access was encountered\nmore text")
    if (r, n, mo) == (2, "efficient", "cold"):
        return dict(sb.timing_of([]), median_us=math.nan)
    return sb.timing_of([20.0, 20.5, 19.5])
timings, failed = sb.measure_rounds(names, modes, 3, measure, sleep=lambda s: None)
# cudnn: nothing after its failure (not even its cold mode of that round)
assert (1, "cudnn", "cold") not in calls and not any(c[0] == 2 and c[1] == "cudnn" for c in calls)
# round 3 rotates what is left (flash, efficient) by 2 * 2 // 3 = 1
assert [c for c in calls if c[0] == 2] == [(2, "efficient", "hot"), (2, "efficient", "cold"),
                                           (2, "flash", "hot"), (2, "flash", "cold")], calls
assert failed["cudnn"] == ("round 2 of 3, mode hot: CUDA error: an illegal memory access was "
                           "encountered"), failed
assert failed["efficient"].startswith("round 3 of 3, mode cold: the round's median nan us"), failed
assert sorted(failed) == ["cudnn", "efficient"]
# an error that is not PyTorch's (a bug here) is not a crashed baseline
def buggy(n, mo, r):
    raise KeyError("median_us")
try:
    sb.measure_rounds(names, modes, 2, buggy, sleep=lambda s: None)
    raise AssertionError("a KeyError was taken for a crash")
except KeyError:
    pass
# the records: a wrong gate in every mode, untimed
gates = {"flash": ("ok", "", (1e-4, 2e-3)), "efficient": ("ok", "", (1e-4, 2e-3)),
         "cudnn": ("ok", "", (1e-4, 2e-3))}
recs = sb.build_records(names, modes, "Test GPU", sb.parse_problem("4,8,512,64", False), gates,
                        timings, failed, {}, {}, 0.007)
by = {(r["key"]["config"], r["key"]["mode"]): r for r in recs}
assert len(recs) == 6 and [r["key"]["config"] for r in recs][::2] == [
    "sdpa-flash", "sdpa-efficient", "sdpa-cudnn"]
for mo in modes:
    for n in ("cudnn", "efficient"):
        r = by[("sdpa-" + n, mo)]
        assert r["status"] == "crashed", r
        assert r["error"] == "timing failed in " + failed[n], r["error"]
        t = r["time"]
        assert t["round_us"] == [] and t["ci_lo_us"] is None and t["median_us"] == 0, t
        assert r["errors"] == {"rel_l2": 1e-4, "max_abs": 2e-3}  # the gate's numbers stay
    assert by[("sdpa-flash", mo)]["status"] == "ok"
    assert len(by[("sdpa-flash", mo)]["time"]["round_us"]) == 3
gates["efficient"] = ("wrong", "rel_l2 9.000e-02 over the tolerance 5.000e-03", (0.09, 0.5))
seen = []
def m2(n, mo, r):
    seen.append(n)
    return sb.timing_of([20.0, 20.5, 19.5])
ok = [n for n in names if gates[n][0] == "ok"]  # what main times
timings, failed = sb.measure_rounds(ok, modes, 2, m2, sleep=lambda s: None)
assert "efficient" not in seen
recs = sb.build_records(names, modes, "Test GPU", sb.parse_problem("4,8,512,64", False), gates,
                        timings, failed, {}, {}, 0.007)
for r in recs:
    if r["key"]["config"] == "sdpa-efficient":
        assert r["status"] == "wrong" and r["error"].startswith("rel_l2 9.000e-02"), r
        assert r["time"]["round_us"] == [] and r["errors"]["rel_l2"] == 0.09
    else:
        assert r["status"] == "ok" and len(r["time"]["round_us"]) == 2, r
PY
}

@test "a record from its rounds: median_us the mean of the round medians, round_us in order, the interval around it from the run's pool" {
    py <<'PY' || flunk "see above"
import json, math
import rounds
import sdpa_baseline as sb
def burst(median, mn, mean, samples, noise):
    return {"median_us": median, "min_us": mn, "mean_us": mean, "stdev_us": 0.3, "cv": 0.3 / mean,
            "noise": noise, "samples": samples, "launches": 1}
R = {("flash", "hot"): [burst(40.0, 39.5, 40.1, 50, 0.002), burst(40.4, 39.9, 40.5, 60, 0.003),
                        burst(39.8, 39.2, 39.85, 70, 0.001)],
     ("efficient", "hot"): [burst(95.0, 94.0, 95.2, 40, 0.002), burst(96.1, 95.0, 96.3, 40, 0.002),
                            burst(94.6, 94.1, 94.7, 40, 0.004)],
     ("flash", "cold"): [burst(44.0, 43.0, 44.2, 30, 0.01), burst(45.5, 44.0, 45.6, 30, 0.01),
                         burst(44.9, 44.1, 45.0, 30, 0.01)],
     ("efficient", "cold"): [burst(101.0, 100.0, 101.2, 30, 0.01),
                             burst(100.2, 99.8, 100.4, 30, 0.01),
                             burst(103.1, 102.0, 103.3, 30, 0.01)]}
names, modes = ["flash", "efficient"], ["hot", "cold"]
gates = {n: ("ok", "", (3e-4, 4e-3)) for n in names}
env = {(n, mo): {"host": "h-" + n + mo} for n in names for mo in modes}
prov = {(n, mo): {"timestamp": 1.7e9} for n in names for mo in modes}
prob = sb.parse_problem("4,8,512,64", False)
recs = sb.build_records(names, modes, "Test GPU", prob, gates, R, {}, env, prov, 0.007)
by = {(r["key"]["config"][5:], r["key"]["mode"]): r for r in recs}
for (n, mo), ts in R.items():
    r = by[(n, mo)]
    t = r["time"]
    assert r["status"] == "ok" and r["kind"] == "baseline" and r["key"]["build"] == "baseline"
    med = [b["median_us"] for b in ts]
    assert t["round_us"] == med, t
    assert t["median_us"] == (med[0] + med[1] + med[2]) / 3 == rounds.estimate(med), t
    assert t["min_us"] == min(b["min_us"] for b in ts)
    assert t["samples"] == sum(b["samples"] for b in ts)
    for f in ("mean_us", "stdev_us", "cv", "noise", "launches"):  # the last round's burst
        assert t[f] == ts[-1][f], (f, t)
    assert r["tflops"] == prob["flops"] / (t["median_us"] * 1e-6) * 1e-12
    assert r["env"] == env[(n, mo)] and r["errors"] == {"rel_l2": 3e-4, "max_abs": 4e-3}
    # the interval: this mode's records pooled in key order (sdpa-efficient before sdpa-flash)
    pool, groups = [], 0
    for n2 in ("efficient", "flash"):
        rounds.pool_add([b["median_us"] for b in R[(n2, mo)]], pool)
        groups += 1
    lo, hi = rounds.interval(3, pool, groups, 0.007)
    want = (t["median_us"] * (1 + lo), t["median_us"] * (1 + hi))
    assert (t["ci_lo_us"], t["ci_hi_us"]) == want, (t, want)
    assert 0 < t["ci_lo_us"] < t["median_us"] < t["ci_hi_us"], t
    # 6 residuals of 2 records: widened by t(4) / 1.96, and at least the floor
    assert (t["ci_hi_us"] - t["median_us"]) / t["median_us"] >= 0.007
# the modes are separate groups: cold's wider rounds do not widen hot
hot = by[("flash", "hot")]["time"]
cold = by[("flash", "cold")]["time"]
rel = lambda t: (t["ci_hi_us"] - t["ci_lo_us"]) / t["median_us"]
assert rel(hot) < rel(cold), (hot, cold)
# one round: that round alone, and nothing to pool: no interval (null), as the engine
one = {k: v[:1] for k, v in R.items()}
for r in sb.build_records(names, modes, "Test GPU", prob, gates, one, {}, env, prov, 0.007):
    t = r["time"]
    assert t["round_us"] == [t["median_us"]] and t["ci_lo_us"] is None and t["ci_hi_us"] is None, t
    assert t["samples"] == one[(r["key"]["config"][5:], r["key"]["mode"])][0]["samples"]
# rounds so far apart that the lower end would be no time: the least time a record holds
# (rounds_interval_us's rule, as the engine), the upper end kept, nothing to say
wide = {("flash", "hot"): [burst(10.0, 9, 10, 10, 0.01), burst(30.0, 29, 30, 10, 0.01)]}
said = []
r, = sb.build_records(["flash"], ["hot"], "Test GPU", prob, gates, wide, {}, {}, {}, 0.007,
                      warn=said.append)
t = r["time"]
assert t["ci_lo_us"] == 1e-6 and t["median_us"] == 20.0 < t["ci_hi_us"] < 1e6 * 20.0, r
assert not said, said
# JSON lines: no NaN, nulls for no number
line = sb.json_lines([dict(r, tflops=math.nan)])
assert "NaN" not in line and json.loads(line)["tflops"] is None
# the error field is cut to 255 bytes on a character boundary
e = sb.record(r["key"], "crashed", "\u00e9" * 200, None, (None, None), {}, {}, prob)["error"]
assert len(e.encode()) <= 255 and e == "\u00e9" * 127, len(e.encode())
PY
}

@test "the baselines' estimate and interval are store/rounds.c's, to the last digit" {
    cat >"$WORK/drv.c" <<'C'
#include <stdio.h>
#include "store/rounds.h"
/* stdin: FLOOR, then one record a line in key order: N R1..RN. Prints each
 * record's estimate and interval as sweep/intervals.c computes them. */
int main(void)
{
    static double r[64][8], pool[512];
    int n[64], k = 0, npool = 0, groups = 0;
    double floor;
    if (scanf("%lf", &floor) != 1)
        return 2;
    while (k < 64 && scanf("%d", &n[k]) == 1) {
        for (int i = 0; i < n[k]; i++)
            if (scanf("%lf", &r[k][i]) != 1)
                return 2;
        k++;
    }
    for (int i = 0; i < k; i++)
        if (n[i] >= 2) {
            rounds_pool_add(r[i], n[i], pool, &npool);
            groups++;
        }
    for (int i = 0; i < k; i++) {
        double est = rounds_estimate(r[i], n[i]), lo, hi;
        if (rounds_interval(n[i], pool, npool, groups, floor, &lo, &hi))
            printf("%.17g none none\n", est);
        else
            printf("%.17g %.17g %.17g\n", est, est * (1 + lo), est * (1 + hi));
    }
    return 0;
}
C
    cc -std=c11 -O1 -I"$REPO" "$WORK/drv.c" "$REPO/store/rounds.c" -lm -o "$WORK/drv" ||
        flunk "could not build the driver"
    local n
    for n in 1 2 3 5 8; do
        python3 "$REPO/tests/cli/baseline_gen.py" "b$n.jsonl" "$n" || flunk "baseline_gen.py $n"
        py "$WORK/drv" "b$n.jsonl" "$n" <<'PY' || flunk "rounds $n: see above"
import json, subprocess, sys
import sdpa_baseline as sb
drv, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
recs = [json.loads(l) for l in open(path)]
modes = sorted({r["key"]["mode"] for r in recs})
checked = 0
for mo in modes:
    g = sorted((r for r in recs if r["status"] == "ok" and r["key"]["mode"] == mo),
               key=lambda r: sb.store_key(r["key"]).encode())
    text = "0.007\n" + "".join("%d %s\n" % (len(r["time"]["round_us"]),
                                             " ".join(repr(u) for u in r["time"]["round_us"]))
                               for r in g)
    out = subprocess.run([drv], input=text, capture_output=True, text=True, check=True).stdout
    for r, line in zip(g, out.splitlines()):
        est, lo, hi = line.split()
        t = r["time"]
        assert len(t["round_us"]) == n, t
        assert float(est) == t["median_us"], (mo, r["key"]["config"], est, t["median_us"])
        want = (None, None) if lo == "none" else (float(lo), float(hi))
        assert want == (t["ci_lo_us"], t["ci_hi_us"]), (mo, r["key"]["config"], line, t)
        assert (lo == "none") == (n == 1), line  # one round in every record: nothing to pool
        checked += 1
# flash and efficient in each mode (cudnn fails in round 2 when there is one)
assert checked == (6 if n >= 2 else 9), checked
PY
    done
}

@test "the baseline records are accepted by fasweep import, read back the same, and give topk a two-sided speedup interval" {
    need_fasweep
    python3 "$REPO/tests/cli/baseline_gen.py" base.jsonl 3 || flunk "baseline_gen.py"
    grep -c . base.jsonl | grep -qx 9 || flunk "expected 9 records: $(cat base.jsonl)"
    run --separate-stderr "$FASWEEP" import base.jsonl --store "$STORE"
    expect_status 0
    expect_in "$output" "imported 9 records"
    # a kernel of the same group, with an interval, for the speedup
    python3 - <<'PY' >kern.jsonl
import json
print(json.dumps({"key": {"device": "Test GPU", "problem": "b4.h8.s512.d64.nc",
                          "build": "5e1f0c2a9b3d4e67", "config": "d64.m64.n64.w4.s2.z1",
                          "mode": "hot"}, "kind": "kernel", "status": "ok",
                  "time": {"median_us": 30.0, "min_us": 29.5, "mean_us": 30.1, "samples": 90,
                           "ci_lo_us": 29.7, "ci_hi_us": 30.4, "round_us": [30.1, 29.8, 30.1]},
                  "schema": 1}))
PY
    "$FASWEEP" import kern.jsonl --store "$STORE" >/dev/null || flunk "importing the kernel record"
    "$FASWEEP" export --format jsonl --store "$STORE" -o exp.jsonl || flunk "export"
    "$FASWEEP" topk --json --no-seeds --mode hot --store "$STORE" >topk.json || flunk "topk"
    python3 - <<'PY' || flunk "see above"
import json
mine = {json.dumps(r["key"], sort_keys=True): r for r in map(json.loads, open("base.jsonl"))}
back = {json.dumps(r["key"], sort_keys=True): r for r in map(json.loads, open("exp.jsonl"))
        if r["kind"] == "baseline"}
assert set(mine) == set(back), (sorted(mine), sorted(back))
for k, r in mine.items():
    b = back[k]
    assert b["status"] == r["status"], (k, b["status"])
    for f in ("median_us", "min_us", "mean_us", "samples", "launches", "ci_lo_us", "ci_hi_us",
              "round_us"):
        assert b["time"][f] == r["time"][f], (k, f, b["time"][f], r["time"][f])
    if r["status"] == "ok":
        assert len(r["time"]["round_us"]) == 3 and r["time"]["ci_lo_us"] < r["time"]["median_us"]
g, = json.load(open("topk.json"))["groups"]
base = [r for r in mine.values() if r["key"]["mode"] == "hot" and r["status"] == "ok"]
best = min(base, key=lambda r: r["time"]["median_us"])
assert g["baseline"]["name"] == best["key"]["config"] == "sdpa-flash", g["baseline"]
if "ci_lo_us" in g["baseline"]:  # topk prints the baseline's interval too
    assert (g["baseline"]["ci_lo_us"], g["baseline"]["ci_hi_us"]) == (
        best["time"]["ci_lo_us"], best["time"]["ci_hi_us"]), g["baseline"]
m = g["seeds"][0]["metrics"]
bt = best["time"]
close = lambda a, b: abs(a - b) <= 1e-9 * abs(b)
assert close(m["speedup_vs_baseline"], bt["median_us"] / 30.0), m
assert close(m["speedup_lo"], bt["ci_lo_us"] / 30.4), m
assert close(m["speedup_hi"], bt["ci_hi_us"] / 29.7), m
assert m["speedup_lo"] < m["speedup_vs_baseline"] < m["speedup_hi"], m
PY
}

# stand_in_torch DIR: a torch package in DIR that "sees a GPU": every tensor
# op gives a tensor whose value (float(), the gate's rel_l2 and max_abs) is
# the value of the tensor it came from (SDPA's outputs 0: right; $BAD_SDPA
# names a backend whose output is 1: wrong), CUDA events 10 us apart, each
# SDPA call counted in $WORK/calls. Enough for sdpa_baseline.py's main().
stand_in_torch() {
    mkdir -p "$1/torch/nn"
    cat >"$1/torch/__init__.py" <<'PY'
__version__ = "2.5.1+stand-in"
float32, float16, bfloat16, uint8, bool = "float32", "float16", "bfloat16", "uint8", "bool"


class T:
    def __init__(self, shape=(), dtype="float32", val=0.0):
        self.shape, self.dtype, self.val = tuple(shape), dtype, val

    def __getattr__(self, name):  # mul_, to, float, double, clone, norm, abs, max, fill_ ...
        return lambda *a, **k: T(self.shape, a[0] if name == "to" else self.dtype, self.val)

    def __getitem__(self, i):
        return self

    def __setitem__(self, i, v):
        pass

    __sub__ = __truediv__ = __mul__ = __invert__ = lambda self, *o: T(self.shape, self.dtype,
                                                                      self.val)

    def __float__(self):
        return float(self.val)

    def __bool__(self):
        return True


def rand(shape, generator=None, device=None, dtype=None):
    return T(shape, dtype)


def empty(shape, dtype=None, device=None):
    return T(shape if isinstance(shape, tuple) else (shape,), dtype)


def ones(*shape, dtype=None, device=None):
    return T(shape, dtype)


def matmul(a, b):
    return T(a.shape, a.dtype, a.val)


def softmax(x, dim=-1):
    return x


def isfinite(x):
    return x


def device(kind, idx=0):
    return "%s:%d" % (kind, idx)


class Generator:
    def __init__(self, device=None):
        pass

    def manual_seed(self, s):
        return self


from . import cuda, version, nn  # noqa: E402
PY
    cat >"$1/torch/version.py" <<'PY'
cuda = "12.4"
PY
    cat >"$1/torch/cuda.py" <<'PY'
class _Props:
    major, minor, multi_processor_count, uuid = 9, 0, 132, "stand-in"
    L2_cache_size, clock_rate = 50 << 20, 1980000
    pci_domain_id = pci_bus_id = pci_device_id = 0


def is_available():
    return True


def set_device(d):
    pass


def get_device_properties(d):
    return _Props()


def get_device_name(d=None):
    return "Stand-in GPU"


def synchronize():
    pass


def _sleep(cycles):
    pass


def current_stream():
    return None


class Event:
    def __init__(self, enable_timing=False):
        pass

    def record(self):
        pass

    def synchronize(self):
        pass

    def elapsed_time(self, other):
        return 0.01  # ms
PY
    cat >"$1/torch/nn/__init__.py" <<'PY'
from . import attention, functional  # noqa: F401
PY
    cat >"$1/torch/nn/attention.py" <<'PY'
import contextlib


class SDPBackend:
    FLASH_ATTENTION, EFFICIENT_ATTENTION, CUDNN_ATTENTION = "flash", "efficient", "cudnn"


CURRENT = [None]


@contextlib.contextmanager
def sdpa_kernel(b):
    CURRENT[0] = b
    yield
    CURRENT[0] = None
PY
    cat >"$1/torch/nn/functional.py" <<'PY'
import os
from .attention import CURRENT
import torch


def scaled_dot_product_attention(q, k, v, **kw):
    with open(os.environ["CALLS"], "a") as f:
        f.write("%s\n" % CURRENT[0])
    return torch.T(q.shape, q.dtype, 1.0 if CURRENT[0] == os.environ.get("BAD_SDPA") else 0.0)
PY
}

@test "triton backend: where Triton cannot run, one note line and no record; the SDPA backends are timed and recorded, exit 0 (a stand-in torch)" {
    need_fasweep
    stand_in_torch py
    local s="$REPO/scripts/sdpa_baseline.py" why
    # Triton missing, and Triton too old: each a note line, the other backends recorded
    mkdir -p notriton/triton old/triton
    printf 'raise ImportError("No module named triton (stand-in)")\n' >notriton/triton/__init__.py
    printf '__version__ = "2.1.0"\n' >old/triton/__init__.py
    : >old/triton/language.py
    for why in "notriton:import triton: No module named triton (stand-in)" \
        "old:triton 2.1.0 is older than 3.0"; do
        : >calls
        CALLS="$WORK/calls" PYTHONPATH="$WORK/${why%%:*}:$WORK/py" run --separate-stderr \
            python3 "$s" --problem 1,2,64,64 --fasweep "$FASWEEP" --modes hot,cold --rounds 2 \
            --round-pause 0 --flush fill -o out.jsonl
        expect_status 0
        [ "$stderr" = "sdpa_baseline: triton: not available (${why#*:})" ] ||
            { show_run; flunk "one note line expected"; }
        run python3 -c 'import json, sys
for l in open("out.jsonl"):
    r = json.loads(l)
    print(r["key"]["config"], r["key"]["mode"], r["status"], len(r["time"]["round_us"]),
          r["provenance"]["version"])'
        [ "$output" = "sdpa-flash hot ok 2 torch-2.5.1
sdpa-flash cold ok 2 torch-2.5.1
sdpa-efficient hot ok 2 torch-2.5.1
sdpa-efficient cold ok 2 torch-2.5.1
sdpa-cudnn hot ok 2 torch-2.5.1
sdpa-cudnn cold ok 2 torch-2.5.1" ] || { show_run; flunk "records"; }
        grep -q . calls || flunk "SDPA was not called"
    done
    # the records import; bench_table.py shows the Triton column as not available
    "$FASWEEP" import out.jsonl --store "$STORE" >/dev/null || flunk "import"
    "$FASWEEP" export --store "$STORE" -o e.jsonl || flunk "export"
    run --separate-stderr python3 "$REPO/scripts/bench_table.py" e.jsonl --fasweep "$FASWEEP"
    expect_status 0
    expect_in "$output" "Triton"
    printf '%s\n' "$output" | grep -qE '^  hot +[0-9.]+ .* n/a ' || { show_run; flunk "no n/a cell"; }
    expect_in "$output" "(Triton: n/a, not available: no ok Triton record in this export"
    # only triton asked for: exit 1, one line (this machine lacks it), nothing written
    CALLS="$WORK/calls" PYTHONPATH="$WORK/notriton:$WORK/py" run --separate-stderr \
        python3 "$s" --problem 1,2,64,64 --fasweep "$FASWEEP" --backends triton -o only.jsonl
    expect_status 1
    [ "$stderr" = "sdpa_baseline: triton: not available (import triton: No module named triton (stand-in)): no backend left to time (--backends)" ] ||
        { show_run; flunk "one line expected"; }
    [ ! -s only.jsonl ] || flunk "records written"
    # a head dim the kernel has no tiles for: a note, triton not probed
    CALLS="$WORK/calls" PYTHONPATH="$WORK/notriton:$WORK/py" run --separate-stderr \
        python3 "$s" --problem 1,2,64,96 --fasweep "$FASWEEP" --backends flash,triton \
        --modes hot --rounds 1 --flush fill -o d96.jsonl
    expect_status 0
    [ "$stderr" = "sdpa_baseline: the triton backend has head dims 64, 128, 256, not 96: not timed for b1.h2.s64.d96.nc" ] ||
        { show_run; flunk "one note line expected"; }
    [ "$(grep -c sdpa-flash d96.jsonl)" -eq 1 ] && ! grep -q '"triton"' d96.jsonl ||
        flunk "records: $(cat d96.jsonl)"
    expect_not_in "$output$stderr" "Traceback"
}

@test "triton backend: the same gate as SDPA's, its first call (the autotuning one) untimed; wrong is stored wrong and never timed; its records' config is triton, bench_table.py's Triton column" {
    need_fasweep
    stand_in_torch py
    CALLS="$WORK/calls" PYTHONPATH="$REPO/scripts:$WORK/py" python3 - "$FASWEEP" <<'PY' || flunk "see above"
import json, os, sys
import sdpa_baseline as sb
import bench_table
import torch
import triton_attention  # its shape_of (pure: no Triton needed)

FASWEEP = sys.argv[1]


class Tri:  # a stand-in scripts/triton_attention.py
    class triton:
        __version__ = "3.1.0"

    def __init__(self, val, boom=None):
        self.val, self.boom, self.calls, self.log = val, boom, 0, []

    shape_of = staticmethod(triton_attention.shape_of)  # the real one: pure
    tune_ms = staticmethod(triton_attention.tune_ms)  # pure too

    def precompile_shapes(self, shapes, device=0):
        self.log.append("precompile")
        self.shapes = shapes
        return 3, []

    def attention(self, q, k, v, causal, scale):
        self.calls += 1
        self.log.append("call")
        if self.boom:
            raise self.boom
        return torch.T(q.shape, q.dtype, self.val)

    def best_config(self, q, k, v, causal):
        return (128, 64, 8, 3)


def run(tri, extra=()):
    sb.triton_probe = lambda: (tri, "")
    sys.argv = ["sdpa_baseline.py", "--problem", "1,4:2,64,128,bf16", "--causal", "--fasweep",
                FASWEEP, "--modes", "hot,cold", "--rounds", "2", "--round-pause", "0",
                "--flush", "fill", "-o", "out.jsonl"] + list(extra)
    sb.main()
    return [json.loads(l) for l in open("out.jsonl")]


# right: gated once, then timed in both modes and rounds, as "triton"
tri = Tri(0.0)
recs = run(tri)
got = [(r["key"]["config"], r["key"]["mode"], r["status"]) for r in recs]
# grouped-query: the efficient backend is left out (its note), triton reads K/V in place
assert got == [(c, m, "ok") for c in ("sdpa-flash", "sdpa-cudnn", "triton")
               for m in ("hot", "cold")], got
t = [r for r in recs if r["key"]["config"] == "triton"]
assert all(r["provenance"]["version"] == "triton-3.1.0" for r in t), t
assert all(len(r["time"]["round_us"]) == 2 and r["kind"] == "baseline" for r in t), t
assert all(r["key"]["problem"] == "b1.h4.kv2.s64.d128.c.bf16" for r in t), t
assert tri.calls > 1  # the gate, then the timed calls
# its configs precompiled once, before the gate's (autotuning) call
assert tri.log[:2] == ["precompile", "call"] and tri.log.count("precompile") == 1, tri.log
assert tri.shapes == [(1, 4, 2, 64, 128, True, True)], tri.shapes  # b, h, kv, s, d, causal, bf16
os.rename("out.jsonl", "ok.jsonl")

# several problems in one process: one precompile for all, each problem's records in turn
tri = Tri(0.0)
recs = run(tri, ["--problem", "2,4,32,64", "--backends", "flash,triton"])
got = [(r["key"]["problem"], r["key"]["config"]) for r in recs if r["key"]["mode"] == "hot"]
assert got == [("b1.h4.kv2.s64.d128.c.bf16", "sdpa-flash"), ("b1.h4.kv2.s64.d128.c.bf16", "triton"),
               ("b2.h4.s32.d64.c", "sdpa-flash"), ("b2.h4.s32.d64.c", "triton")], got
assert tri.log.count("precompile") == 1 and len(tri.shapes) == 2, (tri.log, tri.shapes)
assert all(r["status"] == "ok" and len(r["time"]["round_us"]) == 2 for r in recs), recs

# --precompiled (baselines.sh compiled every problem's configs already): none here
tri = Tri(0.0)
run(tri, ["--precompiled"])
assert "precompile" not in tri.log and tri.calls > 1, tri.log

# wrong: stored wrong in every mode, with the gate's errors, and called once only (the gate)
tri = Tri(1.0)
recs = run(tri)
t = [r for r in recs if r["key"]["config"] == "triton"]
assert [(r["key"]["mode"], r["status"]) for r in t] == [("hot", "wrong"), ("cold", "wrong")], t
assert all("rel_l2 1.000e+00 over the tolerance" in r["error"] for r in t), t
assert all(r["errors"]["rel_l2"] == 1.0 and r["time"]["median_us"] == 0 for r in t), t
assert tri.calls == 1, tri.calls
assert [r["status"] for r in recs if r["key"]["config"] != "triton"] == ["ok"] * 4

# Triton's own errors (not RuntimeError: a compile error, out of resources) are "crashed"
class OutOfResources(Exception):
    pass


tri = Tri(0.0, OutOfResources("out of resource: shared memory, Required: 300000\nmore"))
recs = run(tri, ["--backends", "triton,flash"])
t = [r for r in recs if r["key"]["config"] == "triton"]
assert [r["status"] for r in t] == ["crashed"] * 2, t
assert t[0]["error"] == ("backend triton cannot run this problem here: out of resource: "
                         "shared memory, Required: 300000"), t[0]["error"]
assert tri.calls == 1

# bench_table.py's Triton column is this config
assert ("triton", "Triton") in bench_table.PEERS
for n, c in sb.CONFIG_NAMES.items():
    assert sum(c.startswith(base) for base, _ in bench_table.PEERS) == 1, (n, c)
assert sb.DEFAULT_BACKENDS.split(",") == list(sb.BACKENDS)
PY
    # the triton records import and fill bench_table.py's Triton column
    "$FASWEEP" import ok.jsonl --store "$STORE" >/dev/null || flunk "import"
    "$FASWEEP" export --store "$STORE" -o e.jsonl || flunk "export"
    run --separate-stderr python3 "$REPO/scripts/bench_table.py" e.jsonl --fasweep "$FASWEEP" \
        --json t.json
    expect_status 0
    expect_not_in "$output" "n/a"
    python3 -c 'import json, sys
rows = json.load(open("t.json"))["rows"]
assert rows and all(r["configs"]["Triton"] == "triton" and r["us"]["Triton"] > 0 for r in rows), rows' ||
        flunk "no Triton times: $(cat t.json)"
}

@test "triton backend: drop_unavailable and backends_for, pure (no PyTorch, no Triton)" {
    py <<'PY' || flunk "see above"
import sys
import sdpa_baseline as sb
assert "torch" not in sys.modules and "triton" not in sys.modules
probed = []
def no(why):
    return lambda: probed.append(1) or (None, why)
assert sb.drop_unavailable(["flash", "cudnn"], no("x")) == (["flash", "cudnn"], None, [])
assert not probed  # triton not asked for: not probed
names, mod, notes = sb.drop_unavailable(["flash", "triton", "cudnn"], no("import triton:\n  multi\tline"))
assert (names, mod) == (["flash", "cudnn"], None) and probed == [1]
assert notes == ["triton: not available (import triton: multi line)"], notes
m = object()
assert sb.drop_unavailable(["triton"], lambda: (m, "")) == (["triton"], m, [])
p = sb.parse_problem("b1.h32.kv8.s4096.d128.c.bf16", False)
keep, notes = sb.backends_for(sb.DEFAULT_BACKENDS.split(","), p)
assert keep == ["flash", "cudnn", "triton"] and len(notes) == 1, (keep, notes)
p = sb.parse_problem("4,8,512,32", False)
keep, notes = sb.backends_for(["flash", "triton"], p)
assert keep == ["flash"] and notes == ["the triton backend has head dims 64, 128, 256, not 32: "
                                       "not timed for b4.h8.s512.d32.nc"], notes
assert sb.record_key("d", p, "triton", "hot")["config"] == "triton"
assert sb.record_key("d", p, "cudnn", "hot")["config"] == "sdpa-cudnn"
# autotuning's benchmark budget: Triton's defaults, or the hook's two numbers
import triton_attention as ta
assert ta.tune_ms({}) == ta.tune_ms({ta.TUNE_ENV: ""}) == ta.TUNE_MS == (5.0, 25.0)
assert ta.tune_ms({ta.TUNE_ENV: "25,100"}) == (25.0, 100.0)
assert ta.tune_ms({ta.TUNE_ENV: " 2.5 , 30 "}) == (2.5, 30.0)
for bad in (" ", "5", "5,25,1", "0,25", "5,0", "5,inf", "a,b", "5,10000"):
    try:
        ta.tune_ms({ta.TUNE_ENV: bad})
        raise AssertionError("accepted %r" % bad)
    except ValueError as e:
        assert str(e).startswith("FASWEEP_TRITON_TUNE_MS=%r: expected WARMUP,REP" % bad), e
# the probe of this machine answers in one line, whatever is installed
mod, why = sb.triton_probe()
assert (mod is None) == bool(why) and "\n" not in why, why
PY
}
