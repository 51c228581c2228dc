#!/usr/bin/env bats
# basics.bats - help, version, unknown commands and options, exit codes, list.

load helpers

@test "no arguments: usage on stderr, exit 2" {
    run --separate-stderr "$FASWEEP"
    expect_status 2
    [ -z "$output" ] || flunk "stdout should be empty"
    expect_in "$stderr" "usage: fasweep COMMAND"
}

@test "--help and help: usage on stdout listing every command, exit 0" {
    for args in "--help" "-h" "help"; do
        run --separate-stderr "$FASWEEP" $args
        expect_status 0
        for cmd in plan grid list topk export import merge show version; do
            expect_in "$output" "  $cmd "
        done
        [ -z "$stderr" ] || flunk "stderr should be empty"
    done
}

@test "CMD --help: each command's usage on stdout, exit 0" {
    for cmd in plan grid list topk export import merge show version; do
        run --separate-stderr "$FASWEEP" "$cmd" --help
        expect_status 0
        expect_in "$output" "usage: fasweep $cmd"
        run --separate-stderr "$FASWEEP" help "$cmd"
        expect_status 0
        expect_in "$output" "usage: fasweep $cmd"
    done
}

@test "--version and version agree and name the build" {
    run --separate-stderr "$FASWEEP" --version
    expect_status 0
    local v="$output"
    [[ "$v" =~ ^fasweep\ [0-9]+\.[0-9]+\.[0-9]+\ \(build\ [0-9a-f]+ ]] || flunk "bad version line: $v"
    run --separate-stderr "$FASWEEP" version
    expect_status 0
    [ "$output" = "$v" ] || flunk "version differs: $output"
    run --separate-stderr "$FASWEEP" version extra
    expect_status 2
    expect_in "$stderr" "unexpected argument 'extra'"
}

@test "unknown command: exit 2 with a message" {
    run --separate-stderr "$FASWEEP" frobnicate
    expect_status 2
    expect_in "$stderr" "unknown command 'frobnicate'"
    run --separate-stderr "$FASWEEP" help frobnicate
    expect_status 2
}

@test "unknown options and missing values: exit 2 naming the option" {
    run --separate-stderr "$FASWEEP" plan --space "$REPO/spaces/ci.json" --bogus
    expect_status 2
    expect_in "$stderr" "unknown option --bogus"
    run --separate-stderr "$FASWEEP" topk -z
    expect_status 2
    expect_in "$stderr" "unknown option -z"
    run --separate-stderr "$FASWEEP" plan --space
    expect_status 2
    expect_in "$stderr" "--space needs a value"
    run --separate-stderr "$FASWEEP" topk -k
    expect_status 2
    expect_in "$stderr" "-k needs a value"
    run --separate-stderr "$FASWEEP" list stray
    expect_status 2
    expect_in "$stderr" "unexpected argument 'stray'"
}

@test "bad values: -k, --mode, --problem, --format, --device, --refine" {
    for k in 0 -1 abc 3x 99999999999; do
        run --separate-stderr "$FASWEEP" topk -k "$k" --store "$STORE"
        expect_status 2
        expect_in "$stderr" "-k wants an integer"
    done
    run --separate-stderr "$FASWEEP" topk --mode warm --store "$STORE"
    expect_status 2
    expect_in "$stderr" "--mode wants one of hot, cold, batch"
    run --separate-stderr "$FASWEEP" topk --problem 4,8,512 --store "$STORE"
    expect_status 2
    expect_in "$stderr" "--problem wants"
    run --separate-stderr "$FASWEEP" export --format xml --store "$STORE"
    expect_status 2
    expect_in "$stderr" "--format wants jsonl, csv, kernel-tuner, t4 or t1"
    run --separate-stderr "$FASWEEP" grid --space "$REPO/spaces/ci.json" --device x
    expect_status 2
    run --separate-stderr "$FASWEEP" grid --space "$REPO/spaces/ci.json" --refine -2
    expect_status 2
    # Empty paths name nothing: usage errors, not odd failures later.
    run --separate-stderr "$FASWEEP" topk --seeds-dir "" --store "$STORE"
    expect_status 2
    expect_in "$stderr" "--seeds-dir wants a path"
    run --separate-stderr "$FASWEEP" export --store ""
    expect_status 2
    run --separate-stderr "$FASWEEP" merge "" --store "$STORE"
    expect_status 2
    run --separate-stderr "$FASWEEP" import "" --store "$STORE"
    expect_status 2
    # None of these created a store.
    [ ! -e "$STORE" ] || flunk "a store was created"
}

@test "list: the compiled instances, build id and archs" {
    run --separate-stderr "$FASWEEP" list
    expect_status 0
    expect_in "$output" "build "
    expect_in "$output" "archs "
    # One table per family, headed by that family's axes: a wgmma row is
    # never under mma's NUM_WARPS/SWIZZLE (the CI build holds both families).
    expect_in "$output" "family mma: "
    expect_in "$output" "family wgmma: "
    local mma_head wg_head
    mma_head=$(grep -A1 '^family mma: ' <<<"$output" | tail -1)
    wg_head=$(grep -A1 '^family wgmma: ' <<<"$output" | tail -1)
    expect_in "$mma_head" "NUM_WARPS"
    expect_in "$wg_head" "CONSUMER_WG"
    expect_in "$wg_head" "PIPELINE"
    expect_not_in "$wg_head" "NUM_WARPS"
    expect_not_in "$wg_head" "SWIZZLE"
    grep -A2 '^family wgmma: ' <<<"$output" | tail -1 | grep -q '^d64\.m.*\.c[0-9]\.s[0-9]\.p[0-9] ' ||
        flunk "the wgmma table's first row is not a wgmma instance: $output"
    run --separate-stderr "$FASWEEP" list --json
    expect_status 0
    echo "$output" | json_valid
    local n
    n=$(echo "$output" | json_eval - 'len(d["instances"])')
    [ "$n" -ge 1 ] || flunk "no instances listed"
    [ "$n" = "$(echo "$output" | json_eval - 'd["count"]')" ] || flunk "count != instances"
    # Every instance's name is its config, and smem is the planner's formula,
    # each by its family's axes (the CI build holds one wgmma instance).
    run python3 -c '
import json, sys
d = json.load(sys.stdin)
fams = set()
for i in d["instances"]:
    fams.add(i["family"])
    if i["family"] == "mma":
        name = "d%d.m%d.n%d.w%d.s%d.z%d" % (i["HEAD_DIM"], i["BLOCK_M"], i["BLOCK_N"],
                                            i["NUM_WARPS"], i["STAGES"], i["SWIZZLE"])
        smem = 2 * i["HEAD_DIM"] * (i["BLOCK_M"] + 2 * i["STAGES"] * i["BLOCK_N"])
    else:
        assert i["family"] == "wgmma", i
        name = "d%d.m%d.n%d.c%d.s%d.p%d" % (i["HEAD_DIM"], i["BLOCK_M"], i["BLOCK_N"],
                                            i["CONSUMER_WG"], i["STAGES"], i["PIPELINE"])
        # 1 KB alignment slack, Q, the K/V ring, 2 + 4 x STAGES mbarriers, and the
        # O tile of the epilogue where that fits the 232448-B opt-in limit
        smem = 1024 + 2 * i["HEAD_DIM"] * (i["BLOCK_M"] + 2 * i["STAGES"] * i["BLOCK_N"]) \
            + 8 * (2 + 4 * i["STAGES"])
        o_tile = 2 * i["HEAD_DIM"] * i["BLOCK_M"]
        smem += o_tile if smem + o_tile <= 232448 else 0
    name += {"fp16": "", "bf16": ".bf16"}[i["dtype"]]  # the dtype ends a bf16 name
    assert i["name"] == name, (i["name"], name)
    assert i["smem_bytes"] == smem, (i["name"], i["smem_bytes"], smem)
    assert i["HEAD_DIM"] in (64, 128, 256)
# ARCHS with 90 compiles the wgmma point of the CI space for sm_90a; none without.
assert fams == ({"mma", "wgmma"} if "90" in d["archs"].split(",") else {"mma"}), fams
' <<<"$output"
    expect_status 0
    # The table lists the same names.
    local table
    table=$("$FASWEEP" list)
    for name in $("$FASWEEP" list --json | json_eval - '" ".join(i["name"] for i in d["instances"])'); do
        expect_in "$table" "$name"
    done
    # --version reports the same build id.
    local build
    build=$("$FASWEEP" list --json | json_eval - 'd["build"]')
    expect_in "$("$FASWEEP" --version)" "build $build"
}

@test "sdpa_baseline.py: a bad --flush is refused before PyTorch is needed, exit 2" {
    run --separate-stderr python3 "$REPO/scripts/sdpa_baseline.py" \
        --problem 4,8,512,64 --flush bogus
    expect_status 2
    expect_in "$stderr" "argument --flush: invalid choice: 'bogus'"
    [ -z "$output" ] || flunk "stdout should be empty"
}
