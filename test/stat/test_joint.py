"""Joint calibration of a statement's Gaussian releases (joint.c).

dp_avg(v::numeric, 0, 100, 2, 1e-6) on stat.avg_rows (test_aggregates.py:
G = 4000 groups of n = 200 rows): its count and centred sum are two
Gaussian releases that together are one Gaussian of mu* = 1 / sigma*,
sigma* the analytic Gaussian's at (2, 1e-6), each holding half of mu*^2
(and its mu raised by the relative margin 2^-20 for the lattice):
sigma_count = sqrt(2) sigma* (1 + 2^-20), sigma_sum = 50 sigma_count.
Calibrated alone at (1, 5e-7) each, as before, they had sigmas about 1.4
times larger.

  * deterministic: the ledger records those sigmas (relative 1e-9) and the
    calibration "joint";
  * mean and variance of the estimates minus the midpoint against their
    exact law (laws.avg_law) with the joint sigmas: noise_checks'
    Chernoff thresholds, false failure at most 1e-6 per assertion;
  * negative control: the same variance statistic against the law with the
    stand-alone sigmas (discrete_gaussian_sigma(1, 5e-7) for each release,
    as release.c calibrated them alone) must reject.  Before looking at the
    releases, the probability that it does not (the mean of the squares
    under the joint law reaching the lower acceptance bound of the
    stand-alone law) is bounded by Chernoff's bound and checked to be at
    most 1e-6, so a correct extension fails this assertion with
    probability at most 1e-6.
"""

import math

import db
import laws
import noise_checks as nc
import stats
import test_aggregates as ta
from framework import stat_test

EPSILON = 2.0
DELTA = 1e-6
NEG_CONTROL_MISS = 1e-6


def avg_estimate_law(count_scale, count_grid, sum_scale, sum_grid, centred):
    law, min_d, max_abs, _ = laws.avg_law(
        laws.ReleaseNoise("gaussian", count_scale, count_grid),
        laws.ReleaseNoise("gaussian", sum_scale, sum_grid),
        ta.AVG_N, centred, nc.ALPHA_TRUNC / (2 * ta.AVG_G))
    return law, min_d, max_abs


def alone_sigma(epsilon, delta, sensitivity, grid):
    """The stand-alone sigma release.c gives one release (value units)."""
    units = float(db.scalar("SELECT dp_agg.discrete_gaussian_sigma(%r, %r, %r);"
                            % (epsilon, delta, sensitivity / grid)))
    return units * grid


@stat_test("joint_avg_variance")
def joint_avg_variance(check):
    t = ta.avg_table()
    rel = db.release("SELECT g, dp_avg(v::numeric, %r::numeric, %r::numeric, %r::float8, %r::float8) "
                     "FROM %s GROUP BY g" % (ta.AVG_LOWER, ta.AVG_UPPER, EPSILON, DELTA, t))
    count = rel.noise(part="count")
    csum = rel.noise(part="centred_sum")
    half = (ta.AVG_UPPER - ta.AVG_LOWER) / 2
    joint = (EPSILON, DELTA, 0.5)
    nc.check_calibration(check, count, "count", EPSILON / 2, DELTA / 2, 1.0, joint)
    nc.check_calibration(check, csum, "centred sum", EPSILON / 2, DELTA / 2, half, joint)
    check.stop_if_failed()

    mid = (ta.AVG_LOWER + ta.AVG_UPPER) / 2
    clamped = [(min(max(v, ta.AVG_LOWER), ta.AVG_UPPER), m) for v, m in ta.AVG_VALUES]
    centred = ta.AVG_N * (sum(v * m for v, m in clamped) / ta.AVG_N - mid)
    g = ta.AVG_G

    law, min_d, max_abs = avg_estimate_law(count["noise_scale"], count["grid"],
                                           csum["noise_scale"], csum["grid"], centred)
    check.that(min_d >= 1 and max_abs / min_d <= half, "design: truncated noise could reach the clamp")
    s_count = alone_sigma(EPSILON / 2, DELTA / 2, 1.0, count["grid"])
    s_sum = alone_sigma(EPSILON / 2, DELTA / 2, half, csum["grid"])
    wrong, _, _ = avg_estimate_law(s_count, count["grid"], s_sum, csum["grid"], centred)
    check.note("sigmas joint %.5g, %.5g; alone %.5g, %.5g"
               % (count["noise_scale"], csum["noise_scale"], s_count, s_sum))

    # power of the negative control, before looking at the releases
    c_w = wrong.mean()
    lo_w = stats.chernoff_lower(wrong.map(lambda h: (h - c_w) ** 2), g, nc.ALPHA_SIDE)
    hi_w = stats.chernoff_upper(wrong.map(lambda h: (h - c_w) ** 2), g, nc.ALPHA_SIDE)
    reach = stats.chernoff_upper(law.map(lambda h: (h - c_w) ** 2), g, NEG_CONTROL_MISS)
    check.that(reach < lo_w, "negative control too weak: the joint law reaches %.6g >= %.6g "
               "with probability above %g" % (reach, lo_w, NEG_CONTROL_MISS))
    check.stop_if_failed()

    est = [float(r[-1]) for r in rel.rows]
    check.that(len(est) == g, "expected %d groups, got %d rows" % (g, len(est)))
    check.that(all(ta.AVG_LOWER <= e <= ta.AVG_UPPER for e in est), "estimate outside [lower, upper]")
    nc.assert_mean_and_variance(check, [e - mid for e in est], law)

    s_w = math.fsum((e - mid - c_w) ** 2 for e in est) / g
    check.that(not (lo_w <= s_w <= hi_w),
               "negative control: the stand-alone sigmas were not rejected (%.6g in [%.6g, %.6g])"
               % (s_w, lo_w, hi_w))
    check.note("negative control: mean square %.6g outside [%.6g, %.6g] of the stand-alone law"
               % (s_w, lo_w, hi_w))
