"""rounds.py - a digit-exact Python port of store/rounds.c: the engine's
interval from rounds spread over a run (store/rounds.h says why;
docs/measurement.md, "Intervals", how).

  estimate(m)                   the mean of the round medians (rounds_estimate)
  pool_add(m, pool)             m's relative residuals, scaled by sqrt(n/(n-1)),
                                appended to pool (rounds_pool_add)
  t975(df)                      Student's t, two-sided 95 % (rounds_t975)
  interval(n, pool, groups, floor)
                                (lo, hi) relative to the estimate, or None
                                (rounds_interval)
  pool_of(rounds_lists)         (pool, groups) over records' rounds, as
                                sweep/intervals.c pools a group's records
  interval_us(median, n, pool, groups, floor)
                                (ci_lo_us, ci_hi_us) as intervals.c writes them

Same seed, generator (splitmix64), ROUNDS_BOOT resamples, percentile
indices, t table, widening below ROUNDS_POOL_MIN and floor in quadrature as
the C, and the same order of floating-point operations: every sum is a
left-to-right loop (Python 3.12's sum() of floats is compensated and would
differ in the last bit), and sqrt(x*x + f*f) is written out (math.hypot
rounds differently). tests/cli/fidelity.bats checks interval() against the
C digit for digit. Used by scripts/fidelity_report.py and
scripts/sdpa_baseline.py. Standard library only.
"""
import math

BOOT = 2000  # ROUNDS_BOOT
POOL_MIN = 30  # ROUNDS_POOL_MIN
SEED = 0x5EED2024  # ROUNDS_SEED
MIN_US = 1e-6  # RECORD_MIN_US: the least time a record holds, an interval's lower end too
MAX_ROUNDS = 8  # RECORD_MAX_ROUNDS (store/record.h)
T975 = [(1, 12.706), (2, 4.303), (3, 3.182), (4, 2.776), (5, 2.571), (6, 2.447), (7, 2.365),
        (8, 2.306), (9, 2.262), (10, 2.228), (12, 2.179), (15, 2.131), (20, 2.086),
        (25, 2.060), (30, 2.042), (40, 2.021), (60, 2.000), (120, 1.980), (1000, 1.962)]
M64 = (1 << 64) - 1


def estimate(m):
    """rounds_estimate: the mean of the round medians m; NaN when there are
    none or any is not a finite positive number."""
    n = len(m)
    if n < 1:
        return math.nan
    acc = 0.0
    for x in m:
        x = float(x)
        if not math.isfinite(x) or x <= 0:
            return math.nan
        acc += x
    return acc / n


def scale(n):
    """sqrt(n / (n - 1)), the residuals' scale for n >= 2 rounds."""
    return math.sqrt(n / (n - 1))


def pool_add(m, pool):
    """rounds_pool_add: appends m[i] / mean - 1, scaled by sqrt(n/(n-1)), to
    pool (a list); nothing when n < 2 or the estimate is NaN. Returns pool."""
    n = len(m)
    mean = estimate(m)
    if n < 2 or not math.isfinite(mean):
        return pool
    s = scale(n)
    for x in m:
        pool.append((float(x) / mean - 1) * s)
    return pool


def t975(df):
    """rounds_t975: the two-sided 97.5 % quantile of Student's t with df
    degrees of freedom; between table rows the larger (the row below); NaN
    for df < 1, 1.96 past the table."""
    if df < 1:
        return math.nan
    for i, (d, t) in enumerate(T975):
        if df <= d:
            return t if df == d or i == 0 else T975[i - 1][1]
    return 1.96


def splitmix(state):
    """One step of splitmix64 (rounds_next): (new state, output)."""
    state = (state + 0x9E3779B97F4A7C15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return state, z ^ (z >> 31)


def interval(n, pool, groups, floor):
    """rounds_interval: (lo, hi) relative to the estimate of n rounds (lo <= 0
    <= hi) from the pooled residuals (made of `groups` records), or None when
    the pool says nothing (npool < 2, npool - groups < 1), n < 1 or floor is
    not a number >= 0."""
    npool = len(pool)
    df = npool - groups
    if n < 1 or npool < 2 or df < 1 or not floor >= 0:
        return None
    state, means = SEED, []
    for _ in range(BOOT):
        acc = 0.0
        for _ in range(n):
            state, z = splitmix(state)
            acc += pool[z % npool]
        means.append(acc / n)
    means.sort()
    lo, hi = means[int(0.025 * BOOT)], means[int(0.975 * BOOT) - 1]
    # relative to the pool's own mean (about 0): only the spread counts
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    if npool < POOL_MIN:
        w = t975(df) / 1.96
        lo, hi = lo * w, hi * w
    return -math.sqrt(lo * lo + floor * floor), math.sqrt(hi * hi + floor * floor)


def pool_of(rounds_lists):
    """(pool, groups) of a group's records, given each record's round
    medians in the store's key order: every record with two or more rounds
    adds its residuals and counts one group (sweep/intervals.c,
    intervals_pool_visit)."""
    pool, groups = [], 0
    for m in rounds_lists:
        if len(m) < 2:
            continue
        pool_add(m, pool)
        groups += 1
    return pool, groups


def interval_us(median, n, pool, groups, floor):
    """(ci_lo_us, ci_hi_us) of a record of median `median` measured in n
    rounds, as rounds_interval_us writes them (median * (1 + lo), median *
    (1 + hi), the lower end at least MIN_US), or (NaN, NaN) when the pool
    says nothing."""
    iv = interval(n, pool, groups, floor)
    if iv is None:
        return math.nan, math.nan
    return max(median * (1 + iv[0]), MIN_US), median * (1 + iv[1])
