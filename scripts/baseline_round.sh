#!/usr/bin/env bash
# baseline_round.sh DONE PID - one round of the baselines between two of the sweep's rounds:
# run_default_sweep.sh gives it to `fasweep grid --between-rounds`, which runs it while no
# GPU has a task. Says 'round' on fd 9 (the baselines' stdin: scripts/baselines.sh with
# BASELINE_ROUND_DONE=DONE, whose process group is PID) and waits until the round is timed
# (DONE created), the process is gone, or BASELINE_ROUND_TIMEOUT seconds (120) have passed;
# past the timeout the group is stopped, so nothing of it runs beside the next round.
# Exit 0: the round is timed; 1 otherwise, with one line why (fasweep then says so and runs
# this no more).
set -u
me=baseline_round.sh
if [ $# -ne 2 ] || [ -z "$1" ] || ! [[ $2 =~ ^[1-9][0-9]*$ ]]; then
    echo "$me: usage: $me DONE PID (fd 9: the baselines' stdin)" >&2
    exit 2
fi
done_file=$1
pid=$2
limit=${BASELINE_ROUND_TIMEOUT:-120}
[[ $limit =~ ^[1-9][0-9]*$ ]] || { echo "$me: BASELINE_ROUND_TIMEOUT=$limit: whole seconds >= 1" >&2; exit 2; }
rm -f -- "$done_file"
# in a subshell: a closed pipe's SIGPIPE ends only it
(echo round >&9) 2>/dev/null || { echo "$me: the baselines take no more commands (gone)" >&2; exit 1; }
start=$SECONDS
while [ ! -e "$done_file" ]; do
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "$me: the baselines' process ended during its round" >&2
        exit 1
    fi
    if [ $((SECONDS - start)) -ge "$limit" ]; then
        kill -- "-$pid" 2>/dev/null || true
        echo "$me: no baseline round within $limit s (BASELINE_ROUND_TIMEOUT): the baselines were stopped" >&2
        exit 1
    fi
    sleep 0.02
done
