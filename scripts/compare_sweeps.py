#!/usr/bin/env python3
"""compare_sweeps.py A.jsonl B.jsonl [-k 8] [--mode hot|all] [--agreement K [--share S]] - are
two sweeps of the same space the same answer? For each (device, problem, mode)
group of kernel records with status ok (--mode all: every mode stored; a config
of another family than mma is named FAMILY:CONFIG):
  default: whether the top-1 config agrees, and the relative difference of the
    medians of the top-k configs of A as measured in A and in B (the sweep
    engine's criterion: top-1 agrees, top-8 medians within 2 %);
  --agreement K: whether the top-1 config agrees, or, where it does not,
    whether the two top-1 configs tie by their 95 % intervals (record_tie,
    docs/measurement.md "Comparing two timings") in A and in B alike, and how
    many of A's top-K are among B's top-K; then a line of the records (how
    many, duplicates: a point stored twice, of any build; distinct
    env.gpu_uuid), a line of the intervals (the share of the configs both
    measured whose two medians tie by their intervals, as
    scripts/bench_fidelity.sh counts it, against --share, and each sweep's
    median half-width; not judged where no config has an interval in both)
    and a summary line. A group passes when its top-1 agrees or ties.
Input: `fasweep export --format jsonl`. Exit 0 when every group passes, 1
otherwise, 2 on bad input (one line naming the file). What was not measured
never passes: no group in A (nothing to compare), a group one sweep lacks, or
one of A's top-k that B did not measure is a FAIL."""
import os
import statistics
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also when run from elsewhere
from report_io import BadInput, Parser, esc, json_lines, number, record_tie  # noqa: E402  (the export readers' shared rules)

ME = "compare_sweeps.py"


def load(path, mode):
    """The ok kernel records of mode (None: every mode) by group (device,
    problem, mode) and config: (median, noise, config) as `fasweep topk`
    ranks (median, then noise, then config), and (median, ci_lo, ci_hi);
    and of every record: how many, how many stored twice, the GPU UUIDs."""
    groups, seen = {}, set()
    info = {"records": 0, "dups": 0, "uuids": set()}
    for no, where, r in json_lines(path):
        try:
            k = r["key"]
            fam = k.get("family") or "mma"
            point = (r["kind"], k["device"], k["problem"], fam, k["config"], k["mode"])
            hash(point)
            env = r.get("env") or {}
            uuid = env.get("gpu_uuid")
            if r["kind"] != "kernel" or r["status"] != "ok" or mode not in (None, k["mode"]):
                us = None
            else:
                t = r["time"]
                us, noise = number(t["median_us"]), t.get("noise")
                lo, hi = number(t.get("ci_lo_us")), number(t.get("ci_hi_us"))
        except (KeyError, TypeError, AttributeError) as e:
            raise BadInput("%s: not an exported record (%s)" % (
                where, esc(e if not isinstance(e, KeyError) else "no %s" % e, 100)))
        if not all(isinstance(x, str) for x in point[1:]):
            raise BadInput("%s: key.device, problem, family, config and mode must be text" % where)
        info["records"] += 1
        info["dups"] += point in seen
        seen.add(point)
        if isinstance(uuid, str) and uuid:
            info["uuids"].add(uuid)
        if point[0] != "kernel" or r["status"] != "ok" or mode not in (None, point[5]):
            continue
        if us is None or us <= 0:
            raise BadInput("%s: an ok record needs time.median_us > 0" % where)
        noise = number(noise)
        config = point[4] if fam == "mma" else "%s:%s" % (fam, point[4])
        groups.setdefault((point[1], point[2], point[5]), {})[config] = (
            (us, noise if noise is not None else float("inf"), config), (us, lo, hi))
    return groups, info


def tie_name(t):
    return {True: "yes", False: "no", None: "unknown"}[t]


def ranked(group):
    return sorted(group, key=lambda c: group[c][0])


def medians(args, mode, g, ga, gb):
    """The default comparison of one group; whether it passes."""
    ra, rb = ranked(ga), ranked(gb)
    top = ra[: args.k]
    diffs = [abs(gb[c][0][0] - ga[c][0][0]) / ga[c][0][0] for c in top if c in gb]
    unmeasured = len(top) - len(diffs)
    worst = max(diffs) if diffs else float("nan")
    same1 = ra[0] == rb[0]
    passed = same1 and unmeasured == 0 and worst <= args.tol
    print(f"{esc(g[0])} {esc(g[1])} {mode}: top-1 A {esc(ra[0])} ({ga[ra[0]][0][0]:.3f} us) "
          f"B {esc(rb[0])} ({gb[rb[0]][0][0]:.3f} us) {'agree' if same1 else 'DIFFER'}; "
          f"top-{len(top)} medians differ by at most {100 * worst:.2f} % "
          f"(tolerance {100 * args.tol:.0f} %)"
          + (f", {unmeasured} of them not measured in B" if unmeasured else "")
          + f": {'PASS' if passed else 'FAIL'}")
    return passed


def agreement(args, mode, g, ga, gb, count):
    """The --agreement comparison of one group, counted into count;
    whether it passes (top-1 agrees or ties)."""
    ra, rb = ranked(ga), ranked(gb)
    a1, b1 = ra[0], rb[0]
    line = f"{esc(g[0])} {esc(g[1])} {mode}: top-1 A {esc(a1)} ({ga[a1][0][0]:.3f} us) " \
           f"B {esc(b1)} ({gb[b1][0][0]:.3f} us) "
    if a1 == b1:
        verdict = "agree"
        line += "agree"
    else:
        # in each sweep: can its top-1 be told apart from the other's?
        ta = record_tie(ga[a1][1], ga[b1][1]) if b1 in ga else None
        tb = record_tie(gb[b1][1], gb[a1][1]) if a1 in gb else None
        verdict = "tie" if ta and tb else "differ"
        line += "DIFFER, " + ("a tie by the 95 % intervals in A and B" if verdict == "tie" else
                              "not a tie (tie in A: %s, in B: %s)" % (
                                  tie_name(ta) if b1 in ga else "not measured",
                                  tie_name(tb) if a1 in gb else "not measured"))
    n = min(args.agreement, max(len(ra), len(rb)))
    both = len(set(ra[:n]) & set(rb[:n]))
    count[verdict] += 1
    count["overlap"] += both
    count["of"] += n
    print(f"{line}; top-{args.agreement} overlap {both} of {n}")
    return verdict != "differ"


def intervals(args, a, b):
    """The intervals' line (--agreement): of the configs of every group both
    measured with an interval in both, the share whose medians tie by the
    intervals (record_tie), and each sweep's median half-width (% of its
    median); whether it passes (the share at least --share, or nothing to
    judge)."""
    ties, hw = [], ([], [])
    for g in sorted(set(a) & set(b)):
        for c in sorted(set(a[g]) & set(b[g])):
            t = record_tie(a[g][c][1], b[g][c][1])
            if t is None:
                continue
            ties.append(t)
            for h, x in zip(hw, (a[g][c][1], b[g][c][1])):
                h.append(100 * (x[2] - x[1]) / 2 / x[0])
    if not ties:
        print("intervals: no config measured in both has an interval in both "
              "(fewer than two rounds): not judged")
        return True
    share = sum(ties) / len(ties)
    ok = share >= args.share
    print("intervals: %d of %d (config, mode) pairs tie by their 95 %% intervals (%.1f %%, at least %.0f %%): %s; "
          "median half-width A %.2f %%, B %.2f %%" % (
              sum(ties), len(ties), 100 * share, 100 * args.share, "PASS" if ok else "FAIL",
              statistics.median(hw[0]), statistics.median(hw[1])))
    return ok


def records(args, ia, ib):
    """The records' checks (--agreement): the same number in both, none
    stored twice, B's GPUs (--gpus); whether they pass."""
    same = ia["records"] == ib["records"]
    nodup = ia["dups"] == 0 and ib["dups"] == 0
    print("records: A %d, B %d: %s" % (ia["records"], ib["records"], "PASS" if same else "FAIL"))
    print("duplicates: A %d, B %d: %s" % (ia["dups"], ib["dups"], "PASS" if nodup else "FAIL"))
    gpus = "GPU UUIDs (env.gpu_uuid): A %d, B %d" % (len(ia["uuids"]), len(ib["uuids"]))
    if args.gpus is None:
        print(gpus)
        return same and nodup
    ok = len(ib["uuids"]) == args.gpus
    print("%s: %s" % (gpus, "PASS" if ok else "FAIL (%d expected in B)" % args.gpus))
    return same and nodup and ok


def main():
    ap = Parser(prog=ME)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("-k", type=int, default=8)
    ap.add_argument("--mode", default="hot", help="a mode, or all")
    ap.add_argument("--tol", type=float, default=0.02)
    ap.add_argument("--agreement", type=int, metavar="K",
                    help="top-1 agreement or tie, and the overlap of the top-K")
    ap.add_argument("--share", type=float, default=0.90, metavar="S",
                    help="with --agreement: the least share of configs whose medians tie")
    ap.add_argument("--gpus", type=int, metavar="N",
                    help="with --agreement: B's records should carry N distinct env.gpu_uuid")
    args = ap.parse_args()
    if args.k < 1 or (args.agreement is not None and args.agreement < 1):
        ap.error("-k and --agreement must be at least 1")
    if args.gpus is not None and (args.agreement is None or args.gpus < 1):
        ap.error("--gpus needs --agreement and is at least 1")
    if not 0 < args.share <= 1:
        ap.error("--share is a fraction in (0, 1]")
    try:
        (a, ia), (b, ib) = (load(p, None if args.mode == "all" else args.mode)
                            for p in (args.a, args.b))
    except BadInput as e:
        print("%s: %s" % (ME, e), file=sys.stderr)
        sys.exit(2)
    if not a:
        print("%s: no ok kernel record in mode %s: nothing measured to compare: FAIL"
              % (esc(args.a, 200), esc(args.mode, 8)))
        sys.exit(1)
    ok = True
    count = {"agree": 0, "tie": 0, "differ": 0, "overlap": 0, "of": 0}
    for g in sorted(b):
        if g not in a:
            print(f"{esc(g[0])} {esc(g[1])} {esc(g[2], 8)}: missing from {esc(args.a, 200)}: FAIL")
            ok = False
    for g in sorted(a):
        mode = esc(g[2], 8)
        if g not in b:
            print(f"{esc(g[0])} {esc(g[1])} {mode}: missing from {esc(args.b, 200)}: FAIL")
            ok = False
        elif args.agreement is None:
            ok &= medians(args, mode, g, a[g], b[g])
        else:
            ok &= agreement(args, mode, g, a[g], b[g], count)
    if args.agreement is not None:
        ok &= records(args, ia, ib)
        ok &= intervals(args, a, b)
        n = len(set(a) | set(b))
        print("agreement: %d groups (mode %s): top-1 agree %d, tie %d, differ %d; "
              "top-%d overlap %d of %d (%.0f %%): %s" % (
                  n, esc(args.mode, 8), count["agree"], count["tie"], n - count["agree"] - count["tie"],
                  args.agreement, count["overlap"], count["of"],
                  100 * count["overlap"] / count["of"] if count["of"] else 0, "PASS" if ok else "FAIL"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
