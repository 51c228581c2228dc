#!/usr/bin/env bash
# run_default_sweep.sh BUILD - the main job: sweep the local GPU's default
# space into ./results.lmdb (STORE=... overrides), refine the top 4, time
# the PyTorch SDPA baselines when PyTorch can run (else one line says why),
# print the Top-K and write report.html next to the store. The space follows
# the GPU: spaces/h100.json on compute capability 9.x, spaces/l4.json
# otherwise (SPACE=... overrides).
# The build holds only the space's instances, for the GPU's architecture.
# Order: the GPU check first, so a machine without one installs nothing; then
# scripts/deps.sh build (with DEPS=DIR it only checks the bundle); then the
# build. Exit status: 0 done; 1 no GPU, missing dependencies, or a failed
# step (`make sweep` itself then exits 2, make's status for a failed recipe),
# or baselines not set up within BASELINE_SETUP_TIMEOUT (the sweep, topk and
# report still run); 2 a SPACE=... that is no readable file or a
# BASELINE_SETUP_TIMEOUT that is no number of seconds (one line, before
# anything is installed), or a space fasweep refuses.
# Paths (BUILD, SPACE, STORE) are the caller's, relative to where it runs;
# the script finds its own files (the Makefile, deps.sh, baselines.sh, the
# default spaces) next to itself, so it runs from any folder.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-build}
abs() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$PWD/$1" ;; esac; }
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "fasweep: no NVIDIA GPU found on this machine (nvidia-smi is missing or sees none): the sweep needs one; 'make test' runs every CPU test without." >&2
    exit 1
fi
if [ -n "${SPACE:-}" ] && ! { [ -f "$SPACE" ] && [ -r "$SPACE" ]; }; then
    printf 'fasweep: SPACE=%q: no such readable space file\n' "$SPACE" >&2
    exit 2
fi
# BASELINE_SETUP_TIMEOUT=S: the most seconds the sweep waits for the baselines' setup after
# the build (default 600); past it they are stopped and the sweep goes on without them.
setup_timeout=${BASELINE_SETUP_TIMEOUT:-600}
case $setup_timeout in
'' | *[!0-9]* | 0*)
    printf 'fasweep: BASELINE_SETUP_TIMEOUT=%q: a whole number of seconds, 1 or more\n' \
        "$setup_timeout" >&2
    exit 2
    ;;
esac
# Where the main job's time goes: each step's wall seconds, said at the end (stderr).
t_step=$(date +%s.%N)
t_start=$t_step
steps=""
since() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; } # FROM TO: seconds
step() { # NAME: the time since the last step, under NAME
    local now
    now=$(date +%s.%N)
    steps+="${steps:+, }$1 $(since "$t_step" "$now") s"
    t_step=$now
}
bash "$here/deps.sh" build || exit 1
step deps
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1)
if [ -z "${SPACE:-}" ]; then
    case "$cc" in 9.*) SPACE=$root/spaces/h100.json ;; *) SPACE=$root/spaces/l4.json ;; esac
fi
build=$(abs "$build")
# The space checked and its problems read by the planner alone (geninst --check:
# grid/space.c's rules, the problems as `fasweep plan --json` says them), before
# anything else is built: a space fasweep refuses is its one line and exit 2.
make -C "$root" --no-print-directory -j"$(nproc)" BUILD="$build" "$build/geninst" >/dev/null || exit 1
space_abs=$(abs "$SPACE")
problems=$("$build/geninst" --check "$space_abs" 2>"$build/.space-check") || {
    rc=$?
    printf 'fasweep: %s\n' "$(head -1 "$build/.space-check" | sed 's/^geninst: //')" >&2
    [ $rc -eq 2 ] && exit 2
    exit 1
}
# While the kernels build (CPU work; the GPU idle), in process groups of their own,
# stopped with this script:
# - Triton's configs for the baselines compile (triton_attention.py --precompile, from the
#   planner's problems). Whether torch and triton import is its own first step (exit 3:
#   they do not; nothing said, the baselines say why they skip).
# - The baselines' process (baselines.sh, BASELINE_GO=stdin) imports PyTorch and Triton at
#   once; told 'prepare' once Triton's configs are compiled, it sets everything up (inputs,
#   references, the gates, Triton's autotuning: no timed round) on the idle GPU and
#   creates $ready; told 'go' after the sweep, it times the rounds. The sweep starts only
#   once it is ready (or gone), so nothing of it shares the GPU with the sweep.
# - The build runs at nice 10, so that the precompile, and then the baselines' setup, come
#   first and finish under it rather than after it (sweep/NOTES-engine.md, thirteenth
#   session: the CPU work is the same, its order decides what the GPU can do meanwhile).
pre_pid=""
base_pid=""
make_pid=""
pre_log=$build/.triton-precompile
plan_file=$build/.plan.json
ready=$build/.baselines-ready
round_done=$build/.baselines-round
stop_jobs() {
    local p
    for p in "$pre_pid" "$base_pid" "$make_pid"; do
        [ -z "$p" ] || kill -- "-$p" 2>/dev/null
    done
}
trap stop_jobs EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
printf '%s\n' "$problems" >"$plan_file" || exit 1
rm -f -- "$ready"
precompiled=()
case ",${BASELINE_BACKENDS:-triton}," in
*,triton,*)
    printf '%s' "$problems" | setsid -w python3 "$here/triton_attention.py" --precompile 2>"$pre_log" &
    pre_pid=$!
    # what it leaves uncompiled (a failed config, a crash) the autotuning compiles itself
    precompiled=(BASELINE_PRECOMPILED=1)
    ;;
esac
store=${STORE:-results.lmdb}
# The baselines' imports (5-9 s of one core) run under the build rather than beside the
# sweep, whose intervals were 0.03-0.05 points wider for it (sweep/NOTES-engine.md,
# twelfth session). Should this script stop first, fd 7 closes and it exits having timed
# nothing.
exec 7> >(exec setsid -w env ${precompiled[@]+"${precompiled[@]}"} BASELINE_GO=stdin \
    BASELINE_READY="$ready" BASELINE_ROUND_DONE="$round_done" BASELINE_PLAN="$plan_file" \
    bash "$here/baselines.sh" "$SPACE" "$store" "$build/fasweep")
base_pid=$!
# 'prepare' to the baselines (the write's SIGPIPE, should they have exited, ends only the
# subshell: their status comes after the sweep)
prepare() { (echo prepare >&7) 2>/dev/null || true; }
[ -n "$pre_pid" ] || prepare
# Only what this sweep runs: the space's instances, for this GPU's architecture
# where the build knows it (8.9, 9.0), the Makefile's defaults otherwise (and
# for a space path make cannot take as one word): 108 of the default build's 185
# instances for spaces/h100.json (sweep/NOTES-engine.md); a later `make` in the same
# folder builds the rest. For a known architecture LOCAL=1 too: no PTX for later
# GPUs (this GPU runs the SASS) and no size-compressed fat binary, the CPU that
# step took (sweep/NOTES-engine.md, thirteenth session).
narrow=()
case "$space_abs" in
*[[:space:]\$\#:\;\'\"\\%=]*) ;;
*) narrow=(SPACES="$space_abs") ;;
esac
case "$cc" in 8.9) narrow+=(ARCHS=89 LOCAL=1) ;; 9.0) narrow+=(ARCHS=90 LOCAL=1) ;; esac
setsid -w nice -n 10 make -C "$root" --no-print-directory -j"$(nproc)" BUILD="$build" \
    ${narrow[@]+"${narrow[@]}"} "$build/fasweep" 7>&- &
make_pid=$!
# the precompile's end (before the build's, as a rule) is the baselines' 'prepare'
if [ -n "$pre_pid" ]; then
    while kill -0 "$pre_pid" 2>/dev/null && kill -0 "$make_pid" 2>/dev/null; do
        sleep 0.05
    done
fi
finish_precompile() { # its line (unless it said nothing: exit 3), then 'prepare'
    local pre_rc=0
    wait "$pre_pid" || pre_rc=$?
    pre_pid=""
    [ $pre_rc -eq 3 ] || head -1 "$pre_log" | sed 's/$/ (while the build ran)/' >&2
    prepare
}
[ -z "$pre_pid" ] || kill -0 "$pre_pid" 2>/dev/null || finish_precompile
# make's own status for a failed build is 2, which here would read as a usage error
make_rc=0
wait "$make_pid" || make_rc=$?
make_pid=""
[ $make_rc -eq 0 ] || exit 1
step build
# What the precompile and the baselines' setup still had to do once the kernels were built.
[ -z "$pre_pid" ] || finish_precompile
# A setup that hangs must not hold the sweep: past the timeout the baselines are stopped
# (their group), said, and the job ends with status 1 after its sweep, topk and report.
setup_rc=0
waited=$SECONDS
while [ ! -e "$ready" ] && kill -0 "$base_pid" 2>/dev/null; do
    if [ $((SECONDS - waited)) -ge "$setup_timeout" ]; then
        kill -- "-$base_pid" 2>/dev/null || true
        wait "$base_pid" 2>/dev/null || true
        base_pid=""
        exec 7>&-
        printf 'fasweep: the baselines were not set up %s s after the build (BASELINE_SETUP_TIMEOUT): stopped, no baselines; the sweep goes on\n' \
            "$setup_timeout" >&2
        setup_rc=1
        break
    fi
    sleep 0.05
done
step "baselines' setup after the build"
echo "fasweep: sweeping $SPACE" >&2
# With the baselines set up, their rounds but the last run between the sweep's rounds
# (fasweep grid --between-rounds, while no GPU has a task; scripts/baseline_round.sh says
# 'round' on fd 9, the baselines' stdin): a baseline's rounds are then as far apart as a
# kernel's, with no pause to wait out after the sweep (sweep/NOTES-engine.md, fifteenth
# session). fd 7 itself is not the sweep's.
if [ -n "$base_pid" ] && [ -e "$ready" ]; then
    ROUND_SCRIPT=$here/baseline_round.sh ROUND_DONE=$round_done ROUND_PID=$base_pid \
        "$build/fasweep" grid --space "$SPACE" --store "$store" --refine 4 \
        --between-rounds 'bash "$ROUND_SCRIPT" "$ROUND_DONE" "$ROUND_PID"' 9>&7 7>&-
else
    "$build/fasweep" grid --space "$SPACE" --store "$store" --refine 4 7>&-
fi
step "sweep and refine"
if [ -n "$base_pid" ]; then
    echo "fasweep: timing PyTorch SDPA and Triton (scripts/baselines.sh)" >&2
    # in a subshell: should baselines.sh have exited already, the write's SIGPIPE ends only
    # that subshell, and its status comes below
    (echo go >&7) 2>/dev/null || true
    exec 7>&-
    base_rc=0
    wait "$base_pid" || base_rc=$?
    base_pid=""
    [ $base_rc -eq 0 ] || exit $base_rc
fi
step baselines
# the space's modes as fasweep reads them (plan --json "modes": without any,
# the default of the mode table in store/mode.h), never a copy of the list
modes=$("$build/fasweep" plan --json --space "$SPACE" |
    python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["modes"]))') || exit 1
rc=$setup_rc
for mode in $modes; do # a group with only failed results is exit 1: the report still follows
    "$build/fasweep" topk -k 8 --mode "$mode" --store "$store" || rc=1
done
step topk
report=$(dirname "$store")/report.html
"$build/fasweep" report --space "$SPACE" --store "$store" -o "$report" >/dev/null
step report
echo "fasweep: report written to $report" >&2
echo "fasweep: main job: $steps; total $(since "$t_start" "$t_step") s" >&2
exit $rc
