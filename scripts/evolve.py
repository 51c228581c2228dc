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
"""
import argparse
import json
import math
import random
import subprocess
import sys

AXES = ["BLOCK_M", "BLOCK_N", "NUM_WARPS", "STAGES", "SWIZZLE"]


def die(msg):
    sys.exit("evolve.py: " + msg)

def text_of(c, d):
    return "d%d.m%d.n%d.w%d.s%d.z%d" % (d, *(c[a] for a in AXES))

def parse(text):
    v = [int(p[1:]) for p in text.split(".")]
    return dict(zip(AXES, v[1:])), v[0]


def run(cmd):
    """subprocess.run of a fasweep command; a binary that cannot run stops
    the loop with one line (not a traceback)."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        die("cannot run %s: %s (pass --fasweep PATH)" % (cmd[0], e.strerror))


def accepted(fasweep, space, problem):
    """The configs the space accepts for the problem, and each axis's values."""
    p = run([fasweep, "plan", "--space", space, "--json"])
    if p.returncode != 0:
        die("fasweep plan failed: " + p.stderr.strip())
    points = [x for x in json.loads(p.stdout)["points"] if x["problem"] == problem]
    ok = [parse(x["config"])[0] for x in points if x["accepted"]]
    if not ok:
        die("space %s accepts no compiled config for %s (fasweep plan --space %s)"
            % (space, problem, space))
    axes = {a: sorted({c[a] for c in ok}) for a in AXES}
    return {tuple(c[a] for a in AXES) for c in ok}, axes, len(points)


def load_seeds(path):
    """The seeds document, checked for every field this loop reads, so a
    hand-edited or foreign file stops with one line, not a traceback."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError, RecursionError) as e:
        # RecursionError: JSON nested deeper than Python's decoder goes.
        die("cannot read the seeds file %s: %s" % (path, str(e)[:200]))
    seeds = doc.get("seeds") if isinstance(doc, dict) else None
    if (not isinstance(doc, dict) or doc.get("schema") != "fasweep.seeds/1"
            or not isinstance(seeds, list) or not seeds):
        die("%s is not a fasweep.seeds/1 file with seeds" % path)
    prob = doc.get("problem")
    if (not isinstance(prob, dict) or not isinstance(prob.get("text"), str)
            or prob.get("head_dim") not in (64, 128) or not isinstance(doc.get("mode"), str)):
        die("%s has no problem.text, problem.head_dim (64 or 128) and mode "
            "(fasweep topk writes them)" % path)
    for i, s in enumerate(seeds):
        cfg = s.get("config") if isinstance(s, dict) else None
        met = s.get("metrics") if isinstance(s, dict) else None
        if (not isinstance(cfg, dict) or not isinstance(met, dict)
                or not all(type(cfg.get(a)) is int for a in AXES)
                or type(met.get("median_us")) not in (int, float)
                or not math.isfinite(met["median_us"]) or met["median_us"] <= 0):
            die("%s: seeds[%d] needs config.%s as integers and a finite metrics.median_us > 0"
                % (path, i, "/".join(AXES)))
    return doc


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
        rows = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
        if len(rows) != len(batch):
            die("fasweep eval gave %d results for %d configs: %s"
                % (len(rows), len(batch), p.stderr.strip()))
        got = [(r["median_us"], r.get("ci_lo_us"), r.get("ci_hi_us")) if r["status"] == "ok"
               else (math.inf, None, None) for r in rows]
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
    if m[0] <= target[0]:
        return True
    if None in (m[1], m[2], target[1], target[2]) or math.isinf(m[0]):
        return False
    return m[0] - target[0] <= math.hypot(m[0] - m[1], target[2] - target[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
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
        die("--children wants 1 to 7 (8 with --target) and --population at least 1")
    seeds = load_seeds(args.seeds)
    top = seeds["seeds"][0]["metrics"]
    target = (tuple(float(x) for x in args.target.split(",")) if args.target
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
        print("gen %d: %d evaluations, best %s %.3f us (target %.3f us%s)" % (
            gen, loop.evals, text_of(dict(zip(AXES, best)), loop.d), loop.seen[best][0],
            target[0], ", re-measured beside them" if loop.ref else ""), flush=True)
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
            print("no new accepted config near the population: stopping")
            break
        loop.measure(kids)
    best = loop.best()
    hit = loop.hit_by
    print(json.dumps({"best": text_of(dict(zip(AXES, best)), loop.d),
                      "median_us": loop.seen[best][0], "ci_us": list(loop.seen[best][1:]),
                      "target_us": target[0], "evaluations": loop.evals,
                      "reached_by": text_of(dict(zip(AXES, hit[0])), loop.d) if hit else None,
                      "reached_us": [hit[2][0], hit[3][0]] if hit else None,
                      "target_remeasured": loop.ref_runs,
                      "reached_at": reached, "grid_points": loop.grid, "accepted": len(loop.ok),
                      "generations": gen}))
    return 0 if reached else 1


if __name__ == "__main__":
    sys.exit(main())
