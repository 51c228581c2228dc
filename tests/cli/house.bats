#!/usr/bin/env bats
# house.bats - house rules over the whole tracked tree (`git grep`, so only
# the files `git ls-files` lists; binary files skipped). No tracker sits
# beside the repository, so a reference to a numbered issue ("issue 24",
# "(issue 26, item 3)", "issue 4's check", a test named "31.7: ..." or
# "bench_fidelity (1): ...") tells a reader nothing: the code, tests and
# docs say the reason itself. Skipped outside a git checkout (CI runs from
# a clone, so it runs there).

load helpers

# The forms of a reference to a numbered issue, as extended regexps for
# `grep -i -E`: "issue 24", "issues 4, 5", "issue #7", "issue-4", "issue's",
# "(issue", a bats test named "31.7: ..." or "name (13a): ...", a Python
# docstring opening "Item 8" or "Issue 31.7". (Written so that this file
# does not match itself: it is excluded all the same.)
ISSUE_RES=(
    '\bissues? #?[0-9]'
    '\bissue-[0-9]'
    "\\bissue's\\b"
    '\(issue\b'
    '@test "[0-9]+\.[0-9]+[a-z]?: '
    '@test "[^"]*\([0-9]+[a-z]?\): '
    '"""(item|issue) [0-9]'
)

# Pending: files that still refer to a numbered issue (none now). Take a path
# off this list once it holds no reference, so the test guards it too.
PENDING=()

in_checkout() {
    command -v git >/dev/null 2>&1 &&
        git -C "$REPO" rev-parse --is-inside-work-tree >/dev/null 2>&1
}

# issue_refs [GREP-ARGS...]: every line of the tracked text files that
# refers to a numbered issue, as FILE:LINE:TEXT; exit 1 when none.
issue_refs() {
    local args=() re p
    for re in "${ISSUE_RES[@]}"; do args+=(-e "$re"); done
    local skip=(":(exclude)tests/cli/house.bats")
    for p in "${PENDING[@]}"; do skip+=(":(exclude)$p"); done
    git -C "$REPO" grep -n -I -i -E "${args[@]}" -- . "${skip[@]}"
}

@test "house: no file refers to a numbered issue; each says the reason itself" {
    in_checkout || skip "not in a git checkout"
    run issue_refs
    [ "$status" -ne 128 ] || flunk "git grep failed: $output"
    [ "$status" -eq 1 ] || flunk "references to numbered issues (say the reason instead):
$output"
}

@test "house: the check finds each form of a reference, and not prose about instruction issue" {
    cat > "$WORK/s.txt" <<'TXT'
one (issue 24) here
two issues 4, 5 and 15
three Issue 15: a heading
four issue 4's check
five the issue-4 criterion
six @test "31.7: import refuses
seven @test "bench_table (13a): bad input
eight     """Item 8 (no orphan process): the
ok the softmax is issue-bound; issue slots 47 %; it issues Q and K
ok @test "report: a device named <script>alert(1)</script> shows as text" {
TXT
    local args=() re
    for re in "${ISSUE_RES[@]}"; do args+=(-e "$re"); done
    run grep -n -i -E "${args[@]}" "$WORK/s.txt"
    [ "$status" -eq 0 ] || flunk "$output"
    [ "$(printf '%s\n' "$output" | wc -l)" -eq 8 ] || flunk "$output"
    [[ "$output" != *ok* ]] || flunk "$output"
}

@test "house: docs/spaces.md's counts of the h100 space's wgmma points are what plan --json says" {
    local said
    said=$(grep -oE '[0-9]+ points, [0-9]+ accepted, [0-9]+ distinct instances' "$REPO/docs/spaces.md")
    [ -n "$said" ] || flunk "docs/spaces.md no longer states the h100 space's wgmma counts"
    run --separate-stderr "$FASWEEP" plan --json --space "$REPO/spaces/h100.json"
    expect_status 0
    run python3 -c '
import json, sys
d = json.loads(sys.argv[1])
w = [p for p in d["points"] if p["family"] == "wgmma"]
ok = [p for p in w if p["reason"] in ("ok", "not_compiled")]  # the planner accepts them
print("%d points, %d accepted, %d distinct instances" % (len(w), len(ok), len({p["config"] for p in ok})))' "$output"
    expect_status 0
    [ "$output" = "$said" ] || flunk "docs/spaces.md says '$said', the plan says '$output'"
}

@test "house: docs/measurement.md's count of the problems a worker keeps is MEASURE_PROBLEMS_KEPT" {
    local n words said
    n=$(sed -n 's/^#define MEASURE_PROBLEMS_KEPT \([0-9]*\).*/\1/p' "$REPO/sweep/measure.c")
    [ -n "$n" ] || flunk "sweep/measure.c no longer defines MEASURE_PROBLEMS_KEPT"
    words=(zero one two three four five six seven eight nine)
    said=$(grep -oE 'keeps these for the last [a-z]+ problems' "$REPO/docs/measurement.md")
    [ -n "$said" ] || flunk "docs/measurement.md no longer says how many problems a worker keeps"
    [ "$said" = "keeps these for the last ${words[$n]:-$n} problems" ] ||
        flunk "docs/measurement.md says '$said', sweep/measure.c keeps $n"
}
