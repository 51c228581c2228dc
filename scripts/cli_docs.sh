#!/bin/sh
# cli_docs.sh FASWEEP [DOC] - rewrites the generated part of DOC (default
# docs/cli.md), between its "<!-- BEGIN generated" and "<!-- END generated"
# lines, with `FASWEEP help --markdown`: the command reference comes from
# the binary's option tables (cli/cli.h: cli_help_markdown), never by hand. tests/cli/help.bats
# fails when the two disagree; run this after changing an option.
set -eu
fasweep=${1:?usage: cli_docs.sh FASWEEP [DOC]}
doc=${2:-docs/cli.md}
grep -q '^<!-- BEGIN generated' "$doc" && grep -q '^<!-- END generated' "$doc" || {
    echo "cli_docs.sh: $doc has no BEGIN/END generated markers; add them where the reference goes" >&2
    exit 2
}
ref=$(mktemp) && new=$(mktemp)
trap 'rm -f "$ref" "$new"' EXIT
"$fasweep" help --markdown >"$ref"
awk -v ref="$ref" '
    /^<!-- END generated/ { skip = 0 }
    !skip { print }
    /^<!-- BEGIN generated/ { while ((getline line < ref) > 0) print line; skip = 1 }
' "$doc" >"$new"
cat "$new" >"$doc"
