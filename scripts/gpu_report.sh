#!/usr/bin/env bash
# gpu_report.sh [OUT] - everything the GPU can tell, in one go (for a lent
# machine with little time): the GPU tests (make test-gpu), two back-to-back
# sweeps of the L4 space compared (scripts/compare_sweeps.py), and the
# benchmark against PyTorch SDPA on the H100 space (scripts/bench_vs_sdpa.sh).
# Logs go to OUT (default ./gpu-report). Needs a GPU; builds first if needed
# (pass make variables in MAKEFLAGS_EXTRA, e.g. DEPS=.deps).
set -uo pipefail
out=${1:-gpu-report}
mkdir -p "$out"
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
make -j"$(nproc)" ${MAKEFLAGS_EXTRA:-} build/fasweep build/fa_check build/fa_bench >"$out/build.log" 2>&1 ||
    { tail -20 "$out/build.log"; exit 1; }
F=$here/build/fasweep
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee "$out/gpu.txt"
echo "== make test-gpu"
make ${MAKEFLAGS_EXTRA:-} test-gpu >"$out/test-gpu.log" 2>&1
grep -E "^(PASS|FAIL)|passed, .* failed|worst" "$out/test-gpu.log"
echo "== two back-to-back sweeps of spaces/l4.json"
mkdir -p "$out/stores/x"; rm -rf "$out"/stores/x/*
for r in a b; do
    /usr/bin/time -f "sweep $r: wall %e s" "$F" grid --space spaces/l4.json --store "$out/stores/x/l4-$r.lmdb" --refine 4 2>&1 |
        grep -E "^sweep|^best|^time|wall|^refine|^  " | tee "$out/l4-$r.txt"
    "$F" export --format jsonl --store "$out/stores/x/l4-$r.lmdb" >"$out/l4-$r.jsonl"
done
for m in hot cold; do python3 scripts/compare_sweeps.py "$out/l4-a.jsonl" "$out/l4-b.jsonl" --mode $m; done
python3 - "$out/l4-a.jsonl" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ok = [r for r in rs if r["status"] == "ok"]
print(f"l4 sweep a: {len(rs)} records, {len(ok)} ok, max noise {100*max(r['time']['noise'] for r in ok):.2f} %, "
      f"median noise {100*sorted(r['time']['noise'] for r in ok)[len(ok)//2]:.2f} %")
PY
"$F" topk -k 8 --store "$out/stores/x/l4-a.lmdb" --no-seeds
echo "== benchmark against PyTorch SDPA (spaces/h100.json)"
FASWEEP=$F bash scripts/bench_vs_sdpa.sh spaces/h100.json "$out/stores/x/h100.lmdb" >"$out/bench.log" 2>&1
grep -vE "^\[" "$out/bench.log" | tail -60
