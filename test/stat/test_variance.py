"""dp_var and dp_stddev: the estimate is unbiased for the population
variance of the clamped rows (to first order in the count noise), and an
empirical privacy audit.

var_unbiased_laplace, var_unbiased_gaussian
    stat.var_rows: G = 6000 groups of N = 100 rows on [0, 10] (h = 5): 25
    rows of 2, 25 of 8, 50 of 5, so the centred sum is C = 0 and the
    variance V = 4.5 (Q = sum (y^2 - h^2/2) = 450 - 100 * 12.5 = -800 in
    value units, y the centred values).  One statement releases
    dp_var and dp_stddev of every group (independent noises), at epsilon
    12 each with Laplace noise, 6 each with Gaussian (delta 1e-6): small
    enough a tolerance for the negative control below, and noises whose
    truncation radii never clamp the estimate.  The
    estimate (src/release/estimators.c) is
        V^ = (Q + Z) / N' + h^2/2 - (C + W)^2 / N'^2 + v_W / N'^2,
    N' = N + X, with X, W, Z the noises of the count, the centred sum and
    the sum of centred squares (their parameters from the ledger) and v_W
    the variance of W's law.  Given N', E[(C + W)^2] = C^2 + v_W, so
        E V^ = h^2/2 + E[Q / N' - C^2 / N'^2]      (exactly)
    and E[(V^ - h^2/2)^2 | N'] = (Q^2 + v_Z) / N'^2 + (E W^4 - v_W^2) / N'^4
    (C = 0), both summed over the exact law of X (laws.ReleaseNoise,
    truncated).  E V^ differs from V by Q (E[1/N'] - 1/N), the second-order
    effect of the count noise (reported).
      * deterministic (0): the ledger's three releases and shares of
        epsilon; within the truncation radii (each noise beyond its radius
        in some group with probability 1e-8 / 3) the estimate is never
        clamped to 0 or h^2, so it is the formula above.
      * the mean of the G variances lies within t of E V^: Bernstein's
        inequality for the mean of G i.i.d. variables within M of their
        mean and of variance s^2, P(|mean - mu| >= t) <=
        2 exp(-G t^2 / (2 (s^2 + M t / 3))), t for 4.9e-7 a side, plus the
        truncation 2e-8: at most 1e-6.
      * the mean of the G squared standard deviations (the same estimate)
        likewise: at most 1e-6.
      * negative control: the sample variance (N / (N - 1) times the
        estimate, what var_samp would release) is rejected: its acceptance
        interval (the same t) is checked to be disjoint from the correct
        one before looking, so the statistic falls in it only if it falls
        outside the correct one (no further false failure).
var_audit
    Neighbouring tables: stat.var_audit_minus (200 rows of 5 on [0, 10])
    and stat.var_audit (the same and one row of 1e6, clamped to 10).
    T = 2500 releases each of dp_var(x, 0, 10, 1) (Laplace).  Event E:
    release >= 1 (the clamped extra row moves the variance to 0.124; an
    implementation that did not clamp would release 25 every time, and E
    would show a loss near ln(1 / P(E | D'))).  The Clopper-Pearson lower
    bound of epsilon, ln(P_lower(E | D) / P_upper(E | D')) (each one-sided
    at 5e-7), must be at most the declared 1: false failure at most 1e-6
    for any correct mechanism (the bound is valid for every event).  The
    point estimate is reported.
"""

import math

import db
import laws
import noise_checks as nc
import stats
from framework import stat_test
from test_privacy_units import cp_lower, cp_upper

G = 6000
N = 100
LOWER, UPPER = 0.0, 10.0
H = (UPPER - LOWER) / 2
ROWS = [(2.0, 25), (8.0, 25), (5.0, 50)]
EPSILON = 6.0
ALPHA = 4.9e-7
TRUNC = 2e-8


def var_table():
    parts = ["SELECT g, %r::float8 AS x FROM generate_series(1, %d) g, generate_series(1, %d) k"
             % (v, G, m) for v, m in ROWS]
    return db.fixed_table("var_rows", " UNION ALL ".join(parts))


def bernstein(g, s2, m, alpha):
    """t with exp(-g t^2 / (2 (s2 + m t / 3))) = alpha: g t^2 = 2 L (s2 + m t / 3)"""
    L = math.log(1.0 / alpha)
    a, b, c = g, -2.0 * L * m / 3.0, -2.0 * L * s2
    return (-b + math.sqrt(b * b - 4 * a * c)) / (2 * a)


def var_test(check, epsilon, delta):
    t = var_table()
    rel = db.release("SELECT g, dp_var(x, %r, %r, %r, %r), dp_stddev(x, %r, %r, %r, %r) FROM %s GROUP BY g"
                     % (LOWER, UPPER, epsilon, delta, LOWER, UPPER, epsilon, delta, t))
    names = [r["release"] for r in rel.call(0)["releases"]]
    check.that(names == ["count", "centred_sum", "centred_sum_of_squares"],
               "releases %r" % (names,))
    check.that(abs(rel.epsilon - 2 * epsilon) < 1e-9, "charged %r" % rel.epsilon)
    check.stop_if_failed()
    cnt = rel.noise(0, "count")
    csum = rel.noise(0, "centred_sum")
    csq = rel.noise(0, "centred_sum_of_squares")
    xn = laws.ReleaseNoise(cnt["mechanism"], cnt["noise_scale"], cnt["grid"])
    wn = laws.ReleaseNoise(csum["mechanism"], csum["noise_scale"], csum["grid"])
    zn = laws.ReleaseNoise(csq["mechanism"], csq["noise_scale"], csq["grid"])
    xlaw, rx, _ = xn.truncated(TRUNC / 3 / G)
    _, rw, _ = wn.truncated(TRUNC / 3 / G)
    _, rz, _ = zn.truncated(TRUNC / 3 / G)
    vw, w4, vz = wn.var(), wn.fourth(), zn.var()

    sum_y2 = sum(m * (v - (LOWER + UPPER) / 2) ** 2 for v, m in ROWS)
    Q = sum_y2 - N * H * H / 2
    C = sum(m * (v - (LOWER + UPPER) / 2) for v, m in ROWS)
    V = sum_y2 / N - (C / N) ** 2
    check.that(C == 0, "design: C = %r" % C)

    # E V^ and E (V^ - h^2/2)^2 over the exact law of the count noise
    mu = H * H / 2
    second = 0.0
    for x, p in zip(xlaw.h, xlaw.w):
        n = N + x
        mu += p * (Q / n - C * C / (n * n))
        second += p * ((Q * Q + vz) / n ** 2 + (w4 - vw * vw) / n ** 4)
    s2 = second - (mu - H * H / 2) ** 2
    # the range of V^ within the truncation radii, and no clamping
    nmin, nmax = N - rx, N + rx
    lo = min((Q - rz) / nmin, (Q - rz) / nmax) + H * H / 2 - (rw * rw - vw) / (nmin * nmin)
    hi = max((Q + rz) / nmin, (Q + rz) / nmax) + H * H / 2 + vw / (nmin * nmin)
    check.that(nmin >= 1 and lo > 0 and hi < H * H,
               "design: the truncated estimate could be clamped ([%.4g, %.4g])" % (lo, hi))
    check.stop_if_failed()
    m_dev = max(hi - mu, mu - lo)
    tol = bernstein(G, s2, m_dev, ALPHA) + 1e-12 * abs(mu)
    # negative control: the sample variance, N / (N - 1) times the estimate
    mu_w = mu * N / (N - 1)
    tol_w = bernstein(G, s2 * (N / (N - 1)) ** 2, m_dev * N / (N - 1), ALPHA)
    check.that(mu + tol < mu_w - tol_w,
               "negative control: intervals overlap ([%.6f, %.6f] and [%.6f, %.6f])"
               % (mu - tol, mu + tol, mu_w - tol_w, mu_w + tol_w))
    check.stop_if_failed()

    variances = [float(r[1]) for r in rel.rows]
    squares = [float(r[2]) ** 2 for r in rel.rows]
    check.that(len(variances) == G, "expected %d groups, got %d" % (G, len(variances)))
    mean_v = math.fsum(variances) / G
    mean_s = math.fsum(squares) / G
    check.within("mean var - E", mean_v - mu, -tol, tol, "%.3g")
    check.within("mean stddev^2 - E", mean_s - mu, -tol, tol, "%.3g")
    check.note("V=%.4f E V^=%.6f (second-order gap %.2g), sample variance would give %.6f"
               % (V, mu, mu - V, mu_w))


@stat_test("var_unbiased_laplace")
def var_unbiased_laplace(check):
    var_test(check, 2 * EPSILON, 0.0)


@stat_test("var_unbiased_gaussian")
def var_unbiased_gaussian(check):
    var_test(check, EPSILON, 1e-6)


T_AUDIT = 2500
CP_SIDE = 5e-7


@stat_test("var_audit")
def var_audit(check):
    d_minus = db.fixed_table("var_audit_minus", "SELECT 5.0::float8 AS x FROM generate_series(1, 200)")
    d = db.fixed_table("var_audit", "SELECT 5.0::float8 AS x FROM generate_series(1, 200) "
                                    "UNION ALL SELECT 1e6")
    hits = []
    for tbl in (d, d_minus):
        rels = db.releases("SELECT dp_var(x, 0, 10, 1) FROM %s" % tbl, T_AUDIT,
                           settings={"dp_agg.delta": "0"})
        hits.append(sum(1 for rel in rels if float(rel.rows[0][0]) >= 1.0))
    p_lo = cp_lower(T_AUDIT, hits[0], CP_SIDE)
    q_hi = cp_upper(T_AUDIT, hits[1], CP_SIDE)
    eps_lb = math.log(p_lo / q_hi) if p_lo > 0 else -math.inf
    check.that(eps_lb <= 1.0, "epsilon lower bound %.4f exceeds the declared epsilon 1" % eps_lb)
    est = (math.log(hits[0] / hits[1]) if hits[0] > 0 and hits[1] > 0 else float("nan"))
    check.note("E hit %d/%d on D, %d/%d on D'; epsilon lower bound %.3f, point estimate %.3f "
               "(declared 1)" % (hits[0], T_AUDIT, hits[1], T_AUDIT, eps_lb, est))
