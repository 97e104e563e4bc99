"""Self-checks of the suite's own mathematics (no database, no randomness).

These assertions are deterministic (false-failure probability 0): the
incomplete gamma function against closed forms, the pmfs and their moments
against direct sums, the bins against the pmf, and the Chernoff threshold
against a case solvable by hand.  A statistical test is only as good as
these.
"""

import math

import gof
import laws
import stats
from framework import stat_test


def _rel(a, b):
    return abs(a - b) / max(abs(b), 1e-300)


@stat_test("selfcheck_incomplete_gamma")
def incomplete_gamma(check):
    worst = 0.0
    for x in [1e-3, 0.1, 0.7, 1.0, 2.5, 7.0, 15.0, 40.0, 120.0, 600.0]:
        # Q(1, x) = e^-x ; Q(1/2, x) = erfc(sqrt x)
        worst = max(worst, abs(stats.log_gammainc_upper(1.0, x) + x) / max(x, 1.0))
        q = math.erfc(math.sqrt(x))
        if q > 1e-300:
            worst = max(worst, _rel(stats.gammainc_upper(0.5, x), q))
        # integer a: Q(n, x) = e^-x sum_{k<n} x^k / k!
        for n in [2, 3, 7, 20, 50]:
            log_terms = [k * math.log(x) - math.lgamma(k + 1) for k in range(n)]
            mx = max(log_terms)
            log_q = -x + mx + math.log(math.fsum(math.exp(t - mx) for t in log_terms))
            worst = max(worst, abs(stats.log_gammainc_upper(float(n), x) - log_q)
                        / max(1.0, abs(log_q)))
            p = stats.gammainc_lower(float(n), x)
            worst = max(worst, abs(p + stats.gammainc_upper(float(n), x) - 1.0))
    check.that(worst < 1e-12, "incomplete gamma error %.2g" % worst)
    # chi-square quantile round trip, and a textbook value: chi2_1 at 1e-6 is 23.928
    c = stats.chi2_isf(1e-6, 1)
    check.that(abs(c - 23.9281) < 1e-3, "chi2_1 1e-6 quantile %.5f" % c)
    for df in [1, 4, 99, 400]:
        c = stats.chi2_isf(1e-6, df)
        check.that(_rel(stats.chi2_sf(c, df), 1e-6) < 1e-9, "chi2 isf round trip df=%d" % df)
    check.note("max error %.1g" % worst)


@stat_test("selfcheck_laws")
def laws_check(check):
    worst = 0.0
    for b in [0.5, 1.0, 3.7, 40.0]:
        law = laws.DiscreteLaplace(b)
        r = law.support_radius() if b < 5 else int(b * 60)
        xs = range(-r, r + 1)
        total = math.fsum(law.pmf(x) for x in xs)
        v2 = math.fsum(law.pmf(x) * x * x for x in xs)
        v4 = math.fsum(law.pmf(x) * x ** 4 for x in xs)
        worst = max(worst, abs(total - 1), _rel(law.var(), v2), _rel(law.fourth(), v4))
        # tail function against sums
        for x in [1, 2, 5, int(3 * b) + 1]:
            s = math.fsum(law.pmf(y) for y in range(x, r + 1))
            worst = max(worst, _rel(law.sf(x), s))
    # large-b limit: variance 2 b^2 - 1/6 + O(1/b^2)
    big = laws.DiscreteLaplace(2.0 ** 40)
    check.that(_rel(big.var(), 2.0 * 2.0 ** 80) < 1e-12, "Laplace variance limit")
    for s in [0.7, 2.0, 5.3, 60.0]:
        law = laws.DiscreteGaussian(s)
        total = math.fsum(law.pmf(x) for x in range(-law.m, law.m + 1))
        worst = max(worst, abs(total - 1))
        if s >= 2:
            # Poisson summation: the variance is sigma^2 to within 1e-30 relative
            worst = max(worst, _rel(law.var(), s * s))
    # rounded continuous laws: Sheppard's correction is exact for the normal
    # up to terms in exp(-2 pi^2 sigma^2): Var = sigma^2 + 1/12
    for s in [2.0, 8.0, 300.0]:
        law = laws.RoundedLaw("gaussian", s)
        total = law.pmf(0) + 2.0 * math.fsum(law.pmf(x) for x in range(1, law.m + 1))
        worst = max(worst, abs(total - 1), _rel(law.var(), s * s + 1.0 / 12.0))
    # rounded Laplace: E N^2 = sum over n of n^2 P(n), P from the exponential tails
    law = laws.RoundedLaw("laplace", 3.0)
    v = 2.0 * math.fsum(x * x * (0.5 * math.exp(-(x - 0.5) / 3.0) - 0.5 * math.exp(-(x + 0.5) / 3.0))
                        for x in range(1, 3000))
    worst = max(worst, _rel(law.var(), v))
    check.that(worst < 1e-12, "pmf/moment error %.2g" % worst)
    # bins: contiguous, probabilities sum to 1, each at least p_min
    for law in [laws.DiscreteLaplace(0.5), laws.DiscreteLaplace(1e4),
                laws.DiscreteGaussian(0.7), laws.DiscreteGaussian(60.0),
                laws.RoundedLaw("gaussian", 3.7)]:
        n = 250000
        bins = gof.make_bins(law, n)
        p = bins.probs(law)
        ok = abs(math.fsum(p) - 1) < 1e-12 and min(p) * n >= gof.MIN_EXPECTED
        ok = ok and all(bins.edges[i][1] + 1 == bins.edges[i + 1][0] for i in range(len(bins) - 1))
        ok = ok and bins.edges[0][0] == -math.inf and bins.edges[-1][1] == math.inf
        check.that(ok, "bins of %s %s" % (law.name, getattr(law, "b", getattr(law, "sigma", ""))))
    check.note("max error %.1g" % worst)


@stat_test("selfcheck_quadrature")
def quadrature(check):
    # Gauss-Legendre: exact for polynomials of degree < 2m
    x, w = laws.gauss_legendre(laws.GL_POINTS)
    err = max(abs(math.fsum(wi * xi ** k for xi, wi in zip(x, w)) - (2.0 / (k + 1) if k % 2 == 0 else 0.0))
              for k in range(2 * laws.GL_POINTS))
    check.that(err < 1e-14, "Gauss-Legendre error %.2g" % err)
    # the continuous-limit node laws against the exact moments
    worst = 0.0
    for mech, scale in [("laplace", 50.0), ("gaussian", 37.3)]:
        for panels in [laws.PANELS, 8]:
            rn = laws.ReleaseNoise(mech, scale, 2.0 ** -35)
            # a tiny truncation mass, so that only the quadrature error is left
            law, r, tail = rn.truncated(1e-20, panels=panels)
            check.that(rn.lattice is None or r / rn.grid > laws.MAX_LATTICE,
                       "%s: continuous limit expected" % mech)
            v2 = law.central_moment(2, 0.0)
            v4 = law.central_moment(4, 0.0)
            worst = max(worst, _rel(v2, rn.var()), _rel(v4, rn.fourth()))
            # a moment generating function: E exp(t W) for t = 1/(2 scale)
            t = 0.5 / scale
            exact = 1.0 / (1.0 - (t * scale) ** 2) if mech == "laplace" else math.exp((t * scale) ** 2 / 2)
            mgf = math.fsum(wi * math.exp(t * hi) for hi, wi in zip(law.h, law.w))
            worst = max(worst, _rel(mgf, exact))
    check.that(worst < 1e-8, "continuous node laws: moment error %.2g" % worst)
    check.note("Gauss-Legendre %.1g, node-law moments %.1g" % (err, worst))


@stat_test("selfcheck_chernoff")
def chernoff_check(check):
    # Rademacher (+-1): the Chernoff threshold x solves n KL((1+x)/2 || 1/2) = log(1/alpha)
    law = stats.NodeLaw([-1.0, 1.0], [0.5, 0.5])
    n, alpha = 5000, 5e-7
    x = stats.chernoff_upper(law, n, alpha)
    lhs = n * stats.kl_bernoulli((1 + x) / 2, 0.5)
    check.that(abs(lhs - math.log(1 / alpha)) < 1e-6, "Rademacher threshold %.6g" % x)
    # it must lie above the normal approximation and not far above it
    z = x * math.sqrt(n)
    check.that(5.0 < z < 5.6, "Rademacher threshold in sd units %.3f" % z)
    # a normal law (as nodes): Chernoff gives exactly sqrt(2 log(1/alpha)) sd
    noise = laws.ReleaseNoise("gaussian", 1e6, 1.0)
    nl, r, tail = noise.truncated(1e-15)
    x = stats.chernoff_upper(nl, n, alpha) / (1e6 / math.sqrt(n))
    check.that(abs(x - math.sqrt(2 * math.log(1 / alpha))) < 1e-3,
               "normal threshold %.5f sd" % x)
    # lower threshold is the mirror image for a symmetric law
    check.that(abs(stats.chernoff_lower(law, n, alpha) + stats.chernoff_upper(law, n, alpha)) < 1e-12,
               "symmetry")
    # binomial acceptance interval: exact tails (summed) within alpha
    n, p, a = 2000, 0.95, 4.9e-7
    lo, hi = stats.binomial_acceptance(n, p, a)
    logpmf = [math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
              + k * math.log(p) + (n - k) * math.log1p(-p) for k in range(n + 1)]
    below = math.fsum(math.exp(v) for v in logpmf[:lo])
    above = math.fsum(math.exp(v) for v in logpmf[hi + 1:])
    check.that(below <= a and above <= a and lo <= n * p <= hi,
               "binomial acceptance [%d, %d]: tails %.2g %.2g" % (lo, hi, below, above))
    # miss_bound: no power against the null itself
    p0 = [0.25, 0.5, 0.25]
    check.that(gof.miss_bound(1000, p0, p0) == 1.0, "miss bound under the null")
    check.note("Rademacher z=%.3f, normal %.4f sd" % (z, x))
