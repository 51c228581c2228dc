#!/usr/bin/env bats
# one_source.bats - one source for each rule. The nvcc flags that
# decide the kernels' code are the Makefile's NVCODE, passed into the build
# (fa_code_flags, kernels/embedded.h) and read by the kernel variants and
# `version --json`; the timing modes are store/mode.c's table, in the help
# texts ({{MODES}}, mode_help_text) and read by the scripts from fasweep
# (`version --json`, `plan --json`); the axis-value rule is
# fa_axis_value_why (kernels/family.c), which eval's --config gets too; no
# global function of the host code is left uncalled (scripts/check_unused.py).

load helpers

# The folder of the build's kernel side (gen/, geninst): FASWEEP's own, or
# its parent's when FASWEEP is a sanitizer build that shares the kernels
# (make check's BUILD/asan with KBUILD=BUILD).
kbuild() {
    local b
    b=$(dirname "$FASWEEP")
    if [ -d "$b/gen" ]; then echo "$b"; else dirname "$b"; fi
}

@test "version --json: the nvcc flags the kernels were built with (NVCODE) and the modes, default first" {
    run --separate-stderr "$FASWEEP" version --json
    expect_status 0
    local want
    want=$(sed -n 's/.* | //p' "$(kbuild)/gen/nvflags")
    python3 -c '
import json, sys
d = json.loads(sys.argv[1])
want = sys.argv[2].split()
assert d["nvcc_flags"] == want, (d["nvcc_flags"], want)
assert "--expt-relaxed-constexpr" in want and "-shared" not in want, want
assert d["modes"] == ["hot", "cold", "batch"], d["modes"]
assert d["instances"] > 0 and d["build"] and d["version"]
' "$output" "$want" || flunk "version --json: $output"
}

@test "a custom NVFLAGS or NVEXTRA reaches the variants: geninst writes it into fa_code_flags, the Makefile passes it" {
    local gi
    gi="$(kbuild)/geninst"
    mkdir gen
    run --separate-stderr "$gi" --out gen --shards 1 --arch-shards 0 --archs 89 \
        --code-flags '-O1 -std=c++17 -DFA_X="y"' --embed "$REPO/kernels/fa_config.h" "$REPO/spaces/ci.json"
    expect_status 0
    run python3 - gen/embedded.c <<'PY'
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"fa_code_flags\[\] = \{(.*?)NULL\}", t, re.S)
assert m, t[:400]
assert re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1)) == ["-O1", "-std=c++17", '-DFA_X=\\"y\\"'], m.group(1)
assert '#include "kernels/embedded.h"' in t
PY
    expect_status 0
    # the Makefile: NVFLAGS and NVEXTRA go to geninst as the code flags (dry run)
    # (MAKEFLAGS cleared: under make check's sanitizer pass it carries KBUILD)
    run env -u MAKEFLAGS -u MFLAGS make -n -C "$REPO" BUILD="$WORK/b" KBUILD="$WORK/b" \
        NVFLAGS="-O1 -std=c++17" NVEXTRA=-DFA_AB=1 "$WORK/b/gen/.stamp"
    expect_in "$output" '--code-flags "-O1 -std=c++17 --expt-relaxed-constexpr -DFA_AB=1"'
    # variant.c has no list of its own: its code flags are fa_code_flags
    ! grep -n '"-O3"\|"-lineinfo"\|"-std=c++17"' "$REPO/sweep/variant.c" || flunk "variant.c lists nvcc flags"
    grep -q 'fa_code_flags' "$REPO/sweep/variant.c" || flunk "variant.c does not read fa_code_flags"
}

@test "fa_embedded_names is declared once, in kernels/embedded.h, which the generated embedded.c includes" {
    run grep -rln --include='*.c' 'extern const char \*const fa_embedded' "$REPO/cli" "$REPO/sweep" "$REPO/store" "$REPO/grid" "$REPO/seeds" "$REPO/kernels"
    [ -z "$output" ] || flunk "declared by hand in: $output"
    grep -q 'fa_embedded_names\[\];' "$REPO/kernels/embedded.h" || flunk "not in kernels/embedded.h"
    grep -q '#include "kernels/embedded.h"' "$(kbuild)/gen/embedded.c" || flunk "embedded.c does not include it"
}

@test "the help texts name the modes from the mode table; fasweep --help has one block per mode" {
    local c
    for c in topk report export show; do
        run --separate-stderr "$FASWEEP" "$c" --help
        expect_status 0
        expect_not_in "$output" "{{"
        expect_in "$output" "hot"
        expect_in "$output" "cold or batch"
    done
    run --separate-stderr "$FASWEEP" show --help
    expect_in "$output" "hot (default), cold or batch"
    run --separate-stderr "$FASWEEP" --help
    expect_status 0
    expect_in "$output" "timing modes"
    expect_in "$output" "L2 flushed before each sample"
    expect_in "$output" "stops by stdrel, noise by median_se"
    # no help string or mode-reading script holds its own list
    ! grep -n 'mode: hot, cold\|"hot (default), cold' "$REPO"/cli/*.c "$REPO"/cli/*.h || flunk "a help text lists the modes"
    ! grep -n 'MODES = (\|"modes", \["hot"\]\|"modes": \["hot"\]' "$REPO/scripts/sdpa_baseline.py" "$REPO/scripts/run_default_sweep.sh" || flunk "a script lists the modes"
}

@test "plan --json: the space's modes (default: the table's first) and each problem's canonical text, FLOPs and bytes" {
    run --separate-stderr "$FASWEEP" plan --json --space "$REPO/spaces/ci.json"
    expect_status 0
    python3 -c '
import json, sys
d = json.loads(sys.argv[1])
sp = json.load(open(sys.argv[2]))
assert d["modes"] == sp["measure"]["modes"], d["modes"]
ps = d["problems"]
assert [p["problem"] for p in ps][:3] == ["b2.h3.s300.d64.nc", "b1.h2.s200.d128.c", "b1.h4.kv2.s257.d64.nc.bf16"], ps
assert ps[0]["flops"] == 4 * 2 * 3 * 300 * 300 * 64, ps[0]
assert ps[1]["flops"] == 4 * 1 * 2 * 200 * 200 * 128 / 2, ps[1]
# Q, O of heads and K, V of kv_heads heads, 2 bytes an element
assert ps[0]["bytes"] == (2 * 3 + 2 * 3) * 2 * 300 * 64 * 2, ps[0]
assert ps[2]["bytes"] == (2 * 4 + 2 * 2) * 1 * 257 * 64 * 2, ps[2]
assert {k for k in ps[2]} == {"problem", "batch", "heads", "kv_heads", "seq_len", "head_dim",
                              "causal", "dtype", "flops", "bytes"}, ps[2]
assert (ps[2]["kv_heads"], ps[2]["dtype"], ps[2]["causal"]) == (2, "bf16", False), ps[2]
' "$output" "$REPO/spaces/ci.json" || flunk "plan --json: ${output:0:400}"
    python3 -c 'import json; d = json.load(open("'"$REPO"'/spaces/ci.json")); d["measure"].pop("modes", None); json.dump(d, open("nomodes.json", "w"))'
    run --separate-stderr "$FASWEEP" plan --json --space nomodes.json
    expect_status 0
    python3 -c 'import json, sys; assert json.loads(sys.argv[1])["modes"] == ["hot"]' "$output" || flunk "default modes"
}

@test "sdpa_baseline.py takes the modes from fasweep: a mode fasweep lacks is refused, one it has and the script cannot time too" {
    mkdir stub
    export REAL="$FASWEEP" # the problem texts: the real one's reading
    cat >stub/fasweep <<'SH'
#!/bin/sh
case "$1" in
version) echo '{"modes": ["hot", "warm"]}' ;;
plan) echo '{"modes": ["warm"], "problems": []}' ;;
problem) exec "$REAL" "$@" ;;
esac
SH
    chmod +x stub/fasweep
    local s="$REPO/scripts/sdpa_baseline.py"
    run --separate-stderr python3 "$s" --problem 4,8,512,64 --modes cold --fasweep stub/fasweep
    expect_status 2
    expect_in "$stderr" "modes are hot, warm, got 'cold'"
    FASWEEP="$WORK/stub/fasweep" run --separate-stderr python3 "$s" --problem 4,8,512,64 --modes warm
    expect_status 2
    expect_in "$stderr" "mode 'warm' is fasweep's but this script has no way to time it"
    echo '{"name": "t"}' >t.json
    run --separate-stderr python3 "$s" --problem 4,8,512,64 --space t.json --fasweep stub/fasweep
    expect_status 2
    expect_in "$stderr" "mode 'warm' is fasweep's"
    run --separate-stderr python3 "$s" --problem 4,8,512,64 --fasweep "$WORK/none"
    expect_status 2
    expect_in "$stderr" "sdpa_baseline: --problem: cannot run fasweep $WORK/none (--fasweep BIN or \$FASWEEP)"
}

@test "eval --config with a value no axis allows names the axis and its values (exit 2), never 'not compiled'; a space and a record say the same rule" {
    run --separate-stderr "$FASWEEP" eval --problem 4,8,512,64 --config d64.m64.n64.w4.s2.z9
    expect_status 2
    expect_in "$stderr" "config d64.m64.n64.w4.s2.z9: SWIZZLE is 9, expected 0 or 1"
    expect_not_in "$stderr" "not compiled"
    run --separate-stderr "$FASWEEP" eval --problem 4,8,512,64 --config wgmma:d64.m128.n128.c2.s2.p9
    expect_status 2
    expect_in "$stderr" "PIPELINE is 9, expected"
    expect_not_in "$stderr" "not compiled"
    # Not the form at all: the forms of every family.
    run --separate-stderr "$FASWEEP" eval --problem 4,8,512,64 --config d64.m128.x64
    expect_status 2
    expect_in "$stderr" "--config 'd64.m128.x64' is not a config text"
    # a record: the same words
    printf '%s\n' '{"key":{"device":"NVIDIA L4","problem":"b4.h8.s512.d64.nc","build":"5e1f0c2a9b3d4e67","config":"d64.m64.n64.w4.s2.z9","mode":"hot"},"kind":"kernel","status":"ok","error":"","time":{"median_us":150,"min_us":149,"noise":0.01,"cv":0.02}}' >z9.jsonl
    run --separate-stderr "$FASWEEP" import z9.jsonl --store "$STORE"
    expect_status 2
    expect_in "$stderr" "SWIZZLE is 9, expected 0 or 1"
    # a space: the axis's own words
    python3 -c 'import json; d = json.load(open("'"$REPO"'/spaces/ci.json")); d["axes"]["SWIZZLE"] = [9]; json.dump(d, open("z9.json", "w"))'
    run --separate-stderr "$FASWEEP" plan --space z9.json
    expect_status 2
    expect_in "$stderr" "0 or 1"
}

@test "check_unused: passes on the build, fails on a planted global function nothing calls" {
    local b
    b="$(dirname "$FASWEEP")"
    run python3 "$REPO/scripts/check_unused.py" --build "$b"
    expect_status 0
    mkdir -p plant/obj/cli
    cp -r "$b/obj" plant/
    printf 'int fa_planted_unused(int x);\nint fa_planted_unused(int x) { return x + 1; }\n' >plant.c
    cc -c plant.c -o plant/obj/cli/zz_planted.o
    run python3 "$REPO/scripts/check_unused.py" --build plant
    expect_status 1
    expect_in "$output" "fa_planted_unused"
}

@test "geninst --check: the space's problems and modes as fasweep plan --json says them, nothing written; a refused space is its line, exit 2" {
    local gi
    gi="$(kbuild)/geninst"
    for s in "$REPO"/spaces/*.json; do
        run --separate-stderr "$gi" --check "$s"
        expect_status 0
        [ -z "$(ls -A)" ] || flunk "geninst --check wrote files: $(ls -A)"
        python3 -c 'import json, subprocess, sys
got = json.loads(sys.argv[1])
plan = json.loads(subprocess.run([sys.argv[2], "plan", "--json", "--space", sys.argv[3]],
                                 capture_output=True, check=True).stdout)
want = {"problems": plan["problems"], "modes": plan["modes"]}
assert got == want, (got, want)' "$output" "$FASWEEP" "$s" || flunk "$s: $output"
    done
    # over several spaces: every problem, and each mode once, in the order first met
    run --separate-stderr "$gi" --check "$REPO/spaces/ci.json" "$REPO/spaces/l4.json"
    expect_status 0
    python3 -c 'import json, subprocess, sys
got = json.loads(sys.argv[1])
plans = [json.loads(subprocess.run([sys.argv[2], "plan", "--json", "--space", s],
                                   capture_output=True, check=True).stdout) for s in sys.argv[3:]]
modes = []
for p in plans:
    modes += [m for m in p["modes"] if m not in modes]
assert got == {"problems": plans[0]["problems"] + plans[1]["problems"], "modes": modes}, got' \
        "$output" "$FASWEEP" "$REPO/spaces/ci.json" "$REPO/spaces/l4.json" || flunk "two spaces: $output"
    echo '{"name": "x"}' >bad.json
    run --separate-stderr "$gi" --check bad.json
    expect_status 2
    [ -z "$output" ] || flunk "stdout on a refusal: $output"
    expect_in "$stderr" "geninst: bad.json:"
}

@test "README: the default build's instance counts are what geninst makes of the Makefile's SPACES" {
    local spaces gi
    spaces=$(printf 'print-spaces:\n\t@echo $(SPACES)\n' |
        env -u MAKEFLAGS -u MFLAGS -u SPACES make -s --no-print-directory -C "$REPO" -f Makefile -f - print-spaces)
    gi="$(kbuild)/geninst"
    mkdir gen
    (cd "$REPO" && "$gi" --out "$WORK/gen" --shards 1 --arch-shards 1 --archs "89 90" $spaces) 2>/dev/null ||
        flunk "geninst over $spaces"
    local all wg readme
    all=$(wc -l <gen/instances.txt)
    wg=$(grep -c '^wgmma:' gen/instances.txt)
    readme=$(tr '\n' ' ' <"$REPO/README.md")
    expect_in "$readme" "with the $all instances of the default spaces ($((all - wg)) of family \`mma\` for sm_89 and sm_90, $wg of family \`wgmma\` for sm_90a"
}

@test "geninst's shards: every instance in exactly one, the same twice, their estimated costs within 25 % of each other" {
    local gi="$(kbuild)/geninst" n
    mkdir gen gen2
    for out in gen gen2; do
        (cd "$REPO" && "$gi" --out "$WORK/$out" --shards 16 --arch-shards 4 --archs "89 90" \
            spaces/h100.json) 2>"$out.err" || flunk "geninst: $(cat "$out.err")"
    done
    cmp -s <(cat gen/inst_*.cu) <(cat gen2/inst_*.cu) || flunk "two runs wrote other shards"
    # every line of instances.txt is one FA_INSTANCE / FA_WG_INSTANCE line of one shard
    n=$(grep -hc '_INSTANCE[A-Z0-9_]*(' gen/inst_*.cu | paste -sd+ | bc)
    [ "$n" -eq "$(wc -l <gen/instances.txt)" ] || flunk "$n instance lines in the shards, $(wc -l <gen/instances.txt) instances"
    [ -z "$(grep -h '_INSTANCE[A-Z0-9_]*(' gen/inst_*.cu | sort | uniq -d)" ] || flunk "an instance in two shards"
    # the costliest mma instances (BLOCK_N 256 with 4 warps, the slowest to compile) are spread out
    local lo hi
    read -r lo hi < <(sed -n 's/.* shard(s) of estimated cost \([0-9.]*\) to \([0-9.]*\),.*/\1 \2/p' gen.err)
    [ -n "$lo" ] || flunk "no estimate in: $(cat gen.err)"
    python3 -c "import sys; sys.exit(0 if float('$hi') <= 1.25 * float('$lo') else 1)" ||
        flunk "the shards' estimated costs are $lo to $hi"
    local most
    most=$(grep -l 'FA_INSTANCE(128, 128, 256, 4' gen/inst_*.cu | wc -l)
    [ "$most" -eq "$(grep -h 'FA_INSTANCE(128, 128, 256, 4' gen/inst_*.cu | wc -l)" ] ||
        flunk "two of the costliest instances share a shard"
}
