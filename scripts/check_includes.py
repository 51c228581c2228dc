#!/usr/bin/env python3
"""check_includes.py [ROOT] - no module of the project depends, directly or
through others, on a module that depends on it back (an include cycle), and
a file includes only headers of its own folder or a lower layer (data
flows one way: cli -> sweep -> grid, seeds -> store, kernels; see LAYER).

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
# The layers, lowest first (README "How it fits together").
LAYER = {"kernels": 0, "store": 0, "grid": 1, "seeds": 2, "report": 2, "export": 2, "sweep": 3, "cli": 4}
MAX_SHARE = 0.30
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
    # Folder layers: a file may include headers of its own folder or of a
    # lower layer, never a higher one (data flows one way: cli -> sweep ->
    # grid, seeds -> store, kernels). Checked per file, not per module, so
    # a source file reaching up is caught too. Nothing outside cli/ may
    # include cli/ (tests and scripts included).
    for f in sorted(sources(root)):
        top = f.split(os.sep)[0]
        for n in edges(root, f):
            ntop = n.split(os.sep)[0]
            if ntop == "cli" and top != "cli":
                print(f"layer violation: {f} includes {n} (only cli/ includes cli/)")
                bad += 1
            elif top in LAYER and ntop in LAYER and LAYER[ntop] > LAYER[top]:
                print(f"layer violation: {f} ({top}/, layer {LAYER[top]}) includes {n} "
                      f"({ntop}/, layer {LAYER[ntop]})")
                bad += 1
    # No layer grows into the whole program: the largest folder holds at most
    # MAX_SHARE of the layers' C/CUDA lines (sweep/ once held 47 % of them).
    lines = {}
    for f in sources(root):
        top = f.split(os.sep)[0]
        if top in LAYER:
            with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
                lines[top] = lines.get(top, 0) + sum(1 for _ in fh)
    total = sum(lines.values())
    for top, n in sorted(lines.items()):
        if total and n / total > MAX_SHARE:
            print(f"layer too large: {top}/ holds {n} of {total} C/CUDA lines "
                  f"({100 * n / total:.0f} %, at most {100 * MAX_SHARE:.0f} %)")
            bad += 1
    n_edges = sum(len(v) for v in graph.values())
    print(f"check_includes: {len(graph)} modules, {n_edges} dependencies, {bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
