"""Chi-square goodness of fit of integer samples to an exact pmf.

Procedure (the same for every sampler test and for its negative control):

 1. Bins are chosen from the null pmf alone, before looking at the data:
    a central bin [-u0, u0] (just {0} when P(0) is large enough), then on
    each side consecutive intervals, each the shortest one with probability
    at least p_min = max(1/MAX_BINS, MIN_EXPECTED/n), the last one open
    ([e, inf)) and also of probability at least p_min.  So small scales get
    one bin per integer where the mass is, and large scales intervals whose
    exact probabilities come from the closed-form (Laplace) or tabulated
    (Gaussian) tail function: tails are pooled, no expected count is below
    MIN_EXPECTED (500), and there are at most about MAX_BINS bins.
 2. Pearson's X^2 = sum (O - E)^2 / E over the k bins, referred to chi-square
    with k - 1 degrees of freedom; p = Q((k-1)/2, X^2/2) (stats.py).
 3. Reject when p < 1e-6 (REJECT_P).

False-failure probability: 1e-6 up to the chi-square approximation of the
Pearson statistic.  With every expected count >= 500 that approximation is
close even 1e-6 into the tail: the exact variance of X^2 under the null is
2(k-1) + (sum 1/p_i - k^2 - 2k + 2)/n, at most 1 + 1/(2*500) times the
chi-square variance, which moves the 1e-6 tail by about one per cent.

Negative control (power).  If the data come from another law p1, then for
any union A of bins, Cauchy-Schwarz gives
    X^2 >= (O_A - n p0_A)^2 / (n p0_A),
so not rejecting (X^2 <= c, c the 1e-6 critical value) needs
|O_A - n p0_A| <= sqrt(c n p0_A), where O_A ~ Binomial(n, p1_A).  The
Chernoff bound of that binomial event, minimised over a few candidate sets A
(each bin, the bins where p1 < p0, and the bins where p1 > p0), is a
rigorous bound of the probability of missing; miss_bound() computes it and
the tests require it to be below 1e-6 for the sample size they use.  Its
usual summary is the noncentrality lambda = n sum (p1 - p0)^2 / p0 of the
statistic under p1 (X^2 is then roughly noncentral chi-square(k-1, lambda));
it is reported too.
"""

import bisect
import math

import stats

REJECT_P = 1e-6
MAX_BINS = 200
MIN_EXPECTED = 500


class Bins:
    """Integer bins: bin i is [lo_i, hi_i]; the first lo is -inf, the last hi +inf."""

    def __init__(self, edges):
        # edges: list of (lo, hi) in increasing order, contiguous
        self.edges = edges
        self._los = [lo for lo, _ in edges]

    def __len__(self):
        return len(self.edges)

    def index(self, x):
        return bisect.bisect_right(self._los, x) - 1

    def probs(self, law):
        return [law.prob(lo, hi) for lo, hi in self.edges]

    def histogram(self, counts):
        """counts: iterable of (value, count) -> observed count per bin."""
        obs = [0] * len(self.edges)
        for v, c in counts:
            obs[self.index(v)] += c
        return obs

    def describe(self):
        def f(v):
            return "inf" if v == math.inf else ("-inf" if v == -math.inf else str(v))
        return " ".join("[%s,%s]" % (f(lo), f(hi)) for lo, hi in self.edges)


def _shortest_from(law, e, pmin):
    """Smallest h >= e with P(e <= X <= h) >= pmin, or None if P(X >= e) < pmin."""
    if law.sf(e) < pmin:
        return None
    lo, hi = e, e
    while law.prob(e, hi) < pmin:
        lo, hi = hi, e + 2 * (hi - e + 1)
    while lo < hi:
        mid = (lo + hi) // 2
        if law.prob(e, mid) >= pmin:
            hi = mid
        else:
            lo = mid + 1
    return hi


def make_bins(law, n, max_bins=MAX_BINS, min_expected=MIN_EXPECTED):
    """Bins for n draws from a symmetric integer law (see the module docstring)."""
    pmin = max(1.0 / max_bins, min_expected / float(n))
    # central bin [-u0, u0]
    lo_u, hi_u = 0, 1
    while law.prob(-hi_u, hi_u) < pmin:
        hi_u *= 2
    while lo_u < hi_u:
        mid = (lo_u + hi_u) // 2
        if law.prob(-mid, mid) >= pmin:
            hi_u = mid
        else:
            lo_u = mid + 1
    u0 = hi_u
    right = []
    e = u0 + 1
    while True:
        h = _shortest_from(law, e, pmin)
        if h is None or law.sf(h + 1) < pmin:
            if law.sf(e) >= pmin:
                right.append((e, math.inf))
            elif right:
                right[-1] = (right[-1][0], math.inf)
            break
        right.append((e, h))
        e = h + 1
    if not right:
        # everything in the centre: widen it to the whole line
        return Bins([(-math.inf, math.inf)])
    left = [(-hi, -lo) for lo, hi in reversed(right)]
    return Bins(left + [(-u0, u0)] + right)


class GofResult:
    def __init__(self, n, k, x2, logp, obs, exp_counts):
        self.n = n
        self.k = k
        self.df = k - 1
        self.x2 = x2
        self.logp = logp
        self.obs = obs
        self.exp = exp_counts

    @property
    def rejected(self):
        return self.logp < math.log(REJECT_P)

    def summary(self):
        return "n=%d bins=%d X2=%.1f df=%d p=%s" % (
            self.n, self.k, self.x2, self.df, stats.format_p(self.logp))

    def worst_bins(self, bins, m=3):
        """The bins contributing most to X^2 (for failure messages)."""
        contrib = sorted(range(self.k), key=lambda i: -((self.obs[i] - self.exp[i]) ** 2 / self.exp[i]))
        out = []
        for i in contrib[:m]:
            lo, hi = bins.edges[i]
            out.append("[%s,%s] O=%d E=%.1f" % (lo, hi, self.obs[i], self.exp[i]))
        return "; ".join(out)


def pearson(bins, probs, counts):
    """Pearson's test of counts [(value, count)] against bin probabilities."""
    obs = bins.histogram(counts)
    n = sum(obs)
    exp_counts = [n * p for p in probs]
    x2 = math.fsum((o - e) ** 2 / e for o, e in zip(obs, exp_counts))
    df = len(obs) - 1
    logp = stats.chi2_logsf(x2, df) if df > 0 else 0.0
    return GofResult(n, len(obs), x2, logp, obs, exp_counts)


def noncentrality(n, p0, p1):
    return n * math.fsum((b - a) ** 2 / a for a, b in zip(p0, p1))


def miss_bound(n, p0, p1, reject_p=REJECT_P):
    """Rigorous upper bound of P[no rejection] when the data follow p1.

    See the module docstring: for a union A of bins, no rejection needs
    |O_A - n p0_A| <= sqrt(c n p0_A), O_A ~ Bin(n, p1_A)."""
    k = len(p0)
    c = stats.chi2_isf(reject_p, k - 1)
    candidates = [[i] for i in range(k)]
    candidates.append([i for i in range(k) if p1[i] < p0[i]])
    candidates.append([i for i in range(k) if p1[i] > p0[i]])
    best = 1.0
    for a in candidates:
        if not a or len(a) == k:
            continue
        q0 = math.fsum(p0[i] for i in a)
        q1 = math.fsum(p1[i] for i in a)
        r = math.sqrt(c * n * q0)
        lo, hi = n * q0 - r, n * q0 + r
        if q1 * n < lo:
            b = stats.binom_tail_bound(n, q1, lo, upper=True)
        elif q1 * n > hi:
            b = stats.binom_tail_bound(n, q1, hi, upper=False)
        else:
            b = 1.0
        best = min(best, b)
    return best
