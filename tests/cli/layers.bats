#!/usr/bin/env bats
# layers.bats - the folder rules of scripts/check_includes.py (one job per folder):
# the tree passes, and each kind of violation, planted in a copy, fails it.

load helpers

copy_tree() {
    mkdir -p "$WORK/t"
    for d in cli grid sweep store seeds report export kernels; do cp -r "$REPO/$d" "$WORK/t/"; done
}

@test "layers: the tree has no cycle, no upward include and no oversized layer" {
    run python3 "$REPO/scripts/check_includes.py" "$REPO"
    [ "$status" -eq 0 ] || flunk "$output"
    [[ "$output" == *"0 problems"* ]]
}

@test "layers: store/ including sweep/ fails, naming both files" {
    copy_tree
    sed -i '1i #include "../sweep/stats.h"' "$WORK/t/store/text.c"
    run python3 "$REPO/scripts/check_includes.py" "$WORK/t"
    [ "$status" -eq 1 ]
    [[ "$output" == *"layer violation: store/text.c"*"sweep/stats.h"* ]] || flunk "$output"
}

@test "layers: seeds/ including grid/ is allowed, grid/ including seeds/ is not" {
    copy_tree
    sed -i '1i #include "../seeds/rank.h"' "$WORK/t/grid/plan.c"
    run python3 "$REPO/scripts/check_includes.py" "$WORK/t"
    [ "$status" -eq 1 ]
    [[ "$output" == *"layer violation: grid/plan.c"* ]] || flunk "$output"
}

@test "layers: only cli/ includes cli/ (a test file too)" {
    copy_tree
    mkdir -p "$WORK/t/tests"
    printf '#include "../cli/cli.h"\n' >"$WORK/t/tests/t.c"
    run python3 "$REPO/scripts/check_includes.py" "$WORK/t"
    [ "$status" -eq 1 ]
    [[ "$output" == *"only cli/ includes cli/"* ]] || flunk "$output"
}

@test "layers: a folder over 30 % of the lines fails" {
    copy_tree
    for i in $(seq 1 9000); do echo "/* padding $i */"; done >"$WORK/t/grid/pad.c"
    run python3 "$REPO/scripts/check_includes.py" "$WORK/t"
    [ "$status" -eq 1 ]
    [[ "$output" == *"layer too large: grid/"* ]] || flunk "$output"
}
