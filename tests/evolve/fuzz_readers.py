#!/usr/bin/env python3
"""fuzz_readers.py WORKDIR [N_SEEDS N_JOURNALS SEED] - the seeds-file and
journal readers of scripts/evolve_code.py (and evolve.py's seeds reader)
against mutated input: a valid seeds file and a valid journal (a finished
run), each case made from them by 1-3 random edits (a value swapped for one
of another type or a hostile one, a key dropped, a line dropped, doubled or
swapped, the text cut short, a byte flipped), with a fixed seed, so a
failure replays.

Each case runs evolve_code.py's main() in this process (2000 subprocesses
would not fit the suite's time), with a stand-in fasweep and mutator that
are shell scripts (no Python start-up per call), its stdout and stderr
captured, under a 20 s alarm. A case passes when it exits 0, 1 or 2 (a
SystemExit), with exactly one line on stderr when it is 2, prints no
control character raw (ESC, BEL, NUL: the hostile values hold them) and
raises nothing else: an exception is what a user would see as a
traceback, the alarm a hang. Every 100th case is also run as a real process (its exit
status, no "Traceback" on stderr, within 60 s), so what main() does in here
is what the script does out there.

Prints one JSON line: {"seeds": {"cases", "codes"}, "journals": {...},
"evolve_py": {...}, "processes": N, "problems": [the first 20]}. Exit 0
when there are no problems, 1 otherwise. Used by test_evolve.py (Fuzz).
"""
import contextlib
import importlib.util
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LOOP = os.path.join(ROOT, "scripts", "evolve_code.py")
EVOLVE = os.path.join(ROOT, "scripts", "evolve.py")
TEMPLATE = os.path.join(ROOT, "kernels", "mma", "flash_fwd.cuh")
CONFIGS = ["d64.m64.n128.w4.s3.z1", "d64.m64.n64.w4.s2.z1", "d64.m128.n64.w8.s2.z1"]

# A stand-in fasweep: every eval ok at one time, but crashed for a source
# holding EVOLVE_CRASH; no store (show fails).
FASWEEP = r"""#!/bin/sh
[ "$1" = eval ] || exit 1
k=; prev=
for a in "$@"; do [ "$prev" = --kernel ] && k=$a; prev=$a; done
if grep -q EVOLVE_CRASH "$k"; then
    echo '{"status": "crashed", "error": "gate: the worker died", "median_us": null}'
    exit 1
fi
echo '{"status": "ok", "median_us": 10.0, "noise": 0.001, "ci_lo_us": 9.96,'\
' "ci_hi_us": 10.04, "device": "Fake GPU", "regs": 128}'
"""
# A stand-in mutator: trial 2 answers prose (an invalid candidate), trial 3 a
# source eval says crashed, every other trial the template with a comment
# (the same child each time: a duplicate after the first).
MUTATOR = r"""#!/bin/sh
case "$1" in
*/t2.json) echo "Sure! Here is a faster kernel." > "$2" ;;
*/t3.json) { cat "%s"; echo "// EVOLVE_CRASH"; } > "$2" ;;
*) { cat "%s"; echo "// fuzz"; } > "$2"; echo '{"mutation": "a comment"}' > "$2.json" ;;
esac
""" % (TEMPLATE, TEMPLATE)

HOSTILE = [None, True, False, 0, -1, 2 ** 70, 1e308, 1e-320, -0.0, 0.5, "", "x",
           "\u0000", "a\nb", "\x1b]0;t\x07", "../x", "/dev/zero", "t1", "g0-0", "g0-99",
           "ok", "invalid", "wgmma", "mma", CONFIGS[1], "d64.m128.n128.c2.s2.p2", [],
           [1], [1, 2], [2.0, 1.0], [None, None], {}, {"a": 1}, {"path": 5}]
# Text that json.dumps cannot write, spliced in after dumping.
TOKENS = ["NaN", "Infinity", "-Infinity", "1e999", "[" * 50 + "]" * 50, '"\\ud800"']


class Hang(BaseException):
    pass


def on_alarm(signum, frame):
    raise Hang()


def seeds_doc():
    return {"schema": "fasweep.seeds/1", "device": "Fake GPU", "mode": "batch",
            "problem": {"text": "b4.h8.s512.d64.nc", "head_dim": 64},
            "baseline": {"name": "sdpa-flash", "median_us": 12.0, "ci_lo_us": 11.9,
                         "ci_hi_us": 12.1},
            "seeds": [{"rank": i + 1, "family": "mma", "config_text": c,
                       "config": {"BLOCK_M": 64, "BLOCK_N": 64, "NUM_WARPS": 4, "STAGES": 2,
                                  "SWIZZLE": 1},
                       "metrics": {"median_us": 10 + i / 10, "noise": 0.001,
                                   "ci_lo_us": 9.9 + i / 10, "ci_hi_us": 10.1 + i / 10},
                       "provenance": {"kernel_source": "kernels/mma/flash_fwd.cuh"},
                       "source": {"path": TEMPLATE}}
                      for i, c in enumerate(CONFIGS)]}


def paths(v, at=()):
    """Every path into v (keys and indexes), v itself first."""
    out = [at]
    if isinstance(v, dict):
        for k, x in v.items():
            out += paths(x, at + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out += paths(x, at + (i,))
    return out


def edit_value(rng, doc):
    """doc with one value swapped for a hostile one, or one key dropped."""
    doc = json.loads(json.dumps(doc))
    at = rng.choice(paths(doc))
    if not at:
        return rng.choice(HOSTILE)
    parent = doc
    for k in at[:-1]:
        parent = parent[k]
    if isinstance(parent, dict) and rng.random() < 0.25:
        del parent[at[-1]]
    else:
        parent[at[-1]] = rng.choice(HOSTILE)
    return doc


def edit_bytes(rng, data):
    """data cut short, a byte flipped, or a token JSON cannot hold spliced in."""
    r = rng.random()
    if not data:
        return data
    i = rng.randrange(len(data))
    if r < 0.3:
        return data[:i]
    if r < 0.7:
        return data[:i] + bytes([rng.randrange(256)]) + data[i + 1:]
    # a number's place taken by a token (the first digit at or after i)
    j = next((k for k in range(i, len(data)) if data[k:k + 1].isdigit()), None)
    if j is None:
        return data
    k = j
    while k < len(data) and data[k:k + 1] in b"0123456789.e-+":
        k += 1
    return data[:j] + rng.choice(TOKENS).encode() + data[k:]


def mutate_doc(rng, doc):
    for _ in range(rng.randint(1, 3)):
        doc = edit_value(rng, doc)
    data = json.dumps(doc).encode()
    if rng.random() < 0.3:
        data = edit_bytes(rng, data)
    return data


def mutate_journal(rng, lines):
    """The journal's lines (bytes, without line breaks) after 1-3 edits."""
    lines = list(lines)
    for _ in range(rng.randint(1, 3)):
        n = rng.randrange(len(lines))
        r = rng.random()
        if r < 0.45:
            try:
                rec = json.loads(lines[n])
            except ValueError:
                continue
            lines[n] = json.dumps(edit_value(rng, rec)).encode()
        elif r < 0.55:
            lines[n] = json.dumps(rng.choice(HOSTILE)).encode()
        elif r < 0.65 and len(lines) > 1:
            del lines[n]
        elif r < 0.72:
            lines.insert(n, lines[n])
        elif r < 0.8:
            m = rng.randrange(len(lines))
            lines[n], lines[m] = lines[m], lines[n]
        else:
            lines[n] = edit_bytes(rng, lines[n])
    data = b"\n".join(lines) + b"\n"
    return data[:rng.randrange(len(data))] if rng.random() < 0.1 else data


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


class Fuzz:
    def __init__(self, work, seed):
        self.work, self.rng = work, random.Random(seed)
        self.ec = load("evolve_code", LOOP)
        self.ev = load("evolve", EVOLVE)
        self.fasweep = self.script("fasweep.sh", FASWEEP)
        self.mutator = self.script("mutator.sh", MUTATOR)
        self.problems, self.processes = [], 0
        signal.signal(signal.SIGALRM, on_alarm)

    def script(self, name, text):
        path = os.path.join(self.work, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o755)
        return path

    def argv(self, seeds, out, trials=2, population=2):
        return [seeds, "--out", out, "--fasweep", self.fasweep, "--mutator", self.mutator,
                "--trials", str(trials), "--population", str(population),
                "--mutator-timeout", "10", "--eval-timeout", "10"]

    def problem(self, what, case, detail):
        self.problems.append("%s case %d: %s" % (what, case, detail[-600:]))

    def main_in_process(self, module, argv, what, case):
        """module.main() with argv: its exit status, or None (a problem)."""
        sys.argv = [module.__file__] + argv
        out, err = io.StringIO(), io.StringIO()
        signal.alarm(20)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                rc = module.main()
        except SystemExit as e:
            rc = e.code
        except Hang:
            self.problem(what, case, "no exit within 20 s")
            return None
        except BaseException:
            self.problem(what, case, "a traceback: " + traceback.format_exc())
            return None
        finally:
            signal.alarm(0)
        if rc not in (0, 1, 2):
            self.problem(what, case, "exit %r: %s" % (rc, err.getvalue()))
        elif any(c in out.getvalue() + err.getvalue() for c in "\x1b\x07\x00"):
            self.problem(what, case, "a control character printed raw: %r" % err.getvalue())
        elif rc == 2 and len(err.getvalue().strip().splitlines()) != 1:
            self.problem(what, case, "exit 2 without one line on stderr: %r" % err.getvalue())
        return rc

    def as_process(self, argv, what, case):
        """The same case as a real process."""
        self.processes += 1
        try:
            p = subprocess.run([sys.executable, LOOP] + argv, capture_output=True, text=True,
                               errors="replace", timeout=60, cwd=ROOT)
        except subprocess.TimeoutExpired:
            self.problem(what, case, "the process did not exit within 60 s")
            return
        if p.returncode not in (0, 1, 2) or "Traceback" in p.stderr:
            self.problem(what, case, "the process: exit %d: %s" % (p.returncode, p.stderr))

    def seeds(self, n):
        codes = {}
        good = seeds_doc()
        d = os.path.join(self.work, "seeds")
        for case in range(n):
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            path = os.path.join(d, "seeds.json")
            with open(path, "wb") as f:
                f.write(mutate_doc(self.rng, good))
            argv = self.argv(path, os.path.join(d, "out"), 1, 1)  # (what reads the seeds)
            rc = self.main_in_process(self.ec, argv, "seeds", case)
            codes[str(rc)] = codes.get(str(rc), 0) + 1
            if case % 100 == 0:
                shutil.rmtree(os.path.join(d, "out"), ignore_errors=True)
                self.as_process(argv, "seeds", case)
            self.evolve_py(path, case)
        return {"cases": n, "codes": codes}

    def evolve_py(self, path, case):
        """evolve.py's seeds reader on the same file: the document, or exit 2
        with one line."""
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                doc = self.ev.load_seeds(path)
            top = doc["seeds"][0]["metrics"]
            # what main() then reads of it
            [tuple(s["config"][a] for a in self.ev.AXES) for s in doc["seeds"]]
            (top["median_us"], top.get("ci_lo_us"), top.get("ci_hi_us"))
            self.codes_ev["0"] = self.codes_ev.get("0", 0) + 1
        except SystemExit as e:
            self.codes_ev[str(e.code)] = self.codes_ev.get(str(e.code), 0) + 1
            if e.code != 2 or len(err.getvalue().strip().splitlines()) != 1:
                self.problem("evolve.py seeds", case, "exit %r: %r" % (e.code, err.getvalue()))
        except BaseException:
            self.problem("evolve.py seeds", case, "a traceback: " + traceback.format_exc())

    def journals(self, n):
        codes = {}
        base = os.path.join(self.work, "base")
        os.makedirs(base)
        seeds = os.path.join(base, "seeds.json")
        with open(seeds, "w") as f:
            json.dump(seeds_doc(), f)
        run0 = os.path.join(base, "run")
        p = subprocess.run([sys.executable, LOOP] + self.argv(seeds, run0, 4), capture_output=True,
                           text=True, timeout=120, cwd=ROOT)
        if p.returncode != 0:
            self.problem("journals", -1, "the base run failed: " + p.stdout + p.stderr)
            return {"cases": 0, "codes": {}}
        with open(os.path.join(run0, "lineage.jsonl"), "rb") as f:
            lines = f.read().rstrip(b"\n").split(b"\n")
        for case in range(n):
            data = mutate_journal(self.rng, lines)
            for out in ((os.path.join(self.work, "run"), os.path.join(self.work, "proc"))
                        if case % 100 == 0 else (os.path.join(self.work, "run"),)):
                shutil.rmtree(out, ignore_errors=True)
                shutil.copytree(run0, out)
                with open(os.path.join(out, "lineage.jsonl"), "wb") as f:
                    f.write(data)
            if case % 100 == 0:
                self.as_process(self.argv(seeds, os.path.join(self.work, "proc"), 4), "journals",
                                case)
            rc = self.main_in_process(self.ec, self.argv(seeds, os.path.join(self.work, "run"), 4),
                                      "journals", case)
            codes[str(rc)] = codes.get(str(rc), 0) + 1
        return {"cases": n, "codes": codes}


def main():
    work = sys.argv[1]
    n_seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    n_journals = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 20261126
    fz = Fuzz(work, seed)
    fz.codes_ev = {}
    res = {"seeds": fz.seeds(n_seeds), "evolve_py": {"cases": n_seeds, "codes": fz.codes_ev}}
    res["journals"] = fz.journals(n_journals)
    res["processes"] = fz.processes
    res["problems"] = fz.problems[:20]
    sys.__stdout__.write(json.dumps(res) + "\n")
    return 1 if fz.problems else 0


if __name__ == "__main__":
    sys.exit(main())
