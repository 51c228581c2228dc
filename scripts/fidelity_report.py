#!/usr/bin/env python3
"""fidelity_report.py A_SWEEP A_REFINED B_SWEEP B_REFINED [-k 4] [--tol 0.02]
       [--share 0.90] [--half 0.015] [--wall-a S --wall-b S] [--json OUT]
       [--space SPACE [--fasweep BIN]] [--what-if [--floor 0.007]]

Do two independent runs (separate processes, fresh stores) agree, and do the
intervals they claim hold? Inputs: `fasweep export --format jsonl` of each
run right after its sweep and right after its refine pass (`grid --refine K`
on the same store). Per (device, problem, mode) group of ok kernel records
(the intervals' criteria), it prints:
  (a) share: of the configs both sweeps measured, the share whose A-B
      difference lies within the combined half-width sqrt(hA^2 + hB^2), each
      half-width the side of its interval facing the other median (the tie
      rule of store/record.h, record_tie); a record without an interval
      counts as outside (it claims nothing to check);
  (b) half: the median half-width over configs, as a percent of the median;
  (c) top-k A vs B: the largest difference between the refined medians of
      A's top-k in A and in B; refine vs sweep: the largest difference of a
      refined median from its own run's sweep median (the refine folds more
      rounds into the sweep's record, so it also prints how far the refine's
      own rounds sit from the sweep's, for the record);
  (d) wall: the sweeps' wall times when given.
A group passes when share >= --share, half <= --half, both (c) <= --tol,
both runs measured it and every config of A's top-k is in B too (one that
is missing is not measured, never within tolerance). A verdict needs
something measured: no group at all is a FAIL, and so is every (problem,
mode) of --space SPACE (its problems and measure.modes, as `fasweep plan
--json` reads them: the binary --fasweep BIN, else $FASWEEP, else
build/fasweep) that no input has. --json writes the same numbers. Exit 0
when every group passes, 1 otherwise, 2 on bad input (an unreadable or
malformed file, a space fasweep refuses: one line naming it).

A second table, a what-if that never changes the verdict, recomputes every
record's estimate and interval from its stored round medians (time.round_us)
two ways: "mean", the engine's own method ported here (store/rounds.c: the
mean of the rounds, a pooled bootstrap of the relative residuals, the floor
--floor in quadrature), and "common", the same after a per-round common mode
is fitted and removed (log t[config, round] = a_config + b_round over the
group's records of one run, the sweep's rounds averaging b = 0; the estimate
is exp(a_config), the residuals are what is left). Round r of every record of
one run is the same pass of the engine (no resume inside bench_fidelity.sh),
and the refine's rounds come after the sweep's, so b_round also holds the
state the refine ran the GPU in (sweep/NOTES-engine.md). "port" says how far
the ported "mean" intervals sit from the stored ones (a check of the port).
"""
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also when loaded by path
from report_io import BadInput, Parser, esc, finite_or_none, json_lines, number, record_tie  # noqa: E402  (the export readers' shared rules)
import fasweep_cli  # noqa: E402  (problem texts and spaces as fasweep reads them)
import rounds  # noqa: E402  (the port of store/rounds.c)


def canon_problems(texts, binary=None):
    """{text: the problem text as space_problem_format writes it} for every
    text, as fasweep reads it (`fasweep problem`: "B,H[:KV],S,D[,DTYPE]"
    and the canonical text), or the text itself when it is no problem."""
    probs = fasweep_cli.problems(fasweep_cli.binary(binary), texts)
    return {t: p["problem"] if p else t for t, p in probs.items()}


def load(path):
    groups = {}
    for no, where, r in json_lines(path):
        try:
            k, t = r["key"], r.get("time")
            if r["kind"] != "kernel" or r["status"] != "ok":
                continue
            names = [k[f] for f in ("device", "problem", "mode", "config")]
            us = number(t["median_us"])
            lo, hi = t.get("ci_lo_us"), t.get("ci_hi_us")
            rounds_ = t.get("round_us") or []
        except (KeyError, TypeError, AttributeError) as e:
            raise BadInput("%s: not an exported record (%s %s)" % (
                where, type(e).__name__, esc(e, 80)))
        if not all(isinstance(x, str) for x in names):
            raise BadInput("%s: key.device, problem, mode and config must be text" % where)
        if us is None or us <= 0:
            raise BadInput("%s: an ok record needs time.median_us > 0, got %s" % (
                where, esc(json.dumps(t.get("median_us")), 40)))
        if any(x is not None and number(x) is None for x in (lo, hi)) or \
                not isinstance(rounds_, list) or \
                any(number(u) is None or u <= 0 for u in rounds_):
            raise BadInput("%s: time.ci_lo_us, ci_hi_us and round_us must be numbers (or "
                           "absent)" % where)
        device, problem, mode, config = names
        groups.setdefault((device, problem, mode), {})[config] = {
            "us": us, "lo": lo if lo is not None else math.nan,
            "hi": hi if hi is not None else math.nan, "clock": r.get("clock", {}),
            "rounds": rounds_}
    return groups


def expected_groups(path, binary=None):
    """{(problem, mode)} a sweep of the space at path measures: its
    problems (their canonical texts) by its measure.modes, as fasweep reads
    the space (`fasweep plan --json`: its refusal of a bad space is the
    BadInput)."""
    d = fasweep_cli.document(fasweep_cli.binary(binary), "plan", "--json", "--space", path)
    try:
        out = {(p["problem"], m) for p in d["problems"] for m in d["modes"]}
    except (KeyError, TypeError) as e:
        raise BadInput("%s: fasweep plan --json: no problems and modes (%s)" % (
            esc(path, 200), esc(e, 100)))
    if not out:
        raise BadInput("%s: the space has no problems" % esc(path, 200))
    return out


# ---- the what-if: intervals recomputed from the stored rounds ----------------------------
# The engine's arithmetic is scripts/rounds.py, a port of store/rounds.c
# (same seed, generator, percentiles, t table and floor), so "mean"
# reproduces the stored intervals and "common" differs only by the model.


def boot_interval(n, pool, groups, floor, cache):
    """rounds_interval: (lo, hi) relative to the estimate, or None; cached
    per n (cache: one per pool)."""
    if n not in cache:
        iv = rounds.interval(n, pool, groups, floor)
        if iv is None:
            return None
        cache[n] = iv
    return cache[n]


def fit_common(g):
    """a[config] and b[round] of log t = a + b, the sweep's rounds averaging
    b = 0 (the sweep's rounds: those every record of the group has)."""
    y = {c: [math.log(u) for u in r["rounds"]] for c, r in g.items() if r["rounds"]}
    if not y:
        return {}, []
    nr = max(len(v) for v in y.values())
    sweep = min(len(v) for v in y.values())
    a, b = {c: sum(v) / len(v) for c, v in y.items()}, [0.0] * nr
    for _ in range(200):
        for r in range(nr):
            d = [v[r] - a[c] for c, v in y.items() if len(v) > r]
            b[r] = sum(d) / len(d)
        shift = sum(b[:sweep]) / sweep
        b = [x - shift for x in b]
        a = {c: sum(v[r] - b[r] for r in range(len(v))) / len(v) for c, v in y.items()}
    return a, b


def recompute(g, model, floor):
    """{config: record-like dict} with the estimate and interval of model."""
    if model == "common":
        a, b = fit_common(g)
        est = {c: math.exp(a[c]) for c in a}
        res = {c: [u / est[c] / math.exp(b[r]) - 1 for r, u in enumerate(g[c]["rounds"])]
               for c in a}
    else:
        est = {c: rounds.estimate(r["rounds"]) for c, r in g.items() if r["rounds"]}
        res = {c: [u / est[c] - 1 for u in g[c]["rounds"]] for c in est}
    pool, groups = [], 0
    for c in g:  # the export's order is the store's key order, as the engine pools
        n = len(res.get(c, []))
        if n >= 2:
            pool += [e * rounds.scale(n) for e in res[c]]  # rounds_pool_add's scaling
            groups += 1
    out, cache = {}, {}
    for c, u in est.items():
        iv = boot_interval(len(g[c]["rounds"]), pool, groups, floor, cache)
        lo, hi = (u * (1 + iv[0]), u * (1 + iv[1])) if iv else (math.nan, math.nan)
        out[c] = {"us": u, "lo": lo, "hi": hi, "rounds": g[c]["rounds"]}
    return out


def port_gap(stored, ported):
    """The largest |ported - stored| half-width, as a share of the stored one."""
    gaps = [abs((p["hi"] - p["lo"]) / (s["hi"] - s["lo"]) - 1)
            for c, s in stored.items() if c in ported and not math.isnan(s["hi"])
            for p in (ported[c],) if not math.isnan(p["hi"])]
    return max(gaps) if gaps else math.nan


def what_if(runs, model, floor):
    """runs with every group's records recomputed by model."""
    return {n: {g: recompute(recs, model, floor) for g, recs in run.items()}
            for n, run in runs.items()}


def ranked(g):
    """Fastest first (record_rank_order's first key)."""
    return sorted(g, key=lambda c: (g[c]["us"], c))


def within(a, b):
    """Whether the two runs' medians of a config tie by their intervals (record_tie)."""
    return bool(record_tie(*((r["us"], r["lo"], r["hi"]) for r in (a, b))))


def median_ci(xs):
    """The median of xs and a distribution-free 95 % interval for it: the order
    statistics whose ranks the binomial(n, 1/2) puts 1.96 sigma either side of
    n/2 (the normal approximation), clipped to the sample."""
    v = sorted(xs)
    n = len(v)
    h = 0.98 * math.sqrt(n)  # 1.96 * sqrt(n) / 2
    lo, hi = max(0, math.floor(n / 2 - h)), min(n - 1, math.ceil(n / 2 + h) - 1)
    return statistics.median(v), v[lo], v[hi]


def round_bias(run):
    """Per round r of a sweep's records of one group: the median over its configs
    of 100 log(round r / the median of the config's other rounds), in %, with its
    95 % interval over the configs (median_ci): [median, lo, hi]. A round that
    sits above the others for every config (the first round of a process,
    sweep/NOTES-engine.md) shows here; [] when no config has two rounds."""
    n = min((len(r["rounds"]) for r in run.values()), default=0)
    out = []
    for i in range(n if n >= 2 else 0):
        d = [100 * math.log(r["rounds"][i] / statistics.median(r["rounds"][:i] +
                                                                r["rounds"][i + 1:n]))
             for r in run.values()]
        out.append(list(median_ci(d)))
    return out


def group_numbers(g, runs, k):
    asw, bsw = runs["a_sweep"].get(g, {}), runs["b_sweep"].get(g, {})
    ar, br = runs["a_refined"].get(g, {}), runs["b_refined"].get(g, {})
    common = [c for c in asw if c in bsw]
    share = sum(within(asw[c], bsw[c]) for c in common) / len(common) if common else math.nan
    halves = [(r["hi"] - r["lo"]) / 2 / r["us"] for run in (asw, bsw) for r in run.values()
              if not math.isnan(r["hi"])]
    top = ranked(ar)[:k]
    ab = [abs(br[c]["us"] - ar[c]["us"]) / ar[c]["us"] for c in top if c in br]
    rs = [abs(run_r[c]["us"] - run_s[c]["us"]) / run_s[c]["us"]
          for run_r, run_s in ((ar, asw), (br, bsw)) for c in ranked(run_r)[:k] if c in run_s]
    # The refine folds more rounds into the sweep's record: how far its own
    # rounds (past the sweep's) sit from the sweep's rounds, for the record.
    own = []
    for run_r, run_s in ((ar, asw), (br, bsw)):
        for c in ranked(run_r)[:k]:
            if c in run_s and len(run_r[c]["rounds"]) > len(run_s[c]["rounds"]) > 0:
                n0 = len(run_s[c]["rounds"])
                new, old = run_r[c]["rounds"][n0:], run_s[c]["rounds"]
                own.append(abs(sum(new) / len(new) / (sum(old) / len(old)) - 1))
    return {"device": g[0], "problem": g[1], "mode": g[2], "configs": len(common),
            # inputs without the group: a run that did not measure it
            "missing_from": [n for n in RUNS if g not in runs[n]],
            # A's refined top-k that B's refine has not: not measured there
            "top_missing": sum(c not in br for c in top),
            "refine_rounds_vs_sweep_rounds_max_pct": 100 * max(own) if own else math.nan,
            "share_within": share,
            "median_half_pct": 100 * statistics.median(halves) if halves else math.nan,
            "no_interval": sum(math.isnan(r["hi"]) for run in (asw, bsw) for r in run.values()),
            "top_ab_max_pct": 100 * max(ab) if ab else math.nan,
            "refine_vs_sweep_max_pct": 100 * max(rs) if rs else math.nan,
            "top1_a": ranked(ar)[0] if ar else None, "top1_b": ranked(br)[0] if br else None,
            "round_bias_pct": {"a": round_bias(asw), "b": round_bias(bsw)}}


def passes(n, args):
    """A group's verdict by the intervals' criteria (the what-if's too). What
    was not measured never passes: a group some input lacks, no config
    in both sweeps, or one of A's top-k missing from B (NaN numbers, which
    fail every comparison, say the same)."""
    return bool(not n["missing_from"] and n["configs"] > 0 and n["top_missing"] == 0
                and n["share_within"] >= args.share and n["median_half_pct"] <= 100 * args.half
                and n["top_ab_max_pct"] <= 100 * args.tol
                and n["refine_vs_sweep_max_pct"] <= 100 * args.tol)


RUNS = ("a_sweep", "a_refined", "b_sweep", "b_refined")


def fail(line):
    """Bad input: one line on stderr, exit 2."""
    print(line, file=sys.stderr)
    sys.exit(2)


def fmt(x, spec):
    """x by spec, or "-" when there is nothing (None or NaN)."""
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else spec % x


def main():
    ap = Parser(prog="fidelity_report.py")
    for n in RUNS:
        ap.add_argument(n)
    ap.add_argument("-k", type=int, default=4)
    ap.add_argument("--tol", type=float, default=0.02)
    ap.add_argument("--share", type=float, default=0.90)
    ap.add_argument("--half", type=float, default=0.015)
    ap.add_argument("--wall-a", type=float, help="run A's sweep wall time (absent: not measured)")
    ap.add_argument("--wall-b", type=float, help="run B's sweep wall time (absent: not measured)")
    ap.add_argument("--name", default="")
    ap.add_argument("--space", help="the swept space: each of its (problem, mode) must be "
                                    "measured, or the report fails")
    fasweep_cli.add_option(ap, "--space's problems and modes and the canonical problem texts")
    ap.add_argument("--json")
    ap.add_argument("--what-if", action="store_true",
                    help="also recompute the intervals from the rounds: the engine's method "
                         "and with a per-round common mode removed")
    ap.add_argument("--floor", type=float, default=0.007,
                    help="the what-if's floor (the space's measure.ci_floor)")
    args = ap.parse_args()
    if args.k < 1:
        ap.error("-k must be at least 1")
    try:
        runs = {n: load(getattr(args, n)) for n in RUNS}
        expected = expected_groups(args.space, args.fasweep) if args.space else set()
        groups = sorted(set().union(*(runs[n] for n in RUNS)))
        canon = canon_problems({g[1] for g in groups}, args.fasweep) if args.space else {}
    except BadInput as e:
        fail("fidelity_report.py: %s" % e)
    name = esc(args.name, 40)
    rows, ok = [], True
    print("%-8s %-22s %-5s %7s %8s %9s %11s %8s %s" % (
        "space", "problem", "mode", "configs", "(a)share", "(b)half%", "(c)topA-B%", "ref-swp%",
        "verdict"))
    for g in groups:
        n = group_numbers(g, runs, args.k)
        passed = passes(n, args)
        n["pass"] = bool(passed)
        ok &= passed
        rows.append(n)
        why = []
        if n["missing_from"]:
            why.append("not in " + ", ".join(n["missing_from"]))
        if n["top_missing"]:
            why.append("%d of A's top-%d not measured in B" % (n["top_missing"], args.k))
        print("%-8s %-22s %-5s %7d %8s %9s %11s %8s %s  (refine's own rounds vs the "
              "sweep's: %s %%)%s" % (
                  name, esc(g[1], 22), esc(g[2], 5), n["configs"],
                  fmt(100 * n["share_within"], "%.1f%%"), fmt(n["median_half_pct"], "%.2f"),
                  fmt(n["top_ab_max_pct"], "%.2f"), fmt(n["refine_vs_sweep_max_pct"], "%.2f"),
                  "PASS" if passed else "FAIL", fmt(n["refine_rounds_vs_sweep_rounds_max_pct"],
                                                    "%.2f"),
                  ": " + "; ".join(why) if why else ""))
    # Every (problem, mode) the space sweeps must have been measured.
    have = {(canon[g[1]], g[2]) for g in groups} if args.space else set()
    missing = sorted(expected - have)
    for p, m in missing:
        print("%-8s %-22s %-5s %7d %8s %9s %11s %8s FAIL: not measured (no ok record in any "
              "input)" % (name, p, esc(m, 5), 0, "-", "-", "-", "-"))
    if not groups:
        print("%-8s no group of ok kernel records in any input: nothing was measured, FAIL"
              % name)
    ok = ok and bool(groups) and not missing
    for n in rows:
        if n["round_bias_pct"]["a"] or n["round_bias_pct"]["b"]:
            print("%-8s %-22s %-5s round bias (not the verdict; each round against the run's "
                  "other rounds, median over configs [95 %% interval over configs]): A %s, B %s"
                  % (name, esc(n["problem"], 22), esc(n["mode"], 5),
                     " ".join("%+.2f%% [%+.2f, %+.2f]" % tuple(x)
                              for x in n["round_bias_pct"]["a"]) or "-",
                     " ".join("%+.2f%% [%+.2f, %+.2f]" % tuple(x)
                              for x in n["round_bias_pct"]["b"]) or "-"))
    if args.wall_a is not None or args.wall_b is not None:
        print("%-8s (d) sweep wall time: A %s, B %s" % (
            name, fmt(args.wall_a, "%.2f s"), fmt(args.wall_b, "%.2f s")))
    whatif = {}
    if args.what_if:
        print("what-if (not the verdict): the intervals recomputed from the stored rounds, "
              "floor %.3f" % args.floor)
        print("%-8s %-22s %-5s %-6s %8s %9s %11s %8s %7s" % (
            "space", "problem", "mode", "model", "(a)share", "(b)half%", "(c)topA-B%",
            "ref-swp%", "port%"))
        for model in ("mean", "common"):
            wr = what_if(runs, model, args.floor)
            for g in sorted(set().union(*(wr[n] for n in RUNS))):
                n = group_numbers(g, wr, args.k)
                n["port_gap_pct"] = 100 * max(
                    [port_gap(runs[r].get(g, {}), wr[r].get(g, {})) for r in ("a_sweep", "b_sweep")
                     if model == "mean"] or [math.nan])
                n["pass"] = passes(n, args)
                whatif.setdefault(model, []).append(n)
                print("%-8s %-22s %-5s %-6s %7.1f%% %9.2f %11.2f %8.2f %7.2f %s" % (
                    name, esc(g[1], 22), esc(g[2], 5), model, 100 * n["share_within"],
                    n["median_half_pct"], n["top_ab_max_pct"], n["refine_vs_sweep_max_pct"],
                    n["port_gap_pct"], "would pass" if n["pass"] else "would fail"))
    if args.json:
        doc = finite_or_none({"space": args.name, "wall_s": [args.wall_a, args.wall_b],
                     "criteria": {"share_min": args.share,
                                  "half_max_pct": 100 * args.half,
                                  "top_ab_max_pct": 100 * args.tol,
                                  "refine_vs_sweep_max_pct": 100 * args.tol},
                     "groups": rows, "not_measured": [{"problem": p, "mode": m}
                                                      for p, m in missing],
                     "pass": bool(ok), "what_if": whatif})
        try:
            with open(args.json, "w") as f:
                json.dump(doc, f, indent=1)
        except OSError as e:
            fail("fidelity_report.py: %s: %s" % (esc(args.json, 200), esc(e.strerror or e, 200)))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
