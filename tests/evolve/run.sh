#!/usr/bin/env bash
# run.sh - the tests of scripts/evolve_code.py, evolve.py and the mutators
# (test_evolve.py) against a stand-in fasweep (fake_fasweep.py), with a fuzz
# run of the seeds-file and journal readers (fuzz_readers.py, fixed seed):
# no GPU, no build, stdlib only. The one compile test uses nvcc when there is one
# (skipped inside the suite otherwise). Without Python 3.11 it says SKIP
# with the reason and exits 77: a test that could not run never passes.
set -uo pipefail
cd "$(dirname "$0")/../.."
py=${PYTHON:-python3}
if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "evolve: SKIP: needs Python 3.11 or later ($("$py" --version 2>&1 | head -1))"
    exit 77
fi
# The tests spend most of their time waiting for the processes they start: EVOLVE_JOBS (2)
# processes side by side, each taking the next test left (test_evolve.py --queue FOLDER: every
# test once, the slowest first), each one's output whole after it ends; the status is a failure
# when any of them failed.
jobs=${EVOLVE_JOBS:-2}
[[ $jobs =~ ^[1-9][0-9]?$ ]] || { echo "evolve: EVOLVE_JOBS=$jobs is not a count from 1 to 99" >&2; exit 2; }
logs=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$logs"' EXIT
mkdir "$logs/queue"
for ((i = 0; i < jobs; i++)); do
    "$py" tests/evolve/test_evolve.py --queue "$logs/queue" >"$logs/$i" 2>&1 &
    pids+=($!)
done
rc=0
for ((i = 0; i < jobs; i++)); do
    wait "${pids[$i]}" || rc=1
    echo "== evolve: process $((i + 1)) of $jobs"
    cat "$logs/$i"
done
pids=()
exit $rc
