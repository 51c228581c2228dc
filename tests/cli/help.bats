#!/usr/bin/env bats
# help.bats - the command line from one table: every help text
# and docs/cli.md's reference come from the option tables, and one option
# name means one thing (--device N a CUDA ordinal; --gpu NAME a filter).

load helpers

@test "docs/cli.md: the generated reference is what \`fasweep help --markdown\` prints" {
    run "$FASWEEP" help --markdown
    expect_status 0
    sed -n '/^<!-- BEGIN generated/,/^<!-- END generated/p' "$REPO/docs/cli.md" | sed '1d;$d' > doc.md
    [ -s doc.md ] || flunk "docs/cli.md has no BEGIN/END generated markers"
    printf '%s\n' "$output" > bin.md
    diff -u doc.md bin.md ||
        flunk "docs/cli.md is out of date: run scripts/cli_docs.sh $FASWEEP"
}

@test "help: every listed command has generated --help with its options, the same as \`help CMD\`" {
    run "$FASWEEP" --help
    expect_status 0
    local cmds
    cmds=$(printf '%s\n' "$output" | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 { print $1 }')
    [ "$(echo "$cmds" | wc -w)" -eq 13 ] || flunk "expected 13 commands, got: $cmds"
    for c in $cmds; do
        run "$FASWEEP" "$c" --help
        expect_status 0
        expect_in "$output" "usage: fasweep $c"
        expect_in "$output" "options:"
        expect_in "$output" "-h, --help"
        expect_in "$output" "exit status:"
        local direct=$output
        run "$FASWEEP" help "$c"
        expect_status 0
        [ "$output" = "$direct" ] || flunk "help $c differs from $c --help"
        # every option the markdown lists for $c is in its --help
        "$FASWEEP" help --markdown | awk -v c="$c" '
            /^### / { on = ($0 == "### `fasweep " c "`") }
            on && /^\| `-/ { split($0, f, "`"); print f[2] }' > opts.txt
        while IFS= read -r label; do
            expect_in "$direct" "  $label"
        done < opts.txt
    done
}

@test "help: the options once missing from docs/cli.md are in it now" {
    local doc="$REPO/docs/cli.md"
    for label in '`--shard I/N`' '`--devices L`' '`--kernel FILE.cuh`' '`-o, --output FILE`' \
        '`--gpu NAME`' '`--device N`'; do
        grep -qF -- "| $label |" "$doc" || flunk "docs/cli.md lacks $label"
    done
    # no option without a description
    if "$FASWEEP" help --markdown | grep -E '^\| `[^`]*` \| *\|$'; then
        flunk "an option row has no help text"
    fi
    # eval's own --store and --device rows
    "$FASWEEP" help --markdown | awk '/^### `fasweep eval`/ { on = 1; next } /^### / { on = 0 } on' > eval.md
    grep -qF -- '| `--store PATH` |' eval.md || flunk "eval --store undocumented"
    grep -qF -- '| `--device N` |' eval.md || flunk "eval --device undocumented"
}

@test "help: an unknown command for help is exit 2; --markdown takes no command" {
    run --separate-stderr "$FASWEEP" help nosuch
    expect_status 2
    expect_in "$stderr" "unknown command 'nosuch'"
    run --separate-stderr "$FASWEEP" help --markdown topk
    expect_status 2
}

@test "--device NAME in topk, show, export, report: exit 2, use --gpu NAME" {
    import_fixture
    for c in topk show export report; do
        run --separate-stderr "$FASWEEP" "$c" --device "NVIDIA L4" --store "$STORE"
        expect_status 2
        [ "$stderr" = "fasweep $c: --device is a CUDA ordinal; to filter by GPU model use --gpu NAME" ] ||
            { show_run; flunk "expected that one line"; }
        run --separate-stderr "$FASWEEP" "$c" --store "$STORE" --device
        expect_status 2
        expect_in "$stderr" "use --gpu NAME"
        run "$FASWEEP" "$c" --help
        expect_in "$output" "--gpu NAME"
        expect_not_in "$output" "--device"
    done
    [ ! -e report.html ] || flunk "report wrote a page"
    [ ! -e results.seeds ] && [ ! -e store.seeds ] || flunk "topk wrote seeds"
}

@test "--gpu NAME filters as --device NAME did" {
    import_fixture
    run --separate-stderr "$FASWEEP" topk --gpu "NVIDIA L4" --no-seeds --store "$STORE"
    expect_status 0
    expect_in "$output" "NVIDIA L4 |"
    expect_not_in "$output" "H100"
    run --separate-stderr "$FASWEEP" report --gpu "NVIDIA L4" --store "$STORE" -o l4.html
    expect_status 0
    run --separate-stderr "$FASWEEP" topk --gpu "no such GPU" --store "$STORE"
    expect_status 1
    expect_in "$stderr" "GPU no such GPU"
}

@test "--device N stays a CUDA ordinal in grid and eval" {
    run --separate-stderr "$FASWEEP" grid --space "$REPO/spaces/ci.json" --device 1 --dry-run
    expect_status 0
    run --separate-stderr "$FASWEEP" grid --space "$REPO/spaces/ci.json" --device "NVIDIA L4" --dry-run
    expect_status 2
    expect_in "$stderr" "--device wants an integer"
    run --separate-stderr "$FASWEEP" eval --problem 4,8,512,64 --config d64.m64.n64.w4.s2.z1 --device x
    expect_status 2
    expect_in "$stderr" "--device wants an integer"
}
