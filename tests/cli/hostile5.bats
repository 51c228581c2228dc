#!/usr/bin/env bats
# hostile5.bats - the fourth round of hostile input, the C side:
# what a record may say (it reaches the seeds, which must stay within
# docs/seeds.schema.json, and the ratios, which must stay finite), paths
# in records that are not files, a closed stdout pipe, a file-size limit, a
# full disk, and the planner's arithmetic on sizes that overflow. Each test
# names the promise it keeps.

load helpers

# rec EXPR: the first fixture record changed by the Python statement EXPR
# (on r), as one JSON line.
rec() {
    python3 -c '
import json, sys
r = json.loads(open(sys.argv[1]).readline())
exec(sys.argv[2])
print(json.dumps(r))' "$FIX/results.jsonl" "$1"
}

# in_time SECONDS CMD...: runs CMD (a reading command must finish); status 124 is a hang.
in_time() {
    local s=$1
    shift
    run --separate-stderr timeout -k 2 "$s" "$@"
    [ "$status" -ne 124 ] && [ "$status" -ne 137 ] || flunk "hung: $*"
}

# A variant record (build src-HASH) whose source is at PATH with the hash it has.
variant_rec() { # variant_rec PATH HASH
    rec "r['key']['build'] = 'src-$2'; r['provenance']['kernel_hash'] = '$2';
r['provenance']['kernel_path'] = '$1'"
}

@test "import refuses the records whose seeds would break the schema: a variant without its hash or path, an upper-case hash, year 10000" {
    # each case: the change, then the field the refusal names
    local cases=(
        "r['key']['build'] = 'src-0123456789abcdef'" provenance.kernel_hash
        "r['key']['build'] = 'src-0123456789abcdef'; r['provenance']['kernel_path'] = '/k.cuh'" provenance.kernel_hash
        "r['key']['build'] = 'src-0123456789abcdef'; r['provenance']['kernel_hash'] = '0123456789abcdef'" provenance.kernel_path
        "r['provenance']['kernel_hash'] = '0123456789ABCDEF'" provenance.kernel_hash
        "r['provenance']['timestamp'] = 253402300800" provenance.timestamp
        "r['provenance']['timestamp'] = -5" provenance.timestamp
    )
    local n
    for ((n = 0; n < ${#cases[@]}; n += 2)); do
        rec "${cases[n]}" >r.jsonl
        run --separate-stderr "$FASWEEP" import r.jsonl --store "$STORE"
        expect_status 2
        expect_in "$stderr" "r.jsonl:1: ${cases[n + 1]}"
        [ ! -e "$STORE" ] || flunk "a store was made for: ${cases[n]}"
    done
}

@test "no time outside 1e-6..1e9 us is stored, so a speedup is a finite number beside its baseline" {
    rec "r['kind'] = 'baseline'; r['key']['config'] = 'sdpa'; r['time'].update(median_us=1e308, mean_us=1e308, min_us=1)" >b.jsonl
    run --separate-stderr "$FASWEEP" import b.jsonl --store "$STORE"
    expect_status 2
    expect_in "$stderr" "time.median_us"
    # The extremes that are stored give finite ratios, in the table and the JSON.
    { rec "r['kind'] = 'baseline'; r['key']['config'] = 'sdpa'; r['time'].update(median_us=1e9, mean_us=1e9, min_us=1e9, ci_lo_us=1e9, ci_hi_us=1e15)"
      rec "r['time'].update(median_us=1e-6, mean_us=1e-6, min_us=1e-6, ci_lo_us=1e-6, ci_hi_us=1e-6)"
    } >x.jsonl
    "$FASWEEP" import x.jsonl --store "$STORE" >/dev/null || flunk "import of the extremes"
    run --separate-stderr "$FASWEEP" topk --json --store "$STORE"
    expect_status 0
    expect_not_in "$output" "inf"
    echo "$output" | python3 -c '
import json, math, sys
doc = json.load(sys.stdin)
found = 0
def walk(x):
    global found
    if isinstance(x, dict):
        for k, v in x.items():
            if k.startswith("speedup"):
                assert v is not None and math.isfinite(v), (k, v)
                found += 1
            walk(v)
    elif isinstance(x, list):
        for v in x:
            walk(v)
walk(doc)
assert found >= 3, found
' || flunk "a speedup is not a finite number: $output"
    run --separate-stderr "$FASWEEP" topk --store "$STORE" --no-seeds
    expect_status 0
    expect_not_in "$output" "infx"
    expect_in "$output" "1000000000000000.00x"
}

@test "a record's kernel_path that is a FIFO or /dev/stdin is never waited on" {
    mkfifo k.fifo
    local h=0123456789abcdef
    { variant_rec "$WORK/k.fifo" $h; variant_rec /dev/stdin $h |
        sed 's/"d64.m64.n64.w4.s2.z1"/"d64.m64.n64.w4.s1.z1"/'; } >v.jsonl
    "$FASWEEP" import v.jsonl --store "$STORE" >/dev/null || flunk "import"
    # stdin is a pipe that never ends: reading it would hang
    in_time 20 "$FASWEEP" topk --variants --json --store "$STORE" --seeds-dir sd < <(sleep 60)
    expect_status 0
    in_time 20 "$FASWEEP" topk --variants --store "$STORE" --seeds-dir sd2 --emit-source src < <(sleep 60)
    expect_status 0
    python3 -c '
import glob, json
n = 0
for f in glob.glob("sd2/*.json"):
    for s in json.load(open(f))["seeds"]:
        if s["variant"]:
            n += 1
            assert s["source"].get("text") is None, s["source"]
assert n >= 2, n
' || flunk "a seed carries the text of a FIFO or of stdin"
}

@test "a closed stdout pipe is exit 1 with 'writing the output:', never SIGPIPE; the seeds are written all the same" {
    "$FASWEEP" import "$FIX/results.jsonl" --store "$STORE" >/dev/null
    local key
    key=$(head -1 "$FIX/results.jsonl" | python3 -c '
import json, sys; k = json.load(sys.stdin)["key"]
print("|".join([k["device"], k["problem"], k["build"], k["config"], k["mode"]]))')
    local cmds=("export --store $STORE" "topk --store $STORE --no-seeds" "list"
        "plan --space $REPO/spaces/h100.json" "version" "--help" "show --store $STORE KEY")
    for c in "${cmds[@]}"; do
        # the reader is gone before fasweep writes
        # shellcheck disable=SC2086
        local extra=()
        if [[ $c == *" KEY" ]]; then extra=("$key"); fi
        { sleep 0.3; r=0; "$FASWEEP" ${c% KEY} "${extra[@]}" 2>err || r=$?; echo $r >rc; } | true
        [ "$(cat rc)" = 1 ] || flunk "$c: exit $(cat rc), not 1: $(cat err)"
        grep -q '^fasweep: writing the output: Broken pipe' err || flunk "$c: $(cat err)"
        [ "$(wc -l <err)" = 1 ] || flunk "$c: more than one line: $(cat err)"
    done
    { sleep 0.3; "$FASWEEP" topk --store "$STORE" --seeds-dir sd 2>/dev/null; } | true
    [ "$(ls sd | wc -l)" -ge 5 ] || flunk "seeds lost to a closed pipe: $(ls sd)"
}

@test "under a file-size limit, export -o and report -o are exit 1 with a message, no temp file" {
    "$FASWEEP" import "$FIX/results.jsonl" --store "$STORE" >/dev/null
    run --separate-stderr bash -c 'ulimit -f 1; "$0" export --store "$1" -o out.jsonl' "$FASWEEP" "$STORE"
    expect_status 1
    expect_in "$stderr" "File too large"
    run --separate-stderr bash -c 'ulimit -f 1; "$0" report --store "$1" -o r.html' "$FASWEEP" "$STORE"
    expect_status 1
    expect_in "$stderr" "File too large"
    run --separate-stderr bash -c 'ulimit -f 1; "$0" export --store "$1"' "$FASWEEP" "$STORE"
    [ -z "$(ls | grep -v '^store.lmdb$')" ] || flunk "left behind: $(ls)"
}

@test "export > /dev/full blames the output, once, not the store" {
    "$FASWEEP" import "$FIX/results.jsonl" --store "$STORE" >/dev/null
    run --separate-stderr bash -c '"$0" export --store "$1" >/dev/full' "$FASWEEP" "$STORE"
    expect_status 1
    [ "$stderr" = "fasweep: writing the output: No space left on device; it is incomplete" ] ||
        flunk "message: $stderr"
}

@test "a wgmma seed's --emit-source file and its re-score command compile as they are" {
    command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || skip "no nvcc"
    export CUDA_VISIBLE_DEVICES="" FASWEEP_CACHE="$WORK/cache" PATH="$PATH:/usr/local/cuda/bin"
    grep '"family":"wgmma"' "$FIX/family.jsonl" | head -1 >w.jsonl
    "$FASWEEP" import w.jsonl --store "$STORE" >/dev/null || flunk "import"
    "$FASWEEP" topk -k 1 --store "$STORE" --emit-source src --seeds-dir sd 2>/dev/null || flunk "topk"
    local f
    f=$(ls src/*.cuh)
    grep -q FA_WG_INSTANCE "$f" || flunk "$f is not the wgmma template"
    # the seed's own command, as written
    mapfile -t argv < <(python3 -c '
import glob, json
s = json.load(open(glob.glob("sd/*.json")[0]))["seeds"][0]
print("\n".join(s["rescore"]["source_argv"][1:]))')
    run --separate-stderr "$FASWEEP" "${argv[@]}"
    expect_status 1
    expect_in "$stderr" "the variant compiled"
    expect_not_in "$stderr" "FA_INSTANCE"
}
