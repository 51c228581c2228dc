#!/usr/bin/env bats
# plan.bats - fasweep plan and grid --dry-run on the shipped spaces and on
# broken ones; grid without a GPU. The binary under test may hold any set of
# instances (the CI build holds only spaces/ci.json's), so expectations about
# compiled points come from `fasweep list --json`, not from constants.

load helpers

# Counts of a plan --json document on stdin, as "total accepted rejected".
plan_counts() {
    json_eval - '"%d %d %d" % (d["counts"]["total"], d["counts"]["accepted"], d["counts"]["rejected"])'
}

@test "plan l4.json: 162 points, reasons with numbers, counts add up" {
    run --separate-stderr "$FASWEEP" plan --space "$REPO/spaces/l4.json"
    expect_status 0
    expect_in "$output" "space l4 ("
    expect_in "$output" "162 points"
    # BLOCK_M 32 with 4 warps cannot give each warp 16 rows.
    expect_in "$output" "d64.m32.n32.w4.s1.z0"
    expect_in "$output" "warp_rows"
    # 128x64 Q + 3 stages of 128x64 K and V = 212992 B > 49152 B.
    expect_in "$output" "d64.m128.n128.w4.s3.z0"
    expect_in "$output" "114688"
    expect_in "$output" "49152"
    expect_in "$output" "smem"
    [ -z "$stderr" ] || flunk "unexpected stderr: $stderr"
}

@test "plan --json l4.json: valid JSON; totals and per-reason counts match the points" {
    run --separate-stderr "$FASWEEP" plan --space "$REPO/spaces/l4.json" --json
    expect_status 0
    echo "$output" | json_valid
    [ "$(echo "$output" | plan_counts)" != "" ]
    run python3 -c '
import json, sys, collections
d = json.load(sys.stdin)
pts = d["points"]
c = d["counts"]
assert len(pts) == 162 == c["total"], len(pts)
acc = [p for p in pts if p["accepted"]]
assert len(acc) == c["accepted"]
assert c["accepted"] + c["rejected"] == c["total"]
by = collections.Counter(p["reason"] for p in pts if not p["accepted"])
for code, n in c["rejected_by_reason"].items():
    assert by.get(code, 0) == n, (code, n, by.get(code))
for p in pts:
    assert p["accepted"] == (p["reason"] == "ok")
    assert (p["detail"] == "") == p["accepted"], p
    if p["reason"] == "smem":
        assert p["smem_bytes"] > 49152 and str(p["smem_bytes"]) in p["detail"], p
    else:
        assert p["smem_bytes"] <= 49152 or p["reason"] in ("warp_rows", "chunks"), p
assert by["warp_rows"] > 0 and by["smem"] > 0
' <<<"$output"
    expect_status 0
}

@test "plan: accepted points are exactly the compiled, statically valid ones" {
    local compiled
    compiled=$("$FASWEEP" list --json | json_eval - '" ".join(i["name"] for i in d["instances"])')
    for sp in l4 h100 ci; do
        "$FASWEEP" plan --space "$REPO/spaces/$sp.json" --json >"$sp.plan.json" ||
            flunk "plan $sp failed"
        run python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
compiled = set(sys.argv[2].split())
for p in d["points"]:
    if p["accepted"]:
        assert p["config"] in compiled, p
    if p["reason"] == "not_compiled":
        assert p["config"] not in compiled, p
' "$sp.plan.json" "$compiled"
        expect_status 0
    done
}

@test "plan h100.json: three problems, both head dims, both families" {
    run --separate-stderr "$FASWEEP" plan --space "$REPO/spaces/h100.json" --json
    expect_status 0
    run python3 -c '
import json, sys
d = json.load(sys.stdin)
probs = sorted(set(p["problem"] for p in d["points"]))
assert probs == ["b16.h16.s2048.d64.nc", "b4.h16.s2048.d128.nc", "b4.h8.s512.d64.nc"], probs
mma = [p for p in d["points"] if p["family"] == "mma"]
wg = [p for p in d["points"] if p["family"] == "wgmma"]
# the mma grid first, then the wgmma grid (families.wgmma): 3 x 3 x 1 x 2 x 2 x 3
assert len(mma) == 3 * 2 * 3 * 2 * 3 * 2 and len(wg) == 3 * 3 * 2 * 2 * 3
assert d["points"] == mma + wg
assert d["counts"]["total"] == 216 + 108
assert d["smem_limit"] == 232448
' <<<"$output"
    expect_status 0
    run --separate-stderr "$FASWEEP" plan --space "$REPO/spaces/h100.json" --all
    expect_status 0
    expect_in "$output" "b4.h16.s2048.d128.nc"
    expect_in "$output" "324 points"
}

@test "plan: --all lists not_compiled points that the default table only counts" {
    run --separate-stderr "$FASWEEP" plan --space "$REPO/spaces/h100.json" --json
    local nc
    nc=$(echo "$output" | json_eval - 'd["counts"]["rejected_by_reason"]["not_compiled"]')
    local short all
    short=$("$FASWEEP" plan --space "$REPO/spaces/h100.json" | grep -c '^b.* not_compiled ' || true)
    all=$("$FASWEEP" plan --space "$REPO/spaces/h100.json" --all | grep -c '^b.* not_compiled ' || true)
    # Rows only: they start with the problem text, the summary lines do not.
    [ "$short" -eq 0 ] || flunk "default table lists $short not_compiled rows"
    [ "$all" -eq "$nc" ] || flunk "--all lists $all not_compiled rows, counts say $nc"
}

@test "plan ci.json: every point the CI build compiled is accepted" {
    run --separate-stderr "$FASWEEP" plan --space "$REPO/spaces/ci.json" --json
    expect_status 0
    run python3 -c '
import json, sys
d = json.load(sys.stdin)
c = d["counts"]
assert c["total"] == 12 + 3, c  # three problems (one bf16 GQA) x 4 mma points + 1 wgmma
# D=128 with two stages needs 81920 B > 49152 B: 2 smem rejections; the wgmma
# point at D=128 needs 83016 B: one more.
assert c["rejected_by_reason"]["smem"] == 2 + 1, c
assert c["rejected_by_reason"]["warp_rows"] == 0 and c["rejected_by_reason"]["chunks"] == 0
' <<<"$output"
    expect_status 0
}

@test "plan --json: every point names its kernel family; a space that names mma plans the same" {
    run --separate-stderr "$FASWEEP" plan --space "$REPO/spaces/ci.json" --json
    expect_status 0
    echo "$output" >default.json
    run python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["family"] == "mma", d["family"]
# its own grid (mma), then families.wgmma (the CI build compiles that point)
fams = [p["family"] for p in d["points"]]
assert fams == ["mma"] * 12 + ["wgmma"] * 3, fams
' default.json
    expect_status 0
    # The same space with "family": "mma" spelled out: the same points.
    python3 - "$REPO/spaces/ci.json" >named.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["family"] = "mma"
print(json.dumps(d))
PY
    run --separate-stderr "$FASWEEP" plan --space named.json --json
    expect_status 0
    echo "$output" >named.plan.json
    run python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a["points"] == b["points"], "points differ"
' default.json named.plan.json
    expect_status 0
    # An unknown family: exit 2, what is known, where to read more.
    sed 's/"family": "mma"/"family": "tcgen05"/' named.json >unknown.json
    run --separate-stderr "$FASWEEP" plan --space unknown.json --json
    expect_status 2
    expect_in "$stderr" 'unknown.json: family: unknown kernel family "tcgen05", expected one of mma, wgmma (docs/families.md)'
    [ -z "$output" ] || flunk "stdout should be empty"
}

@test "eval --config: FAMILY:TEXT or TEXT alone (mma); an unknown family is a usage error" {
    cfg=$("$FASWEEP" list --json | json_eval - 'd["instances"][0]["name"]')
    prob=$("$FASWEEP" plan --space "$REPO/spaces/ci.json" --json | json_eval - 'd["points"][0]["problem"]')
    run --separate-stderr "$FASWEEP" eval --problem "$prob" --config "wgmma:$cfg" --store "$STORE"
    expect_status 2
    expect_in "$stderr" "FAMILY:TEXT of a known kernel family"
    # mma, named or not, passes every check before the GPU (none here: exit 1).
    for c in "mma:$cfg" "$cfg"; do
        run --separate-stderr env CUDA_VISIBLE_DEVICES= "$FASWEEP" eval --problem "$prob" --config "$c" --store "$STORE"
        expect_status 1
        expect_in "$stderr" "needs a GPU"
    done
}

@test "list --json: every instance names its kernel family" {
    run --separate-stderr "$FASWEEP" list --json
    expect_status 0
    run python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["instances"] and all(i["family"] in ("mma", "wgmma") for i in d["instances"]), d
' <<<"$output"
    expect_status 0
}

@test "bad spaces: exit 2 with the file, place and problem; nothing written" {
    run --separate-stderr "$FASWEEP" plan --space "$FIX/bad_syntax.json"
    expect_status 2
    expect_in "$stderr" "bad_syntax.json:3:"
    expect_in "$stderr" "syntax error"
    [ -z "$output" ] || flunk "stdout should be empty"

    run --separate-stderr "$FASWEEP" plan --space "$FIX/bad_unknown_key.json"
    expect_status 2
    expect_in "$stderr" "tolerence"
    expect_in "$stderr" "unknown key"

    run --separate-stderr "$FASWEEP" plan --space "$FIX/bad_dup_axis.json" --json
    expect_status 2
    expect_in "$stderr" "axes.BLOCK_N[2]"
    [ -z "$output" ] || flunk "stdout should be empty"

    run --separate-stderr "$FASWEEP" plan --space "$WORK/missing.json"
    expect_status 2
    expect_in "$stderr" "missing.json"

    run --separate-stderr "$FASWEEP" plan
    expect_status 2
    expect_in "$stderr" "--space FILE is required"
    # grid says so before it looks at --devices.
    run --separate-stderr "$FASWEEP" grid --devices bogus --store "$STORE"
    expect_status 2
    expect_in "$stderr" "--space FILE is required"

    # grid on a bad space fails the same way and creates no store.
    run --separate-stderr "$FASWEEP" grid --space "$FIX/bad_dup_axis.json" --store "$STORE"
    expect_status 2
    expect_in "$stderr" "axes.BLOCK_N[2]"
    [ ! -e "$STORE" ] || flunk "a store was created"
    [ -z "$(ls -A "$WORK")" ] || flunk "files written: $(ls -A "$WORK")"
}

@test "grid --dry-run prints the plan and needs no GPU or store" {
    local expected
    expected=$("$FASWEEP" plan --space "$REPO/spaces/l4.json")
    run --separate-stderr env CUDA_VISIBLE_DEVICES= "$FASWEEP" grid --space "$REPO/spaces/l4.json" --dry-run --store "$STORE"
    expect_status 0
    [ "$output" = "$expected" ] || flunk "dry-run output differs from plan"
    [ ! -e "$STORE" ] || flunk "a store was created"
}

@test "grid without a GPU: exit 1 with the no-GPU message, no store created" {
    run --separate-stderr env CUDA_VISIBLE_DEVICES= "$FASWEEP" grid --space "$REPO/spaces/ci.json" --store "$STORE"
    expect_status 1
    expect_in "$stderr" "fasweep: no CUDA GPU found: "
    expect_in "$stderr" "grid needs a GPU; use \`fasweep plan\` to inspect a space without one"
    [ ! -e "$STORE" ] || flunk "a store was created"
    # Default store path too.
    run --separate-stderr env CUDA_VISIBLE_DEVICES= "$FASWEEP" grid --space "$REPO/spaces/ci.json"
    expect_status 1
    [ ! -e results.lmdb ] || flunk "./results.lmdb was created"
}

@test "grid without a GPU leaves no child behind: prestarted workers and the probe reaped" {
    # fasweep runs under a subreaper (PR_SET_CHILD_SUBREAPER), so every process it leaves,
    # running or a zombie, becomes the wrapper's child once fasweep exits, and is counted.
    # CUDA_VISIBLE_DEVICES=0,1,2 with --devices all: the CUDA-free count (worker_gpu_hint)
    # starts three workers before the probe says there is no GPU (the trace says how many).
    local d v
    for d in "|" "|--devices all" "|--devices 0,1" "0,1,2|--devices all"; do
        v=${d%%|*} d=${d#*|}
        # shellcheck disable=SC2086  # $d is zero or two words
        run --separate-stderr python3 -c '
import ctypes, os, subprocess, sys, time
if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
    print("SKIP no subreaper"); sys.exit(0)
rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(0.3)
left = 0
while True:
    try:
        pid, _ = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        break
    if pid == 0:  # a child still running: wait for it, it counts all the same
        os.waitpid(-1, 0)
    left += 1
print("rc %d left %d" % (rc, left))' env CUDA_VISIBLE_DEVICES="$v" "$FASWEEP" grid --space "$REPO/spaces/ci.json" --store "$STORE" $d
        expect_status 0
        [ "$output" = "SKIP no subreaper" ] && skip "no PR_SET_CHILD_SUBREAPER here"
        [ "$output" = "rc 1 left 0" ] || flunk "grid $d: $output (want exit 1 and no process left)"
        if [ -n "$v" ]; then # the same run again for its trace: three workers started early
            run --separate-stderr env FASWEEP_TRACE=1 CUDA_VISIBLE_DEVICES="$v" "$FASWEEP" grid \
                --space "$REPO/spaces/ci.json" --store "$STORE" $d
            expect_in "$stderr" "TRACE gpu hint 3: 3 worker(s) started before the probe"
        fi
        [ ! -e "$STORE" ] || flunk "a store was created"
    done
}

# Every (problem, config) of a plan --json document on stdin, one per line.
plan_keys() {
    python3 -c 'import json, sys
for p in json.load(sys.stdin)["points"]:
    print(p["problem"], p["config"], p["reason"])'
}

@test "plan --shard I/N: parts are disjoint, their union is the whole plan, same split twice" {
    run --separate-stderr "$FASWEEP" plan --space "$REPO/spaces/h100.json" --json
    expect_status 0
    echo "$output" | plan_keys | sort >"$BATS_TEST_TMPDIR/all"
    : >"$BATS_TEST_TMPDIR/union"
    for part in 0 1 2 3; do
        run --separate-stderr "$FASWEEP" plan --space "$REPO/spaces/h100.json" --json --shard "$part/4"
        expect_status 0
        expect_in "$stderr" "shard $part/4"
        echo "$output" | plan_keys | sort >"$BATS_TEST_TMPDIR/part$part"
        run --separate-stderr "$FASWEEP" plan --space "$REPO/spaces/h100.json" --json --shard "$part/4"
        [ "$(echo "$output" | plan_keys | sort)" = "$(cat "$BATS_TEST_TMPDIR/part$part")" ] ||
            flunk "shard $part/4 differs between two runs"
        cat "$BATS_TEST_TMPDIR/part$part" >>"$BATS_TEST_TMPDIR/union"
    done
    # disjoint: no line twice; complete: the sorted union is the whole plan
    [ -z "$(sort "$BATS_TEST_TMPDIR/union" | uniq -d)" ] || flunk "a point is in two shards"
    sort "$BATS_TEST_TMPDIR/union" | diff - "$BATS_TEST_TMPDIR/all" || flunk "union != plan"
}

@test "plan under a Slurm job array or srun takes its shard from the environment" {
    run --separate-stderr "$FASWEEP" plan --space "$REPO/spaces/h100.json" --json --shard 2/4
    want=$(echo "$output" | plan_keys | sort)
    SLURM_ARRAY_TASK_ID=12 SLURM_ARRAY_TASK_MIN=10 SLURM_ARRAY_TASK_MAX=13 \
        run --separate-stderr "$FASWEEP" plan --space "$REPO/spaces/h100.json" --json
    expect_status 0
    expect_in "$stderr" "shard 2/4 (from Slurm)"
    [ "$(echo "$output" | plan_keys | sort)" = "$want" ] || flunk "array task 12 of 10-13 is not shard 2/4"
    SLURM_PROCID=2 SLURM_NTASKS=4 run --separate-stderr "$FASWEEP" plan --space "$REPO/spaces/h100.json" --json
    expect_status 0
    [ "$(echo "$output" | plan_keys | sort)" = "$want" ] || flunk "srun task 2 of 4 is not shard 2/4"
    # --shard wins over the environment
    SLURM_PROCID=0 SLURM_NTASKS=4 run --separate-stderr "$FASWEEP" plan --space "$REPO/spaces/h100.json" --json --shard 2/4
    [ "$(echo "$output" | plan_keys | sort)" = "$want" ] || flunk "--shard did not win"
}

@test "bad shards: exit 2 naming the form; an array id without a size is an error" {
    for bad in 4/4 -1/4 1/0 x 1/4x; do
        run --separate-stderr "$FASWEEP" plan --space "$REPO/spaces/ci.json" --shard "$bad"
        expect_status 2
        expect_in "$stderr" "I/N"
    done
    SLURM_ARRAY_TASK_ID=3 run --separate-stderr "$FASWEEP" plan --space "$REPO/spaces/ci.json"
    expect_status 2
    expect_in "$stderr" "--shard"
}

@test "grid --devices: bad lists are usage errors; without a GPU it says so (exit 1)" {
    for bad in 0,x 0,0 -1 "" 1,,2 0,1,; do
        run --separate-stderr "$FASWEEP" grid --space "$REPO/spaces/ci.json" --devices "$bad" --store "$BATS_TEST_TMPDIR/s"
        expect_status 2
    done
    # A GPU listed twice passes only under the test hook FASWEEP_TEST_SHARE_GPU=1 (then: no GPU here).
    for share in 1 0 yes; do
        FASWEEP_TEST_SHARE_GPU=$share CUDA_VISIBLE_DEVICES= run --separate-stderr "$FASWEEP" grid \
            --space "$REPO/spaces/ci.json" --devices 0,0 --store "$BATS_TEST_TMPDIR/s"
        if [ "$share" = 1 ]; then
            expect_status 1
            expect_in "$stderr" "no CUDA GPU"
        else
            expect_status 2
            expect_in "$stderr" "GPU 0 is listed twice"
        fi
    done
    CUDA_VISIBLE_DEVICES= run --separate-stderr "$FASWEEP" grid --space "$REPO/spaces/ci.json" --devices all --store "$BATS_TEST_TMPDIR/s"
    expect_status 1
    expect_in "$stderr" "no CUDA GPU"
    [ ! -e "$BATS_TEST_TMPDIR/s" ] || flunk "a store was created"
    run --separate-stderr "$FASWEEP" grid --space "$REPO/spaces/ci.json" --devices 0,1 --dry-run
    expect_status 0
}

# A space of two families: the wgmma grid's reasons, with the numbers.
two_family_space() { # FILE ARCH
    python3 - "$REPO/spaces/h100.json" "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["target"]["arch"] = sys.argv[3]
d["problems"] = d["problems"][:1] + d["problems"][2:]
d["families"]["wgmma"]["axes"] = {"BLOCK_M": [64, 128, 192], "BLOCK_N": [112, 128],
                                  "CONSUMER_WG": [1, 2, 3], "STAGES": [2, 4], "PIPELINE": [1, 2]}
json.dump(d, open(sys.argv[2], "w"))
PY
}

@test "plan: a space of two families plans both; each wgmma rule says why" {
    two_family_space two.json sm_90
    run --separate-stderr "$FASWEEP" plan --space two.json --all
    expect_status 0
    expect_in "$output" "BLOCK_M 128 is not 64 x CONSUMER_WG (1 consumer warpgroups of 64 rows, 1 to 3)"
    expect_in "$output" "BLOCK_N 112 has no wgmma m64nNk16 wrapper"
    expect_in "$output" "PIPELINE 2 is a ping-pong between consumer warpgroups: needs CONSUMER_WG >= 2, got 1"
    expect_in "$output" "needs about 184 registers per consumer thread, the budget with 3 consumer warpgroups is 160"
    # D=128, 4 stages of 128-row K and V: over the 227 KB opt-in limit.
    expect_in "$output" "needs 296080 B of shared memory, the space allows 232448 B"
    run --separate-stderr "$FASWEEP" plan --space two.json --json
    expect_status 0
    run python3 -c '
import json, sys, collections
d = json.load(sys.stdin)
wg = [p for p in d["points"] if p["family"] == "wgmma"]
assert len(wg) == 2 * 3 * 2 * 3 * 2 * 2, len(wg)
by = collections.Counter(p["reason"] for p in wg)
for r in ("warp_rows", "tile", "pipeline", "regs", "smem"):
    assert by[r] > 0, (r, by)
assert by["arch"] == 0, by
c = d["counts"]
assert sum(c["rejected_by_reason"].values()) == c["rejected"], c
' <<<"$output"
    expect_status 0
}

@test "plan: on an sm_89 target no wgmma point is planned, and the plan says why" {
    two_family_space l4ish.json sm_89
    run --separate-stderr "$FASWEEP" plan --space l4ish.json --json
    expect_status 0
    run python3 -c '
import json, sys
d = json.load(sys.stdin)
wg = [p for p in d["points"] if p["family"] == "wgmma"]
assert wg and all(p["reason"] == "arch" and not p["accepted"] for p in wg), wg[:3]
assert all(p["detail"] == "needs sm_90a (wgmma, TMA); target is sm_89" for p in wg), wg[0]
assert d["counts"]["rejected_by_reason"]["arch"] == len(wg)
# the mma points are planned as on sm_90
assert any(p["reason"] != "arch" for p in d["points"] if p["family"] == "mma")
' <<<"$output"
    expect_status 0
    run --separate-stderr "$FASWEEP" plan --space l4ish.json
    expect_status 0
    expect_in "$output" "needs sm_90a (wgmma, TMA); target is sm_89"
    # spaces/l4.json itself sweeps mma alone.
    run --separate-stderr "$FASWEEP" plan --space "$REPO/spaces/l4.json" --json
    expect_status 0
    [ "$(echo "$output" | json_eval - '",".join(sorted(set(p["family"] for p in d["points"])))')" = "mma" ] ||
        flunk "l4.json plans another family"
}

@test "plan: a bad families section is refused with where and what" {
    python3 - "$REPO/spaces/h100.json" bad.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["families"]["wgmma"]["axes"]["NUM_WARPS"] = [4]
json.dump(d, open(sys.argv[2], "w"))
PY
    run --separate-stderr "$FASWEEP" plan --space bad.json
    expect_status 2
    expect_in "$stderr" "bad.json: families.wgmma.axes.NUM_WARPS: unknown key, expected one of BLOCK_M, BLOCK_N, CONSUMER_WG, STAGES, PIPELINE (check the spelling)"
    [ -z "$output" ] || flunk "stdout should be empty"
}

@test "geninst: wgmma instances go to the sm_90a shards when ARCHS holds 90, and nowhere otherwise" {
    (unset MAKEFLAGS MFLAGS MAKELEVEL BUILD KBUILD SPACES SAN ARCHS
     make -s -C "$REPO" KBUILD="$BATS_TEST_TMPDIR/kb" "$BATS_TEST_TMPDIR/kb/geninst") >/dev/null ||
        flunk "building geninst failed"
    local g="$BATS_TEST_TMPDIR/kb/geninst"
    mkdir with without
    run --separate-stderr "$g" --out with --shards 2 --arch-shards 2 --archs "89 90" "$REPO/spaces/ci.json"
    expect_status 0
    grep -q '^FA_WG_INSTANCE(64, 64, 64, 1, 2, 1)$' with/inst_sm90a_0.cu || flunk "no wgmma line in the sm_90a shard"
    grep -q '^#include "kernels/wgmma/flash_fwd_wgmma.cuh"$' with/inst_sm90a_0.cu || flunk "no template include"
    ! grep -q 'FA_WG\|wgmma' with/inst_0.cu with/inst_1.cu || flunk "a wgmma line in an ARCHS shard"
    ! grep -q 'FA_INSTANCE' with/inst_sm90a_0.cu with/inst_sm90a_1.cu || flunk "an mma line in an sm_90a shard"
    grep -qx 'wgmma:d64.m64.n64.c1.s2.p1' with/instances.txt || flunk "instances.txt"
    grep -q '&fa_wg_inst_d64_m64_n64_c1_s2_p1,' with/registry_table.inc || flunk "registry table"
    run --separate-stderr "$g" --out without --shards 2 --arch-shards 0 --archs "89" "$REPO/spaces/ci.json"
    expect_status 0
    [ ! -e without/inst_sm90a_0.cu ] || flunk "an sm_90a shard without 90 in ARCHS"
    ! grep -q 'wgmma' without/instances.txt || flunk "wgmma listed without 90 in ARCHS"
    ! grep -q 'fa_wg' without/registry_table.inc || flunk "wgmma in the registry without 90 in ARCHS"
    # D64 fp16 (4), D128 fp16 (2: the 2-stage ones are over 48 KB), D64 bf16 GQA (4)
    [ "$(grep -c . without/instances.txt)" -eq 10 ] || flunk "the mma instances changed"
}
