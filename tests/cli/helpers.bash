# helpers.bash - shared setup for the fasweep CLI tests (bats).
#
# $FASWEEP is the binary under test (set by `make cli`). Every test runs in
# its own empty directory ($WORK, under $BATS_TEST_TMPDIR, which bats also
# uses for its own files) so the default store
# (./results.lmdb) and its seeds dir (./results.seeds) never touch the repository, and
# FASWEEP_STORE is cleared so the caller's environment cannot leak in.

bats_require_minimum_version 1.5.0

REPO="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
FIX="$REPO/tests/cli/fixtures"

setup() {
    if [ -z "${FASWEEP:-}" ] || [ ! -x "$FASWEEP" ]; then
        echo "FASWEEP must name the fasweep binary (make cli sets it)" >&2
        return 1
    fi
    unset FASWEEP_STORE
    WORK="$BATS_TEST_TMPDIR/work"
    mkdir -p "$WORK" && cd "$WORK" || return 1
    STORE="$WORK/store.lmdb"
}

# Fails the test with a message (bats shows it with the output).
flunk() {
    echo "$*" >&2
    return 1
}

# Prints what `run` captured, for the failure report.
show_run() {
    echo "status: $status"
    echo "stdout: $output"
    echo "stderr: ${stderr:-}"
}

expect_status() {
    [ "$status" -eq "$1" ] || { show_run; flunk "expected exit status $1, got $status"; }
}

# expect_in TEXT NEEDLE: NEEDLE occurs in TEXT.
expect_in() {
    case "$1" in
    *"$2"*) return 0 ;;
    esac
    show_run
    flunk "expected to find: $2"
}

expect_not_in() {
    case "$1" in
    *"$2"*) show_run; flunk "did not expect: $2" ;;
    esac
    return 0
}

# Validates JSON on stdin (python3; jq when python3 is missing).
json_valid() {
    if command -v python3 >/dev/null; then
        python3 -m json.tool >/dev/null
    else
        jq -e . >/dev/null
    fi
}

# json_eval FILE EXPR: prints a Python expression over the document `d`
# read from FILE ("-" = stdin).
json_eval() {
    python3 -c '
import json, sys
src = sys.argv[1]
d = json.load(sys.stdin if src == "-" else open(src))
v = eval(sys.argv[2])
print(json.dumps(v) if isinstance(v, (dict, list, bool)) or v is None else v)
' "$1" "$2"
}

# Imports the hand-written fixture results into $STORE.
import_fixture() {
    "$FASWEEP" import "$FIX/results.jsonl" --store "$STORE" >/dev/null ||
        flunk "importing the fixture failed"
}

# expect_import_refused NEEDLE: importing bad.jsonl into $STORE is refused
# (exit 2) with NEEDLE in the message.
expect_import_refused() {
    run --separate-stderr "$FASWEEP" import bad.jsonl --store "$STORE"
    expect_status 2
    expect_in "$stderr" "$1"
}

# expect_plan STATUS SPACE [NEEDLE]: `fasweep plan --space SPACE` exits
# STATUS, with NEEDLE (when given) in its stderr.
expect_plan() {
    run --separate-stderr "$FASWEEP" plan --space "$2"
    expect_status "$1"
    [ -z "${3-}" ] || expect_in "$stderr" "$3"
}

# term_on_tmp PID PATTERN: waits (10 s at most) for a file named PATTERN
# (find -name) below this directory, the temp file PID is writing, then
# sends PID SIGTERM; fails (PID killed) when none appears.
term_on_tmp() {
    local pid=$1 pattern=$2 i
    for i in $(seq 100); do
        [ -n "$(find . -name "$pattern")" ] && break
        sleep 0.1
    done
    [ -n "$(find . -name "$pattern")" ] || { kill "$pid"; flunk "no temp file appeared"; }
    kill -TERM "$pid"
}
