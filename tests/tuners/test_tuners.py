#!/usr/bin/env python3
"""The tuner exports read by the real tuner: Kernel Tuner 1.5.0 replays
`fasweep export --format kernel-tuner` in simulation mode (no GPU), and the
T4 export is checked against the schema Kernel Tuner ships. Run by
tests/tuners/run.sh with FASWEEP set, from the repository root."""
import glob
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unittest
import warnings
from pathlib import Path

import jsonschema
import kernel_tuner

FASWEEP = os.environ["FASWEEP"]
SPACE = "spaces/l4.json"
AXES = ["BLOCK_M", "BLOCK_N", "NUM_WARPS", "STAGES", "SWIZZLE"]
KEYS = AXES + ["block_size_x"]  # the thread block size, 32*NUM_WARPS: Kernel Tuner's name


def load(path):
    with open(path) as f:
        return json.load(f)


def lines(path):
    with open(path) as f:
        return f.readlines()


def fasweep(*args, check=True):
    p = subprocess.run([FASWEEP, *args], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError("fasweep %s: exit %d\n%s" % (" ".join(args), p.returncode, p.stderr))
    return p


def kt_schema(name):
    """A JSON schema Kernel Tuner ships (schema/NAME below its package)."""
    return load(os.path.join(os.path.dirname(kernel_tuner.__file__), "schema", name))


def simulate_t1(test, t1, cache, text_of, accepted):
    """tune_kernel_T1 of the T1 file t1 in simulation mode over the exported
    cache brute-forces exactly the accepted points (their texts by text_of),
    with no warning about the thread block."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, res = kernel_tuner.tune_kernel_T1(Path(t1), cache_filepath=Path(cache),
                                             simulation_mode=True)
    got = [text_of(r["configuration"]) for r in res["results"]]
    test.assertEqual(len(got), len(accepted))
    test.assertEqual(set(got), accepted)
    test.assertFalse([w for w in caught if "thread block" in str(w.message)])


def replay(cache, strategy, options=None, restrict=True):
    """tune_kernel in simulation mode on an exported cache, with the
    restrictions it carries (or none): (results, env)."""
    doc = load(cache)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return kernel_tuner.tune_kernel(
            doc["kernel_name"], "", tuple(doc["problem_size"]), [], doc["tune_params"],
            restrictions=doc["restrictions"] if restrict else None,
            strategy=strategy, strategy_options=options, cache=cache, simulation_mode=True,
            verbose=False, quiet=True)


def x0_of(config):
    """A seed's config as a point of the exports' tune_params (KEYS)."""
    return [config[a] for a in AXES] + [32 * config["NUM_WARPS"]]


def best_of(results):
    ok = [r for r in results if r and "__error__" not in r]
    return min(ok, key=lambda r: r["time"])


def cfg_of(r):
    return [r[a] for a in AXES]


def cfg_text(r):
    """A point's config text (HEAD_DIM 64: the l4 space's problems)."""
    return "d64.m%d.n%d.w%d.s%d.z%d" % tuple(r[a] for a in AXES)


class TunerExports(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        t = cls.tmp.name
        cls.store = os.path.join(t, "s.lmdb")
        fixture = os.path.join(t, "fixture.jsonl")
        subprocess.run(["python3", "tests/tuners/make_fixture.py", FASWEEP, SPACE, fixture],
                       check=True)
        fasweep("import", fixture, "--store", cls.store)
        cls.seeds = os.path.join(t, "seeds")
        fasweep("topk", "-k", "8", "--mode", "hot", "--store", cls.store, "--seeds-dir", cls.seeds)
        top = json.loads(fasweep("topk", "-k", "1", "--json", "--no-seeds", "--mode", "hot", "--store",
                                 cls.store).stdout)
        cls.top1 = top["groups"][0]["seeds"][0]["config"]
        cls.kt = os.path.join(t, "hot.kt.json")
        fasweep("export", "--format", "kernel-tuner", "--space", SPACE, "--mode", "hot",
                "--store", cls.store, "-o", cls.kt)
        plan = json.loads(fasweep("plan", "--space", SPACE, "--json").stdout)
        cls.grid = len(plan["points"])
        # What the planner accepts (not_compiled: valid, not in this CI build).
        cls.accepted = {p["config"] for p in plan["points"]
                        if p["reason"] in ("ok", "not_compiled")}
        cls.warps = len(load(cls.kt)["tune_params"]["NUM_WARPS"])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def export_hot(self, fmt, name):
        """`export --format FMT --mode hot` of the store into NAME (below the
        temp folder unless a path): the document."""
        path = os.path.join(self.tmp.name, name)
        fasweep("export", "--format", fmt, "--space", SPACE, "--mode", "hot", "--store",
                self.store, "-o", path)
        return load(path)

    def variant_store(self, name, provenance):
        """A store NAME.lmdb (below the temp folder) with the fixture and a
        copy of its first record as a kernel variant (build src-...) that is
        the fastest, PROVENANCE merged into its provenance: its path."""
        t = self.tmp.name
        store = os.path.join(t, name + ".lmdb")
        fasweep("import", os.path.join(t, "fixture.jsonl"), "--store", store)
        line = json.loads(lines(os.path.join(t, "fixture.jsonl"))[0])
        line["key"]["build"] = "src-0123456789abcdef"
        # a variant names its source (store/record.h); PROVENANCE may change that
        line["provenance"].update({"kernel_hash": "0123456789abcdef", "kernel_path": "/k.cuh"})
        line["provenance"].update(provenance)
        line["time"]["median_us"] = line["time"]["min_us"] = line["time"]["mean_us"] = 1.0
        with open(os.path.join(t, name + ".jsonl"), "w") as f:
            f.write(json.dumps(line) + "\n")
        fasweep("import", os.path.join(t, name + ".jsonl"), "--store", store)
        return store

    def test_cache_ends_with_cache(self):
        text = "".join(lines(self.kt))
        self.assertEqual(list(json.loads(text))[-1], "cache")
        self.assertIn(text.strip()[-3:], ("}\n}", "}}}"))  # the ending Kernel Tuner checks

    def test_brute_force_finds_topk_top1(self):
        # Without the restrictions: the whole product of the tune_params, no
        # holes (a block_size_x that is not 32*NUM_WARPS is InvalidConfig).
        results, env = replay(self.kt, "brute_force", restrict=False)
        self.assertEqual(len(results), self.grid * self.warps)
        errors = {}
        for r in results:
            if "__error__" in r:
                errors[str(r["__error__"])] = errors.get(str(r["__error__"]), 0) + 1
        self.assertEqual(errors, {"InvalidConfig": 90 + self.grid * (self.warps - 1),
                                  "RuntimeFailedConfig": 3})
        # With them: only the accepted points.
        results, env = replay(self.kt, "brute_force")
        errors = {str(r["__error__"]) for r in results if "__error__" in r}
        self.assertEqual(errors, {"RuntimeFailedConfig"})
        best = best_of(results)
        self.assertEqual(cfg_of(best), [self.top1[a] for a in AXES])
        self.assertIsInstance(best["time"], float)

    def test_genetic_algorithm_from_top1_seed(self):
        seed_file = glob.glob(os.path.join(self.seeds, "*_hot.json"))[0]
        x0 = x0_of(load(seed_file)["seeds"][0]["config"])
        results, env = replay(self.kt, "genetic_algorithm", {"x0": x0, "max_fevals": 20})
        evaluated = [r for r in results if r]
        self.assertEqual(cfg_of(evaluated[0]), x0[:5])  # the search starts at the seed
        self.assertEqual(cfg_of(best_of(evaluated)), x0[:5])

    def test_every_point_once_and_float_times(self):
        doc = load(self.kt)
        self.assertEqual(doc["tune_params_keys"], KEYS)
        self.assertEqual(len(doc["cache"]), self.grid * self.warps)
        for key, e in doc["cache"].items():
            self.assertEqual(key, ",".join(str(e[a]) for a in KEYS))
            if "__error__" not in e:
                self.assertIsInstance(e["time"], float)
                self.assertAlmostEqual(e["time"], e["median_us"] / 1000)

    def test_t4_valid_against_shipped_schema(self):
        doc = self.export_hot("t4", "hot.t4.json")
        schema = kt_schema("T4/1.0.0/results-schema.json")
        jsonschema.validate(doc, schema)
        self.assertEqual(len(doc["results"]), self.grid)
        inval = {}
        for r in doc["results"]:
            inval[r["invalidity"]] = inval.get(r["invalidity"], 0) + 1
        self.assertEqual(inval, {"correct": 69, "constraints": 90, "correctness": 1,
                                 "runtime": 1, "timeout": 1})
        # a document the schema refuses is refused: the check can fail
        doc["results"][0]["invalidity"] = "fine"
        with self.assertRaises(jsonschema.ValidationError):
            jsonschema.validate(doc, schema)

    def test_groups_one_per_file(self):
        p = fasweep("export", "--format", "kernel-tuner", "--space", SPACE, "--store",
                    self.store, check=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("2 groups match", p.stderr)
        d = os.path.join(self.tmp.name, "kt")
        fasweep("export", "--format", "kernel-tuner", "--space", SPACE, "--store", self.store,
                "--dir", d)
        names = sorted(os.listdir(d))
        self.assertEqual(names, ["nvidia-l4_b4.h8.s512.d64.nc_batch.kt.json",
                                 "nvidia-l4_b4.h8.s512.d64.nc_hot.kt.json"])
        results, _ = replay(os.path.join(d, names[0]), "brute_force")
        self.assertEqual(len(results), len(self.accepted))

    def test_restrictions_visit_exactly_the_accepted_points(self):
        """The planner's rules as Kernel Tuner restrictions: brute force
        over them visits the points the planner accepts, no other, and
        Kernel Tuner knows the thread block size (no warning about it)."""
        doc = load(self.kt)
        self.assertIn("BLOCK_M % (16*NUM_WARPS) == 0", doc["restrictions"])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results, _ = kernel_tuner.tune_kernel(
                doc["kernel_name"], "", tuple(doc["problem_size"]), [], doc["tune_params"],
                restrictions=doc["restrictions"], strategy="brute_force", cache=self.kt,
                simulation_mode=True, verbose=False, quiet=True)
        self.assertEqual({cfg_text(r) for r in results}, self.accepted)
        self.assertEqual(len(results), len(self.accepted))
        self.assertFalse([w for w in caught if "thread block" in str(w.message)],
                         [str(w.message) for w in caught])
        t4 = self.export_hot("t4", "r.t4.json")
        self.assertEqual(t4["metadata"]["restrictions"], doc["restrictions"])

    def test_t1_runs_from_the_export(self):
        """`export --format t1`: Kernel Tuner's own T1 schema accepts it, and
        tune_kernel_T1 with the exported cache in simulation mode brute-forces
        exactly the accepted points (run from the repository root: KernelFile
        is the template's path there)."""
        t1 = os.path.join(self.tmp.name, "hot.t1.json")
        doc = self.export_hot("t1", t1)
        schema = kt_schema("T1/1.0.0/input-schema.json")
        jsonschema.validate(doc, schema)
        self.assertEqual(doc["KernelSpecification"]["KernelFile"], "kernels/mma/flash_fwd.cuh")
        simulate_t1(self, t1, self.kt, cfg_text, self.accepted)
        # a T1 file the schema refuses is refused: the check can fail
        del doc["KernelSpecification"]["KernelFile"]
        with self.assertRaises(jsonschema.ValidationError):
            jsonschema.validate(doc, schema)

    def test_seeds_valid_against_docs_schema(self):
        """The seeds files and topk --json's groups against
        docs/seeds.schema.json (draft 2020-12), variants and sources too."""
        schema = load("docs/seeds.schema.json")
        jsonschema.Draft202012Validator.check_schema(schema)
        v = jsonschema.Draft202012Validator(schema)
        files = glob.glob(os.path.join(self.seeds, "*.json"))
        self.assertTrue(files)
        for f in files:
            v.validate(load(f))
        # A store with a kernel variant whose file is gone: ranked with
        # --variants, marked, no sha256 and no standalone file.
        t = self.tmp.name
        store = self.variant_store("schema", {"kernel_path": os.path.join(t, "gone.cuh"),
                                              "kernel_hash": "0123456789abcdef"})
        src = os.path.join(t, "src")
        top = json.loads(fasweep("topk", "-k", "3", "--json", "--no-seeds", "--variants",
                                 "--emit-source", src, "--store", store).stdout)
        self.assertTrue(top["groups"])
        variants = 0
        for g in top["groups"]:
            v.validate(g)
            for s in g["seeds"]:
                variants += s["variant"]
                if s["variant"]:
                    self.assertIsNone(s["source"]["sha256"])
                    self.assertIsNone(s["source"]["file"])
                else:
                    self.assertTrue(os.path.isfile(s["source"]["file"]), s["source"])
        self.assertEqual(variants, 1)
        bad = load(files[0])
        bad["seeds"][0]["source"]["sha256"] = "not-a-hash"
        with self.assertRaises(jsonschema.ValidationError):
            v.validate(bad)
        bad = load(files[0])
        bad["schema"] = "fasweep.seeds/2"
        with self.assertRaises(jsonschema.ValidationError):
            v.validate(bad)

    def test_every_importable_record_seeds_within_schema(self):
        """Seeds vs schema, as a property: whatever `fasweep import` accepts,
        `topk` writes seeds within docs/seeds.schema.json. 400 records, each
        the fixture's first with random values at the edges of what a field
        may hold (variants with and without their provenance, hashes in
        either case, timestamps up to year 10000, times from 0 to 1e308,
        odd intervals), are imported one by one: each one either is refused
        (exit 2) or ranks into seeds that validate (fixed seed: replayable)."""
        rng = random.Random(31)
        t = self.tmp.name
        schema = jsonschema.Draft202012Validator(load("docs/seeds.schema.json"))
        base = json.loads(lines(os.path.join(t, "fixture.jsonl"))[0])
        picks = {
            ("key", "build"): ["src-0123456789abcdef", "src-0123456789ABCDEF", "src-", "b",
                               "0123456789abcdef"],
            ("provenance", "kernel_hash"): ["0123456789abcdef", "0123456789ABCDEF", "", "zz"],
            ("provenance", "kernel_path"): ["", "/k.cuh", "/dev/stdin", "rel/k.cuh"],
            ("provenance", "timestamp"): [0, -1, 1.5, 253402300799, 253402300800, 1e300],
            ("time", "median_us"): [0, 1e-7, 1e-6, 1.0, 1e9, 1e10, 1e308],
            ("time", "ci_lo_us"): [None, 1e-300, 1e-6, 0.5, 1.0],
            ("time", "ci_hi_us"): [None, 1.0, 2.0, 1e15, 1e308],
            ("kind",): ["kernel", "baseline"],
        }
        accepted = 0
        for i in range(400):
            r = json.loads(json.dumps(base))
            for path, values in picks.items():
                if rng.random() < 0.3:
                    v = rng.choice(values)
                    d = r
                    for k in path[:-1]:
                        d = d[k]
                    d[path[-1]] = v
            if r["kind"] == "baseline":
                r["key"]["config"] = "sdpa"
            m = r["time"]["median_us"]
            r["time"]["min_us"] = r["time"]["mean_us"] = m
            store = os.path.join(t, "prop%d.lmdb" % i)
            src = os.path.join(t, "prop%d.jsonl" % i)
            with open(src, "w") as f:
                f.write(json.dumps(r) + "\n")
            p = fasweep("import", src, "--store", store, check=False)
            self.assertIn(p.returncode, (0, 2), p.stderr)
            if p.returncode:
                continue
            accepted += 1
            sd = os.path.join(t, "prop%d.seeds" % i)
            q = fasweep("topk", "--variants", "--store", store, "--seeds-dir", sd, check=False)
            self.assertIn(q.returncode, (0, 1), q.stderr)
            for f in glob.glob(os.path.join(sd, "*.json")):
                try:
                    schema.validate(load(f))
                except jsonschema.ValidationError as e:
                    self.fail("record %s gives a seed outside the schema: %s" % (
                        json.dumps(r), e.message))
            shutil.rmtree(store)
        self.assertGreater(accepted, 80)  # the property was tested on records import takes

    def test_missing_points_refused_or_marked(self):
        t = self.tmp.name
        part = os.path.join(t, "part.lmdb")
        hot = [l for l in lines(os.path.join(t, "fixture.jsonl")) if '"mode": "hot"' in l]
        with open(os.path.join(t, "part.jsonl"), "w") as f:
            f.writelines(hot[5:])
        fasweep("import", os.path.join(t, "part.jsonl"), "--store", part)
        out = os.path.join(t, "part.kt.json")
        p = fasweep("export", "--format", "kernel-tuner", "--space", SPACE, "--store", part,
                    "-o", out, check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("5 accepted points", p.stderr)
        self.assertFalse(os.path.exists(out))  # nothing half-written
        fasweep("export", "--format", "kernel-tuner", "--space", SPACE, "--store", part,
                "-o", out, "--allow-missing")
        results, _ = replay(out, "brute_force")
        self.assertEqual(sum(str(r.get("__error__")) == "ErrorConfig" for r in results), 5)

    def test_variant_builds_are_not_grid_points(self):
        t = self.tmp.name
        store = self.variant_store("variant", {})
        out = os.path.join(t, "variant.kt.json")
        fasweep("export", "--format", "kernel-tuner", "--space", SPACE, "--mode", "hot",
                "--store", store, "-o", out)
        results, _ = replay(out, "brute_force")
        self.assertEqual(cfg_of(best_of(results)), [self.top1[a] for a in AXES])


# A space of family wgmma whose grid every rule of the family cuts (warp_rows,
# tile, pipeline, regs, smem): its tuner exports carry wgmma's own tune
# parameters, thread count and restrictions (kernels/wgmma/wgmma.c).
WG_SPACE = {
    "name": "wg-tuners", "family": "wgmma",
    "target": {"gpu": "any", "arch": "sm_90", "smem_limit": 131072},
    "problems": [{"batch": 4, "heads": 8, "seq_len": 512, "head_dim": 64, "causal": False}],
    "axes": {"BLOCK_M": [64, 128, 192], "BLOCK_N": [64, 112, 128, 176, 256],
             "CONSUMER_WG": [1, 2, 3], "STAGES": [2, 3, 4], "PIPELINE": [0, 1, 2, 3]}}
WG_AXES = ["BLOCK_M", "BLOCK_N", "CONSUMER_WG", "STAGES", "PIPELINE"]


def wg_text(r):
    return "d64.m%d.n%d.c%d.s%d.p%d" % tuple(r[a] for a in WG_AXES)


class WgmmaExports(unittest.TestCase):
    """A wgmma group through Kernel Tuner: the exports name wgmma's axes,
    block_size_x is 128*(CONSUMER_WG + 1), and the restrictions (the family's
    rules, from the family table) make brute force visit exactly the points
    the planner accepts; T4 and T1 validate and replay likewise."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        t = cls.tmp.name
        cls.space = os.path.join(t, "wg.json")
        with open(cls.space, "w") as f:
            json.dump(WG_SPACE, f)
        cls.store = os.path.join(t, "s.lmdb")
        fixture = os.path.join(t, "fixture.jsonl")
        subprocess.run(["python3", "tests/tuners/make_fixture.py", FASWEEP, cls.space, fixture],
                       check=True)
        fasweep("import", fixture, "--store", cls.store)
        top = json.loads(fasweep("topk", "-k", "1", "--json", "--no-seeds", "--mode", "hot", "--store",
                                 cls.store).stdout)
        cls.top1 = top["groups"][0]["seeds"][0]
        cls.kt = os.path.join(t, "hot.kt.json")
        fasweep("export", "--format", "kernel-tuner", "--space", cls.space, "--mode", "hot",
                "--store", cls.store, "-o", cls.kt)
        plan = json.loads(fasweep("plan", "--space", cls.space, "--json").stdout)
        cls.grid = len(plan["points"])
        cls.accepted = {p["config"] for p in plan["points"]
                        if p["reason"] in ("ok", "not_compiled")}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_own_tune_params_and_restrictions(self):
        doc = load(self.kt)
        self.assertEqual(doc["tune_params_keys"], WG_AXES + ["block_size_x"])
        self.assertEqual(doc["tune_params"]["block_size_x"], [256, 384, 512])
        self.assertEqual(doc["restrictions"][0], "block_size_x == 128*(CONSUMER_WG + 1)")
        self.assertFalse([r for r in doc["restrictions"] if "NUM_WARPS" in r], doc["restrictions"])
        self.assertEqual(len(doc["cache"]), self.grid * 3)
        measured = [e for e in doc["cache"].values() if "__error__" not in e]
        self.assertEqual(len(measured), len(self.accepted) - 3)  # 3 failed on the fixture
        for e in measured:
            self.assertEqual(e["block_size_x"], 128 * (e["CONSUMER_WG"] + 1))

    def test_brute_force_visits_the_accepted_points_and_finds_top1(self):
        self.assertEqual(self.top1["family"], "wgmma")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results, _ = replay(self.kt, "brute_force")
        self.assertEqual({wg_text(r) for r in results}, self.accepted)
        self.assertEqual(len(results), len(self.accepted))
        self.assertEqual(wg_text(best_of(results)), self.top1["config_text"])
        self.assertFalse([w for w in caught if "thread block" in str(w.message)])
        # Without the restrictions: every point of the product, the rest invalid.
        results, _ = replay(self.kt, "brute_force", restrict=False)
        self.assertEqual(len(results), self.grid * 3)
        errors = {}
        for r in results:
            if "__error__" in r:
                errors[str(r["__error__"])] = errors.get(str(r["__error__"]), 0) + 1
        self.assertEqual(errors, {"InvalidConfig": self.grid * 3 - len(self.accepted),
                                  "RuntimeFailedConfig": 3})

    def test_t4_and_t1(self):
        t4 = os.path.join(self.tmp.name, "hot.t4.json")
        fasweep("export", "--format", "t4", "--space", self.space, "--mode", "hot", "--store",
                self.store, "-o", t4)
        doc = load(t4)
        jsonschema.validate(doc, kt_schema("T4/1.0.0/results-schema.json"))
        self.assertEqual(len(doc["results"]), self.grid)
        self.assertEqual(doc["metadata"]["restrictions"], load(self.kt)["restrictions"])
        self.assertIn("CONSUMER_WG", doc["results"][0]["configuration"])
        t1 = os.path.join(self.tmp.name, "hot.t1.json")
        fasweep("export", "--format", "t1", "--space", self.space, "--mode", "hot", "--store",
                self.store, "-o", t1)
        doc = load(t1)
        jsonschema.validate(doc, kt_schema("T1/1.0.0/input-schema.json"))
        self.assertEqual(doc["KernelSpecification"]["KernelFile"],
                         "kernels/wgmma/flash_fwd_wgmma.cuh")
        simulate_t1(self, t1, self.kt, wg_text, self.accepted)


FAKE = r"""#!/usr/bin/env python3
# A stand-in for fasweep in the loop test: `plan` is the real binary's (with
# points valid but not compiled in this CI build taken as accepted), `eval`
# answers from the fixture's made-up cost and logs what it was asked.
import json, os, subprocess, sys
sys.path.insert(0, os.path.join(os.getcwd(), "tests/tuners"))
from make_fixture import cost
a = sys.argv[1:]
if a[0] == "plan":
    d = json.loads(subprocess.run([os.environ["REAL_FASWEEP"], *a], capture_output=True,
                                  text=True, check=True).stdout)
    for p in d["points"]:
        p["accepted"] = p["accepted"] or p["reason"] == "not_compiled"
    print(json.dumps(d))
elif a[0] == "eval":
    cfgs = a[a.index("--config") + 1].split(",")
    with open(os.environ["EVAL_LOG"], "a") as f:
        f.write(" ".join(cfgs) + "\n")
    for c in cfgs:
        print(json.dumps({"status": "ok", "config": c, "median_us": cost(c), "noise": 0.0008,
                          "ci_lo_us": cost(c) * 0.995, "ci_hi_us": cost(c) * 1.005}))
"""


class EvolveLoop(unittest.TestCase):
    """scripts/evolve.py against a stand-in fasweep: it starts from the
    seeds, keeps to accepted configs, never measures one twice, and finds
    the best (the seeds' rank 1, left out of its start) in fewer
    evaluations than the space has accepted points."""

    def test_loop_finds_the_top_from_lower_seeds(self):
        with tempfile.TemporaryDirectory() as t:
            fake = os.path.join(t, "fasweep")
            with open(fake, "w") as f:
                f.write(FAKE)
            os.chmod(fake, 0o755)
            store, fixture = os.path.join(t, "s.lmdb"), os.path.join(t, "f.jsonl")
            subprocess.run(["python3", "tests/tuners/make_fixture.py", FASWEEP, SPACE, fixture],
                           check=True)
            fasweep("import", fixture, "--store", store)
            seeds = os.path.join(t, "seeds")
            fasweep("topk", "-k", "12", "--mode", "hot", "--store", store, "--seeds-dir", seeds)
            seed_file = glob.glob(os.path.join(seeds, "*_hot.json"))[0]
            log = os.path.join(t, "eval.log")
            env = dict(os.environ, REAL_FASWEEP=FASWEEP, EVAL_LOG=log)
            top = load(seed_file)["seeds"]
            p = subprocess.run(["python3", "scripts/evolve.py", seed_file, "--space", SPACE,
                                "--fasweep", fake, "--skip-top", "4"],
                               capture_output=True, text=True, env=env)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            summary = json.loads(p.stdout.strip().splitlines()[-1])
            print("\n" + p.stdout.strip(), file=sys.stderr)
            calls = [l.split() for l in lines(log)]
            # the target (the seeds' rank 1) is measured beside every call's candidates
            self.assertTrue(all(c[-1] == top[0]["config_text"] for c in calls))
            asked = [c for call in calls for c in call[:-1]]
            self.assertEqual(len(asked), len(set(asked)))  # nothing measured twice
            self.assertEqual(summary["evaluations"], len(asked))
            self.assertEqual(summary["target_remeasured"], len(calls))
            self.assertLess(summary["evaluations"], summary["accepted"])
            self.assertEqual(summary["best"], top[0]["config_text"])
            self.assertEqual(summary["reached_by"], top[0]["config_text"])
            first = []
            for s in top[4:]:
                if s["config_text"] not in first:
                    first.append(s["config_text"])
            self.assertEqual(calls[0][:-1], first[:7])  # generation 0: the seeds
            plan = json.loads(fasweep("plan", "--space", SPACE, "--json").stdout)
            valid = {x["config"] for x in plan["points"] if x["reason"] in ("ok", "not_compiled")}
            self.assertTrue(set(asked) <= valid)  # only points the planner accepts


if __name__ == "__main__":
    unittest.main(verbosity=2)
