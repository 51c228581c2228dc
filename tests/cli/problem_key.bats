#!/usr/bin/env bats
# problem_key.bats - real attention (bf16, GQA): the problem key says what is computed, dtype
# (fp16, bf16) and kv_heads (grouped-query, multi-query). Every record,
# store and space written before reads as fp16 with kv_heads = heads under
# the key it had (the fixtures import, rank and export unchanged); a space
# with bf16 and kv_heads plans and its problem text shows in plan, topk,
# the seed files, export and report; problems that differ only in dtype or
# kv_heads are different groups; the scripts read problem texts through
# `fasweep problem` and `plan --json` (no parser of their own); the SDPA
# baselines build K/V with
# kv_heads heads, call SDPA with enable_gqa only for grouped-query, in the
# problem's dtype, and leave out the memory-efficient backend there (no
# PyTorch needed: a stand-in torch where one is imported).

load helpers

# py: runs Python on stdin with scripts/ importable.
py() {
    PYTHONPATH="$REPO/scripts${PYTHONPATH:+:$PYTHONPATH}" python3 - "$@"
}

no_traceback() {
    expect_not_in "$output${stderr:-}" "Traceback"
}

one_line() {
    [ "$(printf '%s' "$1" | wc -l)" -eq 0 ] || { show_run; flunk "one line expected"; }
}

# expect_row PROBLEM CONFIG_PREFIX: a line of `plan`'s table (in $output)
# starts with PROBLEM, then CONFIG_PREFIX (its column padded with spaces).
expect_row() {
    printf '%s\n' "$output" | grep -qE "^${1//./\\.} +${2//./\\.}" ||
        { show_run; flunk "no plan row: $1 $2..."; }
}

# new_records OUT: the first fixture record under new problem texts (and the
# old one), two configs each, as `fasweep import` reads them.
new_records() {
    python3 - "$FIX/results.jsonl" >"$1" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
for p in ("b4.h8.s512.d64.nc", "b4.h8.s512.d64.nc.bf16", "b4.h8.kv2.s512.d64.nc",
          "b1.h32.kv8.s4096.d128.c.bf16", "b4.h32.kv1.s2048.d128.c.bf16"):
    for i, cfg in enumerate(("d64.m64.n64.w4.s2.z1", "d64.m128.n64.w8.s2.z1")):
        r["key"]["problem"] = p
        r["key"]["config"] = cfg
        t = r["time"]
        t["median_us"], t["min_us"], t["mean_us"] = 100.0 + 10 * i, 99.0 + 10 * i, 100.5 + 10 * i
        print(json.dumps(r))
PY
}

# ---- the C side --------------------------------------------------------------------------------

@test "problem key: the old fixtures import, rank and export under the keys they had: fp16, kv_heads = heads" {
    local f
    for f in results family merge_a merge_b; do
        "$FASWEEP" import "$FIX/$f.jsonl" --store "$STORE" >/dev/null || flunk "import $f"
    done
    "$FASWEEP" export --store "$STORE" -o exp.jsonl || flunk "export"
    "$FASWEEP" export --format csv --store "$STORE" -o exp.csv || flunk "export csv"
    "$FASWEEP" topk --json --seeds-dir sd --store "$STORE" >topk.json || flunk "topk"
    "$FASWEEP" topk --no-seeds --store "$STORE" >topk.txt || flunk "topk text"
    python3 - "$FIX" <<'PY' || flunk "see above"
import csv, glob, json, os, sys
fix = sys.argv[1]
keys = set()
for f in ("results", "family", "merge_a", "merge_b"):
    for line in open(os.path.join(fix, f + ".jsonl")):
        k = json.loads(line)["key"]
        keys.add(json.dumps(k, sort_keys=True))
back = {json.dumps(json.loads(l)["key"], sort_keys=True) for l in open("exp.jsonl")}
assert back == keys, sorted(back ^ keys)
probs = {json.loads(k)["problem"] for k in keys}
assert probs == {"b4.h8.s512.d64.nc", "b1.h2.s200.d128.c"}, probs
assert {row["problem"] for row in csv.DictReader(open("exp.csv"))} == probs
heads = {"b4.h8.s512.d64.nc": 8, "b1.h2.s200.d128.c": 2}
groups = json.load(open("topk.json"))["groups"]
assert groups and {g["problem"]["text"] for g in groups} == probs
for g in groups:
    p = g["problem"]
    assert p["dtype"] == "fp16" and p["kv_heads"] == p["heads"] == heads[p["text"]], p
seeds = sorted(os.path.basename(f) for f in glob.glob("sd/*.json"))
assert seeds and all(s.split("_")[1] in probs for s in seeds), seeds
for f in glob.glob("sd/*.json"):
    p = json.load(open(f))["problem"]
    assert p["dtype"] == "fp16" and p["kv_heads"] == p["heads"], (f, p)
txt = open("topk.txt").read()
for p in probs:
    assert "| %s |" % p in txt, p
assert ".kv" not in txt and "bf16" not in txt
PY
}

@test "problem key: a space with bf16 and kv_heads plans and shows the problem text in plan and plan --json" {
    run --separate-stderr "$FASWEEP" plan --space "$REPO/spaces/llama3-8b.json"
    expect_status 0
    local t
    for t in b16.h32.kv8.s1024.d128.c.bf16 b8.h32.kv8.s2048.d128.c.bf16 \
        b4.h32.kv8.s4096.d128.c.bf16 b2.h32.kv8.s8192.d128.c.bf16 b1.h32.kv8.s4096.d128.c.bf16; do
        expect_row "$t" d128.
    done
    run --separate-stderr "$FASWEEP" plan --space "$REPO/spaces/gemma2-d256.json" --all
    expect_status 0
    expect_row b2.h16.kv8.s4096.d256.c.bf16 d256.
    expect_row b2.h16.kv8.s4096.d256.nc.bf16 d256.
    "$FASWEEP" plan --space "$REPO/spaces/llama3-8b.json" --json >plan.json || flunk "plan --json"
    python3 - <<'PY' || flunk "see above"
import json
d = json.load(open("plan.json"))
probs = [p["problem"] for p in d["points"]]
want = ["b16.h32.kv8.s1024.d128.c.bf16", "b8.h32.kv8.s2048.d128.c.bf16",
        "b4.h32.kv8.s4096.d128.c.bf16", "b2.h32.kv8.s8192.d128.c.bf16",
        "b1.h32.kv8.s4096.d128.c.bf16"]
assert sorted(set(probs), key=probs.index) == want, probs
assert d["family"] == "wgmma" and len(probs) == 5 * 16, (d["family"], len(probs))
PY
    # the same space as fp16 MHA: the texts it always had
    python3 - "$REPO/spaces/llama3-8b.json" <<'PY' >mha.json
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["problems"]:
    del p["kv_heads"]
    p["dtype"] = "fp16"
print(json.dumps(d))
PY
    run --separate-stderr "$FASWEEP" plan --space mha.json
    expect_status 0
    expect_row b1.h32.s4096.d128.c d128.
    expect_not_in "$output" ".kv"
    expect_not_in "$output" "bf16"
}

@test "problem key: kv_heads, dtype and head_dim in a space: one line naming the path, exit 2; 256 and defaults accepted" {
    local bad want
    while IFS='|' read -r bad want; do
        printf '{"name": "t", "target": {"arch": "sm_90", "smem_limit": 232448}, "problems": [{"batch": 1, "heads": 32, "seq_len": 128, %s}], "axes": {"BLOCK_M": [64], "BLOCK_N": [64], "NUM_WARPS": [4], "STAGES": [2], "SWIZZLE": [1]}}\n' "$bad" >s.json
        run --separate-stderr "$FASWEEP" plan --space s.json
        [ "$status" -eq 2 ] || { show_run; flunk "$bad: exit $status"; }
        expect_in "$stderr" "s.json: $want"
        one_line "$stderr"
    done <<'EOF'
"head_dim": 64, "kv_heads": 5|problems[0].kv_heads: expected an integer from 1 to heads (32) that divides it
"head_dim": 64, "kv_heads": 64|problems[0].kv_heads: expected an integer from 1 to heads (32) that divides it
"head_dim": 64, "kv_heads": 0|problems[0].kv_heads: expected an integer from 1 to heads (32)
"head_dim": 64, "kv_heads": "8"|problems[0].kv_heads: expected an integer
"head_dim": 64, "dtype": "fp32"|problems[0].dtype: expected "fp16" or "bf16", got "fp32"
"head_dim": 64, "dtype": null|problems[0].dtype: expected "fp16" or "bf16", got null
"head_dim": 96|problems[0].head_dim: unsupported head_dim 96: expected 64, 128 or 256
"head_dim": 64, "kvheads": 8|problems[0].kvheads: unknown key, expected one of batch, heads, kv_heads, seq_len, head_dim, causal, dtype
EOF
    # 256 is the space's to hold: the family rejects what it cannot run
    printf '{"name": "t", "target": {"arch": "sm_90", "smem_limit": 232448}, "problems": [{"batch": 1, "heads": 32, "seq_len": 128, "head_dim": 256, "kv_heads": 32, "dtype": "fp16"}, {"batch": 1, "heads": 32, "seq_len": 128, "head_dim": 256, "kv_heads": 4, "dtype": "bf16"}], "axes": {"BLOCK_M": [64], "BLOCK_N": [64], "NUM_WARPS": [4], "STAGES": [2], "SWIZZLE": [1]}}\n' >ok.json
    run --separate-stderr "$FASWEEP" plan --space ok.json --all
    expect_status 0
    expect_row b1.h32.s128.d256.nc d256.
    expect_row b1.h32.kv4.s128.d256.nc.bf16 d256.
}

@test "problem key: records of problems that differ only in dtype or kv_heads are different groups in topk, the seeds, export and report" {
    new_records in.jsonl
    "$FASWEEP" import in.jsonl --store "$STORE" >/dev/null || flunk "import"
    "$FASWEEP" topk --json --seeds-dir sd --store "$STORE" >topk.json || flunk "topk"
    "$FASWEEP" topk --no-seeds --store "$STORE" >topk.txt || flunk "topk text"
    "$FASWEEP" export --store "$STORE" -o exp.jsonl || flunk "export"
    "$FASWEEP" report --store "$STORE" -o r.html || flunk "report"
    python3 - <<'PY' || flunk "see above"
import glob, json, os
want = {"b4.h8.s512.d64.nc": (8, 8, "fp16"), "b4.h8.s512.d64.nc.bf16": (8, 8, "bf16"),
        "b4.h8.kv2.s512.d64.nc": (8, 2, "fp16"), "b1.h32.kv8.s4096.d128.c.bf16": (32, 8, "bf16"),
        "b4.h32.kv1.s2048.d128.c.bf16": (32, 1, "bf16")}
groups = json.load(open("topk.json"))["groups"]
assert len(groups) == 5 and {g["problem"]["text"] for g in groups} == set(want), groups
for g in groups:
    p = g["problem"]
    assert (p["heads"], p["kv_heads"], p["dtype"]) == want[p["text"]], p
    assert len(g["seeds"]) == 2, g
b = [g["problem"] for g in groups if g["problem"]["text"] == "b1.h32.kv8.s4096.d128.c.bf16"][0]
assert (b["batch"], b["seq_len"], b["head_dim"], b["causal"]) == (1, 4096, 128, True), b
seeds = {os.path.basename(f) for f in glob.glob("sd/*.json")}
assert seeds == {"nvidia-l4_%s_hot.json" % t for t in want}, seeds
for f in glob.glob("sd/*.json"):
    p = json.load(open(f))["problem"]
    assert f.endswith("_%s_hot.json" % p["text"]) and p["dtype"] == want[p["text"]][2], (f, p)
txt = open("topk.txt").read()
html = open("r.html").read()
for t in want:
    assert "| %s |" % t in txt, t
    assert t in html, t
assert {json.loads(l)["key"]["problem"] for l in open("exp.jsonl")} == set(want)
PY
    # --problem names one of them, canonical or short; the wrong spellings are refused
    # the short form is non-causal: no such group here, named by its canonical text
    run --separate-stderr "$FASWEEP" topk --no-seeds --problem 1,32:8,4096,128,bf16 --store "$STORE"
    expect_status 1
    expect_in "$stderr" "problem b1.h32.kv8.s4096.d128.nc.bf16, mode any"
    run --separate-stderr "$FASWEEP" topk --no-seeds --problem b1.h32.kv8.s4096.d128.c.bf16 \
        --store "$STORE"
    expect_status 0
    expect_in "$output" "| b1.h32.kv8.s4096.d128.c.bf16 | hot |"
    expect_not_in "$output" "| b4.h8"
    run --separate-stderr "$FASWEEP" topk --no-seeds --problem 4,8:2,512,64 --store "$STORE"
    expect_status 0
    expect_in "$output" "| b4.h8.kv2.s512.d64.nc | hot |"
    expect_not_in "$output" "| b4.h8.s512.d64.nc |"
    local p
    for p in b4.h8.kv8.s512.d64.nc b4.h8.kv3.s512.d64.nc b4.h8.s512.d64.nc.fp16 \
        b4.h8.s512.d64.bf16.nc 4,8:3,512,64 4,8,512,64,fp32; do
        run --separate-stderr "$FASWEEP" topk --no-seeds --problem "$p" --store "$STORE"
        expect_status 2
        expect_in "$stderr" "--problem wants B,H,S,D"
        expect_in "$stderr" "got '$p'"
    done
}

@test "problem key: a problem text the store takes but that is no problem has null dtype and kv_heads in the seeds; the seeds stay within their schema" {
    python3 - "$FIX/results.jsonl" >in.jsonl <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
for p in ("llama-ish", "b1.h32.kv8.s4096.d128.c.bf16", "b4.h8.s512.d64.nc"):
    r["key"]["problem"] = p
    print(json.dumps(r))
PY
    "$FASWEEP" import in.jsonl --store "$STORE" >/dev/null || flunk "import"
    "$FASWEEP" topk --json --no-seeds --store "$STORE" >topk.json || flunk "topk"
    python3 - "$REPO/docs/seeds.schema.json" <<'PY' || flunk "see above"
import json, sys
groups = json.load(open("topk.json"))["groups"]
p = [g["problem"] for g in groups if g["problem"]["text"] == "llama-ish"][0]
assert p["dtype"] is None and p["kv_heads"] is None, p
assert p["batch"] is None and p["causal"] is None, p
try:
    import jsonschema
except ImportError:  # tests/tuners checks the schema where jsonschema is
    sys.exit(0)
v = jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))
for g in groups:
    v.validate(g)
PY
}

# ---- the scripts -------------------------------------------------------------------------------

@test "fasweep problem reads every problem text as --problem does (fasweep show prints it): the canonical text, numbers, FLOPs and bytes" {
    "$FASWEEP" import "$FIX/results.jsonl" --store "$STORE" >/dev/null || flunk "import"
    py "$FASWEEP" "$STORE" <<'PY' || flunk "see above"
import json, re, subprocess, sys
fasweep, store = sys.argv[1], sys.argv[2]
texts = [
    "b4.h8.s512.d64.nc", "b4.h8.s512.d64.c", "b1.h32.kv8.s4096.d128.c.bf16",
    "b4.h8.s512.d64.nc.bf16", "b2.h32.kv1.s1024.d64.nc", "b3.h10.kv5.s7.d256.c",
    "4,8,512,64", "1,32:8,4096,128", "1,32:8,4096,128,bf16", "4,8,512,64,fp16", "4,8:8,512,64",
    "4,8:1,512,64,bf16",
    # refused by both
    "b4.h8.kv8.s512.d64.nc", "b4.h8.kv3.s512.d64.nc", "b4.h8.kv16.s512.d64.nc",
    "b4.h8.kv0.s512.d64.nc", "b4.h8.kv02.s512.d64.nc", "b4.h8.s512.d64.nc.fp16",
    "b4.h8.s512.d64.nc.BF16", "b4.h8.s512.d64.bf16", "b4.h8.s512.d64.bf16.nc",
    "b4.h8.s512.d64.c.bf16.bf16", "b4.kv2.h8.s512.d64.nc", "b04.h8.s512.d64.nc",
    "b4.h8.s512.d64.nc ", "4,8:3,512,64", "4,8:16,512,64", "4:2,8,512,64", "4,8,512,64,",
    "4,8,512,64,c", "b4.h8.s512.d2147483648.nc", "4,8,512,064", "b\u0664.h8.s512.d64.nc", "",
]
run = lambda *a: subprocess.run([fasweep] + list(a), capture_output=True, text=True, timeout=60)
# all at once: one line a text, in order, null for the texts that are no problem
r = run("problem", "--json", "--any", "--", *texts)
assert r.returncode == 0 and r.stderr == "", (r.returncode, r.stderr)
lines = [json.loads(x) for x in r.stdout.splitlines()]
assert [o["text"] for o in lines] == texts, lines
for t, o in zip(texts, lines):
    s = run("show", "--gpu", "G", "--problem", t, "--config", "c", "--mode", "hot", "--store", store)
    one = run("problem", "--json", t)
    if s.returncode == 2:
        assert o == {"text": t, "problem": None}, (t, o)
        assert one.returncode == 2 and one.stdout == "", (t, one)
        assert one.stderr.count("\n") == 1 and "fasweep: problem '" in one.stderr and \
            "not a problem text: expected B,H,S,D" in one.stderr, (t, one.stderr)
        continue
    assert s.returncode == 1, (t, s.returncode, s.stderr)  # parsed; no such record
    c = re.search(r"problem (\S+), config", s.stderr).group(1)
    assert o["problem"] == c, (t, o, c)
    assert json.loads(one.stdout) == o, (t, one.stdout)
    # the canonical text reads back to the same problem, and writes itself
    back = json.loads(run("problem", "--json", c).stdout)
    assert dict(back, text=t) == o, (t, back, o)
    n = (o["batch"], o["heads"], o["kv_heads"], o["seq_len"], o["head_dim"])
    assert o["heads"] % o["kv_heads"] == 0 and o["dtype"] in ("fp16", "bf16"), o
    fl = 4.0 * o["batch"] * o["heads"] * o["seq_len"] ** 2 * o["head_dim"]
    assert o["flops"] == (fl / 2 if o["causal"] else fl), o
    assert o["bytes"] == (2 * o["heads"] + 2 * o["kv_heads"]) * o["batch"] * o["seq_len"] * \
        o["head_dim"] * 2, o
# text output: the canonical texts, one a line; --causal makes every problem causal
r = run("problem", "--causal", "4,8,512,64", "b1.h32.kv8.s4096.d128.nc.bf16")
assert r.stdout == "b4.h8.s512.d64.c\nb1.h32.kv8.s4096.d128.c.bf16\n", r.stdout
r = run("problem", "--any", "x", "4,8,512,64")
assert r.returncode == 0 and r.stdout == "\nb4.h8.s512.d64.nc\n", r.stdout
# all or nothing: one bad text is the only output
r = run("problem", "4,8,512,64", "nope")
assert r.returncode == 2 and r.stdout == "" and "'nope'" in r.stderr, r
r = run("problem")
assert r.returncode == 2 and "wants at least one problem TEXT" in r.stderr, r
PY
}

@test "the scripts hold no problem parser: scripts/problem_text.py is gone and no script reads a problem text or a space's problems itself" {
    [ ! -e "$REPO/scripts/problem_text.py" ] || flunk "scripts/problem_text.py is back"
    ! grep -ln 'import problem_text\|problem_text\.\|_CANON\|def of_space\|\.kv%d' "$REPO"/scripts/*.py "$REPO"/scripts/*.sh ||
        flunk "a script parses problem texts itself"
    # a missing fasweep is one line, exit 2, no traceback
    new_records in.jsonl
    "$FASWEEP" import in.jsonl --store "$STORE" >/dev/null || flunk "import"
    "$FASWEEP" export --store "$STORE" -o e.jsonl || flunk "export"
    FASWEEP="$WORK/none" run --separate-stderr python3 "$REPO/scripts/bench_table.py" e.jsonl
    expect_status 2
    expect_in "$stderr" "bench_table.py: cannot run fasweep $WORK/none (--fasweep BIN or \$FASWEEP)"
    one_line "$stderr"
    no_traceback
    run --separate-stderr python3 "$REPO/scripts/bench_table.py" e.jsonl --fasweep "$FASWEEP"
    expect_status 0
    # a fasweep that never answers is a time-out, not a hang
    printf '#!/bin/sh\nexec sleep 600\n' >slow
    chmod +x slow
    run --separate-stderr timeout 60 python3 -c '
import sys; sys.path.insert(0, sys.argv[1])
import fasweep_cli, report_io
fasweep_cli.TIMEOUT_S = 1
try:
    fasweep_cli.problems(sys.argv[2], ["4,8,512,64"])
except report_io.BadInput as e:
    print(e)' "$REPO/scripts" "$WORK/slow"
    expect_status 0
    expect_in "$output" "slow problem: no answer in 1 s"
    # a space fasweep refuses is its one line, naming the file
    echo '{"name": "t", "problems": [{"batch": 1}]}' >bad.json
    FASWEEP="$WORK/none" run --separate-stderr python3 "$REPO/scripts/fidelity_report.py" \
        e.jsonl e.jsonl e.jsonl e.jsonl --space bad.json --fasweep "$FASWEEP"
    expect_status 2
    expect_in "$stderr" "fidelity_report.py: fasweep: bad.json:"
    one_line "$stderr"
    no_traceback
}

@test "sdpa_baseline.py: dtype and kv_heads from the problem text; enable_gqa only for grouped-query; K/V of kv_heads heads in the problem's dtype" {
    py <<'PY' || flunk "see above"
import sys
import sdpa_baseline as sb
assert "torch" not in sys.modules
P = sb.parse_problem
# old texts: fp16 multi-head, and the record's problem is the text they always had
p = P("4,8,512,64", False)
assert p == {"problem": "b4.h8.s512.d64.nc", "batch": 4, "heads": 8, "kv_heads": 8,
             "seq_len": 512, "head_dim": 64, "causal": False, "dtype": "fp16",
             "flops": 4 * 4 * 8 * 512 ** 2 * 64, "bytes": 4 * 4 * 8 * 512 * 64 * 2}, p
assert sb.problem_text_of(p) == "b4.h8.s512.d64.nc"
assert sb.problem_text_of(P("4,8,512,64", True)) == "b4.h8.s512.d64.c"
assert sb.problem_text_of(P("b4.h8.s512.d64.nc", True)) == "b4.h8.s512.d64.c"
assert sb.call_kwargs(p, 0.125) == {"is_causal": False, "scale": 0.125}  # no enable_gqa: torch < 2.5 runs it
assert sb.backends_for(["flash", "efficient", "cudnn"], p) == (["flash", "efficient", "cudnn"], [])
assert sb.shapes(p) == ((4, 8, 512, 64), (4, 8, 512, 64))
# grouped-query bf16
g = P("b1.h32.kv8.s4096.d128.c.bf16", False)
assert (g["kv_heads"], g["dtype"], g["causal"]) == (8, "bf16", True), g
assert sb.problem_text_of(g) == "b1.h32.kv8.s4096.d128.c.bf16"
assert sb.problem_text_of(P("1,32:8,4096,128,bf16", True)) == "b1.h32.kv8.s4096.d128.c.bf16"
assert sb.call_kwargs(g, 0.0883) == {"is_causal": True, "scale": 0.0883, "enable_gqa": True}
assert sb.shapes(g) == ((1, 32, 4096, 128), (1, 8, 4096, 128))
keep, notes = sb.backends_for(["flash", "efficient", "cudnn"], g)
assert keep == ["flash", "cudnn"] and len(notes) == 1, (keep, notes)
assert notes[0].startswith("the efficient backend has no grouped-query kernel") and \
    "b1.h32.kv8.s4096.d128.c.bf16" in notes[0], notes
m = P("b4.h32.kv1.s2048.d128.c.bf16", False)  # multi-query
assert sb.call_kwargs(m, 1.0)["enable_gqa"] is True and sb.shapes(m)[1] == (4, 1, 2048, 128)
# the record: its key's problem is the canonical text, gbps counts K/V at kv_heads
rec = sb.record(sb.record_key("G", g, "flash", "hot"), "ok", "", dict(sb.timing_of([100.0]),
                launches=1), (1e-3, 1e-2), {}, {}, g)
assert rec["key"]["problem"] == "b1.h32.kv8.s4096.d128.c.bf16"
close = lambda a, b: abs(a - b) <= 1e-12 * abs(b)
assert close(rec["gbps"], (2 * 32 + 2 * 8) * 4096 * 128 * 2 / 100e-6 * 1e-9), rec["gbps"]
assert close(rec["tflops"], 0.5 * 4 * 32 * 4096 ** 2 * 128 / 100e-6 * 1e-12), rec["tflops"]
# torch versions: enable_gqa from 2.5
assert sb.torch_version("2.5.1+cu124") == (2, 5) and sb.torch_version("2.4.0") < sb.GQA_TORCH
assert sb.torch_version("2.10.0a0") >= sb.GQA_TORCH and sb.torch_version("x") == (0, 0)
# the reference's head chunks cover every head once, under the score budget
for h, s in ((32, 8192), (8, 512), (3, 40000), (64, 2048)):
    ch = sb.head_chunks(h, s)
    assert [x for a, b in ch for x in range(a, b)] == list(range(h)), ch
    assert all((b - a) == 1 or (b - a) * s * s <= sb.REF_SCORES for a, b in ch), ch
PY
}

@test "sdpa_baseline.py: the inputs and the rotation's copies have Q's heads and K/V's kv_heads, in the problem's dtype (a stand-in torch)" {
    py <<'PY' || flunk "see above"
import sdpa_baseline as sb

class T:  # a tensor: its shape, dtype and device, and how it was made
    def __init__(self, shape, dtype, device, how):
        self.shape, self.dtype, self.device, self.how = tuple(shape), dtype, device, how
    def mul_(self, x):
        self.how += "*%g" % x
        return self
    def sub_(self, x):
        self.how += "-%g" % x
        return self
    def to(self, dtype):
        return T(self.shape, dtype, self.device, self.how + ">" + dtype)
    def clone(self):
        return T(self.shape, self.dtype, self.device, self.how + "+clone")

class Torch:
    float32, float16, bfloat16 = "float32", "float16", "bfloat16"
    def __init__(self):
        self.made = []
    def rand(self, shape, generator=None, device=None, dtype=None):
        assert dtype == "float32" and generator == "gen"
        t = T(shape, dtype, device, "rand")
        self.made.append(t)
        return t

for text, dt in (("b1.h32.kv8.s4096.d128.c.bf16", "bfloat16"), ("4,8,512,64", "float16"),
                 ("2,16:8,4096,256,bf16", "bfloat16"), ("b4.h32.kv1.s2048.d128.c", "float16")):
    p = sb.parse_problem(text, False)
    torch = Torch()
    q, k, v = sb.random_inputs(torch, "gen", p, "cuda:0")
    qs = (p["batch"], p["heads"], p["seq_len"], p["head_dim"])
    kvs = (p["batch"], p["kv_heads"], p["seq_len"], p["head_dim"])
    assert (q.shape, k.shape, v.shape) == (qs, kvs, kvs), (text, q.shape, k.shape)
    for t in (q, k, v):
        # uniform in [-1, 1]: drawn in fp32, then rounded to the dtype
        assert t.dtype == dt and t.how == "rand*2-1>" + dt and t.device == "cuda:0", t.how
    rot = sb.Rotation(torch, "gen", q, k, v)
    for launches in (1, 5):
        rot.room(launches)  # as Timer.measure, before a batch sample
        for i in range(8):
            for l in range(launches):
                qq, kk, vv = rot.inputs(i, l, launches)
                assert (qq.shape, kk.shape, vv.shape) == (qs, kvs, kvs), text
                assert qq.dtype == kk.dtype == vv.dtype == dt
    assert len(torch.made) == 6  # the inputs and the second set
PY
}

@test "sdpa_baseline.py: grouped-query problems are refused in one line where they cannot run: bad K/V heads (fasweep's reading), only efficient (exit 2), PyTorch before 2.5 (exit 1)" {
    local s="$REPO/scripts/sdpa_baseline.py" p
    for p in b1.h32.kv5.s4096.d128.c 1,32:5,4096,128 b1.h32.kv32.s4096.d128.c 1,32:64,4096,128; do
        run --separate-stderr python3 "$s" --problem "$p"
        expect_status 2
        expect_in "$stderr" "sdpa_baseline: --problem: fasweep: problem '$p': not a problem text: expected B,H,S,D (e.g. 4,8,512,64; B,H:KV,S,D for KV K/V heads"
        one_line "$stderr"
    done
    for p in b4.h8.s512.d64.nc.fp32 4,8,512,64,fp32 b4.h8.s0512.d64.nc; do
        run --separate-stderr python3 "$s" --problem "$p"
        expect_status 2
        expect_in "$stderr" "sdpa_baseline: --problem: fasweep: problem '$p': not a problem text: expected B,H,S,D"
        one_line "$stderr"
    done
    run --separate-stderr python3 "$s" --problem b1.h32.kv8.s4096.d128.c.bf16 --backends efficient
    expect_status 2
    expect_in "$stderr" "the efficient backend has no grouped-query kernel (kv_heads 8 < heads 32): not timed for b1.h32.kv8.s4096.d128.c.bf16: no backend left to time"
    one_line "$stderr"
    # a PyTorch that sees a GPU but has no enable_gqa
    mkdir -p py24
    printf '__version__ = "2.4.1+cu121"\nclass cuda:\n    @staticmethod\n    def is_available():\n        return True\n' >py24/torch.py
    PYTHONPATH="$WORK/py24" run --separate-stderr python3 "$s" --problem 1,32:8,4096,128,bf16
    expect_status 1
    expect_in "$stderr" "sdpa_baseline: PyTorch 2.4.1+cu121 has no enable_gqa for kv_heads < heads (b1.h32.kv8.s4096.d128.nc.bf16): PyTorch 2.5 or later"
    one_line "$stderr"
    no_traceback
}

@test "baselines.sh: the space's problems go to sdpa_baseline.py as their canonical texts, dtype and kv_heads included; a bad kv_heads or dtype is one line, exit 2" {
    mkdir -p repo py stub
    cp -r "$REPO/scripts" "$REPO/spaces" repo/
    rm -rf repo/scripts/__pycache__
    # stand-ins: torch that sees a GPU, an sdpa_baseline.py that records its arguments, fasweep
    printf '__version__ = "2.5.1"\nclass cuda:\n    @staticmethod\n    def is_available():\n        return True\n' >py/torch.py
    printf 'import sys\nopen("%s/calls", "a").write(" ".join(sys.argv[1:]) + "\\n")\n' "$WORK" \
        >repo/scripts/sdpa_baseline.py
    # (the real one plans: the problems are fasweep's own reading of the space)
    printf '#!/bin/sh\n[ "$1" = plan ] && exec "%s" "$@"\necho "fasweep $*" >>"%s/calls"\n' \
        "$FASWEEP" "$WORK" >stub/fasweep
    chmod +x stub/fasweep
    : >calls
    PYTHONPATH="$WORK/py" run --separate-stderr bash repo/scripts/baselines.sh \
        repo/spaces/llama3-8b.json "$WORK/st" "$WORK/stub/fasweep"
    expect_status 0
    run cat calls
    local t
    # every problem in one sdpa_baseline.py call (one PyTorch start), in the plan's order
    expect_in "$output" "--problem b16.h32.kv8.s1024.d128.c.bf16 --problem b8.h32.kv8.s2048.d128.c.bf16 --problem b4.h32.kv8.s4096.d128.c.bf16 --problem b2.h32.kv8.s8192.d128.c.bf16 --problem b1.h32.kv8.s4096.d128.c.bf16 --space repo/spaces/llama3-8b.json"
    [ "$(grep -c -- '--problem' <<<"$output")" -eq 1 ] || flunk "one call expected: $output"
    expect_in "$output" "fasweep import $WORK/st.baselines.jsonl --store $WORK/st"
    expect_not_in "$output" "--causal"
    # an old space: the texts it always had
    : >calls
    PYTHONPATH="$WORK/py" bash repo/scripts/baselines.sh repo/spaces/ci.json "$WORK/st" \
        "$WORK/stub/fasweep" 2>/dev/null || flunk "baselines.sh ci.json"
    run cat calls
    expect_in "$output" "--problem b2.h3.s300.d64.nc --problem b1.h2.s200.d128.c --problem b1.h4.kv2.s257.d64.nc.bf16 --space"
    expect_not_in "$output" "--backends" # sdpa_baseline.py's default: flash,efficient,cudnn,triton
    # BASELINE_BACKENDS passes through as --backends
    : >calls
    BASELINE_BACKENDS=cudnn,triton PYTHONPATH="$WORK/py" bash repo/scripts/baselines.sh \
        repo/spaces/ci.json "$WORK/st" "$WORK/stub/fasweep" 2>/dev/null || flunk "baselines.sh BASELINE_BACKENDS"
    run cat calls
    expect_in "$output" "--problem b2.h3.s300.d64.nc --problem b1.h2.s200.d128.c --problem b1.h4.kv2.s257.d64.nc.bf16 --space repo/spaces/ci.json --fasweep $WORK/stub/fasweep --skip-without-torch --backends cudnn,triton"
    local bad want
    while IFS='|' read -r bad want; do
        python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
d["problems"] = [dict({"batch": 1, "heads": 32, "seq_len": 64, "head_dim": 128}, **json.loads("{" + sys.argv[2] + "}"))]
json.dump(d, open("s.json", "w"))' "$REPO/spaces/ci.json" "$bad"
        PYTHONPATH="$WORK/py" run --separate-stderr bash repo/scripts/baselines.sh s.json "$WORK/st" \
            "$WORK/stub/fasweep"
        expect_status 2
        expect_in "$stderr" "fasweep: s.json: $want"
        one_line "$stderr"
        no_traceback
    done <<'EOF'
"kv_heads": 5|problems[0].kv_heads: expected an integer from 1 to heads (32) that divides it (each K/V head serves heads / kv_heads query heads), got 5
"kv_heads": true|problems[0].kv_heads: expected an integer from 1 to heads (32) that divides it (each K/V head serves heads / kv_heads query heads), got true
"dtype": "fp32"|problems[0].dtype: expected "fp16" or "bf16", got "fp32"
"causal": 1|problems[0].causal: expected true or false, got 1
EOF
}

@test "bench_table.py and fidelity_report.py read the new problem texts: TF/s for grouped-query and bf16, the space's groups by their texts" {
    new_records in.jsonl
    "$FASWEEP" import in.jsonl --store "$STORE" >/dev/null || flunk "import"
    "$FASWEEP" export --store "$STORE" -o e.jsonl || flunk "export"
    run --separate-stderr python3 "$REPO/scripts/bench_table.py" e.jsonl
    expect_status 0
    expect_in "$output" "== b1.h32.kv8.s4096.d128.c.bf16"
    expect_not_in "$output" "not a B,H,S,D problem text"
    # 0.5 * 4 * 1 * 32 * 4096^2 * 128 / 100 us = 1374 TF/s (the K/V heads do not change the math)
    expect_in "$output" "100.00 (1374 TF/s)"
    py "$REPO/spaces/llama3-8b.json" <<'PY' || flunk "see above"
import sys
import fidelity_report as fr
g = fr.expected_groups(sys.argv[1])
assert ("b1.h32.kv8.s4096.d128.c.bf16", "hot") in g and len(g) == 15, sorted(g)
c = fr.canon_problems(["1,32:8,4096,128,bf16", "4,8,512,64", "b4.h8.kv8.s512.d64.nc"])
assert c == {"1,32:8,4096,128,bf16": "b1.h32.kv8.s4096.d128.nc.bf16",
             "4,8,512,64": "b4.h8.s512.d64.nc",
             "b4.h8.kv8.s512.d64.nc": "b4.h8.kv8.s512.d64.nc"}, c  # the last: no problem
PY
}

@test "eval: a config of another dtype than the problem's, or a head dim no kernel is built for, is exit 2 naming both" {
    export CUDA_VISIBLE_DEVICES=""
    run --separate-stderr "$FASWEEP" eval --problem b1.h4.kv2.s257.d64.nc.bf16 \
        --config d64.m64.n64.w4.s2.z1 --store "$STORE"
    expect_status 2
    expect_in "$stderr" "config d64.m64.n64.w4.s2.z1 is for fp16, the problem is bf16"
    run --separate-stderr "$FASWEEP" eval --problem 1,4,257,96 --config d64.m64.n64.w4.s2.z1 \
        --store "$STORE"
    expect_status 2
    expect_in "$stderr" "head_dim 96: the kernels are built for 64, 128 and 256"
    [ ! -e "$STORE" ] || flunk "a store was made"
}
