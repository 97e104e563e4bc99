"""Special functions and tail bounds of dp_agg's statistical tests.

Standard library only.  Everything here is deterministic; test_00_selfcheck.py
checks it against closed forms.

Chi-square p-values
    P[chi2_nu > x] = Q(nu/2, x/2), the regularized upper incomplete gamma
    function, computed by its series (x < a + 1) or its continued fraction
    (modified Lentz), as in Numerical Recipes (3rd ed., 6.2), in log space so
    that the astronomically small p-values of the negative controls are
    representable.  Relative accuracy about 1e-14.

Chernoff thresholds (used by the aggregate tests)
    For the mean of G independent copies of a bounded random variable H with
    cumulant generating function K(t) = log E exp(t H), and any t > 0,
        P[mean >= x] <= exp(-G (t x - K(t))).
    The smallest x for which some t makes the right side <= alpha is
        x* = min_{t > 0} (K(t) + log(1/alpha) / G) / t,
    attained where t K'(t) - K(t) = log(1/alpha) / G (the left side grows
    with t since its derivative is t K''(t) >= 0), and then x* = K'(t).
    The bound is rigorous (no normal approximation) for the law it is given;
    laws.py describes the laws.

Binomial tails (used by the negative controls)
    P[Bin(n, p) >= k] <= exp(-n KL(k/n || p)) for k >= n p, and the same for
    the lower tail (Chernoff-Hoeffding in its relative-entropy form).
"""

import math

LOG_TINY = -745.0   # log of the smallest positive double, about


# ---------- incomplete gamma and chi-square ----------

def _log_gser(a, x):
    """log P(a, x) by the series; for x < a + 1."""
    ap = a
    term = 1.0 / a
    total = term
    for _ in range(100000):
        ap += 1.0
        term *= x / ap
        total += term
        if abs(term) < abs(total) * 1e-17:
            break
    else:
        raise ArithmeticError("incomplete gamma series did not converge")
    return math.log(total) - x + a * math.log(x) - math.lgamma(a)


def _log_gcf(a, x):
    """log Q(a, x) by the continued fraction; for x >= a + 1."""
    fpmin = 1e-300
    b = x + 1.0 - a
    c = 1.0 / fpmin
    d = 1.0 / b
    h = d
    for i in range(1, 100000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        if abs(d) < fpmin:
            d = fpmin
        c = b + an / c
        if abs(c) < fpmin:
            c = fpmin
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    else:
        raise ArithmeticError("incomplete gamma continued fraction did not converge")
    return math.log(h) - x + a * math.log(x) - math.lgamma(a)


def log_gammainc_upper(a, x):
    """log Q(a, x), Q the regularized upper incomplete gamma function."""
    if a <= 0:
        raise ValueError("a must be positive")
    if x <= 0:
        return 0.0
    if x < a + 1.0:
        p = math.exp(_log_gser(a, x))
        return math.log1p(-p) if p < 1.0 else LOG_TINY * 10
    return _log_gcf(a, x)


def log_gammainc_lower(a, x):
    """log P(a, x), P = 1 - Q the regularized lower incomplete gamma function."""
    if a <= 0:
        raise ValueError("a must be positive")
    if x <= 0:
        return -math.inf
    if x < a + 1.0:
        return _log_gser(a, x)
    q = math.exp(_log_gcf(a, x))
    return math.log1p(-q)


def gammainc_upper(a, x):
    return math.exp(log_gammainc_upper(a, x))


def gammainc_lower(a, x):
    return math.exp(log_gammainc_lower(a, x))


def chi2_logsf(x, df):
    """log P[chi2_df > x]."""
    return log_gammainc_upper(df / 2.0, x / 2.0)


def chi2_sf(x, df):
    return math.exp(chi2_logsf(x, df))


def chi2_isf(p, df):
    """The x with P[chi2_df > x] = p (bisection; p in (0, 1))."""
    target = math.log(p)
    lo, hi = 0.0, max(2.0 * df, 10.0)
    while chi2_logsf(hi, df) > target:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if chi2_logsf(mid, df) > target:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return hi


def format_p(logp):
    """A p-value given by its natural log, readable at any size."""
    if logp > math.log(1e-300):
        p = math.exp(logp)
        return "%.3g" % p
    return "10^%.0f" % (logp / math.log(10.0))


def normal_sf(z):
    return 0.5 * math.erfc(z / math.sqrt(2.0))


# ---------- binomial tails ----------

def kl_bernoulli(q, p):
    """Relative entropy KL(Bernoulli(q) || Bernoulli(p))."""
    r = 0.0
    if q > 0:
        r += q * math.log(q / p)
    if q < 1:
        r += (1 - q) * math.log((1 - q) / (1 - p))
    return r


def binom_tail_bound(n, p, k, upper):
    """Chernoff bound of P[Bin(n,p) >= k] (upper) or P[Bin(n,p) <= k] (lower).

    Returns 1 when k is on the wrong side of the mean (no bound)."""
    q = k / n
    if upper:
        if q <= p:
            return 1.0
        if q >= 1:
            return p ** n if q == 1 else 0.0
    else:
        if q >= p:
            return 1.0
        if q <= 0:
            return (1 - p) ** n if q == 0 else 0.0
    return math.exp(-n * kl_bernoulli(q, p))


def binomial_acceptance(n, p, alpha_side):
    """Integers (lo, hi) with P[Bin(n,p) < lo] <= alpha_side and
    P[Bin(n,p) > hi] <= alpha_side, by the Chernoff bound above (rigorous).
    For tests of counts of successes, e.g. the coverage of intervals."""
    def smallest(ok, a, b):     # smallest k in [a, b] with ok(k); ok monotone
        while a < b:
            m = (a + b) // 2
            if ok(m):
                b = m
            else:
                a = m + 1
        return a
    mean = n * p
    hi = smallest(lambda k: binom_tail_bound(n, p, k + 1, upper=True) <= alpha_side,
                  int(math.floor(mean)), n)
    lo = -smallest(lambda k: binom_tail_bound(n, p, -k - 1, upper=False) <= alpha_side,
                   -int(math.ceil(mean)), 0)
    return lo, hi


# ---------- Chernoff thresholds for means of i.i.d. bounded variables ----------

class NodeLaw:
    """A finite law: values h[j] with probabilities w[j] (summing to 1)."""

    def __init__(self, values, weights):
        total = math.fsum(weights)
        if not total > 0:
            raise ValueError("law without mass")
        pairs = [(h, w / total) for h, w in zip(values, weights) if w > 0]
        self.h = [p[0] for p in pairs]
        self.w = [p[1] for p in pairs]
        self.hmax = max(self.h)
        self.hmin = min(self.h)

    def mean(self):
        return math.fsum(w * h for h, w in zip(self.h, self.w))

    def central_moment(self, k, centre=None):
        c = self.mean() if centre is None else centre
        return math.fsum(w * (h - c) ** k for h, w in zip(self.h, self.w))

    def map(self, f):
        return NodeLaw([f(h) for h in self.h], self.w)

    def cumulants(self, t):
        """K(t), K'(t), K''(t) of K(t) = log E exp(t H)."""
        h, w = self.h, self.w
        m = t * (self.hmax if t >= 0 else self.hmin)
        s0 = s1 = s2 = 0.0
        for hj, wj in zip(h, w):
            e = wj * math.exp(t * hj - m)
            s0 += e
            s1 += e * hj
            s2 += e * hj * hj
        k1 = s1 / s0
        return m + math.log(s0), k1, max(s2 / s0 - k1 * k1, 0.0)


def chernoff_upper(law, n, alpha):
    """x such that P[mean of n i.i.d. copies of law >= x] <= alpha.

    Rigorous: x = K'(t) at the root of t K'(t) - K(t) = log(1/alpha)/n, which
    is min_t (K(t) + log(1/alpha)/n) / t.  If the root does not exist (the
    largest value alone has probability above alpha^(1/n)), returns the
    largest value: the mean cannot exceed it."""
    c = math.log(1.0 / alpha) / n
    mu = law.mean()
    var = law.central_moment(2, mu)
    spread = law.hmax - law.hmin
    if spread <= 0:
        return law.hmax

    def g(t):
        k, k1, _ = law.cumulants(t)
        return t * k1 - k - c, k, k1

    # bracket the root
    t_lo = 0.0
    t_hi = math.sqrt(2.0 * c / var) if var > 0 else 1.0 / spread
    for _ in range(200):
        gv, _, _ = g(t_hi)
        if gv > 0:
            break
        t_lo, t_hi = t_hi, t_hi * 2.0
        if t_hi * spread > 1e5:
            return law.hmax
    # bisection on log t (g is increasing), to a relative width of 1e-10
    if t_lo == 0.0:
        t_lo = t_hi / 2.0
        while g(t_lo)[0] > 0:
            t_lo /= 2.0
    for _ in range(200):
        tm = math.sqrt(t_lo * t_hi)
        gv, _, _ = g(tm)
        if gv > 0:
            t_hi = tm
        else:
            t_lo = tm
        if t_hi - t_lo <= 1e-10 * t_hi:
            break
    # any t gives a valid bound; take the upper end of the bracket and
    # evaluate the bound there exactly
    _, k, _ = g(t_hi)
    return (k + c) / t_hi


def chernoff_lower(law, n, alpha):
    """x such that P[mean of n i.i.d. copies of law <= x] <= alpha."""
    return -chernoff_upper(law.map(lambda v: -v), n, alpha)
