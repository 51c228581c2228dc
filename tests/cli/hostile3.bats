#!/usr/bin/env bats
# hostile3.bats - hostile input, third round (undecodable records, validation, CSV cells):
# one undecodable record must not lock the store, records are validated by
# the planner's rules, a shared (read-only) store still reads, CSV cells do
# not run as formulas, topk --json writes the seeds as the table does, and the status message
# names every status. Each test failed on the code before the fix.

load helpers

L4="NVIDIA L4"
P1="b4.h8.s512.d64.nc"
B="5e1f0c2a9b3d4e67"
DAMAGED="$L4|$P1|$B|d64.m64.n64.w4.s2.z9|hot"

# raw_put STORE KEY VALUE: writes KEY=VALUE into the store's "results"
# database with LMDB itself (liblmdb through ctypes), as a damaged store
# would hold it: nothing of fasweep checks it.
raw_put() {
    python3 - "$1" "$2" "$3" <<'PY'
import ctypes, ctypes.util, sys
lib = ctypes.CDLL(ctypes.util.find_library("lmdb") or "liblmdb.so.0")
class Val(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("data", ctypes.c_void_p)]
def ok(rc):
    if rc:
        sys.exit("lmdb: %d" % rc)
env, txn, dbi = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_uint()
ok(lib.mdb_env_create(ctypes.byref(env)))
ok(lib.mdb_env_set_maxdbs(env, 2))
ok(lib.mdb_env_open(env, sys.argv[1].encode(), 0, 0o644))
ok(lib.mdb_txn_begin(env, None, 0, ctypes.byref(txn)))
ok(lib.mdb_dbi_open(txn, b"results", 0, ctypes.byref(dbi)))
k, v = sys.argv[2].encode(), sys.argv[3].encode()
kb, vb = ctypes.create_string_buffer(k, len(k)), ctypes.create_string_buffer(v, len(v))
kv = Val(len(k), ctypes.cast(kb, ctypes.c_void_p))
vv = Val(len(v), ctypes.cast(vb, ctypes.c_void_p))
ok(lib.mdb_put(txn, dbi, ctypes.byref(kv), ctypes.byref(vv), 0))
ok(lib.mdb_txn_commit(txn))
lib.mdb_env_close(env)
PY
}

# The fixture's first record with a change: rec_patch PYTHON (applied to
# the dict r).
rec_patch() {
    python3 - "$FIX/results.jsonl" "$1" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
exec(sys.argv[2])
print(json.dumps(r))
PY
}

damaged_store() {
    import_fixture
    raw_put "$STORE" "$DAMAGED" '{"key":' || flunk "raw_put failed"
}

# ---- one undecodable record ------------------------------------------------------------------

@test "damaged record: export writes every other record, names the key, exits 1" {
    damaged_store
    run --separate-stderr "$FASWEEP" export --store "$STORE" -o out.jsonl
    expect_status 1
    expect_in "$stderr" "record '$DAMAGED' is damaged (value is not JSON); skipped (1 damaged so far)"
    expect_in "$stderr" "fasweep remove '$DAMAGED' --store"
    expect_in "$stderr" "1 damaged record was skipped"
    [ "$(wc -l <out.jsonl)" -eq 22 ] || flunk "expected the 22 good records, got $(wc -l <out.jsonl)"
    # The warning is one line per damaged record, not one per scan.
    [ "$(grep -c "is damaged" <<<"$stderr")" -eq 1 ] || flunk "warned more than once: $stderr"
    # CSV and stdout alike.
    run --separate-stderr "$FASWEEP" export --format csv --store "$STORE"
    expect_status 1
    [ "$(wc -l <<<"$output")" -eq 23 ] || flunk "csv: header + 22 rows expected"
}

@test "damaged record: topk, report, merge, show by fields read the rest with a warning" {
    damaged_store
    run --separate-stderr "$FASWEEP" topk --no-seeds --store "$STORE"
    expect_status 0
    expect_in "$stderr" "record '$DAMAGED' is damaged"
    expect_in "$output" "d64.m128.n64.w8.s2.z1"
    run --separate-stderr "$FASWEEP" report --store "$STORE" -o r.html
    expect_status 0
    expect_in "$stderr" "record '$DAMAGED' is damaged"
    [ -s r.html ] || flunk "no report"
    run --separate-stderr "$FASWEEP" merge "$STORE" --store new.lmdb
    expect_status 0
    expect_in "$stderr" "record '$DAMAGED' is damaged"
    expect_in "$output" "added 22"
    run --separate-stderr "$FASWEEP" show --gpu "$L4" --problem "$P1" \
        --config d64.m64.n64.w4.s2.z1 --store "$STORE"
    expect_status 0
    expect_in "$stderr" "record '$DAMAGED' is damaged"
    # A damaged destination record is replaced by the source's.
    raw_put new.lmdb "$L4|$P1|$B|d64.m64.n64.w4.s2.z1|hot" 'nope'
    run --separate-stderr "$FASWEEP" merge "$STORE" --store new.lmdb
    expect_status 0
    expect_in "$stderr" "is damaged (value is not JSON)"
    "$FASWEEP" show "$L4|$P1|$B|d64.m64.n64.w4.s2.z1|hot" --store new.lmdb >/dev/null ||
        flunk "the damaged destination record was not replaced"
}

@test "damaged record: show KEY says damaged (not 'no record'); remove deletes it, only when damaged" {
    damaged_store
    run --separate-stderr "$FASWEEP" show "$DAMAGED" --store "$STORE"
    expect_status 1
    expect_in "$stderr" "record $DAMAGED: value is not JSON; the record is damaged"
    expect_not_in "$stderr" "no record with key"
    [ "$(wc -l <<<"$stderr")" -eq 1 ] || flunk "not one line: $stderr"
    # A readable record is not removed without --force (exit 2).
    good="$L4|$P1|$B|d64.m64.n64.w4.s2.z1|hot"
    run --separate-stderr "$FASWEEP" remove "$good" --store "$STORE"
    expect_status 2
    expect_in "$stderr" "reads fine"
    expect_in "$stderr" "--force"
    run --separate-stderr "$FASWEEP" remove "$DAMAGED" --store "$STORE"
    expect_status 0
    expect_in "$output" "removed '$DAMAGED'"
    run --separate-stderr "$FASWEEP" export --store "$STORE" -o out.jsonl
    expect_status 0
    [ -z "$(grep -v '^fasweep: wrote ' <<<"$stderr")" ] || flunk "still warns: $stderr"
    run --separate-stderr "$FASWEEP" remove "$DAMAGED" --store "$STORE"
    expect_status 1
    expect_in "$stderr" "no record with key"
    run --separate-stderr "$FASWEEP" remove "$good" --force --store "$STORE"
    expect_status 0
    run --separate-stderr "$FASWEEP" remove --store "$STORE"
    expect_status 2
    # No store there: exit 1, and none is created.
    run --separate-stderr "$FASWEEP" remove "$DAMAGED" --store none.lmdb
    expect_status 1
    expect_in "$stderr" "no results store at none.lmdb"
    [ ! -e none.lmdb ] || flunk "remove created a store"
}

# ---- validation gaps ------------------------------------------------------------------------

@test "import refuses configs the planner would not make, naming the field" {
    local c
    for c in "d64.m-64.n64.w4.s2.z1" "d64.m99999999999.n64.w4.s2.z1" "d64.m128.n64.w3.s2.z1" \
        "d64.m64.n64.w4.s2.z7" "nonsense"; do
        rec_patch "r['key']['config'] = '$c'" >bad.jsonl
        run --separate-stderr "$FASWEEP" import bad.jsonl --store "$STORE"
        expect_status 2
        expect_in "$stderr" "bad.jsonl:1: key.config: "
        expect_in "$stderr" "$c"
        [ ! -e "$STORE" ] || flunk "a store was left behind"
    done
    # A baseline keeps its free name.
    rec_patch "r['kind'] = 'baseline'; r['key']['build'] = 'baseline'; r['key']['config'] = 'my sdpa'" >b.jsonl
    run --separate-stderr "$FASWEEP" import b.jsonl --store "$STORE"
    expect_status 0
}

@test "import refuses inconsistent times and negative spreads" {
    local p
    for p in "r['time']['noise'] = -1" "r['time']['cv'] = -1e308" \
        "r['time']['median_us'] = 1e-320; r['time']['min_us'] = 150" \
        "r['time']['min_us'] = 200" "r['time']['round_us'] = [152.1, 0]"; do
        rec_patch "$p" >bad.jsonl
        run --separate-stderr "$FASWEEP" import bad.jsonl --store "$STORE"
        expect_status 2
        expect_in "$stderr" "bad.jsonl:1: time."
    done
}

@test "merge refuses (skips) a source record the validation refuses" {
    import_fixture
    mkdir -p src.lmdb
    "$FASWEEP" import "$FIX/merge_a.jsonl" --store src.lmdb >/dev/null || flunk "import"
    raw_put src.lmdb "$L4|$P1|$B|d64.m-64.n64.w4.s2.z1|hot" \
        "$(rec_patch "r['key']['config'] = 'd64.m-64.n64.w4.s2.z1'")"
    run --separate-stderr "$FASWEEP" merge src.lmdb --store "$STORE"
    expect_status 0
    expect_in "$stderr" "is damaged (key.config: "
    run --separate-stderr "$FASWEEP" export --store "$STORE"
    expect_not_in "$output" "m-64"
}

# ---- smaller ones ---------------------------------------------------------------------------

@test "a store whose lock.mdb the user may not write is still read by read-only commands" {
    import_fixture
    "$FASWEEP" topk --no-seeds --store "$STORE" >before.txt || flunk "topk"
    if [ "$(id -u)" -eq 0 ]; then
        command -v setpriv >/dev/null || skip "root without setpriv: cannot test as another user"
        # A shared store: readable by all, writable by its owner (root) only.
        chmod 755 "$STORE" "$WORK" && chmod 644 "$STORE"/*.mdb
        # The test's own folders (bats makes them 0700) must let nobody in.
        d="$WORK"
        while [ "$d" != / ] && [ "$d" != /tmp ]; do
            chmod o+x "$d" 2>/dev/null || true
            d=$(dirname "$d")
        done
        as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
        as_user test -r "$STORE/data.mdb" || skip "the nobody user cannot reach $STORE"
        as_user test -x "$FASWEEP" || skip "the nobody user cannot run $FASWEEP"
    else
        chmod 444 "$STORE/lock.mdb" && chmod 555 "$STORE"
        as_user() { "$@"; }
    fi
    as_user test -w "$STORE/lock.mdb" && skip "lock.mdb is writable after all"
    run --separate-stderr as_user "$FASWEEP" topk --no-seeds --store "$STORE"
    chmod 755 "$STORE" 2>/dev/null
    expect_status 0
    [ "$output" = "$(cat before.txt)" ] || flunk "different ranking: $output"
    run --separate-stderr as_user "$FASWEEP" export --store "$STORE"
    expect_status 0
    [ "$(wc -l <<<"$output")" -eq 22 ] || flunk "export read $(wc -l <<<"$output") records"
    run --separate-stderr as_user "$FASWEEP" show "$L4|$P1|$B|d64.m64.n64.w4.s2.z1|hot" --store "$STORE"
    expect_status 0
}

@test "CSV export: text cells starting with = + - @ get a leading quote; numbers stay numbers" {
    rec_patch "r['key']['device'] = '=cmd|\"/c calc\"!A0'.replace('|', '!'); r['env']['host'] = '@SUM(1)'; r['status'] = 'wrong'; r['error'] = '+1-1'" >inj.jsonl
    "$FASWEEP" import inj.jsonl --store "$STORE" >/dev/null || flunk "import"
    run --separate-stderr "$FASWEEP" export --format csv --store "$STORE"
    expect_status 0
    row=$(sed -n 2p <<<"$output")
    expect_in "$row" "\"'=cmd!\"\"/c calc\"\"!A0\","
    expect_in "$row" ",'@SUM(1),"
    expect_in "$row" ",wrong,'+1-1,152.1,"
    expect_not_in "$row" ",=" && expect_not_in "$row" ",@" && expect_not_in "$row" ",+"
}

@test "topk --json has the same side effects as the table: the seeds are written unless --no-seeds" {
    import_fixture
    run --separate-stderr "$FASWEEP" topk --json --no-seeds --store "$STORE"
    expect_status 0
    json_valid <<<"$output" || flunk "not JSON"
    [ ! -e store.seeds ] || flunk "topk --json --no-seeds wrote seeds: $(ls store.seeds)"
    run --separate-stderr "$FASWEEP" topk --json --store "$STORE"
    expect_status 0
    json_valid <<<"$output" || flunk "not JSON"
    [ -n "$(ls store.seeds)" ] || flunk "topk --json wrote no seeds (the table writes them)"
    run --separate-stderr "$FASWEEP" topk --json --seeds-dir sd --store "$STORE"
    expect_status 0
    [ -n "$(ls sd)" ] || flunk "--seeds-dir given: seeds expected"
    run --separate-stderr "$FASWEEP" topk --store "$STORE"
    expect_status 0
    [ -n "$(ls store.seeds)" ] || flunk "the table form still writes seeds"
}

@test "an unknown status names every status, compile_error and implausible too" {
    rec_patch "r['status'] = 'exploded'" >bad.jsonl
    run --separate-stderr "$FASWEEP" import bad.jsonl --store "$STORE"
    expect_status 2
    expect_in "$stderr" '"timeout", "compile_error" or "implausible", got "exploded"'
}
