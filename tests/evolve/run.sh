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
# processes side by side (tests/queue.sh, one item each), each taking the next test left from
# one queue of tests (test_evolve.py --queue FOLDER: every test once, the slowest first), each
# one's output whole after it ends; the status is a failure when any of them failed.
. tests/queue.sh
jobs=${EVOLVE_JOBS:-2}
[[ $jobs =~ ^[1-9][0-9]?$ ]] || { echo "evolve: EVOLVE_JOBS=$jobs is not a count from 1 to 99" >&2; exit 2; }
logs=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$logs"' EXIT
mkdir "$logs/queue" "$logs/runs"
evolve_process() { # queue item
    "$py" tests/evolve/test_evolve.py --queue "$logs/queue"
}
procs=()
for ((i = 1; i <= jobs; i++)); do
    procs+=("evolve: process $i of $jobs")
done
queue_run "$jobs" "$logs/runs" evolve_process "${procs[@]}"
[ "$queue_fail" -eq 0 ]
