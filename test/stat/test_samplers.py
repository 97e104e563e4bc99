"""The exact samplers against their probability mass functions.

For each mechanism and parameter, N = 250000 draws of
dp_agg.noise_sample(mechanism, scale, N) are compared with the exact pmf
(laws.py) by the chi-square procedure of gof.py: bins fixed from the pmf in
advance (single integers where the mass is, intervals with exact interval
probabilities at large scales, tails pooled, every expected count >= 500),
Pearson's X^2, p-value from the regularized incomplete gamma function,
rejection when p < 1e-6.

  sampler_<mech>_<scale>       the sampler at that scale must NOT be rejected.
      False failure: 1e-6 (up to the chi-square approximation, see gof.py).
  sampler_<mech>_<scale>_x1.3  negative control: N draws at 1.3 times the
      scale, tested by the same procedure against the pmf at 1 times the
      scale, must be rejected.  Before drawing, the test computes a rigorous
      bound of the probability that the procedure misses (gof.miss_bound:
      Cauchy-Schwarz on a union of bins plus a binomial Chernoff bound) and
      requires it to be below 1e-6; it also reports the noncentrality
      lambda = N sum (p1 - p0)^2 / p0 of X^2 under the wrong scale (X^2 is
      then roughly noncentral chi-square with that lambda, whose mean
      df + lambda is far beyond the critical value).  The bound is
      astronomically small at N = 250000 for every scale here; it is
      checked anyway, so that a smaller N or a milder alternative cannot
      slip in unnoticed.  False failure (no rejection of the wrong law):
      at most that bound, far below 1e-6.
"""


import db
import gof
import laws
from framework import stat_test

N = 250000
WRONG = 1.3
SAMPLER = "dp_agg.noise_sample"     # the SQL function drawing raw samples

LAPLACE_SCALES = [0.5, 1.0, 3.7, 40.0, 1e4]
GAUSSIAN_SIGMAS = [0.7, 2.0, 5.3, 60.0]


def draw(mechanism, scale, n):
    """n raw draws, as a histogram [(value, count)]."""
    out = db.rows("COPY (SELECT noise, count(*) FROM %s(%s, %r::float8, %d) GROUP BY noise) TO STDOUT;"
                  % (SAMPLER, db.literal(mechanism), float(scale), n))
    hist = [(int(v), int(c)) for v, c in out]
    total = sum(c for _, c in hist)
    if total != n:
        raise db.SqlError("asked for %d draws, got %d" % (n, total))
    return hist


def null_test(mechanism, scale):
    def run(check):
        law = laws.make_law(mechanism, scale)
        bins = gof.make_bins(law, N)
        probs = bins.probs(law)
        res = gof.pearson(bins, probs, draw(mechanism, scale, N))
        check.that(not res.rejected,
                   "rejected: %s; worst bins %s" % (res.summary(), res.worst_bins(bins)))
        if not res.rejected:
            check.note(res.summary())
    return run


def negative_control(mechanism, scale):
    def run(check):
        law0 = laws.make_law(mechanism, scale)
        law1 = laws.make_law(mechanism, WRONG * scale)
        bins = gof.make_bins(law0, N)
        p0 = bins.probs(law0)
        p1 = bins.probs(law1)
        bound = gof.miss_bound(N, p0, p1)
        lam = gof.noncentrality(N, p0, p1)
        check.that(bound <= 1e-6, "design: miss probability bound %.3g > 1e-6" % bound)
        check.stop_if_failed()
        res = gof.pearson(bins, p0, draw(mechanism, WRONG * scale, N))
        check.that(res.rejected, "NOT rejected: %s (lambda=%.0f)" % (res.summary(), lam))
        if res.rejected:
            check.note("rejected as it must: %s lambda=%.0f miss%s"
                       % (res.summary(), lam, ("<=%.1g" % bound) if bound > 0 else "<1e-300"))
    return run


def _label(x):
    return ("%g" % x).replace("+", "")


for _b in LAPLACE_SCALES:
    stat_test("sampler_laplace_%s" % _label(_b))(null_test("laplace", _b))
    stat_test("sampler_laplace_%s_x1.3" % _label(_b))(negative_control("laplace", _b))
for _s in GAUSSIAN_SIGMAS:
    stat_test("sampler_gaussian_%s" % _label(_s))(null_test("gaussian", _s))
    stat_test("sampler_gaussian_%s_x1.3" % _label(_s))(negative_control("gaussian", _s))
