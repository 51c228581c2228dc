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
# on any failure.
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
if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "test-gpu: no NVIDIA GPU here (nvidia-smi sees none); run this on a GPU machine" >&2
    exit 1
fi
part "kernels vs reference (every instance)" "$FA_CHECK"
if command -v compute-sanitizer >/dev/null; then
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
    for inst in $first; do
        part "memcheck $inst" timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 "$FA_CHECK" --quick --filter "$inst"
        part "racecheck $inst" timeout 300 compute-sanitizer --tool racecheck --error-exitcode 9 "$FA_CHECK" --quick --filter "$inst"
    done
else
    echo "test-gpu: compute-sanitizer not found: memcheck/racecheck skipped"
fi
if [ -f "$here/test_engine.sh" ]; then
    part "sweep engine" bash "$here/test_engine.sh"
fi
part "adversarial kernels" bash "$here/test_adversarial.sh"
echo "test-gpu: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
