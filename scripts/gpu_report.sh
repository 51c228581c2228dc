#!/usr/bin/env bash
# gpu_report.sh [OUT] - everything the GPU can tell, in one go (for a lent
# machine with little time): the GPU tests (make test-gpu), two back-to-back
# sweeps of the L4 space compared (scripts/compare_sweeps.py), and the
# benchmark against PyTorch SDPA on the H100 space (scripts/bench_vs_sdpa.sh).
# Logs go to OUT (default ./gpu-report). Needs a GPU; builds first if needed
# (pass make variables in MAKEFLAGS_EXTRA, e.g. DEPS=.deps).
# Exit status: 0 every step ran and passed; 1 no GPU (nvidia-smi missing or
# seeing none: one line, before anything is built), a failed build, or any
# step that failed or measured nothing (each named, the rest still run);
# 2 bad arguments (one line).
set -uo pipefail
me=gpu_report.sh
[ $# -le 1 ] || { echo "$me: usage: $me [OUT]" >&2; exit 2; }
out=${1:-gpu-report}
here=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "$me: no NVIDIA GPU found on this machine (nvidia-smi is missing or sees none): nothing measured" >&2
    exit 1
fi
mkdir -p -- "$out" 2>/dev/null && [ -w "$out" ] ||
    { printf '%s: %q: cannot make or write this folder\n' "$me" "$out" >&2; exit 2; }
out=$(cd "$out" && pwd)
cd "$here" || exit 1
rc=0
# failed WHAT: a step that failed or measured nothing; the report goes on.
failed() {
    echo "$me: $*: FAIL" >&2
    rc=1
}
# shellcheck disable=SC2086  # MAKEFLAGS_EXTRA is several make variables
make -j"$(nproc)" ${MAKEFLAGS_EXTRA:-} build/fasweep build/fa_check build/fa_bench >"$out/build.log" 2>&1 ||
    { tail -20 "$out/build.log"; echo "$me: the build failed (see $out/build.log)" >&2; exit 1; }
F=$here/build/fasweep
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv |
    tee "$out/gpu.txt" || failed "nvidia-smi --query-gpu"
echo "== make test-gpu"
# shellcheck disable=SC2086
make ${MAKEFLAGS_EXTRA:-} test-gpu >"$out/test-gpu.log" 2>&1 || failed "make test-gpu (see $out/test-gpu.log)"
grep -E "^(PASS|FAIL)|passed, .* failed|worst" "$out/test-gpu.log"
echo "== two back-to-back sweeps of spaces/l4.json"
mkdir -p "$out/stores/x" && rm -rf "$out"/stores/x/*
for r in a b; do
    t0=$(date +%s.%N)
    "$F" grid --space spaces/l4.json --store "$out/stores/x/l4-$r.lmdb" --refine 4 2>&1 |
        { grep -E "^sweep|^best|^time|wall|^refine|^  " || true; } | tee "$out/l4-$r.txt"
    st=${PIPESTATUS[0]} # the sweep's own status, not grep's or tee's
    if [ "$st" -eq 0 ]; then
        awk -v a="$t0" -v b="$(date +%s.%N)" -v r=$r 'BEGIN { printf "sweep %s: wall %.2f s\n", r, b - a }' |
            tee -a "$out/l4-$r.txt"
    else
        failed "sweep $r of spaces/l4.json (exit $st)"
    fi
    "$F" export --format jsonl --store "$out/stores/x/l4-$r.lmdb" >"$out/l4-$r.jsonl" ||
        failed "export of sweep $r"
done
for m in hot cold; do
    python3 scripts/compare_sweeps.py "$out/l4-a.jsonl" "$out/l4-b.jsonl" --mode $m ||
        failed "compare_sweeps.py --mode $m"
done
python3 - "$out/l4-a.jsonl" <<'PY' || failed "the noise summary of sweep a"
import json, sys
try:
    rs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    ok = [r for r in rs if r.get("status") == "ok" and r.get("time", {}).get("noise") is not None]
except (OSError, ValueError, AttributeError) as e:
    sys.exit("l4 sweep a: no export to summarize (%s)" % e)
if not ok:
    sys.exit("l4 sweep a: %d records, none ok with a noise figure: nothing measured" % len(rs))
noise = sorted(r["time"]["noise"] for r in ok)
print(f"l4 sweep a: {len(rs)} records, {len(ok)} ok, max noise {100*noise[-1]:.2f} %, "
      f"median noise {100*noise[len(noise)//2]:.2f} %")
PY
"$F" topk -k 8 --store "$out/stores/x/l4-a.lmdb" --no-seeds || failed "topk of sweep a"
echo "== benchmark against PyTorch SDPA (spaces/h100.json)"
FASWEEP=$F bash scripts/bench_vs_sdpa.sh spaces/h100.json "$out/stores/x/h100.lmdb" >"$out/bench.log" 2>&1 ||
    failed "bench_vs_sdpa.sh (see $out/bench.log)"
grep -vE "^\[" "$out/bench.log" | tail -60
echo "gpu_report: $([ $rc -eq 0 ] && echo "every step passed" || echo "FAIL: a step failed (named above)"); logs in $out"
exit $rc
