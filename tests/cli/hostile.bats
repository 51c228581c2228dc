#!/usr/bin/env bats
# hostile.bats - hostile input and damaged stores: each test is a
# way the code at 2f10ee6 broke a promise (a long line taken as the end of
# the file, SIGBUS on a cut-short store, NUL-truncated keys and names, NaN
# medians in the ranking, seed files that depend on the filter, output
# lost on a full disk, ...) and checks that the promise holds now.

load helpers

# A valid record line with fields changed: rec_line DEVICE CONFIG [JSON-PATCH]
# (the patch is a Python expression applied to the dict `r`). A CONFIG that
# is no kernel config text (c, c1, ...) makes the record a baseline of that
# name: a kernel record's config must be its family's (record validation).
rec_line() {
    python3 - "$FIX/results.jsonl" "$1" "$2" "${3:-}" <<'PY'
import json, re, sys
r = json.loads(open(sys.argv[1]).readline())
r["key"]["device"], r["key"]["config"] = sys.argv[2], sys.argv[3]
if not re.match(r"d\d", sys.argv[3]):
    r["kind"] = "baseline"
if sys.argv[4]:
    exec(sys.argv[4])
print(json.dumps(r))
PY
}

# A store of n records (about 1.5 KB each) at $1.
big_store() {
    python3 - "$FIX/results.jsonl" "$2" >big.jsonl <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
for i in range(int(sys.argv[2])):
    r["key"]["device"] = "G%05d" % i  # distinct keys, each a valid config
    print(json.dumps(r))
PY
    "$FASWEEP" import big.jsonl --store "$1" >/dev/null || flunk "import of the big store failed"
}

@test "import: a line over 1 MiB is refused, nothing imported, exit 2 (was: taken as the end)" {
    { rec_line G c1; rec_line G c2; head -c 3000000 /dev/zero | tr '\0' 'x'; echo
      rec_line G c3; rec_line G c4; } >long.jsonl
    run --separate-stderr "$FASWEEP" import long.jsonl --store "$STORE"
    expect_status 2
    expect_in "$stderr" "long.jsonl:3: the line is longer than 1048576 bytes"
    expect_in "$stderr" "nothing was imported"
    [ ! -e "$STORE" ] || flunk "a store was left behind"
    # An endless stream of NUL bytes, under a memory limit (ASan needs more
    # address space than the limit, so it runs without one there).
    rec_line G c1 >good.jsonl
    limit="ulimit -v 300000;"
    [ -z "${FASWEEP_ASAN:-}" ] || limit=""
    run --separate-stderr bash -c "$limit cat good.jsonl /dev/zero | '$FASWEEP' import - --store '$STORE'"
    expect_status 2
    expect_in "$stderr" "-:2: the line is longer than"
    [ ! -e "$STORE" ] || flunk "a store was left behind"
}

@test "damaged store: cut-short or empty data.mdb is one line and exit 1, never a signal" {
    big_store good.lmdb 3000
    local size
    size=$(stat -c %s good.lmdb/data.mdb)
    [ "$size" -gt 1000000 ] || flunk "the big store is only $size bytes"
    "$FASWEEP" import "$FIX/merge_a.jsonl" --store dst.lmdb >/dev/null
    for cut in $((size / 2)) 1048576 12288 8192 5000 0; do
        rm -rf copy.lmdb
        cp -r good.lmdb copy.lmdb
        truncate -s "$cut" copy.lmdb/data.mdb
        local cmds=("export" "topk --no-seeds" "show G|p|b|c|hot" "import $FIX/merge_a.jsonl")
        # An empty data.mdb is damaged for a reader; a writer lets LMDB start
        # a new store there (another process may be creating it right now).
        [ "$cut" -gt 0 ] || cmds=("export" "topk --no-seeds" "show G|p|b|c|hot")
        for cmd in "${cmds[@]}"; do
            # shellcheck disable=SC2086 # split the command on purpose
            run --separate-stderr "$FASWEEP" $cmd --store copy.lmdb
            [ "$status" -eq 1 ] || { show_run; flunk "$cmd on a $cut-byte data.mdb: exit $status"; }
            [ "$(wc -l <<<"$stderr")" -eq 1 ] || flunk "$cmd: not one line: $stderr"
            expect_in "$stderr" "damaged"
            expect_in "$stderr" "restore it"
        done
        run --separate-stderr "$FASWEEP" merge copy.lmdb --store dst.lmdb
        expect_status 1
        expect_in "$stderr" "damaged"
    done
    # An import into an empty data.mdb writes a new store there.
    run --separate-stderr "$FASWEEP" import "$FIX/merge_a.jsonl" --store copy.lmdb
    expect_status 0
    [ "$("$FASWEEP" export --store dst.lmdb | wc -l)" -eq 3 ] || flunk "dst changed"
    # Not an LMDB file at all.
    rm -rf copy.lmdb && mkdir copy.lmdb && head -c 65536 /dev/urandom >copy.lmdb/data.mdb
    run --separate-stderr "$FASWEEP" export --store copy.lmdb
    expect_status 1
    expect_in "$stderr" "damaged"
}

@test "key fields and env.host: NUL, C1 controls, bad UTF-8 are refused, exit 2 (was: cut short)" {
    local bad
    for patch in 'r["key"]["device"] = "PROBE\u0000DEV"' \
        'r["env"]["host"] = "node\u00001"' \
        'r["key"]["device"] = "NV\u0085IDIA"' \
        'r["env"]["host"] = "a\u0085b"' \
        'r["key"]["config"] = "c\u009f"'; do
        rec_line G c "$patch" >bad.jsonl
        expect_import_refused "bad.jsonl:1:"
    done
    # A raw NUL byte, invalid and overlong UTF-8, written as bytes.
    for bytes in 'PROBE\x00DEV' 'NV\xffIDIA' 'a\xc0\xafb' 'x\xed\xa0\x80y'; do
        rec_line XDEVX c | python3 -c "
import sys
line = sys.stdin.buffer.read()
sys.stdout.buffer.write(line.replace(b'XDEVX', b'$bytes'.decode('unicode_escape').encode('latin-1')))
" >bad.jsonl
        expect_import_refused "bad.jsonl:1:"
    done
    [ ! -e "$STORE" ] || flunk "something was stored"
}

@test "key.mode: only the modes fasweep measures (was: any text, then unreachable)" {
    for mode in warm ../../y HOT ""; do
        rec_line G c "r['key']['mode'] = '$mode'" >bad.jsonl
        expect_import_refused "key.mode"
    done
    [ ! -e "$STORE" ] || flunk "something was stored"
}

@test "space name with \\u0000 or a C1 control: exit 2 (was: cut to 'c', exit 0)" {
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
d["name"] = "c\u0000i"
json.dump(d, open("nul.json", "w"))
d["name"] = "c\u0085i"
json.dump(d, open("c1.json", "w"))
' "$REPO/spaces/ci.json"
    expect_plan 2 nul.json "\\u0000"
    expect_plan 2 c1.json "name: expected a name"
    run --separate-stderr "$FASWEEP" plan --space nul.json --json
    expect_status 2
}

@test "ok records: a null, zero or negative median is refused (was: NaN misordered the seeds)" {
    for patch in 'r["time"]["median_us"] = None' 'r["time"]["median_us"] = -5.0' \
        'r["time"]["median_us"] = 0' 'r["time"]["min_us"] = None'; do
        rec_line G c "$patch" >bad.jsonl
        expect_import_refused "an ok record needs a median_us of at least 1e-06"
    done
    # A failed record may carry no times at all.
    rec_line G c 'r["status"] = "wrong"; r["time"]["median_us"] = None' >ok.jsonl
    run --separate-stderr "$FASWEEP" import ok.jsonl --store "$STORE"
    expect_status 0
}

# Changed deliberately with the seeds' name rule (no hash in a name): names
# that slug alike get their hash only when written in one run; a run of one
# of them gets the plain name, and a file of another group there is refused.
@test "seeds files: slug-alike names of one run never share a file; no file of another group overwritten" {
    for dev in "NVIDIA-L4" "NVIDIA_L4!" "nvidia l4" "NVIDIA L4"; do
        rec_line "$dev" d64.m64.n64.w4.s2.z1
    done >devs.jsonl
    "$FASWEEP" import devs.jsonl --store "$STORE" >/dev/null
    run --separate-stderr "$FASWEEP" topk --store "$STORE"
    expect_status 0
    [ "$(ls store.seeds | wc -l)" -eq 4 ] || flunk "4 groups, files: $(ls store.seeds)"
    local before
    before=$(cd store.seeds && for f in *; do echo "$f $(json_eval "$f" 'd["device"]')"; done)
    [ "$(echo "$before" | awk '{print $2}' | sort -u | wc -l)" -eq 4 ] || flunk "shared: $before"
    # Alone: the plain name (no hash).
    run --separate-stderr "$FASWEEP" topk --gpu "nvidia l4" --store "$STORE"
    expect_status 0
    [ "$(json_eval store.seeds/nvidia-l4_b4.h8.s512.d64.nc_hot.json 'd["device"]')" = "nvidia l4" ] ||
        flunk "the plain name does not hold 'nvidia l4'"
    # Another device of that plain name, alone: refused, naming both.
    for dev in "NVIDIA-L4" "NVIDIA L4" "NVIDIA_L4!"; do
        run --separate-stderr "$FASWEEP" topk --gpu "$dev" --store "$STORE"
        expect_status 1
        expect_in "$stderr" "holds the seeds of nvidia l4 | b4.h8.s512.d64.nc | hot, not of $dev |"
        [ "$(json_eval store.seeds/nvidia-l4_b4.h8.s512.d64.nc_hot.json 'd["device"]')" = "nvidia l4" ] ||
            flunk "topk --gpu '$dev' overwrote the file of 'nvidia l4'"
    done
    local after
    after=$(cd store.seeds && for f in *_hot_*; do echo "$f $(json_eval "$f" 'd["device"]')"; done)
    [ "$after" = "$before" ] || flunk "the hashed files changed: $before // $after"
}

@test "output to a full disk: exit 1 with a message (was: exit 0, output lost)" {
    [ -w /dev/full ] || skip "no /dev/full here"
    import_fixture
    local key="NVIDIA L4|b4.h8.s512.d64.nc|baseline|sdpa-flash|hot"
    for args in "topk --no-seeds --store $STORE" "plan --space $REPO/spaces/ci.json" \
        "plan --json --space $REPO/spaces/ci.json" "list" "list --json" "version" "--help" \
        "import $FIX/merge_a.jsonl --store other.lmdb"; do
        # shellcheck disable=SC2086 # split the arguments on purpose
        run --separate-stderr "$FASWEEP" $args
        [ "$status" -eq 0 ] || flunk "$args failed before the test: $stderr"
        # shellcheck disable=SC2086
        run --separate-stderr bash -c '"$0" "$@" >/dev/full' "$FASWEEP" $args
        [ "$status" -eq 1 ] || { show_run; flunk "$args >/dev/full: exit $status"; }
        expect_in "$stderr" "writing the output: No space left on device"
    done
    run --separate-stderr bash -c '"$0" show "$1" --store "$2" >/dev/full' "$FASWEEP" "$key" "$STORE"
    expect_status 1
    expect_in "$stderr" "writing the output: No space left on device"
}

@test "import of a directory: exit 2, unreadable input (was: exit 1)" {
    mkdir adir
    run --separate-stderr "$FASWEEP" import adir --store "$STORE"
    expect_status 2
    expect_in "$stderr" "is a directory"
    [ ! -e "$STORE" ] || flunk "a store was created"
}

@test "merge into itself: by a path that does not exist yet, or a hard-linked data.mdb: exit 2" {
    run --separate-stderr "$FASWEEP" merge X.lmdb --store X.lmdb
    expect_status 2
    expect_in "$stderr" "into itself"
    [ ! -e X.lmdb ] || flunk "merge created X.lmdb"
    run --separate-stderr "$FASWEEP" merge ./X.lmdb/ --store "$WORK/X.lmdb"
    expect_status 2
    [ ! -e X.lmdb ] || flunk "merge created X.lmdb"
    import_fixture
    mkdir link.lmdb
    ln "$STORE/data.mdb" link.lmdb/data.mdb
    run --separate-stderr "$FASWEEP" merge link.lmdb --store "$STORE"
    expect_status 2
    expect_in "$stderr" "into itself"
}

@test "merge: a source ok record without time.noise loses to one with noise (one rule)" {
    rec_line G c 'r["time"]["noise"] = 0.5; r["time"]["median_us"] = 50.0; r["time"]["min_us"] = 0' >dst.jsonl
    rec_line G c 'del r["time"]["noise"]; r["time"]["median_us"] = 10.0; r["time"]["min_us"] = 0' >src.jsonl
    "$FASWEEP" import dst.jsonl --store dst.lmdb >/dev/null
    "$FASWEEP" import src.jsonl --store src.lmdb >/dev/null
    [ "$("$FASWEEP" export --store src.lmdb | json_eval - 'd["time"]["noise"]')" = "null" ] ||
        flunk "a left-out noise should read as null (no estimate)"
    run --separate-stderr "$FASWEEP" merge src.lmdb --store dst.lmdb
    expect_status 0
    expect_in "$output" "added 0, replaced 0, kept 1"
    [ "$("$FASWEEP" export --store dst.lmdb | json_eval - 'float(d["time"]["median_us"])')" = "50.0" ] ||
        flunk "the record without noise replaced the one with"
}

@test "a full disk during an import says so; the store is unchanged" {
    [ "$(id -u)" -eq 0 ] || skip "needs root to mount a small tmpfs"
    mkdir -p disk
    mount -t tmpfs -o size=1500k tmpfs disk 2>/dev/null ||
        skip "cannot mount a tmpfs here (not allowed in this container)"
    import_fixture
    cp -r "$STORE" disk/s.lmdb
    big_store big.lmdb 3000
    "$FASWEEP" export --store big.lmdb >big.jsonl
    run --separate-stderr "$FASWEEP" import big.jsonl --store disk/s.lmdb
    local rc=$status err=$stderr
    [ "$("$FASWEEP" export --store disk/s.lmdb | wc -l)" -eq 22 ] || { umount disk; flunk "store changed"; }
    umount disk
    [ "$rc" -eq 1 ] || flunk "exit $rc: $err"
    expect_in "$err" "the disk is full"
}
