"""Mean and variance of the released values of each aggregate on fixed data.

Every group of a table holds the same rows, so one GROUP BY statement gives
G independent releases of the same exact value (groups are disjoint: one
statement, one charge).  The noise parameters of the statement are read
from its ledger entry; the assertions are those of noise_checks.py:

  * deterministic: the ledger's calibration is the documented one, and each
    release minus the exact value (clamped, rounded to the grid as grid.h
    documents) is a multiple of the grid;  integer results (bigint) whose
    grid is finer than 1 (Gaussian counts and integer sums) are the exact
    value plus the noise rounded half up, so their noise law is
    laws.RoundedLaw;
  * mean and variance of the noise against the exact values from its pmf,
    each with false-failure probability at most 1e-6 (Chernoff bounds from
    the exact law, no normal approximation).

Table stat.fixed: G = 5000 groups of the six rows below (columns i int4,
b int8, f float8, n numeric); values outside the bounds test the clamping,
NULLs that they are skipped, and 0.1 (float) and 3.3 (numeric) the
rounding of rows to the grid.

dp_avg (agg_avg_float8_laplace, agg_avg_numeric_gaussian).  The estimate
is documented in aggregates.c: est = mid + (C + W) / (n + X), clamped to
[lower, upper], the midpoint if n + X < 1, where n is the row count, X the
count noise, C the exact centred sum n (mean - mid) and W the noise of the
centred sum, each noise with half of epsilon and delta (calibrated jointly
when Gaussian: half of the statement's mu^2 each, joint.c).  Its law is computed
exactly as a mixture over the count noise (laws.avg_law): the mean is
mid + C E[1/(n + X)] (not quite the true mean: the Jensen gap is reported)
and the variance E[(C^2 + E W^2) / (n + X)^2] - (C E[1/(n + X)])^2, so the
count noise is accounted for exactly rather than by a delta-method
approximation.  The data (G = 4000 groups of n = 200 rows, mean 70 on
[0, 100], epsilon 2, delta 0 or 1e-6) are chosen so that the clamp and the
n + X < 1 branch cannot be reached unless a noise exceeds its truncation
radius: the test checks this deterministically,
(|C| + R_W) / (n - R_X) <= (upper - lower) / 2, so they only add to the
truncation probability already counted.  The count noise makes about 13%
of the variance here (C^2 Var X / n^4 against E W^2 / n^2), so it is
tested too.
"""

import math
from fractions import Fraction

import db
import laws
import noise_checks as nc
from framework import stat_test

G = 5000
ROWS = [
    # i,   b,                  f,       n
    (3, 3 * 2 ** 40, "2.5", "1.125"),
    (7, 1000, "-3.75", "-7"),
    (-4, -1000, "12.0", "9.75"),
    (55, 2 * 10 ** 15, "0.125", "0.0625"),
    (-30, -512, "-11.0", "3.3"),
    (12, None, "0.1", None),
]


def fixed():
    values = ", ".join(
        "(%d, %s::int8, %s::float8, %s::numeric)" % (
            i, "NULL" if b is None else b, f, "NULL" if n is None else n)
        for i, b, f, n in ROWS)
    return db.fixed_table(
        "fixed",
        "SELECT g, r.i, r.b, r.f, r.n FROM generate_series(1, %d) AS g, (VALUES %s) AS r(i, b, f, n)"
        % (G, values))


def released(check, rel, kind):
    """The released values (last column) of a GROUP BY g statement."""
    vals = [nc.parse_exact(r[-1], kind) for r in rel.rows]
    check.that(len(rel.rows) == G and len({r[0] for r in rel.rows}) == G,
               "expected %d groups, got %d rows" % (G, len(rel.rows)))
    return vals


def noise_test(check, rel, kind, exact_value, epsilon, delta, sensitivity, what):
    spec = rel.noise()
    nc.check_calibration(check, spec, what, epsilon, delta, sensitivity)
    check.stop_if_failed()
    vals = released(check, rel, kind)
    noise = nc.on_grid_noise(check, vals, exact_value, spec["grid"], what)
    check.stop_if_failed()
    rn = laws.ReleaseNoise(spec["mechanism"], spec["noise_scale"], spec["grid"],
                           integer=(kind == "int"))
    law, _, _ = rn.truncated(nc.ALPHA_TRUNC / G)
    nc.assert_mean_and_variance(check, noise, law)
    check.note("%s scale %.4g grid 2^%d%s" % (spec["mechanism"], spec["noise_scale"],
                                              math.frexp(spec["grid"])[1] - 1,
                                              ", rounded to integers" if rn.rounded else ""))


@stat_test("agg_count_star_laplace")
def count_star_laplace(check):
    t = fixed()
    rel = db.release("SELECT g, dp_count(*) FROM %s GROUP BY g" % t,
                     settings={"dp_agg.epsilon": "0.5", "dp_agg.delta": "0"})
    noise_test(check, rel, "int", Fraction(len(ROWS)), 0.5, 0.0, 1.0, "dp_count(*)")


@stat_test("agg_count_gaussian")
def count_gaussian(check):
    t = fixed()
    rel = db.release("SELECT g, dp_count(n, 0.5::float8, 1e-6::float8) FROM %s GROUP BY g" % t)
    nonnull = sum(1 for r in ROWS if r[3] is not None)
    noise_test(check, rel, "int", Fraction(nonnull), 0.5, 1e-6, 1.0, "dp_count(numeric)")


def exact_sum(col, lo, hi, grid, rounding, conv):
    total = Fraction(0)
    for r in ROWS:
        v = r[col]
        if v is None:
            continue
        total += Fraction(rounding(nc.clamp(conv(v), conv(lo), conv(hi)), grid))
    return total


@stat_test("agg_sum_int_laplace")
def sum_int_laplace(check):
    t = fixed()
    rel = db.release("SELECT g, dp_sum(i, -20, 40, 0.5::float8) FROM %s GROUP BY g" % t)
    grid = rel.noise()["grid"]
    check.that(grid == 1.0, "grid %r, expected 1 for small integer bounds" % grid)
    true = exact_sum(0, -20, 40, 1, nc.round_int, int)
    noise_test(check, rel, "int", true, 0.5, 0.0, 40.0, "dp_sum(integer)")


@stat_test("agg_sum_int_gaussian")
def sum_int_gaussian(check):
    t = fixed()
    rel = db.release("SELECT g, dp_sum(i, -20, 40, 0.5::float8, 1e-5::float8) FROM %s GROUP BY g" % t)
    grid = rel.noise()["grid"]
    true = exact_sum(0, -20, 40, 1, nc.round_int, int)     # rows scale exactly to a grid < 1
    noise_test(check, rel, "int", true, 0.5, 1e-5, 40.0, "dp_sum(integer)")


@stat_test("agg_sum_bigint_laplace_coarse_grid")
def sum_bigint_laplace(check):
    t = fixed()
    bound = 10 ** 15
    rel = db.release("SELECT g, dp_sum(b, %d::int8, %d::int8, 1.0::float8) FROM %s GROUP BY g"
                     % (-bound, bound, t))
    grid = rel.noise()["grid"]
    check.that(grid > 1.0, "grid %r, expected a coarse grid (> 1) for bounds +-1e15" % grid)
    true = exact_sum(1, -bound, bound, int(grid), nc.round_int, int)
    noise_test(check, rel, "int", true, 1.0, 0.0, float(bound), "dp_sum(bigint)")


@stat_test("agg_sum_float8_gaussian")
def sum_float8_gaussian(check):
    t = fixed()
    rel = db.release("SELECT g, dp_sum(f, -10::float8, 10::float8, 1.0::float8, 1e-5::float8) "
                     "FROM %s GROUP BY g" % t)
    grid = rel.noise()["grid"]
    true = exact_sum(2, "-10", "10", grid, nc.round_float, lambda s: Fraction(float(s)))
    noise_test(check, rel, "float", true, 1.0, 1e-5, 10.0, "dp_sum(double precision)")


@stat_test("agg_sum_numeric_laplace")
def sum_numeric_laplace(check):
    t = fixed()
    rel = db.release("SELECT g, dp_sum(n, -5.5::numeric, 8.25::numeric, 0.5::float8) "
                     "FROM %s GROUP BY g" % t)
    grid = rel.noise()["grid"]
    true = exact_sum(3, "-5.5", "8.25", grid, nc.round_numeric, Fraction)
    noise_test(check, rel, "numeric", true, 0.5, 0.0, 8.25, "dp_sum(numeric)")


# ---------- dp_avg ----------

AVG_G = 4000
AVG_N = 200
AVG_LOWER, AVG_UPPER = 0.0, 100.0
# per group: 100 rows of 40, 50 of 100 and 50 of 130 (clamped to 100): mean 70
AVG_VALUES = [(40.0, 100), (100.0, 50), (130.0, 50)]


def avg_table():
    parts = []
    k = 0
    for v, m in AVG_VALUES:
        parts.append("SELECT g, %r::float8 AS v FROM generate_series(1, %d) AS g, "
                     "generate_series(1, %d) AS k" % (v, AVG_G, m))
        k += m
    assert k == AVG_N
    return db.fixed_table("avg_rows", " UNION ALL ".join(parts))


def avg_test(check, value_type, epsilon, delta):
    """dp_avg(v::value_type, lower, upper, epsilon, delta) on stat.avg_rows."""
    t = avg_table()
    rel = db.release("SELECT g, dp_avg(v::%s, %r::%s, %r::%s, %r::float8, %r::float8) FROM %s GROUP BY g"
                     % (value_type, AVG_LOWER, value_type, AVG_UPPER, value_type,
                        epsilon, delta, t))
    count = rel.noise(part="count")
    csum = rel.noise(part="centred_sum")
    half = (AVG_UPPER - AVG_LOWER) / 2
    # a Gaussian count and centred sum are calibrated jointly, half of mu^2 each
    joint = (epsilon, delta, 0.5) if delta > 0 else None
    nc.check_calibration(check, count, "dp_avg count", epsilon / 2, delta / 2, 1.0, joint)
    nc.check_calibration(check, csum, "dp_avg centred sum", epsilon / 2, delta / 2, half, joint)
    check.stop_if_failed()

    mid = (AVG_LOWER + AVG_UPPER) / 2
    clamped = [(min(max(v, AVG_LOWER), AVG_UPPER), m) for v, m in AVG_VALUES]
    mean = sum(v * m for v, m in clamped) / AVG_N
    centred = AVG_N * (mean - mid)
    est = [float(r[-1]) for r in rel.rows]
    check.that(len(est) == AVG_G and len({r[0] for r in rel.rows}) == AVG_G,
               "expected %d groups, got %d rows" % (AVG_G, len(est)))
    check.that(all(AVG_LOWER <= e <= AVG_UPPER for e in est), "estimate outside [lower, upper]")

    law, min_d, max_abs, _ = laws.avg_law(
        laws.ReleaseNoise(count["mechanism"], count["noise_scale"], count["grid"]),
        laws.ReleaseNoise(csum["mechanism"], csum["noise_scale"], csum["grid"]),
        AVG_N, centred, nc.ALPHA_TRUNC / (2 * AVG_G))
    check.that(min_d >= 1 and max_abs / min_d <= half,
               "design: truncated noise could reach the clamp (%.4g / %d > %.4g)"
               % (max_abs, min_d, half))
    check.stop_if_failed()
    nc.assert_mean_and_variance(check, [e - mid for e in est], law)
    check.note("%s; E est=%.6f (mean %.1f + Jensen gap %.2g)"
               % (csum["mechanism"], mid + law.mean(), mean, mid + law.mean() - mean))


@stat_test("agg_avg_float8_laplace")
def avg_float8_laplace(check):
    avg_test(check, "float8", 2.0, 0.0)


@stat_test("agg_avg_numeric_gaussian")
def avg_numeric_gaussian(check):
    avg_test(check, "numeric", 2.0, 1e-6)
