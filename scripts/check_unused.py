#!/usr/bin/env python3
"""check_unused.py - fails on a global function of the host C code that
nothing calls (dead code is found by `make check`, not by a
reader).

Reads the host objects of a build (BUILD/obj/**/*.o: cli/, grid/, seeds/,
report/, export/, store/, sweep/, kernels/*.c, gen/) with `nm`: every global function (T)
defined there must be referenced (U) by another object, or named by one of
its other consumers, which are linked without objects here: the unit
tests (tests/unit/*.c), the GPU tools (tests/gpu/*.c), the kernel sources
(kernels/*.cu, their *.cuh and *.h), the generator (scripts/geninst.c) and
the fuzzers (tests/fuzz/*.c). `main` is the program's entry. A function
that only its own file calls is reported too: it should be static.

usage: check_unused.py [--build DIR]   (default build/ci)
Exit 0 none; 1 some (one line each: the function and its object); 2 no
objects or no nm.
"""
import argparse
import glob
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
# The consumers that are not among the build's host objects.
CONSUMERS = ("tests/unit/*.c", "tests/unit/*.h", "tests/gpu/*.c", "tests/fuzz/*.c",
             "kernels/*.cu", "kernels/*/*.cuh", "kernels/*/*.h", "kernels/*.h",
             "scripts/geninst.c")
ENTRY = {"main"}
# Known dead functions, listed until they are removed or made static; a name
# that is called again, or gone, is reported so the list cannot go stale.
KNOWN = {}


def nm(obj):
    try:
        out = subprocess.run(["nm", "-P", obj], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, check=True).stdout.decode()
    except (OSError, subprocess.CalledProcessError) as e:
        print("check_unused: nm %s: %s" % (obj, e), file=sys.stderr)
        sys.exit(2)
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 2:
            yield f[0], f[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build", "ci"))
    args = ap.parse_args()
    objs = sorted(glob.glob(os.path.join(args.build, "obj", "**", "*.o"), recursive=True))
    if not objs:
        print("check_unused: no objects under %s/obj (build it first)" % args.build,
              file=sys.stderr)
        return 2
    defined, used = {}, set()
    for o in objs:
        for sym, kind in nm(o):
            if kind == "T":
                defined[sym] = os.path.relpath(o, args.build)
            elif kind == "U":
                used.add(sym)
    words = set()
    for pat in CONSUMERS:
        for path in glob.glob(os.path.join(REPO, pat)):
            with open(path, errors="replace") as f:
                words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", f.read()))
    unused = {s for s in defined if s not in used and s not in words and s not in ENTRY}
    dead = sorted(unused - set(KNOWN))
    for s in dead:
        print("%s: %s is a global function nothing else calls (make it static, or remove it)"
              % (defined[s], s))
    stale = sorted(set(KNOWN) - unused)
    for s in stale:
        print("check_unused.py: %s (%s) is called again or gone: take it off KNOWN" % (s, KNOWN[s]))
    return 1 if dead or stale else 0


if __name__ == "__main__":
    sys.exit(main())
