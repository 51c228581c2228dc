#!/usr/bin/env bats
# ptxas.bats - what ptxas says about the wgmma kernels, on every `make test` (no GPU needed).
# A kernel whose wgmmas ptxas serializes (its `info` C7520: "wgmma.mma_async instructions are
# serialized due to program dependence on compiler-inserted WG.AR in divergent path") gives
# right answers about 30 % slower, which no correctness test sees (kernels/NOTES-perf.md,
# fifth session: a branch on a bar.red result did it). Representative points of every
# PIPELINE, of head dims 64, 128 and 256 and of both dtypes; each instance compiles its
# one-tile and its persistent kernel. SKIP without nvcc.
# Second, that none of those kernels spills (none does today): in the persistent D=128
# kernel, values held across the key loop moved its time by 2-4 % either way (40 -> 64 B
# of spills: 2 % slower; 40 -> 0 B: 4 % faster; kernels/NOTES-perf.md, twenty-second
# session), which nothing else sees before a GPU run.

load helpers

# The lines of ptxas -v output (stdin) that report serialized wgmmas.
serialized() { grep -E 'C7520|wgmma\.mma_async instructions are serialized' || true; }

@test "ptxas: the check reads ptxas's own wording of C7520, and not C7519's" {
    local l="ptxas info    : (C7520) Potential Performance Loss: wgmma.mma_async instructions are serialized due to program dependence on compiler-inserted WG.AR in divergent path in the function '_ZN4fawg15fa_wgmma_kernel'"
    [ -n "$(printf '%s\n' "$l" | serialized)" ] || flunk "the check misses ptxas's C7520 line"
    l="ptxas info    : (C7519) warpgroup.arrive is injected in around line 9388 by compiler to allow use of registers in GMMA"
    [ -z "$(printf '%s\n' "$l" | serialized)" ] || flunk "C7519 is no serialization"
}

# Both units compiled once for the file (about a minute on two cores), into the file's
# temporary folder; no nvcc: the tests that need the logs say SKIP.
setup_file() {
    local nvcc=${FASWEEP_NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
    PTX_DIR="$BATS_FILE_TMPDIR/ptxas"
    export PTX_DIR PTX_NVCC=$nvcc
    [ -x "$nvcc" ] || return 0
    mkdir -p "$PTX_DIR" && cd "$PTX_DIR" || return 1
    { echo '#include "wgmma/flash_fwd_wgmma.cuh"' && printf '%s\n' \
        "FA_WG_INSTANCE(128, 128, 128, 2, 2, 2)" "FA_WG_INSTANCE(128, 128, 128, 2, 2, 3)" \
        "FA_WG_INSTANCE(64, 192, 128, 3, 2, 3)" "FA_WG_INSTANCE(128, 128, 128, 2, 2, 0)"; } >a.cu
    { echo '#include "wgmma/flash_fwd_wgmma.cuh"' && printf '%s\n' \
        "FA_WG_INSTANCE(64, 64, 128, 2, 2, 5)" "FA_WG_INSTANCE(64, 64, 64, 1, 2, 1)" \
        "FA_WG_INSTANCE(64, 128, 128, 2, 3, 4)" "FA_WG_INSTANCE_BF16(256, 128, 64, 2, 2, 2)"; } >b.cu
    local f rc=0
    for f in a b; do
        "$nvcc" -O3 -std=c++17 -I"$REPO/kernels" --expt-relaxed-constexpr \
            -gencode=arch=compute_90a,code=sm_90a -cubin -Xptxas -v $f.cu -o $f.cubin \
            >$f.log 2>&1 &
    done
    wait %1 || rc=1
    wait %2 || rc=1
    echo $rc >status
}

# The ptxas logs, or the test's SKIP (no nvcc) or failure (a point did not compile, or
# fewer than the 16 kernels went through ptxas: the checks below would be vacuous).
ptxas_logs() {
    [ -x "$PTX_NVCC" ] || skip "no nvcc at $PTX_NVCC"
    [ "$(cat "$PTX_DIR/status")" -eq 0 ] ||
        { tail -20 "$PTX_DIR/a.log" "$PTX_DIR/b.log"; flunk "a representative point did not compile"; }
    [ "$(cat "$PTX_DIR/a.log" "$PTX_DIR/b.log" | grep -c 'Compiling entry function .*fa_wgmma_kernel')" -eq 16 ] ||
        { grep 'Compiling entry' "$PTX_DIR/a.log" "$PTX_DIR/b.log"; flunk "expected 16 wgmma kernels"; }
}

@test "ptxas: no wgmma kernel of the representative points has its wgmmas serialized (C7520)" {
    ptxas_logs
    local bad
    bad=$(cat "$PTX_DIR/a.log" "$PTX_DIR/b.log" | serialized)
    [ -z "$bad" ] || flunk "ptxas serialized wgmmas: $bad"
}

# "KERNEL STORES" per line: each kernel's spill-store bytes (ptxas -v), the kernel named as
# its config text, dtype and kernel (one-tile or persistent), read from the mangled name.
spills() {
    sed -nE \
        -e "s/.*Compiling entry function '.*fa_wgmma_kernelILi([0-9]+)ELi([0-9]+)ELi([0-9]+)ELi([0-9]+)ELi([0-9]+)ELi([0-9]+)ELi([0-9]+)ELb([01]).*/d\1.m\2.n\3.c\4.s\5.p\6.dt\7.persist\8/p" \
        -e 's/.* ([0-9]+) bytes spill stores.*/\1/p' | paste -d' ' - -
}

@test "ptxas: no representative wgmma kernel spills" {
    ptxas_logs
    # Measured with nvcc 13.0 (the build's; the lent GPUs' too). Another compiler allocates
    # differently: its counts are not these.
    local release
    release=$("$PTX_NVCC" --version | sed -nE 's/.*release ([0-9]+\.[0-9]+).*/\1/p')
    [ "$release" = 13.0 ] || skip "the count of 0 B is nvcc 13.0's; this nvcc is release ${release:-unknown}"
    local got kernel bytes n=0 over=""
    got=$(cat "$PTX_DIR/a.log" "$PTX_DIR/b.log" | spills)
    while read -r kernel bytes; do
        n=$((n + 1))
        [ "$bytes" -eq 0 ] || over+=" $kernel ($bytes B)"
    done <<<"$got"
    [ "$n" -eq 16 ] || { echo "$got"; flunk "read the spills of $n kernels, not 16"; }
    [ -z "$over" ] || flunk "kernels that spill:$over"
}
