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
exec "$py" tests/evolve/test_evolve.py
