#!/usr/bin/env python3
"""check_includes.py [ROOT] - no module of the project depends, directly or
through others, on a module that depends on it back (an include cycle), and
a module includes only headers of its own or an earlier stage (data flows
one way: kernels, store, the sweep, the ranking and seeds; the command
line last).

A module is a header and its source of the same name (sweep/worker.h and
sweep/worker.c): module A depends on B when A's header or source includes
B's header. So a header that includes worker.h while worker.c includes it
is a cycle, as is a header including itself through others. Reads every
#include "..." under ROOT (system headers are not followed), resolves it
against the including file's folder and then ROOT (the build's -I.), and
prints each cycle or backwards edge. Exit 0 when there is none, 1 otherwise.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SKIP = {".git", "build", "dist", ".deps", ".whl", "node_modules"}


def sources(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in SKIP]
        for f in files:
            if f.endswith((".h", ".cuh", ".c", ".cu")):
                yield os.path.relpath(os.path.join(d, f), root)


def module(path):
    return os.path.splitext(path)[0]


def edges(root, h):
    text = open(os.path.join(root, h), encoding="utf-8", errors="replace").read()
    for inc in INCLUDE.findall(text):
        for base in (os.path.dirname(h), ""):
            p = os.path.normpath(os.path.join(base, inc))
            if os.path.isfile(os.path.join(root, p)):
                yield p
                break


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    graph = {}
    for f in sorted(sources(root)):
        deps = graph.setdefault(module(f), set())
        deps.update(module(n) for n in edges(root, f) if module(n) != module(f))
    graph = {m: sorted(d) for m, d in graph.items()}
    bad = 0
    state = {}  # 1 = on the DFS stack, 2 = done

    def visit(h, path):
        nonlocal bad
        state[h] = 1
        for n in graph.get(h, []):
            if state.get(n) == 1:
                print("include cycle: " + " -> ".join(path[path.index(n):] + [n]))
                bad += 1
            elif n not in state:
                visit(n, path + [n])
        state[h] = 2

    for h in graph:
        if h not in state:
            visit(h, [h])
    # Stage order: a header may include its own stage's or an earlier one's.
    stage = {"kernels": 0, "store": 1, "sweep": 2, "seeds": 3}
    late = {m: 4 for m in graph if m.startswith("sweep/cmd_") or m in ("sweep/cli", "sweep/main")}
    for h, incs in graph.items():
        sh = late.get(h, stage.get(h.split("/")[0], 9))
        for n in incs:
            sn = late.get(n, stage.get(n.split("/")[0], 9))
            if sn > sh:
                print(f"backwards include: {h} (stage {sh}) includes {n} (stage {sn})")
                bad += 1
    n_edges = sum(len(v) for v in graph.values())
    print(f"check_includes: {len(graph)} modules, {n_edges} dependencies, {bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
