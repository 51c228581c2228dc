#!/usr/bin/env python3
"""doc_samples.py FASWEEP REPO DIR DOC... - replays the command samples of the docs.

A sample is a fenced block whose first line is `$ fasweep import
tests/cli/fixtures/...`: the CLI tests' fixture, so its output is known.
Its lines starting with "$ " are commands and its other lines what the
command before them prints (stdout and stderr together). Other blocks are
illustrations (GPU runs, output cut with "...") and are not replayed. Each
sample runs in a fresh folder under DIR, with bash, where `fasweep` is
FASWEEP and `tests` is a link to REPO/tests, so its store stays there. The
commands are taken from the docs, so an option renamed in a doc is followed.

Exit 0 when every sample prints exactly what its doc shows; 1 with a diff per
mismatch; 2 on bad arguments or a doc without a `$ fasweep` sample (a check
that finds nothing must not pass).
"""

import difflib
import os
import subprocess
import sys

SAMPLE = "$ fasweep import tests/cli/fixtures/"


def samples(path):
    """[[(line number, command, expected output lines)]]: the doc's samples."""
    out, block, cur = [], None, None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("```"):
                if block:
                    out.append(block)
                block = [] if block is None else None
                cur = None
                continue
            if block is None:
                continue
            if not block and cur is None and not line.startswith(SAMPLE):
                block = False  # an illustration: skip to its end
            if block is False:
                continue
            if line.startswith("$ "):
                cur = (n, line[2:], [])
                block.append(cur)
            else:
                cur[2].append(line)
    return out


def run(fasweep, cwd, cmd):
    script = 'fasweep() { "$FASWEEP" "$@"; }\n' + cmd
    env = dict(os.environ, FASWEEP=fasweep)
    env.pop("FASWEEP_STORE", None)
    p = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return p.stdout.splitlines()


def main(argv):
    if len(argv) < 5:
        print("usage: doc_samples.py FASWEEP REPO DIR DOC...", file=sys.stderr)
        return 2
    fasweep, repo, work, docs = argv[1], argv[2], argv[3], argv[4:]
    bad, k = 0, 0
    for doc in docs:
        found = samples(doc)
        if not found:
            print("doc_samples: %s has no sample starting `%s`" % (doc, SAMPLE), file=sys.stderr)
            return 2
        for sample in found:
            k += 1
            cwd = os.path.join(work, "sample%d" % k)
            os.makedirs(cwd)
            os.symlink(os.path.join(repo, "tests"), os.path.join(cwd, "tests"))
            for n, cmd, want in sample:
                got = run(fasweep, cwd, cmd)
                if got != want:
                    bad += 1
                    print("%s:%d: `%s` prints other than the doc shows:" % (doc, n, cmd))
                    sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(
                        want, got, "doc", "fasweep", lineterm=""))
                else:
                    print("%s:%d: ok: %s" % (doc, n, cmd))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
