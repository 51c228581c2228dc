#!/usr/bin/env bash
# baselines.sh SPACE STORE [FASWEEP] - times PyTorch's scaled_dot_product_attention
# (flash, efficient, cudnn backends) and the autotuned Triton kernel (triton:
# scripts/triton_attention.py, where Triton can run; elsewhere sdpa_baseline.py
# leaves it out with one note line) on every problem of SPACE in its modes,
# with the engine's method for all of them (scripts/sdpa_baseline.py: CUDA
# events, hot, cold, batch, the same gate), and imports the
# results into STORE as baseline records (they stay in STORE.baselines.jsonl),
# each under its problem's canonical text (dtype and kv_heads included, as
# the kernels' records of the problem).
# SPACE is passed on (--space): its measure settings, tolerances, and its
# measure.rounds and measure.ci_floor, so every baseline record is measured
# in the same number of rounds as the kernels and carries its 95 % interval
# (time.ci_lo_us, ci_hi_us, round_us), pooled over the problem's backends.
# BASELINE_BACKENDS=B,B,... picks the backends (sdpa_baseline.py --backends;
# default flash,efficient,cudnn,triton). BASELINE_PRECOMPILED=1: Triton's
# configs are compiled already. BASELINE_GO=stdin: PyTorch and Triton are
# imported at once, and nothing touches the GPU or runs FASWEEP before a line
# 'go' arrives on stdin (run_default_sweep.sh starts this before its build,
# FASWEEP not yet there, and says 'go' after its sweep); with it
# BASELINE_READY=PATH: a line 'prepare' first sets everything up (the gates,
# Triton's autotuning; no timed round) and creates PATH, and 'go' then times the
# rounds; with that BASELINE_ROUND_DONE=PATH: a line 'round' after 'prepare' times one
# round (never the last, which waits for 'go') and creates PATH (run_default_sweep.sh:
# between its sweep's rounds); BASELINE_PLAN=FILE: the problems and modes from this plan
# (`fasweep plan --json`, or geninst --check's), not asked of FASWEEP.
# When PyTorch cannot run here it says why in one line and exits 0: the
# sweep's results stand without a baseline.
# Exit status: 0 imported (or skipped, as above); 1 a failed step (the
# timing or the import); 2 bad arguments or a SPACE it cannot read (one line
# naming the file).
set -uo pipefail
me=baselines.sh
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 2 ] || [ $# -gt 3 ] || [ -z "$1" ] || [ -z "$2" ]; then
    echo "$me: usage: $me SPACE STORE [FASWEEP]" >&2
    exit 2
fi
space=$1
store=$2
fasweep=${3:-${FASWEEP:-$here/../build/fasweep}}
# BASELINE_GO=stdin: the imports start now, and fasweep and the GPU wait for 'go' on this
# script's stdin (run_default_sweep.sh: the imports overlap the build, which makes FASWEEP);
# checked before anything is written.
go=()
case ${BASELINE_GO:-} in
stdin) go=(--go-on-stdin) ;;
'') ;;
*) printf '%s: BASELINE_GO=%q: only stdin (or unset)\n' "$me" "$BASELINE_GO" >&2; exit 2 ;;
esac
if [ -n "${BASELINE_READY:-}" ]; then
    [ ${#go[@]} -gt 0 ] || { echo "$me: BASELINE_READY goes with BASELINE_GO=stdin" >&2; exit 2; }
    go+=(--ready-file "$BASELINE_READY")
fi
if [ -n "${BASELINE_ROUND_DONE:-}" ]; then
    [ -n "${BASELINE_READY:-}" ] || { echo "$me: BASELINE_ROUND_DONE goes with BASELINE_READY" >&2; exit 2; }
    go+=(--round-done-file "$BASELINE_ROUND_DONE")
fi
plan_arg=()
[ -z "${BASELINE_PLAN:-}" ] || plan_arg=(--plan "$BASELINE_PLAN")
[ ${#go[@]} -gt 0 ] || command -v -- "$fasweep" >/dev/null ||
    { printf '%s: %q is not an executable fasweep\n' "$me" "$fasweep" >&2; exit 2; }
# The space's problems as their canonical texts, as fasweep reads them
# (`fasweep plan --json`'s "problems": grid/space.c's rules, dtype and
# kv_heads included, "b1.h32.kv8.s4096.d128.c.bf16"), one a line; a file
# that is not a space is fasweep's one-line refusal, exit 2. With 'go' to wait
# for, sdpa_baseline.py takes them itself (--space-problems): from BASELINE_PLAN,
# else asked of fasweep once the first line has come.
problems=""
if [ ${#go[@]} -eq 0 ]; then
    plan=$("$fasweep" plan --json --space "$space") || exit 2
    problems=$(printf '%s' "$plan" | python3 -c 'import json, sys
print("\n".join(p["problem"] for p in json.load(sys.stdin)["problems"]))') || exit 2
fi
base=$store.baselines.jsonl
: >"$base" || { printf '%s: %q: cannot write\n' "$me" "$base" >&2; exit 2; }
# sdpa_baseline.py asks whether PyTorch can run (no process of its own for that: one more
# PyTorch import, 5-9 s: sweep/NOTES-engine.md, twelfth session) and compiles Triton's
# configs of every problem in one parallel pool before their autotuning, unless
# BASELINE_PRECOMPILED=1 says the caller did (run_default_sweep.sh, while the kernels built).
opts=(--skip-without-torch)
[ -z "${BASELINE_BACKENDS:-}" ] || opts+=(--backends "$BASELINE_BACKENDS")
[ "${BASELINE_PRECOMPILED:-}" != 1 ] || opts+=(--precompiled)
# Every problem in one process: one PyTorch start and CUDA context, not one a problem
# (sweep/NOTES-engine.md: about 5 s each).
args=()
for p in $problems; do
    args+=(--problem "$p")
done
[ ${#go[@]} -eq 0 ] || args=(--space-problems)
[ ${#go[@]} -gt 0 ] ||
    echo "fasweep: timing PyTorch SDPA and Triton at $(printf '%s\n' "$problems" | paste -sd' ')" >&2
rc=0
python3 "$here/sdpa_baseline.py" ${args[@]+"${args[@]}"} --space "$space" --fasweep "$fasweep" \
    ${opts[@]+"${opts[@]}"} ${plan_arg[@]+"${plan_arg[@]}"} ${go[@]+"${go[@]}"} >>"$base" || rc=$?
if [ $rc -eq 3 ]; then # PyTorch cannot run here: its one line said so; nothing to import
    rm -f -- "$base"
    exit 0
fi
[ $rc -eq 0 ] || { echo "$me: timing the baselines failed: no baselines imported" >&2; exit 1; }
"$fasweep" import "$base" --store "$store" ||
    { echo "$me: importing $base into the store failed" >&2; exit 1; }
