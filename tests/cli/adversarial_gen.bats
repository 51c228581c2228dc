#!/usr/bin/env bats
# adversarial_gen.bats - the adversarial kernels of `make test-gpu`
# (tests/gpu/adversarial/make_cheats.py) are written from the CURRENT kernel
# templates by anchoring each cheat on a line of the template. A template
# edit that moves an anchor made the GPU part fail only on a GPU; here the
# cheats are generated and compiled with nvcc (as fasweep compiles a
# variant) on every `make test`, so a stale anchor fails without a GPU.
# SKIP without nvcc.

load helpers

@test "adversarial cheats: every one is written from the current templates and compiles" {
    local nvcc=${FASWEEP_NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
    [ -x "$nvcc" ] || skip "no nvcc at $nvcc"
    run --separate-stderr python3 "$REPO/tests/gpu/adversarial/make_cheats.py" --root "$REPO" \
        --nvcc "$nvcc" --compile-check "$WORK/cc"
    expect_status 0
    expect_in "$output" "compiled, 0 failed"
    # Not vacuous: both families' cheats are there.
    expect_in "$output" "wgmma_nan_poison"
    expect_in "$output" "sample_cache"
}

@test "adversarial cheats: an anchor the template no longer holds is named, exit non-zero" {
    mkdir -p tree/kernels tree/tests
    cp -r "$REPO/kernels/." tree/kernels/
    sed -i 's/smem.init_barriers();/smem.init_barriers(); \/\/ moved/' \
        tree/kernels/wgmma/flash_fwd_wgmma.cuh
    run --separate-stderr python3 "$REPO/tests/gpu/adversarial/make_cheats.py" --root "$PWD/tree" \
        --out "$WORK/out"
    [ "$status" -ne 0 ] || flunk "a moved anchor was not noticed"
    expect_in "$stderr" "re-anchor the cheat on the current template"
}
