#!/usr/bin/env bats
# variant.bats - `fasweep eval --kernel FILE.cuh` on a machine without a GPU:
# the file is checked before anything else (missing, not a
# kernel: exit 2), a variant that does not compile is status compile_error
# with the compiler's first lines, found before any GPU work (exit 1), and
# one that compiles lands in the cache keyed by its source and config, then
# stops at "no GPU". CUDA_VISIBLE_DEVICES="" hides any GPU, so the tests
# mean the same on a GPU machine. Needs nvcc (as the build does).

load helpers

setup_file() {
    export CUDA_VISIBLE_DEVICES=""
}

# A copy of the kernel with an error in the kernel's body (line reported).
broken_copy() {
    python3 - "$REPO/kernels/mma/flash_fwd.cuh" "$1" <<'PY'
import sys
s = open(sys.argv[1]).read()
i = s.index("{", s.index("__global__"))
open(sys.argv[2], "w").write(s[:i + 1] + "\n    int broken = no_such_name;\n" + s[i + 1:])
PY
}

eval_k() { # eval_k KERNEL [more options]
    local k=$1
    shift
    run --separate-stderr "$FASWEEP" eval --problem 4,8,512,64 --config d64.m64.n64.w4.s2.z1 \
        --kernel "$k" --store "$STORE" "$@"
}

@test "eval --kernel: a missing file, a directory, a file that is not a kernel: exit 2, nothing made" {
    export FASWEEP_CACHE="$WORK/cache"
    eval_k "$WORK/nope.cuh"
    expect_status 2
    expect_in "$stderr" "nope.cuh: No such file or directory"
    mkdir dir.cuh
    eval_k dir.cuh
    expect_status 2
    expect_in "$stderr" "not a regular file"
    echo 'int main() { return 0; }' >plain.cu
    eval_k plain.cu
    expect_status 2
    expect_in "$stderr" "plain.cu is not a mma kernel: it defines no FA_INSTANCE macro"
    # a wgmma config wants the wgmma template: the mma one is not a kernel of that family
    cp "$REPO/kernels/mma/flash_fwd.cuh" mma_copy.cuh
    run --separate-stderr "$FASWEEP" eval --problem b4.h8.s512.d64.nc \
        --config wgmma:d64.m128.n128.c2.s2.p2 --kernel mma_copy.cuh --store "$STORE"
    expect_status 2
    expect_in "$stderr" "is not a wgmma kernel: it defines no FA_WG_INSTANCE macro (an edited copy of kernels/wgmma/flash_fwd_wgmma.cuh"
    [ ! -e "$STORE" ] || flunk "a store was made"
    [ ! -e "$WORK/cache" ] || flunk "a cache was made"
}

@test "eval --kernel: one config only, and the planner's rules still hold" {
    cp "$REPO/kernels/mma/flash_fwd.cuh" k.cuh
    run --separate-stderr "$FASWEEP" eval --problem 4,8,512,64 \
        --config d64.m64.n64.w4.s2.z1,d64.m64.n64.w4.s1.z1 --kernel k.cuh
    expect_status 2
    expect_in "$stderr" "--kernel takes one config"
    run --separate-stderr "$FASWEEP" eval --problem 4,8,512,64 --config d64.m32.n64.w4.s2.z1 \
        --kernel k.cuh
    expect_status 2
    expect_in "$stderr" "(warp_rows)"
}

@test "eval --kernel: a variant that does not compile is compile_error with the compiler's lines, exit 1" {
    export FASWEEP_CACHE="$WORK/cache"
    broken_copy bad.cuh
    eval_k bad.cuh --json
    expect_status 1
    expect_in "$output" '"status":"compile_error"'
    expect_in "$output" 'bad.cuh('
    expect_in "$output" 'no_such_name'
    expect_in "$output" '"build":"src-'
    expect_in "$stderr" "error: identifier \"no_such_name\" is undefined"
    expect_in "$stderr" "not stored"
    [ ! -e "$STORE" ] || flunk "no GPU, yet a store was made"
    # the failure is cached too: the second time it is not compiled again
    local n
    n=$(find "$WORK/cache" -name compile.log | wc -l)
    eval_k bad.cuh
    expect_status 1
    expect_in "$output" "compile_error"
    [ "$(find "$WORK/cache" -name compile.log | wc -l)" -eq "$n" ] || flunk "compiled twice"
}

@test "eval --kernel: a variant that compiles is cached by source and config, then needs a GPU" {
    export FASWEEP_CACHE="$WORK/cache"
    cp "$REPO/kernels/mma/flash_fwd.cuh" k.cuh
    eval_k k.cuh
    expect_status 1
    expect_in "$stderr" "no CUDA GPU found"
    expect_in "$stderr" "the variant compiled"
    [ "$(find "$WORK/cache" -name variant.so | wc -l)" -eq 1 ] || flunk "no library in the cache"
    nm -D "$(find "$WORK/cache" -name variant.so)" | grep -q " T fasweep_variant_instance" ||
        flunk "the library does not export fasweep_variant_instance"
    eval_k k.cuh # cached: no second library
    [ "$(find "$WORK/cache" -name variant.so | wc -l)" -eq 1 ] || flunk "compiled again"
    echo "// an edit" >>k.cuh # another source: another entry
    eval_k k.cuh
    [ "$(find "$WORK/cache" -name variant.so | wc -l)" -eq 2 ] || flunk "an edit did not recompile"
}

@test "eval: several kernel files and a config in one call (head to head): each compiled, a broken one is compile_error, the rest need the GPU" {
    local prob cfg
    read -r prob cfg < <("$FASWEEP" plan --space "$REPO/spaces/ci.json" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
p = [x for x in d["points"] if x["accepted"] and x.get("family", "mma") == "mma"][0]
print(p["problem"], p["config"])')
    cp "$REPO/kernels/mma/flash_fwd.cuh" good.cuh
    sed 's/^#pragma once/#pragma once\nthis does not compile;/' "$REPO/kernels/mma/flash_fwd.cuh" >bad.cuh
    run --separate-stderr "$FASWEEP" eval --problem "$prob" --config "$cfg" good.cuh bad.cuh --json \
        --store s.lmdb
    [ "$status" -eq 1 ] || flunk "status $status: $output $stderr"
    expect_in "$output" '"status":"compile_error"'
    expect_in "$stderr" "the variant compiled"
    # the good file compiled, the bad one did not: one compile_error line, no GPU for the rest
    [ "$(grep -c compile_error <<<"$output")" -eq 1 ] || flunk "$output"
    # the same source twice at one config is one candidate: refused before any work
    run --separate-stderr "$FASWEEP" eval --problem "$prob" --config "$cfg" good.cuh good.cuh \
        --store s.lmdb
    [ "$status" -eq 2 ] || flunk "same source twice: status $status"
    expect_in "$stderr" "is the same source as"
    # more than 8 files, or files of another problem: usage errors before any work
    for i in 1 2 3 4 5 6 7 8 9; do cp good.cuh "k$i.cuh"; done
    run --separate-stderr "$FASWEEP" eval --problem "$prob" --config "$cfg" k1.cuh k2.cuh k3.cuh \
        k4.cuh k5.cuh k6.cuh k7.cuh k8.cuh k9.cuh --store s.lmdb
    [ "$status" -eq 2 ] || flunk "9 files: status $status"
    expect_in "$stderr" "at most 8 kernel files"
}
