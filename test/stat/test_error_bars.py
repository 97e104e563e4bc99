"""Coverage of the error bars dp_interval_low / dp_interval_high
(doc/statistics.md, "Preview and error bars"): for every released value, the
95% interval of its own statistic.

Each test runs one GROUP BY statement over G groups that hold the same
rows, so it gets G independent releases of the same exact value theta with
their intervals [low, high], and counts K = #{theta in [low, high]}.

bars_count_sum
    dp_count(*) (Laplace, epsilon 1) and dp_sum(i, 0, 10) (integer,
    Laplace, epsilon 0.5) of stat.bars_rows (G = 20000 groups of 50 rows):
    for a count or a sum the interval is value +- ci95, the central
    interval of the noise, so K ~ Binomial(G, p) with p = P(|X| <= ci95)
    exactly (laws.py).
      * deterministic (0): high - low = 2 ci95 (the ledger's), the value in
        the middle.
      * K in the Chernoff acceptance interval of Binomial(G, p) (5e-7 a
        side): 1e-6 each (2 assertions).
      * negative control: the interval shrunk to 0.7 ci95 covers with an
        exact probability p' < 0.95, and its count must fall below the
        acceptance interval of 0.95; the chance that it does not is bounded
        (Chernoff) below 1e-6 before looking.
bars_avg
    dp_avg(x, 0, 10, 1) of stat.bars_avg (G = 4000 groups of N = 1000 rows,
    half 3 and half 7: the centred sum C = 0, the average 5).  The interval
    (estimators.c) holds the average whenever the count and the centred
    sum lie within their 97.5% half-widths, so P(cover) >= 0.95.
      * K at least the lower end of the acceptance interval of Binomial(G,
        0.95) at 1e-6: false failure at most 1e-6.
      * negative control: the interval shrunk 8-fold toward the estimate.
        With C = 0 the estimate is 5 + W / N', W the centred sum's noise,
        N' the noisy count, and the interval's width is at most
        2 (|W| + h_C) / (N' - h_N) (h the half-widths); covering 5 then
        needs |W| <= (h_C / 4) / (1 / rho - 1 / 4), rho = N' / (N' - h_N) at
        its largest within the truncation of the count noise (1e-8).  That
        probability p' (exact, from W's law) is checked below 0.95 with
        power 1 - 1e-6 before looking (Chernoff), and the shrunk count must
        fall below the acceptance interval.
bars_var, bars_stddev, bars_median, bars_percentiles
    dp_var and dp_stddev (Laplace and Gaussian) of stat.var_rows
    (test_variance.py: variance 4.5), dp_median and dp_percentile(x,
    [0.1, 0.5, 0.9]) of stat.bars_quant (G = 2000 groups of 2000 rows
    k / 20, k = 0..1999: percentile_cont and percentile_disc both in
    the interval; median 49.975, 49.95).  The intervals hold the statistic
    with probability at least 0.95 (variance: the union bound over its
    three releases; quantiles: the union bound over the noisy prefixes of
    the tree, quantile_tree.c), so:
      * K at least the lower end of the acceptance interval of Binomial(G,
        0.95) at 1e-6 (one per statistic and percentile).
      * informativeness: the interval never reaches a value far from the
        statistic.  Within the truncation radii of the noises (each exceeded
        in some group with probability at most 1e-8 in all) the largest
        high end any release can give is computed from the documented
        formulas (variance: estimators.c over the box of released values,
        scanned in the count with a margin; quantiles: the rank band of the
        walk, tau + p tau_N + 2 plus the truncated prefix noise, turned into
        a value with the rows' density and one leaf more), and the value
        just above it must be held by no interval: false failure at most
        1e-8.  An interval of the bounds [lower, upper] would hold it every
        time.  For these statistics the union bounds make the intervals
        conservative, and an interval shrunk by a fixed factor has no
        coverage this suite bounds rigorously: the too-narrow control is
        made for the count, the sum and the average.
"""

import math

import db
import laws
import stats
from framework import stat_test

ALPHA_SIDE = 5e-7
G_CS = 20000
N_CS = 50


def acceptance_low(n, p):
    lo, _ = stats.binomial_acceptance(n, p, 1e-6)
    return lo


def bars_rows():
    return db.fixed_table("bars_rows", "SELECT g, (k %% 11) AS i FROM generate_series(1, %d) g, "
                          "generate_series(1, %d) k" % (G_CS, N_CS))


def exact_check(check, name, values, lows, highs, theta, spec, integer):
    ci = float(spec["ci95"])
    check.that(all(abs((h - l) - 2 * ci) <= 1e-9 * max(1.0, ci) and l <= v <= h
                   for v, l, h in zip(values, lows, highs)),
               "%s: intervals are not value +- ci95 (%g)" % (name, ci))
    noise = laws.ReleaseNoise(spec["mechanism"], spec["noise_scale"], spec["grid"], integer=integer)
    law = noise.lattice
    step = noise.step
    r = int(math.floor(ci / step + 1e-9))
    p = law.prob(-r, r)
    k = sum(1 for l, h in zip(lows, highs) if l <= theta <= h)
    lo, hi = stats.binomial_acceptance(len(values), p, ALPHA_SIDE)
    check.within("%s K" % name, k, lo, hi, "%d")
    # negative control: 0.7 ci95
    r7 = int(math.floor(0.7 * ci / step + 1e-9))
    p7 = law.prob(-r7, r7)
    lo95 = acceptance_low(len(values), 0.95)
    miss = stats.binom_tail_bound(len(values), p7, lo95, upper=True)
    check.that(p7 < 0.95 and miss <= 1e-6,
               "%s control: 0.7 ci95 covers with %.4f, power bound %.3g" % (name, p7, miss))
    k7 = sum(1 for v in values if abs(v - theta) <= 0.7 * ci + 1e-9 * step)
    check.that(k7 < lo95, "%s control: 0.7 ci95 covered %d >= %d" % (name, k7, lo95))
    check.note("%s: p=%.4f K=%d/%d, 0.7ci95 covers %d (p %.3f)"
               % (name, p, k, len(values), k7, p7))


@stat_test("bars_count_sum")
def bars_count_sum(check):
    t = bars_rows()
    rel = db.release("SELECT g, c, dp_interval_low(c), dp_interval_high(c), s, dp_interval_low(s), "
                     "dp_interval_high(s) FROM (SELECT g, dp_count(i, 1) AS c, dp_sum(i, 0, 10, 0.5) AS s "
                     "FROM %s GROUP BY g) q" % t)
    rows = rel.rows
    check.that(len(rows) == G_CS, "expected %d groups, got %d" % (G_CS, len(rows)))
    check.stop_if_failed()
    exact_sum = sum(k % 11 for k in range(1, N_CS + 1))
    calls = {c["aggregate"]: i for i, c in enumerate(rel.detail)}
    exact_check(check, "count", [int(r[1]) for r in rows], [int(r[2]) for r in rows],
                [int(r[3]) for r in rows], N_CS, rel.noise(calls["dp_count"]), True)
    exact_check(check, "sum", [int(r[4]) for r in rows], [int(r[5]) for r in rows],
                [int(r[6]) for r in rows], exact_sum, rel.noise(calls["dp_sum"]), True)


G_AVG = 4000
N_AVG = 1000


@stat_test("bars_avg")
def bars_avg(check):
    t = db.fixed_table("bars_avg", "SELECT g, CASE WHEN k %% 2 = 0 THEN 3.0 ELSE 7.0 END::float8 AS x "
                       "FROM generate_series(1, %d) g, generate_series(1, %d) k" % (G_AVG, N_AVG))
    rel = db.release("SELECT g, dp_avg(x, 0, 10, 1), dp_interval_low(dp_avg(x, 0, 10, 1)), "
                     "dp_interval_high(dp_avg(x, 0, 10, 1)) FROM %s GROUP BY g" % t)
    rows = [(float(r[1]), float(r[2]), float(r[3])) for r in rel.rows]
    check.that(len(rows) == G_AVG, "expected %d groups" % G_AVG)
    check.stop_if_failed()
    k = sum(1 for v, l, h in rows if l <= 5.0 <= h)
    lo95 = acceptance_low(G_AVG, 0.95)
    check.within("avg K", k, lo95, G_AVG, "%d")
    # the too-narrow control, its power bounded first (see the docstring)
    cnt = rel.noise(0, "count")
    csum = rel.noise(0, "centred_sum")
    xn = laws.ReleaseNoise(cnt["mechanism"], cnt["noise_scale"], cnt["grid"])
    wn = laws.ReleaseNoise(csum["mechanism"], csum["noise_scale"], csum["grid"])
    _, rx, _ = xn.truncated(1e-8 / G_AVG)
    hn = float(db.scalar("SELECT dp_agg.noise_interval('laplace', %r, %r);"
                         % (float(cnt["noise_scale"]), 1 - 0.05 / 2)))
    hc = float(db.scalar("SELECT dp_agg.noise_interval('laplace', %r, %r) * %r;"
                         % (float(csum["noise_scale"]) / float(csum["grid"]), 1 - 0.05 / 2,
                            float(csum["grid"]))))
    rho = (N_AVG - rx) / (N_AVG - rx - hn)
    s = 1.0 / 8
    bound = 2 * s * hc / (1.0 / rho - 2 * s)
    steps = int(math.floor(bound / wn.step))
    p_ctl = wn.lattice.prob(-steps, steps) + 1e-8
    miss = stats.binom_tail_bound(G_AVG, p_ctl, lo95, upper=True)
    check.that(p_ctl < 0.95 and miss <= 1e-6,
               "avg control: shrunk interval covers with at most %.4f, power bound %.3g" % (p_ctl, miss))
    check.stop_if_failed()
    k_ctl = sum(1 for v, l, h in rows if v - s * (v - l) <= 5.0 <= v + s * (h - v))
    check.that(k_ctl < lo95, "avg control: the shrunk interval covered %d >= %d" % (k_ctl, lo95))
    check.note("K=%d/%d (>= %d); 8-fold shrunk covers %d (at most p %.3f)"
               % (k, G_AVG, lo95, k_ctl, p_ctl))


def coverage(check, name, vals, theta):
    n = len(vals)
    k = sum(1 for l, h in vals if l <= theta <= h)
    lo95 = acceptance_low(n, 0.95)
    check.within("%s K" % name, k, lo95, n, "%d")
    return k


def focus(check, name, vals, far):
    k_far = sum(1 for l, h in vals if h >= far)
    check.that(k_far == 0, "%s: %d of %d intervals reach %g" % (name, k_far, len(vals), far))
    return k_far


def halfwidth(spec, confidence):
    """estimators.c's half-width of a release at a confidence (value units)"""
    return float(db.scalar("SELECT dp_agg.noise_interval(%s, %r, %r) * %r;"
                           % (db.literal(spec["mechanism"]),
                              float(spec["noise_scale"]) / float(spec["grid"]), confidence,
                              float(spec["grid"]))))


def var_range(n0, n1, a0, a1, q0, q1):
    """estimators.c's variance_range, returning the largest value only"""
    amin = 0.0 if a0 <= 0 <= a1 else min(abs(a0), abs(a1))

    def f(n, a, q):
        return q / n - (a / n) ** 2
    best = max(f(n0, amin, q1), f(n1, amin, q1))
    if q1 > 0:
        ns = 2 * amin * amin / q1
        if n0 < ns < n1:
            best = max(best, f(ns, amin, q1))
    return best


@stat_test("bars_var")
def bars_var(check):
    import test_variance as tv
    t, g = tv.var_table(), tv.G
    h = tv.H
    q_exact = sum(m * (v - 5.0) ** 2 for v, m in tv.ROWS) - tv.N * h * h / 2
    for delta in (0.0, 1e-6):
        rel = db.release("SELECT g, dp_interval_low(v), dp_interval_high(v), dp_interval_low(s), "
                         "dp_interval_high(s) FROM (SELECT g, dp_var(x, 0, 10, %r, %r) AS v, "
                         "dp_stddev(x, 0, 10, %r, %r) AS s FROM %s GROUP BY g) q"
                         % (tv.EPSILON, delta, tv.EPSILON, delta, t))
        rows = rel.rows
        check.that(len(rows) == g, "expected %d groups" % g)
        check.stop_if_failed()
        var_iv = [(float(r[1]), float(r[2])) for r in rows]
        sd_iv = [(float(r[3]), float(r[4])) for r in rows]
        coverage(check, "var delta %g" % delta, var_iv, 4.5)
        coverage(check, "stddev delta %g" % delta, sd_iv, math.sqrt(4.5))
        # the largest high end within the truncation radii (1e-8 in all)
        specs = [rel.noise(0, part) for part in ("count", "centred_sum", "centred_sum_of_squares")]
        radii = []
        for spec in specs:
            _, r, _ = laws.ReleaseNoise(spec["mechanism"], spec["noise_scale"], spec["grid"]).truncated(1e-8 / 3 / g)
            radii.append(r)
        hn, hc, hq = (halfwidth(spec, 1 - 0.05 / 3) for spec in specs)
        top = 0.0
        steps = 4000
        for i in range(steps + 1):
            n = tv.N - radii[0] + 2 * radii[0] * i / steps
            if n - hn < 1:
                continue
            hi = var_range(n - hn, n + hn, -radii[1] - hc, radii[1] + hc, q_exact + radii[2] - hq,
                           q_exact + radii[2] + hq)
            top = max(top, hi + h * h / 2)
        # margin: the scan's step, the rounding of the rows (none here) and 1e-6
        far = min(top * 1.01 + 1e-6, h * h)
        check.that(far < h * h, "design: the variance interval could reach the bound")
        focus(check, "var delta %g" % delta, var_iv, far)
        focus(check, "stddev delta %g" % delta, sd_iv, math.sqrt(far))
        check.note("delta %g: var intervals below %.3f, stddev below %.3f" % (delta, far, math.sqrt(far)))


G_Q = 2000
N_Q = 2000
DENSITY = 20.0                  # rows per unit of value: x = k / 20


def quant_rows():
    return db.fixed_table("bars_quant", "SELECT g, (k / 20.0)::float8 AS x FROM generate_series(1, %d) g, "
                          "generate_series(0, %d) k" % (G_Q, N_Q - 1))


def true_quantiles(p):
    """percentile_cont and percentile_disc of k / 20, k = 0 .. N - 1"""
    xs = [k / 20.0 for k in range(N_Q)]
    pos = p * (N_Q - 1)
    lo = int(math.floor(pos))
    cont = xs[lo] + (pos - lo) * (xs[min(lo + 1, N_Q - 1)] - xs[lo])
    disc = xs[max(int(math.ceil(p * N_Q)) - 1, 0)]
    return cont, disc


def tree_tail(b, m, alpha):
    """quantile_tree.c's dp_tree_tail: Chernoff bound of m discrete Laplace noises"""
    lam = 1.0 / b
    target = math.log(alpha / 2)
    best = math.inf
    for i in range(1, 1000):
        s = lam * i / 1000.0
        k = 2 * math.log(-math.expm1(-lam)) - math.log(-math.expm1(s - lam)) - math.log(-math.expm1(-s - lam))
        best = min(best, (m * k - target) / s)
    return math.ceil(best * (1 + 1e-9))


@stat_test("bars_quantiles")
def bars_quantiles(check):
    t = quant_rows()
    rel = db.release("SELECT g, dp_interval_low(m), dp_interval_high(m), dp_interval_low(p), "
                     "dp_interval_high(p) FROM (SELECT g, dp_median(x, 0, 100, 1) AS m, "
                     "dp_percentile(x, ARRAY[0.1, 0.5, 0.9], 0, 100, 1) AS p FROM %s GROUP BY g) q" % t)
    rows = rel.rows
    check.that(len(rows) == G_Q, "expected %d groups" % G_Q)
    check.stop_if_failed()

    def arr(text):
        return [float(v) for v in text.strip("{}").split(",")]

    tree = rel.noise(0)
    b = float(tree["noise_scale"])
    tau = tree_tail(b, 45, 0.04 / 4095)
    tau_n = tree_tail(b, 16, 0.01)
    # the prefix noise within these radii in every group, except with 1e-8
    r_e = tree_tail(b, 45, 1e-8 / 2 / 4095 / G_Q / 4)
    r_n = tree_tail(b, 16, 1e-8 / 2 / G_Q / 4)
    leaf = 100.0 / 4096
    ivs = {0.5: list(zip([float(r[1]) for r in rows], [float(r[2]) for r in rows]))}
    plows = [arr(r[3]) for r in rows]
    phighs = [arr(r[4]) for r in rows]
    for j, p in enumerate((0.1, 0.5, 0.9)):
        ivs["p%g" % p] = [(lo[j], hi[j]) for lo, hi in zip(plows, phighs)]
    for name, iv in ivs.items():
        p = 0.5 if name == 0.5 else float(name[1:])
        label = "median" if name == 0.5 else name
        for which, theta in zip(("cont", "disc"), true_quantiles(p)):
            coverage(check, "%s %s" % (label, which), iv, theta)
        # rank band of the high walk, plus the truncated noise, in value
        band = tau + p * tau_n + 2 + r_e + p * r_n
        far = true_quantiles(p)[0] + band / DENSITY + 2 * leaf
        focus(check, "%s" % label, iv, far)
        check.note("%s: intervals below %.3f (rank band %d)" % (label, far, band))
