#!/usr/bin/env python3
"""Tests of scripts/evolve_code.py and its mutators against a stand-in
fasweep (fake_fasweep.py: results from the source text; no GPU, no build).
Run from the repository root: python3 tests/evolve/test_evolve.py."""
import hashlib
import json
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "tests", "evolve")
LOOP = os.path.join(ROOT, "scripts", "evolve_code.py")
RULES = os.path.join(ROOT, "scripts", "mutators", "rules.py")
LLM = os.path.join(ROOT, "scripts", "mutators", "llm_prompt.py")
FAKE = os.path.join(HERE, "fake_fasweep.py")
FUZZ = os.path.join(HERE, "fuzz_readers.py")
EVOLVE = os.path.join(ROOT, "scripts", "evolve.py")
TEMPLATE = os.path.join(ROOT, "kernels", "mma", "flash_fwd.cuh")
WG_TEMPLATE = os.path.join(ROOT, "kernels", "wgmma", "flash_fwd_wgmma.cuh")
CONFIGS = ["d64.m64.n128.w4.s3.z1", "d64.m64.n64.w4.s2.z1", "d64.m128.n64.w8.s2.z1",
           "d64.m64.n128.w4.s1.z1", "d64.m128.n128.w8.s3.z1", "d64.m64.n64.w4.s3.z1"]
WG_CONFIGS = ["d64.m192.n128.c3.s2.p3", "d64.m128.n128.c2.s3.p2", "d64.m128.n128.c2.s2.p2",
              "d64.m128.n128.c2.s2.p3", "d64.m128.n128.c2.s3.p3", "d64.m192.n128.c3.s3.p3"]
WG_KINDS = {"unroll", "ex2", "uniform_cw", "consumer_regs", "l2_promotion"}

# A mutator for the tests: the parent plus a comment naming the trial, and
# on the trials MARKS names (TRIAL:MARK,...) a marker the stand-in reads,
# or a bad answer: PROSE, EMPTY, BINARY, HUGE (over 4 MiB), NUL, EXIT
# (non-zero), NOTHING (exit 0, no file), HANG, CONFIG=C (the meta's
# config), COPY (the parent unchanged). It keeps each task it got in
# TASK_LOG (a folder) and each trial it was asked for in MUTATOR_LOG.
MARKER_MUTATOR = r"""#!/usr/bin/env python3
import json, os, shutil, sys, time
task = json.load(open(sys.argv[1]))
if os.environ.get("TASK_LOG"):
    shutil.copy(sys.argv[1], os.path.join(os.environ["TASK_LOG"], "%d.json" % task["trial"]))
if os.environ.get("MUTATOR_LOG"):
    open(os.environ["MUTATOR_LOG"], "a").write("%d\n" % task["trial"])
marks = dict(m.split(":", 1) for m in os.environ.get("MARKS", "").split(",") if m)
mark = marks.get(str(task["trial"]), "")
out = sys.argv[2]
src = open(task["parent"]["source"]).read()
meta = {"mutation": "comment %d" % task["trial"]}
if mark == "EXIT":
    sys.exit("model quota exceeded")
if mark == "NOTHING":
    sys.exit(0)
if mark == "HANG":
    time.sleep(300)
if mark == "BINARY":
    open(out, "wb").write(b"\xff\xfe\x00" + src.encode())
    sys.exit(0)
if mark == "PROSE":
    src = "Sure! Here is a faster kernel: unroll every loop and use fewer registers.\n"
elif mark == "EMPTY":
    src = ""
elif mark == "HUGE":
    src += "//" + "x" * (4 << 20) + "\n"
elif mark == "NUL":
    src += "// \0\n"
elif mark.startswith("CONFIG="):
    meta["config"] = mark[len("CONFIG="):]
    src += "// trial %d\n" % task["trial"]
elif mark != "COPY":
    src += "// trial %d\n" % task["trial"]
    if mark:
        src += "// %s\n" % mark
open(out, "w").write(src)
json.dump(meta, open(out + ".json", "w"))
"""


def load_module(name, path):
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def seeds_doc(n=6):
    return {"schema": "fasweep.seeds/1", "device": "Fake GPU", "mode": "batch",
            "problem": {"text": "b4.h8.s512.d64.nc", "head_dim": 64},
            "baseline": {"name": "sdpa-flash", "median_us": 12.0},
            "seeds": [{"rank": i + 1, "config_text": c,
                       "metrics": {"median_us": 10 + i / 10, "noise": 0.001},
                       "provenance": {"kernel_source": "kernels/mma/flash_fwd.cuh"}}
                      for i, c in enumerate(CONFIGS[:n])]}


def wg_seeds_doc(n=6):
    """A seeds file of family wgmma (as topk writes it for sm_90a records)."""
    return {"schema": "fasweep.seeds/1", "device": "Fake GPU", "mode": "batch",
            "problem": {"text": "b16.h16.s2048.d64.nc", "head_dim": 64},
            "baseline": {"name": "sdpa-cudnn", "median_us": 580.0, "ci_lo_us": 578.0,
                         "ci_hi_us": 582.0},
            "seeds": [{"rank": i + 1, "family": "wgmma", "config_text": c,
                       "metrics": {"median_us": 600 + i, "noise": 0.001},
                       "provenance": {"kernel_source": "kernels/wgmma/flash_fwd_wgmma.cuh"},
                       "source": {"path": "kernels/wgmma/flash_fwd_wgmma.cuh"}}
                      for i, c in enumerate(WG_CONFIGS[:n])]}


def proc_alive(pid):
    """Whether pid runs (a zombie does not)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            s = f.read()
    except OSError:
        return False
    return s[s.rfind(")") + 2:].split()[0] != "Z"


def group_members(pgid):
    """The pids of group pgid that still run (zombies left out)."""
    out = []
    for n in os.listdir("/proc"):
        if not n.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % n) as f:
                s = f.read()
        except OSError:
            continue
        rest = s[s.rfind(")") + 2:].split()
        if int(rest[2]) == pgid and rest[0] != "Z":
            out.append(int(n))
    return out


def journal(out):
    with open(os.path.join(out, "lineage.jsonl")) as f:
        return [json.loads(l) for l in f]


def cands(out):
    return [r for r in journal(out) if r["event"] == "candidate"]


def strict_json(text):
    """JSON as the standard has it: NaN, Infinity and -Infinity (which
    Python's json reads and writes) are an error here."""
    def refuse(token):
        raise ValueError("%s is not JSON" % token)
    return json.loads(text, parse_constant=refuse)


# What a terminal would act on: ESC (escape sequences: titles, concealed
# text), BEL (ends an OSC), NUL, CSI as one C1 character.
RAW_CONTROLS = ("\x1b", "\x07", "\x00", "\x9b")


def kill_group_quietly(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass


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
        # The best by the tie rule (docs/measurement.md, "Intervals"): the lowest median, and of
        # the candidates that cannot be told apart from it (|ma - mb| <= hypot of the facing
        # half-widths) the earliest. (The lowest median alone was this test's old rule: it held
        # only while no child tied with an earlier candidate.)
        ok = [r for r in c if r["status"] == "ok"]
        low = min(ok, key=lambda r: r["median_us"])

        def facing(r, other):
            lo, hi = r["interval"]
            return hi - r["median_us"] if other >= r["median_us"] else r["median_us"] - lo

        tied = [r for r in ok if not (r.get("interval") and low.get("interval"))
                or abs(r["median_us"] - low["median_us"])
                <= math.hypot(facing(r, low["median_us"]), facing(low, r["median_us"]))]
        best = tied[0]  # c is in journal order
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
        self.assertEqual(c["t3"]["check"], "gate")
        self.assertIsNone(c["t2"]["check"])
        self.assertEqual(c["t4"]["status"], "crashed")
        self.assertEqual(len([k for k in c if k.startswith("t")]), 7)  # the loop went on
        self.assertEqual(s["validity"]["valid"], 4)
        self.assertEqual(s["validity"]["candidates"], 7)
        self.assertEqual(s["validity"]["statuses"],
                         {"ok": 4, "compile_error": 1, "wrong": 1, "crashed": 1})
        self.assertNotIn(s["best"]["id"], ("t2", "t3", "t4"))
        # a failed child is never a parent
        self.assertFalse({"t2", "t3", "t4"} & {r["parent"] for r in c.values()})

    def test_eval_checks_and_implausible_are_failed_candidates(self):
        """status implausible and a check's refusal ("tails: ..."): failed
        candidates (not invalid), the check journalled from eval's "check"
        or, without one, from the error's prefix; the insights name it."""
        for env in ({}, {"FAKE_NO_CHECK": "1"}):
            out = "run-%d" % len(env)
            marks = {"MARKS": "1:EVOLVE_IMPLAUSIBLE,2:EVOLVE_CHECK_TAILS,3:EVOLVE_CHECK_STREAM,"
                              "4:EVOLVE_WRONG", **env}
            s = self.summary(self.loop(out, "--mutator", self.mut, "--trials", "6", env=marks))
            c = {r["id"]: r for r in cands(os.path.join(self.t, out))}
            self.assertEqual([(c[k]["status"], c[k]["check"]) for k in ("t1", "t2", "t3", "t4")],
                             [("implausible", "floor"), ("wrong", "tails"), ("wrong", "stream"),
                              ("wrong", "gate")])
            self.assertTrue(c["t1"]["error"].startswith("floor: "))
            self.assertIsNone(c["t5"]["check"])
            self.assertEqual(s["validity"]["statuses"], {"implausible": 1, "wrong": 3, "ok": 2})
            self.assertFalse({"t1", "t2", "t3", "t4"} & {r["parent"] for r in c.values()})
            with open(os.path.join(self.t, out, "tasks", "t6.json")) as f:
                ins = json.load(f)["insights"]
            self.assertIn("comment 2 (t2) gave wrong (refused by eval's tails check)", ins)
            self.assertIn("comment 1 (t1) gave implausible (refused by eval's floor check)", ins)

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
        self.assertIn("candidate interval only", v["interval_note"])
        self.assertEqual(v["interval"], "no interval")  # no one-sided interval as two-sided
        self.assertIsInstance(v["candidate_interval_only"], list)
        # nothing to compare with: said so
        s = self.summary(self.loop("run2", "--trials", "1", seeds=f, env={"FAKE_NO_CI": "1"}))
        self.assertIsNone(s["vs_baseline"]["speedup"])

    def test_no_interval_is_said(self):
        p = self.loop("run", "--trials", "1", env={"FAKE_NO_CI": "1"})
        self.summary(p)
        s = self.summary(p)
        self.assertNotIn("(no interval)", p.stdout)  # the store had them
        self.assertIsInstance(s["best"]["interval"], list)
        self.assertIsInstance(s["vs_top1"]["interval"], list)
        # the seeds' baseline has no interval: said, never shown as the ratio's
        self.assertIn("candidate interval only", p.stdout)
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
            run.cands[cid] = {"id": cid, "generation": gen, "status": "ok", "median_us": us,
                              "interval": [us * 0.999, us * 1.001]}
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

    def test_bad_answers_are_invalid_candidates_and_the_loop_goes_on(self):
        """Prose, an empty file, bytes that are not UTF-8, over 4 MiB, a NUL
        byte, a non-zero exit, no file, a timeout, a config that is not one
        or of another family, a source eval refuses: each trial is journalled
        as invalid with the reason, never measured, counted in the validity;
        the trials between are ok, so the loop never stops."""
        bad = ["PROSE", "EMPTY", "BINARY", "HUGE", "NUL", "EXIT", "NOTHING", "HANG",
               "CONFIG=d64.m1x8", "CONFIG=wgmma:d64.m128.n128.c2.s2.p2", "EVOLVE_REFUSE"]
        marks = ",".join("%d:%s" % (2 * i + 2, m) for i, m in enumerate(bad))
        mlog = os.path.join(self.t, "asked")
        n = 2 * len(bad) + 1
        p = self.loop("run", "--mutator", self.mut, "--trials", str(n), "--mutator-timeout", "2",
                      env={"MARKS": marks, "MUTATOR_LOG": mlog})
        s = self.summary(p)
        out = os.path.join(self.t, "run")
        c = {r["id"]: r for r in cands(out)}
        expect = {"PROSE": r"is not a kernel source of family mma \(no FA_INSTANCE and no "
                           r"flash_fwd_kernel",
                  "EMPTY": r"the mutator wrote nothing to \S+t4\.cuh\.part",
                  "BINARY": r"(not UTF-8|NUL byte)",
                  "HUGE": r"larger than 4 MiB",
                  "NUL": r"holds a NUL byte",
                  "EXIT": r"the mutator exited 1: model quota exceeded",
                  "NOTHING": r"the mutator wrote nothing to \S+t14\.cuh\.part",
                  "HANG": r"did not finish within 2 s \(--mutator-timeout\); its process group "
                          r"was killed",
                  "CONFIG=d64.m1x8": r"the config \"d64.m1x8\" is not a config text of any "
                                     r"kernel family",
                  "CONFIG=wgmma:d64.m128.n128.c2.s2.p2": r"not a kernel source of family wgmma "
                  r"\(no FA_WG_INSTANCE and no fa_wgmma_kernel; it holds the markers of family "
                  r"mma",
                  "EVOLVE_REFUSE": r"fasweep eval refused it: .*includes \"foo.h\""}
        for i, m in enumerate(bad):
            r = c["t%d" % (2 * i + 2)]
            self.assertEqual(r["status"], "invalid", (m, r))
            self.assertRegex(r["error"], expect[m], m)
            self.assertIsNone(r["median_us"])
            self.assertIsNone(r["key"])
        for k in range(1, n + 1, 2):
            self.assertEqual(c["t%d" % k]["status"], "ok")
        self.assertEqual(len([k for k in c if k.startswith("t")]), n)
        self.assertEqual(s["validity"], {"valid": len(bad) + 1, "candidates": n,
                                         "rate": round((len(bad) + 1) / n, 4),
                                         "statuses": {"ok": len(bad) + 1, "invalid": len(bad)}})
        self.assertIn("invalid %d" % len(bad), p.stdout)
        # never measured: 5 seeds, the ok children and the one eval refused
        self.assertEqual(len(self.evals()), 5 + len(bad) + 1 + 1)
        # the rejected output is kept beside the sources, its hash journalled
        self.assertTrue(c["t2"]["source"].endswith("t2.cuh.invalid"))
        with open(c["t2"]["source"], "rb") as f:
            self.assertEqual(hashlib.sha256(f.read()).hexdigest(), c["t2"]["sha256"])
        # an invalid child is never a parent; its reason reaches the mutator
        self.assertFalse({"t%d" % (2 * i + 2) for i in range(len(bad))} &
                         {r["parent"] for r in c.values()})
        with open(os.path.join(out, "tasks", "t%d.json" % n)) as f:
            task = json.load(f)
        self.assertTrue(any("(t22) was no valid kernel: fasweep eval refused it" in i
                            for i in task["insights"]), task["insights"])
        # a resume asks the mutator for none of them again, and repeats them exactly
        with open(mlog) as f:
            asked = f.read()
        self.assertEqual(self.summary(self.loop("run", "--mutator", self.mut, "--trials", str(n),
                                                "--mutator-timeout", "2",
                                                env={"MARKS": marks, "MUTATOR_LOG": mlog})), s)
        with open(mlog) as f:
            self.assertEqual(f.read(), asked)

    def test_a_config_from_the_mutator(self):
        """OUT.cuh.json's config: the child is measured there (bare TEXT of
        the parent's family, or FAMILY:TEXT)."""
        marks = {"MARKS": "1:CONFIG=d64.m128.n64.w8.s2.z1,2:CONFIG=mma:d64.m64.n64.w4.s2.z1"}
        self.summary(self.loop("run", "--mutator", self.mut, "--trials", "2", env=marks))
        c = {r["id"]: r for r in cands(os.path.join(self.t, "run"))}
        self.assertEqual((c["t1"]["status"], c["t1"]["config"]), ("ok", "d64.m128.n64.w8.s2.z1"))
        self.assertEqual((c["t2"]["family"], c["t2"]["config"]), ("mma", "d64.m64.n64.w4.s2.z1"))
        self.assertIn(["d64.m128.n64.w8.s2.z1", c["t1"]["sha256"]], self.evals())

    def test_consecutive_mutator_failures_stop_the_loop(self):
        mlog = os.path.join(self.t, "asked")
        env = {"MARKS": "2:EXIT,3:PROSE,4:EMPTY,5:EXIT", "MUTATOR_LOG": mlog}
        p = self.loop("run", "--mutator", self.mut, "--trials", "10",
                      "--max-mutator-failures", "3", env=env)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertRegex(p.stderr, r"^evolve_code.py: the mutator failed 3 times in a row \(t2 "
                                   r"to t4; the last: the mutator wrote nothing to .*\); stopped "
                                   r"\(--max-mutator-failures 3\)\. \S+lineage\.jsonl holds every "
                                   r"trial up to t4")
        self.assertNotIn("Traceback", p.stderr)
        c = cands(os.path.join(self.t, "run"))
        self.assertEqual([r["id"] for r in c][-4:], ["t1", "t2", "t3", "t4"])
        self.assertEqual([r["status"] for r in c][-3:], ["invalid"] * 3)
        # a run again replays them (the mutator is not asked again) and stops the same way
        with open(mlog) as f:
            asked = f.read()
        q = self.loop("run", "--mutator", self.mut, "--trials", "10", "--max-mutator-failures",
                      "3", env=env)
        self.assertEqual((q.returncode, q.stderr), (1, p.stderr))
        with open(mlog) as f:
            self.assertEqual(f.read(), asked)
        # a higher limit goes on past them: the ok t5.. reset the count
        r = self.loop("run", "--mutator", self.mut, "--trials", "10", "--max-mutator-failures",
                      "5", env=env)
        s = self.summary(r)
        self.assertEqual(s["validity"]["statuses"], {"ok": 6, "invalid": 4})


class ProcessGroups(Base):
    """Every child of the loop runs in a process group of its own and
    leaves nothing behind."""

    HANGER = r"""#!/usr/bin/env python3
import os, subprocess, sys, time
# a grandchild that ignores SIGTERM (only SIGKILL ends it), then a hang
g = subprocess.Popen(["bash", "-c", "trap '' TERM; sleep 300 & wait"])
with open(os.environ["PIDS"], "a") as f:
    f.write("%d %d %d\n" % (os.getpid(), os.getpgid(0), g.pid))
if os.environ.get("MODE") == "leave":   # exit 0 with a child left running
    task = __import__("json").load(open(sys.argv[1]))
    open(sys.argv[2], "w").write(open(task["parent"]["source"]).read() + "// left\n")
    sys.exit(0)
time.sleep(300)
"""

    def pids(self, path):
        with open(path) as f:
            return [tuple(map(int, l.split())) for l in f]

    def gone(self, pid, pgid):
        self.assertFalse(proc_alive(pid), pid)
        self.assertEqual(group_members(pgid), [])
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            pass  # nothing at all left (zombies reaped too)

    def test_a_mutator_timeout_kills_its_whole_group(self):
        m = self.write("hanger.py", self.HANGER)
        os.chmod(m, 0o755)
        pids = os.path.join(self.t, "pids")
        t0 = time.monotonic()
        s = self.summary(self.loop("run", "--mutator", m, "--trials", "1", "--mutator-timeout",
                                   "1", env={"PIDS": pids}))
        self.assertLess(time.monotonic() - t0, 40)
        self.assertEqual(s["validity"]["statuses"], {"invalid": 1})
        (pid, pgid, grand), = self.pids(pids)
        self.assertEqual(pid, pgid)  # a session of its own
        self.assertNotEqual(pgid, os.getpgid(0))
        self.gone(grand, pgid)
        self.gone(pid, pgid)

    # A mutator that puts a child (its "model") into a process group of its
    # own, as llm_prompt.py does, then hangs.
    SESSION_HANGER = r"""#!/usr/bin/env python3
import os, subprocess, sys, time
m = subprocess.Popen([sys.executable, "-c", "import subprocess, time; "
                      "subprocess.Popen(['sleep', '300']); time.sleep(300)"], process_group=0)
with open(os.environ["PIDS"], "a") as f:
    f.write("%d %d\n" % (os.getpid(), m.pid))
time.sleep(300)
"""

    def test_a_mutator_timeout_kills_its_whole_session(self):
        """No orphan process: --mutator-timeout kills every process
        of the mutator's session, a child it put into a process group of its
        own (the model command llm_prompt.py starts) and that child's own
        children included, not only the mutator's group."""
        m = self.write("session_hanger.py", self.SESSION_HANGER)
        os.chmod(m, 0o755)
        pids = os.path.join(self.t, "pids")
        s = self.summary(self.loop("run", "--mutator", m, "--trials", "1", "--mutator-timeout",
                                   "1", env={"PIDS": pids}))
        self.assertEqual(s["validity"]["statuses"], {"invalid": 1})
        (pid, model), = self.pids(pids)
        self.addCleanup(kill_group_quietly, model)  # (today's code leaves it running)
        self.assertNotEqual(model, pid)  # a group of its own
        self.gone(pid, pid)
        self.gone(model, model)  # the model and its sleeper

    def test_a_mutator_that_exits_leaves_nothing_running(self):
        m = self.write("hanger.py", self.HANGER)
        os.chmod(m, 0o755)
        pids = os.path.join(self.t, "pids")
        s = self.summary(self.loop("run", "--mutator", m, "--trials", "1",
                                   env={"PIDS": pids, "MODE": "leave"}))
        self.assertEqual(s["validity"]["statuses"], {"ok": 1})
        (pid, pgid, grand), = self.pids(pids)
        self.gone(grand, pgid)

    def test_sigterm_of_the_loop_kills_the_mutator_group(self):
        m = self.write("hanger.py", self.HANGER)
        os.chmod(m, 0o755)
        pids = os.path.join(self.t, "pids")
        cmd = [sys.executable, LOOP, self.seeds, "--out", os.path.join(self.t, "run"),
               "--fasweep", FAKE, "--store", self.store, "--mutator", m, "--trials", "1"]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=dict(os.environ, PIDS=pids), cwd=ROOT)
        end = time.monotonic() + 30
        while not (os.path.exists(pids) and os.path.getsize(pids)) and time.monotonic() < end:
            time.sleep(0.05)
        (pid, pgid, grand), = self.pids(pids)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 128 + signal.SIGTERM, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertRegex(err, r"terminated by signal 15; \S+lineage\.jsonl holds every candidate")
        self.gone(grand, pgid)
        self.gone(pid, pgid)

    def test_an_eval_timeout_kills_evals_group(self):
        pids = os.path.join(self.t, "pids")
        s = self.summary(self.loop("run", "--mutator", self.mut, "--trials", "1",
                                   "--eval-timeout", "1",
                                   env={"MARKS": "1:EVOLVE_HANG_CHILD", "FAKE_PIDS": pids}))
        self.assertEqual(s["validity"]["statuses"], {"timeout": 1})
        (pid, child), = self.pids(pids)
        self.gone(child, pid)
        self.gone(pid, pid)


class Ties(unittest.TestCase):
    """The interval tie rule (store/record.c record_tie) in selection,
    elitism, the population and the summary's best."""

    @classmethod
    def setUpClass(cls):
        cls.ec = load_module("evolve_code", LOOP)

    def c(self, cid, us, lo=None, hi=None, status="ok", gen=0):
        return {"id": cid, "median_us": us, "interval": [lo, hi] if lo is not None else None,
                "status": status, "generation": gen}

    def test_the_tie_rule(self):
        tie = self.ec.tie
        # |10 - 10.5| = 0.5 <= hypot(0.3 (a's upper side), 0.4 (b's lower side)) = 0.5
        a, b = self.c("g0-0", 10.0, 9.0, 10.3), self.c("g0-1", 10.5, 10.1, 11.5)
        self.assertTrue(tie(a, b) and tie(b, a))
        b = self.c("g0-1", 10.51, 10.11, 11.5)  # just past it
        self.assertFalse(tie(a, b) or tie(b, a))
        # the side facing the other median counts, not the other side
        self.assertFalse(tie(self.c("g0-0", 10.0, 5.0, 10.1), self.c("g0-1", 10.3, 10.2, 20.0)))
        # no interval: a tie with anything
        self.assertTrue(tie(self.c("g0-0", 10.0), self.c("g0-1", 50.0, 49.9, 50.1)))

    def test_the_tournament_takes_the_earlier_of_two_that_tie(self):
        better = self.ec.better
        early, late = self.c("g0-3", 10.2, 10.0, 10.4), self.c("t7", 10.0, 9.8, 10.2)
        self.assertEqual(better(early, late)["id"], "g0-3")
        self.assertEqual(better(late, early)["id"], "g0-3")
        late = self.c("t7", 9.0, 8.9, 9.1)  # told apart: the faster
        self.assertEqual(better(early, late)["id"], "t7")
        self.assertEqual(better(late, early)["id"], "t7")
        # t2 < t10 in journal order (not as text)
        a, b = self.c("t10", 10.0, 9.0, 11.0), self.c("t2", 10.1, 9.0, 11.0)
        self.assertEqual(better(a, b)["id"], "t2")

    def test_the_ranking(self):
        c = self.c
        cands = [c("g0-0", 10.30, 10.25, 10.35),  # ties t1 (and t3), not t2
                 c("g0-1", 12.00, 11.99, 12.01),
                 c("t1", 10.25, 10.20, 10.30),
                 c("t2", 10.00, 9.99, 10.01),
                 c("t3", 10.28, 10.00, 10.60),
                 c("t4", 9.00, None, None, status="wrong"),
                 c("t5", 11.0)]  # no interval: ties with everything
        ids = [x["id"] for x in self.ec.ranking(cands)]
        # lowest t2 (g0-0, t1, t3 do not tie it... t5 does: t5 is later than t2's
        # other ties but earlier than none, so g0-? first?) -- see the rule:
        # step 1: lowest t2; ties with t2: t2, t5 -> earliest t2
        # step 2: lowest t1 (10.25); ties: g0-0, t1, t3, t5 -> g0-0
        # step 3: lowest t1; ties: t1, t3, t5 -> t1
        # step 4: lowest t3; ties: t3, t5 -> t3
        # step 5: lowest t5 (11.0); ties g0-1, t5 -> g0-1; then t5
        self.assertEqual(ids, ["t2", "g0-0", "t1", "t3", "g0-1", "t5"])
        # deterministic: the same whatever order the candidates come in
        for seed in range(50):
            shuffled = cands[:]
            random.Random(seed).shuffle(shuffled)
            self.assertEqual([x["id"] for x in self.ec.ranking(shuffled)], ids)

    def test_population_and_elites_use_it(self):
        import types
        a = types.SimpleNamespace(population=2, elites=1, out=tempfile.gettempdir(), store=None,
                                  seeds="seeds.json")
        run = self.ec.Run(a, seeds_doc())
        for cid, gen, us, half in (("g0-0", 0, 10.0, 0.2), ("g0-1", 0, 11.0, 0.01),
                                   ("t1", 1, 9.9, 0.2), ("t2", 2, 9.0, 0.01)):
            run.cands[cid] = dict(self.c(cid, us, us - half, us + half), generation=gen)
        # after generation 1: t1 is faster than g0-0 but ties it, so the elite is the
        # earlier g0-0, then the best child t1 (t2, of generation 2, does not count yet)
        self.assertEqual(run.next_population(["t1"], 1), ["g0-0", "t1"])
        self.assertEqual(run.rank(["g0-0", "g0-1", "t1", "t2"]), ["t2", "g0-0", "t1", "g0-1"])

    def test_a_run_where_everything_ties_keeps_the_earliest(self):
        """With intervals of +-50 % every candidate ties: every tournament
        goes to the earlier of its two, and the best is g0-0."""
        with tempfile.TemporaryDirectory() as t:
            seeds = os.path.join(t, "s.json")
            with open(seeds, "w") as f:
                json.dump(seeds_doc(), f)
            p = subprocess.run([sys.executable, LOOP, seeds, "--out", os.path.join(t, "run"),
                                "--fasweep", FAKE, "--store", os.path.join(t, "st.json"),
                                "--trials", "10", "--seed", "3"], capture_output=True, text=True,
                               env=dict(os.environ, FAKE_CI_REL="0.5"), cwd=ROOT)
            self.assertEqual(p.returncode, 0, p.stderr)
            s = json.loads(p.stdout.strip().splitlines()[-1])
            self.assertEqual(s["best"]["id"], "g0-0")
            rows = cands(os.path.join(t, "run"))
            # every parent is the earlier of the two the trial's rng drew
            # (journal order: the population of generation 1 is gen-0, sorted; of
            # generation 2 the two elites g0-0, g0-1, then t1, t2, t3)
            pops = {1: ["g0-%d" % i for i in range(5)], 2: ["g0-0", "g0-1", "t1", "t2", "t3"]}
            key = lambda c: (c[:2] != "g0", int(c[3:] if c.startswith("g0") else c[1:]))
            self.assertEqual([r["generation"] for r in rows[5:]], [1] * 5 + [2] * 5)
            for r in rows[5:]:
                rng = random.Random("3:%d" % int(r["id"][1:]))
                pop = pops[r["generation"]]
                a, b = rng.choice(pop), rng.choice(pop)
                self.assertEqual(r["parent"], min(a, b, key=key), r["id"])


class Replay(Base):
    def test_a_replay_measures_and_asks_nothing_and_prints_the_same(self):
        calls = os.path.join(self.t, "calls")
        mlog = os.path.join(self.t, "asked")
        env = {"FAKE_CALL_LOG": calls, "MUTATOR_LOG": mlog, "MARKS": "3:EVOLVE_WRONG,5:PROSE"}
        p = self.loop("run", "--mutator", self.mut, "--trials", "12", env=env)
        self.summary(p)
        out = os.path.join(self.t, "run")
        with open(os.path.join(out, "lineage.jsonl"), "rb") as f:
            before = f.read()
        os.remove(calls)
        os.remove(mlog)
        q = self.loop("run", "--mutator", self.mut, "--trials", "12", env=env)
        self.summary(q)
        self.assertFalse(os.path.exists(calls))  # no eval, no show: fasweep not run at all
        self.assertFalse(os.path.exists(mlog))  # the mutator not asked
        with open(os.path.join(out, "lineage.jsonl"), "rb") as f:
            self.assertEqual(f.read(), before)
        self.assertEqual(q.stdout, p.stdout)  # every line, the summary too


class Families(Base):
    def setUp(self):
        super().setUp()
        self.wg = self.write("wg.json", json.dumps(wg_seeds_doc()))

    def test_a_wgmma_seed_evolves(self):
        logdir = os.path.join(self.t, "tasks")
        os.mkdir(logdir)
        p = self.loop("run", "--trials", "12", seeds=self.wg)
        s = self.summary(p)
        c = cands(os.path.join(self.t, "run"))
        self.assertEqual({r["family"] for r in c}, {"wgmma"})
        self.assertEqual([r["config"] for r in c[:5]], WG_CONFIGS[:5])
        # eval gets FAMILY:TEXT; the store key names the family
        self.assertEqual({l[0].split(":")[0] for l in self.evals()}, {"wgmma"})
        self.assertIn(["wgmma:" + WG_CONFIGS[0], c[0]["sha256"]], self.evals())
        for r in c:
            self.assertEqual(r["status"], "ok")
            self.assertIn("|src-%s|wgmma|%s|batch" % (r["src_hash"], r["config"]), r["key"])
            with open(r["source"]) as f:
                text = f.read()
            self.assertIn("FA_WG_INSTANCE", text)
            self.assertIn("fa_wgmma_kernel", text)
        self.assertEqual({r["key"] for r in c}, self.store_keys())
        kinds = {r["mutation"].split(":")[0] for r in c[5:]}
        self.assertTrue(kinds <= WG_KINDS, kinds)
        self.assertGreaterEqual(len(kinds), 3)
        with open(os.path.join(self.t, "run", "tasks", "t12.json")) as f:
            task = json.load(f)
        with open(os.path.join(ROOT, "kernels", "wgmma", "evolve.json")) as f:
            fam = json.load(f)
        self.assertEqual(task["family"], "wgmma")
        self.assertEqual(task["edit_sites"], fam["edit_sites"])
        self.assertEqual(task["context"]["kernel"], fam["context"])
        self.assertEqual(task["context"]["instance_macro"], "FA_WG_INSTANCE")
        self.assertEqual(task["insights"][:len(fam["insights"])], fam["insights"])
        self.assertIn("--config", task["context"]["eval"])
        self.assertTrue(task["context"]["eval"][task["context"]["eval"].index("--config") + 1]
                        .startswith("wgmma:"))
        self.assertIn("at wgmma:d64.", p.stdout)
        # the seeds' baseline with its interval: the ratio's interval from both
        b, best = s["vs_baseline"], s["best"]
        self.assertEqual(b["interval"], [round(578.0 / best["interval"][1], 4),
                                         round(582.0 / best["interval"][0], 4)])
        self.assertNotIn("candidate_interval_only", b)

    def test_mixed_seeds_each_keep_their_family(self):
        doc = seeds_doc(3)
        doc["seeds"] += wg_seeds_doc(2)["seeds"]
        for s in doc["seeds"][3:]:
            del s["source"]  # from provenance.kernel_source
        f = self.write("mixed.json", json.dumps(doc))
        marks = {"MARKS": "1:CONFIG=wgmma:d64.m192.n128.c3.s2.p3,2:CONFIG=d64.m192.n128.c3.s2.p3"}
        self.summary(self.loop("run", "--mutator", self.mut, "--trials", "10", seeds=f,
                               env=marks))
        c = {r["id"]: r for r in cands(os.path.join(self.t, "run"))}
        self.assertEqual([c["g0-%d" % i]["family"] for i in range(5)], ["mma"] * 3 + ["wgmma"] * 2)
        for r in c.values():
            if r["generation"] and r["status"] == "ok":
                # a child keeps its parent's family unless the mutator names another
                self.assertEqual(r["family"], c[r["parent"]]["family"], r["id"])
        for k in ("t1", "t2"):
            par = c[c[k]["parent"]]
            if par["family"] == "wgmma":  # a wgmma config for a wgmma source: fine
                self.assertEqual((c[k]["status"], c[k]["config"]),
                                 ("ok", "d64.m192.n128.c3.s2.p3"))
            else:  # an mma source measured at a wgmma config: invalid
                self.assertEqual(c[k]["status"], "invalid")
                self.assertIn("not a kernel source of family wgmma", c[k]["error"])

    def test_a_family_edit_without_nvcc(self):
        rules = load_module("rules", RULES)
        with open(os.path.join(ROOT, "kernels", "wgmma", "evolve.json")) as f:
            sites = json.load(f)["edit_sites"]
        with open(WG_TEMPLATE) as f:
            src = f.read()
        kinds = {k for k, _, _ in rules.edits(src, sites)}
        self.assertEqual(kinds, WG_KINDS)
        for kind, name, child in rules.edits(src, sites):
            self.assertIn("FA_WG_INSTANCE", child)
            self.assertIn("fa_wgmma_kernel", child)
            self.assertNotEqual(child, src)
        # fence_regs keeps its full unroll (its line found in the template, not written here:
        # a fixed number went stale as the template grew, and the check with it)
        pragma = src[:src.index("void fence_regs(")].count("\n") + 3  # after "{"
        self.assertEqual(src.splitlines()[pragma - 1].strip(), "#pragma unroll")
        names = [n for k, n, _ in rules.edits(src, sites) if k == "unroll"]
        self.assertTrue(all(re.match(r"unroll line \d+: ", n) for n in names), names)
        self.assertNotIn(pragma, [int(re.match(r"unroll line (\d+)", n).group(1)) for n in names])
        # the mma sites find nothing to do on the wgmma template but ex2
        self.assertEqual({k for k, _, _ in rules.edits(src)}, {"unroll", "ex2"})

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
                    r"the seeds file \S+none\.json cannot be read")

    def test_a_missing_source(self):
        doc = seeds_doc()
        doc["seeds"][0]["provenance"]["kernel_source"] = "kernels/mma/no_such.cuh"
        f = self.write("s.json", json.dumps(doc))
        self.expect(self.loop(seeds=f), r"the source of seed rank 1 \S+no_such\.cuh cannot be read")


    def test_hostile_seeds_files(self):
        """Values of the wrong type, NULs, unknown families: exit 2, one line
        naming the file, no traceback, nothing run."""
        def doc(**top):
            d = seeds_doc(2)
            d.update(top)
            return d

        def seed(**kw):
            d = seeds_doc(2)
            d["seeds"][0].update(kw)
            return d

        def nested(path, v):
            d = seeds_doc(2)
            o = d
            for k in path[:-1]:
                o = o[k]
            o[path[-1]] = v
            return d

        cases = [
            (nested(["problem", "text"], 123), r"problem\.text"),
            (nested(["problem", "text"], "b4.h8\ns512"), r"problem\.text"),
            (doc(problem=[1]), r"problem: expected an object, got an array"),
            (doc(mode=7), r"mode: expected a string .*got a number"),
            (doc(mode="hot\u0000"), r"mode \"hot\\u0000\" is not a timing mode"),
            (doc(device=[]), r"device: expected a string or null, got an array"),
            (doc(baseline=[1]), r"baseline: expected an object or null"),
            (nested(["baseline", "ci_lo_us"], "1"), r"baseline\.ci_lo_us: expected a number"),
            (doc(seeds=[5]), r"seeds\[0\]: expected an object, got a number"),
            (seed(provenance=["kernels/mma/flash_fwd.cuh"]),
             r"seeds\[0\]\.provenance: expected an object or null, got an array"),
            (seed(provenance={"kernel_source": 5}), r"seeds\[0\]\.provenance\.kernel_source"),
            (seed(metrics=[1]), r"seeds\[0\]\.metrics: expected an object or null, got an array"),
            (seed(metrics={"median_us": "fast"}), r"seeds\[0\]\.metrics\.median_us"),
            (seed(source={"path": 5}), r"seeds\[0\]\.source\.path: expected a string or null, "
                                       r"got a number"),
            (seed(source={"path": "kernels/mma/flash_fwd.cuh\u0000x"}),
             r"seeds\[0\]\.source\.path: a control character"),
            (seed(source=7), r"seeds\[0\]\.source: expected an object, a string or null, "
                             r"got a number"),
            (seed(config_text="d64.m64.n128.w4.s3.z1\u0000"),
             r"seeds\[0\]\.config_text \"d64\.m64\.n128\.w4\.s3\.z1\\u0000\" is not a config "
             r"text of family mma"),
            (seed(config_text=["d64"]), r"seeds\[0\]\.config_text: expected a string"),
            (seed(config_text="d64.m128.n128.c2.s2.p2"), r"is not a config text of family mma"),
            (seed(family=9), r"seeds\[0\]\.family: expected a string .*got a number"),
            (seed(family="tcgen05"), r"seeds\[0\]\.family: unknown kernel family \"tcgen05\" "
                                     r"\(known: mma, wgmma"),
            (seed(family="../mma"), r"unknown kernel family \"\.\./mma\""),
            (seed(rank="1"), r"seeds\[0\]\.rank: expected an integer"),
            (seed(rank=True), r"seeds\[0\]\.rank: expected an integer"),
        ]
        for d, pattern in cases:
            f = self.write("hostile.json", json.dumps(d))
            p = self.loop(seeds=f)
            self.assertNotIn("Traceback", p.stderr, pattern)
            self.expect(p, r"^evolve_code\.py: \S*hostile\.json.*" + pattern)
        # NaN (json.dumps writes it; JSON has none)
        d = seeds_doc(2)
        d["seeds"][0]["metrics"]["median_us"] = float("nan")
        f = self.write("nan.json", json.dumps(d))
        self.expect(self.loop(seeds=f), r"nan\.json: seeds\[0\]\.metrics\.median_us")

    def test_nan_or_infinity_anywhere_in_the_seeds_file(self):
        """JSON has no NaN or Infinity; Python reads them (and
        1e999 as inf). Anywhere in a seeds file, a key the loop never
        checks included (it would reach the task file as JSON that is not):
        exit 2, one line naming the file and the key."""
        for where, token in (("problem.head_dim", "NaN"), ("baseline.x", "Infinity"),
                             ("seeds[1].metrics.tflops", "1e999"),
                             ("seeds[0].cycles[1]", "-Infinity")):
            d = seeds_doc(2)
            d["problem"]["head_dim"] = 64.5
            d["baseline"]["x"] = 64.5
            d["seeds"][1]["metrics"]["tflops"] = 64.5
            d["seeds"][0]["cycles"] = [1, 64.5]
            text = json.dumps(d)
            # the token in place of the one 64.5 at `where`
            at = {"problem.head_dim": 0, "baseline.x": 1, "seeds[0].cycles[1]": 2,
                  "seeds[1].metrics.tflops": 3}[where]
            parts = text.split("64.5")
            text = "".join(p + (token if i == at else "64.5" if i < len(parts) - 1 else "")
                           for i, p in enumerate(parts))
            f = self.write("nonfinite.json", text)
            p = self.loop(seeds=f)
            self.assertNotIn("Traceback", p.stderr)
            self.expect(p, r"^evolve_code\.py: \S+nonfinite\.json: %s: NaN or an infinity"
                        % re.escape(where))

    def test_a_seed_source_that_is_a_fifo_or_a_folder(self):
        fifo = os.path.join(self.t, "k.cuh")
        os.mkfifo(fifo)
        for path, name in ((fifo, "k.cuh"), (self.t, os.path.basename(self.t))):
            d = seeds_doc(2)
            d["seeds"][0]["source"] = {"path": path}
            f = self.write("fifo.json", json.dumps(d))
            cmd = [sys.executable, LOOP, f, "--out", os.path.join(self.t, "run-" + name),
                   "--fasweep", FAKE, "--store", self.store]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=ROOT)
            self.expect(p, r"the source of seed rank 1 \S*%s is not a regular file" % name)
        # the seeds file itself a FIFO: no hang either
        p = subprocess.run([sys.executable, LOOP, fifo, "--out", os.path.join(self.t, "run2"),
                            "--fasweep", FAKE, "--store", self.store], capture_output=True,
                           text=True, timeout=30, cwd=ROOT)
        self.expect(p, r"the seeds file \S+k\.cuh is not a regular file")

    def test_a_seed_source_of_another_family(self):
        d = seeds_doc(2)
        d["seeds"][0]["family"] = "wgmma"
        d["seeds"][0]["config_text"] = "d64.m128.n128.c2.s2.p2"
        f = self.write("s.json", json.dumps(d))  # provenance: the mma template
        self.expect(self.loop(seeds=f), r"the source of seed rank 1 \S+flash_fwd\.cuh is not a "
                                        r"kernel source of family wgmma \(no FA_WG_INSTANCE and "
                                        r"no fa_wgmma_kernel; it holds the markers of family mma")

    def test_an_out_folder_that_is_a_file(self):
        f = self.write("afile", "x")
        p = subprocess.run([sys.executable, LOOP, self.seeds, "--out", f, "--fasweep", FAKE,
                            "--store", self.store], capture_output=True, text=True, cwd=ROOT)
        self.expect(p, r"cannot use --out \S+afile")

    def test_a_seeds_file_nested_too_deep(self):
        # Deeper than Python's JSON decoder recurses: one line, not a
        # RecursionError traceback (found in the third hostile round).
        f = self.write("deep.json", "[" * 100000 + "]" * 100000)
        self.expect(self.loop(seeds=f), r"the seeds file \S+deep\.json is not JSON")


class EvolveSeeds(unittest.TestCase):
    """scripts/evolve.py (the axis search) with seeds files it cannot use:
    one line naming the file, exit 2 (bad input, as every script here),
    no traceback, before any fasweep runs (the --fasweep given does not
    exist)."""

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
            self.assertEqual(p.returncode, 2, text[:80] + ": " + p.stderr)
            self.assertNotIn("Traceback", p.stderr, text[:80])
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertRegex(p.stderr, r"^evolve\.py: .*s\.json")
        # The good one gets past the seeds: it stops at the missing fasweep
        # (bad input too: --fasweep), with one line too.
        p = self.run_evolve(json.dumps(good))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        self.assertRegex(p.stderr, r"^evolve\.py: cannot run \S+no-fasweep: .*--fasweep")


    def test_a_seeds_file_that_is_a_fifo_or_holds_nan_and_a_bad_target(self):
        """evolve.py reads seeds as evolve_code.py does: a FIFO is
        refused, never waited on; NaN anywhere, a non-finite or misordered
        --target, a value of the wrong type that the loop reads later
        (metrics.ci_lo_us): exit 2, one line naming the file or option, no
        traceback, no hang."""
        with tempfile.TemporaryDirectory() as t:
            fifo = os.path.join(t, "s.json")
            os.mkfifo(fifo)
            p = subprocess.run([sys.executable, EVOLVE, fifo, "--space", "spaces/ci.json",
                                "--fasweep", os.path.join(t, "no-fasweep")],
                               capture_output=True, text=True, cwd=ROOT, timeout=30)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertRegex(p.stderr, r"^evolve\.py: the seeds file \S+s\.json is not a regular "
                                       r"file\n\Z")
        good = {"schema": "fasweep.seeds/1", "mode": "hot",
                "problem": {"text": "b2.h3.s300.d64.nc", "head_dim": 64},
                "seeds": [{"config": {"BLOCK_M": 64, "BLOCK_N": 64, "NUM_WARPS": 4, "STAGES": 2,
                                      "SWIZZLE": 1}, "metrics": {"median_us": 10.0}}]}
        bad = dict(good, problem={"text": "b2.h3.s300.d64.nc", "head_dim": 64, "x": float("nan")})
        ci = json.loads(json.dumps(good))
        ci["seeds"][0]["metrics"]["ci_lo_us"] = "9.9"
        for text, pattern in ((json.dumps(bad), r"s\.json: problem\.x: NaN or an infinity"),
                              (json.dumps(ci), r"s\.json: seeds\[0\]\.metrics\.ci_lo_us: "
                                               r"expected a number or null, got a string")):
            p = self.run_evolve(text)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertNotIn("Traceback", p.stderr)
            self.assertRegex(p.stderr, r"^evolve\.py: .*" + pattern)
        for target in ("abc", "inf,1,2", "10,11,12", "nan,nan,nan", "1,2"):
            with tempfile.TemporaryDirectory() as t:
                f = os.path.join(t, "s.json")
                with open(f, "w") as fh:
                    json.dump(good, fh)
                p = subprocess.run([sys.executable, EVOLVE, f, "--space", "spaces/ci.json",
                                    "--fasweep", os.path.join(t, "no-fasweep"), "--target",
                                    target], capture_output=True, text=True, cwd=ROOT)
            self.assertEqual(p.returncode, 2, target + ": " + p.stderr)
            self.assertNotIn("Traceback", p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertRegex(p.stderr, r"^evolve\.py: --target \S+ is not MEDIAN_US,CI_LO_US,")


# A stand-in fasweep for evolve.py: plan accepts five configs of one
# problem; eval answers each config with an ok time (10 us for the target,
# the config measured last beside the candidates; 20 us for the rest),
# unless HOW says: target_fails (the target's measurement crashed) or
# infinite (every candidate "ok" at Infinity us).
EVOLVE_FAKE = r"""#!/usr/bin/env python3
import json, os, sys
a = sys.argv[1:]
P = "b2.h3.s300.d64.nc"
CFGS = ["d64.m64.n64.w4.s2.z1", "d64.m64.n64.w4.s3.z1", "d64.m64.n128.w4.s2.z1",
        "d64.m128.n64.w4.s2.z1", "d64.m64.n64.w8.s2.z1"]
if a[0] == "plan":
    print(json.dumps({"points": [{"problem": P, "config": c, "accepted": True} for c in CFGS]}))
elif a[0] == "eval":
    cfgs = a[a.index("--config") + 1].split(",")
    how = os.environ.get("HOW", "")
    for i, c in enumerate(cfgs):
        target = i == len(cfgs) - 1
        us = 10.0 if target else 20.0
        if how == "infinite" and not target:
            us = float("inf")
        if how == "target_fails" and target:
            print(json.dumps({"status": "crashed", "config": c, "median_us": None,
                              "error": "the worker died"}))
        else:
            print(json.dumps({"status": "ok", "config": c, "median_us": us,
                              "ci_lo_us": us * 0.99, "ci_hi_us": us * 1.01}))
"""


class EvolveFinite(unittest.TestCase):
    """evolve.py: a failed or non-finite measurement is exit 1,
    never a pass, and the summary is JSON without NaN or Infinity."""

    def test_a_failed_target_or_an_infinite_time_never_passes(self):
        seeds = {"schema": "fasweep.seeds/1", "mode": "hot",
                 "problem": {"text": "b2.h3.s300.d64.nc", "head_dim": 64},
                 "seeds": [{"config": dict(zip(["BLOCK_M", "BLOCK_N", "NUM_WARPS", "STAGES",
                                                "SWIZZLE"], v)),
                            "metrics": {"median_us": 10.0, "ci_lo_us": 9.9, "ci_hi_us": 10.1}}
                           for v in ((64, 64, 4, 2, 1), (64, 64, 4, 3, 1), (64, 128, 4, 2, 1))]}
        with tempfile.TemporaryDirectory() as t:
            fake = os.path.join(t, "fasweep")
            with open(fake, "w") as f:
                f.write(EVOLVE_FAKE)
            os.chmod(fake, 0o755)
            f = os.path.join(t, "s.json")
            with open(f, "w") as fh:
                json.dump(seeds, fh)
            for how in ("target_fails", "infinite"):
                p = subprocess.run([sys.executable, EVOLVE, f, "--space", "spaces/ci.json",
                                    "--fasweep", fake, "--generations", "2"],
                                   capture_output=True, text=True, cwd=ROOT, timeout=60,
                                   env=dict(os.environ, HOW=how))
                self.assertEqual(p.returncode, 1, how + ": " + p.stdout + p.stderr)
                self.assertNotIn("Traceback", p.stderr)
                s = strict_json(p.stdout.strip().splitlines()[-1])
                self.assertIsNone(s["reached_by"], how)
                self.assertIsNone(s["reached_at"], how)
                self.assertNotRegex(p.stdout, r"\binf\b|\bnan\b", how)
                if how == "infinite":
                    self.assertIsNone(s["median_us"])


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

    def test_the_sites_come_from_the_task_or_the_family(self):
        with tempfile.TemporaryDirectory() as t:
            task = os.path.join(t, "task.json")
            with open(os.path.join(ROOT, "kernels", "wgmma", "evolve.json")) as f:
                sites = json.load(f)["edit_sites"]
            kinds = {}
            for how in ("task", "family"):
                seen = set()
                for seed in range(30):
                    doc = {"parent": {"source": WG_TEMPLATE}, "rng_seed": seed, "history": [],
                           "family": "wgmma"}
                    if how == "task":
                        doc["edit_sites"] = sites
                    with open(task, "w") as f:
                        json.dump(doc, f)
                    child, what = self.run_rules(task)
                    self.assertIn("FA_WG_INSTANCE", child)
                    seen.add(what.split(":")[0])
                kinds[how] = seen
            self.assertEqual(kinds["task"], WG_KINDS)
            self.assertEqual(kinds["family"], WG_KINDS)
            # only the sites the task gives
            with open(task, "w") as f:
                json.dump({"parent": {"source": WG_TEMPLATE}, "rng_seed": 1, "history": [],
                           "edit_sites": [s for s in sites if s["kind"] == "l2_promotion"]}, f)
            self.assertIn("TMA L2 promotion L2_256B -> ", self.run_rules(task)[1])

    def test_bad_sites_are_bad_input(self):
        with tempfile.TemporaryDirectory() as t:
            task = os.path.join(t, "task.json")
            for sites, msg in (([{"kind": "x"}], r"edit_sites\[0\]\.pattern"),
                               ([{"kind": "x", "pattern": "(", "label": "l", "values": ["a"],
                                  "group": 1}], r"edit_sites\[0\]\.pattern does not compile"),
                               ([{"kind": "x", "pattern": "a", "label": "l", "values": ["a"],
                                  "group": 1}], r"edit_sites\[0\]\.group"),
                               ("nope", r"edit_sites is not a non-empty list")):
                with open(task, "w") as f:
                    json.dump({"parent": {"source": TEMPLATE}, "edit_sites": sites}, f)
                p = subprocess.run([sys.executable, RULES, task, os.path.join(t, "o.cuh")],
                                   capture_output=True, text=True)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertRegex(p.stderr, r"^rules\.py: the task file \S+task\.json: " + msg)
                self.assertNotIn("Traceback", p.stderr)
            with open(task, "w") as f:
                json.dump({"parent": {"source": TEMPLATE}, "family": "../x"}, f)
            p = subprocess.run([sys.executable, RULES, task, os.path.join(t, "o.cuh")],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 2)
            self.assertIn("is not a kernel family name", p.stderr)

    @unittest.skipUnless(shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc"),
                         "no nvcc")
    def test_edited_wgmma_template_compiles(self):
        """Every kind of the wgmma family's edits at once (every unroll site
        at a factor of 2, the consumer budget - 16), compiled as eval
        --kernel compiles a variant: sm_90a, one instance with two consumer
        warpgroups and one with three."""
        rules = load_module("rules", RULES)
        with open(os.path.join(ROOT, "kernels", "wgmma", "evolve.json")) as f:
            sites = json.load(f)["edit_sites"]
        with open(WG_TEMPLATE) as f:
            src = f.read()
        for line in sorted({int(re.search(r"line (\d+)", n).group(1))
                            for k, n, _ in rules.edits(src, sites) if k == "unroll"}):
            src = next(c for k, n, c in rules.edits(src, sites)
                       if k == "unroll" and n == "unroll line %d: full -> 2" % line)
        for kind, to in (("ex2", "ex2.approx.f32"), ("uniform_cw", "wg - 1"),
                         ("consumer_regs", "- 16"), ("l2_promotion", "NONE")):
            src = next(c for k, n, c in rules.edits(src, sites)
                       if k == kind and n.split(" -> ")[-1].startswith(to))
        self.assertEqual(src.count("#pragma unroll 2"), 23)  # 20, and Combine's 3
        nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        with tempfile.TemporaryDirectory() as t:
            with open(os.path.join(t, "kernel.cuh"), "w") as f:
                f.write(src)
            with open(os.path.join(t, "inst.cu"), "w") as f:
                f.write('#include "kernel.cuh"\nFA_WG_INSTANCE(64, 128, 128, 2, 2, 2)\n'
                        'FA_WG_INSTANCE(64, 192, 128, 3, 2, 3)\n')
            p = subprocess.run([nvcc, "-std=c++17", "-O3", "--expt-relaxed-constexpr",
                                "-gencode=arch=compute_90a,code=sm_90a", "-c", "-o",
                                os.path.join(t, "inst.o"), "-I", os.path.join(ROOT, "kernels"),
                                "-I", os.path.join(ROOT, "kernels", "wgmma"),
                                os.path.join(t, "inst.cu")], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr[-3000:])

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

    HANGING_MODEL = ("import os, subprocess, sys, time\n"
                     "sys.stdin.read()\n"
                     "g = subprocess.Popen(['sleep', '300'])\n"
                     "open(os.environ['PIDS'], 'a').write('%d %d %d\\n' % (os.getpid(), "
                     "os.getpgid(0), g.pid))\n"
                     "time.sleep(300)\n")

    def pids(self, path, timeout=30):
        end = time.monotonic() + timeout
        while not (os.path.exists(path) and os.path.getsize(path)) and time.monotonic() < end:
            time.sleep(0.05)
        with open(path) as f:
            return [tuple(map(int, l.split())) for l in f]

    def assert_gone(self, pgid, *pids):
        for pid in pids:
            self.assertFalse(proc_alive(pid), pid)
        self.assertEqual(group_members(pgid), [])

    def test_the_model_timeout_kills_its_group(self):
        task = self.write("task.json", json.dumps({"parent": {"source": TEMPLATE}}))
        model = self.write("hang.py", self.HANGING_MODEL)
        pids = os.path.join(self.t, "pids")
        p = subprocess.run([sys.executable, LLM, task, os.path.join(self.t, "o.cuh"),
                            "--command", "%s %s" % (sys.executable, model), "--timeout", "1"],
                           capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, PIDS=pids))
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertRegex(p.stderr, r"did not answer within 1 s \(--timeout\); its process group "
                                   r"was killed")
        (pid, pgid, grand), = self.pids(pids)
        self.assertEqual(pid, pgid)
        self.assert_gone(pgid, pid, grand)

    def test_sigterm_kills_the_model_group(self):
        task = self.write("task.json", json.dumps({"parent": {"source": TEMPLATE}}))
        model = self.write("hang.py", self.HANGING_MODEL)
        pids = os.path.join(self.t, "pids")
        p = subprocess.Popen([sys.executable, LLM, task, os.path.join(self.t, "o.cuh"),
                              "--command", "%s %s" % (sys.executable, model)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=dict(os.environ, PIDS=pids))
        (pid, pgid, grand), = self.pids(pids)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 128 + signal.SIGTERM, err)
        self.assertIn("the model command's process group was killed", err)
        self.assert_gone(pgid, pid, grand)

    def test_the_loop_timeout_reaches_the_model(self):
        """The loop kills llm_prompt.py's group on --mutator-timeout;
        llm_prompt.py then kills its model's group: nothing outlives it."""
        model = self.write("hang.py", self.HANGING_MODEL)
        pids = os.path.join(self.t, "pids")
        s = self.summary(self.loop("run", "--mutator", "%s %s" % (sys.executable, LLM),
                                   "--trials", "1", "--mutator-timeout", "2",
                                   env={"FASWEEP_LLM_CMD": "%s %s" % (sys.executable, model),
                                        "PIDS": pids}))
        self.assertEqual(s["validity"]["statuses"], {"invalid": 1})
        (pid, pgid, grand), = self.pids(pids)
        self.assert_gone(pgid, pid, grand)

    def test_its_timeout_fits_inside_the_loops_mutator_timeout(self):
        """The loop passes its --mutator-timeout to the mutator
        ($FASWEEP_MUTATOR_TIMEOUT); llm_prompt.py cuts its model timeout to
        fit inside it, so its own timeout fires first, kills the model's
        group and reports it (the trial's error is llm_prompt.py's, not
        the loop's timeout), and nothing of the model outlives the loop."""
        model = self.write("hang.py", self.HANGING_MODEL)
        pids = os.path.join(self.t, "pids")
        t0 = time.monotonic()
        s = self.summary(self.loop("run", "--mutator", "%s %s" % (sys.executable, LLM),
                                   "--trials", "1", "--mutator-timeout", "4",
                                   env={"FASWEEP_LLM_CMD": "%s %s" % (sys.executable, model),
                                        "PIDS": pids}))
        self.assertLess(time.monotonic() - t0, 40)
        self.assertEqual(s["validity"]["statuses"], {"invalid": 1})
        (pid, pgid, grand), = self.pids(pids)
        self.addCleanup(kill_group_quietly, pgid)
        t1 = next(r for r in cands(os.path.join(self.t, "run")) if r["id"] == "t1")
        self.assertRegex(t1["error"], r"^the mutator exited 1: llm_prompt\.py: the model command "
                                      r".* did not answer within 2 s \(--timeout, cut to fit "
                                      r"within the loop's --mutator-timeout of 4 s\); its process "
                                      r"group was killed")
        self.assert_gone(pgid, pid, grand)

    def test_its_timeout_is_below_the_loops(self):
        llm = subprocess.run([sys.executable, LLM, "--help"], capture_output=True, text=True)
        loop = subprocess.run([sys.executable, LOOP, "--help"], capture_output=True, text=True)
        h_llm, h_loop = (" ".join(p.stdout.split()) for p in (llm, loop))
        t_llm = int(re.search(r"--timeout TIMEOUT seconds for the command; then its process "
                              r"group is killed \(default (\d+)", h_llm).group(1))
        t_loop = int(re.search(r"--mutator-timeout MUTATOR_TIMEOUT seconds per mutator call; "
                               r"[^(]*\(default (\d+)", h_loop).group(1))
        self.assertLess(t_llm, t_loop)
        self.assertIn("below evolve_code.py's default --mutator-timeout", h_llm)
        self.assertIn("above scripts/mutators/llm_prompt.py's default --timeout", h_loop)

    def test_a_wgmma_task_asks_for_the_wgmma_markers(self):
        wg = self.write("wg.json", json.dumps(wg_seeds_doc()))
        known = ("// from the model\n#define FA_WG_INSTANCE(...)\n"
                 "template <int X> void fa_wgmma_kernel();\n")
        body = ("import sys\nopen(%r, 'w').write(sys.stdin.read())\n"
                "print('Made cw warp-uniform.')\nprint(%r, end='')\n"
                % (os.path.join(self.t, "prompt.txt"), known))  # no fence: the kernel name
        model = self.write("model.py", body)
        s = self.summary(self.loop("run", "--mutator", "%s %s" % (sys.executable, LLM),
                                   "--trials", "1", seeds=wg,
                                   env={"FASWEEP_LLM_CMD": "%s %s" % (sys.executable, model)}))
        self.assertEqual(s["validity"]["statuses"], {"ok": 1})
        with open(os.path.join(self.t, "prompt.txt")) as f:
            prompt = f.read()
        self.assertIn("Keep the FA_WG_INSTANCE macro, the fa_wgmma_kernel template", prompt)
        self.assertIn("wgmma.mma_async", prompt)  # the family's context
        self.assertIn("--config wgmma:d64.", prompt)

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


class Escaping(Base):
    """Untrusted text (a model's reply, eval's error, a mutator's
    stderr, a file name) reaches the terminal escaped, control characters
    as \\xHH, as fasweep prints them: never an escape sequence a terminal
    acts on (a window title, concealed text), never a second line."""

    def assert_escaped(self, p):
        for c in RAW_CONTROLS:
            self.assertNotIn(c, p.stdout + p.stderr, repr(p.stdout + p.stderr))

    def test_untrusted_text_reaches_the_terminal_escaped(self):
        # the model's first line of prose: the mutation, printed per trial
        body = ("import sys\nsys.stdin.read()\n"
                "print('\\x1b]0;owned\\x07Unrolled \\x1b[8mhidden\\x1b[0m twice.')\n"
                "print('```cuda')\nprint(%r, end='')\nprint('```')\n" % LlmPrompt.KNOWN)
        model = self.write("model.py", body)
        p = self.loop("run", "--mutator", "%s %s" % (sys.executable, LLM), "--trials", "1",
                      env={"FASWEEP_LLM_CMD": "%s %s" % (sys.executable, model)})
        self.summary(p)
        self.assert_escaped(p)
        self.assertIn("(llm: \\x1b]0;owned\\x07Unrolled \\x1b[8mhidden\\x1b[0m twice.)", p.stdout)
        t1 = cands(os.path.join(self.t, "run"))[-1]  # the journal keeps the text as it came
        self.assertIn("\x1b[8mhidden", t1["mutation"])
        # eval's error
        p = self.loop("run2", "--mutator", self.mut, "--trials", "1",
                      env={"MARKS": "1:EVOLVE_ESC_ERROR"})
        self.summary(p)
        self.assert_escaped(p)
        self.assertIn("crashed: \\x1b]0;owned\\x07the worker died \\x1b[8mhidden", p.stdout)
        # a mutator's stderr
        m = self.write("m.py", "import sys\nsys.stderr.write('\\x1b]0;owned\\x07quota "
                               "\\x1b[8mhidden\\n')\nsys.exit(1)\n")
        p = self.loop("run3", "--mutator", "%s %s" % (sys.executable, m), "--trials", "1")
        self.summary(p)
        self.assert_escaped(p)
        self.assertIn("the mutator exited 1: \\x1b]0;owned\\x07quota \\x1b[8mhidden", p.stdout)
        # file names, in each script's one-line error
        name = "s\x1b]0;owned\x07\x1b[8m.json"
        f = self.write(name, "{")
        for cmd in ([sys.executable, LOOP, f, "--out", os.path.join(self.t, "run4"), "--fasweep",
                     FAKE, "--store", self.store],
                    [sys.executable, EVOLVE, f, "--space", "spaces/ci.json"],
                    [sys.executable, RULES, f, os.path.join(self.t, "o.cuh")],
                    [sys.executable, LLM, f, os.path.join(self.t, "o.cuh"), "--command", "true"]):
            p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assert_escaped(p)
            self.assertIn("s\\x1b]0;owned\\x07\\x1b[8m.json", p.stderr)
        # the model command's stderr, in llm_prompt.py's error
        task = self.write("task.json", json.dumps({"parent": {"source": TEMPLATE}}))
        bad = self.write("bad.py", "import sys\nsys.stdin.read()\n"
                                   "sys.stderr.write('\\x1b]0;owned\\x07no\\x1b[8m\\n')\n"
                                   "sys.exit(3)\n")
        p = subprocess.run([sys.executable, LLM, task, os.path.join(self.t, "o.cuh"), "--command",
                            "%s %s" % (sys.executable, bad)], capture_output=True, text=True)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assert_escaped(p)
        self.assertRegex(p.stderr, r"exited 3: \\x1b\]0;owned\\x07no\\x1b\[8m\n\Z")


class Lock(Base):
    """One run per --out. A second run into a folder in use is
    refused, exit 2, one line naming the folder and the first run's pid;
    it journals, measures and removes nothing."""

    def test_a_second_run_into_the_same_out_is_refused(self):
        out = os.path.join(self.t, "run")
        mlog = os.path.join(self.t, "asked")
        opts = ["--mutator", self.mut, "--trials", "2", "--mutator-timeout", "120"]
        first = subprocess.Popen(
            [sys.executable, LOOP, self.seeds, "--out", out, "--fasweep", FAKE, "--store",
             self.store] + opts, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            cwd=ROOT, env=dict(os.environ, EVAL_LOG=self.log, MARKS="1:HANG", MUTATOR_LOG=mlog))

        def stop():
            if first.poll() is None:
                first.send_signal(signal.SIGTERM)
            first.communicate(timeout=60)
        self.addCleanup(stop)
        end = time.monotonic() + 60
        while not (os.path.exists(mlog) and os.path.getsize(mlog)) and time.monotonic() < end:
            time.sleep(0.05)  # the first run is asking its mutator for t1 (which hangs)
        with open(os.path.join(out, "lineage.jsonl")) as f:
            before = f.read()
        evals = len(self.evals())
        p = self.loop("run", *opts)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertRegex(p.stderr, r"^evolve_code\.py: --out \S+run is in use by another run "
                                   r"\(pid %d\)" % first.pid)
        self.assertNotIn("Traceback", p.stderr)
        with open(os.path.join(out, "lineage.jsonl")) as f:
            self.assertEqual(f.read(), before)
        self.assertEqual(len(self.evals()), evals)
        self.assertTrue(os.path.exists(os.path.join(out, "tasks", "t1.json")))
        stop()
        self.assertEqual(first.returncode, 128 + signal.SIGTERM)
        # the folder is free again: the same command resumes it, each candidate once
        s = self.summary(self.loop("run", *opts))
        ids = [r["id"] for r in cands(out)]
        self.assertEqual(len(ids), len(set(ids)))
        self.assertEqual(s["trials"], 2)


class Journal(Base):
    """A journal line of another shape (JSON but not an object, a
    candidate without an id, a value of the wrong type, a byte that is not
    UTF-8, NaN) is bad input: exit 2, one line naming the journal and the
    line, no traceback; a last line cut by an interruption is dropped."""

    def test_a_tampered_journal_is_one_line_naming_the_file_and_line(self):
        self.summary(self.loop("run", "--trials", "2"))
        path = os.path.join(self.t, "run", "lineage.jsonl")
        with open(path, "rb") as f:
            good = f.read()
        lines = good.split(b"\n")[:-1]
        k = next(i for i, l in enumerate(lines) if b'"id": "t1"' in l and b"candidate" in l)
        t1 = json.loads(lines[k])

        def edited(**kw):
            r = dict(t1)
            for key, v in kw.items():
                if v is KeyError:
                    del r[key]
                else:
                    r[key] = v
            return json.dumps(r).encode()

        cases = [
            (b"[1, 2]", r"is not a JSON object \(an array\)"),
            (b"not json", r"is not JSON"),
            (edited(id=KeyError), r": id: expected a string, got null"),
            (edited(mutation="caf\u00e9").replace(b"caf\\u00e9", b"caf\xe9"),
             r"is not UTF-8 text \(byte \d+\)"),
            (edited(median_us="fast"), r": median_us: expected a positive number or null, got "
                                       r"a string"),
            (edited(median_us=None), r": status ok without a median_us"),
            (edited(interval="x"), r": interval: expected an array of 2, got a string"),
            (edited(interval=[2.0, 1.0]), r": interval: \[2\.0, 1\.0\] is not an interval"),
            (edited(family=[1]), r": family: expected a string or null, got an array"),
            (edited(family="tcgen05"), r": family: unknown kernel family \"tcgen05\""),
            (edited(config="d64.m1x8"), r": config \"d64\.m1x8\" is not a config text of "
                                        r"family mma"),
            (edited(status="wrong", error=5), r": error: expected a string or null, got a number"),
            (edited(parent=[1]), r": parent: expected a string or null, got an array"),
            (edited(generation="1"), r": generation: expected an integer >= 0, got a string"),
            (edited(local_bytes="x"), r": local_bytes: expected a number or null, got a string"),
            (edited(source=KeyError), r": a measured candidate without a source"),
            (edited(median_us=1.0).replace(b"1.0", b"NaN", 1),
             r": median_us: NaN or an infinity"),
            (json.dumps({"event": ["candidate"]}).encode(), r": event \[\"candidate\"\] is not "
                                                           r"one evolve_code\.py writes"),
        ]
        for line, pattern in cases:
            with open(path, "wb") as f:
                f.write(b"\n".join(lines[:k] + [line] + lines[k + 1:]) + b"\n")
            p = self.loop("run", "--trials", "2")
            self.assertNotIn("Traceback", p.stderr, pattern)
            self.assertEqual(p.returncode, 2, pattern + ": " + p.stdout + p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertRegex(p.stderr, r"^evolve_code\.py: \S+lineage\.jsonl line %d\b.*%s.*; "
                                       r"move the folder away to start afresh\n\Z"
                             % (k + 1, pattern))
        # a last line cut short (no line break after it): dropped, the run resumes
        with open(path, "wb") as f:
            f.write(good + b'{"event": "candidate", "id": "t3", "gen')
        s = self.summary(self.loop("run", "--trials", "2"))
        self.assertEqual(s["trials"], 2)
        with open(path, "rb") as f:
            self.assertEqual(f.read(), good)


class Finite(Base):
    """Every ratio is finite or null (a baseline of 1e308 us over
    a kernel of 1e-6 us overflows: null, with a note, never "infx" or
    Infinity), and a number eval prints that is not finite (Infinity, NaN)
    makes no measurement: the candidate is crashed, saying why. No NaN or
    Infinity in the journal or the summary's JSON."""

    def test_ratios_and_eval_numbers_stay_finite(self):
        doc = seeds_doc()
        doc["baseline"] = {"name": "sdpa-flash", "median_us": 1e308, "ci_lo_us": 1e307,
                           "ci_hi_us": 1e308}
        f = self.write("huge.json", json.dumps(doc))
        marks = {"MARKS": "1:EVOLVE_MEDIAN=1e-6,2:EVOLVE_MEDIAN=inf,3:EVOLVE_MEDIAN=nan"}
        p = self.loop("run", "--mutator", self.mut, "--trials", "3", seeds=f, env=marks)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        s = strict_json(p.stdout.strip().splitlines()[-1])
        self.assertEqual(s["best"]["id"], "t1")
        v = s["vs_baseline"]
        self.assertIsNone(v["speedup"])
        self.assertEqual(v["interval"], "no interval")
        self.assertIn("out of range", v["note"])
        self.assertGreater(s["vs_top1"]["speedup"], 1e6)  # in range: a number
        self.assertNotRegex(p.stdout, r"(?i)\binf|\bnan\b")
        self.assertIn("no comparison (the ratio of 1e+308 us to 1e-06 us is out of range)",
                      p.stdout)
        with open(os.path.join(self.t, "run", "lineage.jsonl")) as fh:
            rows = [strict_json(l) for l in fh]
        c = {r["id"]: r for r in rows if r["event"] == "candidate"}
        for k in ("t2", "t3"):
            self.assertEqual(c[k]["status"], "crashed", k)
            self.assertIsNone(c[k]["median_us"])
            self.assertRegex(c[k]["error"], r"^fasweep eval printed a number that is not finite "
                                            r"\(median_us\)")
        for name in os.listdir(os.path.join(self.t, "run", "tasks")):
            with open(os.path.join(self.t, "run", "tasks", name)) as fh:
                strict_json(fh.read())


class Fuzz(unittest.TestCase):
    """Bad input, fuzzed: 2000 seeds files and 2000 journals, each a valid
    one after 1-3 random edits (values of another type or hostile ones,
    keys and lines dropped, doubled or swapped, text cut short, bytes
    flipped, NaN spliced in), fixed seed (fuzz_readers.py replays it):
    every case exits 0, 1 or 2 (2 with one line), with no traceback, no
    hang and no control character printed raw; evolve.py's seeds reader
    on the same files too."""

    def test_fuzzed_seeds_files_and_journals(self):
        with tempfile.TemporaryDirectory() as t:
            p = subprocess.run([sys.executable, FUZZ, t, "2000", "2000", "20261126"],
                               capture_output=True, text=True, cwd=ROOT, timeout=600)
        res = json.loads(p.stdout.strip().splitlines()[-1]) if p.stdout.strip() else {}
        self.assertEqual(p.returncode, 0, "\n".join(res.get("problems") or [p.stderr[-3000:]]))
        self.assertEqual(res["problems"], [])
        for kind in ("seeds", "journals", "evolve_py"):
            codes = res[kind]["codes"]
            self.assertEqual(sum(codes.values()), 2000, kind)
            self.assertLessEqual(set(codes), {"0", "1", "2"}, kind)
            # both kinds of outcome: the edits reach past the reader too
            self.assertTrue(codes.get("0") and codes.get("2"), (kind, codes))
        self.assertGreaterEqual(res["processes"], 40)


# The slowest tests (over 10 s each on CI's two cores), taken first by the queues of run.sh so
# that no queue is left with a long one at the end; the others follow in the order of their ids.
SLOW_FIRST = ("test_fuzzed_seeds_files_and_journals", "test_interrupted_run_resumes_repeating_nothing",
              "test_defaults_run_45_trials_and_summarise",
              "test_same_seed_same_candidates_other_seed_others")


def queued_tests(folder):
    """The module's tests, each taken by the first of the processes sharing `folder` that asks
    for it (a counter under a lock): run.sh starts several side by side (each test spends most
    of its time waiting for the processes it starts), and together they run every test once."""
    import fcntl
    tests, todo = [], [unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])]
    while todo:
        for t in todo.pop():
            (todo if isinstance(t, unittest.TestSuite) else tests).append(t)
    tests.sort(key=lambda t: (t.id().rsplit(".", 1)[-1] not in SLOW_FIRST, t.id()))
    with open(os.path.join(folder, "next"), "a+") as f:
        while True:
            fcntl.flock(f, fcntl.LOCK_EX)
            f.seek(0)
            i = int(f.read() or "0")
            f.seek(0)
            f.truncate()
            f.write(str(i + 1))
            f.flush()
            fcntl.flock(f, fcntl.LOCK_UN)
            if i >= len(tests):
                return
            yield tests[i]


class QueuedSuite(unittest.TestSuite):
    """A suite whose tests come from queued_tests as it runs (TestSuite.run iterates it, so
    class fixtures are set up and torn down as for any suite)."""

    _cleanup = False  # no list of tests to drop them from

    def __init__(self, folder):
        super().__init__()
        self.folder = folder

    def __iter__(self):
        return queued_tests(self.folder)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--queue":
        if not os.path.isdir(sys.argv[2]):
            sys.exit("test_evolve.py: --queue FOLDER: %r is not a folder" % sys.argv[2])
        ok = unittest.TextTestRunner(verbosity=2).run(QueuedSuite(sys.argv[2]))
        sys.exit(0 if ok.wasSuccessful() else 1)
    unittest.main(verbosity=2)
