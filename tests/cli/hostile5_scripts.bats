#!/usr/bin/env bats
# hostile5_scripts.bats - the fourth round of hostile input: the
# scripts: the benchmark and report scripts a lent GPU runs. Their standard:
# bad input is one line naming the file and exit 2; a failed measurement is
# exit 1 and never a pass (nothing measured is no verdict, a failed sweep
# has no wall time); untrusted text is escaped; no Python traceback; no hang.
# No GPU here: nvidia-smi, make, PyTorch and fasweep are stubs (a stand-in
# fasweep that sweeps a space into a JSONL "store" and exports it, or
# fails). Each test names the promise it keeps and failed on the code before
# its fix.

load helpers

# Stubs in $WORK/stub, first on PATH; $WORK/calls lists their calls.
#   fasweep: STUB=good (default) sweeps every problem x mode of the space,
#     8 configs with +-0.5 % intervals, the same in every run; fail: every
#     command exits 1; empty: grid ok, export prints nothing; half: only
#     the hot mode is measured; garbage: export prints a line that is not
#     JSON; allfailed: every record has status failed; store: a real store,
#     grid --devices D sleeps $STUB_SLEEP_D s and imports $WORK/grid-D.jsonl
#     into its --store (none when that is empty), export and topk are the real
#     fasweep's.
#   problem: the real fasweep's (REAL_FASWEEP), which the scripts read texts with.
#   nvidia-smi: a GPU (NGPU=n: n of them; NOGPU=1: none, exit 6).
#   torch (PYTHONPATH): importing it fails, as where PyTorch is missing.
stubs() {
    mkdir -p "$WORK/stub" "$WORK/py"
    # the interpreter itself, not a shim (pyenv's costs a shell per call)
    echo "#!$(python3 -c 'import sys; print(sys.executable)')" >"$WORK/stub/fasweep"
    cat >>"$WORK/stub/fasweep" <<'PY'
import json, os, sys
a = sys.argv[1:]
with open(os.environ["STUB_CALLS"], "a") as f:
    f.write("fasweep " + " ".join(a) + "\n")
opt = lambda n: a[a.index(n) + 1] if n in a else None
how = os.environ.get("STUB", "good")
if how == "fail":
    sys.exit("fasweep: no CUDA-capable device is detected (stub)")
cmd = a[0]
if how == "store" and cmd == "grid":  # a real store, of the fixture for these --devices
    import subprocess, time
    dev = opt("--devices")
    time.sleep(float(os.environ.get("STUB_SLEEP_" + dev, "0")))
    fix = os.path.join(os.path.dirname(os.environ["STUB_CALLS"]), "grid-%s.jsonl" % dev)
    n = sum(1 for line in open(fix) if line.strip())
    if n:  # an empty fixture: a grid that wrote no store
        subprocess.run([os.environ["REAL_FASWEEP"], "import", "--store", opt("--store"), fix],
                       check=True, stdout=subprocess.DEVNULL)
    print("sweep: %d tasks on Stub GPU: measured %d, skipped 0, wrong 0, crashed 0, timeout 0; "
          "rejected points 0" % (n, n))
    print("time: wall 1.00 s, timed 0.2500 s, overhead 4.0x")
elif how == "store" and cmd in ("export", "topk"):
    os.execv(os.environ["REAL_FASWEEP"], ["fasweep"] + a)
elif cmd == "grid":
    import time
    if how == "gridfail":
        sys.exit("fasweep: the sweep failed (stub)")
    time.sleep(float(os.environ.get("STUB_GRID_SLEEP", "0")))
    if opt("--between-rounds"):  # three rounds: the command after the first two
        import subprocess
        for r in (1, 2):
            with open(os.environ["STUB_CALLS"], "a") as f:
                f.write("grid round %d\n" % r)
            subprocess.run(["/bin/sh", "-c", opt("--between-rounds")], close_fds=False)
    space, store = json.load(open(opt("--space"))), opt("--store")
    recs = []
    for p in space["problems"]:
        prob = "b%d.h%d.s%d.d%d.%s" % (p["batch"], p["heads"], p["seq_len"], p["head_dim"],
                                       "c" if p.get("causal") else "nc")
        for m in space.get("measure", {}).get("modes", ["hot"]):
            if how == "half" and m != "hot":
                continue
            for i in range(8):
                us = 100 * (1 + 0.05 * i)
                recs.append({"key": {"device": "Stub GPU", "problem": prob, "build": "b",
                                     "config": "d64.m%d.n64.w4.s1.z0" % (16 * i + 16), "mode": m},
                             "kind": "kernel", "status": "failed" if how == "allfailed" else "ok",
                             "time": {"median_us": us, "ci_lo_us": us * 0.995,
                                      "ci_hi_us": us * 1.005, "noise": 0.001}})
    os.makedirs(store, exist_ok=True)
    with open(store + "/records.jsonl", "w") as f:
        f.write("".join(json.dumps(r) + "\n" for r in recs))
    print("sweep: %d points" % len(recs))
    with open(os.environ["STUB_CALLS"], "a") as f:
        f.write("grid done\n")
elif cmd == "export":
    store = opt("--store")
    if not os.path.exists(store + "/records.jsonl"):
        sys.exit("fasweep: %s: no such store (stub)" % store)
    text = {"empty": "", "garbage": "this is not JSON\n"}.get(how)
    if text is None:
        text = open(store + "/records.jsonl").read()
    if opt("-o"):
        open(opt("-o"), "w").write(text)
    else:
        sys.stdout.write(text)
elif cmd == "report":
    open(opt("-o"), "w").write("<html></html>\n")
elif cmd == "plan":  # the space's modes, as the real plan --json gives them
    space = json.load(open(opt("--space")))
    probs = [{"problem": "b%d.h%d.s%d.d%d.%s" % (q["batch"], q["heads"], q["seq_len"], q["head_dim"],
                                                 "c" if q.get("causal") else "nc")}
             for q in space["problems"]]
    print(json.dumps({"modes": space.get("measure", {}).get("modes", ["hot"]), "problems": probs}))
elif cmd == "version":
    print(json.dumps({"modes": ["hot", "cold", "batch"]}))
elif cmd == "problem":  # the problem texts: the real fasweep's reading
    os.execv(os.environ["REAL_FASWEEP"], ["fasweep"] + a)
else:  # topk, import
    print("%s: stub" % cmd)
PY
    printf '#!/bin/sh\necho "nvidia-smi $*" >>"%s"\n[ -z "$NOGPU" ] || { echo "No devices were found"; exit 6; }\ncase "$*" in *compute_cap*) echo 8.9 ;; *query-gpu*) echo "name, clocks.sm"; echo "Stub GPU, 1000 MHz" ;; *) i=0; while [ $i -lt ${NGPU:-1} ]; do echo "GPU $i: Stub GPU (UUID: GPU-$i)"; i=$((i+1)); done ;; esac\n' \
        "$WORK/calls" >"$WORK/stub/nvidia-smi"
    printf 'raise ImportError("No module named torch (stub)")\n' >"$WORK/py/torch.py"
    chmod +x "$WORK/stub/fasweep" "$WORK/stub/nvidia-smi"
    : >"$WORK/calls"
    export PATH="$WORK/stub:$PATH" PYTHONPATH="$WORK/py" STUB_CALLS="$WORK/calls"
    export REAL_FASWEEP=${REAL_FASWEEP:-$FASWEEP} FASWEEP="$WORK/stub/fasweep"
    unset NOGPU NGPU STUB MAKEFLAGS MFLAGS MAKELEVEL BUILD SPACE TOP
    export -n STORE # the tests' store, never the scripts' STORE=
}

# A copy of the scripts and spaces in $WORK/repo, for the scripts that build
# or write next to themselves (build/, the Makefile's folder): the checkout
# is never touched. make is a stub that records its call and, for a target
# .../fasweep or .../fa_bench, puts the stand-in there (FA_BENCH: its body).
mini_repo() {
    mkdir -p "$WORK/repo"
    cp -r "$REPO/scripts" "$REPO/spaces" "$WORK/repo/"
    rm -rf "$WORK/repo/scripts/__pycache__"
    cat >"$WORK/stub/make" <<SH
#!/bin/sh
echo "make \$*" >>"$WORK/calls"
for t in "\$@"; do
    case "\$t" in
    */fasweep) mkdir -p "\$(dirname "\$t")" && cp "$WORK/stub/fasweep" "\$t"
        # MAKE_WAIT_FOR=TEXT: the build lasts until a line of calls holds TEXT (10 s at most)
        i=0
        while [ -n "\$MAKE_WAIT_FOR" ] && ! grep -q "\$MAKE_WAIT_FOR" "$WORK/calls" && [ \$i -lt 100 ]; do
            sleep 0.1
            i=\$((i + 1))
        done
        echo "make done \$t" >>"$WORK/calls" ;;
    */fa_bench) mkdir -p "\$(dirname "\$t")" && printf '%s\n' "\${FA_BENCH:-#!/bin/sh}" >"\$t" && chmod +x "\$t" ;;
    */geninst) mkdir -p "\$(dirname "\$t")" &&
        printf '%s\n' "\${GENINST:-#!/bin/sh
exec python3 $WORK/stub/geninst.py \"\\\$@\"}" >"\$t" && chmod +x "\$t" ;;
    esac
done
exit 0
SH
    # geninst --check SPACE: the space's plan, as the real planner prints it
    cat >"$WORK/stub/geninst.py" <<'PY'
import json, sys
space = json.load(open(sys.argv[-1]))
probs = [{"problem": "b%d.h%d.s%d.d%d.%s" % (q["batch"], q["heads"], q["seq_len"], q["head_dim"],
                                             "c" if q.get("causal") else "nc"),
          "batch": q["batch"], "heads": q["heads"], "kv_heads": q["heads"], "seq_len": q["seq_len"],
          "head_dim": q["head_dim"], "causal": bool(q.get("causal")), "dtype": "fp16",
          "flops": 1, "bytes": 1} for q in space["problems"]]
print(json.dumps({"problems": probs, "modes": space.get("measure", {}).get("modes", ["hot"])}))
PY
    chmod +x "$WORK/stub/make"
}

no_traceback() {
    expect_not_in "$output${stderr:-}" "Traceback"
}

one_line() {
    [ "$(printf '%s' "$1" | wc -l)" -eq 0 ] || { show_run; flunk "one line expected"; }
}

# ---- 1: bench_fidelity.sh, nothing measured is never a PASS ------------------------------

@test "bench_fidelity: a fasweep that fails every step is exit 1 and FAIL, never PASS; the failed steps are named, no wall time" {
    stubs
    STUB=fail run --separate-stderr bash "$REPO/scripts/bench_fidelity.sh" out
    expect_status 1
    expect_not_in "$output" "PASS"
    expect_in "$output" "fidelity: FAIL"
    expect_in "$stderr" "big run a: grid: fasweep exited 1"
    expect_in "$stderr" "h100 whole sweep: grid: fasweep exited 1"
    no_traceback
    # a failed sweep took no measurable time: no wall time, not 0.0 s under the target
    [ "$(json_eval out/fidelity.json 'd["pass"]')" = false ] || flunk "fidelity.json passes"
    [ "$(json_eval out/fidelity.json 'd["h100_whole_wall_s"]')" = null ] || flunk "a wall time from a failed sweep"
    [ "$(json_eval out/fidelity.json 'd["spaces"][1]["wall_s"]')" = "[null, null]" ] ||
        flunk "l4 wall times: $(json_eval out/fidelity.json 'd["spaces"][1]["wall_s"]')"
}

@test "bench_fidelity: sweeps that exit 0 with empty exports are zero groups: FAIL, exit 1" {
    stubs
    STUB=empty run --separate-stderr bash "$REPO/scripts/bench_fidelity.sh" out
    expect_status 1
    expect_not_in "$output" "PASS"
    expect_in "$stderr" "big run a: export: the export holds no records: nothing was measured"
    expect_in "$output" "no group of ok kernel records in any input: nothing was measured, FAIL"
    no_traceback
    # records that all failed are nothing measured too
    STUB=allfailed run --separate-stderr bash "$REPO/scripts/bench_fidelity.sh" out
    expect_status 1
    expect_not_in "$output" "PASS"
}

@test "bench_fidelity: no GPU is one line and exit 1, before any sweep" {
    stubs
    NOGPU=1 run --separate-stderr bash "$REPO/scripts/bench_fidelity.sh" out
    expect_status 1
    expect_in "$stderr" "bench_fidelity.sh: no NVIDIA GPU found"
    one_line "$stderr"
    expect_not_in "$output" "PASS"
    ! grep -q '^fasweep' "$WORK/calls" || flunk "fasweep ran: $(cat "$WORK/calls")"
}

@test "bench_fidelity: a space measured in one of its three modes fails, naming the modes not measured" {
    stubs
    STUB=half run --separate-stderr bash "$REPO/scripts/bench_fidelity.sh" out
    expect_status 1
    expect_in "$output" "l4       b4.h8.s512.d64.nc      cold        0"
    expect_in "$output" "FAIL: not measured (no ok record in any input)"
    expect_in "$output" "fidelity: FAIL"
}

@test "bench_fidelity: an earlier PASS left in OUT is never this run's verdict (an export that is not JSON: FAIL)" {
    stubs
    run --separate-stderr bash "$REPO/scripts/bench_fidelity.sh" out
    expect_status 0 # the stand-in measures every group alike: the control
    expect_in "$output" "fidelity: PASS"
    STUB=garbage run --separate-stderr bash "$REPO/scripts/bench_fidelity.sh" out
    expect_status 1
    expect_not_in "$output" "PASS"
    expect_in "$stderr" "fidelity_report.py: out/big-a.sweep.jsonl:1: not JSON"
    no_traceback
}

@test "bench_fidelity: bad input (FASWEEP no executable, OUT a file) is one line and exit 2" {
    stubs
    FASWEEP=$WORK/nope run --separate-stderr bash "$REPO/scripts/bench_fidelity.sh" out
    expect_status 2
    expect_in "$stderr" "FASWEEP: $WORK/nope is not an executable file"
    one_line "$stderr"
    : >afile
    run --separate-stderr bash "$REPO/scripts/bench_fidelity.sh" afile
    expect_status 2
    expect_in "$stderr" "afile: cannot make or write this folder"
    one_line "$stderr"
}

@test "fidelity_report: four empty exports are no verdict: FAIL, exit 1, and the JSON says so" {
    : >e.jsonl
    run --separate-stderr python3 "$REPO/scripts/fidelity_report.py" e.jsonl e.jsonl e.jsonl \
        e.jsonl --json f.json
    expect_status 1
    expect_in "$output" "nothing was measured, FAIL"
    [ "$(json_eval f.json 'd["pass"]')" = false ] || flunk "f.json passes"
}

@test "fidelity_report: a group only run B measured fails; every (problem, mode) of --space must be measured" {
    python3 "$REPO/tests/cli/fidelity_gen.py" a 1 0,0.01 0.0
    python3 "$REPO/tests/cli/fidelity_gen.py" b 2 0,0.01 0.0
    run --separate-stderr python3 "$REPO/scripts/fidelity_report.py" a.sweep.jsonl \
        a.refined.jsonl b.sweep.jsonl b.refined.jsonl
    expect_status 0 # the control: both runs measured the one group alike
    # B measured a second problem that A never did
    sed 's/"4,8,512,64"/"4,8,1024,64"/' b.sweep.jsonl >>b.sweep.jsonl.2 &&
        cat b.sweep.jsonl b.sweep.jsonl.2 >b2.sweep.jsonl
    run --separate-stderr python3 "$REPO/scripts/fidelity_report.py" a.sweep.jsonl \
        a.refined.jsonl b2.sweep.jsonl b.refined.jsonl
    expect_status 1
    expect_in "$output" "4,8,1024,64"
    expect_in "$output" "FAIL  (refine's own rounds vs the sweep's: - %): not in a_sweep, a_refined, b_refined"
    # spaces/l4.json sweeps 4,8,512,64 in hot, cold and batch: hot alone is not the space
    run --separate-stderr python3 "$REPO/scripts/fidelity_report.py" a.sweep.jsonl \
        a.refined.jsonl b.sweep.jsonl b.refined.jsonl --space "$REPO/spaces/l4.json"
    expect_status 1
    expect_in "$output" "b4.h8.s512.d64.nc      cold        0"
    expect_in "$output" "b4.h8.s512.d64.nc      batch       0"
}

@test "fidelity_report: one of A's top-4 that B never measured fails the group" {
    python3 "$REPO/tests/cli/fidelity_gen.py" a 1 0,0.01 0.0
    python3 "$REPO/tests/cli/fidelity_gen.py" b 2 0,0.01 0.0
    grep -v '"d64.m16.n64.w4.s1.z0"' b.refined.jsonl >b2.refined.jsonl
    run --separate-stderr python3 "$REPO/scripts/fidelity_report.py" a.sweep.jsonl \
        a.refined.jsonl b.sweep.jsonl b2.refined.jsonl
    expect_status 1
    expect_in "$output" "1 of A's top-4 not measured in B"
}

@test "fidelity_report: bad input is one line naming the file, exit 2, no traceback" {
    : >e.jsonl
    run --separate-stderr python3 "$REPO/scripts/fidelity_report.py" e.jsonl e.jsonl e.jsonl nope.jsonl
    expect_status 2
    expect_in "$stderr" "fidelity_report.py: nope.jsonl: No such file or directory"
    one_line "$stderr"
    echo '{"key": {"device": "G", "problem": "p", "mode": "hot", "config": "c"}, "kind": "kernel", "status": "ok"}' >bad.jsonl
    echo 'not json' >>bad.jsonl
    run --separate-stderr python3 "$REPO/scripts/fidelity_report.py" e.jsonl bad.jsonl e.jsonl e.jsonl
    expect_status 2
    expect_in "$stderr" "fidelity_report.py: bad.jsonl:1: not an exported record"
    one_line "$stderr"
    sed -i 1d bad.jsonl
    run --separate-stderr python3 "$REPO/scripts/fidelity_report.py" e.jsonl bad.jsonl e.jsonl e.jsonl
    expect_status 2
    expect_in "$stderr" "bad.jsonl:1: not JSON"
    run --separate-stderr python3 "$REPO/scripts/fidelity_report.py" e.jsonl e.jsonl e.jsonl e.jsonl \
        --space e.jsonl
    expect_status 2
    expect_in "$stderr" "fidelity_report.py: fasweep: e.jsonl: the file is empty, expected a JSON object"
    no_traceback
}

# ---- 13a: bench_table.py, the problem text the store takes ----------------------------

@test "bench_table: a problem text the store takes but that is no B,H,S,D has no TF/s, no traceback; B,H,S,D has them" {
    # the store takes any key text without '|' or control characters
    python3 - "$FIX/results.jsonl" >in.jsonl <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
for p in ("4,8,512,64", "B=4, H=8, S=512, D=64", "b4.h8.s512.d64.nc.x", "b4.h8.s0512.d64.nc"):
    r["key"]["problem"] = p
    print(json.dumps(r))
PY
    "$FASWEEP" import in.jsonl --store "$STORE" >/dev/null || flunk "the store refused the problem texts"
    "$FASWEEP" export --store "$STORE" -o e.jsonl || flunk "export"
    run --separate-stderr python3 "$REPO/scripts/bench_table.py" e.jsonl --json t.json
    expect_status 0
    no_traceback
    expect_in "$output" "== 4,8,512,64"
    expect_in "$output" "152.10 (14 TF/s)" # 4,8,512,64 is grid/space.c's other spelling
    expect_in "$output" "== B=4, H=8, S=512, D=64"
    expect_in "$output" "(not a B,H,S,D problem text: no TF/s)"
    expect_in "$output" "== b4.h8.s0512.d64.nc" # a leading zero: space_problem_parse refuses it
    json_valid <t.json || flunk "t.json is not JSON: $(cat t.json)"
}

@test "bench_table: bad input is one line naming the file, exit 2; nothing ok to tabulate is exit 1; control characters escaped" {
    run --separate-stderr python3 "$REPO/scripts/bench_table.py" nope.jsonl
    expect_status 2
    expect_in "$stderr" "bench_table.py: nope.jsonl: No such file or directory"
    one_line "$stderr"
    printf '{"status": "ok", "kind": "kernel", "key": {}}\n' >bad.jsonl
    run --separate-stderr python3 "$REPO/scripts/bench_table.py" bad.jsonl
    expect_status 2
    expect_in "$stderr" "bench_table.py: bad.jsonl:1: not an exported record"
    one_line "$stderr"
    : >e.jsonl
    run --separate-stderr python3 "$REPO/scripts/bench_table.py" e.jsonl
    expect_status 1
    expect_in "$stderr" "nothing measured to tabulate"
    # a hand-made export may hold what the store refuses: shown escaped
    python3 - "$FIX/results.jsonl" >esc.jsonl <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
r["key"]["problem"] = "b4\x1b[2J"
print(json.dumps(r))
PY
    run --separate-stderr python3 "$REPO/scripts/bench_table.py" esc.jsonl
    expect_status 0
    expect_in "$output" 'b4\x1b[2J'
    expect_not_in "$output" $'\x1b'
    no_traceback
}

# ---- 13b: gpu_report.sh without a GPU ---------------------------------------------------

@test "gpu_report: no GPU is one line and exit 1, before building anything, no traceback" {
    stubs
    mini_repo
    NOGPU=1 run --separate-stderr bash "$WORK/repo/scripts/gpu_report.sh" out
    expect_status 1
    expect_in "$stderr" "gpu_report.sh: no NVIDIA GPU found on this machine"
    one_line "$stderr"
    no_traceback
    ! grep -q '^make' "$WORK/calls" || flunk "it built: $(cat "$WORK/calls")"
}

@test "gpu_report: sweeps that fail and PyTorch missing are named failures, exit 1, no traceback" {
    stubs
    mini_repo
    STUB=fail run --separate-stderr bash "$WORK/repo/scripts/gpu_report.sh" out
    expect_status 1
    no_traceback
    expect_in "$stderr" "gpu_report.sh: sweep a of spaces/l4.json (exit 1): FAIL"
    expect_in "$stderr" "gpu_report.sh: compare_sweeps.py --mode hot: FAIL"
    expect_in "$stderr" "gpu_report.sh: bench_vs_sdpa.sh"
    expect_in "$output" "PyTorch cannot run here"
    expect_in "$output" "gpu_report: FAIL"
    # every step measured: the SDPA benchmark still needs PyTorch, so still a failure
    run --separate-stderr bash "$WORK/repo/scripts/gpu_report.sh" out
    expect_status 1
    expect_in "$output" "PASS"
    expect_not_in "$stderr" "sweep a of spaces/l4.json"
    expect_in "$stderr" "gpu_report.sh: bench_vs_sdpa.sh (see"
    no_traceback
}

# ---- the audit: the other scripts, same standard ---------------------------------------

@test "compare_sweeps: two empty exports are nothing compared, exit 1; a group one sweep lacks and an unmeasured top-k config fail" {
    : >e.jsonl
    run --separate-stderr python3 "$REPO/scripts/compare_sweeps.py" e.jsonl e.jsonl
    expect_status 1
    expect_in "$output" "nothing measured to compare: FAIL"
    run --separate-stderr python3 "$REPO/scripts/compare_sweeps.py" e.jsonl "$FIX/results.jsonl"
    expect_status 1
    expect_in "$output" "FAIL"
    run --separate-stderr python3 "$REPO/scripts/compare_sweeps.py" "$FIX/results.jsonl" "$FIX/results.jsonl"
    expect_status 0 # the control
    # B lacks one of A's top configs (its top-1 agrees)
    grep -v '"d64.m64.n64.w4.s2.z1"' "$FIX/results.jsonl" >b.jsonl
    run --separate-stderr python3 "$REPO/scripts/compare_sweeps.py" "$FIX/results.jsonl" b.jsonl
    expect_status 1
    expect_in "$output" "1 of them not measured in B: FAIL"
    # the B-only group: A measured one device's groups, B every device's
    grep '"NVIDIA L4"' "$FIX/results.jsonl" >a.jsonl
    run --separate-stderr python3 "$REPO/scripts/compare_sweeps.py" a.jsonl "$FIX/results.jsonl"
    expect_status 1
    expect_in "$output" "missing from a.jsonl: FAIL"
}

@test "compare_sweeps --agreement: a point stored twice (another build) and a record count that differs fail; bad options are one line, exit 2" {
    run --separate-stderr python3 "$REPO/scripts/compare_sweeps.py" "$FIX/results.jsonl" "$FIX/results.jsonl" --mode all --agreement 4
    expect_status 0 # the control
    expect_in "$output" "NVIDIA L4 b4.h8.s512.d64.nc cold: top-1 A d64.m128.n64.w8.s2.z1 (169.900 us) B d64.m128.n64.w8.s2.z1 (169.900 us) agree; top-4 overlap 2 of 2"
    expect_in "$output" "agreement: 4 groups (mode all): top-1 agree 4, tie 0, differ 0; top-4 overlap 12 of 12 (100 %): PASS"
    { cat "$FIX/results.jsonl"; head -1 "$FIX/results.jsonl" | sed 's/"build":"5e1f0c2a9b3d4e67"/"build":"0123456789abcdef"/'; } >b.jsonl
    run --separate-stderr python3 "$REPO/scripts/compare_sweeps.py" "$FIX/results.jsonl" b.jsonl --mode all --agreement 4 --gpus 2
    expect_status 1
    expect_in "$output" "records: A 22, B 23: FAIL"
    expect_in "$output" "duplicates: A 0, B 1: FAIL"
    expect_in "$output" "GPU UUIDs (env.gpu_uuid): A 2, B 2: PASS"
    expect_in "$output" "top-1 agree 4, tie 0, differ 0; top-4 overlap 12 of 12 (100 %): FAIL"
    for bad in "--agreement 0" "--gpus 2" "--agreement 4 --gpus 0"; do
        run --separate-stderr python3 "$REPO/scripts/compare_sweeps.py" b.jsonl b.jsonl $bad
        expect_status 2
        expect_in "$stderr" "compare_sweeps.py: "
        one_line "$stderr"
    done
    no_traceback
}

@test "compare_sweeps --agreement: the intervals line: records whose medians tie, against --share; not judged without intervals" {
    run --separate-stderr python3 "$REPO/scripts/compare_sweeps.py" "$FIX/results.jsonl" "$FIX/results.jsonl" --mode all --agreement 4
    expect_status 0
    expect_in "$output" "intervals: no config measured in both has an interval in both (fewer than two rounds): not judged"
    # A: every record +-1 % around its median; B: the same, every fourth record 5 % slower
    # (no tie: 5 % > sqrt(2) %; 5 of the 13 ok kernel records), the rest 1 % faster (a tie)
    python3 - "$FIX/results.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
for name, shift in (("a", lambda i: 1.0), ("b", lambda i: 1.05 if i % 4 == 0 else 0.99)):
    with open(name + ".jsonl", "w") as f:
        for i, r in enumerate(recs):
            t = r["time"]
            t["median_us"] *= shift(i)
            t["ci_lo_us"], t["ci_hi_us"] = t["median_us"] * 0.99, t["median_us"] * 1.01
            f.write(json.dumps(r) + "\n")
            t["median_us"] /= shift(i)
PY
    run --separate-stderr python3 "$REPO/scripts/compare_sweeps.py" a.jsonl a.jsonl --mode all --agreement 4
    expect_status 0
    expect_in "$output" "intervals: 13 of 13 (config, mode) pairs tie by their 95 % intervals (100.0 %, at least 90 %): PASS; median half-width A 1.00 %, B 1.00 %"
    run --separate-stderr python3 "$REPO/scripts/compare_sweeps.py" a.jsonl b.jsonl --mode all --agreement 4
    expect_status 1
    expect_in "$output" "intervals: 8 of 13 (config, mode) pairs tie by their 95 % intervals (61.5 %, at least 90 %): FAIL"
    expect_in "$output" "(100 %): FAIL"
    run --separate-stderr python3 "$REPO/scripts/compare_sweeps.py" a.jsonl b.jsonl --mode all --agreement 4 --share 0.6
    expect_in "$output" "(61.5 %, at least 60 %): PASS"
    for bad in "--share 0" "--share 1.5" "--share x"; do
        run --separate-stderr python3 "$REPO/scripts/compare_sweeps.py" a.jsonl b.jsonl --agreement 4 $bad
        expect_status 2
        expect_in "$stderr" "compare_sweeps.py: "
        one_line "$stderr"
    done
    no_traceback
}

@test "compare_sweeps: bad input is one line naming the file, exit 2, no traceback" {
    echo '{"key": {"mode": "hot"}, "kind": "kernel", "status": "ok"}' >bad.jsonl
    run --separate-stderr python3 "$REPO/scripts/compare_sweeps.py" bad.jsonl "$FIX/results.jsonl"
    expect_status 2
    expect_in "$stderr" "compare_sweeps.py: bad.jsonl:1: not an exported record"
    one_line "$stderr"
    run --separate-stderr python3 "$REPO/scripts/compare_sweeps.py" nope.jsonl "$FIX/results.jsonl"
    expect_status 2
    expect_in "$stderr" "compare_sweeps.py: nope.jsonl: No such file or directory"
    run --separate-stderr python3 "$REPO/scripts/compare_sweeps.py" "$FIX/results.jsonl"
    expect_status 2
    one_line "$stderr"
    no_traceback
}

@test "bench_vs_sdpa: without PyTorch it says so in one line and exits 1 before sweeping; a SPACE that is no file is exit 2" {
    stubs
    run --separate-stderr bash "$REPO/scripts/bench_vs_sdpa.sh" "$REPO/spaces/l4.json" "$WORK/s/st.lmdb"
    expect_status 1
    expect_in "$stderr" "bench_vs_sdpa.sh: PyTorch cannot run here (ImportError: No module named torch (stub))"
    one_line "$stderr"
    no_traceback
    ! grep -q '^fasweep grid' "$WORK/calls" || flunk "it swept: $(cat "$WORK/calls")"
    run --separate-stderr bash "$REPO/scripts/bench_vs_sdpa.sh" nope.json "$WORK/s/st.lmdb"
    expect_status 2
    expect_in "$stderr" "bench_vs_sdpa.sh: nope.json: no such readable space file"
    one_line "$stderr"
    TABLE=fp32 run --separate-stderr bash "$REPO/scripts/bench_vs_sdpa.sh"
    expect_status 2
    expect_in "$stderr" "bench_vs_sdpa.sh: TABLE=fp32: not fp16, models or all"
    one_line "$stderr"
}

@test "baselines.sh: a SPACE that is no space file is one line and exit 2 (fasweep's own reading), PyTorch or not; no traceback" {
    local real=$FASWEEP
    stubs
    echo '{"problems": [{"batch": "4"}]}' >s.json
    run --separate-stderr bash "$REPO/scripts/baselines.sh" s.json "$STORE" "$real"
    expect_status 2
    expect_in "$stderr" "fasweep: s.json: name: missing required key"
    one_line "$stderr"
    run --separate-stderr bash "$REPO/scripts/baselines.sh" nope.json "$STORE" "$real"
    expect_status 2
    expect_in "$stderr" "fasweep: nope.json: cannot open: No such file or directory"
    no_traceback
    # BASELINE_GO other than stdin: one line, exit 2, nothing timed
    BASELINE_GO=pipe run --separate-stderr bash "$REPO/scripts/baselines.sh" "$REPO/spaces/l4.json" "$STORE" "$real"
    expect_status 2
    expect_in "$stderr" "baselines.sh: BASELINE_GO=pipe: only stdin (or unset)"
    one_line "$stderr"
    [ ! -e "$STORE.baselines.jsonl" ] || flunk "a baselines file was written"
    # BASELINE_READY without BASELINE_GO=stdin (no 'prepare' could come): the same
    BASELINE_READY=ready run --separate-stderr bash "$REPO/scripts/baselines.sh" "$REPO/spaces/l4.json" "$STORE" "$real"
    expect_status 2
    expect_in "$stderr" "baselines.sh: BASELINE_READY goes with BASELINE_GO=stdin"
    one_line "$stderr"
    [ ! -e "$STORE.baselines.jsonl" ] || flunk "a baselines file was written"
    # a good space without PyTorch: skipped, as documented (the sweep stands alone)
    run --separate-stderr bash "$REPO/scripts/baselines.sh" "$REPO/spaces/l4.json" "$STORE" "$real"
    expect_status 0
    expect_in "$stderr" "SDPA baselines skipped: PyTorch cannot run here"
}

@test "bench_devices: no GPU is one line, exit 1; a failed sweep shows why on stderr, exit 1, no ratio; bad SPACE exit 2" {
    stubs
    NOGPU=1 run --separate-stderr bash "$REPO/scripts/bench_devices.sh" "$REPO/spaces/l4.json"
    expect_status 1
    expect_in "$stderr" "bench_devices.sh: no NVIDIA GPU found"
    one_line "$stderr"
    STUB=fail run --separate-stderr bash "$REPO/scripts/bench_devices.sh" "$REPO/spaces/l4.json"
    expect_status 1
    expect_in "$stderr" "no CUDA-capable device is detected (stub)"
    expect_in "$stderr" "the sweep on --devices 0 failed (exit 1): no wall time"
    expect_not_in "$output" "ratio"
    run --separate-stderr bash "$REPO/scripts/bench_devices.sh" nope.json
    expect_status 2
    one_line "$stderr"
    run --separate-stderr bash "$REPO/scripts/bench_devices.sh" "$REPO/spaces/l4.json"
    expect_status 0 # the control
    expect_in "$output" "bench_devices: l4.json on 1 GPU"
    # the GPUs CUDA_VISIBLE_DEVICES leaves, not every GPU nvidia-smi lists
    NGPU=4 CUDA_VISIBLE_DEVICES=2,3 run --separate-stderr bash "$REPO/scripts/bench_devices.sh" \
        "$REPO/spaces/l4.json"
    expect_in "$output" "on 2 GPUs"
    expect_in "$output" "at most 0.55 on 2 GPUs"
    # CUDA stops at the first entry that names no GPU: 7 of 4, a UUID no GPU has, "1a"
    NGPU=4 CUDA_VISIBLE_DEVICES=" 1 ,GPU-2,7,2" run --separate-stderr bash \
        "$REPO/scripts/bench_devices.sh" "$REPO/spaces/l4.json"
    expect_in "$output" "on 2 GPUs"
    NGPU=4 CUDA_VISIBLE_DEVICES="1,GPU-x,2" run --separate-stderr bash \
        "$REPO/scripts/bench_devices.sh" "$REPO/spaces/l4.json"
    expect_in "$output" ", on 1 GPU "
    NGPU=4 CUDA_VISIBLE_DEVICES="1a,2" run --separate-stderr bash \
        "$REPO/scripts/bench_devices.sh" "$REPO/spaces/l4.json"
    expect_status 1
    expect_in "$stderr" "leaves none of the 4 GPUs visible"
    NGPU=4 CUDA_VISIBLE_DEVICES= run --separate-stderr bash "$REPO/scripts/bench_devices.sh" \
        "$REPO/spaces/l4.json"
    expect_status 1
    expect_in "$stderr" "leaves none of the 4 GPUs visible: nothing measured"
    one_line "$stderr"
}

# Two sweeps' fixtures (grid-0.jsonl, grid-all.jsonl in $WORK) of one H100
# problem in three modes, six configs each, +-0.5 % intervals: hot ranks alike
# in both; cold swaps its top two within their intervals (a tie in both);
# batch has another top-1 on all GPUs, far out of the intervals, and one of
# one GPU's top-4 out of the all-GPU top-4. The all-GPU records carry two
# GPU UUIDs.
devices_fixtures() {
    python3 - "$FIX/results.jsonl" "$WORK" <<'PY'
import json, sys
tpl = json.loads(open(sys.argv[1]).readline())
cfgs = ["d64.m64.n64.w4.s2.z1", "d64.m128.n64.w8.s2.z1", "d64.m64.n64.w4.s1.z1",
        "d64.m64.n32.w4.s2.z1", "d64.m64.n64.w4.s2.z0", "d64.m128.n128.w8.s2.z1"]
def us(run, mode, i):
    if mode == "cold" and i < 2:  # 100 and 100.4, swapped on all GPUs
        return 100 + 0.4 * (i if run == "0" else 1 - i)
    if mode == "batch" and run == "all" and i == 4:
        return 90.0
    return 100 + 5 * i
for run in ("0", "all"):
    with open("%s/grid-%s.jsonl" % (sys.argv[2], run), "w") as f:
        for mode in ("hot", "cold", "batch"):
            for i, c in enumerate(cfgs):
                r = json.loads(json.dumps(tpl))
                r["key"].update(device="NVIDIA H100 80GB HBM3", config=c, mode=mode)
                m = us(run, mode, i)
                r["time"].update(median_us=m, min_us=m * 0.99, mean_us=m * 1.002, ci_lo_us=m * 0.995,
                                 ci_hi_us=m * 1.005)
                r["env"]["gpu_uuid"] = "GPU-one" if run == "0" else "GPU-%s" % "ab"[i % 2]
                f.write(json.dumps(r) + "\n")
PY
}

@test "bench_devices: both sweeps ran: the stores compared per group (top-1 agree, tie or differ; top-4 overlap), the records' checks, the fixed cost, the target PASS or FAIL; exit 0 either way" {
    stubs
    devices_fixtures
    # 2 GPUs, the all-GPU sweep much faster: the target met
    STUB=store NGPU=2 STUB_SLEEP_0=1.5 STUB_SLEEP_all=0.2 \
        run --separate-stderr bash "$REPO/scripts/bench_devices.sh" "$REPO/spaces/l4.json"
    expect_status 0
    expect_in "$output" "  one: time: wall 1.00 s, timed 0.2500 s, overhead 4.0x"
    expect_in "$output" "  all: time: wall 1.00 s, timed 0.2500 s, overhead 4.0x"
    expect_in "$output" "bench_devices: l4.json on 1 GPU"
    expect_in "$output" "on 2 GPUs"
    expect_in "$output" "stores compared (A: --devices 0, B: --devices all; per GPU, problem, mode):"
    expect_in "$output" "NVIDIA H100 80GB HBM3 b4.h8.s512.d64.nc hot: top-1 A d64.m64.n64.w4.s2.z1 (100.000 us) B d64.m64.n64.w4.s2.z1 (100.000 us) agree; top-4 overlap 4 of 4"
    expect_in "$output" "cold: top-1 A d64.m64.n64.w4.s2.z1 (100.000 us) B d64.m128.n64.w8.s2.z1 (100.000 us) DIFFER, a tie by the 95 % intervals in A and B; top-4 overlap 4 of 4"
    expect_in "$output" "batch: top-1 A d64.m64.n64.w4.s2.z1 (100.000 us) B d64.m64.n64.w4.s2.z0 (90.000 us) DIFFER, not a tie (tie in A: no, in B: no); top-4 overlap 3 of 4"
    expect_in "$output" "records: A 18, B 18: PASS"
    expect_in "$output" "duplicates: A 0, B 0: PASS"
    expect_in "$output" "GPU UUIDs (env.gpu_uuid): A 1, B 2: PASS"
    expect_in "$output" "agreement: 3 groups (mode all): top-1 agree 1, tie 1, differ 1; top-4 overlap 11 of 12 (92 %): FAIL"
    [[ "$output" =~ "fixed cost: F = "-?[0-9]+\.[0-9]" s ("-?[0-9]+" % of wall_1), work W = "-?[0-9]+\.[0-9]" s (wall_1 = F + W, wall_2 = F + W/2)" ]] ||
        { show_run; flunk "no fixed cost line"; }
    [[ "$output" =~ "target: ratio 0."[0-9]+", at most 0.55 on 2 GPUs: PASS" ]] || { show_run; flunk "no PASS"; }
    no_traceback
    grep -q -- "--devices 0" "$WORK/calls" && grep -q -- "--devices all" "$WORK/calls" ||
        flunk "not both sweeps: $(cat "$WORK/calls")"
    # 4 GPUs listed, as slow as one and only two of them in the records: the
    # target missed and the UUIDs short, said, and still exit 0 (both ran)
    STUB=store NGPU=4 STUB_SLEEP_0=0.2 STUB_SLEEP_all=0.4 \
        run --separate-stderr bash "$REPO/scripts/bench_devices.sh" "$REPO/spaces/l4.json"
    expect_status 0
    expect_in "$output" "GPU UUIDs (env.gpu_uuid): A 1, B 2: FAIL (4 expected in B)"
    expect_in "$output" "wall_4 = F + W/4)"
    [[ "$output" =~ "target: ratio "[0-9]+\.[0-9]+", at most 0.30 on 4 GPUs: FAIL (missed)" ]] || { show_run; flunk "no FAIL"; }
    expect_not_in "$output" "PASS (missed)"
    # one GPU: no fixed cost, no target
    STUB=store STUB_SLEEP_0=0 STUB_SLEEP_all=0 \
        run --separate-stderr bash "$REPO/scripts/bench_devices.sh" "$REPO/spaces/l4.json"
    expect_status 0
    expect_in "$output" "fixed cost: not estimated (one GPU"
    expect_in "$output" "target: none for 1 GPU (<= 0.55 on 2 GPUs, <= 0.30 on 4)"
    # a sweep that left no store: the wall times, then the failed export, exit 1
    : >"$WORK/grid-all.jsonl"
    STUB=store NGPU=2 run --separate-stderr bash "$REPO/scripts/bench_devices.sh" "$REPO/spaces/l4.json"
    expect_status 1
    expect_in "$output" "bench_devices: l4.json on 1 GPU"
    expect_in "$stderr" "bench_devices.sh: the all-GPU store could not be exported"
    expect_not_in "$output" "agreement:"
    no_traceback
}

@test "bench_kernel_ab: a problem that is not B H S D [fa_bench args] is exit 2 before any build; a failed run is exit 1, the rest still run" {
    stubs
    mini_repo
    for p in "4 8 512" "4 8 512 *" "4 8 512 64 --rep 10" "4 x 512 64"; do
        run --separate-stderr bash "$WORK/repo/scripts/bench_kernel_ab.sh" "" -- "$p"
        expect_status 2
        expect_in "$stderr" "bench_kernel_ab.sh: problem '$p': not"
        one_line "$stderr"
    done
    ! grep -q '^make' "$WORK/calls" || flunk "it built: $(cat "$WORK/calls")"
    # variant 0's fa_bench fails (a CUDA error is its exit 1), variant 1's runs
    FA_BENCH='#!/bin/sh
case "$0" in *ab-0*) echo "CUDA error (stub)" >&2; exit 1 ;; esac
echo "fa_bench $*"' run --separate-stderr bash "$WORK/repo/scripts/bench_kernel_ab.sh" "-DA" "-DB" -- "4 8 512 64 --reps 3"
    expect_status 1
    expect_in "$stderr" "variant 0 on 4 8 512 64 --reps 3: fa_bench exited 1: FAIL"
    expect_in "$output" "fa_bench 4 8 512 64 --reps 3 --top 6"
}

@test "run_default_sweep: Triton's configs precompile while the kernels build, from the planner's problems; the baselines are told (--precompiled)" {
    stubs
    mini_repo
    printf '#!/bin/sh\nexit 0\n' >"$WORK/repo/scripts/deps.sh"
    # stand-ins: torch (a GPU, slow to import: it says when it is done) and triton import;
    # the precompile and sdpa_baseline.py record what they get
    mkdir -p py
    printf 'import time\ntime.sleep(1)\nopen("%s/calls", "a").write("torch imported\\n")\n__version__ = "2.5.1"\nclass cuda:\n    @staticmethod\n    def is_available():\n        return True\n' \
        "$WORK" >py/torch.py
    : >py/triton.py
    printf 'import sys\nimport torch, triton\nopen("%s/calls", "a").write("precompile " + " ".join(sys.argv[1:]) + " <" + sys.stdin.read() + ">\\n")\nprint("fasweep: triton: 7 configs of 1 problems precompiled in 0.1 s", file=sys.stderr)\n' \
        "$WORK" >"$WORK/repo/scripts/triton_attention.py"
    printf 'import sys\nopen("%s/calls", "a").write("sdpa_baseline " + " ".join(sys.argv[1:]) + "\\n")\n' \
        "$WORK" >"$WORK/repo/scripts/sdpa_baseline.py"
    GENINST='#!/bin/sh
echo "{\"problems\": [\"stub\"]}"' PYTHONPATH="$WORK/py" MAKE_WAIT_FOR=^precompile \
        run --separate-stderr bash "$WORK/repo/scripts/run_default_sweep.sh" build
    expect_status 0
    grep -q '^precompile --precompile <{"problems": \["stub"\]}>$' "$WORK/calls" ||
        flunk "precompile: $(cat "$WORK/calls")"
    # while the kernels' build ran (the stand-in make lasts until it has), and the
    # baselines were told
    [ "$(grep -n '^precompile' "$WORK/calls" | cut -d: -f1)" -lt "$(grep -n '^make done .*build/fasweep$' "$WORK/calls" | cut -d: -f1)" ] ||
        flunk "order: $(cat "$WORK/calls")"
    grep -q '^sdpa_baseline .*--precompiled' "$WORK/calls" || flunk "no --precompiled: $(cat "$WORK/calls")"
    expect_in "$stderr" "fasweep: triton: 7 configs of 1 problems precompiled in 0.1 s (while the build ran)"
    # what the precompile and the baselines' setup add after the kernels' build is a step
    [[ $stderr =~ "build "[0-9]+\.[0-9]" s, baselines' setup after the build "[0-9]+\.[0-9]" s, sweep and refine" ]] ||
        flunk "no setup step: $stderr"
    # torch imported once while the kernels built: by the precompile itself, no check before it
    [ "$(grep -c '^torch imported' "$WORK/calls")" -eq 1 ] || flunk "imports: $(cat "$WORK/calls")"
    # the kernels' build did not wait for torch's import (asked beside it, not before it)
    [ "$(grep -n '^make .*build/fasweep$' "$WORK/calls" | head -1 | cut -d: -f1)" -lt "$(grep -n '^torch imported' "$WORK/calls" | head -1 | cut -d: -f1)" ] ||
        flunk "the build waited for the import: $(cat "$WORK/calls")"
    # BASELINE_BACKENDS without triton: no precompile
    : >"$WORK/calls"
    BASELINE_BACKENDS=flash PYTHONPATH="$WORK/py" run --separate-stderr \
        bash "$WORK/repo/scripts/run_default_sweep.sh" build
    expect_status 0
    ! grep -q '^precompile' "$WORK/calls" || flunk "precompiled: $(cat "$WORK/calls")"
}

@test "run_default_sweep: the baselines' PyTorch import and setup run under the build, the sweep waits for them, and nothing of theirs runs fasweep before the sweep is done; a failed sweep leaves no baseline process" {
    stubs
    mini_repo
    printf '#!/bin/sh\nexit 0\n' >"$WORK/repo/scripts/deps.sh"
    # a stand-in torch: says when it is imported and when CUDA is first asked for (no GPU),
    # after half a second: a sweep that did not wait for the setup starts before that
    printf 'import time\nopen("%s/calls", "a").write("torch imported\\n")\n__version__ = "2.5.1"\nclass cuda:\n    @staticmethod\n    def is_available():\n        time.sleep(0.5)\n        open("%s/calls", "a").write("torch cuda\\n")\n        return False\n' \
        "$WORK" "$WORK" >"$WORK/py/torch.py"
    # the build lasts until the import is done (10 s at most): an import that waits for the
    # build comes after it
    BASELINE_BACKENDS=flash,efficient,cudnn STUB_GRID_SLEEP=2 MAKE_WAIT_FOR='^torch imported$' \
        run --separate-stderr bash "$WORK/repo/scripts/run_default_sweep.sh" build
    expect_status 0
    expect_in "$stderr" "fasweep: SDPA baselines skipped: PyTorch cannot run here (torch 2.5.1 sees no CUDA GPU)"
    local imported built started done cuda asked
    imported=$(grep -n '^torch imported$' "$WORK/calls" | head -1 | cut -d: -f1)
    built=$(grep -n '^make done .*/build/fasweep$' "$WORK/calls" | head -1 | cut -d: -f1)
    started=$(grep -n '^fasweep grid ' "$WORK/calls" | head -1 | cut -d: -f1)
    done=$(grep -n '^grid done$' "$WORK/calls" | head -1 | cut -d: -f1)
    cuda=$(grep -n '^torch cuda$' "$WORK/calls" | head -1 | cut -d: -f1)
    asked=$(grep -nE '^fasweep (plan|version|problem) ' "$WORK/calls" | head -1 | cut -d: -f1)
    [ -n "$imported" ] && [ -n "$built" ] && [ -n "$started" ] && [ -n "$done" ] &&
        [ -n "$cuda" ] && [ -n "$asked" ] || flunk "calls: $(cat "$WORK/calls")"
    [ "$imported" -lt "$built" ] || flunk "the import waited for the build: $(cat "$WORK/calls")"
    # the setup (here: CUDA asked for, and none) is done before the sweep starts
    [ "$cuda" -lt "$started" ] || flunk "the sweep did not wait for the setup: $(cat "$WORK/calls")"
    # the problems and modes came from the planner's plan (geninst --check), not from fasweep
    [ "$done" -lt "$asked" ] || flunk "fasweep asked before the sweep was done: $(cat "$WORK/calls")"
    [ ! -e results.lmdb.baselines.jsonl ] || flunk "a baselines file without baselines"
    expect_in "$stderr" "fasweep: main job: deps"
    # the sweep fails: its status, and the waiting baselines' process does not outlive it
    : >"$WORK/calls"
    BASELINE_BACKENDS=flash,efficient,cudnn STUB=gridfail \
        run --separate-stderr bash "$WORK/repo/scripts/run_default_sweep.sh" build
    expect_status 1
    expect_in "$stderr" "fasweep: the sweep failed (stub)"
    sleep 0.5
    ! pgrep -f "$WORK/repo/scripts/sdpa_baseline.py" >/dev/null || flunk "a baseline process outlived the job"
    ! grep -q '^fasweep import' "$WORK/calls" || flunk "baselines imported: $(cat "$WORK/calls")"
    expect_not_in "$stderr" "Traceback"
}

@test "run_default_sweep: the baselines' rounds but the last run between the sweep's rounds (grid --between-rounds), the last after the sweep" {
    stubs
    mini_repo
    printf '#!/bin/sh\nexit 0\n' >"$WORK/repo/scripts/deps.sh"
    # a stand-in sdpa_baseline.py that speaks the protocol: 'prepare' creates the ready file,
    # 'round' (with --round-done-file) the done file, 'go' ends
    cat >"$WORK/repo/scripts/sdpa_baseline.py" <<PY
import sys
a = sys.argv[1:]
opt = lambda n: a[a.index(n) + 1] if n in a else None
def log(s):
    with open("$WORK/calls", "a") as f:
        f.write(s + "\\n")
log("sdpa_baseline " + " ".join(a))
for line in sys.stdin:
    w = line.strip()
    log("baseline " + w)
    if w == "prepare":
        open(opt("--ready-file"), "w").write("ready\\n")
    elif w == "round":
        open(opt("--round-done-file"), "w").write("done\\n")
    elif w == "go":
        break
PY
    BASELINE_BACKENDS=flash run --separate-stderr bash "$WORK/repo/scripts/run_default_sweep.sh" build
    expect_status 0
    grep -q '^sdpa_baseline .*--round-done-file ' "$WORK/calls" || flunk "no --round-done-file: $(cat "$WORK/calls")"
    grep -q '^fasweep grid .*--between-rounds ' "$WORK/calls" || flunk "no --between-rounds: $(cat "$WORK/calls")"
    local order
    order=$(grep -E '^(grid round|baseline|grid done)' "$WORK/calls" | paste -sd,)
    [ "$order" = "baseline prepare,grid round 1,baseline round,grid round 2,baseline round,grid done,baseline go" ] ||
        flunk "order: $order"
    expect_not_in "$stderr" "--between-rounds: the command"
    # baselines that are gone before the sweep (no torch: skipped): no command given to it
    : >"$WORK/calls"
    printf 'import sys\nopen("%s/calls", "a").write("sdpa_baseline gone\\n")\nsys.exit(3)\n' "$WORK" \
        >"$WORK/repo/scripts/sdpa_baseline.py"
    BASELINE_BACKENDS=flash run --separate-stderr bash "$WORK/repo/scripts/run_default_sweep.sh" build
    grep -q '^fasweep grid ' "$WORK/calls" || flunk "no sweep: $(cat "$WORK/calls")"
    ! grep -q '^fasweep grid .*--between-rounds' "$WORK/calls" || flunk "a command for baselines that are gone: $(cat "$WORK/calls")"
    no_traceback
}

@test "sdpa_baseline --go-on-stdin: no 'go' (end of input, another line) is one line, exit 1, nothing timed; without PyTorch --skip-without-torch is its one line, exit 3" {
    stubs
    printf 'open("%s/calls", "a").write("torch imported\\n")\n__version__ = "2.5.1"\nclass cuda:\n    @staticmethod\n    def is_available():\n        open("%s/calls", "a").write("torch cuda\\n")\n        return True\n' \
        "$WORK" "$WORK" >"$WORK/py/torch.py"
    run --separate-stderr python3 "$REPO/scripts/sdpa_baseline.py" --problem 4,8,512,64 \
        --backends flash --fasweep "$REAL_FASWEEP" --go-on-stdin </dev/null
    expect_status 1
    expect_in "$stderr" "sdpa_baseline: --go-on-stdin: end of input before 'go': nothing timed"
    one_line "$stderr"
    run --separate-stderr python3 "$REPO/scripts/sdpa_baseline.py" --problem 4,8,512,64 \
        --backends flash --fasweep "$REAL_FASWEEP" --go-on-stdin <<<"stop"
    expect_status 1
    expect_in "$stderr" "sdpa_baseline: --go-on-stdin: 'stop' before 'go': nothing timed"
    [ "$output" = "" ] || flunk "records: $output"
    ! grep -q '^torch cuda$' "$WORK/calls" || flunk "CUDA asked for without a go: $(cat "$WORK/calls")"
    grep -q '^torch imported$' "$WORK/calls" || flunk "not imported before the go: $(cat "$WORK/calls")"
    # before 'go' fasweep need not exist yet (the main job's build makes it): the space's
    # problems are asked of it after; without --space that is one line, exit 2, no import
    run --separate-stderr python3 "$REPO/scripts/sdpa_baseline.py" --space-problems \
        --space "$REPO/spaces/ci.json" --backends flash --fasweep "$WORK/not-built-yet" \
        --go-on-stdin </dev/null
    expect_status 1
    expect_in "$stderr" "sdpa_baseline: --go-on-stdin: end of input before 'go': nothing timed"
    one_line "$stderr"
    : >"$WORK/calls"
    run --separate-stderr python3 "$REPO/scripts/sdpa_baseline.py" --space-problems \
        --backends flash --fasweep "$REAL_FASWEEP" --go-on-stdin <<<"go"
    expect_status 2
    expect_in "$stderr" "sdpa_baseline: --space-problems takes the problems of --space FILE: no --space given"
    one_line "$stderr"
    run --separate-stderr python3 "$REPO/scripts/sdpa_baseline.py" --fasweep "$REAL_FASWEEP"
    expect_status 2
    expect_in "$stderr" "sdpa_baseline: no problem: --problem P, or --space-problems with --space"
    ! grep -q '^torch imported$' "$WORK/calls" || flunk "imported for bad arguments: $(cat "$WORK/calls")"
    run --separate-stderr python3 "$REPO/scripts/sdpa_baseline.py" --problem 4,8,512,64 \
        --fasweep "$REAL_FASWEEP" --ready-file "$WORK/ready"
    expect_status 2
    expect_in "$stderr" "sdpa_baseline: --ready-file goes with --go-on-stdin (its 'prepare')"
    # 'prepare' only where a ready file is named; a plan that is none is one line, exit 2
    run --separate-stderr python3 "$REPO/scripts/sdpa_baseline.py" --problem 4,8,512,64 \
        --backends flash --fasweep "$REAL_FASWEEP" --go-on-stdin <<<"prepare"
    expect_status 1
    expect_in "$stderr" "sdpa_baseline: --go-on-stdin: 'prepare' before 'go': nothing timed"
    echo '{"problems": [{"problem": "x"}], "modes": ["hot"]}' >"$WORK/plan.json"
    run --separate-stderr python3 "$REPO/scripts/sdpa_baseline.py" --space-problems \
        --space "$REPO/spaces/ci.json" --plan "$WORK/plan.json" --backends flash \
        --fasweep "$REAL_FASWEEP" --go-on-stdin --ready-file "$WORK/ready" <<<"prepare"
    expect_status 2
    expect_in "$stderr" "sdpa_baseline: --plan $WORK/plan.json: no fasweep plan (KeyError: 'batch')"
    one_line "$stderr"
    [ ! -e "$WORK/ready" ] || flunk "ready without a setup"
    # PyTorch missing (stubs' torch): the skip line and exit 3 with the option, exit 1 without
    printf 'raise ImportError("No module named torch (stub)")\n' >"$WORK/py/torch.py"
    run --separate-stderr python3 "$REPO/scripts/sdpa_baseline.py" --problem 4,8,512,64 \
        --backends flash --fasweep "$REAL_FASWEEP" --skip-without-torch
    expect_status 3
    expect_in "$stderr" "fasweep: SDPA baselines skipped: PyTorch cannot run here (ImportError: No module named torch (stub))"
    one_line "$stderr"
    run --separate-stderr python3 "$REPO/scripts/sdpa_baseline.py" --problem 4,8,512,64 \
        --backends flash --fasweep "$REAL_FASWEEP"
    expect_status 1
    expect_in "$stderr" "sdpa_baseline: PyTorch cannot run here (ImportError: No module named torch (stub); pip install torch)"
    no_traceback
}

@test "triton_attention --precompile: Triton or PyTorch that does not import is one line and exit 3, before stdin is read" {
    stubs
    run --separate-stderr bash -c "printf '{\"problems\": []}' | python3 '$REPO/scripts/triton_attention.py' --precompile"
    expect_status 3
    expect_in "$stderr" "triton_attention.py: --precompile: not available ("
    one_line "$stderr"
    run --separate-stderr bash -c "printf 'nope' | python3 '$REPO/scripts/triton_attention.py' --precompile"
    expect_status 3
    expect_in "$stderr" "triton_attention.py: --precompile: not available ("
    one_line "$stderr"
}

@test "run_default_sweep: a baselines' setup that hangs does not hold the sweep: stopped after BASELINE_SETUP_TIMEOUT, said, the sweep, topk and report run, exit 1; a bad timeout is exit 2" {
    stubs
    mini_repo
    printf '#!/bin/sh\nexit 0\n' >"$WORK/repo/scripts/deps.sh"
    # a stand-in torch whose CUDA question never comes back (the setup hangs)
    printf 'import time\n__version__ = "2.5.1"\nclass cuda:\n    @staticmethod\n    def is_available():\n        open("%s/calls", "a").write("torch cuda\\n")\n        time.sleep(60)\n        return True\n' \
        "$WORK" >"$WORK/py/torch.py"
    BASELINE_BACKENDS=flash BASELINE_SETUP_TIMEOUT=2 \
        run --separate-stderr timeout 40 bash "$WORK/repo/scripts/run_default_sweep.sh" build
    expect_status 1
    expect_in "$stderr" "fasweep: the baselines were not set up 2 s after the build (BASELINE_SETUP_TIMEOUT): stopped, no baselines; the sweep goes on"
    grep -q '^grid done$' "$WORK/calls" || flunk "no sweep: $(cat "$WORK/calls")"
    [ -s report.html ] || flunk "no report"
    sleep 0.5
    ! pgrep -f "$WORK/repo/scripts/sdpa_baseline.py" >/dev/null || flunk "a baseline process outlived the job"
    no_traceback
    for bad in abc 0 -3 1.5 07; do
        : >"$WORK/calls"
        BASELINE_SETUP_TIMEOUT=$bad run --separate-stderr bash "$WORK/repo/scripts/run_default_sweep.sh" build
        expect_status 2
        expect_in "$stderr" "BASELINE_SETUP_TIMEOUT="
        one_line "$stderr"
        ! grep -q '^make ' "$WORK/calls" || flunk "built: $(cat "$WORK/calls")"
    done
}

@test "run_default_sweep: runs from any folder (its Makefile, baselines.sh and spaces found next to it)" {
    stubs
    mini_repo
    printf '#!/bin/sh\nexit 0\n' >"$WORK/repo/scripts/deps.sh" # the checked bundle
    mkdir elsewhere && cd elsewhere
    run --separate-stderr bash "$WORK/repo/scripts/run_default_sweep.sh" build
    expect_status 0
    expect_in "$stderr" "fasweep: sweeping $WORK/repo/spaces/l4.json"
    expect_in "$stderr" "SDPA baselines skipped: PyTorch cannot run here"
    # no torch: no precompile, and nothing said of it (the baselines' line says why)
    expect_not_in "$stderr" "while the build ran"
    # only what the sweep runs: the space's instances for the GPU's architecture (8.9 here),
    # built for this GPU alone (LOCAL=1: no PTX, no size-compressed fat binary)
    grep -q "^make -C $WORK/repo .*BUILD=$WORK/elsewhere/build SPACES=$WORK/repo/spaces/l4.json ARCHS=89 LOCAL=1 $WORK/elsewhere/build/fasweep" "$WORK/calls" ||
        flunk "make: $(cat "$WORK/calls")"
    [ -s report.html ] || flunk "no report"
    # where the time went: every step, in order, and the total (one stderr line)
    [[ $stderr =~ "fasweep: main job: deps "[0-9]+\.[0-9]" s, build "[0-9]+\.[0-9]" s, baselines' setup after the build "[0-9]+\.[0-9]" s, sweep and refine "[0-9]+\.[0-9]" s, baselines "[0-9]+\.[0-9]" s, topk "[0-9]+\.[0-9]" s, report "[0-9]+\.[0-9]" s; total "[0-9]+\.[0-9]" s" ]] ||
        flunk "no step times: $stderr"
    SPACE=nope.json run --separate-stderr bash "$WORK/repo/scripts/run_default_sweep.sh" build
    expect_status 2
    expect_in "$stderr" "fasweep: SPACE=nope.json: no such readable space file"
    one_line "$stderr"
    # a space the planner refuses (geninst --check, exit 2): its line, exit 2, nothing built
    echo '{}' >bad.json
    : >"$WORK/calls"
    GENINST='#!/bin/sh
echo "geninst: $2: target: missing required key (stub)" >&2; exit 2' SPACE=bad.json \
        run --separate-stderr bash "$WORK/repo/scripts/run_default_sweep.sh" build
    expect_status 2
    expect_in "$stderr" "fasweep: $WORK/elsewhere/bad.json: target: missing required key (stub)"
    ! grep -q "build/fasweep" "$WORK/calls" || flunk "it built: $(cat "$WORK/calls")"
    # a path make cannot take as one word: the full build, no narrowing
    mkdir -p "a b" && cp "$WORK/repo/spaces/l4.json" "a b/s.json"
    : >"$WORK/calls"
    SPACE="a b/s.json" run --separate-stderr bash "$WORK/repo/scripts/run_default_sweep.sh" build
    expect_status 0
    grep -q "^make -C $WORK/repo .*BUILD=$WORK/elsewhere/build ARCHS=89 LOCAL=1 $WORK/elsewhere/build/fasweep" "$WORK/calls" ||
        flunk "make: $(cat "$WORK/calls")"
}
