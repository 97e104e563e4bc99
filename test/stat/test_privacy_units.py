"""Privacy units (README, "Privacy units"): the noise is calibrated to the
bounded contribution of a unit, and neighbouring databases that differ by
one unit of many rows are told apart no better than epsilon allows.

Data.  stat.units_many: U = 200 units of M = 50 rows each (column z = 0,
unit u).  stat.units_audit and stat.units_audit_minus: the same 200 units
of 50 rows, the first with one more unit of A = 30 rows: neighbouring
databases (they differ by all the rows of one unit).

Without GROUP BY there is one group, so the sensitivity is that of one
unit's bounded contribution (k plays no role; GROUP BY with units waits for
private selection of group keys).  Every statement is run S times in one
psql session (db.releases: S releases, each with its own charge).

units_count_variance
    SELECT dp_count(*) FROM stat.units_many, dp_agg.max_rows_contributed =
    R = 4, epsilon 1, delta 0: the exact bounded value is U R = 800; the
    noise is discrete Laplace of scale R / epsilon = 4 (sensitivity R: one
    unit's rows, counted up to R).  S = 3000.
      * deterministic (0): every ledger entry records the same release:
        dp_count, Laplace, sensitivity 4, noise scale 4, and privacy_unit {max_groups_contributed
        1, max_rows_contributed 4}; every release is an integer.
      * mean and variance of release - 800 against the exact discrete
        Laplace of scale 4 (noise_checks.assert_mean_and_variance: Chernoff
        bounds from the exact truncated law): at most 1e-6 each.
      * negative control: the variance statistic must lie outside the
        acceptance interval of the row-level calibration (scale 1, what an
        implementation unaware of units would use).  Before looking at the
        data the test checks that the two acceptance intervals (each at
        4.9e-7 per side) are disjoint, so that the statistic can fall in
        the wrong one only if it falls outside the right one: false failure
        at most 9.8e-7.
units_sum_variance
    SELECT dp_sum(z, 0, 3, ...) with z = 1 on every row of
    stat.units_ones (U = 200 units of M = 50 rows): each unit's total 50
    is clamped to the upper bound 3, so the exact value is 600 and the
    sensitivity 3 (not 50 times 3), epsilon 0.5, Gaussian delta 1e-6: sigma
    = discrete_gaussian_sigma(0.5, 1e-6, 3 / grid) grid.  S = 2000.
      * deterministic (0): calibration as in the ledger (noise_checks.
        check_calibration with sensitivity 3), privacy_unit recorded.
      * mean and variance of release - 600 against the exact law: at most
        1e-6 each.
units_audit
    An empirical audit (the method of Jagielski et al. 2020 and Nasr et al.
    2021: Clopper-Pearson intervals on the rates of an event).  Statistic:
    the release of SELECT dp_count(*) (R = 1, epsilon 1, Laplace) over D =
    stat.units_audit (201 units) and D' = stat.units_audit_minus (200
    units), T = 2500 releases each.  Event E: release >= 201.  Its exact
    probabilities are P(X >= 0) and P(X >= 1) for the discrete Laplace of
    scale 1, whose ratio is exactly e^1: the event is the worst case, so
    the audit is as powerful as a single threshold can be.  The epsilon
    lower bound is ln(lower CP bound of P_D(E) / upper CP bound of
    P_D'(E)) (each one-sided at 5e-7).
      * the lower bound is at most the declared epsilon 1: false failure at
        most 1e-6 (the union of the two one-sided Clopper-Pearson errors;
        exact binomial tails, no approximation).
      * reported (not asserted): the epsilon an implementation that counted
        rows would leak (event: release >= its count over D' plus 30,
        ln P(X >= 0) / P(X >= 30) = 30.0), and the lower bound's value.
    Run time: about 5000 statements (a few tens of seconds on 2 cores).

Seven statistical assertions, the sum of their false-failure probabilities
below 6e-6.
"""

import math

import db
import laws
import noise_checks as nc
import stats
from framework import stat_test

U = 200
M = 50
A = 30
R = 4
S_COUNT = 3000
S_SUM = 2000
T_AUDIT = 2500
CP_SIDE = 5e-7


def unit_table(name, units, rows, value, extra_rows=0):
    """units units of rows rows (z = value), plus one unit of extra_rows;
    its privacy unit is u."""
    sql = ("SELECT u, %d AS z FROM generate_series(1, %d) u, generate_series(1, %d) r"
           % (value, units, rows))
    if extra_rows:
        sql += " UNION ALL SELECT 0, %d FROM generate_series(1, %d) r" % (value, extra_rows)
    t = db.fixed_table(name, sql)
    db.run("SELECT dp_agg.set_privacy_unit(%s, 'u');" % db.literal(t))
    return t


def check_unit_record(check, rels, rows):
    for rel in rels:
        pu = rel.call().get("privacy_unit")
        if not check.that(pu == {"max_groups_contributed": 1, "max_rows_contributed": rows},
                          "ledger privacy_unit %r, expected groups 1 and rows %d" % (pu, rows)):
            return


def noise_of(check, rels, exact, kind):
    spec = rels[0].noise()
    vals = [nc.parse_exact(rel.rows[0][0], kind) for rel in rels]
    return spec, nc.on_grid_noise(check, vals, exact, spec["grid"], "release")


@stat_test("units_count_variance")
def units_count_variance(check):
    t = unit_table("units_many", U, M, 0)
    rels = db.releases("SELECT dp_count(*) FROM %s" % t, S_COUNT,
                       settings={"dp_agg.max_rows_contributed": str(R),
                                 "dp_agg.epsilon": "1", "dp_agg.delta": "0"})
    nc.check_calibration(check, rels[0].noise(), "dp_count", 1.0, 0.0, float(R))
    check.that(all(rel.noise() == rels[0].noise() for rel in rels),
               "the releases were calibrated differently")
    check_unit_record(check, rels, R)
    check.stop_if_failed()
    spec, noise = noise_of(check, rels, U * R, "int")
    check.stop_if_failed()

    right, _, _ = laws.ReleaseNoise("laplace", float(R), 1.0, integer=True).truncated(
        nc.ALPHA_TRUNC / S_COUNT)
    wrong, _, _ = laws.ReleaseNoise("laplace", 1.0, 1.0, integer=True).truncated(
        nc.ALPHA_TRUNC / S_COUNT)
    nc.assert_mean_and_variance(check, noise, right)

    def var_interval(law):
        squares = law.map(lambda h: h * h)
        return (stats.chernoff_lower(squares, S_COUNT, nc.ALPHA_SIDE),
                stats.chernoff_upper(squares, S_COUNT, nc.ALPHA_SIDE))
    r_lo, r_hi = var_interval(right)
    w_lo, w_hi = var_interval(wrong)
    check.that(w_hi < r_lo or r_hi < w_lo,
               "the acceptance intervals of scales %d and 1 overlap: [%g, %g] [%g, %g]"
               % (R, r_lo, r_hi, w_lo, w_hi))
    check.stop_if_failed()
    s = math.fsum(x * x for x in noise) / S_COUNT
    check.that(not (w_lo <= s <= w_hi),
               "the variance %g is accepted by the row-level scale 1 ([%g, %g])" % (s, w_lo, w_hi))
    check.note("variance %.3g: scale %d accepts [%.3g, %.3g], scale 1 [%.3g, %.3g]"
               % (s, R, r_lo, r_hi, w_lo, w_hi))


@stat_test("units_sum_variance")
def units_sum_variance(check):
    t = unit_table("units_ones", U, M, 1)
    rels = db.releases("SELECT dp_sum(z, 0, 3, 0.5::float8, 1e-6::float8) FROM %s" % t, S_SUM)
    nc.check_calibration(check, rels[0].noise(), "dp_sum", 0.5, 1e-6, 3.0)
    check.that(all(rel.noise() == rels[0].noise() for rel in rels),
               "the releases were calibrated differently")
    check_unit_record(check, rels, 1)
    check.stop_if_failed()
    spec, noise = noise_of(check, rels, U * 3, "int")
    check.stop_if_failed()
    rn = laws.ReleaseNoise(spec["mechanism"], spec["noise_scale"], spec["grid"], integer=True)
    law, _, _ = rn.truncated(nc.ALPHA_TRUNC / S_SUM)
    nc.assert_mean_and_variance(check, noise, law)


def log_binom_sf(n, p, k):
    """log P[Bin(n, p) >= k], exactly (log-sum-exp of the pmf)."""
    if k <= 0:
        return 0.0
    if k > n:
        return -math.inf
    lp, lq = math.log(p), math.log1p(-p)
    terms = [math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) + j * lp + (n - j) * lq
             for j in range(k, n + 1)]
    top = max(terms)
    return top + math.log(math.fsum(math.exp(x - top) for x in terms))


def cp_lower(n, k, alpha):
    """One-sided Clopper-Pearson lower bound: the p with P[Bin(n,p) >= k] = alpha."""
    if k == 0:
        return 0.0
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if log_binom_sf(n, mid, k) < math.log(alpha):
            lo = mid
        else:
            hi = mid
    return lo


def cp_upper(n, k, alpha):
    """One-sided Clopper-Pearson upper bound: the p with P[Bin(n,p) <= k] = alpha."""
    return 1.0 - cp_lower(n, n - k, alpha)


@stat_test("units_audit")
def units_audit(check):
    d = unit_table("units_audit", U, M, 0, extra_rows=A)
    d_minus = unit_table("units_audit_minus", U, M, 0)
    settings = {"dp_agg.epsilon": "1", "dp_agg.delta": "0"}
    hits = []
    for t in (d, d_minus):
        rels = db.releases("SELECT dp_count(*) FROM %s" % t, T_AUDIT, settings=settings)
        hits.append(sum(1 for rel in rels if int(rel.rows[0][0]) >= U + 1))
    p_lo = cp_lower(T_AUDIT, hits[0], CP_SIDE)
    q_hi = cp_upper(T_AUDIT, hits[1], CP_SIDE)
    eps_lb = math.log(p_lo / q_hi) if p_lo > 0 else -math.inf
    check.that(eps_lb <= 1.0, "epsilon lower bound %.4f exceeds the declared epsilon 1" % eps_lb)
    row_level = laws.DiscreteLaplace(1.0)
    # counting rows, D and D' differ by A: the event release >= (its count
    # over D') + A has probabilities P(X >= 0) and P(X >= A)
    leak = math.log(row_level.sf(0) / row_level.sf(A))
    check.note("E hit %d/%d on D, %d/%d on D'; epsilon lower bound %.3f (declared 1); "
               "counting rows would leak %.1f" % (hits[0], T_AUDIT, hits[1], T_AUDIT, eps_lb, leak))
