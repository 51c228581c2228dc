#!/usr/bin/env python3
"""rules.py TASK.json OUT.cuh [--seed N] - the deterministic rule-based
mutator of scripts/evolve_code.py: one edit of the parent kernel source
that keeps it compilable, with no language model.

The protocol (docs/tuners.md, "Evolving the kernel source"): the loop
writes a task file (fasweep.evolve-task/1: the parent's source path, its
results, the kernel family, the family's edit sites, the context, the
insights, the history of candidates) and runs `MUTATOR TASK.json OUT.cuh`;
the mutator writes the child source to OUT.cuh and may write OUT.cuh.json
({"mutation": "what it changed"}). Exit 0 when it wrote a child; anything
else is a failed mutation.

The edits are data, not code: the task's `edit_sites` (the family's
kernels/FAMILY/evolve.json, which the loop copies into the task; read from
there by the task's `family`, default mma, when the task has none). Each
site is {"kind", "scope", "pattern", "group", "values", "label", "empty",
"why"}: `pattern` (a Python regex, multi-line) finds the site, capture
group `group` holds the value that changes (a group that always takes
part, possibly empty), `values` the values it may take. Scope "each": every
match is its own site, one edit changes one of them (e.g. one `#pragma
unroll`); scope "all": the first match's value is the current one and one
edit gives every match the new value (e.g. every ex2.approx). `label`
names the edit ({line}, {old}, {new}, {match}, {new_match}; a value is
shown without surrounding blanks and commas, an empty one as `empty`).
The shipped sites (each known to keep the template compiling):
  mma    unroll (#pragma unroll factor 1, 2, 4 or full), bounds
         (__launch_bounds__ min-blocks 1..4 or none), slack (RESCALE_SLACK
         4..12), ex2 (.ftz or not), cp_async (cp.async.cg <-> .ca)
  wgmma  unroll (not the fence_regs loop), ex2, uniform_cw (the consumer
         index through __shfl_sync, warp-uniform), consumer_regs (the
         consumers' setmaxnreg budget lowered by 8 or 16), l2_promotion
         (the TMA maps' L2 promotion hint)
The --seed (default: the task's rng_seed) picks the edit, so the same seed
and task give the same child; an edit whose result is already in the
task's history (same SHA-256) is skipped. Exit 2 on bad input, 3 when no
new edit is left. Python 3.11+, stdlib only.
"""
import argparse
import hashlib
import json
import os
import random
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAMILY_NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}\Z")
MAX_TASK = 64 << 20

sys.path.insert(0, os.path.join(ROOT, "scripts"))
from evolve_code import MAX_SOURCE, BadInput, dumps, read_text, say  # noqa: E402


class BadSites(Exception):
    pass


def die(msg, code=2):
    say("rules.py: " + msg, sys.stderr)  # escaped: it quotes paths and the task's text
    sys.exit(code)


def family_sites(family="mma"):
    """The edit sites of a family, from kernels/FAMILY/evolve.json."""
    if not isinstance(family, str) or not FAMILY_NAME.match(family):
        raise BadSites("family %s is not a kernel family name" % json.dumps(family)[:40])
    path = os.path.join(ROOT, "kernels", family, "evolve.json")
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise BadSites("cannot read %s: %s" % (path, getattr(e, "strerror", None) or e))
    if not isinstance(doc, dict):
        raise BadSites("%s is not a JSON object" % path)
    return doc.get("edit_sites")


def check_sites(sites):
    """The sites as (site, compiled pattern); raises BadSites naming the
    first one that is not a site."""
    if not isinstance(sites, list) or not sites:
        raise BadSites("edit_sites is not a non-empty list")
    out = []
    for i, s in enumerate(sites):
        where = "edit_sites[%d]" % i
        if not isinstance(s, dict):
            raise BadSites(where + " is not an object")
        for k in ("kind", "pattern", "label"):
            if not isinstance(s.get(k), str) or not s[k]:
                raise BadSites("%s.%s is not a non-empty string" % (where, k))
        if s.get("scope", "each") not in ("each", "all"):
            raise BadSites(where + ".scope is not \"each\" or \"all\"")
        vals = s.get("values")
        if not isinstance(vals, list) or not vals or not all(isinstance(v, str) for v in vals):
            raise BadSites(where + ".values is not a non-empty list of strings")
        try:
            rx = re.compile(s["pattern"], re.M)
        except (re.error, RecursionError, OverflowError) as e:
            raise BadSites("%s.pattern does not compile: %s" % (where, e))
        g = s.get("group")
        if isinstance(g, bool) or not isinstance(g, int) or not 1 <= g <= rx.groups:
            raise BadSites("%s.group is not a capture group of its pattern" % where)
        if "empty" in s and not isinstance(s["empty"], str):
            raise BadSites(where + ".empty is not a string")
        out.append((s, rx))
    return out


def show(site, value):
    v = value.strip(" \t,")
    return v if v else site.get("empty", "empty")


def label(site, **kw):
    try:
        return site["label"].format(**kw)
    except (KeyError, IndexError, ValueError):
        return "%s %s -> %s" % (site["kind"], kw.get("old"), kw.get("new"))


def edits(src, sites=None):
    """Every candidate edit of src: (kind, name, new source). The order is
    fixed (the sites' order, then the source's, then the values'), so a
    seeded shuffle of it is deterministic."""
    out = []
    for site, rx in check_sites(family_sites("mma") if sites is None else sites):
        g = site["group"]
        matches = [m for m in rx.finditer(src) if m.start(g) >= 0]
        if not matches:
            continue
        if site.get("scope", "each") == "each":
            for m in matches:
                line_no = src.count("\n", 0, m.start()) + 1
                cur = show(site, m.group(g))
                for v in site["values"]:
                    if show(site, v) == cur:
                        continue
                    new_src = src[:m.start(g)] + v + src[m.end(g):]
                    new_match = m.group(0)[:m.start(g) - m.start()] + v + \
                        m.group(0)[m.end(g) - m.start():]
                    out.append((site["kind"], label(site, line=line_no, old=cur, new=show(site, v),
                                                    match=m.group(0), new_match=new_match),
                                new_src))
        else:
            m = matches[0]
            cur = show(site, m.group(g))
            for v in site["values"]:
                if show(site, v) == cur:
                    continue
                parts, last = [], 0
                for mm in matches:
                    parts += [src[last:mm.start(g)], v]
                    last = mm.end(g)
                new_src = "".join(parts) + src[last:]
                new_match = m.group(0)[:m.start(g) - m.start()] + v + \
                    m.group(0)[m.end(g) - m.start():]
                out.append((site["kind"], label(site, line=src.count("\n", 0, m.start()) + 1,
                                                old=cur, new=show(site, v), match=m.group(0),
                                                new_match=new_match), new_src))
    return out


def mutate(src, seed, seen, sites=None):
    """The first edit whose result is new, in a seeded order: the kinds
    shuffled (so the many unroll sites do not drown the few other edits),
    then the edits of each kind shuffled. None when every edit was seen."""
    rng = random.Random(seed)
    by_kind = {}
    for kind, name, child in edits(src, sites):
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
    # the first paragraph of the docstring, whole (never a sentence cut at a line end)
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("task", help="the task file the loop wrote (fasweep.evolve-task/1)")
    ap.add_argument("out", help="where to write the child source")
    ap.add_argument("--seed", type=int, help="picks the edit (default: the task's rng_seed)")
    a = ap.parse_args()
    try:
        task = json.loads(read_text(a.task, MAX_TASK, "the task file"))
        parent = task["parent"]["source"]
        if not isinstance(parent, str):
            raise TypeError("parent.source is not a path")
        seed = a.seed if a.seed is not None else int(task.get("rng_seed", 0))
        seen = {h["sha256"] for h in task.get("history", []) if h.get("sha256")}
        sites = task.get("edit_sites")
        if sites is None:
            sites = family_sites(task.get("family") or "mma")
        check_sites(sites)
    except BadSites as e:
        die("the task file %s: %s" % (a.task, e))
    except BadInput as e:
        die(str(e))
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as e:
        die("cannot read the task file %s: %s" % (a.task, e))
    try:
        src = read_text(parent, MAX_SOURCE, "the parent source")
    except BadInput as e:
        die(str(e))
    got = mutate(src, seed, seen | {hashlib.sha256(src.encode()).hexdigest()}, sites)
    if got is None:
        die("no edit of %s gives a source not already tried" % parent, 3)
    name, child = got
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(child)
    with open(a.out + ".json", "w", encoding="utf-8") as f:
        f.write(dumps({"mutation": name}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
