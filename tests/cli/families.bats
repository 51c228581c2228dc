#!/usr/bin/env bats
# families.bats - a config each family owns (the family-owned config vocabulary): the tuner exports,
# plan's reasons, the report's panels and every help text take their names
# and rules from the family table, so a wgmma group is written with
# wgmma's axes, rules and thread count, never mma's.

load helpers

P1="b4.h8.s512.d64.nc"
WG_CFG="d64.m128.n128.c2.s2.p2" # the fixture's wgmma record (tests/cli/fixtures/family.jsonl)

# wg.json: a space of family wgmma whose grid holds the fixture's record;
# mixed.json: an mma space that sweeps the same wgmma grid in "families".
write_spaces() {
    python3 - <<'EOF'
import json
wg = {"name": "wg", "family": "wgmma",
      "target": {"gpu": "any", "arch": "sm_90", "smem_limit": 232448},
      "problems": [{"batch": 4, "heads": 8, "seq_len": 512, "head_dim": 64, "causal": False}],
      "axes": {"BLOCK_M": [64, 128], "BLOCK_N": [64, 128], "CONSUMER_WG": [1, 2],
               "STAGES": [2], "PIPELINE": [1, 2]}}
json.dump(wg, open("wg.json", "w"))
mixed = dict(wg, name="mixed",
             axes={"BLOCK_M": [64], "BLOCK_N": [64], "NUM_WARPS": [4], "STAGES": [2],
                   "SWIZZLE": [1]},
             families={"wgmma": {"axes": wg["axes"]}})
del mixed["family"]
json.dump(mixed, open("mixed.json", "w"))
EOF
}

@test "export kernel-tuner, t4, t1 of a wgmma group: its axes, thread count, rules, template and measured point" {
    write_spaces
    "$FASWEEP" import "$FIX/family.jsonl" --store "$STORE" >/dev/null || flunk "import"
    run --separate-stderr "$FASWEEP" export --format kernel-tuner --space wg.json --store "$STORE" \
        --allow-missing -o wg.kt.json
    expect_status 0
    run python3 - <<'EOF'
import json
d = json.load(open("wg.kt.json"))
keys = ["BLOCK_M", "BLOCK_N", "CONSUMER_WG", "STAGES", "PIPELINE", "block_size_x"]
assert d["tune_params_keys"] == keys, d["tune_params_keys"]
assert d["tune_params"]["block_size_x"] == [256, 384], d["tune_params"]
assert d["restrictions"][0] == "block_size_x == 128*(CONSUMER_WG + 1)", d["restrictions"]
assert not any("NUM_WARPS" in r for r in d["restrictions"]), d["restrictions"]
assert d["fasweep"]["family"] == "wgmma"
assert len(d["cache"]) == 16 * 2
measured = {k: e for k, e in d["cache"].items() if "time" in e}
# the record stands for its point (was: every entry InvalidConfig, 0 measured)
assert list(measured) == ["128,128,2,2,2,384"], list(measured)
e = measured["128,128,2,2,2,384"]
assert e["time"] == 0.1 and e["config_text"] == "d64.m128.n128.c2.s2.p2" and e["ping_pong"], e
assert d["cache"]["64,64,2,2,1,384"]["reason"] == "warp_rows"
EOF
    expect_status 0
    "$FASWEEP" export --format t4 --space wg.json --store "$STORE" --allow-missing -o wg.t4.json ||
        flunk "t4"
    "$FASWEEP" export --format t1 --space wg.json --store "$STORE" -o wg.t1.json || flunk "t1"
    run python3 - <<'EOF'
import json
t4 = json.load(open("wg.t4.json"))
ok = [r for r in t4["results"] if r["invalidity"] == "correct"]
assert len(ok) == 1 and ok[0]["configuration"]["CONSUMER_WG"] == 2, ok
assert "NUM_WARPS" not in t4["metadata"]["tune_params"], t4["metadata"]
t1 = json.load(open("wg.t1.json"))
ks = t1["KernelSpecification"]
assert ks["KernelFile"] == "kernels/wgmma/flash_fwd_wgmma.cuh", ks
names = [p["Name"] for p in t1["ConfigurationSpace"]["TuningParameters"]]
assert names == ["BLOCK_M", "BLOCK_N", "CONSUMER_WG", "STAGES", "PIPELINE", "block_size_x"], names
assert t1["ConfigurationSpace"]["TuningParameters"][5]["Values"] == "[256, 384]"
c = t1["ConfigurationSpace"]["Conditions"]
assert c[0]["Parameters"] == ["CONSUMER_WG", "block_size_x"], c[0]
EOF
    expect_status 0
}

@test "export: a space that sweeps wgmma in families writes that grid with --family wgmma; a note names the records left out" {
    write_spaces
    "$FASWEEP" import "$FIX/family.jsonl" --store "$STORE" >/dev/null || flunk "import"
    # its own grid (mma) holds no record of the group: refused as unmeasured,
    # and the wgmma record is named, never dropped in silence
    run --separate-stderr "$FASWEEP" export --format kernel-tuner --space mixed.json --store "$STORE"
    expect_status 1
    expect_in "$stderr" "1 record of family wgmma is not on the mma grid written; --family wgmma writes its grid"
    run --separate-stderr "$FASWEEP" export --format kernel-tuner --space mixed.json --family wgmma \
        --store "$STORE" --allow-missing -o mixed.kt.json
    expect_status 0
    expect_not_in "$stderr" "note:"
    run python3 -c '
import json
d = json.load(open("mixed.kt.json"))
assert d["tune_params_keys"][2] == "CONSUMER_WG", d["tune_params_keys"]
assert [k for k, e in d["cache"].items() if "time" in e] == ["128,128,2,2,2,384"]
'
    expect_status 0
    run --separate-stderr "$FASWEEP" export --format kernel-tuner --space mixed.json --family tcgen05 \
        --store "$STORE"
    expect_status 2
    expect_in "$stderr" "--family: unknown kernel family 'tcgen05', expected one of mma, wgmma"
    run --separate-stderr "$FASWEEP" export --format kernel-tuner --space "$REPO/spaces/l4.json" \
        --family wgmma --store "$STORE"
    expect_status 2
    expect_in "$stderr" "--family wgmma: space l4 sweeps no wgmma grid (its grids: mma)"
    run --separate-stderr "$FASWEEP" export --format jsonl --family wgmma --store "$STORE"
    expect_status 2
}

@test "plan: each reason code says the rule it stands for in each family that met it" {
    run --separate-stderr "$FASWEEP" plan --space "$REPO/spaces/h100.json"
    expect_status 0
    # warp_rows is 16 rows per warp for mma and 64 per consumer warpgroup for wgmma
    expect_in "$output" "  warp_rows    126    mma: BLOCK_M is a multiple of 16 x NUM_WARPS"
    expect_in "$output" "wgmma: BLOCK_M = 64 x CONSUMER_WG, 1 to 3 consumer warpgroups"
    expect_in "$output" "  regs         8      wgmma: the registers per consumer thread fit"
    run --separate-stderr "$FASWEEP" plan --space "$REPO/spaces/h100.json" --json
    expect_status 0
    run python3 -c '
import json, sys
d = json.loads(sys.argv[1])
r = d["rules"]
assert set(r) == {"mma", "wgmma"}, r
assert r["wgmma"]["warp_rows"].startswith("BLOCK_M = 64 x CONSUMER_WG"), r
assert r["mma"]["warp_rows"].startswith("BLOCK_M is a multiple of 16 x NUM_WARPS"), r
assert "tile" in r["wgmma"] and "tile" not in r["mma"] and "chunks" in r["mma"], r
assert d["counts"]["rejected_by_reason"]["warp_rows"] == 126
' "$output"
    expect_status 0
}

@test "report: a wgmma grid's panels and legend are labelled by wgmma's axes and rules" {
    write_spaces
    "$FASWEEP" import "$FIX/family.jsonl" --store "$STORE" >/dev/null || flunk "import"
    run --separate-stderr "$FASWEEP" report --space wg.json --store "$STORE" -o wg.html
    expect_status 0
    page=$(cat wg.html)
    expect_in "$page" 'class="pt">c2 &#183; s2 &#183; p2<title>CONSUMER_WG 2, STAGES 2, PIPELINE 2</title>'
    expect_in "$page" "one panel per CONSUMER_WG c, STAGES s, PIPELINE p"
    expect_in "$page" "(kernel family wgmma)"
    expect_in "$page" 'rejected: warp_rows <i class="rule">(BLOCK_M = 64 x CONSUMER_WG'
    expect_not_in "$page" "NUM_WARPS"
    expect_not_in "$page" "SWIZZLE"
    run python3 "$REPO/tests/cli/report_check.py" wg.html
    expect_status 0
    expect_in "$output" "NVIDIA L4|$P1|hot cells=16 "
    # Without a space: the grid of the family the group's records are of.
    run --separate-stderr "$FASWEEP" report --store "$STORE" -o own.html
    expect_status 0
    expect_in "$(cat own.html)" 'class="pt">c2 &#183; s2 &#183; p2'
    # The mma space's report is mma's, as it was.
    "$FASWEEP" import "$FIX/results.jsonl" --store mma.lmdb >/dev/null || flunk "import mma"
    "$FASWEEP" report --space "$REPO/spaces/l4.json" --store mma.lmdb -o mma.html >/dev/null ||
        flunk "mma report"
    expect_in "$(cat mma.html)" 'class="pt">w4 &#183; s1 &#183; z0<title>NUM_WARPS 4, STAGES 1, SWIZZLE 0</title>'
    expect_in "$(cat mma.html)" "one panel per NUM_WARPS w, STAGES s, SWIZZLE z"
    # --family without a space: that family's records' axes (none here)
    "$FASWEEP" report --store mma.lmdb --family wgmma -o none.html >/dev/null || flunk "none"
    expect_in "$(cat none.html)" "no heatmap. Its grid is kernel family wgmma's (--family picks another)."
    # --family with a space that does not sweep it
    run --separate-stderr "$FASWEEP" report --space "$REPO/spaces/l4.json" --family wgmma \
        --store "$STORE" -o x.html
    expect_status 2
    expect_in "$stderr" "space l4 sweeps no wgmma grid"
}

@test "help: the texts name every family's axes, config texts, templates and rules from the table" {
    run "$FASWEEP" --help
    expect_status 0
    expect_in "$output" "kernel families"
    expect_in "$output" "axes BLOCK_M, BLOCK_N, CONSUMER_WG, STAGES, PIPELINE; config text wgmma:d64.m128.n128.c2.s2.p2"
    expect_in "$output" "axes BLOCK_M, BLOCK_N, NUM_WARPS, STAGES, SWIZZLE; config text d64.m128.n64.w4.s2.z1"
    expect_not_in "$output" "one templated"
    run "$FASWEEP" plan --help
    expect_in "$output" "head_dim, warp_rows, chunks, smem, arch, tile, regs, pipeline"
    run "$FASWEEP" export --help
    expect_in "$output" "BLOCK_M, BLOCK_N, CONSUMER_WG, STAGES, PIPELINE (wgmma)"
    expect_in "$output" "32*NUM_WARPS (mma), 128*(CONSUMER_WG + 1) (wgmma)"
    expect_in "$output" "kernels/wgmma/flash_fwd_wgmma.cuh (wgmma)"
    expect_in "$output" "--family NAME"
    run "$FASWEEP" report --help
    expect_in "$output" "BLOCK_M x BLOCK_N per (CONSUMER_WG, STAGES, PIPELINE) panel (wgmma)"
    expect_in "$output" "BLOCK_M x BLOCK_N per (NUM_WARPS, STAGES, SWIZZLE) panel (mma)"
    run "$FASWEEP" eval --help
    expect_in "$output" "d64.m128.n64.w4.s2.z1 (mma), wgmma:d64.m128.n128.c2.s2.p2 (wgmma)"
    expect_in "$output" "kernels/mma/flash_fwd.cuh (mma),"
    run "$FASWEEP" show --help
    expect_in "$output" "d64.m128.n128.c2.s2.p2 (wgmma)"
    # every placeholder is filled, in --help and in the Markdown reference
    for c in plan grid eval list topk export report import merge show remove version; do
        run "$FASWEEP" "$c" --help
        expect_status 0
        expect_not_in "$output" "{{"
    done
    run "$FASWEEP" help --markdown
    expect_not_in "$output" "{{"
    expect_in "$output" "128*(CONSUMER_WG + 1) (wgmma)"
}

@test "eval: a config text that is none names every family's form, from the table" {
    run --separate-stderr "$FASWEEP" eval --problem 4,8,512,64 --config d64.m64 --store "$STORE"
    expect_status 2
    expect_in "$stderr" "d64.m128.n64.w4.s2.z1 (mma), wgmma:d64.m128.n128.c2.s2.p2 (wgmma)"
    expect_in "$stderr" "wgmma: d=HEAD_DIM m=BLOCK_M n=BLOCK_N c=CONSUMER_WG s=STAGES p=PIPELINE"
    [ "$(printf '%s\n' "$stderr" | grep -c .)" -le 2 ] || flunk "more than the message and its hint"
}
