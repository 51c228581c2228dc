#!/usr/bin/env python3
"""bench_table.py EXPORT.jsonl [--json OUT] [--fasweep BIN] - the side-by-side table of
scripts/bench_vs_sdpa.sh: per problem (B,H,S,D, causal; K/V heads and dtype
as its text says: b1.h32.kv8.s4096.d128.c.bf16) the fastest ok record
of each fasweep kernel family and each SDPA backend (cuDNN, FA2 = sdpa-flash,
efficient) and of the autotuned Triton kernel (Triton = config "triton",
scripts/triton_attention.py), in microseconds for every mode
present (hot, cold, batch) with TF/s (4*B*H*S^2*D / time, halved for causal),
and fasweep's best over the best peer per mode. Every number comes from one
store, measured in one run on one GPU with the engine's method (CUDA events,
warm-up, the median; cold = a 2xL2 flush before each launch, outside the
events; batch = back-to-back launches between one event pair:
docs/measurement.md). A record's 95 % interval, where it has one, is shown as
+-percent. The Triton column is always there: "n/a" for a problem that has
no triton record (sdpa_baseline.py leaves triton out, with a note, where
Triton cannot run or has no kernel for the head dim).

The problem texts are read by fasweep (`fasweep problem --json`: --fasweep
BIN, else $FASWEEP, else build/fasweep); one that is no problem (the store
takes any key text) is shown without TF/s. Exit 0 with a table, 1 when the
export holds no ok record to tabulate (nothing was measured), 2 on bad
input (one line naming the file: unreadable, not JSON, not an exported
record) or when fasweep cannot read the problems (its one line)."""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also when run from elsewhere
from report_io import BadInput, Parser, esc, finite_or_none, json_lines, number  # noqa: E402  (the export readers' shared rules)
import fasweep_cli  # noqa: E402  (problem texts as fasweep reads them)

PEERS = [("sdpa-cudnn", "cuDNN"), ("sdpa-flash", "FA2"), ("sdpa-efficient", "efficient"),
         ("triton", "Triton")]  # (records' config prefix: sdpa_baseline.py's CONFIG_NAMES, column)
ALWAYS = ("Triton",)  # shown without records too ("n/a": not available there)
MODES = ("hot", "cold", "batch")
ME = "bench_table.py"


def records(path):
    """(line, record) of every record of the export at path."""
    for no, where, r in json_lines(path):
        yield no, r


def load(path):
    """{(problem, mode, column): record}, the fastest ok record of each."""
    best = {}
    for no, r in records(path):
        where = "%s:%d" % (esc(path, 200), no)
        try:
            if r["status"] != "ok":
                continue
            k = r["key"]
            if not all(isinstance(k[f], str) for f in ("problem", "mode", "config", "build")):
                raise TypeError("key.problem, mode, config and build must be text")
            if r["kind"] == "kernel":
                if k["build"].startswith("src-"):
                    continue  # edited kernels are not the families' instances
                col = "fasweep " + str(k.get("family") or "mma")
            else:
                col = next((name for base, name in PEERS if k["config"].startswith(base)), None)
                if col is None:
                    continue
            t = r["time"]
            us = number(t["median_us"])
            if us is None or us <= 0:
                raise ValueError("an ok record needs time.median_us > 0, got %s"
                                 % esc(json.dumps(t["median_us"]), 40))
            for f in ("ci_lo_us", "ci_hi_us"):
                if t.get(f) is not None and number(t[f]) is None:
                    raise ValueError("time.%s must be a number" % f)
        except (KeyError, TypeError, AttributeError, ValueError) as e:
            raise BadInput("%s: not an exported record (%s)" % (
                where, esc(e if not isinstance(e, KeyError) else "no %s" % e, 100)))
        key = (k["problem"], k["mode"], col)
        if key not in best or us < best[key]["time"]["median_us"]:
            best[key] = r
    return best


def main():
    ap = Parser(prog=ME)
    ap.add_argument("export")
    ap.add_argument("--json")
    fasweep_cli.add_option(ap, "the problem texts (their FLOPs)")
    a = ap.parse_args()
    try:
        best = load(a.export)
        # each problem text as the engine reads it (its FLOPs); None: no problem
        probs = fasweep_cli.problems(fasweep_cli.binary(a.fasweep), {p for p, _, _ in best})
    except BadInput as e:
        print("%s: %s" % (ME, e), file=sys.stderr)
        return 2
    if not best:
        print("%s: %s: no ok record of a fasweep family or an SDPA backend: nothing measured "
              "to tabulate" % (ME, esc(a.export, 200)), file=sys.stderr)
        return 1
    problems = sorted({p for p, _, _ in best})
    cols = sorted({c for _, _, c in best if c.startswith("fasweep")}) + \
        [name for _, name in PEERS if name in ALWAYS or any(c == name for _, _, c in best)]
    rows = []
    for p in problems:
        fl = probs[p]["flops"] if probs[p] else None
        print("== %s" % esc(p))
        if fl is None:
            print("  (not a B,H,S,D problem text: no TF/s)")
        print("  %-6s " % "mode" + " ".join("%-22s" % esc(c, 22) for c in cols) +
              "  fasweep/best peer")
        for m in MODES:
            cells, times = [], {}
            for c in cols:
                r = best.get((p, m, c))
                if not r:
                    na = c in ALWAYS and not any(best.get((p, mm, c)) for mm in MODES)
                    cells.append("%-22s" % ("n/a" if na else "-"))
                    continue
                t = r["time"]
                us = t["median_us"]
                times[c] = us
                ci = ""
                if t.get("ci_lo_us") is not None and t.get("ci_hi_us") is not None:
                    ci = " +-%.1f%%" % (100 * (t["ci_hi_us"] - t["ci_lo_us"]) / 2 / us)
                tf = " (%.0f TF/s)" % (fl / us * 1e-6) if fl is not None else ""
                cells.append("%-22s" % ("%.2f%s%s" % (us, ci, tf)))
            if not times:
                continue
            ours = min((v for c, v in times.items() if c.startswith("fasweep")), default=None)
            peer = min((v for c, v in times.items() if not c.startswith("fasweep")), default=None)
            ratio = peer / ours if ours and peer else math.nan
            print("  %-6s " % m + " ".join(cells) + "  " +
                  ("-" if math.isnan(ratio) else "%.2fx" % ratio))
            rows.append({"problem": p, "mode": m, "us": times, "fasweep_over_best_peer": ratio,
                         "configs": {c: best[(p, m, c)]["key"]["config"] for c in times}})
    print("(x > 1: fasweep's best is faster than the best peer; TF/s = 4*B*H*S^2*D / time, "
          "halved for causal)")
    for c in ALWAYS:
        if not any(cc == c for _, _, cc in best):
            print("(%s: n/a, not available: no ok %s record in this export; sdpa_baseline.py "
                  "notes why on stderr)" % (c, c))
    if a.json:
        doc = {"rows": rows, "method": "engine: CUDA events, median; cold flushes 2xL2 "
               "before each launch outside the events; batch = back-to-back launches"}
        try:
            with open(a.json, "w") as f:
                json.dump(finite_or_none(doc), f, indent=1)  # NaN (no ratio) as null
        except OSError as e:
            print("%s: %s: %s" % (ME, esc(a.json, 200), esc(e.strerror or e, 200)),
                  file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
