#!/usr/bin/env bats
# gpu_run.bats - tests/gpu/run.sh (make test-gpu) against stand-ins, no GPU: the
# sanitizer runs spread over the GPUs CUDA will see (one queue each, in parallel), every
# run reported PASS or FAIL by its own exit status, TEST_GPU_PARTS's choice and refusals.

load helpers

# Stand-ins: nvidia-smi (NGPU GPUs), compute-sanitizer (records its GPU and times, sleeps
# SAN_SLEEP s, 1 by default, and 3 s for the racecheck of the instance SAN_SLOW names; exit 9
# for the instance named in SAN_BAD), fasweep list --json (two instances).
gpu_stubs() {
    mkdir -p "$WORK/stub"
    printf '#!/bin/sh\ni=0\nwhile [ $i -lt ${NGPU:-1} ]; do echo "GPU $i: Stub GPU (UUID: GPU-$i)"; i=$((i+1)); done\n' \
        >"$WORK/stub/nvidia-smi"
    cat >"$WORK/stub/compute-sanitizer" <<SH
#!/bin/sh
inst=\$(echo "\$*" | sed 's/.*--filter //')
echo "start \$CUDA_VISIBLE_DEVICES \$(date +%s.%N) \$*" >>"$WORK/calls"
case "\$*" in
*"--tool racecheck "*"--filter \${SAN_SLOW:-none}") sleep 3 ;;
*) sleep \${SAN_SLEEP:-1} ;;
esac
echo "end \$CUDA_VISIBLE_DEVICES \$(date +%s.%N)" >>"$WORK/calls"
echo "sanitizer output for \$inst"
[ "\$inst" != "\${SAN_BAD:-}" ] || exit 9
exit 0
SH
    printf '#!/bin/sh\necho %s\n' \
        "'{\"instances\": [{\"name\": \"a1\", \"family\": \"mma\", \"STAGES\": 1, \"HEAD_DIM\": 64}, {\"name\": \"w1\", \"family\": \"wgmma\", \"STAGES\": 2, \"HEAD_DIM\": 128, \"PIPELINE\": 5}]}'" \
        >"$WORK/stub/fasweep"
    printf '#!/bin/sh\necho "fa_check $*" >>"%s/calls"\n' "$WORK" >"$WORK/stub/fa_check"
    chmod +x "$WORK"/stub/*
    : >"$WORK/calls"
    export PATH="$WORK/stub:$PATH"
    unset CUDA_VISIBLE_DEVICES TEST_GPU_PARTS SAN_BAD SAN_SLOW SAN_SLEEP
}

@test "test-gpu: the sanitizer runs go one queue per visible GPU, in parallel; each is PASS or FAIL by its own exit" {
    gpu_stubs
    NGPU=3 TEST_GPU_PARTS=sanitizers FASWEEP="$WORK/stub/fasweep" FA_CHECK="$WORK/stub/fa_check" \
        run bash "$REPO/tests/gpu/run.sh"
    expect_status 0
    expect_in "$output" "test-gpu: 4 passed, 0 failed"
    expect_in "$output" "PASS memcheck a1"
    expect_in "$output" "PASS racecheck w1"
    expect_in "$output" "sanitizer output for w1"
    # three GPUs used, each run on one of 0, 1, 2
    [ "$(grep '^start' "$WORK/calls" | cut -d' ' -f2 | sort -u | tr '\n' ' ')" = "0 1 2 " ] ||
        flunk "GPUs: $(cat "$WORK/calls")"
    # in parallel: the first three started before any ended
    [ "$(head -3 "$WORK/calls" | grep -c '^start')" -eq 3 ] || flunk "not parallel: $(cat "$WORK/calls")"
    ! grep -q '^fa_check' "$WORK/calls" || flunk "ran a part not asked for: $(cat "$WORK/calls")"
    # the reference kernel left out of every racecheck, and said so; never out of a memcheck
    [ "$(grep -c -- '--tool racecheck --kernel-name-exclude kns=reference_kernel ' "$WORK/calls")" -eq 2 ] ||
        flunk "racechecks: $(cat "$WORK/calls")"
    ! grep -q -- '--tool memcheck --kernel-name-exclude' "$WORK/calls" || flunk "memcheck: $(cat "$WORK/calls")"
    expect_in "$output" "SKIP racecheck of the fp32 reference kernel"
    # the slow kind first: both racechecks are in the first wave (three queues take a run
    # each at once, so their start lines may come in any order) and the run taken after the
    # first one ends is a memcheck
    [ "$(grep '^start' "$WORK/calls" | head -3 | grep -c -- '--tool racecheck')" -eq 2 ] &&
        grep '^start' "$WORK/calls" | sed -n 4p | grep -q -- '--tool memcheck' ||
        flunk "order: $(cat "$WORK/calls")"
}

@test "test-gpu: TEST_GPU_REF_RACECHECK=1 racechecks the reference kernel in the first racecheck, and no SKIP is said" {
    gpu_stubs
    NGPU=1 SAN_SLEEP=0 TEST_GPU_REF_RACECHECK=1 TEST_GPU_PARTS=sanitizers FASWEEP="$WORK/stub/fasweep" \
        FA_CHECK="$WORK/stub/fa_check" run bash "$REPO/tests/gpu/run.sh"
    expect_status 0
    [ "$(grep '^start' "$WORK/calls" | head -1 | grep -c -- '--tool racecheck --error-exitcode')" -eq 1 ] ||
        flunk "first racecheck: $(cat "$WORK/calls")"
    [ "$(grep -c -- '--kernel-name-exclude kns=reference_kernel ' "$WORK/calls")" -eq 1 ] ||
        flunk "racechecks: $(cat "$WORK/calls")"
    expect_not_in "$output" "SKIP racecheck"
}

@test "test-gpu: a GPU busy with a long run takes no more; the free one takes every run left" {
    gpu_stubs
    NGPU=2 SAN_SLOW=a1 SAN_SLEEP=0.2 TEST_GPU_PARTS=sanitizers FASWEEP="$WORK/stub/fasweep" \
        FA_CHECK="$WORK/stub/fa_check" run bash "$REPO/tests/gpu/run.sh"
    expect_status 0
    expect_in "$output" "test-gpu: 4 passed, 0 failed"
    local slow
    slow=$(grep -- '--tool racecheck .*--filter a1$' "$WORK/calls" | cut -d' ' -f2)
    [ -n "$slow" ] || flunk "calls: $(cat "$WORK/calls")"
    [ "$(grep '^start' "$WORK/calls" | grep -c "^start $slow ")" -eq 1 ] ||
        flunk "the busy GPU took more: $(cat "$WORK/calls")"
}

@test "test-gpu: CUDA_VISIBLE_DEVICES's GPUs are the queues; a sanitizer that fails is FAIL and a failed run" {
    gpu_stubs
    CUDA_VISIBLE_DEVICES="5, 7" NGPU=8 SAN_BAD=w1 TEST_GPU_PARTS=sanitizers FASWEEP="$WORK/stub/fasweep" \
        FA_CHECK="$WORK/stub/fa_check" run bash "$REPO/tests/gpu/run.sh"
    expect_status 1
    expect_in "$output" "FAIL memcheck w1 (exit 9)"
    expect_in "$output" "FAIL racecheck w1 (exit 9)"
    expect_in "$output" "test-gpu: 2 passed, 2 failed"
    [ "$(grep '^start' "$WORK/calls" | cut -d' ' -f2 | sort -u | tr '\n' ' ')" = "5 7 " ] ||
        flunk "GPUs: $(cat "$WORK/calls")"
}

@test "test-gpu: TEST_GPU_PARTS with an unknown part is one line and exit 2, before anything runs" {
    gpu_stubs
    TEST_GPU_PARTS=check,sanitiser FASWEEP="$WORK/stub/fasweep" FA_CHECK="$WORK/stub/fa_check" \
        run --separate-stderr bash "$REPO/tests/gpu/run.sh"
    expect_status 2
    expect_in "$stderr" "test-gpu: TEST_GPU_PARTS: unknown part 'sanitiser'"
    [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ] || flunk "not one line: $stderr"
    [ ! -s "$WORK/calls" ] || flunk "ran: $(cat "$WORK/calls")"
    TEST_GPU_PARTS=check FASWEEP="$WORK/stub/fasweep" FA_CHECK="$WORK/stub/fa_check" \
        run bash "$REPO/tests/gpu/run.sh"
    expect_status 0
    expect_in "$output" "test-gpu: 1 passed, 0 failed"
}
