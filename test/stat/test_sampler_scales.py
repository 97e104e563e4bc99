"""dp_agg.noise_sample at tiny and huge scales against the exact law.

What the sampler is meant to draw (src/accounting/functions.c dp_noise_sample; the
aggregates convert their scales the same way, src/release/release.c):
  * laplace, scale b: the discrete Laplace (Canonne, Kamath & Steinke 2020,
    Algorithm 2) whose parameter is the dyadic rational t/s that the
    aggregates use for b: b itself when its denominator is at most 2^63,
    otherwise b rounded up to a multiple of 2^-63 (laplace_param below);
  * gaussian, sigma: the discrete Gaussian (same paper, Algorithm 3) with
    variance parameter v = sigma^2 rounded up to a double.
N = 250000 draws per test.

Small scales: the counts of four events, nonzero, +1, -1 and |x| >= 2, are
each Binomial(N, p) with p from the exact pmf (laws.py).  An event whose
probability is so small that N p <= 1e-7 must not occur at all: false
failure at most N p <= 1e-7 (p below 2^-1074 when it underflows).  At
Laplace scales below about 0.034 and Gaussian sigmas below about 0.13
every event but 0 is of that kind: the sampler must return only zeros (a
nonzero draw has probability below 2 e^-2048 at Laplace scale 2^-11).  Otherwise the count must lie in the
Chernoff acceptance interval stats.binomial_acceptance(N, p, 4.9e-7): false
failure at most 9.8e-7 per assertion.

  small_<mech>_<scale>           the sampler at that scale
  small_<mech>_<scale>_x1.3      negative control: draws at 1.3 times the
      scale must fall outside one of the intervals of the scale; before
      drawing, the Chernoff bound of the probability of staying inside is
      required to be below 1e-6 (false failure at most that bound).

Huge scales (2^40, 1e15 for Laplace; 2^40, 1e12 for Gaussian sigma, whose
sampler limit is 2^48):
  huge_<mech>_<scale>            chi-square goodness of fit of the draws to
      the exact pmf over bins fixed in advance (gof.py: intervals with
      exact probabilities, every expected count >= 500, rejection at
      p < 1e-6; false failure 1e-6 up to the chi-square approximation), and
      the mean and variance of the draws against Chernoff thresholds from
      the law itself (noise_checks.assert_mean_and_variance: at most 1e-6
      per assertion, truncation included).  The Laplace pmf is exact in
      closed form at any scale.  The discrete Gaussian at sigma >= 2^20 is
      binned by its continuum limit, P(lo <= X <= hi) = Phi((hi + 1/2)/s)
      - Phi((lo - 1/2)/s), s = sqrt(v): by the Euler-Maclaurin formula the
      error of each bin probability is O(1/s^2) relative (below 1e-12 here),
      and by Poisson summation that of the normalising constant is
      O(exp(-2 pi^2 s^2)): far below what 250000 draws can see.  The draws
      divided by the scale are printed as their standard deviation.
  huge_<mech>_<scale>_x1.3       negative control as in test_samplers.py:
      draws at 1.3 times the scale must be rejected by the chi-square test
      of the scale; miss probability bound (gof.miss_bound) below 1e-6
      checked before drawing.
"""

import math
from fractions import Fraction

import gof
import laws
import noise_checks as nc
import stats
from framework import stat_test
from test_samplers import draw

N = 250000
WRONG = 1.3
ALPHA_SIDE = 4.9e-7
NEVER = 1e-7            # an event with N p below this must not occur
TINY_FLOAT = 2.0 ** -1074

LAPLACE_SMALL = [0.1, 0.25, 2.0 ** -11, 2.0 ** -12, 2.0 ** -20, 1e-6, 2.0 ** -40]
GAUSSIAN_SMALL = [0.3, 0.45, 0.1, 0.01, 1.0 / 256.0]
LAPLACE_HUGE = [2.0 ** 40, 1e15]
GAUSSIAN_HUGE = [2.0 ** 40, 1e12]
CONTROLS_SMALL = [("laplace", 0.1), ("gaussian", 0.3)]
CONTROLS_HUGE = [("laplace", 2.0 ** 40), ("gaussian", 2.0 ** 40)]


def laplace_param(scale):
    """The aggregates' discrete Laplace parameter t/s >= scale, exactly."""
    b = Fraction(scale)
    if b.denominator <= 2 ** 63:
        return b
    return Fraction(math.ceil(b * 2 ** 63), 2 ** 63)


def gaussian_variance(sigma):
    """sigma^2 rounded up to a double, as the sampler's parameter."""
    exact = Fraction(sigma) ** 2
    v = float(exact)
    if Fraction(v) < exact:
        v = math.nextafter(v, math.inf)
    return v


class ContinuumGaussian:
    """The discrete Gaussian of variance parameter v at large v, through its
    continuum limit (module docstring): sf(x) = P(X >= x)."""

    def __init__(self, v):
        self.s = math.sqrt(v)

    def sf(self, x):
        if x >= 1:
            return 0.5 * math.erfc((x - 0.5) / (self.s * math.sqrt(2.0)))
        return 1.0 - self.sf(1 - x)

    def prob(self, lo, hi):
        return laws._interval_prob(self, lo, hi)


def exact_law(mechanism, scale):
    if mechanism == "laplace":
        return laws.DiscreteLaplace(float(laplace_param(scale)))
    v = gaussian_variance(scale)
    if v >= 2.0 ** 40:
        return ContinuumGaussian(v)
    return laws.DiscreteGaussian(math.sqrt(v))


def small_events(law):
    """[(name, test(x), p)] of the four events of the module docstring."""
    p1 = law.pmf(1)
    p2 = 2.0 * law.sf(2)
    return [("nonzero", lambda x: x != 0, 2.0 * p1 + p2),
            ("+1", lambda x: x == 1, p1),
            ("-1", lambda x: x == -1, p1),
            ("|x|>=2", lambda x: abs(x) >= 2, p2)]


def acceptance(p):
    """(lo, hi) for the count of an event of probability p among N draws,
    and the false-failure probability of the assertion."""
    if N * max(p, TINY_FLOAT) <= NEVER:
        return (0, 0), N * max(p, TINY_FLOAT)
    return stats.binomial_acceptance(N, p, ALPHA_SIDE), 2 * ALPHA_SIDE


def count_events(hist, events):
    return [sum(c for v, c in hist if test(v)) for _, test, _ in events]


def small_test(mechanism, scale):
    def run(check):
        law = exact_law(mechanism, scale)
        events = small_events(law)
        hist = draw(mechanism, scale, N)
        counts = count_events(hist, events)
        for (name, _, p), k in zip(events, counts):
            (lo, hi), alpha = acceptance(p)
            check.within("#%s" % name, k, lo, hi, "%d")
            check.that(alpha <= 1e-6, "design: false-failure probability %.2g" % alpha)
        if any(v != 0 for v, _ in hist):
            check.note("draws in [%d, %d]" % (min(v for v, _ in hist), max(v for v, _ in hist)))
    return run


def small_control(mechanism, scale):
    def run(check):
        law0 = exact_law(mechanism, scale)
        law1 = exact_law(mechanism, WRONG * scale)
        events = small_events(law0)
        # the event whose interval the wrong law most surely leaves
        best, bound = None, 1.0
        for i, ((_, _, p0), (_, _, p1)) in enumerate(zip(events, small_events(law1))):
            (lo, hi), _ = acceptance(p0)
            miss = min(1.0, stats.binom_tail_bound(N, p1, hi, upper=False)) if p1 * N > hi else 1.0
            if miss < bound:
                best, bound = i, miss
        check.that(bound <= 1e-6, "design: miss probability bound %.3g > 1e-6" % bound)
        check.stop_if_failed()
        name, _, p0 = events[best]
        (lo, hi), _ = acceptance(p0)
        k = count_events(draw(mechanism, WRONG * scale, N), [events[best]])[0]
        check.that(not lo <= k <= hi, "NOT rejected: #%s=%d in [%d,%d]" % (name, k, lo, hi))
        check.note("#%s=%d outside [%d,%d] as it must be (miss<=%.1g)" % (name, k, lo, hi, bound))
    return run


def huge_test(mechanism, scale):
    def run(check):
        law = exact_law(mechanism, scale)
        bins = gof.make_bins(law, N)
        hist = draw(mechanism, scale, N)
        res = gof.pearson(bins, bins.probs(law), hist)
        check.that(not res.rejected,
                   "rejected: %s; worst bins %s" % (res.summary(), res.worst_bins(bins)))
        if not res.rejected:
            check.note(res.summary())
        noise = []
        for v, c in hist:
            noise.extend([float(v)] * c)
        exact_scale = float(laplace_param(scale)) if mechanism == "laplace" \
            else math.sqrt(gaussian_variance(scale))
        node_law, _, _ = laws.ReleaseNoise(mechanism, exact_scale, 1.0).truncated(nc.ALPHA_TRUNC / N)
        nc.assert_mean_and_variance(check, noise, node_law)
        sd = math.sqrt(math.fsum(x * x for x in noise) / N) / scale
        check.note("sd/scale %.4f" % sd)
    return run


def huge_control(mechanism, scale):
    def run(check):
        law0 = exact_law(mechanism, scale)
        law1 = exact_law(mechanism, WRONG * scale)
        bins = gof.make_bins(law0, N)
        p0, p1 = bins.probs(law0), bins.probs(law1)
        bound = gof.miss_bound(N, p0, p1)
        check.that(bound <= 1e-6, "design: miss probability bound %.3g > 1e-6" % bound)
        check.stop_if_failed()
        res = gof.pearson(bins, p0, draw(mechanism, WRONG * scale, N))
        check.that(res.rejected, "NOT rejected: %s" % res.summary())
        if res.rejected:
            check.note("rejected as it must: %s" % res.summary())
    return run


def _label(x):
    e = math.log2(x)
    if e == int(e) and abs(e) >= 10:
        return "2^%d" % e
    return ("%g" % x).replace("+", "")


for _m, _scales in (("laplace", LAPLACE_SMALL), ("gaussian", GAUSSIAN_SMALL)):
    for _s in _scales:
        stat_test("small_%s_%s" % (_m, _label(_s)))(small_test(_m, _s))
for _m, _s in CONTROLS_SMALL:
    stat_test("small_%s_%s_x1.3" % (_m, _label(_s)))(small_control(_m, _s))
for _m, _scales in (("laplace", LAPLACE_HUGE), ("gaussian", GAUSSIAN_HUGE)):
    for _s in _scales:
        stat_test("huge_%s_%s" % (_m, _label(_s)))(huge_test(_m, _s))
for _m, _s in CONTROLS_HUGE:
    stat_test("huge_%s_%s_x1.3" % (_m, _label(_s)))(huge_control(_m, _s))
