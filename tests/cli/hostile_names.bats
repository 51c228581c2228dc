#!/usr/bin/env bats
# hostile_names.bats - hostile input, third round (colliding device
# names, export --dir names, a merge from a missing source; the seeds'
# name rule): each test is a way the code at
# 8968aad broke a promise and checks that it holds now.
#
#   3   seeds and export --dir names: the 32-bit name hash collided for
#       "nviDiA-=+L4-" and "nvIdiA_=,l4__" (one group lost), --dir had no
#       guard, and topk's guard read only the first 4095 bytes of a file;
#   6   one group with over 16 values on an axis made `report` fail for all;
#   8   `topk -k N` was O(n k): -k 2147483647 took 50 s at 60k records;
#   9   `merge missing.lmdb --store new.lmdb` left an empty new.lmdb.

load helpers

# The device names whose FNV-1a 32 hashes collide.
DEV_A='nviDiA-=+L4-'
DEV_B='nvIdiA_=,l4__'
CI_PROBLEM=b2.h3.s300.d64.nc # a problem of spaces/ci.json

# Record lines from the fixture's first: recs DEVICE PROBLEM N [BUILD_BASE]
# prints N ok records of one group, configs m16..m(16 N) with w1 (N <= 32),
# medians growing with the config.
recs() {
    python3 - "$FIX/results.jsonl" "$@" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
dev, prob, n = sys.argv[2], sys.argv[3], int(sys.argv[4])
for i in range(n):
    r["key"]["device"], r["key"]["problem"] = dev, prob
    r["key"]["config"] = "d64.m%d.n64.w1.s1.z0" % (16 * (i + 1))
    r["time"]["median_us"] = 150.0 + i
    r["time"]["min_us"] = 149.0 + i
    r["time"]["mean_us"] = 150.5 + i
    print(json.dumps(r))
PY
}

# The documented name of a group written beside another of the same plain
# name (store.seeds/README.md): PLAIN_HHHHHHHHHHHHHHHH.json, FNV-1a 64 of
# "DEVICE|PROBLEM|MODE".
hashed_name() {
    python3 - "$@" <<'PY'
import sys
dev, prob, mode, plain = sys.argv[1:5]
h = 0xcbf29ce484222325
for b in ("%s|%s|%s" % (dev, prob, mode)).encode():
    h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
print("%s_%016x" % (plain, h))
PY
}

@test "names: the plain rule, no hash, for any device name written alone" {
    recs "$DEV_A" b4.h8.s512.d64.nc 1 >a.jsonl
    "$FASWEEP" import a.jsonl --store "$STORE" >/dev/null
    run --separate-stderr "$FASWEEP" topk --store "$STORE"
    expect_status 0
    [ "$(ls store.seeds)" = "nvidia-l4_b4.h8.s512.d64.nc_hot.json" ] ||
        flunk "expected the plain name, got: $(ls store.seeds)"
    [ "$(json_eval store.seeds/nvidia-l4_b4.h8.s512.d64.nc_hot.json 'd["device"]')" = "$DEV_A" ] ||
        flunk "the file holds another device"
}

@test "names: two devices of one run with one plain name (the colliding pair) get two files" {
    { recs "$DEV_A" b4.h8.s512.d64.nc 1; recs "$DEV_B" b4.h8.s512.d64.nc 1; } >ab.jsonl
    "$FASWEEP" import ab.jsonl --store "$STORE" >/dev/null
    run --separate-stderr "$FASWEEP" topk --store "$STORE"
    expect_status 0
    [ "$(ls store.seeds | wc -l)" -eq 2 ] || flunk "expected 2 seeds files, got: $(ls store.seeds)"
    local dev name
    for dev in "$DEV_A" "$DEV_B"; do
        name=$(hashed_name "$dev" b4.h8.s512.d64.nc hot nvidia-l4_b4.h8.s512.d64.nc_hot).json
        [ -f "store.seeds/$name" ] || flunk "no store.seeds/$name for '$dev': $(ls store.seeds)"
        [ "$(json_eval "store.seeds/$name" 'd["device"]')" = "$dev" ] || flunk "$name: wrong group"
        expect_in "$stderr" "store.seeds/$name"
    done
}

@test "names: export --dir with the colliding pair writes one file per group, none lost" {
    { recs "$DEV_A" $CI_PROBLEM 1; recs "$DEV_B" $CI_PROBLEM 1; } >ab.jsonl
    "$FASWEEP" import ab.jsonl --store "$STORE" >/dev/null
    run --separate-stderr "$FASWEEP" export --format kernel-tuner --space "$REPO/spaces/ci.json" \
        --allow-missing --dir kt --store "$STORE"
    expect_status 0
    [ "$(ls kt | wc -l)" -eq 2 ] || flunk "expected 2 files, got: $(ls kt)"
    local dev name
    for dev in "$DEV_A" "$DEV_B"; do
        name=$(hashed_name "$dev" $CI_PROBLEM hot nvidia-l4_${CI_PROBLEM}_hot).kt.json
        [ "$(json_eval "kt/$name" 'd["fasweep"]["device"]')" = "$dev" ] ||
            flunk "kt/$name does not hold '$dev': $(ls kt)"
    done
    # Alone, a group has its plain name.
    run --separate-stderr "$FASWEEP" export --format t4 --space "$REPO/spaces/ci.json" \
        --allow-missing --gpu "$DEV_B" --dir t4 --store "$STORE"
    expect_status 0
    [ "$(ls t4)" = "nvidia-l4_${CI_PROBLEM}_hot.t4.json" ] || flunk "got: $(ls t4)"
}

@test "guard: a 6-8 KB seeds file of another group under this group's name is not overwritten" {
    { recs "NVIDIA L4" b4.h8.s512.d64.nc 4; recs "NVIDIA L40" b4.h8.s512.d64.nc 4; } >two.jsonl
    "$FASWEEP" import two.jsonl --store "$STORE" >/dev/null
    run --separate-stderr "$FASWEEP" topk --store "$STORE"
    expect_status 0
    local mine=store.seeds/nvidia-l4_b4.h8.s512.d64.nc_hot.json
    local other=store.seeds/nvidia-l40_b4.h8.s512.d64.nc_hot.json
    local size
    size=$(stat -c %s "$other")
    [ "$size" -gt 6000 ] || flunk "the seeds file is $size bytes, not over 6 KB (the old guard read 4095)"
    cp "$other" "$mine"
    local before
    before=$(md5sum <"$mine")
    run --separate-stderr "$FASWEEP" topk --gpu "NVIDIA L4" --store "$STORE"
    expect_status 1
    expect_in "$stderr" "$mine holds the seeds of NVIDIA L40 | b4.h8.s512.d64.nc | hot, not of NVIDIA L4 | b4.h8.s512.d64.nc | hot"
    [ "$(md5sum <"$mine")" = "$before" ] || flunk "the other group's file was overwritten"
    # Its own file is replaced as before.
    rm "$mine"
    run --separate-stderr "$FASWEEP" topk --gpu "NVIDIA L4" --store "$STORE"
    expect_status 0
    run --separate-stderr "$FASWEEP" topk --gpu "NVIDIA L4" --store "$STORE"
    expect_status 0
}

@test "guard: export --dir does not overwrite another group's file (kernel-tuner and t4)" {
    { recs "NVIDIA L4" $CI_PROBLEM 1; recs "NVIDIA L40" $CI_PROBLEM 1; } >two.jsonl
    "$FASWEEP" import two.jsonl --store "$STORE" >/dev/null
    local fmt ext
    for fmt in kernel-tuner t4; do
        ext=kt
        [ $fmt = t4 ] && ext=t4
        run --separate-stderr "$FASWEEP" export --format $fmt --space "$REPO/spaces/ci.json" \
            --allow-missing --dir d --store "$STORE"
        expect_status 0
        cp d/nvidia-l40_${CI_PROBLEM}_hot.$ext.json d/nvidia-l4_${CI_PROBLEM}_hot.$ext.json
        local before
        before=$(md5sum <d/nvidia-l4_${CI_PROBLEM}_hot.$ext.json)
        run --separate-stderr "$FASWEEP" export --format $fmt --space "$REPO/spaces/ci.json" \
            --allow-missing --gpu "NVIDIA L4" --dir d --store "$STORE"
        expect_status 1
        expect_in "$stderr" "holds the"
        expect_in "$stderr" "of NVIDIA L40 | $CI_PROBLEM | hot, not of NVIDIA L4 | $CI_PROBLEM | hot"
        expect_in "$stderr" "pass another --dir"
        [ "$(md5sum <d/nvidia-l4_${CI_PROBLEM}_hot.$ext.json)" = "$before" ] ||
            flunk "$fmt: the other group's file was overwritten"
    done
}

@test "report: a group with over 16 values on an axis is flagged, the others render (exit 0)" {
    { recs "NVIDIA L4" b4.h8.s512.d64.nc 17; recs "NVIDIA L40" b4.h8.s512.d64.nc 3; } >wide.jsonl
    "$FASWEEP" import wide.jsonl --store "$STORE" >/dev/null
    run --separate-stderr "$FASWEEP" report --store "$STORE" -o r.html
    expect_status 0
    expect_in "$stderr" "warning: NVIDIA L4 | b4.h8.s512.d64.nc | hot: its records hold more than 16 values of BLOCK_M"
    expect_not_in "$stderr" "NVIDIA L40"
    [ "$(grep -c '<section class="group"' r.html)" -eq 2 ] || flunk "expected 2 group sections"
    grep -q 'data-device="NVIDIA L4" [^>]*data-no-grid="its records hold more than 16 values of BLOCK_M' r.html ||
        flunk "the wide group is not flagged"
    grep -q 'data-device="NVIDIA L40" data-problem="b4.h8.s512.d64.nc" data-mode="hot">' r.html ||
        flunk "the other group is flagged or missing"
    [ "$(grep -c '<rect class="cell' r.html)" -gt 0 ] || flunk "no heatmap for the other group"
    # export with a space: the wide group is not the space's, so it is
    # dropped as any other group of another problem (was: "out of memory").
    recs "NVIDIA L4" $CI_PROBLEM 1 >ci.jsonl
    "$FASWEEP" import ci.jsonl --store "$STORE" >/dev/null
    run --separate-stderr "$FASWEEP" export --format kernel-tuner --space "$REPO/spaces/ci.json" \
        --allow-missing --gpu "NVIDIA L4" -o kt.json --store "$STORE"
    expect_status 0
}

# A regression guard, not a benchmark: at 8968aad ranking every record took
# about 50 s on a quiet machine (an insertion sort copying whole records,
# O(n k)); with a heap it is well under a second and the store scan
# (decoding 60k records, ~1.1 s quiet) dominates. A wall-clock bound failed
# on a loaded CI machine (5.2 s against 5 s) with nothing wrong, so the
# bound is relative: ranking all 60k may take at most 4x ranking one of the
# same store (plus 0.5 s), timed on the same machine moments apart. The
# O(n k) sort was over 30x; ASan slows both sides alike. The best of three
# tries of the full ranking stands, so one burst of load does not fail it.
@test "topk -k 2147483647 on a 60k-record group is O(n log n): within 4x of topk -k 1 on the same store" {
    python3 - "$FIX/results.jsonl" >big.jsonl <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
for i in range(60000):
    r["key"]["build"] = "%016x" % (0x1000000000000000 + i)
    # Medians in a shuffled order, so neither end of the scan is the best.
    r["time"]["median_us"] = 100.0 + (i * 7919) % 60000 / 100.0
    r["time"]["min_us"] = r["time"]["median_us"] - 0.5
    r["time"]["mean_us"] = r["time"]["median_us"] + 0.5
    print(json.dumps(r))
PY
    "$FASWEEP" import big.jsonl --store "$STORE" >/dev/null || flunk "the import failed"
    # seconds since T0 (date +%s.%N); the rule, once: all within 4x one + 0.5 s
    elapsed() { local t1; t1=$(date +%s.%N); python3 -c "print($t1 - $1)"; }
    fast_enough() { python3 -c "import sys; sys.exit(0 if $best < 4 * $one + 0.5 else 1)"; }
    local t0 one best="" all try
    t0=$(date +%s.%N)
    "$FASWEEP" topk -k 1 --no-seeds --store "$STORE" >/dev/null || flunk "topk -k 1 failed"
    one=$(elapsed "$t0")
    for try in 1 2 3; do
        t0=$(date +%s.%N)
        run --separate-stderr "$FASWEEP" topk -k 2147483647 --no-seeds --store "$STORE"
        all=$(elapsed "$t0")
        expect_status 0
        best=$(python3 -c "print(min($all, ${best:-$all}))")
        fast_enough && break
    done
    [ "$(echo "$output" | grep -c ' d64.m64.n64.w4.s2.z1 ')" -eq 60000 ] ||
        flunk "expected all 60000 ranked"
    # The order: rank 1 the lowest median, medians never decreasing.
    echo "$output" | awk '$2 == "d64.m64.n64.w4.s2.z1" { if ($3 + 0 < last) bad = 1; last = $3 + 0 }
        END { exit bad }' || flunk "not in median order"
    [ "$(echo "$output" | awk '$1 == 1 { print $3 }')" = "100.00" ] || flunk "rank 1 is not the best"
    fast_enough ||
        flunk "topk -k 2147483647 took $(python3 -c "print(round($best, 1))") s at 60k records, topk -k 1 $(python3 -c "print(round($one, 1))") s: more than 4x + 0.5 s"
}

@test "merge: a missing or unreadable source creates no destination (exit 1)" {
    run --separate-stderr "$FASWEEP" merge missing.lmdb --store new.lmdb
    expect_status 1
    expect_in "$stderr" "missing.lmdb"
    [ ! -e new.lmdb ] || flunk "merge created new.lmdb"
    mkdir notastore
    import_fixture
    run --separate-stderr "$FASWEEP" merge "$STORE" notastore --store new.lmdb
    expect_status 1
    expect_in "$stderr" "notastore"
    [ ! -e new.lmdb ] || flunk "merge created new.lmdb"
    run --separate-stderr "$FASWEEP" merge "$STORE" --store new.lmdb
    expect_status 0
    expect_in "$output" "added 22"
}
