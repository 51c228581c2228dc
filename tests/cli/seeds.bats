#!/usr/bin/env bats
# seeds.bats - seeds an evolution loop can start from: topk ranks
# every mode stored by default; records of edited kernels (build src-HASH)
# are counted, ranked only with --variants and marked in topk, show and the
# seeds; --emit-source writes a standalone source per seed that `fasweep
# eval --kernel FILE` takes with no other argument (compiled here with nvcc
# as the build is; CUDA_VISIBLE_DEVICES="" hides any GPU so eval stops at
# "no GPU" after the compile, the same on a GPU machine).

load helpers

L4="NVIDIA L4"
P1="b4.h8.s512.d64.nc"

# The fixture, plus a variant record of the L4 group: faster than every
# instance, its source a file here that hashes (FNV-1a) to its kernel_hash.
import_with_variant() {
    "$FASWEEP" import "$FIX/results.jsonl" --store "$STORE" >/dev/null || flunk "import"
    cp "$REPO/kernels/mma/flash_fwd.cuh" edited.cuh
    echo "// an edit" >>edited.cuh
    python3 - "$FIX/results.jsonl" "$PWD/edited.cuh" >variant.jsonl <<'PY'
import json, sys
rec = json.loads(open(sys.argv[1]).readline())
text = open(sys.argv[2], "rb").read()
h = 14695981039346656037
for b in text:
    h = ((h ^ b) * 1099511628211) % (1 << 64)
rec["key"]["build"] = "src-%016x" % h
rec["provenance"]["kernel_path"] = sys.argv[2]
rec["provenance"]["kernel_hash"] = "%016x" % h
for k in ("median_us", "min_us", "mean_us"):
    rec["time"][k] = 100.0
print(json.dumps(rec))
PY
    "$FASWEEP" import variant.jsonl --store "$STORE" >/dev/null || flunk "import variant"
}

@test "topk: a variant is counted, not ranked, unless --variants; then marked" {
    import_with_variant
    run --separate-stderr "$FASWEEP" topk --gpu "$L4" --problem "$P1" --mode hot --no-seeds \
        --store "$STORE"
    expect_status 0
    expect_not_in "$output" "variant src-"
    expect_in "$output" "(1 ok records of edited kernels (variants) not ranked: pass --variants)"
    run --separate-stderr "$FASWEEP" topk --gpu "$L4" --problem "$P1" --mode hot --no-seeds \
        --variants --store "$STORE"
    expect_status 0
    local row
    row=$(grep -E '^ +1 +d64\.m64\.n64\.w4\.s2\.z1 +100\.00' <<<"$output") || flunk "no variant first"
    [[ "$row" =~ variant\ src-[0-9a-f]{16}$ ]] || flunk "variant row unmarked: $row"
    run --separate-stderr "$FASWEEP" topk --json --variants --gpu "$L4" --problem "$P1" \
        --mode hot --no-seeds --store "$STORE"
    expect_status 0
    run python3 -c '
import json, sys, hashlib
d = json.load(sys.stdin)["groups"][0]
s = d["seeds"]
assert s[0]["variant"] is True and s[1]["variant"] is False, [x["variant"] for x in s]
src = s[0]["source"]
assert src["path"].endswith("/edited.cuh") and src["same_build"] is True, src
assert src["sha256"] == hashlib.sha256(open("edited.cuh", "rb").read()).hexdigest()
argv = s[0]["rescore"]["argv"]
assert argv[argv.index("--kernel") + 1] == src["path"], argv
assert d["counts"]["variants_not_ranked"] == 0
' <<<"$output"
    expect_status 0
}

@test "show: a variant's record says variant: true; an instance's has no such key" {
    import_with_variant
    local build
    build=$(python3 -c 'import json; print(json.loads(open("variant.jsonl").read())["key"]["build"])')
    run --separate-stderr "$FASWEEP" show "$L4|$P1|$build|d64.m64.n64.w4.s2.z1|hot" --store "$STORE"
    expect_status 0
    python3 -c 'import json, sys; assert json.load(sys.stdin)["variant"] is True' <<<"$output" ||
        flunk "no variant marker: $output"
    run --separate-stderr "$FASWEEP" show "$L4|$P1|5e1f0c2a9b3d4e67|d64.m64.n64.w4.s2.z1|hot" \
        --store "$STORE"
    expect_status 0
    expect_not_in "$output" '"variant"'
}

@test "topk --emit-source: one standalone source per seed, named in the seeds" {
    "$FASWEEP" import "$FIX/results.jsonl" --store "$STORE" >/dev/null
    run --separate-stderr "$FASWEEP" topk -k 2 --gpu "$L4" --problem "$P1" --store "$STORE" \
        --emit-source src
    expect_status 0
    local f=src/nvidia-l4_b4.h8.s512.d64.nc_hot.1.cuh
    [ -f "$f" ] || flunk "no $f: $(ls src)"
    [ -f src/nvidia-l4_b4.h8.s512.d64.nc_cold.2.cuh ] || flunk "no cold source: $(ls src)"
    expect_in "$stderr" "$f"
    [ "$(head -1 "$f")" = "// fasweep: problem=$P1 config=d64.m128.n64.w8.s2.z1 mode=hot" ] ||
        flunk "first line: $(head -1 "$f")"
    # The template follows the comment lines, byte for byte.
    diff <(grep -v '^// \(fasweep:\|Seed \|sha256 \|Re-score:\)' "$f" | head -c 100000) \
        <(head -c 100000 "$REPO/kernels/mma/flash_fwd.cuh") >/dev/null ||
        flunk "the source is not the template"
    python3 -c '
import json, sys
s = json.load(open("store.seeds/nvidia-l4_b4.h8.s512.d64.nc_hot.json"))["seeds"][0]
assert s["source"]["file"] == sys.argv[1], s["source"]
assert s["rescore"]["source_argv"] == ["fasweep", "eval", "--kernel", sys.argv[1], "--json",
                                       "--store", sys.argv[2]], s["rescore"]
' "$f" "$STORE" || flunk "seed does not name the source"
}

@test "eval --kernel FILE alone: problem, config and mode from its first line" {
    export CUDA_VISIBLE_DEVICES="" FASWEEP_CACHE="$WORK/cache"
    "$FASWEEP" import "$FIX/results.jsonl" --store "$STORE" >/dev/null
    "$FASWEEP" topk -k 1 --gpu "$L4" --problem "$P1" --mode hot --no-seeds --store "$STORE" \
        --emit-source src 2>/dev/null || flunk "topk"
    run --separate-stderr "$FASWEEP" eval --kernel src/nvidia-l4_b4.h8.s512.d64.nc_hot.1.cuh \
        --store "$STORE"
    # It compiled (the cache holds the library) and stopped only for want of a GPU.
    expect_status 1
    expect_in "$stderr" "the variant compiled"
    ls "$WORK"/cache/variants/*/variant.so >/dev/null || flunk "no variant library"
    # A kernel file without the line: one line naming the file, exit 2.
    cp "$REPO/kernels/mma/flash_fwd.cuh" plain.cuh
    run --separate-stderr "$FASWEEP" eval --kernel plain.cuh
    expect_status 2
    expect_in "$stderr" "plain.cuh does not start with a line '// fasweep: problem=P config=C'"
    printf '// fasweep: problem=b4.h8.s512.d64.nc config=d64.m64.n64.w4.s2.z1 mode=warm\n' >m.cuh
    cat "$REPO/kernels/mma/flash_fwd.cuh" >>m.cuh
    run --separate-stderr "$FASWEEP" eval --kernel m.cuh
    expect_status 2
    expect_in "$stderr" "its mode=warm is not one of"
}

@test "eval --json: a compile error's file, line and message; the gate not reached" {
    export CUDA_VISIBLE_DEVICES="" FASWEEP_CACHE="$WORK/cache"
    python3 - "$REPO/kernels/mma/flash_fwd.cuh" bad.cuh <<'PY'
import sys
s = open(sys.argv[1]).read()
i = s.index("{", s.index("__global__"))
open(sys.argv[2], "w").write(s[:i + 1] + "\n    int broken = no_such_name;\n" + s[i + 1:])
PY
    local want
    want=$(grep -n "no_such_name" bad.cuh | cut -d: -f1)
    run --separate-stderr "$FASWEEP" eval --problem 4,8,512,64 --config d64.m64.n64.w4.s2.z1 \
        --kernel bad.cuh --json --store "$STORE"
    expect_status 1
    python3 -c '
import json, sys
o = json.loads(sys.stdin.readline())
assert o["status"] == "compile_error" and o["variant"] is True, o
assert o["kernel"].endswith("/bad.cuh"), o["kernel"]
e = o["compile_errors"][0]
assert e["file"].endswith("bad.cuh") and e["line"] == int(sys.argv[1]), e
assert e["severity"] == "error" and "no_such_name" in e["message"], e
g = o["gate"]
assert g["passed"] is None and g["rel_l2_max"] == 0.005 and g["max_abs_max"] == 0.03, g
# the record vocabulary (docs/seeds.md): the record names, unknown is null
for gone in ("spill_bytes", "clock_mhz", "clock_below_threshold"):
    assert gone not in o, (gone, o)
assert o["sm_median_mhz"] is None and o["below_threshold"] is None, o
assert o["rel_l2"] is None and o["max_abs"] is None and g["rel_l2"] is None, o
# not compiled: no resources (unknown, not 0)
assert all(o[k] is None for k in ("regs", "local_bytes", "smem_bytes", "max_blocks_per_sm")), o
assert o["rounds"] == 0 and o["samples"] == 0, o
' "$want" <<<"$output" || flunk "eval --json: $output"
}

@test "report: a variant is counted in a note, ranked and labelled only with --variants" {
    import_with_variant
    run --separate-stderr "$FASWEEP" report --gpu "$L4" --problem "$P1" --mode hot \
        --store "$STORE" -o plain.html
    expect_status 0
    grep -q 'class="note variants" data-variants="1"' plain.html || flunk "no variants note"
    ! grep -q '(variant src-' plain.html || flunk "a variant ranked without --variants"
    run --separate-stderr "$FASWEEP" report --gpu "$L4" --problem "$P1" --mode hot --variants \
        --store "$STORE" -o with.html
    expect_status 0
    grep -q '1\. d64.m64.n64.w4.s2.z1 (variant src-[0-9a-f]\{16\})' with.html ||
        flunk "the variant is not first and labelled"
    ! grep -q 'class="note variants"' with.html || flunk "a note though ranked"
}

@test "topk --space: the space's tolerances are the gate, its path in the eval commands" {
    "$FASWEEP" import "$FIX/results.jsonl" --store "$STORE" >/dev/null
    sed 's/"rel_l2": 0.005/"rel_l2": 0.004/' "$REPO/spaces/l4.json" >tight.json
    grep -q '"rel_l2": 0.004' tight.json || flunk "no tolerance to change in spaces/l4.json"
    run --separate-stderr "$FASWEEP" topk -k 1 --json --no-seeds --gpu "$L4" --problem "$P1" \
        --mode hot --space tight.json --emit-source src --store "$STORE"
    expect_status 0
    python3 -c '
import json, sys
s = json.load(sys.stdin)["groups"][0]["seeds"][0]
g = s["gate"]
assert g["rel_l2_max"] == 0.004 and g["max_abs_max"] == 0.03, g
assert "tight.json" in g["tolerance_from"] and "another space" in g["tolerance_from"], g
for k in ("argv", "source_argv"):
    a = s["rescore"][k]
    assert a[a.index("--space") + 1] == "tight.json", a
' <<<"$output" || flunk "gate or commands: $output"
    echo '{' >bad.json
    run --separate-stderr "$FASWEEP" topk --space bad.json --store "$STORE"
    expect_status 2
    expect_in "$stderr" "bad.json"
}
