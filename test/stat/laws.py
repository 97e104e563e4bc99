"""The noise laws of dp_agg, computed from their exact probability mass functions.

Discrete Laplace with scale b on the integers (the sampler's "laplace"):
    P(x) = (1 - a) / (1 + a) * a^|x|,  a = exp(-1/b)
    P(X >= x) = a^x / (1 + a) for x >= 1
    E X^2 = 2a / (1 - a)^2,  E X^4 = 2a (1 + 11a + 11a^2 + a^3) / ((1 + a)(1 - a)^4)
Discrete Gaussian with parameter sigma on the integers (the sampler's "gaussian"):
    P(x) = exp(-x^2 / (2 sigma^2)) / Z,  Z = sum over all integers,
    summed numerically from the centre out over |x| <= 40 sigma + 2 (the mass
    beyond is below 1e-300), so every probability is exact to rounding.

A release of dp_agg is  true value + grid * X  with X one of these laws, its
parameter in grid units (noise_scale / grid, from the ledger).  Integer
results whose noise lives on a grid finer than 1 (Gaussian counts and
Gaussian sums of integers: grid about sigma / 2^40) are rounded half up
afterwards, so their noise is N = round(grid * X), an integer; RoundedLaw is
its exact law in the continuous limit, P(N >= n) = P(W >= n - 1/2) for
n >= 1, W the Laplace or normal law of the same scale (the lattice changes
these probabilities by a relative grid/scale < 1e-11).

For the aggregate tests a law is turned into a finite law (stats.NodeLaw) of
the noise in value units, truncated at +-R (the mass beyond R is put on +-R):

  * if R is at most MAX_LATTICE lattice steps, the nodes are the lattice
    points themselves with their exact probabilities;
  * otherwise (noise of about 2^40 grid units) the lattice is far finer than
    anything that matters and the nodes are those of composite 8-point
    Gauss-Legendre quadrature of the continuous limit (the Laplace or normal
    density of the same scale, whose moments differ from the lattice law's
    by a relative (grid/scale)^2 < 1e-20), on `panels` equal panels a side
    of 0 (the Laplace density has a kink there).  With 16 panels (8 for
    dp_avg's product law) the quadrature error of the moments and
    generating functions is about 1e-9 relative or less
    (test_00_selfcheck checks it): immaterial for the thresholds.

The truncation is a coupling: X' = clamp(X, -R, R) equals X unless |X| > R,
and R is chosen so that this happens in any of the G releases of a test with
probability at most alpha_trunc; tests add alpha_trunc to their false-failure
probability.  Thresholds computed for X' then hold for X up to that amount.
"""

import math

from stats import NodeLaw

MAX_LATTICE = 20000
PANELS = 16                 # Gauss-Legendre panels a side, continuous limit
GL_POINTS = 8


def gauss_legendre(m):
    """Nodes and weights of the m-point Gauss-Legendre rule on [-1, 1]."""
    nodes, weights = [], []
    for i in range(1, m + 1):
        x = math.cos(math.pi * (i - 0.25) / (m + 0.5))
        for _ in range(100):
            p0, p1 = 1.0, x
            for k in range(2, m + 1):
                p0, p1 = p1, ((2 * k - 1) * x * p1 - (k - 1) * p0) / k
            dp = m * (x * p1 - p0) / (x * x - 1.0)
            dx = p1 / dp
            x -= dx
            if abs(dx) < 1e-16:
                break
        p0, p1 = 1.0, x
        for k in range(2, m + 1):
            p0, p1 = p1, ((2 * k - 1) * x * p1 - (k - 1) * p0) / k
        dp = m * (x * p1 - p0) / (x * x - 1.0)
        nodes.append(x)
        weights.append(2.0 / ((1.0 - x * x) * dp * dp))
    return nodes, weights


class DiscreteLaplace:
    """Discrete Laplace with scale b on the integers."""

    name = "laplace"

    def __init__(self, b):
        if not b > 0:
            raise ValueError("scale must be positive")
        self.b = float(b)
        self.one_minus_a = -math.expm1(-1.0 / self.b)
        self.a = math.exp(-1.0 / self.b)
        self.c = self.one_minus_a / (1.0 + self.a)

    def pmf(self, x):
        return self.c * math.exp(-abs(x) / self.b)

    def sf(self, x):
        """P(X >= x)."""
        if x >= 1:
            return math.exp(-x / self.b) / (1.0 + self.a)
        return 1.0 - self.sf(1 - x)

    def prob(self, lo, hi):
        """P(lo <= X <= hi); lo may be -inf, hi +inf (integers otherwise)."""
        return _interval_prob(self, lo, hi)

    def var(self):
        return 2.0 * self.a / self.one_minus_a ** 2

    def fourth(self):
        a = self.a
        return 2.0 * a * (1 + 11 * a + 11 * a * a + a ** 3) / ((1 + a) * self.one_minus_a ** 4)

    def tail_radius(self, mass):
        """Smallest integer R >= 0 with P(|X| > R) <= mass."""
        # P(|X| > R) = 2 a^(R+1) / (1 + a)
        r = math.ceil(self.b * math.log(2.0 / ((1.0 + self.a) * mass)) - 1.0)
        r = max(r, 0)
        while r > 0 and 2.0 * self.sf(r) <= mass:
            r -= 1
        while 2.0 * self.sf(r + 1) > mass:
            r += 1
        return r

    def support_radius(self):
        """|x| beyond which the mass is below 1e-300."""
        return int(math.ceil(self.b * 700.0)) + 2

    def continuous_density(self, w, scale_value):
        return math.exp(-abs(w) / scale_value) / (2.0 * scale_value)

    def continuous_tail(self, r_value, scale_value):
        """P(|W| > r) of the continuous limit."""
        return math.exp(-r_value / scale_value)


class DiscreteGaussian:
    """Discrete Gaussian with parameter sigma on the integers."""

    name = "gaussian"

    def __init__(self, sigma, build=True):
        if not sigma > 0:
            raise ValueError("sigma must be positive")
        self.sigma = float(sigma)
        self.m = int(math.ceil(40.0 * self.sigma)) + 2
        self._pmf = None
        if build:
            self._build()

    def _build(self):
        if self.m > 2_000_000:
            raise ValueError("sigma too large for an exact pmf table")
        two_s2 = 2.0 * self.sigma * self.sigma
        half = [math.exp(-(x * x) / two_s2) for x in range(self.m + 1)]
        # Z summed smallest terms first
        z = half[0] + 2.0 * math.fsum(reversed(half[1:]))
        self._pmf = [v / z for v in half]
        # upper tails S[x] = P(X >= x) for 0 <= x <= m+1, summed from the far end
        tail = [0.0] * (self.m + 2)
        acc = 0.0
        for x in range(self.m, -1, -1):
            acc += self._pmf[x]
            tail[x] = acc
        self._tail = tail

    def pmf(self, x):
        x = abs(x)
        return self._pmf[x] if x <= self.m else 0.0

    def sf(self, x):
        """P(X >= x)."""
        if x >= 1:
            return self._tail[x] if x <= self.m else 0.0
        return 1.0 - self.sf(1 - x)

    def prob(self, lo, hi):
        return _interval_prob(self, lo, hi)

    def var(self):
        return 2.0 * math.fsum(p * x * x for x, p in enumerate(self._pmf))

    def fourth(self):
        return 2.0 * math.fsum(p * x ** 4 for x, p in enumerate(self._pmf))

    def tail_radius(self, mass):
        r = 0
        while 2.0 * self.sf(r + 1) > mass:
            r += 1
        return r

    def support_radius(self):
        return self.m

    def continuous_density(self, w, scale_value):
        return math.exp(-0.5 * (w / scale_value) ** 2) / (scale_value * math.sqrt(2.0 * math.pi))

    def continuous_tail(self, r_value, scale_value):
        return math.erfc(r_value / (scale_value * math.sqrt(2.0)))


class RoundedLaw:
    """N = round_half_up(W) for W continuous Laplace (scale b) or normal
    (sigma), on the integers: the noise of an integer result computed on a
    fine lattice and rounded afterwards (module docstring)."""

    def __init__(self, mechanism, scale):
        if not scale > 0:
            raise ValueError("scale must be positive")
        self.mechanism = mechanism
        self.name = "rounded " + mechanism
        self.scale = float(scale)
        if mechanism == "laplace":
            self._sw = lambda w: 0.5 * math.exp(-w / self.scale)
            self.m = int(math.ceil(700.0 * self.scale)) + 2
        elif mechanism == "gaussian":
            self._sw = lambda w: 0.5 * math.erfc(w / (self.scale * math.sqrt(2.0)))
            self.m = int(math.ceil(40.0 * self.scale)) + 2
        else:
            raise ValueError("unknown mechanism %r" % (mechanism,))
        if self.m > 2_000_000:
            raise ValueError("scale too large for an exact pmf table")
        # S[x] = P(N >= x) = P(W >= x - 1/2), x = 1 .. m+1
        self._tail = [0.0, 0.0] + [self._sw(x - 0.5) for x in range(2, self.m + 2)]
        self._tail[1] = self._sw(0.5)
        self._tail[0] = 1.0 - self._tail[1]

    def sf(self, x):
        """P(N >= x)."""
        if x >= 1:
            return self._tail[x] if x <= self.m + 1 else 0.0
        return 1.0 - self.sf(1 - x)

    def pmf(self, x):
        x = abs(x)
        if x == 0:
            return 1.0 - 2.0 * self._tail[1]
        return self.sf(x) - self.sf(x + 1)

    def prob(self, lo, hi):
        return _interval_prob(self, lo, hi)

    def var(self):
        return 2.0 * math.fsum(self.pmf(x) * x * x for x in range(1, self.m + 1))

    def fourth(self):
        return 2.0 * math.fsum(self.pmf(x) * x ** 4 for x in range(1, self.m + 1))

    def tail_radius(self, mass):
        r = 0
        while 2.0 * self.sf(r + 1) > mass:
            r += 1
        return r


def _interval_prob(law, lo, hi):
    """P(lo <= X <= hi) for a symmetric law with sf(); accurate in the tails."""
    if hi < lo:
        return 0.0
    if lo >= 1:
        # both in the right tail
        upper = law.sf(hi + 1) if hi != math.inf else 0.0
        return law.sf(lo) - upper
    if hi <= -1:
        return _interval_prob(law, -hi, -lo)
    # straddles 0
    left = law.sf(1 - lo) if lo != -math.inf else 0.0      # P(X <= lo - 1)
    right = law.sf(hi + 1) if hi != math.inf else 0.0     # P(X >= hi + 1)
    return 1.0 - left - right


def make_law(mechanism, scale, build=True):
    """The sampler law of a mechanism with its parameter in grid units."""
    if mechanism == "laplace":
        return DiscreteLaplace(scale)
    if mechanism == "gaussian":
        return DiscreteGaussian(scale, build=build)
    raise ValueError("unknown mechanism %r" % (mechanism,))


class ReleaseNoise:
    """The noise of one release: grid * X, X of a mechanism with parameter
    scale/grid in grid units (scale = the ledger's noise_scale).  With
    integer=True (a bigint result) and a grid finer than 1 the released
    noise is round(grid * X) instead (RoundedLaw)."""

    def __init__(self, mechanism, scale, grid, integer=False):
        self.mechanism = mechanism
        self.scale = float(scale)
        self.grid = float(grid)
        self.rounded = integer and self.grid < 1.0
        self.lattice = None     # the exact law on the integers, when tabulated
        self.step = self.grid   # value of one lattice step
        if self.rounded:
            self.lattice = RoundedLaw(mechanism, self.scale)
            self.step = 1.0
        elif mechanism == "laplace" or self.scale / self.grid <= MAX_LATTICE / 8.0:
            self.lattice = make_law(mechanism, self.scale / self.grid)

    def var(self):
        """Exact variance of the noise in value units."""
        if self.lattice is not None:
            return self.lattice.var() * self.step ** 2
        return self.scale ** 2          # continuous limit (relative error < 1e-20)

    def fourth(self):
        if self.lattice is not None:
            return self.lattice.fourth() * self.step ** 4
        return 3.0 * self.scale ** 4

    def truncated(self, mass, panels=PANELS):
        """(NodeLaw of the noise truncated at R, R, P(|noise| > R) <= mass)."""
        if self.lattice is not None:
            r = self.lattice.tail_radius(mass)
            if r <= MAX_LATTICE:
                law = self.lattice
                values, weights = [], []
                for x in range(-r, r + 1):
                    values.append(x * self.step)
                    weights.append(law.pmf(x))
                t = law.sf(r + 1)
                weights[0] += t
                weights[-1] += t
                return NodeLaw(values, weights), r * self.step, 2.0 * t
        return self._continuous(mass, panels)

    def _continuous(self, mass, panels):
        proto = make_law(self.mechanism, 1.0, build=False)
        s = self.scale
        # radius with tail mass <= mass
        r = s
        while proto.continuous_tail(r, s) > mass:
            r *= 1.05
        tail = proto.continuous_tail(r, s)
        gx, gw = gauss_legendre(GL_POINTS)
        h = r / panels
        values, weights = [], []
        for j in range(panels):
            a = j * h
            for x, w in zip(gx, gw):
                u = a + 0.5 * h * (x + 1.0)
                d = 0.5 * h * w * proto.continuous_density(u, s)
                values.extend([u, -u])
                weights.extend([d, d])
        values.extend([r, -r])
        weights.extend([tail / 2.0, tail / 2.0])
        return NodeLaw(values, weights), r, tail


def avg_law(count_noise, sum_noise, n, centred, mass):
    """The law of dp_avg's estimate minus the midpoint, (C + W) / (n + X).

    X is the count noise (ReleaseNoise), W the noise of the centred sum,
    n the number of rows, C = centred (the exact centred sum, value units).
    Both noises are truncated (mass each); returns (NodeLaw, the smallest
    possible n + X', the largest possible |C + W'|, total truncated mass)."""
    xlaw, rx, mx = count_noise.truncated(mass, panels=8)
    wlaw, rw, mw = sum_noise.truncated(mass, panels=8)
    values, weights = [], []
    for x, px in zip(xlaw.h, xlaw.w):
        d = n + x
        if d < 1:
            raise ValueError("count noise truncation reaches n + X < 1")
        for w, pw in zip(wlaw.h, wlaw.w):
            values.append((centred + w) / d)
            weights.append(px * pw)
    return NodeLaw(values, weights), n - rx, abs(centred) + rw, mx + mw
