#!/usr/bin/env bats
# hostile4.bats - hostile input, fourth round (probing ground
# the third round did not name; docs/store.md, "Probed,
# round 3", lists everything tried). Each test failed on the code before
# its fix.

load helpers

# A copy of spaces/ci.json with its first problem replaced by the JSON
# object given: space_problem FILE PROBLEM_JSON.
space_problem() {
    python3 - "$REPO/spaces/ci.json" "$1" "$2" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["problems"] = [json.loads(sys.argv[3])]
json.dump(s, open(sys.argv[2], "w"))
PY
}

# The fixture's first record with a change applied to the dict r, as
# bad.jsonl: rec_patch PYTHON.
rec_patch() {
    python3 - "$FIX/results.jsonl" "$1" >bad.jsonl <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
exec(sys.argv[2])
print(json.dumps(r))
PY
}

# ---- problems the kernels cannot launch ------------------------------------------------------

@test "space: batch x heads over the CUDA grid's 65535 is refused with the limit" {
    space_problem s.json '{"batch": 65536, "heads": 65536, "seq_len": 64, "head_dim": 64}'
    expect_plan 2 s.json "s.json: problems[0]: batch x heads is 4294967296, at most 65535"
    [ "$(wc -l <<<"$stderr")" -eq 1 ] || flunk "one line expected: $stderr"
    space_problem s.json '{"batch": 256, "heads": 256, "seq_len": 64, "head_dim": 64}'
    expect_plan 2 s.json "batch x heads is 65536, at most 65535"
    # At the limit: planned.
    space_problem s.json '{"batch": 65535, "heads": 1, "seq_len": 16384, "head_dim": 64}'
    expect_plan 0 s.json
}

@test "space: more rows than the kernels index in 32-bit ints is refused; 2^30 rows plan" {
    space_problem s.json '{"batch": 1, "heads": 1, "seq_len": 2147483647, "head_dim": 128}'
    expect_plan 2 s.json "batch x heads x seq_len is 2147483647 rows, at most 1073741824"
    space_problem s.json '{"batch": 2, "heads": 1, "seq_len": 536870913, "head_dim": 128}'
    expect_plan 2 s.json
    space_problem s.json '{"batch": 1, "heads": 1, "seq_len": 1073741824, "head_dim": 128}'
    expect_plan 0 s.json
}

@test "eval --problem the kernels cannot launch: exit 2 before any GPU work, no store" {
    run --separate-stderr "$FASWEEP" eval --problem 65536,1,64,64 \
        --config d64.m64.n64.w4.s2.z1 --store "$STORE"
    expect_status 2
    expect_in "$stderr" "problem b65536.h1.s64.d64.nc: batch x heads is 65536, at most 65535"
    [ ! -e "$STORE" ] || flunk "a store was created"
    run --separate-stderr "$FASWEEP" eval --problem 1,1,2000000000,64 \
        --config d64.m64.n64.w4.s2.z1 --store "$STORE"
    expect_status 2
    expect_in "$stderr" "rows, at most 1073741824"
}

# ---- -o onto a write-protected file -----------------------------------------------------------

# expect_ro_refused FILE NEEDLE COMMAND: `fasweep COMMAND --store $STORE -o FILE`
# exits 1 with NEEDLE in its message and FILE (or what it links to) still "keep".
expect_ro_refused() {
    run --separate-stderr "$FASWEEP" "$3" --store "$STORE" -o "$1"
    expect_status 1
    expect_in "$stderr" "$2"
    [ "$(cat "$1")" = keep ] || flunk "the write-protected $1 was replaced"
}

@test "export -o a write-protected file: refused (exit 1), the file unchanged" {
    import_fixture
    echo keep >ro.jsonl
    chmod 444 ro.jsonl
    expect_ro_refused ro.jsonl \
        "ro.jsonl is write-protected (mode 0444); make it writable (chmod u+w)" export
    # Through a symlink to it: the same.
    ln -s ro.jsonl link.jsonl
    expect_ro_refused link.jsonl "is write-protected" export
    [ -L link.jsonl ] || flunk "the link was replaced"
    # Writable again: written.
    chmod 644 ro.jsonl
    run --separate-stderr "$FASWEEP" export --store "$STORE" -o ro.jsonl
    expect_status 0
    [ "$(wc -l <ro.jsonl)" -eq 22 ] || flunk "expected 22 records"
    ls ro.jsonl.tmp.* 2>/dev/null && flunk "a temp file was left"
    true
}

@test "report -o a write-protected file: refused the same way" {
    import_fixture
    echo keep >r.html
    chmod 400 r.html
    expect_ro_refused r.html "r.html is write-protected (mode 0400)" report
}

# ---- intervals whose width overflows a percentage ---------------------------------------------

@test "import: ci_hi_us over 1e6 x median_us is refused; topk never prints inf" {
    rec_patch 'r["time"].update(ci_lo_us=150, ci_hi_us=1e308)'
    expect_import_refused "time.ci_lo_us: the interval 150..1e+308 must be two numbers of at least 1e-06 around median_us 152.1, the upper at most 1e+06 times it"
    rec_patch 'r["time"].update(ci_lo_us=1e-308, ci_hi_us=152.1e6 * 1.001)'
    expect_import_refused "the upper at most 1e+06 times it"
    # At the limit: stored, and its +-95% is a number.
    rec_patch 'r["time"].update(ci_lo_us=150, ci_hi_us=152.1e6)'
    run --separate-stderr "$FASWEEP" import bad.jsonl --store "$STORE"
    expect_status 0
    run --separate-stderr "$FASWEEP" topk --no-seeds --store "$STORE"
    expect_status 0
    expect_not_in "$output" "inf"
    expect_in "$output" "49999950.69"
}

# ---- what the user typed, quoted in a message --------------------------------------------------

@test "messages quote control characters as \\xHH: one line, no terminal escapes" {
    import_fixture
    run --separate-stderr "$FASWEEP" topk --no-seeds --store "$STORE" --gpu $'A\e[31m\nB\xc2\x9bC\xff'
    expect_status 1
    expect_in "$stderr" 'GPU A\x1b[31m\x0aB\xc2\x9bC\xff, problem any'
    [ "$(wc -l <<<"$stderr")" -eq 1 ] || flunk "one line expected: $stderr"
    [[ "$stderr" != *$'\e'* ]] || flunk "a raw ESC reached stderr"
    # Valid UTF-8 (not a control) passes as is.
    run --separate-stderr "$FASWEEP" report --store "$STORE" --gpu 'Gerät ✓' -o r.html
    expect_status 1
    expect_in "$stderr" "GPU Gerät ✓, problem any"
    # Usage errors and an unknown command alike.
    run --separate-stderr "$FASWEEP" topk --mode $'hot\e]0;x\a' --store "$STORE"
    expect_status 2
    expect_in "$stderr" "got 'hot\\x1b]0;x\\x07'"
    run --separate-stderr "$FASWEEP" $'\e[2Jwipe'
    expect_status 2
    expect_in "$stderr" "unknown command '\\x1b[2Jwipe'"
    [[ "$stderr" != *$'\e'* ]] || flunk "a raw ESC reached stderr"
}

# ---- shards -----------------------------------------------------------------------------------

@test "--shard over 100000 parts names the limit; a Slurm array that large is refused" {
    run --separate-stderr "$FASWEEP" plan --space "$REPO/spaces/ci.json" --shard 1/100001
    expect_status 2
    expect_in "$stderr" "expected I/N with 0 <= I < N <= 100000"
    run --separate-stderr "$FASWEEP" plan --space "$REPO/spaces/ci.json" --shard 99999/100000
    expect_status 0
    SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=99999999 \
        expect_plan 2 "$REPO/spaces/ci.json" "the Slurm array has 100000000 tasks, at most 100000"
    SLURM_PROCID=1 SLURM_NTASKS=200000 \
        expect_plan 2 "$REPO/spaces/ci.json" "SLURM_PROCID 1 is not below SLURM_NTASKS 200000 (at most 100000)"
}

# ---- a space file nested past cJSON's limit ---------------------------------------------------

@test "space nested deeper than 1000 levels: says so, not 'syntax error near [[['" {
    python3 -c 'print("{\"name\": \"x\", \"description\": " + "[" * 2000 + "]" * 2000 + "}")' >deep.json
    expect_plan 2 deep.json "deep.json:1:1029: arrays and objects nested deeper than 1000 levels"
    expect_not_in "$stderr" "syntax error"
    # Brackets inside a string are not nesting: that is an ordinary error.
    python3 -c 'print("{\"name\": \"x\", \"description\": \"" + "[" * 2000 + "\"}")' >str.json
    expect_plan 2 str.json "target: missing required key"
}

# ---- measure knobs past what the measurement can hold -----------------------------------------

@test "space: min_samples/max_samples over 10^6 refused (the GPU side sized int buffers from them)" {
    python3 - "$REPO/spaces/ci.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for name, m in (("big", {"min_samples": 10, "max_samples": 2147483647}),
                ("min", {"min_samples": 1000001, "max_samples": 1000001}),
                ("edge", {"min_samples": 1000000, "max_samples": 1000000, "rounds": 8,
                          "ci_floor": 0.4999})):
    json.dump(dict(s, measure=m), open(name + ".json", "w"))
PY
    expect_plan 2 big.json "big.json: measure.max_samples: expected an integer from 1 to 1000000, got 2147483647"
    expect_plan 2 min.json "measure.min_samples: expected an integer from 1 to 1000000, got 1000001"
    expect_plan 0 edge.json
}

# ---- names that print as another name ---------------------------------------------------------

@test "names: invisible and bidi characters refused (device, space name); plain Unicode kept" {
    rec_patch 'r["key"]["device"] = "\u202egnp.exe"'
    expect_import_refused "key.device: holds an invisible or direction-changing character"
    rec_patch 'r["key"]["device"] = "NVIDIA L4\u200b"'
    expect_import_refused "key.device: holds an invisible or direction-changing character"
    rec_patch 'r["key"]["device"] = "Gerät 名前 ✓"'
    run --separate-stderr "$FASWEEP" import bad.jsonl --store "$STORE"
    expect_status 0
    python3 - "$REPO/spaces/ci.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
json.dump(dict(s, name="ci\u2066x"), open("s.json", "w"))
PY
    expect_plan 2 s.json 's.json: name: expected a name of 1 to 63 printable characters, got "ci\xe2\x81\xa6x"'
    # Quoted in a message, such a character is escaped, not sent to the terminal.
    run --separate-stderr "$FASWEEP" topk --no-seeds --store "$STORE" --gpu $'x\u202ey'
    expect_status 1
    expect_in "$stderr" 'GPU x\xe2\x80\xaey, problem any'
}

@test "remove KEY longer than a store key: says so (exit 2), no internal function name" {
    import_fixture
    run --separate-stderr "$FASWEEP" remove "$(printf 'k|%.0s' $(seq 300))" --store "$STORE"
    expect_status 2
    expect_in "$stderr" "the KEY is 600 bytes; a store key (DEVICE|PROBLEM|BUILD|CONFIG|MODE) is at most 511"
    expect_not_in "$stderr" "store_remove"
}
