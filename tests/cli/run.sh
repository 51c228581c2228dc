#!/usr/bin/env bash
# run.sh [FOLDER] - the CLI tests (make cli): every FOLDER/*.bats file (default: this
# folder's), CLI_JOBS files side by side (default: the cores this process may use, at most 4),
# each queue taking the next file left (tests/queue.sh), the slowest files first so that no
# queue is left with a long one at the end. Most of a file's time is processes it waits for
# (fasweep, python3, nvcc) one at a time, so two cores run two files at nearly the speed of
# one (sweep/NOTES-engine.md, eighteenth session). Each file's TAP output is printed whole
# when it ends, then "cli: N files passed, N failed". Exit 0 only when every file passed;
# 2 for a bad FOLDER or CLI_JOBS. FASWEEP (and FASWEEP_ASAN) as the tests read them.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../queue.sh"
[ $# -le 1 ] || { echo "cli: usage: run.sh [FOLDER]" >&2; exit 2; }
dir=${1:-$here}
[ -d "$dir" ] || { printf 'cli: %q is not a folder of .bats files\n' "$dir" >&2; exit 2; }
queues=${CLI_JOBS:-$(nproc 2>/dev/null || echo 1)}
[[ $queues =~ ^[1-9][0-9]?$ ]] || { echo "cli: CLI_JOBS=$queues is not a count from 1 to 99" >&2; exit 2; }
[ -n "${CLI_JOBS:-}" ] || [ "$queues" -le 4 ] || queues=4
command -v bats >/dev/null || { echo "cli: bats not found (make deps-test installs it)" >&2; exit 2; }
# The slowest files first (16-83 s each in the eighteenth session's runs on two cores: nvcc or
# the evolve loop inside), then the rest in name order. A file not named here runs all the same.
slow=(hostile5 hostile5_scripts bench_evolve adversarial_gen report hostile_names ptxas)
files=()
for f in "${slow[@]}"; do
    [ -f "$dir/$f.bats" ] && files+=("$dir/$f.bats")
done
for f in "$dir"/*.bats; do
    [ -f "$f" ] || continue
    [[ " ${files[*]} " == *" $f "* ]] || files+=("$f")
done
[ ${#files[@]} -gt 0 ] || { printf 'cli: no .bats file in %q\n' "$dir" >&2; exit 2; }
logs=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$logs"' EXIT
bats_file() { # queue file
    bats "$2"
}
queue_run "$queues" "$logs" bats_file "${files[@]}"
echo "cli: $queue_pass files passed, $queue_fail failed (${#files[@]} files, $queues side by side)"
[ "$queue_fail" -eq 0 ]
