#!/usr/bin/env python3
"""evolve.py SEEDS.json --space SPACE [options] - an elitist evolutionary
search over the five axes (BLOCK_M, BLOCK_N, NUM_WARPS, STAGES, SWIZZLE),
seeded from a `fasweep topk` seeds file, with `fasweep eval --json` as the
objective: the worked example of feeding seeds to a search loop.

The population starts as the seeds' configs (optionally skipping the first
--skip-top of them, to see the loop find the leaders itself). Each
generation breeds --children new configs from the population (uniform
crossover of two parents, then a mutation that moves one axis one step),
drawn only from the points the space's planner accepts and never evaluated
before, and measures them head to head in one `fasweep eval` call. The
population keeps the --population fastest configs seen (elitism). It stops
after --generations, or --budget evaluations, or as soon as a config has
reached the target by the store's tie rule (not slower, or slower by at
most the combined half-width of the two 95 % intervals that eval reports:
docs/measurement.md, "Intervals"). The target is the
seeds file's rank 1 (the sweep's top-1), measured again in every eval call
beside the candidates: medians of separate processes differ by 1-2 % on a
GPU (sweep/NOTES-engine.md), far more than their noise, so "as fast as the
top-1" is judged side by side (not counted as evaluations); --target
US,CI_LO_US,CI_HI_US compares with fixed numbers instead. Prints a line per generation,
then a JSON summary. Plain Python, no dependencies.

Exit 0 when a config reached the target; 1 when none did (a failed
measurement never reaches it: eval's status not ok, or a median, interval
or speedup that is not a finite number, counts as failed) or fasweep failed
as a whole; 2 on bad input (a seeds file that is not a regular file of at
most 64 MiB, not JSON, of another schema or with a value this loop reads of
the wrong type; a --target that is not three finite numbers; a --fasweep
that cannot run), with one line naming the file. Every line printed has its
control characters escaped (\\xHH); the summary's JSON holds no NaN or
infinity (a time out of range is null).
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The seeds file, read and checked as evolve_code.py reads it (one reader of
# files, one typed shape checker, one escape for the terminal, one JSON writer).
from evolve_code import (MAX_SEEDS, MODE, PROBLEM, Arr, BadInput, Int, Invalid,  # noqa: E402
                         Num, Obj, Str, dumps, is_num, load_json, nonfinite, read_regular, say)

AXES = ["BLOCK_M", "BLOCK_N", "NUM_WARPS", "STAGES", "SWIZZLE"]
# Every value of the seeds file this loop reads, with its shape.
SEEDS_SHAPE = Obj({
    "problem": Obj({"text": Str(PROBLEM, "a problem text (e.g. b4.h8.s512.d64.nc)"),
                    "head_dim": Int(null=False)}),
    "mode": Str(MODE, "a timing mode (hot, cold, batch)"),
    "seeds": Arr(Obj({
        "config": Obj({a: Int(null=False, minimum=0) for a in AXES}),
        "metrics": Obj({"median_us": Num(null=False, positive=True),
                        "ci_lo_us": Num(), "ci_hi_us": Num()}),
    }), nonempty=True),
})


def die(msg, code=1):
    say("evolve.py: " + msg, sys.stderr)  # escaped: it quotes paths and fasweep's stderr
    sys.exit(code)

def text_of(c, d):
    return "d%d.m%d.n%d.w%d.s%d.z%d" % (d, *(c[a] for a in AXES))

def parse(text):
    v = [int(p[1:]) for p in text.split(".")]
    return dict(zip(AXES, v[1:])), v[0]


def run(cmd):
    """subprocess.run of a fasweep command; a binary that cannot run stops
    the loop with one line (not a traceback)."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    except OSError as e:
        die("cannot run %s: %s (pass --fasweep PATH)" % (cmd[0], e.strerror), 2)


def accepted(fasweep, space, problem):
    """The configs the space accepts for the problem, and each axis's values."""
    p = run([fasweep, "plan", "--space", space, "--json"])
    if p.returncode != 0:
        die("fasweep plan failed: " + p.stderr.strip())
    try:
        points = [x for x in json.loads(p.stdout)["points"] if x["problem"] == problem]
        ok = [parse(x["config"])[0] for x in points if x["accepted"]]
    except (ValueError, RecursionError, KeyError, TypeError, AttributeError, IndexError):
        die("fasweep plan --json printed no plan this loop can read: %s"
            % (p.stdout.strip()[:200] or "nothing"))
    if not ok:
        die("space %s accepts no compiled config for %s (fasweep plan --space %s)"
            % (space, problem, space))
    axes = {a: sorted({c[a] for c in ok}) for a in AXES}
    return {tuple(c[a] for a in AXES) for c in ok}, axes, len(points)


def load_seeds(path):
    """The seeds document: a regular file (a FIFO is refused, never waited
    on) of at most 64 MiB, JSON without NaN or infinities, every value this
    loop reads of its shape (SEEDS_SHAPE), so a hand-edited or foreign file
    stops with one line naming it (exit 2), not a traceback or a hang."""
    try:
        data = read_regular(path, MAX_SEEDS, "the seeds file")
        if len(data) > MAX_SEEDS:
            raise BadInput("the seeds file %s is larger than 64 MiB" % path)
        doc = load_json(data, path, "the seeds file")
        if not isinstance(doc, dict) or doc.get("schema") != "fasweep.seeds/1":
            raise BadInput("%s is not a fasweep.seeds/1 file" % path)
        try:
            SEEDS_SHAPE(doc, "")
        except Invalid as e:
            raise BadInput("%s: %s%s (fasweep topk writes it)" % (path, e.where, e.what))
        if doc["problem"]["head_dim"] not in (64, 128):
            raise BadInput("%s: problem.head_dim %d is not 64 or 128"
                           % (path, doc["problem"]["head_dim"]))
    except BadInput as e:
        die(str(e), 2)
    return doc


def parse_target(text):
    """--target MEDIAN_US,CI_LO_US,CI_HI_US: three finite numbers, 0 <
    lo <= median <= hi; exit 2 otherwise."""
    try:
        t = tuple(float(x) for x in text.split(","))
    except ValueError:
        t = ()
    if len(t) != 3 or not all(math.isfinite(x) for x in t) or not 0 < t[1] <= t[0] <= t[2]:
        die("--target %s is not MEDIAN_US,CI_LO_US,CI_HI_US (three finite numbers, "
            "0 < CI_LO_US <= MEDIAN_US <= CI_HI_US)" % text, 2)
    return t


def result(r):
    """(median_us, ci_lo_us, ci_hi_us) of one eval --json line: a failed
    measurement (status not ok, no positive finite median, any number that
    is not finite) is (inf, None, None), never a time."""
    if not isinstance(r, dict) or r.get("status") != "ok" or nonfinite(r) or \
            not is_num(r.get("median_us")) or r["median_us"] <= 0:
        return (math.inf, None, None)
    lo, hi = r.get("ci_lo_us"), r.get("ci_hi_us")
    if not (is_num(lo) and is_num(hi) and 0 < lo <= hi):
        lo = hi = None
    return (float(r["median_us"]), lo, hi)


class Loop:
    def __init__(self, args, seeds):
        self.args, self.rng = args, random.Random(args.seed)
        self.problem, self.mode = seeds["problem"]["text"], seeds["mode"]
        self.d = seeds["problem"]["head_dim"]
        self.ok, self.axes, self.grid = accepted(args.fasweep, args.space, self.problem)
        self.seen = {}  # config tuple -> (median_us, ci_lo_us, ci_hi_us); inf when it failed
        self.evals = self.ref_runs = 0
        self.ref = None  # the target config, measured beside the candidates
        self.hit_by = None  # the first candidate that reached the target (tie)

    def measure(self, configs):
        """One head-to-head `fasweep eval` call for up to 8 configs, the
        target config among them when it is measured side by side."""
        batch = list(configs) + ([self.ref] if self.ref else [])
        texts = [text_of(dict(zip(AXES, c)), self.d) for c in batch]
        cmd = [self.args.fasweep, "eval", "--problem", self.problem, "--config", ",".join(texts),
               "--mode", self.mode, "--json", "--space", self.args.space]
        if self.args.store:
            cmd += ["--store", self.args.store]
        p = run(cmd)
        if p.returncode == 2:
            die("fasweep eval refused its arguments: " + p.stderr.strip())
        try:
            rows = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
        except (ValueError, RecursionError):
            die("fasweep eval printed a line that is not JSON: %s" % p.stderr.strip())
        if len(rows) != len(batch):
            die("fasweep eval gave %d results for %d configs: %s"
                % (len(rows), len(batch), p.stderr.strip()))
        got = [result(r) for r in rows]
        for c, m in zip(configs, got):
            self.seen[c] = m
            self.evals += 1
        if self.ref:
            self.ref_runs += 1
            ref = got[-1]
            for c, m in zip(configs, got):
                if self.hit_by is None and tie(m, ref):
                    self.hit_by = (c, self.evals - len(configs) + configs.index(c) + 1, m, ref)

    def child(self, pop):
        """Crossover of two parents, then one axis moved one step; None if
        no new accepted config turns up in a few tries."""
        for _ in range(50):
            a, b = self.rng.sample(pop, 2) if len(pop) > 1 else (pop[0], pop[0])
            c = [self.rng.choice((x, y)) for x, y in zip(a, b)]
            i = self.rng.randrange(len(AXES))
            vals = self.axes[AXES[i]]
            j = vals.index(c[i]) + self.rng.choice((-1, 1))
            if 0 <= j < len(vals):
                c[i] = vals[j]
            c = tuple(c)
            if c in self.ok and c not in self.seen:
                return c
        return None

    def best(self):
        return min(self.seen, key=lambda c: self.seen[c][0])

    def hit(self, target):
        if self.ref:
            return self.hit_by is not None
        return tie(self.seen[self.best()], target)


def tie(m, target):
    """Whether m (median, ci_lo, ci_hi) has reached the target: not slower,
    or slower by at most the combined half-width of the two 95 % intervals
    (record_tie, store/record.h: each half-width the side facing the other).
    Without intervals a slower median never counts: nothing says it is as
    fast."""
    if not (math.isfinite(m[0]) and math.isfinite(target[0])):
        return False  # a failed measurement reaches nothing, and nothing reaches it
    if m[0] <= target[0]:
        return True
    if None in (m[1], m[2], target[1], target[2]):
        return False
    return m[0] - target[0] <= math.hypot(m[0] - m[1], target[2] - target[0])


def main():
    # the first paragraph of the docstring, whole (never a sentence cut at a line end)
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("seeds", help="a seeds file written by fasweep topk")
    ap.add_argument("--space", required=True, help="the space whose accepted points are searched")
    ap.add_argument("--fasweep", default="build/fasweep")
    ap.add_argument("--store", help="where eval stores its records (fasweep's default otherwise)")
    ap.add_argument("--population", type=int, default=8)
    ap.add_argument("--children", type=int, default=7,
                    help="per generation, at most 8 (7 beside the target)")
    ap.add_argument("--generations", type=int, default=10)
    ap.add_argument("--budget", type=int, default=0, help="stop after this many evaluations")
    ap.add_argument("--skip-top", type=int, default=0, help="seed from the seeds after rank N")
    ap.add_argument("--target",
                    help="MEDIAN_US,CI_LO_US,CI_HI_US to reach (default: the seeds' rank 1)")
    ap.add_argument("--seed", type=int, default=1, help="random seed")
    args = ap.parse_args()
    if not 1 <= args.children <= (8 if args.target else 7) or args.population < 1:
        die("--children wants 1 to 7 (8 with --target) and --population at least 1", 2)
    seeds = load_seeds(args.seeds)
    top = seeds["seeds"][0]["metrics"]
    target = (parse_target(args.target) if args.target
              else (top["median_us"], top.get("ci_lo_us"), top.get("ci_hi_us")))
    loop = Loop(args, seeds)
    if not args.target:
        loop.ref = tuple(seeds["seeds"][0]["config"][a] for a in AXES)
    start = [tuple(s["config"][a] for a in AXES) for s in seeds["seeds"][args.skip_top:]]
    start = [c for i, c in enumerate(start) if c in loop.ok and c not in start[:i]]
    start = start[:args.children]
    if not start:
        die("no seed after rank %d is accepted by %s" % (args.skip_top, args.space))
    loop.measure(start)
    gen, reached = 0, None
    while True:
        best = loop.best()
        us = loop.seen[best][0]
        say("gen %d: %d evaluations, best %s %s (target %.3f us%s)" % (
            gen, loop.evals, text_of(dict(zip(AXES, best)), loop.d),
            "%.3f us" % us if math.isfinite(us) else "(no ok time yet)",
            target[0], ", re-measured beside them" if loop.ref else ""))
        if reached is None and loop.hit(target):
            reached = loop.hit_by[1] if loop.hit_by else loop.evals
            break
        gen += 1
        if gen > args.generations or (args.budget and loop.evals >= args.budget):
            break
        pop = sorted(loop.seen, key=lambda c: loop.seen[c][0])[:args.population]
        kids = []
        for _ in range(args.children):
            c = loop.child(pop)
            if c and c not in kids:
                kids.append(c)
        if not kids:
            say("no new accepted config near the population: stopping")
            break
        loop.measure(kids)
    best = loop.best()
    hit = loop.hit_by
    fin = lambda x: x if is_num(x) else None  # noqa: E731  (a failed time: null, never Infinity)
    print(dumps({"best": text_of(dict(zip(AXES, best)), loop.d),
                 "median_us": fin(loop.seen[best][0]), "ci_us": list(loop.seen[best][1:]),
                 "target_us": fin(target[0]), "evaluations": loop.evals,
                 "reached_by": text_of(dict(zip(AXES, hit[0])), loop.d) if hit else None,
                 "reached_us": [fin(hit[2][0]), fin(hit[3][0])] if hit else None,
                 "target_remeasured": loop.ref_runs,
                 "reached_at": reached, "grid_points": loop.grid, "accepted": len(loop.ok),
                 "generations": gen}), flush=True)
    return 0 if reached else 1


if __name__ == "__main__":
    sys.exit(main())
