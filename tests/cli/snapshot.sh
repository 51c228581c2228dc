#!/usr/bin/env bash
# snapshot.sh BIN OUT - runs a fixed list of fasweep commands on the CLI
# fixtures and the spaces, and writes each one's stdout, stderr and exit
# status under OUT (one file per command), so two binaries can be compared
# with `diff -r OUT1 OUT2`: a refactoring that must not change behaviour
# shows no difference. Times of day (generated_at) are replaced by a fixed
# text; everything runs in a fresh folder under OUT so paths are the same.
set -uo pipefail
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=$2
repo=$(cd "$(dirname "$0")/../.." && pwd)
fix=$repo/tests/cli/fixtures
rm -rf "$out"
mkdir -p "$out/run"
cd "$out/run" || exit 1
n=0
snap() { # NAME ARGS... : one command, its outputs as NAME.{out,err,rc}
    local name=$1
    shift
    n=$((n + 1))
    "$bin" "$@" >"$out/$name.out" 2>"$out/$name.err"
    echo $? >"$out/$name.rc"
    # The build id hashes the kernel sources: a change to them moves it.
    sed -i -E -e 's/"generated_at":[[:space:]]*"[^"]*"/"generated_at": "T"/' \
        -e 's/build [0-9a-f]{16}/build B/; s/"build":([[:space:]]*)"[0-9a-f]{16}"/"build":\1"B"/' \
        "$out/$name.out"
}
snap help --help
snap version version
snap list list
snap list-json list --json
for c in plan grid list topk export import merge show version; do
    snap "help-$c" "$c" --help
done
for s in ci l4 h100; do
    snap "plan-$s" plan --space "$repo/spaces/$s.json"
    snap "plan-$s-all" plan --space "$repo/spaces/$s.json" --all
    snap "plan-$s-json" plan --space "$repo/spaces/$s.json" --json
    snap "plan-$s-shard" plan --space "$repo/spaces/$s.json" --shard 1/3
done
snap dry grid --dry-run --space "$repo/spaces/l4.json"
for f in bad_dup_axis bad_syntax bad_unknown_key; do
    snap "plan-$f" plan --space "$fix/$f.json"
done
snap import import "$fix/results.jsonl" --store s.lmdb
snap import-bad1 import "$fix/bad_status.jsonl" --store s.lmdb
snap import-bad2 import "$fix/bad_json.jsonl" --store s.lmdb
snap topk topk --store s.lmdb --seeds-dir seeds1
for f in seeds1/*.json; do
    sed -E 's/"generated_at":[[:space:]]*"[^"]*"/"generated_at": "T"/' "$f" >"$out/seed-$(basename "$f")"
done
snap topk-k3 topk -k 3 --no-seeds --store s.lmdb
snap topk-cold topk --mode cold --no-seeds --store s.lmdb
snap topk-json topk --json --no-seeds --store s.lmdb
snap topk-dev topk --gpu "NVIDIA L4" --problem 4,8,512,64 --no-seeds --store s.lmdb
snap topk-failed topk --gpu "NVIDIA L4" --problem b1.h2.s200.d128.c --store s.lmdb
snap topk-none topk --gpu "NVIDIA A100" --store s.lmdb
snap export export --store s.lmdb
snap export-csv export --format csv --store s.lmdb
snap export-prefix export --prefix "NVIDIA L4|" --store s.lmdb
snap show show "NVIDIA L4|b4.h8.s512.d64.nc|baseline|sdpa-flash|hot" --store s.lmdb
snap show-fields show --gpu "NVIDIA L4" --problem 4,8,512,64 --config d64.m64.n64.w4.s2.z1 \
    --mode cold --store s.lmdb
snap show-none show "x|y|z|w|hot" --store s.lmdb
snap import-a import "$fix/merge_a.jsonl" --store a.lmdb
snap import-b import "$fix/merge_b.jsonl" --store b.lmdb
snap merge merge b.lmdb --store a.lmdb
snap merge-again merge b.lmdb --store a.lmdb
snap merge-self merge a.lmdb --store a.lmdb
snap merge-missing merge nothere.lmdb --store a.lmdb
snap merged-export export --store a.lmdb
snap topk-missing topk --store missing.lmdb
snap bad-k topk -k 0
snap bad-mode topk --mode warm
snap bad-opt plan --bogus
snap unknown frobnicate
rm -rf "$out/run"
echo "snapshot: $n commands of $bin into $out"
