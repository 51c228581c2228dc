#!/usr/bin/env python3
"""rules.py TASK.json OUT.cuh [--seed N] - the deterministic rule-based
mutator of scripts/evolve_code.py: one edit of the parent kernel source
that keeps it compilable, with no language model.

The protocol (docs/tuners.md, "Evolving the kernel source"): the loop
writes a task file (fasweep.evolve-task/1: the parent's source path, its
results, the context, the insights, the history of candidates) and runs
`MUTATOR TASK.json OUT.cuh`; the mutator writes the child source to OUT.cuh
and may write OUT.cuh.json ({"mutation": "what it changed"}). Exit 0 when
it wrote a child; anything else is a failed mutation.

The edits are the ones known to stay valid on kernels/mma/flash_fwd.cuh
(read the template: every edit is a textual change of one site):
  unroll      a `#pragma unroll` site gets a factor (1, 2 or 4), or a
              factored one goes back to full unrolling: loop bounds are
              compile-time constants, so any factor compiles (a partial
              unroll may move arrays to local memory: slower, not wrong)
  bounds      __launch_bounds__(NUM_WARPS * 32) gets a min-blocks-per-SM
              argument (1..4), or a different one: the compiler caps the
              registers to fit (spills are possible, errors are not)
  slack       the lazy-rescale threshold RESCALE_SLACK (a tile constant:
              P may reach 2^SLACK in fp16, so 4..12 stays exact enough)
  ex2         ex2.approx.ftz.f32 <-> ex2.approx.f32 (both valid PTX)
  cp_async    cp.async.cg (L2 only) <-> cp.async.ca (L1 too; 16-byte
              copies allow both)
The --seed (default: the task's rng_seed) picks the edit, so the same seed
and task give the same child; an edit whose result is already in the
task's history (same SHA-256) is skipped. Exit 2 on bad input, 3 when no
new edit is left. Python 3.11+, stdlib only.
"""
import argparse
import hashlib
import json
import random
import re
import sys

UNROLL = re.compile(r"^([ \t]*)#pragma unroll(?:[ \t]+(\d+))?[ \t]*$", re.M)
BOUNDS = re.compile(r"__launch_bounds__\(NUM_WARPS \* 32(?:, (\d+))?\)")
SLACK = re.compile(r"(static constexpr float RESCALE_SLACK = )(\d+)\.f;")
EX2 = re.compile(r"ex2\.approx(\.ftz)?\.f32")
CPASYNC = re.compile(r"cp\.async\.(cg|ca)\.shared\.global")


def die(msg, code=2):
    print("rules.py: " + msg, file=sys.stderr)
    sys.exit(code)


def splice(src, m, group, text):
    """src with group `group` of match m replaced by text."""
    return src[:m.start(group)] + text + src[m.end(group):]


def edits(src):
    """Every candidate edit of src: (kind, name, new source). The order is
    fixed (the source's order), so a seeded shuffle of it is deterministic."""
    out = []
    for i, m in enumerate(UNROLL.finditer(src)):
        line_no = src.count("\n", 0, m.start()) + 1
        cur = m.group(2)
        for f in ("1", "2", "4", None):
            if f == cur:
                continue
            new = m.group(1) + "#pragma unroll" + (" " + f if f else "")
            what = "unroll line %d: %s -> %s" % (line_no, cur or "full", f or "full")
            out.append(("unroll", what, src[:m.start()] + new + src[m.end():]))
    for m in BOUNDS.finditer(src):
        cur = m.group(1)
        for b in ("1", "2", "3", "4", None):
            if b == cur:
                continue
            new = "__launch_bounds__(NUM_WARPS * 32" + (", " + b if b else "") + ")"
            what = "launch_bounds min-blocks %s -> %s" % (cur or "none", b or "none")
            out.append(("bounds", what, src[:m.start()] + new + src[m.end():]))
    for m in SLACK.finditer(src):
        for v in ("4", "6", "10", "12", "8"):
            if v != m.group(2):
                what = "RESCALE_SLACK %s -> %s" % (m.group(2), v)
                out.append(("slack", what, splice(src, m, 2, v)))
    m = EX2.search(src)
    if m:
        new = "ex2.approx.f32" if m.group(1) else "ex2.approx.ftz.f32"
        out.append(("ex2", "ex2 %s -> %s" % (m.group(0), new), EX2.sub(new, src)))
    m = CPASYNC.search(src)
    if m:
        to = "ca" if m.group(1) == "cg" else "cg"
        out.append(("cp_async", "cp.async.%s -> cp.async.%s" % (m.group(1), to),
                    CPASYNC.sub("cp.async.%s.shared.global" % to, src)))
    return out


def mutate(src, seed, seen):
    """The first edit whose result is new, in a seeded order: the kinds
    shuffled (so the many unroll sites do not drown the few other edits),
    then the edits of each kind shuffled. None when every edit was seen."""
    rng = random.Random(seed)
    by_kind = {}
    for kind, name, child in edits(src):
        by_kind.setdefault(kind, []).append((name, child))
    kinds = sorted(by_kind)
    rng.shuffle(kinds)
    for kind in kinds:
        cands = by_kind[kind]
        rng.shuffle(cands)
        for name, child in cands:
            if hashlib.sha256(child.encode()).hexdigest() not in seen:
                return kind + ": " + name, child
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("task", help="the task file the loop wrote (fasweep.evolve-task/1)")
    ap.add_argument("out", help="where to write the child source")
    ap.add_argument("--seed", type=int, help="picks the edit (default: the task's rng_seed)")
    a = ap.parse_args()
    try:
        with open(a.task, encoding="utf-8") as f:
            task = json.load(f)
        parent = task["parent"]["source"]
        seed = a.seed if a.seed is not None else int(task.get("rng_seed", 0))
        seen = {h["sha256"] for h in task.get("history", []) if h.get("sha256")}
    except (OSError, ValueError, KeyError, TypeError) as e:
        die("cannot read the task file %s: %s" % (a.task, e))
    try:
        with open(parent, encoding="utf-8") as f:
            src = f.read()
    except (OSError, ValueError) as e:
        die("cannot read the parent source %s: %s" % (parent, e))
    got = mutate(src, seed, seen | {hashlib.sha256(src.encode()).hexdigest()})
    if got is None:
        die("no edit of %s gives a source not already tried" % parent, 3)
    name, child = got
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(child)
    with open(a.out + ".json", "w", encoding="utf-8") as f:
        json.dump({"mutation": name}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
