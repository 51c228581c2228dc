#!/usr/bin/env bash
# run.sh - the GPU tests (make test-gpu). Needs a CUDA GPU.
#   1. fa_check: every compiled instance against the fp32 reference, on
#      fresh random inputs, output poisoned with NaN, many shapes
#   2. compute-sanitizer memcheck and racecheck on a few instances, when the
#      tool is there
#   3. the sweep engine: full CI-space sweep, fault and hang injection,
#      kill -9 and resume, Ctrl-C (tests/gpu/test_engine.sh)
#   4. the adversarial kernels: cheats every check must refuse, controls it
#      must pass (tests/gpu/test_adversarial.sh)
# Prints a summary line per part and "N passed, N failed"; exits non-zero
# on any failure. TEST_GPU_PARTS=check,sanitizers,engine,adversarial picks
# parts (default all). The sanitizer runs are spread over the visible GPUs,
# one queue per GPU (CUDA_VISIBLE_DEVICES=k each) taking the next run left,
# the slow racechecks first: on four H200s they took the whole 600 s of a
# lent call one after another (sweep/NOTES-engine.md, eleventh and twelfth
# sessions).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${FASWEEP:?set FASWEEP to the fasweep binary}" "${FA_CHECK:?set FA_CHECK to the fa_check binary}"
pass=0 fail=0
part() { # name, command...
    local name=$1
    shift
    echo "== $name: $*"
    if "$@"; then
        echo "PASS $name"
        pass=$((pass + 1))
    else
        echo "FAIL $name"
        fail=$((fail + 1))
    fi
}
parts=",${TEST_GPU_PARTS:-check,sanitizers,engine,adversarial},"
want() { [[ $parts == *",$1,"* ]]; }
for p in ${parts//,/ }; do
    case $p in check | sanitizers | engine | adversarial) ;;
    *) echo "test-gpu: TEST_GPU_PARTS: unknown part '$p' (check, sanitizers, engine, adversarial)" >&2; exit 2 ;;
    esac
done
if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "test-gpu: no NVIDIA GPU here (nvidia-smi sees none); run this on a GPU machine" >&2
    exit 1
fi
. "$here/../../scripts/cuda_visible.sh" # cuda_visible: the GPUs CUDA will see
. "$here/../queue.sh"                     # queue_run: items side by side
want check && part "kernels vs reference (every instance)" "$FA_CHECK"
if want sanitizers && command -v compute-sanitizer >/dev/null; then
    # a small plain point, a swizzled multi-stage one, a head_dim-128 one, a wgmma one and
    # a wgmma key split (PIPELINE 5)
    first=$("$FASWEEP" list --json | python3 -c '
import json, sys
d = json.load(sys.stdin)["instances"]
pick = [d[0]]
pick += [i for i in d if i["STAGES"] >= 2 and i.get("SWIZZLE") == 1][:1]
pick += [i for i in d if i["HEAD_DIM"] == 128][:1]
pick += [i for i in d if i["family"] == "wgmma"][:1]
# the key split: its warpgroups meet in shared memory (Combine), racecheck reads that
pick += [i for i in d if i["family"] == "wgmma" and i.get("PIPELINE") == 5][:1]
print(" ".join(sorted({i["name"] for i in pick})))')
    # the slow runs first: racecheck took 138-208 s an instance on an H200, memcheck 6-11 s
    # (sweep/NOTES-engine.md, twelfth session). Nearly all of a racecheck's time was the fp32
    # reference kernel that fa_check runs at every shape (one instance on an H100: 18 s with
    # it left out, over 250 s with it), so the instances' racechecks leave it out; with
    # TEST_GPU_REF_RACECHECK=1 the first racecheck checks it too, else that is a SKIP line.
    ref_race=0
    [ "${TEST_GPU_REF_RACECHECK:-}" != 1 ] || ref_race=1
    runs=()
    for inst in $first; do
        runs+=("racecheck $inst")
    done
    for inst in $first; do
        runs+=("memcheck $inst")
    done
    mapfile -t devs < <(cuda_visible "$(nvidia-smi -L)")
    [ ${#devs[@]} -gt 0 ] || devs=(0)
    logs=$(mktemp -d)
    trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$logs"' EXIT
    # one queue per GPU, each taking the next run not yet taken, each run said as soon as it
    # ends, so a run cut short still shows the ones done (tests/queue.sh)
    sanitize() { # queue "tool instance"
        local tool inst x=() # racecheck leaves the reference out, but the first when ref_race is 1
        read -r tool inst <<<"$2"
        if [ "$tool" = racecheck ] && ! { [ $ref_race = 1 ] && [ "$2" = "${runs[0]}" ]; }; then
            x=(--kernel-name-exclude kns=reference_kernel)
        fi
        CUDA_VISIBLE_DEVICES=${devs[$1]} timeout 300 compute-sanitizer --tool "$tool" \
            ${x[@]+"${x[@]}"} --error-exitcode 9 "$FA_CHECK" --quick --filter "$inst"
    }
    queue_names=()
    for q in "${!devs[@]}"; do
        queue_names+=("GPU ${devs[$q]}")
    done
    queue_run ${#devs[@]} "$logs" sanitize "${runs[@]}"
    pass=$((pass + queue_pass)) fail=$((fail + queue_fail))
    [ $ref_race = 1 ] || echo "SKIP racecheck of the fp32 reference kernel (left out of the instances' racechecks: over 250 s a run; TEST_GPU_REF_RACECHECK=1 checks it in the first one)"
elif want sanitizers; then
    echo "test-gpu: compute-sanitizer not found: memcheck/racecheck skipped"
fi
if want engine && [ -f "$here/test_engine.sh" ]; then
    part "sweep engine" bash "$here/test_engine.sh"
fi
want adversarial && part "adversarial kernels" bash "$here/test_adversarial.sh"
echo "test-gpu: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
