#!/usr/bin/env python3
"""Tests of scripts/evolve_code.py and its mutators against a stand-in
fasweep (fake_fasweep.py: results from the source text; no GPU, no build).
Run from the repository root: python3 tests/evolve/test_evolve.py."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "tests", "evolve")
LOOP = os.path.join(ROOT, "scripts", "evolve_code.py")
RULES = os.path.join(ROOT, "scripts", "mutators", "rules.py")
LLM = os.path.join(ROOT, "scripts", "mutators", "llm_prompt.py")
FAKE = os.path.join(HERE, "fake_fasweep.py")
TEMPLATE = os.path.join(ROOT, "kernels", "mma", "flash_fwd.cuh")
CONFIGS = ["d64.m64.n128.w4.s3.z1", "d64.m64.n64.w4.s2.z1", "d64.m128.n64.w8.s2.z1",
           "d64.m64.n128.w4.s1.z1", "d64.m128.n128.w8.s3.z1", "d64.m64.n64.w4.s3.z1"]

# A mutator for the tests: the parent plus a comment naming the trial, and
# on the trials MARKS names (TRIAL:MARKER,...) a marker the stand-in reads;
# it keeps each task it got in TASK_LOG (a folder).
MARKER_MUTATOR = r"""#!/usr/bin/env python3
import json, os, shutil, sys
task = json.load(open(sys.argv[1]))
if os.environ.get("TASK_LOG"):
    shutil.copy(sys.argv[1], os.path.join(os.environ["TASK_LOG"], "%d.json" % task["trial"]))
marks = dict(m.split(":") for m in os.environ.get("MARKS", "").split(",") if m)
src = open(task["parent"]["source"]).read()
if marks.get(str(task["trial"])) != "COPY":  # COPY: the parent unchanged
    src += "// trial %d\n" % task["trial"]
if str(task["trial"]) in marks and marks[str(task["trial"])] != "COPY":
    src += "// %s\n" % marks[str(task["trial"])]
open(sys.argv[2], "w").write(src)
json.dump({"mutation": "comment %d" % task["trial"]}, open(sys.argv[2] + ".json", "w"))
"""


def seeds_doc(n=6):
    return {"schema": "fasweep.seeds/1", "device": "Fake GPU", "mode": "batch",
            "problem": {"text": "b4.h8.s512.d64.nc", "head_dim": 64},
            "baseline": {"name": "sdpa-flash", "median_us": 12.0},
            "seeds": [{"rank": i + 1, "config_text": c,
                       "metrics": {"median_us": 10 + i / 10, "noise": 0.001},
                       "provenance": {"kernel_source": "kernels/mma/flash_fwd.cuh"}}
                      for i, c in enumerate(CONFIGS[:n])]}


def journal(out):
    with open(os.path.join(out, "lineage.jsonl")) as f:
        return [json.loads(l) for l in f]


def cands(out):
    return [r for r in journal(out) if r["event"] == "candidate"]


class Base(unittest.TestCase):
    def setUp(self):
        self.t = tempfile.mkdtemp(prefix="evolve-test-")
        self.seeds = self.write("seeds.json", json.dumps(seeds_doc()))
        self.store = os.path.join(self.t, "store.json")
        self.log = os.path.join(self.t, "eval.log")
        self.mut = self.write("marker_mutator.py", MARKER_MUTATOR)
        os.chmod(self.mut, 0o755)

    def tearDown(self):
        shutil.rmtree(self.t)

    def write(self, name, text):
        path = os.path.join(self.t, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def loop(self, out="run", *extra, env=None, seeds=None):
        cmd = [sys.executable, LOOP, seeds or self.seeds, "--out", os.path.join(self.t, out),
               "--fasweep", FAKE, "--store", self.store, *extra]
        e = dict(os.environ, EVAL_LOG=self.log, **(env or {}))
        return subprocess.run(cmd, capture_output=True, text=True, env=e, cwd=ROOT)

    def summary(self, p):
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return json.loads(p.stdout.strip().splitlines()[-1])

    def evals(self):
        with open(self.log) as f:
            return [l.split() for l in f]

    def store_keys(self):
        with open(self.store) as f:
            return set(json.load(f))


class Loop(Base):
    def test_defaults_run_45_trials_and_summarise(self):
        s = self.summary(self.loop())
        out = os.path.join(self.t, "run")
        c = cands(out)
        self.assertEqual(s["trials"], 45)
        self.assertEqual(len(c), 5 + 45)  # gen-0: population 5, then 45 children
        self.assertEqual([r["config"] for r in c[:5]], CONFIGS[:5])
        self.assertEqual(s["generations"], 9)
        # every candidate measured once, through eval, and stored
        self.assertEqual(len(self.evals()), 50)
        self.assertEqual({r["key"] for r in c}, self.store_keys())
        for r in c[5:]:
            self.assertTrue(r["parent"] in {x["id"] for x in c})
            self.assertEqual(r["mutator"], "rules.py")
            self.assertEqual(r["generation"], (int(r["id"][1:]) - 1) // 5 + 1)
            self.assertEqual(r["config"], next(x for x in c if x["id"] == r["parent"])["config"])
            with open(r["source"]) as f:
                self.assertEqual(hashlib.sha256(f.read().encode()).hexdigest(), r["sha256"])
            self.assertTrue(r["key"].startswith("Fake GPU|b4.h8.s512.d64.nc|src-" + r["src_hash"]))
        best = min((r for r in c if r["status"] == "ok"), key=lambda r: r["median_us"])
        self.assertEqual(s["best"]["id"], best["id"])
        self.assertEqual(s["best_source"], best["source"])
        top1 = c[0]
        self.assertEqual(s["vs_top1"]["top1"]["id"], "g0-0")
        self.assertAlmostEqual(s["vs_top1"]["speedup"], top1["median_us"] / best["median_us"],
                               places=3)
        lo, hi = s["vs_top1"]["interval"]
        self.assertLessEqual(lo, s["vs_top1"]["speedup"])
        self.assertGreaterEqual(hi, s["vs_top1"]["speedup"])
        self.assertAlmostEqual(s["vs_baseline"]["speedup"], 12.0 / best["median_us"], places=3)
        self.assertEqual(s["validity"], {"valid": 45, "candidates": 45, "rate": 1.0,
                                         "statuses": {"ok": 45}})
        text = self.loop().stdout  # (a resume of a finished run: nothing new)
        self.assertIn("vs the seeds' top-1", text)
        self.assertIn("code validity: 45 of 45", text)
        self.assertEqual(len(self.evals()), 50)

    def test_same_seed_same_candidates_other_seed_others(self):
        self.summary(self.loop("a", "--seed", "7", "--trials", "12"))
        self.summary(self.loop("b", "--seed", "7", "--trials", "12"))
        self.summary(self.loop("c", "--seed", "8", "--trials", "12"))
        a, b, c = (cands(os.path.join(self.t, d)) for d in "abc")
        fields = lambda rows: [(r["id"], r["parent"], r["sha256"], r["mutation"], r["median_us"])
                               for r in rows]
        self.assertEqual(fields(a), fields(b))
        self.assertNotEqual(fields(a), fields(c))

    def test_compile_error_and_failing_gate_are_results(self):
        marks = {"MARKS": "2:EVOLVE_COMPILE_ERROR,3:EVOLVE_WRONG,4:EVOLVE_CRASH"}
        s = self.summary(self.loop("run", "--mutator", self.mut, "--trials", "7", env=marks))
        c = {r["id"]: r for r in cands(os.path.join(self.t, "run"))}
        self.assertEqual(c["t2"]["status"], "compile_error")
        self.assertRegex(c["t2"]["error"], r"t2\.cuh\(\d+\): error")
        self.assertEqual(c["t3"]["status"], "wrong")
        self.assertIn("rel_l2", c["t3"]["error"])
        self.assertEqual(c["t4"]["status"], "crashed")
        self.assertEqual(len([k for k in c if k.startswith("t")]), 7)  # the loop went on
        self.assertEqual(s["validity"]["valid"], 4)
        self.assertEqual(s["validity"]["candidates"], 7)
        self.assertEqual(s["validity"]["statuses"],
                         {"ok": 4, "compile_error": 1, "wrong": 1, "crashed": 1})
        self.assertNotIn(s["best"]["id"], ("t2", "t3", "t4"))
        # a failed child is never a parent
        self.assertFalse({"t2", "t3", "t4"} & {r["parent"] for r in c.values()})

    def test_a_child_equal_to_an_earlier_candidate_is_not_measured_again(self):
        self.summary(self.loop("run", "--mutator", self.mut, "--trials", "2",
                               env={"MARKS": "1:COPY"}))
        c = {r["id"]: r for r in cands(os.path.join(self.t, "run"))}
        self.assertEqual(c["t1"]["duplicate_of"], c["t1"]["parent"])
        self.assertEqual(c["t1"]["median_us"], c[c["t1"]["parent"]]["median_us"])
        self.assertEqual(len(self.evals()), 5 + 1)

    def test_a_hang_is_a_timeout_and_the_loop_goes_on(self):
        marks = {"MARKS": "1:EVOLVE_HANG"}
        s = self.summary(self.loop("run", "--mutator", self.mut, "--trials", "2",
                                   "--eval-timeout", "1", env=marks))
        c = {r["id"]: r for r in cands(os.path.join(self.t, "run"))}
        self.assertEqual(c["t1"]["status"], "timeout")
        self.assertEqual(c["t2"]["status"], "ok")
        self.assertEqual(s["validity"]["statuses"], {"timeout": 1, "ok": 1})

    def test_interrupted_run_resumes_repeating_nothing(self):
        full = self.summary(self.loop("full", "--trials", "15"))
        os.remove(self.log)
        os.remove(self.store)
        # the 19th eval (trial 14, generation 3 of 5 children) stores its
        # record, then the loop is killed before it journals it; on resume the
        # population of generation 3 must not count t11..t13
        env = {"FAKE_KILL_AFTER": "19", "FAKE_COUNTER": os.path.join(self.t, "n")}
        p = self.loop("run", "--trials", "15", env=env)
        self.assertNotEqual(p.returncode, 0)
        out = os.path.join(self.t, "run")
        self.assertEqual(len(cands(out)), 18)
        self.assertEqual(journal(out)[-1]["event"], "pending")
        self.assertTrue(os.path.exists(os.path.join(out, "src", "t14.cuh")))
        t14_task = os.stat(os.path.join(out, "tasks", "t14.json")).st_mtime_ns
        s = self.summary(self.loop("run", "--trials", "15"))
        shas = [l[1] + l[0] for l in self.evals()]
        self.assertEqual(len(shas), len(set(shas)))  # nothing measured twice
        self.assertEqual(len(shas), 5 + 15)
        t14 = next(r for r in cands(out) if r["id"] == "t14")
        self.assertTrue(t14["from_store"])  # read back from the store, not re-measured
        # the mutator was not asked for t14 again (its task file is the old one)
        self.assertEqual(os.stat(os.path.join(out, "tasks", "t14.json")).st_mtime_ns, t14_task)
        # the same candidates as the run that was never interrupted
        key = lambda s: (s["best"]["id"], s["best"]["median_us"], s["trials"])
        self.assertEqual(key(s), key(full))
        fields = lambda rows: [(r["id"], r["parent"], r["sha256"]) for r in rows]
        self.assertEqual(fields(cands(out)), fields(cands(os.path.join(self.t, "full"))))
        # and a second resume of the finished run changes nothing
        before = journal(out)
        self.summary(self.loop("run", "--trials", "15"))
        self.assertEqual(journal(out), before)
        # more --trials extend it as a longer run would have gone
        self.summary(self.loop("run", "--trials", "20"))
        self.summary(self.loop("full20", "--trials", "20"))
        self.assertEqual(fields(cands(out)), fields(cands(os.path.join(self.t, "full20"))))

    def test_intervals_from_the_store_and_baseline_from_eval(self):
        """eval --json without ci fields: the interval comes from the stored
        record; a seeds file without a baseline: eval's speedup_vs_baseline."""
        doc = seeds_doc()
        doc["baseline"] = None
        f = self.write("nobase.json", json.dumps(doc))
        s = self.summary(self.loop("run", "--trials", "3", seeds=f,
                                   env={"FAKE_NO_CI": "1", "FAKE_BASELINE_US": "13"}))
        for r in cands(os.path.join(self.t, "run")):
            lo, hi = r["interval"]
            self.assertLess(lo, r["median_us"])
            self.assertGreater(hi, r["median_us"])
        v = s["vs_baseline"]
        self.assertEqual(v["baseline"]["from"], "eval speedup_vs_baseline")
        self.assertAlmostEqual(v["speedup"], 13 / s["best"]["median_us"], places=3)
        self.assertIn("candidate's interval only", v["interval_note"])
        # nothing to compare with: said so
        s = self.summary(self.loop("run2", "--trials", "1", seeds=f, env={"FAKE_NO_CI": "1"}))
        self.assertIsNone(s["vs_baseline"]["speedup"])

    def test_no_interval_is_said(self):
        p = self.loop("run", "--trials", "1", env={"FAKE_NO_CI": "1"})
        self.summary(p)
        self.assertNotIn("no interval", p.stdout)  # the store had them
        p = self.loop("run2", "--trials", "1", env={"FAKE_NO_CI": "all"})
        s = self.summary(p)
        self.assertEqual(s["best"]["interval"], "no interval")
        self.assertEqual(s["vs_top1"]["interval"], "no interval")
        self.assertIn("(no interval)", p.stdout)

    def test_population_counts_no_later_generation(self):
        """A resumed run's journal holds later candidates; the population
        after generation g must be what it was when g ended."""
        import importlib.util
        import types
        spec = importlib.util.spec_from_file_location("evolve_code", LOOP)
        ec = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(ec)
        a = types.SimpleNamespace(population=2, elites=1, out=self.t, store=None, seeds=self.seeds)
        run = ec.Run(a, seeds_doc())
        for cid, gen, us in (("g0-0", 0, 10.0), ("g0-1", 0, 11.0), ("t1", 1, 10.5),
                             ("t2", 1, 12.0), ("t3", 2, 9.0)):
            run.cands[cid] = {"id": cid, "generation": gen, "status": "ok", "median_us": us}
        self.assertEqual(run.next_population(["t1", "t2"], 1), ["g0-0", "t1"])
        self.assertEqual(run.next_population(["t3"], 2), ["t3", "g0-0"])

    def test_a_run_with_other_options_in_the_folder_is_refused(self):
        self.summary(self.loop("run", "--trials", "2"))
        p = self.loop("run", "--trials", "2", "--seed", "5")
        self.assertEqual(p.returncode, 2)
        self.assertIn("lineage.jsonl holds a run with other options (seed)", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1)


class Protocol(Base):
    def test_the_task_file(self):
        logdir = os.path.join(self.t, "tasks")
        os.mkdir(logdir)
        self.summary(self.loop("run", "--mutator", self.mut, "--trials", "6",
                               env={"TASK_LOG": logdir}))
        out = os.path.join(self.t, "run")
        c = {r["id"]: r for r in cands(out)}
        for n in range(1, 7):
            with open(os.path.join(logdir, "%d.json" % n)) as f:
                task = json.load(f)
            self.assertEqual(task["schema"], "fasweep.evolve-task/1")
            self.assertEqual(task["trial"], n)
            self.assertEqual(task["generation"], 1 if n <= 5 else 2)
            self.assertIsInstance(task["rng_seed"], int)
            par = c[task["parent"]["id"]]
            self.assertEqual(task["parent"]["source"], par["source"])
            self.assertEqual(task["parent"]["median_us"], par["median_us"])
            self.assertEqual(task["parent"]["interval"], par["interval"])
            self.assertEqual(task["parent"]["regs"], 128)  # eval's figures ride along
            self.assertEqual(task["history"][0]["rel_l2"], 0.0003)
            self.assertEqual(task["context"]["problem"]["text"], "b4.h8.s512.d64.nc")
            self.assertEqual(task["context"]["config"], par["config"])
            self.assertEqual(task["context"]["baseline"]["name"], "sdpa-flash")
            self.assertIn("--kernel", task["context"]["eval"])
            self.assertTrue(task["insights"])
            self.assertEqual(len(task["history"]), 5 + n - 1)  # every candidate before it
            self.assertTrue(task["output"].endswith("t%d.cuh.part" % n))
            self.assertEqual(c["t%d" % n]["mutation"], "comment %d" % n)
            self.assertEqual(c["t%d" % n]["mutator"], "marker_mutator.py")
        self.assertTrue(any("comment 1 (t1) changed the time" in i for i in task["insights"]))

    def bad_mutator(self, body, expect):
        before = None
        self.summary(self.loop("run", "--trials", "1"))
        with open(self.store) as f:
            before = json.load(f)
        bad = self.write("bad.py", "#!/usr/bin/env python3\nimport sys\n" + body)
        os.chmod(bad, 0o755)
        p = self.loop("run2", "--mutator", bad, "--trials", "3")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertRegex(p.stderr, expect)
        with open(self.store) as f:
            after = json.load(f)
        self.assertTrue(set(before) <= set(after))  # nothing in the store lost
        for k in before:
            self.assertEqual(before[k], after[k])
        self.assertEqual(len(cands(os.path.join(self.t, "run2"))), 5)  # gen-0 journalled

    def test_a_mutator_that_writes_nothing(self):
        self.bad_mutator("", r"^evolve_code.py: the mutator wrote nothing to \S+t1\.cuh\.part")

    def test_a_mutator_that_writes_garbage(self):
        self.bad_mutator("open(sys.argv[2], 'w').write('hello, world\\n')",
                         r"the mutator's output \S+t1\.cuh\.part is not a kernel source")

    def test_a_mutator_that_fails(self):
        self.bad_mutator("sys.exit('no idea')", r"the mutator failed on \S+t1\.json \(exit 1\)")


class BadInput(Base):
    def expect(self, p, pattern):
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertRegex(p.stderr, pattern)
        self.assertFalse(os.path.exists(self.store))

    def test_a_seeds_file_of_another_schema(self):
        f = self.write("topk.json", json.dumps({"schema": "fasweep.topk/1", "groups": []}))
        self.expect(self.loop(seeds=f), r"topk\.json is not a fasweep.seeds/1 file \(schema "
                                        r"\"fasweep.topk/1\"\)")
        f = self.write("kt.json", json.dumps({"cache": {}}))
        self.expect(self.loop(seeds=f), r"kt\.json is not a fasweep.seeds/1 file")
        f = self.write("broken.json", "{")
        self.expect(self.loop(seeds=f), r"the seeds file \S+broken\.json is not JSON")
        self.expect(self.loop(seeds=os.path.join(self.t, "none.json")),
                    r"cannot read the seeds file \S+none\.json")

    def test_a_missing_source(self):
        doc = seeds_doc()
        doc["seeds"][0]["provenance"]["kernel_source"] = "kernels/mma/no_such.cuh"
        f = self.write("s.json", json.dumps(doc))
        self.expect(self.loop(seeds=f), r"the source of seed rank 1 \S+no_such\.cuh cannot be read")


    def test_a_seeds_file_nested_too_deep(self):
        # Deeper than Python's JSON decoder recurses: one line, not a
        # RecursionError traceback (found in the third hostile round).
        f = self.write("deep.json", "[" * 100000 + "]" * 100000)
        self.expect(self.loop(seeds=f), r"the seeds file \S+deep\.json is not JSON")


class EvolveSeeds(unittest.TestCase):
    """scripts/evolve.py (the axis search) with seeds files it cannot use:
    one line naming the file, exit 1 (its die), no traceback, before any
    fasweep runs (the --fasweep given does not exist)."""

    def run_evolve(self, text):
        with tempfile.TemporaryDirectory() as t:
            f = os.path.join(t, "s.json")
            with open(f, "w") as fh:
                fh.write(text)
            return subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "evolve.py"), f,
                                   "--space", "spaces/ci.json", "--fasweep",
                                   os.path.join(t, "no-fasweep")],
                                  capture_output=True, text=True, cwd=ROOT)

    def test_hostile_seeds_files(self):
        good = {"schema": "fasweep.seeds/1", "mode": "hot",
                "problem": {"text": "b2.h3.s300.d64.nc", "head_dim": 64},
                "seeds": [{"config": {"BLOCK_M": 64, "BLOCK_N": 64, "NUM_WARPS": 4, "STAGES": 2,
                                      "SWIZZLE": 1}, "metrics": {"median_us": 10.0}}]}
        cases = ["[]", "null", "{}", json.dumps({"schema": "fasweep.seeds/1"}),
                 json.dumps({"schema": "fasweep.seeds/1", "seeds": "abc"}),
                 json.dumps({"schema": "fasweep.seeds/1", "seeds": [{}]}),
                 json.dumps(dict(good, mode=None)), json.dumps(dict(good, problem={"text": 1})),
                 json.dumps(dict(good, seeds=[{"config": {}, "metrics": {"median_us": 1}}])),
                 json.dumps(dict(good, seeds=[dict(good["seeds"][0], metrics={})])),
                 json.dumps(good).replace("10.0", "NaN"), "[" * 100000 + "]" * 100000]
        for text in cases:
            p = self.run_evolve(text)
            self.assertEqual(p.returncode, 1, text[:80] + ": " + p.stderr)
            self.assertNotIn("Traceback", p.stderr, text[:80])
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertRegex(p.stderr, r"^evolve\.py: .*s\.json")
        # The good one gets past the seeds: it stops at the missing fasweep,
        # with one line too.
        p = self.run_evolve(json.dumps(good))
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        self.assertRegex(p.stderr, r"^evolve\.py: cannot run \S+no-fasweep: .*--fasweep")


class Rules(unittest.TestCase):
    def run_rules(self, task, seed=None):
        out = os.path.join(os.path.dirname(task), "child.cuh")
        cmd = [sys.executable, RULES, task, out] + (["--seed", str(seed)] if seed is not None
                                                     else [])
        p = subprocess.run(cmd, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f, open(out + ".json") as g:
            return f.read(), json.load(g)["mutation"]

    def test_deterministic_distinct_edits_of_the_template(self):
        with tempfile.TemporaryDirectory() as t:
            task = os.path.join(t, "task.json")
            with open(task, "w") as f:
                json.dump({"parent": {"source": TEMPLATE}, "rng_seed": 3, "history": []}, f)
            with open(TEMPLATE) as f:
                tpl = f.read()
            a, b = self.run_rules(task), self.run_rules(task)
            self.assertEqual(a, b)
            self.assertNotEqual(a[0], tpl)
            kinds = set()
            for seed in range(40):
                child, what = self.run_rules(task, seed)
                self.assertNotEqual(child, tpl)
                self.assertIn("FA_INSTANCE", child)
                kinds.add(what.split(":")[0])
            self.assertEqual(kinds, {"unroll", "bounds", "slack", "ex2", "cp_async"})
            # an edit already in the history is not made again
            child, _ = self.run_rules(task)
            with open(task, "w") as f:
                json.dump({"parent": {"source": TEMPLATE}, "rng_seed": 3,
                           "history": [{"sha256": hashlib.sha256(child.encode()).hexdigest()}]},
                          f)
            self.assertNotEqual(self.run_rules(task)[0], child)

    @unittest.skipUnless(shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc"),
                         "no nvcc")
    def test_edited_template_compiles(self):
        """Every kind of edit at once, compiled as eval --kernel compiles a
        variant (device code for sm_89, one instance)."""
        import re
        import importlib.util
        spec = importlib.util.spec_from_file_location("rules", RULES)
        rules = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(rules)
        with open(TEMPLATE) as f:
            src = f.read()
        src = re.sub(r"#pragma unroll\n(\s+for \(int (?:mt|ks) )", r"#pragma unroll 2\n\1", src)
        for kind in ("bounds", "slack", "ex2", "cp_async"):
            src = next(e for e in rules.edits(src) if e[0] == kind)[2]
        nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        with tempfile.TemporaryDirectory() as t:
            with open(os.path.join(t, "kernel.cuh"), "w") as f:
                f.write(src)
            with open(os.path.join(t, "inst.cu"), "w") as f:
                f.write('#include "kernel.cuh"\nFA_INSTANCE(64, 64, 64, 4, 3, 1)\n')
            p = subprocess.run([nvcc, "-std=c++17", "-arch=sm_89", "-c", "-o",
                                os.path.join(t, "inst.o"), "-I", os.path.join(ROOT, "kernels"),
                                "-I", os.path.join(ROOT, "kernels", "mma"),
                                os.path.join(t, "inst.cu")], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr[-3000:])


class LlmPrompt(Base):
    KNOWN = ("// from the model\n#define FA_INSTANCE(...)\n"
             "template <int X> void flash_fwd_kernel();\n")

    def fake_model(self):
        body = ("import sys\nopen(%r, 'w').write(sys.stdin.read())\n"
                "print('Unrolled the key loop twice.')\nprint('```cuda')\nprint(%r, end='')\n"
                "print('```')\n" % (os.path.join(self.t, "prompt.txt"), self.KNOWN))
        model = self.write("model.py", body)
        return "%s %s" % (sys.executable, model)

    def test_prompt_and_reply(self):
        s = self.summary(self.loop("run", "--mutator", "%s %s" % (sys.executable, LLM),
                                   "--trials", "2", env={"FASWEEP_LLM_CMD": self.fake_model()}))
        out = os.path.join(self.t, "run")
        c = {r["id"]: r for r in cands(out)}
        with open(c["t1"]["source"]) as f:
            self.assertEqual(f.read(), self.KNOWN)
        self.assertEqual(c["t1"]["mutation"], "llm: Unrolled the key loop twice.")
        self.assertEqual(c["t1"]["mutator"], "llm_prompt.py")
        with open(os.path.join(self.t, "prompt.txt")) as f:
            prompt = f.read()  # the second trial's prompt
        for part in ("# Task context", "# Current solution", "# Historical solutions",
                     "# Optimisation insights", "# Instruction", "b4.h8.s512.d64.nc",
                     "sdpa-flash", "--kernel"):
            self.assertIn(part, prompt)
        self.assertIn("- t1 (generation 1, llm: Unrolled the key loop twice.)", prompt)
        self.assertIn("The fastest so far", prompt)
        self.assertEqual(s["validity"]["candidates"], 2)

    def test_no_command_configured(self):
        task = self.write("task.json", json.dumps({"parent": {"source": TEMPLATE}}))
        env = {k: v for k, v in os.environ.items() if k != "FASWEEP_LLM_CMD"}
        p = subprocess.run([sys.executable, LLM, task, os.path.join(self.t, "o.cuh")],
                           capture_output=True, text=True, env=env)
        self.assertEqual(p.returncode, 2)
        self.assertIn("set FASWEEP_LLM_CMD or pass --command", p.stderr)

    def test_a_reply_without_code(self):
        task = self.write("task.json", json.dumps({"parent": {"source": TEMPLATE}}))
        p = subprocess.run([sys.executable, LLM, task, os.path.join(self.t, "o.cuh"),
                            "--command", "echo sorry"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 1)
        self.assertIn("holds no code block", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.t, "o.cuh")))


if __name__ == "__main__":
    unittest.main(verbosity=2)
