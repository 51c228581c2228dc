#!/usr/bin/env bats
# results.bats - the store commands end to end without a GPU, on hand-written
# fixture results (fixtures/results.jsonl: two devices, two problems, hot and
# cold, kernel and baseline records, statuses ok, wrong, crashed, timeout,
# and a tie on median broken by noise):
# import, topk and seeds, export round trips, merge, show, and the errors.

load helpers

L4="NVIDIA L4"
H100="NVIDIA H100 80GB HBM3"
P1="b4.h8.s512.d64.nc"
P2="b1.h2.s200.d128.c"

# Config column of the table rows of one group (rows start with the rank).
group_configs() { # DEVICE PROBLEM [MODE, default hot]
    awk -v hdr="$1 | $2 | ${3:-hot} | " 'index($0, hdr) == 1 { on = 1; next } on && /^$/ { on = 0 }
        on && $1 ~ /^[0-9]+$/ { print $2 }' <<<"$output"
}

@test "import: prints the count; records are stored" {
    run --separate-stderr "$FASWEEP" import "$FIX/results.jsonl" --store "$STORE"
    expect_status 0
    expect_in "$output" "imported 22 records"
    [ -d "$STORE" ] || flunk "no store at $STORE"
    [ "$("$FASWEEP" export --store "$STORE" | wc -l)" -eq 22 ] || flunk "export count"
}

@test "import a bad line: exit 2 naming file and line; store unchanged" {
    import_fixture
    "$FASWEEP" export --store "$STORE" >before.jsonl
    run --separate-stderr "$FASWEEP" import "$FIX/bad_status.jsonl" --store "$STORE"
    expect_status 2
    expect_in "$stderr" "bad_status.jsonl:3:"
    expect_in "$stderr" "exploded"
    expect_in "$stderr" "nothing was imported"
    run --separate-stderr "$FASWEEP" import "$FIX/bad_json.jsonl" --store "$STORE"
    expect_status 2
    expect_in "$stderr" "bad_json.jsonl:3:"
    "$FASWEEP" export --store "$STORE" >after.jsonl
    cmp before.jsonl after.jsonl || flunk "the store changed"
    # A failed import into a new path leaves no store behind.
    run --separate-stderr "$FASWEEP" import "$FIX/bad_status.jsonl" --store fresh.lmdb
    expect_status 2
    [ ! -e fresh.lmdb ] || flunk "a store was left at fresh.lmdb"
}

@test "import: unreadable file, wrong argument count" {
    run --separate-stderr "$FASWEEP" import "$WORK/none.jsonl" --store "$STORE"
    expect_status 2
    expect_in "$stderr" "none.jsonl"
    run --separate-stderr "$FASWEEP" import --store "$STORE"
    expect_status 2
    run --separate-stderr "$FASWEEP" import a.jsonl b.jsonl --store "$STORE"
    expect_status 2
    [ ! -e "$STORE" ] || flunk "a store was created"
}

@test "topk: groups, ranking order, ties, failed-only group, speedup column, seeds" {
    import_fixture
    run --separate-stderr "$FASWEEP" topk --store "$STORE"
    expect_status 0
    # Headers: counts and the fastest ok baseline (the crashed one is ignored).
    expect_in "$output" "$L4 | $P1 | hot | 5 ok, 3 failed | best baseline: sdpa-flash 181.20 us"
    expect_in "$output" "$L4 | $P2 | hot | 0 ok, 2 failed | best baseline: none"
    expect_in "$output" "no ok kernel results (2 failed)"
    expect_in "$output" "$H100 | $P1 | hot | 4 ok, 0 failed | best baseline: sdpa-flash 41.80 us"
    expect_in "$output" "$H100 | $P2 | hot | 2 ok, 0 failed | best baseline: none"
    expect_not_in "$output" "sdpa-cudnn"
    # No --mode: every mode stored, one section each (hot before cold).
    expect_in "$output" "$L4 | $P1 | cold | 2 ok, 0 failed | best baseline: none"
    [ "$(grep -n "$L4 | $P1 | hot" <<<"$output" | cut -d: -f1)" -lt \
        "$(grep -n "$L4 | $P1 | cold" <<<"$output" | cut -d: -f1)" ] || flunk "hot after cold"
    # Median order; the 158.40 tie goes to the lower noise (n32: 0.07 % < 0.11 %);
    # wrong/crashed/timeout configs are not ranked.
    local got
    got=$(group_configs "$L4" "$P1" | tr '\n' ' ')
    [ "$got" = "d64.m128.n64.w8.s2.z1 d64.m64.n64.w4.s2.z1 d64.m64.n32.w4.s2.z1 d64.m64.n64.w4.s1.z1 d64.m64.n64.w4.s2.z0 " ] ||
        flunk "L4 order: $got"
    got=$(group_configs "$H100" "$P1" | tr '\n' ' ')
    [ "$got" = "d64.m128.n128.w8.s2.z1 d64.m128.n64.w8.s2.z1 d64.m64.n64.w4.s2.z1 d64.m64.n64.w4.s1.z0 " ] ||
        flunk "H100 order: $got"
    # Speedup = best baseline median / median: 181.2/148.3, 181.2/290.5; none -> "-".
    local row
    row=$(grep -E '^ +1 +d64\.m128\.n64\.w8\.s2\.z1 +148\.30' <<<"$output") || flunk "no L4 rank-1 row"
    # (The last column is the SM clock: unknown, "-", in these hand-written records.)
    [[ "$row" =~ 1\.22x\ +-$ ]] || flunk "L4 rank 1 speedup: $row"
    row=$(grep -E 'd64\.m64\.n64\.w4\.s2\.z0 +290\.50' <<<"$output")
    [[ "$row" =~ 0\.62x\ +-$ ]] || flunk "slow config speedup: $row"
    row=$(grep -E 'd128\.m64\.n64\.w4\.s1\.z1 +9\.80' <<<"$output")
    [[ "$row" =~ \ -\ +-$ ]] || flunk "no-baseline speedup: $row"
    # Seeds: one file per group, paths on stderr.
    for f in nvidia-l4_b4.h8.s512.d64.nc_hot nvidia-l4_b1.h2.s200.d128.c_hot \
        nvidia-h100-80gb-hbm3_b4.h8.s512.d64.nc_hot nvidia-h100-80gb-hbm3_b1.h2.s200.d128.c_hot \
        nvidia-l4_b4.h8.s512.d64.nc_cold; do
        [ -f "store.seeds/$f.json" ] || flunk "missing store.seeds/$f.json"
        expect_in "$stderr" "store.seeds/$f.json"
        json_valid <"store.seeds/$f.json" || flunk "store.seeds/$f.json is not JSON"
    done
    [ "$(ls store.seeds | wc -l)" -eq 5 ] || flunk "extra files in seeds/: $(ls store.seeds)"
}

@test "one vocabulary: a seed's resources, cycles and clock have the record's names and values (unknown: null)" {
    import_fixture
    "$FASWEEP" export --store "$STORE" >all.jsonl || flunk "export failed"
    "$FASWEEP" topk -k 8 --json --no-seeds --store "$STORE" >top.json || flunk "topk failed"
    run python3 - all.jsonl top.json <<'PY'
import json, sys
recs = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    k = r["key"]
    recs[(k["device"], k["problem"], k["config"], k["mode"])] = r
n = 0
for g in json.load(open(sys.argv[2]))["groups"]:
    for e in g["seeds"]:
        r = recs[(g["device"], g["problem"]["text"], e["config_text"], g["mode"])]
        for grp in ("resources", "cycles", "clock", "errors"):
            for key, v in e[grp].items():
                assert key in r[grp], (grp, key, sorted(r[grp]))
                want = r[grp][key]
                if grp == "clock" and want == -1:
                    want = None  # the record's unknown sentinel: null in every output
                if key == "below_threshold" and want in (0, 1):
                    want = bool(want)
                assert v == want, (grp, key, v, want)
        for key in ("sm_clock_mhz", "mem_clock_mhz", "throttled"):
            want = r["env"][key]
            assert e["provenance"][key] == (None if want == -1 else want), (key, e["provenance"])
        n += 1
assert n >= 8, n
PY
    expect_status 0
}

@test "seeds file: schema fields and values" {
    import_fixture
    "$FASWEEP" topk -k 3 --store "$STORE" 2>/dev/null || flunk "topk failed"
    run python3 - "store.seeds/nvidia-l4_b4.h8.s512.d64.nc_hot.json" \
        "$(sha256sum "$REPO/kernels/mma/flash_fwd.cuh" | cut -c1-64)" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "fasweep.seeds/1"
assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", d["generated_at"]), d["generated_at"]
assert d["fasweep_version"]
assert d["device"] == "NVIDIA L4" and d["mode"] == "hot"
assert d["problem"] == {"text": "b4.h8.s512.d64.nc", "batch": 4, "heads": 8, "seq_len": 512,
                        "head_dim": 64, "causal": False, "dtype": "fp16", "kv_heads": 8}, d["problem"]
assert d["baseline"] == {"name": "sdpa-flash", "median_us": 181.2, "ci_lo_us": None,
                         "ci_hi_us": None}, d["baseline"]
assert d["counts"] == {"ok": 5, "failed": 3, "variants_not_ranked": 0}, d["counts"]
s = d["seeds"]
assert [e["rank"] for e in s] == [1, 2, 3]
assert [e["config_text"] for e in s] == ["d64.m128.n64.w8.s2.z1", "d64.m64.n64.w4.s2.z1",
                                         "d64.m64.n32.w4.s2.z1"]
e = s[0]
assert all(x["family"] == "mma" for x in s), [x["family"] for x in s]
assert e["config"] == {"BLOCK_M": 128, "BLOCK_N": 64, "NUM_WARPS": 8, "STAGES": 2,
                       "SWIZZLE": 1, "HEAD_DIM": 64}, e["config"]
m = e["metrics"]
assert set(m) == {"median_us", "min_us", "mean_us", "stdev_us", "cv", "noise", "samples",
                  "launches_per_sample", "tflops", "gbps", "speedup_vs_baseline",
                  "ci_lo_us", "ci_hi_us", "rounds", "speedup_lo", "speedup_hi"}, set(m)
# a fixture record from before intervals: none, never certain, no spread
assert m["ci_lo_us"] is None and m["ci_hi_us"] is None and m["rounds"] == 0
assert m["speedup_lo"] is None and m["speedup_hi"] is None
# no intervals: whether rank 2 ties with rank 1 is unknown (null), never a tie
assert e["tie_with_first"] is False and d["seeds"][1]["tie_with_first"] is None
assert e["paths"] == {"q_in_regs": True, "lookahead": False}, e["paths"]
assert e["clock"] == {"sm_min_mhz": None, "sm_median_mhz": None, "sm_max_mhz": None,
                      "ref_mhz": None, "blocks": 0, "discarded_blocks": 0,
                      "below_threshold": None}, e["clock"]
assert m["median_us"] == 148.3 and m["samples"] == 120 and m["noise"] == 0.0012
assert abs(m["speedup_vs_baseline"] - 181.2 / 148.3) < 1e-9
assert set(e["errors"]) == {"rel_l2", "max_abs"}
assert e["resources"] == {"regs": 96, "smem_static": 0, "smem_dynamic": 49152,
                          "local_bytes": 0, "max_blocks_per_sm": 2}, e["resources"]
# Standalone: not a variant, the template's SHA-256 (as this binary embeds it),
# the gate, and the command that re-scores it into the same store.
assert e["variant"] is False
src = e["source"]
assert src["path"] == "kernels/mma/flash_fwd.cuh" and src["file"] is None
assert src["sha256"] == sys.argv[2], src
assert src["same_build"] is False  # the fixture's build is not this binary's
assert e["gate"]["rel_l2_max"] == 0.005 and e["gate"]["max_abs_max"] == 0.03
assert e["rescore"]["argv"][:9] == ["fasweep", "eval", "--problem", "b4.h8.s512.d64.nc",
    "--config", "d64.m128.n64.w8.s2.z1", "--mode", "hot", "--json"], e["rescore"]
assert e["rescore"]["command"] == " ".join(e["rescore"]["argv"])
assert set(e["cycles"]) == {"cta_mean", "cta_max", "waves", "sm_imbalance"}, e["cycles"]
p = e["provenance"]
for k in ("build", "kernel_source", "space_name", "space_hash", "timestamp", "host",
          "gpu_uuid", "driver", "runtime", "cc"):
    assert k in p, k
assert p["build"] == "5e1f0c2a9b3d4e67" and p["kernel_source"] == "kernels/mma/flash_fwd.cuh"
assert p["cc"] == 89 and p["host"] == "l4-box" and p["space_name"] == "l4"
assert re.fullmatch(r"2024-11-22T\d\d:\d\d:\d\dZ", p["timestamp"]), p["timestamp"]
PY
    expect_status 0
    # No baseline: null, and null speedups.
    run python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["baseline"] is None
assert d["problem"]["causal"] is True and d["problem"]["head_dim"] == 128
assert all(e["metrics"]["speedup_vs_baseline"] is None for e in d["seeds"])
assert len(d["seeds"]) == 2
' "store.seeds/nvidia-h100-80gb-hbm3_b1.h2.s200.d128.c_hot.json"
    expect_status 0
}

@test "topk: fewer results than k, k = 1, cold mode, --no-seeds, --seeds-dir" {
    import_fixture
    run --separate-stderr "$FASWEEP" topk -k 100 --no-seeds --store "$STORE"
    expect_status 0
    [ "$(group_configs "$L4" "$P1" | wc -l)" -eq 5 ] || flunk "k 100 should give all 5"
    [ ! -e store.seeds ] || flunk "--no-seeds wrote seeds"
    run --separate-stderr "$FASWEEP" topk -k 1 --no-seeds --store "$STORE"
    expect_status 0
    [ "$(group_configs "$L4" "$P1")" = "d64.m128.n64.w8.s2.z1" ] || flunk "k 1"
    [ "$(group_configs "$H100" "$P2")" = "d128.m64.n64.w4.s1.z1" ] || flunk "k 1 H100"
    run --separate-stderr "$FASWEEP" topk --mode cold --seeds-dir out/cold --store "$STORE"
    expect_status 0
    expect_in "$output" "$L4 | $P1 | cold | 2 ok, 0 failed"
    [ "$(group_configs "$L4" "$P1" cold | tr '\n' ' ')" = "d64.m128.n64.w8.s2.z1 d64.m64.n64.w4.s2.z1 " ] ||
        flunk "cold order"
    [ -f out/cold/nvidia-l4_b4.h8.s512.d64.nc_cold.json ] || flunk "no cold seeds file"
    [ "$(ls out/cold | wc -l)" -eq 1 ] || flunk "cold: $(ls out/cold)"
}

@test "topk: --problem in both forms, --gpu filter" {
    import_fixture
    run --separate-stderr "$FASWEEP" topk --problem 4,8,512,64 --no-seeds --store "$STORE"
    expect_status 0
    expect_in "$output" "$L4 | $P1 | hot"
    expect_in "$output" "$H100 | $P1 | hot"
    expect_not_in "$output" "$P2"
    local short="$output"
    run --separate-stderr "$FASWEEP" topk --problem "$P1" --no-seeds --store "$STORE"
    [ "$output" = "$short" ] || flunk "the two problem forms differ"
    run --separate-stderr "$FASWEEP" topk --gpu "$H100" --problem "$P1" --store "$STORE"
    expect_status 0
    [ "$(grep -c ' | hot | ' <<<"$output")" -eq 1 ] || flunk "one group expected"
    [ "$(ls store.seeds)" = "nvidia-h100-80gb-hbm3_b4.h8.s512.d64.nc_hot.json" ] || flunk "seeds: $(ls store.seeds)"
    run --separate-stderr "$FASWEEP" topk --gpu "NVIDIA A100" --store "$STORE"
    expect_status 1
    expect_in "$stderr" "match the filter"
}

@test "topk: only failed results -> says so, exit 1, no seeds" {
    import_fixture
    run --separate-stderr "$FASWEEP" topk --gpu "$L4" --problem "$P2" --store "$STORE"
    expect_status 1
    expect_in "$output" "0 ok, 2 failed"
    expect_in "$stderr" "no ok kernel results"
    [ ! -e store.seeds ] || flunk "seeds written"
}

@test "topk --json: one document with every group" {
    import_fixture
    run --separate-stderr "$FASWEEP" topk --json -k 2 --no-seeds --store "$STORE"
    expect_status 0
    echo "$output" | json_valid
    run python3 -c '
import json, sys
d = json.load(sys.stdin)
g = d["groups"]
assert [(x["device"], x["problem"]["text"], x["mode"]) for x in g] == [
    ("NVIDIA H100 80GB HBM3", "b1.h2.s200.d128.c", "hot"),
    ("NVIDIA H100 80GB HBM3", "b4.h8.s512.d64.nc", "hot"),
    ("NVIDIA L4", "b1.h2.s200.d128.c", "hot"), ("NVIDIA L4", "b4.h8.s512.d64.nc", "hot"),
    ("NVIDIA L4", "b4.h8.s512.d64.nc", "cold")], g
assert [len(x["seeds"]) for x in g] == [2, 2, 0, 2, 2]
assert g[1]["seeds"][0]["config_text"] == "d64.m128.n128.w8.s2.z1"
assert g[2]["counts"] == {"ok": 0, "failed": 2, "variants_not_ranked": 0}
' <<<"$output"
    expect_status 0
}

@test "topk on an empty store and on a missing store" {
    : >empty.jsonl
    run --separate-stderr "$FASWEEP" import empty.jsonl --store "$STORE"
    expect_status 0
    expect_in "$output" "imported 0 records"
    run --separate-stderr "$FASWEEP" topk --store "$STORE"
    expect_status 1
    expect_in "$stderr" "no results in $STORE; run fasweep grid first"
    [ -z "$output" ] || flunk "stdout: $output"
    [ ! -e store.seeds ] || flunk "seeds written"
    # Read-only commands never create a store.
    for cmd in "topk" "export" "show KEY"; do
        run --separate-stderr "$FASWEEP" $cmd --store "$WORK/missing.lmdb"
        expect_status 1
        expect_in "$stderr" "missing.lmdb"
        [ ! -e "$WORK/missing.lmdb" ] || flunk "$cmd created the store"
    done
    # The default store path, and FASWEEP_STORE.
    run --separate-stderr "$FASWEEP" topk
    expect_status 1
    expect_in "$stderr" "results.lmdb"
    [ ! -e results.lmdb ] || flunk "created ./results.lmdb"
    FASWEEP_STORE="$STORE" run --separate-stderr "$FASWEEP" topk
    expect_status 1
    expect_in "$stderr" "no results in $STORE"
}

@test "export jsonl round trip: export -> import into a new store -> export is identical" {
    import_fixture
    "$FASWEEP" export --store "$STORE" --format jsonl -o one.jsonl || flunk "export"
    [ "$(wc -l <one.jsonl)" -eq 22 ] || flunk "line count"
    run --separate-stderr "$FASWEEP" import one.jsonl --store two.lmdb
    expect_status 0
    "$FASWEEP" export --store two.lmdb >two.jsonl || flunk "export 2"
    cmp one.jsonl two.jsonl || flunk "round trip changed the records"
    # Every line is one JSON object with the key fields.
    while IFS= read -r line; do
        json_eval - 'd["key"]["device"]' <<<"$line" >/dev/null || flunk "bad line: $line"
    done <one.jsonl
    # CSV: header plus one row per record, identical from both stores.
    "$FASWEEP" export --store "$STORE" --format csv >one.csv
    "$FASWEEP" export --store two.lmdb --format csv -o two.csv
    cmp one.csv two.csv || flunk "csv differs"
    [ "$(wc -l <one.csv)" -eq 23 ] || flunk "csv rows"
    head -1 one.csv | grep -q '^device,problem,build,config,mode,' || flunk "csv header: $(head -1 one.csv)"
    run python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 22
assert sorted(set(r["status"] for r in rows)) == ["crashed", "ok", "timeout", "wrong"]
assert any("illegal memory access" in r["error"] for r in rows)
' one.csv
    expect_status 0
}

@test "kernel family: old records read as mma; another family is its own key, round-trips, ranks with its family" {
    import_fixture
    # The fixture has no key.family: every record reads as mma, and its
    # export (the store's values) still has none.
    "$FASWEEP" export --store "$STORE" -o one.jsonl || flunk "export"
    ! grep -q '"family"' one.jsonl || flunk "an mma record was written with key.family"
    # The fastest L4 record again, as a record of family "wgmma" (100 us,
    # config d64.m128.n128.c2.s2.p2): a second key beside the mma one, not a
    # replacement.
    cp "$FIX/family.jsonl" wg.jsonl
    run --separate-stderr "$FASWEEP" import wg.jsonl --store "$STORE"
    expect_status 0
    run --separate-stderr "$FASWEEP" show "$L4|$P1|5e1f0c2a9b3d4e67|wgmma|d64.m128.n128.c2.s2.p2|hot" --store "$STORE"
    expect_status 0
    [ "$(json_eval - 'd["key"]["family"] + " " + str(d["time"]["median_us"])' <<<"$output")" = "wgmma 100" ] ||
        flunk "wgmma record: $output"
    run --separate-stderr "$FASWEEP" show "$L4|$P1|5e1f0c2a9b3d4e67|d64.m128.n64.w8.s2.z1|hot" --store "$STORE"
    expect_status 0
    [ "$(json_eval - 'str("family" in d["key"])' <<<"$output")" = "False" ] || flunk "mma record: $output"
    "$FASWEEP" export --store "$STORE" -o two.jsonl || flunk "export 2"
    [ "$(wc -l <two.jsonl)" -eq 23 ] || flunk "expected 23 records"
    [ "$(grep -c '"family":"wgmma"' two.jsonl)" -eq 1 ] || flunk "key.family not exported"
    # Export -> import -> export keeps it.
    "$FASWEEP" import two.jsonl --store three.lmdb >/dev/null || flunk "import 3"
    "$FASWEEP" export --store three.lmdb -o three.jsonl || flunk "export 3"
    cmp two.jsonl three.jsonl || flunk "round trip changed the records"
    # The seeds name each entry's family; its config, paths and kernel source
    # are that family's (wgmma: its own axes).
    "$FASWEEP" topk -k 2 --gpu "$L4" --problem "$P1" --mode hot --store "$STORE" 2>/dev/null ||
        flunk "topk failed"
    run python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["seeds"]
assert [(e["family"], e["config_text"]) for e in s] == [
    ("wgmma", "d64.m128.n128.c2.s2.p2"), ("mma", "d64.m128.n64.w8.s2.z1")], s
assert s[0]["config"] == {"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 128, "CONSUMER_WG": 2,
                          "STAGES": 2, "PIPELINE": 2}, s[0]["config"]
assert s[0]["paths"] == {"pv_overlap": True, "ping_pong": True}, s[0]["paths"]
assert s[0]["provenance"]["kernel_source"] == "kernels/wgmma/flash_fwd_wgmma.cuh", s[0]["provenance"]
assert s[1]["config"]["BLOCK_M"] == 128 and s[1]["provenance"]["kernel_source"] == "kernels/mma/flash_fwd.cuh"
' "store.seeds/nvidia-l4_b4.h8.s512.d64.nc_hot.json"
    expect_status 0
}

@test "export --prefix selects one device" {
    import_fixture
    run --separate-stderr "$FASWEEP" export --store "$STORE" --prefix "$L4|"
    expect_status 0
    [ "$(wc -l <<<"$output")" -eq 15 ] || flunk "L4 records: $(wc -l <<<"$output")"
    expect_not_in "$output" "H100"
    run --separate-stderr "$FASWEEP" export --store "$STORE" --prefix "NVIDIA X|"
    expect_status 0
    [ -z "$output" ] || flunk "expected nothing"
    # -o into a missing directory fails and leaves nothing.
    run --separate-stderr "$FASWEEP" export --store "$STORE" -o nodir/out.jsonl
    expect_status 1
    [ ! -e nodir ] || flunk "nodir created"
}

@test "merge two stores with clashes: the better record wins" {
    "$FASWEEP" import "$FIX/merge_a.jsonl" --store a.lmdb >/dev/null || flunk "import a"
    "$FASWEEP" import "$FIX/merge_b.jsonl" --store b.lmdb >/dev/null || flunk "import b"
    run --separate-stderr "$FASWEEP" merge b.lmdb --store a.lmdb
    expect_status 0
    expect_in "$output" "b.lmdb: added 1, replaced 1, kept 1"
    # Lower noise wins between two ok records (b's 40.9 us, noise 0.0008);
    # ok beats crashed (a's 38.0 us is kept).
    local k="$H100|$P1|5e1f0c2a9b3d4e67"
    [ "$("$FASWEEP" show "$k|d64.m64.n64.w4.s2.z1|hot" --store a.lmdb | json_eval - 'd["time"]["median_us"]')" = "40.9" ] ||
        flunk "clash 1"
    [ "$("$FASWEEP" show "$k|d64.m128.n64.w8.s2.z1|hot" --store a.lmdb | json_eval - 'd["status"]')" = "ok" ] ||
        flunk "clash 2"
    [ "$("$FASWEEP" export --store a.lmdb | wc -l)" -eq 4 ] || flunk "record count"
    # Merging again changes nothing: every key clashes and the destination's is as good.
    run --separate-stderr "$FASWEEP" merge b.lmdb --store a.lmdb
    expect_status 0
    expect_in "$output" "added 0, replaced 0, kept 3"
    # The source is untouched.
    [ "$("$FASWEEP" export --store b.lmdb | wc -l)" -eq 3 ] || flunk "source changed"
}

@test "merge: several sources, missing source, into itself, no source" {
    "$FASWEEP" import "$FIX/merge_a.jsonl" --store a.lmdb >/dev/null
    "$FASWEEP" import "$FIX/merge_b.jsonl" --store b.lmdb >/dev/null
    run --separate-stderr "$FASWEEP" merge a.lmdb b.lmdb --store all.lmdb
    expect_status 0
    expect_in "$output" "a.lmdb: added 3, replaced 0, kept 0"
    expect_in "$output" "b.lmdb: added 1, replaced 1, kept 1"
    "$FASWEEP" export --store all.lmdb >all.jsonl
    "$FASWEEP" merge b.lmdb --store a.lmdb >/dev/null
    "$FASWEEP" export --store a.lmdb >a.jsonl
    cmp all.jsonl a.jsonl || flunk "merge order a,b into empty != b into a"
    run --separate-stderr "$FASWEEP" merge "$WORK/nothere.lmdb" --store all.lmdb
    expect_status 1
    expect_in "$stderr" "nothere.lmdb"
    run --separate-stderr "$FASWEEP" merge all.lmdb --store "$WORK/all.lmdb"
    expect_status 2
    expect_in "$stderr" "into itself"
    run --separate-stderr "$FASWEEP" merge --store all.lmdb
    expect_status 2
}

@test "show: by key and by fields; not found" {
    import_fixture
    run --separate-stderr "$FASWEEP" show "$L4|$P1|baseline|sdpa-flash|hot" --store "$STORE"
    expect_status 0
    echo "$output" | json_valid
    [ "$(json_eval - 'd["kind"]' <<<"$output")" = "baseline" ] || flunk "kind"
    [ "$(json_eval - 'd["time"]["median_us"]' <<<"$output")" = "181.2" ] || flunk "median"
    run --separate-stderr "$FASWEEP" show --gpu "$L4" --problem 4,8,512,64 \
        --config d64.m64.n64.w4.s2.z1 --mode cold --store "$STORE"
    expect_status 0
    [ "$(json_eval - 'd["key"]["mode"] + " " + str(d["time"]["median_us"])' <<<"$output")" = "cold 171" ] ||
        flunk "cold record"
    run --separate-stderr "$FASWEEP" show --gpu "$L4" --problem "$P1" \
        --config d64.m128.n128.w8.s1.z1 --build 5e1f0c2a9b3d4e67 --store "$STORE"
    expect_status 0
    [ "$(json_eval - 'd["status"]' <<<"$output")" = "crashed" ] || flunk "crashed record"
    expect_in "$(json_eval - 'd["error"]' <<<"$output")" "illegal memory access"
    # Not found: by key, by fields, wrong build.
    run --separate-stderr "$FASWEEP" show "$L4|$P1|baseline|nope|hot" --store "$STORE"
    expect_status 1
    expect_in "$stderr" "no record"
    [ -z "$output" ] || flunk "stdout: $output"
    run --separate-stderr "$FASWEEP" show --gpu "$L4" --problem "$P1" \
        --config d64.m16.n16.w1.s1.z0 --store "$STORE"
    expect_status 1
    expect_in "$stderr" "no record"
    run --separate-stderr "$FASWEEP" show --gpu "$L4" --problem "$P1" \
        --config d64.m64.n64.w4.s2.z1 --build 0000000000000000 --store "$STORE"
    expect_status 1
    # Usage: neither form, both forms, bad problem.
    run --separate-stderr "$FASWEEP" show --store "$STORE"
    expect_status 2
    run --separate-stderr "$FASWEEP" show KEY --gpu "$L4" --store "$STORE"
    expect_status 2
    run --separate-stderr "$FASWEEP" show --gpu "$L4" --problem x --config c --store "$STORE"
    expect_status 2
}

@test "export --format kernel-tuner|t4: bad option combinations are usage errors, nothing written" {
    "$FASWEEP" import "$FIX/results.jsonl" --store "$STORE" >/dev/null
    run --separate-stderr "$FASWEEP" export --format kernel-tuner --store "$STORE" -o kt.json
    expect_status 2
    expect_in "$stderr" "--format kernel-tuner needs --space FILE"
    run --separate-stderr "$FASWEEP" export --format t4 --space "$REPO/spaces/l4.json" \
        --prefix "NVIDIA L4|" --store "$STORE"
    expect_status 2
    expect_in "$stderr" "--prefix goes with --format jsonl or csv"
    run --separate-stderr "$FASWEEP" export --format t4 --space "$REPO/spaces/l4.json" \
        -o t4.json --dir d --store "$STORE"
    expect_status 2
    expect_in "$stderr" "-o FILE and --dir DIR exclude each other"
    run --separate-stderr "$FASWEEP" export --format csv --gpu "NVIDIA L4" --store "$STORE"
    expect_status 2
    expect_in "$stderr" "go with --format kernel-tuner, t4 or t1; for csv use --prefix"
    echo '{' >bad.json
    run --separate-stderr "$FASWEEP" export --format kernel-tuner --space bad.json --store "$STORE"
    expect_status 2
    expect_in "$stderr" "bad.json"
    # the L4's records are not for the H100 space (its GPU, its hash): no group, exit 1
    run --separate-stderr "$FASWEEP" export --format kernel-tuner --space "$REPO/spaces/h100.json" \
        --gpu "NVIDIA L4" --store "$STORE" -o kt.json
    expect_status 1
    expect_in "$stderr" "match the filter for the GPU"
    [ ! -e kt.json ] && [ ! -e t4.json ] && [ ! -e d ] || flunk "a file was written"
}
