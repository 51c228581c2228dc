#!/usr/bin/env python3
"""evolve_code.py SEEDS.json --out DIR [options] - the EvoEngineer loop over
kernel SOURCE: Gen-0 from a `fasweep topk` seeds file, children from a
pluggable mutator command, every candidate gated, timed and stored by
`fasweep eval --kernel FILE.cuh --json`, its lineage in DIR/lineage.jsonl.

Gen-0: the seeds' first --population distinct configs, each with the kernel
source of the seed (a seed's `source` file when it has one, else its
provenance.kernel_source, else the template kernels/mma/flash_fwd.cuh),
copied into DIR/src/ and measured through `eval --kernel` like every child,
so the seeds' top-1 is re-measured on the same path as the candidates.

Then generations of --population children each until --trials children
(default 45) or --generations: each child's parent is the better of two
drawn from the population (a tournament), the mutator writes the child
source, and the child is measured at its parent's config. The population of
the next generation: the --elites fastest candidates seen so far, then the
fastest of this generation's children, then the next fastest seen.

The mutator is a command (--mutator, split like a shell line; default the
rule-based scripts/mutators/rules.py): the loop writes DIR/tasks/T.json
(schema fasweep.evolve-task/1: the parent's source path and results, the
task context, optimisation insights, the history of candidates, a per-trial
rng_seed) and runs `MUTATOR DIR/tasks/T.json DIR/src/T.cuh`; the child is
that file, and DIR/src/T.cuh.json may say what changed ({"mutation": ...}).

A candidate that does not compile, fails the gate, faults or hangs is a
result (eval's status and error in the journal) and the loop goes on.
Journal lines are written after each result; run again with the same DIR
and it resumes: journalled candidates are not repeated, a child source
already written is not asked for again, and a result already in the store
(`fasweep show` of its key) is not measured again. Same --seed (and the
same results) -> the same candidates.

Exit 0 after the summary; 1 when fasweep eval fails as a whole (no GPU);
2 on bad input (a seeds file of another schema, a missing source, a
mutator that fails or writes nothing or no kernel, DIR holding another
run), with one line naming the file. Python 3.11+, stdlib only.
"""
import argparse
import hashlib
import json
import os
import random
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also when loaded by path
from fnv1a import fnv1a64  # noqa: E402  (the hash of eval's build id src-HASH)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TEMPLATE = os.path.join(ROOT, "kernels", "mma", "flash_fwd.cuh")
DEFAULT_MUTATOR = "%s %s" % (shlex.quote(sys.executable),
                             shlex.quote(os.path.join(HERE, "mutators", "rules.py")))
JOURNAL = "lineage.jsonl"
# What eval --json prints beside the time (when it does): kept in the
# journal and shown to the mutator.
FIGURES = ("rounds", "rel_l2", "max_abs", "regs", "spill_bytes", "smem_bytes")
TASK_SCHEMA = "fasweep.evolve-task/1"
INSIGHTS = [
    "The kernel is issue-bound in the softmax (FP32 and MUFU pipes): fewer instructions per "
    "element of S matter more than memory traffic on short sequences.",
    "Q K^T and P V run on tensor cores through mma.sync.m16n8k16; ldmatrix feeds them; a "
    "partial unroll of a loop that indexes register arrays moves them to local memory.",
    "__launch_bounds__ min-blocks trades registers for occupancy: spills (local_bytes > 0) "
    "usually cost more than the occupancy gains.",
    "The correctness gate compares with an fp32 reference (rel_l2 and max_abs): the lazy "
    "softmax rescale is exact only while P stays well inside fp16 range.",
    "Keep the FA_INSTANCE macro, the flash_fwd_kernel template and its parameters: "
    "`fasweep eval --kernel` instantiates them for the config.",
]


class BadInput(Exception):
    """Bad input: one line naming the file, exit 2."""


def die(msg, code=2):
    print("evolve_code.py: " + msg, file=sys.stderr)
    sys.exit(code)


def sha256(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_kernel(path, what):
    """The text of a kernel source, checked as eval checks it (text with
    the FA_INSTANCE macro and flash_fwd_kernel). Raises BadInput."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise BadInput("%s %s cannot be read: %s" % (what, path, e.strerror))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput("%s %s is not UTF-8 text: not a kernel source" % (what, path))
    if "\0" in text or "FA_INSTANCE" not in text or "flash_fwd_kernel" not in text:
        raise BadInput("%s %s is not a kernel source (no FA_INSTANCE macro or flash_fwd_kernel;"
                       " an edited copy of kernels/mma/flash_fwd.cuh is expected)" % (what, path))
    return text


def load_seeds(path):
    """The seeds document (fasweep.seeds/1 with at least one seed)."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise BadInput("cannot read the seeds file %s: %s" % (path, e.strerror))
    except (ValueError, RecursionError) as e:
        # RecursionError: nested deeper than Python's JSON decoder goes.
        raise BadInput("the seeds file %s is not JSON: %s" % (path, str(e)[:200]))
    schema = doc.get("schema") if isinstance(doc, dict) else None
    if schema != "fasweep.seeds/1":
        hint = " (one group of `fasweep topk --json`: use a seeds/*.json file)" \
            if schema == "fasweep.topk/1" else ""
        raise BadInput("%s is not a fasweep.seeds/1 file (schema %s)%s"
                       % (path, json.dumps(schema), hint))
    seeds = doc.get("seeds")
    if not isinstance(seeds, list) or not seeds or not all(
            isinstance(s, dict) and isinstance(s.get("config_text"), str) for s in seeds):
        raise BadInput("%s holds no seeds with a config_text (fasweep topk writes them)" % path)
    if not isinstance(doc.get("problem"), dict) or not doc["problem"].get("text"):
        raise BadInput("%s has no problem.text" % path)
    return doc


def seed_source(seed, seeds_path):
    """Where a seed's kernel source is: its `source` (topk --emit-source),
    else its provenance.kernel_source (relative to the repository or the
    seeds file), else the template."""
    src = seed.get("source")
    if isinstance(src, dict):
        src = src.get("path")
    if not src:
        src = (seed.get("provenance") or {}).get("kernel_source") or TEMPLATE
    if os.path.isabs(src):
        return src
    for base in (os.path.dirname(os.path.abspath(seeds_path)), ROOT, os.getcwd()):
        if os.path.exists(os.path.join(base, src)):
            return os.path.join(base, src)
    return os.path.join(ROOT, src)


def interval(d):
    """(ci_lo_us, ci_hi_us) of an eval line or a record, or None."""
    for o in (d, d.get("time") or {}, d.get("interval") or {}, d.get("metrics") or {}):
        lo, hi = o.get("ci_lo_us"), o.get("ci_hi_us")
        if isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and 0 < lo <= hi:
            return [float(lo), float(hi)]
    return None


class Run:
    def __init__(self, a, seeds):
        self.a, self.seeds = a, seeds
        self.problem = seeds["problem"]["text"]
        self.mode = seeds.get("mode") or "hot"
        self.device = seeds.get("device") or ""
        self.out = os.path.abspath(a.out)
        self.journal = os.path.join(self.out, JOURNAL)
        self.cands = {}  # id -> journal entry, in order
        self.pending = set()  # ids whose eval began but whose result was not journalled
        self.store = os.path.abspath(a.store) if a.store else None

    # ---- the journal ---------------------------------------------------------------------------

    def header(self):
        return {"event": "run", "seeds_sha256": sha256(open(self.a.seeds, encoding="utf-8").read()),
                "problem": self.problem, "mode": self.mode, "seed": self.a.seed,
                "population": self.a.population, "elites": self.a.elites,
                "mutator": "rules.py (default)" if self.a.mutator == DEFAULT_MUTATOR
                else self.a.mutator}

    def open_journal(self):
        """Reads DIR/lineage.jsonl (a resume) or starts it. A run with
        other options in DIR is refused: its candidates would mix."""
        for d in ("src", "tasks"):
            os.makedirs(os.path.join(self.out, d), exist_ok=True)
        head = self.header()
        if not os.path.exists(self.journal):
            self.append(head)
            return
        with open(self.journal, encoding="utf-8") as f:
            lines = f.read().splitlines()
        rows = []
        for n, line in enumerate(lines, 1):
            try:
                rows.append(json.loads(line))
            except ValueError:
                if n == len(lines):  # a line cut by an interruption: dropped
                    break
                raise BadInput("%s line %d is not JSON; move the folder away to start afresh"
                               % (self.journal, n))
        if not rows or rows[0].get("event") != "run":
            raise BadInput("%s is not an evolve_code.py journal" % self.journal)
        if rows[0] != head:
            diff = sorted(k for k in head if rows[0].get(k) != head[k])
            raise BadInput("%s holds a run with other options (%s); use another --out"
                           % (self.journal, ", ".join(diff)))
        for r in rows[1:]:
            if r.get("event") == "candidate":
                self.cands[r["id"]] = r
                self.pending.discard(r["id"])
                if r.get("key"):  # the device eval named
                    self.device = r["key"].split("|")[0]
            elif r.get("event") == "pending":
                self.pending.add(r["id"])
        with open(self.journal, "w", encoding="utf-8") as f:  # drop a cut last line
            f.write("".join(json.dumps(r) + "\n" for r in rows))

    def append(self, row):
        with open(self.journal, "a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
            f.flush()
            os.fsync(f.fileno())

    # ---- measuring -----------------------------------------------------------------------------

    def fasweep(self, *args, timeout=None):
        cmd = [self.a.fasweep, *args]
        if self.store:
            cmd += ["--store", self.store]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)

    def key(self, build, config, device=None):
        return "|".join((device or self.device, self.problem, build, config, self.mode))

    def from_store(self, build, config):
        """The stored record of a candidate measured before an interruption
        (its eval stored it, the journal line was not written), or None."""
        if not self.device:
            return None
        try:
            p = self.fasweep("show", self.key(build, config), timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if p.returncode != 0:
            return None
        try:
            r = json.loads(p.stdout)
        except ValueError:
            return None
        t = r.get("time") or {}
        return {"status": r.get("status"), "median_us": t.get("median_us"),
                "noise": t.get("noise"), "interval": interval(r), "error": r.get("error", ""),
                "speedup_vs_baseline": None, "device": (r.get("key") or {}).get("device"),
                "from_store": True}

    def evaluate(self, path, config):
        """One candidate through `fasweep eval --kernel`: its result, a
        failure being a result. Exits when eval refuses its arguments or
        fails as a whole."""
        args = ["eval", "--problem", self.problem, "--config", config, "--mode", self.mode,
                "--kernel", path, "--json"]
        if self.a.space:
            args += ["--space", self.a.space]
        try:
            p = self.fasweep(*args, timeout=self.a.eval_timeout)
        except subprocess.TimeoutExpired:
            return {"status": "timeout", "median_us": None, "noise": None, "interval": None,
                    "error": "fasweep eval did not answer within %d s (--eval-timeout)"
                    % self.a.eval_timeout, "speedup_vs_baseline": None}
        except OSError as e:
            die("cannot run %s: %s (--fasweep)" % (self.a.fasweep, e.strerror), 2)
        rows = []
        for line in p.stdout.splitlines():
            if line.startswith("{"):
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    pass
        if p.returncode == 2:
            die("fasweep eval refused %s: %s" % (path, p.stderr.strip().splitlines()[-1:]), 2)
        if not rows:
            err = (p.stderr.strip().splitlines() or ["no output"])[-1]
            die("fasweep eval gave no result for %s (exit %d): %s" % (path, p.returncode, err), 1)
        r = rows[-1]
        res = {"status": r.get("status"), "median_us": r.get("median_us"), "noise": r.get("noise"),
               "interval": interval(r), "error": r.get("error") or "",
               "speedup_vs_baseline": r.get("speedup_vs_baseline"),
               "device": r.get("device"), "build": r.get("build")}
        res.update({k: r[k] for k in FIGURES if k in r})
        return res

    def measure(self, cid, gen, parent, mutator, mutation, path, config):
        """Measures (or finds in the store) the candidate at path and
        journals it. Returns its journal entry."""
        text = read_kernel(path, "the candidate source")
        build = "src-" + fnv1a64(text.encode("utf-8"))
        res = self.from_store(build, config) if cid in self.pending else None
        if res is None:
            self.append({"event": "pending", "id": cid, "build": build, "config": config})
            res = self.evaluate(path, config)
        if res.get("device"):
            self.device = res["device"]
        if res["status"] == "ok" and not res.get("interval"):
            # eval --json may not print the interval; the stored record has it
            rec = self.from_store(build, config)
            if rec and rec.get("interval"):
                res["interval"] = rec["interval"]
        row = {"event": "candidate", "id": cid, "generation": gen, "parent": parent,
               "mutator": mutator, "mutation": mutation, "source": path, "sha256": sha256(text),
               "src_hash": build[4:], "build": res.get("build") or build, "config": config,
               "key": self.key(build, config) if self.device else None}
        row.update({k: v for k, v in res.items() if k not in ("device", "build")})
        self.append(row)
        self.cands[cid] = row
        self.say(row)
        return row

    def say(self, r):
        if r["status"] == "ok":
            ci = r.get("interval")
            what = "ok %.3f us %s" % (r["median_us"], "[%.3f, %.3f]" % tuple(ci) if ci
                                      else "(no interval)")
        else:
            what = "%s: %s" % (r["status"], " ".join((r.get("error") or "").splitlines()[:1]))
        if r.get("duplicate_of"):
            what += " (the same source as %s: not measured again)" % r["duplicate_of"]
        print("%s gen %d %s%s: %s" % (r["id"], r["generation"], r["mutator"],
                                      " (%s)" % r["mutation"] if r.get("mutation") else "", what),
              flush=True)

    # ---- the loop ------------------------------------------------------------------------------

    def gen0(self):
        """The seeds' first --population distinct configs, each with its
        seed's source copied into DIR/src."""
        out, seen = [], set()
        for i, s in enumerate(self.seeds["seeds"]):
            if len(out) == self.a.population:
                break
            if s["config_text"] in seen:
                continue
            seen.add(s["config_text"])
            cid = "g0-%d" % len(out)
            if cid not in self.cands:
                src = seed_source(s, self.a.seeds)
                text = read_kernel(src, "the source of seed rank %s" % s.get("rank", i + 1))
                dst = os.path.join(self.out, "src", cid + ".cuh")
                with open(dst, "w", encoding="utf-8") as f:
                    f.write(text)
                self.measure(cid, 0, None, "seed", "rank %s of %s" % (s.get("rank", i + 1),
                             os.path.basename(self.a.seeds)), dst, s["config_text"])
            out.append(cid)
        return out

    def rank(self, ids):
        ok = [c for c in ids if self.cands[c]["status"] == "ok"
              and isinstance(self.cands[c]["median_us"], (int, float))]
        return sorted(ok, key=lambda c: (self.cands[c]["median_us"], c))

    def next_population(self, kids, gen):
        """Only candidates up to this generation count, so a resumed run
        (whose journal holds later ones) draws the same parents."""
        everyone = self.rank([c for c in self.cands if self.cands[c]["generation"] <= gen])
        pop = everyone[:self.a.elites]
        for c in self.rank(kids) + everyone:
            if len(pop) == self.a.population:
                break
            if c not in pop:
                pop.append(c)
        return pop

    def task(self, trial, gen, parent, rng_seed, tmp, out):
        p = self.cands[parent]
        keys = ("id", "generation", "parent", "mutator", "mutation", "source", "sha256",
                "config", "status", "median_us", "noise", "interval", "error",
                "speedup_vs_baseline") + FIGURES
        hist = [{k: c.get(k) for k in keys} for c in self.cands.values()]
        return {
            "schema": TASK_SCHEMA, "trial": trial, "generation": gen, "rng_seed": rng_seed,
            "output": tmp,
            "parent": {k: p.get(k) for k in ("id", "source", "sha256", "config", "status",
                                              "median_us", "noise", "interval", "error",
                                              "speedup_vs_baseline", "mutation") + FIGURES},
            "context": {
                "kernel": "FlashAttention forward, fp16 in/out, fp32 accumulation, "
                          "mma.sync.m16n8k16 tensor cores (kernels/mma/flash_fwd.cuh)",
                "device": self.device, "problem": self.seeds["problem"], "mode": self.mode,
                "config": p["config"],
                "objective": "lower median_us of `fasweep eval --kernel`, gated against the "
                             "fp32 reference (status ok)",
                "eval": [self.a.fasweep, "eval", "--problem", self.problem, "--config",
                         p["config"], "--mode", self.mode, "--kernel", out, "--json"],
                "baseline": self.seeds.get("baseline"),
                "seeds_top1": {"config": self.seeds["seeds"][0]["config_text"],
                               "median_us": (self.seeds["seeds"][0].get("metrics") or {})
                               .get("median_us")},
            },
            "insights": INSIGHTS + self.learned(),
            "history": hist,
        }

    def learned(self):
        """Insights from the history: what each mutation did to its parent."""
        out = []
        for c in self.cands.values():
            par = self.cands.get(c.get("parent") or "")
            if not par or not c.get("mutation"):
                continue
            if c["status"] != "ok":
                out.append("%s (%s) gave %s" % (c["mutation"], c["id"], c["status"]))
            elif par["status"] == "ok" and par["median_us"]:
                spills = " (%d bytes of spills)" % c["spill_bytes"] if c.get("spill_bytes") else ""
                out.append("%s (%s) changed the time by %+.1f %% (%.3f -> %.3f us)%s"
                           % (c["mutation"], c["id"],
                              100 * (c["median_us"] / par["median_us"] - 1), par["median_us"],
                              c["median_us"], spills))
        return out[-20:]

    def child(self, trial, gen, pop):
        cid = "t%d" % trial
        if cid in self.cands:
            return cid
        rng = random.Random("%d:%d" % (self.a.seed, trial))
        a, b = rng.choice(pop), rng.choice(pop)
        parent = min(a, b, key=lambda c: (self.cands[c]["median_us"], c))
        out = os.path.join(self.out, "src", cid + ".cuh")
        meta = out + ".json"
        if not os.path.exists(out):  # written before an interruption: not asked for again
            task_path = os.path.join(self.out, "tasks", cid + ".json")
            tmp = out + ".part"
            with open(task_path, "w", encoding="utf-8") as f:
                json.dump(self.task(trial, gen, parent, rng.randrange(1 << 31), tmp, out), f,
                          indent=1)
            for stale in (tmp, tmp + ".json", meta):
                if os.path.exists(stale):
                    os.remove(stale)
            try:
                p = subprocess.run(shlex.split(self.a.mutator) + [task_path, tmp],
                                   capture_output=True, text=True, timeout=self.a.mutator_timeout)
            except subprocess.TimeoutExpired:
                raise BadInput("the mutator did not write %s within %d s (--mutator-timeout)"
                               % (tmp, self.a.mutator_timeout))
            except OSError as e:
                raise BadInput("cannot run the mutator %s: %s" % (self.a.mutator, e.strerror))
            if p.returncode != 0:
                raise BadInput("the mutator failed on %s (exit %d): %s" % (
                    task_path, p.returncode, (p.stderr.strip().splitlines() or [""])[-1]))
            if not os.path.exists(tmp) or os.path.getsize(tmp) == 0:
                raise BadInput("the mutator wrote nothing to %s (task %s)" % (tmp, task_path))
            read_kernel(tmp, "the mutator's output")
            if os.path.exists(tmp + ".json"):
                os.replace(tmp + ".json", meta)
            os.replace(tmp, out)
        mutation = ""
        try:
            with open(meta, encoding="utf-8") as f:
                mutation = str(json.load(f).get("mutation", ""))[:200]
        except (OSError, ValueError, AttributeError):
            pass
        config = self.cands[parent]["config"]
        if not self.duplicate(cid, gen, parent, mutation, out, config):
            self.measure(cid, gen, parent, self.mutator_name(), mutation, out, config)
        return cid

    def duplicate(self, cid, gen, parent, mutation, path, config):
        """A child whose source and config are an earlier candidate's is not
        measured again: it is journalled with that one's results
        (duplicate_of). Returns 1 when it was one."""
        sha = sha256(read_kernel(path, "the candidate source"))
        old = next((c for c in self.cands.values()
                    if c["sha256"] == sha and c["config"] == config), None)
        if old is None:
            return 0
        row = dict(old, id=cid, generation=gen, parent=parent, mutator=self.mutator_name(),
                   mutation=mutation, source=path, duplicate_of=old["id"])
        self.append(row)
        self.cands[cid] = row
        self.say(row)
        return 1

    def mutator_name(self):
        words = shlex.split(self.a.mutator) or ["mutator"]
        scripts = [os.path.basename(w) for w in words if w.endswith(".py")]
        return scripts[0] if scripts else os.path.basename(words[0])

    def loop(self):
        pop = self.rank(self.gen0())
        if not pop:
            die("no seed source passed the gate in generation 0 (see %s)" % self.journal, 1)
        trial, gen = 0, 0
        while trial < self.a.trials and gen < self.a.generations:
            gen += 1
            kids = []
            for _ in range(self.a.population):
                if trial == self.a.trials:
                    break
                trial += 1
                kids.append(self.child(trial, gen, pop))
            pop = self.next_population(kids, gen)
        return self.summary(trial, gen)

    # ---- the summary ---------------------------------------------------------------------------

    def summary(self, trials, gens):
        kids = [c for c in self.cands.values() if c["generation"] > 0]
        ok_kids = [c for c in kids if c["status"] == "ok"]
        best = self.cands[self.rank(list(self.cands))[0]]
        top1 = self.cands["g0-0"]
        seed1 = self.seeds["seeds"][0]
        stored_top1 = (seed1.get("metrics") or {}).get("median_us")
        base = self.baseline(best)
        statuses = {}
        for c in kids:
            statuses[c["status"]] = statuses.get(c["status"], 0) + 1
        return {
            "best": self.brief(best),
            "best_source": best["source"],
            "vs_top1": dict(ratio(top1, best), top1=self.brief(top1),
                            top1_stored_us=stored_top1,
                            top1_stored_interval=interval(seed1)),
            "vs_baseline": dict(ratio(base, best), baseline=base) if base else
            {"speedup": None, "note": "no SDPA baseline in the seeds file or eval's output"},
            "validity": {"valid": len(ok_kids), "candidates": len(kids),
                         "rate": round(len(ok_kids) / len(kids), 4) if kids else None,
                         "statuses": statuses},
            "trials": trials, "generations": gens, "journal": self.journal,
        }

    def brief(self, c):
        return {"id": c["id"], "config": c["config"], "status": c["status"],
                "median_us": c["median_us"], "interval": c.get("interval") or "no interval",
                "generation": c["generation"], "mutation": c.get("mutation"),
                "source": c["source"], "key": c.get("key")}

    def baseline(self, best):
        """The best SDPA baseline: the seeds file's, else from eval's
        speedup_vs_baseline of the best candidate."""
        b = self.seeds.get("baseline")
        if isinstance(b, dict) and isinstance(b.get("median_us"), (int, float)):
            return {"name": b.get("name"), "median_us": b["median_us"], "interval": interval(b),
                    "from": "seeds file"}
        sp = best.get("speedup_vs_baseline")
        if isinstance(sp, (int, float)) and sp > 0:
            return {"name": None, "median_us": best["median_us"] * sp, "interval": None,
                    "from": "eval speedup_vs_baseline"}
        return None


def ratio(ref, best):
    """ref's time over best's (>1: best is faster), with the interval of
    the ratio from both 95 % intervals when both have one."""
    r_us, b_us = ref.get("median_us"), best.get("median_us")
    if not r_us or not b_us:
        return {"speedup": None, "interval": "no interval"}
    ri, bi = ref.get("interval"), best.get("interval")
    out = {"speedup": round(r_us / b_us, 4), "interval": "no interval"}
    if ri and bi:
        out["interval"] = [round(ri[0] / bi[1], 4), round(ri[1] / bi[0], 4)]
    elif bi:  # a baseline without one: the candidate's interval alone
        out["interval"] = [round(r_us / bi[1], 4), round(r_us / bi[0], 4)]
        out["interval_note"] = "from the candidate's interval only (the reference has none)"
    return out


def print_summary(s):
    def us(c):
        iv = c["interval"]
        if c["median_us"] is None:
            return c["status"]
        return "%.3f us %s" % (c["median_us"], "[%.3f, %.3f]" % tuple(iv)
                               if isinstance(iv, list) else "(no interval)")

    def x(v):
        iv = v["interval"]
        if v["speedup"] is None:
            return "no comparison (no ok time)"
        return "%.3fx %s" % (v["speedup"], "[%.3f, %.3f]" % tuple(iv)
                             if isinstance(iv, list) else "(no interval)")

    b = s["best"]
    print("best: %s %s at %s, %s" % (b["id"], b["mutation"] or "", b["config"], us(b)))
    t = s["vs_top1"]
    print("vs the seeds' top-1 (%s, re-measured %s; stored %s us): %s" % (
        t["top1"]["config"], us(t["top1"]), t["top1_stored_us"], x(t)))
    v = s["vs_baseline"]
    if v["speedup"] is None:
        print("vs SDPA: %s" % v.get("note", "no baseline time"))
    else:
        print("vs %s (%.3f us, %s): %s" % (v["baseline"]["name"] or "the best baseline",
                                           v["baseline"]["median_us"], v["baseline"]["from"], x(v)))
    va = s["validity"]
    print("code validity: %d of %d candidates compiled and passed the gate (%s)" % (
        va["valid"], va["candidates"], "%.1f %%" % (100 * va["rate"]) if va["rate"] is not None
        else "none"))
    print("best source: %s" % s["best_source"])
    print(json.dumps(s))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("seeds", help="a seeds file written by fasweep topk (fasweep.seeds/1)")
    ap.add_argument("--out", required=True, help="the run's folder: journal, sources, tasks")
    ap.add_argument("--fasweep", default=os.path.join(ROOT, "build", "fasweep"))
    ap.add_argument("--store", help="where eval stores its records (fasweep's default otherwise)")
    ap.add_argument("--space", help="eval's measurement settings and tolerances")
    ap.add_argument("--mutator", default=DEFAULT_MUTATOR,
                    help="command run as MUTATOR TASK.json OUT.cuh (default: rules.py)")
    ap.add_argument("--population", type=int, default=5)
    ap.add_argument("--elites", type=int, help="kept every generation (default 2, at most "
                    "--population)")
    ap.add_argument("--trials", type=int, default=45, help="children to measure")
    ap.add_argument("--generations", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--eval-timeout", type=int, default=600, help="seconds per eval call")
    ap.add_argument("--mutator-timeout", type=int, default=600)
    a = ap.parse_args()
    if a.elites is None:
        a.elites = min(2, a.population)
    if a.population < 1 or not 0 <= a.elites <= a.population or a.trials < 0 \
            or a.generations < 0:
        ap.error("--population >= 1, 0 <= --elites <= --population, --trials and "
                 "--generations >= 0")
    try:
        run = Run(a, load_seeds(a.seeds))
        run.open_journal()
        s = run.loop()
    except BadInput as e:
        die(str(e), 2)
    print_summary(s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
