#!/usr/bin/env bats
# output.bats - the one file writer behind every -o (store/file.h; output
# paths): a device or FIFO is written through and never replaced,
# a symlink stays a link and its target gets the data, a regular file is
# replaced atomically, and no temp file outlives a failure or a signal.

load helpers

# No *.tmp.* file anywhere under $WORK.
expect_no_tmp() {
    local left
    left=$(find "$WORK" -name '*.tmp.*')
    [ -z "$left" ] || { ls -la "$WORK"; flunk "temp files left behind: $left"; }
}

@test "output: -o /dev/full is a write error (exit 1), and /dev/full stays a character device" {
    [ -c /dev/full ] || skip "no /dev/full"
    import_fixture
    run --separate-stderr "$FASWEEP" report --store "$STORE" -o /dev/full
    expect_status 1
    expect_in "$stderr" "/dev/full"
    expect_in "$stderr" "No space left on device"
    [ -c /dev/full ] || flunk "/dev/full is no longer a character device"
    run --separate-stderr "$FASWEEP" export --store "$STORE" -o /dev/full
    expect_status 1
    expect_in "$stderr" "No space left on device"
    [ -c /dev/full ] || flunk "/dev/full is no longer a character device"
}

@test "output: -o a symlink writes its target and the link stays a link (also dangling, relative)" {
    import_fixture
    mkdir real
    echo old > real/out.jsonl
    ln -s real/out.jsonl link.jsonl
    run "$FASWEEP" export --store "$STORE" -o link.jsonl
    expect_status 0
    [ -L link.jsonl ] || flunk "link.jsonl was replaced by a file"
    [ "$(wc -l < real/out.jsonl)" -eq 22 ] || flunk "the target does not hold the export"
    ln -s real/new.html dangling.html
    run "$FASWEEP" report --store "$STORE" -o dangling.html
    expect_status 0
    [ -L dangling.html ] || flunk "dangling.html was replaced by a file"
    grep -q '<html' real/new.html || flunk "the link's target was not written"
    expect_no_tmp
}

@test "output: -o a FIFO gets the data, and stays a FIFO" {
    import_fixture
    mkfifo pipe
    cat pipe > got.jsonl &
    local reader=$!
    run "$FASWEEP" export --store "$STORE" -o pipe
    expect_status 0
    wait "$reader"
    [ -p pipe ] || flunk "the FIFO was replaced"
    [ "$(wc -l < got.jsonl)" -eq 22 ] || flunk "the reader did not get the export"
    "$FASWEEP" export --store "$STORE" > want.jsonl
    cmp got.jsonl want.jsonl
}

@test "output: a regular file is replaced by a new one (rename), never written in place" {
    import_fixture
    echo old > out.jsonl
    chmod 640 out.jsonl
    local before after
    before=$(stat -c %i out.jsonl)
    exec 5< out.jsonl # a reader of the old file keeps seeing the old file
    run "$FASWEEP" export --store "$STORE" -o out.jsonl
    expect_status 0
    after=$(stat -c %i out.jsonl)
    [ "$before" != "$after" ] || flunk "out.jsonl was written in place"
    [ "$(cat <&5)" = old ] || flunk "the old file's reader saw it change"
    exec 5<&-
    [ "$(wc -l < out.jsonl)" -eq 22 ] || flunk "out.jsonl does not hold the export"
    [ "$(stat -c %a out.jsonl)" = 640 ] || flunk "the replaced file lost its mode"
    expect_no_tmp
}

@test "output: SIGTERM during export -o leaves no temp file and the old file untouched" {
    import_fixture
    echo old > out.jsonl
    FASWEEP_TEST_WRITE_SLEEP=30 "$FASWEEP" export --store "$STORE" -o out.jsonl &
    local pid=$!
    term_on_tmp "$pid" 'out.jsonl.tmp.*'
    local st=0
    wait "$pid" || st=$?
    [ "$st" -eq 143 ] || flunk "expected death by SIGTERM (143), got $st"
    expect_no_tmp
    [ "$(cat out.jsonl)" = old ] || flunk "out.jsonl changed"
}

@test "output: SIGTERM while topk writes seeds leaves no temp file" {
    import_fixture
    FASWEEP_TEST_WRITE_SLEEP=30 "$FASWEEP" topk --store "$STORE" --seeds-dir sd >/dev/null 2>&1 &
    local pid=$!
    term_on_tmp "$pid" '*.tmp.*'
    wait "$pid" || true
    expect_no_tmp
}

@test "output: -o a directory or under a missing directory is exit 1, nothing made" {
    import_fixture
    mkdir d
    run --separate-stderr "$FASWEEP" export --store "$STORE" -o d
    expect_status 1
    expect_in "$stderr" "is a directory"
    run --separate-stderr "$FASWEEP" export --store "$STORE" -o no/such/out.jsonl
    expect_status 1
    [ ! -e no ] || flunk "a directory was made"
    expect_no_tmp
}

@test "output: Ctrl-C (SIGINT) during export -o leaves no temp file (was: out.jsonl.tmp.XXXXXX)" {
    import_fixture
    echo old > out.jsonl
    # A background job of a script ignores SIGINT; python restores the
    # default in the child so the signal acts as a Ctrl-C would.
    run python3 - "$FASWEEP" "$STORE" <<'PY'
import glob, os, signal, subprocess, sys, time
env = dict(os.environ, FASWEEP_TEST_WRITE_SLEEP="30")
p = subprocess.Popen([sys.argv[1], "export", "--store", sys.argv[2], "-o", "out.jsonl"], env=env,
                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
for _ in range(100):
    if glob.glob("out.jsonl.tmp.*"):
        break
    time.sleep(0.1)
else:
    p.kill()
    sys.exit("no temp file appeared")
p.send_signal(signal.SIGINT)
rc = p.wait(timeout=10)
print("rc", rc)
sys.exit(0 if rc == -signal.SIGINT else 1)
PY
    expect_status 0
    expect_no_tmp
    [ "$(cat out.jsonl)" = old ] || flunk "out.jsonl changed"
}

@test "output: -o /dev/stdout writes to stdout, a pipe or a redirected file, never replacing it" {
    import_fixture
    [ "$("$FASWEEP" export --store "$STORE" -o /dev/stdout | wc -l)" -eq 22 ] ||
        flunk "-o /dev/stdout into a pipe lost lines"
    echo keep > redirected.jsonl
    local before
    before=$(stat -c %i redirected.jsonl)
    "$FASWEEP" export --store "$STORE" -o /dev/stdout >> redirected.jsonl
    [ "$(stat -c %i redirected.jsonl)" = "$before" ] || flunk "the redirected file was replaced"
    [ "$(wc -l < redirected.jsonl)" -eq 23 ] || flunk "expected the old line and 22 records"
    expect_no_tmp
}

@test "output: export --dir and topk --seeds-dir make missing parents (one mkdir -p), a file in the way is exit 1" {
    import_fixture
    run --separate-stderr "$FASWEEP" export --format kernel-tuner --space "$REPO/spaces/l4.json" \
        --gpu "NVIDIA L4" --allow-missing --dir a/b/c --store "$STORE"
    expect_status 0
    [ "$(ls a/b/c | wc -l)" -eq 2 ] || flunk "expected two files in a/b/c: $(ls -R a)"
    run --separate-stderr "$FASWEEP" topk --store "$STORE" --seeds-dir s/t/u
    expect_status 0
    [ "$(ls s/t/u | wc -l)" -ge 1 ] || flunk "no seeds in s/t/u"
    touch plain
    run --separate-stderr "$FASWEEP" export --format kernel-tuner --space "$REPO/spaces/l4.json" \
        --gpu "NVIDIA L4" --allow-missing --dir plain/d --store "$STORE"
    expect_status 1
    expect_in "$stderr" "cannot create plain/d"
    run --separate-stderr "$FASWEEP" topk --store "$STORE" --seeds-dir plain
    expect_status 1
    expect_in "$stderr" "exists but is not a directory"
    expect_no_tmp
}

@test "a path written is named on stderr, never on stdout: export -o, report -o, topk's seeds" {
    "$FASWEEP" import "$FIX/results.jsonl" --store "$STORE" >/dev/null
    run --separate-stderr "$FASWEEP" export --store "$STORE" -o out.jsonl
    expect_status 0
    [ -z "$output" ] || flunk "export -o printed on stdout: $output"
    expect_in "$stderr" "fasweep: wrote out.jsonl"
    run --separate-stderr "$FASWEEP" report --store "$STORE" -o r.html
    expect_status 0
    [ -z "$output" ] || flunk "report printed on stdout: $output"
    expect_in "$stderr" "wrote r.html"
    run --separate-stderr "$FASWEEP" topk --json --store "$STORE" --seeds-dir sd
    expect_status 0
    expect_in "$stderr" "sd/"
    expect_not_in "$output" "sd/"
}

@test "topk's default seeds folder sits beside the store, named for it; never ./seeds" {
    # From a folder holding a seeds/ (as the checkout's C module folder does):
    # nothing may land there.
    mkdir seeds sub
    import_fixture
    run --separate-stderr "$FASWEEP" topk --store "$STORE"
    expect_status 0
    [ -z "$(ls seeds)" ] || flunk "wrote into ./seeds: $(ls seeds)"
    [ -n "$(ls store.seeds)" ] || flunk "no seeds in store.seeds beside $STORE"
    expect_in "$stderr" "store.seeds/"
    # A store path without .lmdb, and one with a trailing slash: NAME.seeds.
    "$FASWEEP" import "$FIX/results.jsonl" --store sub/plain >/dev/null
    run --separate-stderr "$FASWEEP" topk --store sub/plain/
    expect_status 0
    [ -n "$(ls sub/plain.seeds)" ] || flunk "no sub/plain.seeds: $(ls sub)"
    # The default store ./results.lmdb: ./results.seeds.
    "$FASWEEP" import "$FIX/results.jsonl" >/dev/null
    run --separate-stderr "$FASWEEP" topk
    expect_status 0
    [ -n "$(ls results.seeds)" ] || flunk "no results.seeds: $(ls)"
    [ -z "$(ls seeds)" ] || flunk "wrote into ./seeds: $(ls seeds)"
}
