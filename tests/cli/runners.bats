#!/usr/bin/env bats
# runners.bats - the test runners that run files or tests side by side: tests/cli/run.sh (make
# cli, over tests/queue.sh) and tests/evolve/run.sh's queue, against stand-in test files.

load helpers

# CMD... without this bats run's own variables: a bats started by a test would report to it.
no_bats_env() {
    local u=() v
    for v in $(compgen -e); do
        [[ $v != BATS_* ]] || u+=(-u "$v")
    done
    env "${u[@]}" "$@"
}

# FOLDER with the stand-in bats files: ok.bats (two tests that pass, one of them slow),
# bad.bats (one that fails), each logging its start and end to $WORK/calls.
stand_ins() {
    mkdir -p "$WORK/t"
    local t='@''test' # written apart: this file's own bats would read the line as its test
    printf '%s "passes" { echo "start ok $(date +%%s.%%N)" >>"%s/calls"; sleep 1; echo "end ok" >>"%s/calls"; }\n%s "passes too" { true; }\n' \
        "$t" "$WORK" "$WORK" "$t" >"$WORK/t/ok.bats"
    printf '%s "fails" { echo "start bad $(date +%%s.%%N)" >>"%s/calls"; sleep 1; echo "end bad" >>"%s/calls"; false; }\n' \
        "$t" "$WORK" "$WORK" >"$WORK/t/bad.bats"
    : >"$WORK/calls"
}

@test "cli runner: files side by side, every file's output whole, a failing file fails the run" {
    stand_ins
    CLI_JOBS=2 run no_bats_env bash "$REPO/tests/cli/run.sh" "$WORK/t"
    expect_status 1
    expect_in "$output" "cli: 1 files passed, 1 failed (2 files, 2 side by side)"
    expect_in "$output" "FAIL $WORK/t/bad.bats (exit 1)"
    expect_in "$output" "PASS $WORK/t/ok.bats"
    expect_in "$output" "ok 2 passes too"
    expect_in "$output" "not ok 1 fails"
    # side by side: both started before either ended
    [ "$(head -2 "$WORK/calls" | grep -c '^start')" -eq 2 ] || flunk "not side by side: $(cat "$WORK/calls")"
    # whole: ok.bats's lines come together, between its header and its verdict
    printf '%s\n' "$output" | awk -v f="$WORK/t/ok.bats" '
        $0 ~ "^== " f { on = 1; next } on && /^(== |PASS |FAIL )/ { exit !(seen == 3) }
        on { seen++ }' || flunk "ok.bats's output not whole: $output"
}

@test "cli runner: every file passing is exit 0; one queue runs them one after another" {
    stand_ins
    rm "$WORK/t/bad.bats"
    CLI_JOBS=1 run no_bats_env bash "$REPO/tests/cli/run.sh" "$WORK/t"
    expect_status 0
    expect_in "$output" "cli: 1 files passed, 0 failed (1 files, 1 side by side)"
}

@test "cli runner: a folder without .bats files, a second argument or a bad CLI_JOBS is one line and exit 2" {
    mkdir -p "$WORK/empty"
    for a in "$WORK/empty" "$WORK/missing"; do
        run --separate-stderr bash "$REPO/tests/cli/run.sh" "$a"
        expect_status 2
        [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ] || flunk "not one line: $stderr"
    done
    run --separate-stderr bash "$REPO/tests/cli/run.sh" a b
    expect_status 2
    CLI_JOBS=0 run --separate-stderr bash "$REPO/tests/cli/run.sh" "$WORK/empty"
    expect_status 2
    expect_in "$stderr" "CLI_JOBS=0 is not a count"
}

@test "evolve runner: the processes side by side run every test once, failures counted" {
    # test_evolve.py's queue, on a module of stand-in tests: two processes share one queue
    mkdir -p "$WORK/q"
    python3 - "$REPO/tests/evolve/test_evolve.py" "$WORK" <<'PY'
import importlib.util, os, subprocess, sys, textwrap
src, work = sys.argv[1], sys.argv[2]
# The queue's code alone, from the test module (no test of the module itself runs here).
text = open(src).read()
start = text.index("SLOW_FIRST = ")
end = text.index('if __name__ == "__main__":')
mod = os.path.join(work, "stand_in.py")
with open(mod, "w") as f:
    f.write("import os, sys, time, unittest\n")
    f.write(text[start:end])
    f.write(textwrap.dedent('''
        class A(unittest.TestCase):
            @classmethod
            def setUpClass(cls):
                cls.ready = True
    '''))
    for i in range(12):
        f.write("    def test_%02d(self):\n        self.assertTrue(self.ready); time.sleep(0.05)\n"
                "        open(os.path.join(%r, 'ran'), 'a').write('%02d\\n')\n" % (i, work, i))
    f.write("    def test_zz_fails(self):\n        self.fail('on purpose')\n")
    f.write(textwrap.dedent('''
        if __name__ == "__main__":
            r = unittest.TextTestRunner(verbosity=2).run(QueuedSuite(sys.argv[1]))
            sys.exit(0 if r.wasSuccessful() else 1)
    '''))
ps = [subprocess.Popen([sys.executable, mod, os.path.join(work, "q")], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True) for _ in range(2)]
outs = [p.communicate()[0] for p in ps]
codes = sorted(p.returncode for p in ps)
ran = sorted(open(os.path.join(work, "ran")).read().split())
assert ran == ["%02d" % i for i in range(12)], ran
assert codes == [0, 1], (codes, outs)
assert sum("fails" in o and "FAIL" in o for o in outs) == 1, outs
assert all("Ran " in o for o in outs), outs
PY
}

@test "evolve runner: a bad EVOLVE_JOBS is one line and exit 2, before any test runs" {
    python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || skip "needs Python 3.11 (evolve/run.sh says SKIP)"
    for j in 0 x 100; do
        EVOLVE_JOBS=$j run --separate-stderr bash "$REPO/tests/evolve/run.sh"
        expect_status 2
        expect_in "$stderr" "EVOLVE_JOBS=$j is not a count"
        [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ] || flunk "not one line: $stderr"
        [ -z "$output" ] || flunk "ran something: $output"
    done
}
