#!/usr/bin/env bats
# ptxas.bats - what ptxas says about the wgmma kernels, on every `make test` (no GPU needed).
# A kernel whose wgmmas ptxas serializes (its `info` C7520: "wgmma.mma_async instructions are
# serialized due to program dependence on compiler-inserted WG.AR in divergent path") gives
# right answers about 30 % slower, which no correctness test sees (kernels/NOTES-perf.md,
# fifth session: a branch on a bar.red result did it). Representative points of every
# PIPELINE, of head dims 64, 128 and 256 and of both dtypes; each instance compiles its
# one-tile and its persistent kernel. SKIP without nvcc.

load helpers

# The lines of ptxas -v output (stdin) that report serialized wgmmas.
serialized() { grep -E 'C7520|wgmma\.mma_async instructions are serialized' || true; }

@test "ptxas: the check reads ptxas's own wording of C7520, and not C7519's" {
    local l="ptxas info    : (C7520) Potential Performance Loss: wgmma.mma_async instructions are serialized due to program dependence on compiler-inserted WG.AR in divergent path in the function '_ZN4fawg15fa_wgmma_kernel'"
    [ -n "$(printf '%s\n' "$l" | serialized)" ] || flunk "the check misses ptxas's C7520 line"
    l="ptxas info    : (C7519) warpgroup.arrive is injected in around line 9388 by compiler to allow use of registers in GMMA"
    [ -z "$(printf '%s\n' "$l" | serialized)" ] || flunk "C7519 is no serialization"
}

@test "ptxas: no wgmma kernel of the representative points has its wgmmas serialized (C7520)" {
    local nvcc=${FASWEEP_NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
    [ -x "$nvcc" ] || skip "no nvcc at $nvcc"
    { echo '#include "wgmma/flash_fwd_wgmma.cuh"' && printf '%s\n' \
        "FA_WG_INSTANCE(128, 128, 128, 2, 2, 2)" "FA_WG_INSTANCE(128, 128, 128, 2, 2, 3)" \
        "FA_WG_INSTANCE(64, 192, 128, 3, 2, 3)" "FA_WG_INSTANCE(128, 128, 128, 2, 2, 0)"; } >a.cu
    { echo '#include "wgmma/flash_fwd_wgmma.cuh"' && printf '%s\n' \
        "FA_WG_INSTANCE(64, 64, 128, 2, 2, 5)" "FA_WG_INSTANCE(64, 64, 64, 1, 2, 1)" \
        "FA_WG_INSTANCE(64, 128, 128, 2, 3, 4)" "FA_WG_INSTANCE_BF16(256, 128, 64, 2, 2, 2)"; } >b.cu
    local f
    for f in a b; do
        "$nvcc" -O3 -std=c++17 -I"$REPO/kernels" --expt-relaxed-constexpr \
            -gencode=arch=compute_90a,code=sm_90a -cubin -Xptxas -v $f.cu -o $f.cubin \
            >$f.log 2>&1 &
    done
    local rc=0
    wait %1 || rc=1
    wait %2 || rc=1
    [ "$rc" -eq 0 ] || { tail -20 a.log b.log; flunk "a representative point did not compile"; }
    # Not vacuous: two kernels (one-tile, persistent) per instance went through ptxas.
    [ "$(cat a.log b.log | grep -c 'Compiling entry function .*fa_wgmma_kernel')" -eq 16 ] ||
        { grep 'Compiling entry' a.log b.log; flunk "expected 16 wgmma kernels"; }
    local bad
    bad=$(cat a.log b.log | serialized)
    [ -z "$bad" ] || flunk "ptxas serialized wgmmas: $bad"
}
