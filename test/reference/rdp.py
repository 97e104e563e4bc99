#!/usr/bin/env python3
"""Independent reference values for dp_agg's Renyi DP calculators.

The Renyi divergence of order alpha of the Poisson-subsampled Gaussian
mechanism (rate q, noise multiplier s, add/remove neighbours) is
log(A_alpha) / (alpha - 1) with (Mironov, Talwar & Zhang 2019)

    A_alpha = E_{z ~ N(0, s^2)} [ (1 - q + q exp((2z - 1) / (2 s^2)))^alpha ].

dp_agg evaluates it with the binomial expansion (integer orders) and the
signed series of Mironov et al. (fractional orders).  Here we integrate the
definition directly, with no series at all: the trapezoidal rule on a fine
grid over the whole mass of the integrand (spectrally accurate for this
smooth, Gaussian-decaying integrand), in log space when A is large and as
A - 1 via expm1/log1p when it is close to 1, so that tiny divergences keep
their relative precision.  The conversion to (epsilon, delta) is written
out from Balle et al. 2020, Theorem 21.

With --check it also checks itself: at integer orders against the exact
binomial expansion in 60-digit decimal arithmetic (log_a_binomial), and at
the fractional corners against the same integral with half the step; it
exits non-zero if any relative difference exceeds 1e-9.  (The signed series
for fractional orders is no independent check at tiny rates: at
z0 = s^2 ln(1/q - 1) + 1/2 its second half decays only like a power of the
index, so it cannot be summed to high precision.)

Usage: python3 test/reference/rdp.py [--check]  (prints the values used by
sql/sampling.sql and sql/accounting.sql).
"""
import math
import sys


def log_a(q, s, alpha, steps_per_sigma=40):
    """log A_alpha by trapezoidal integration (relative error < 1e-10)."""
    if q == 1:
        return alpha * (alpha - 1) / (2 * s * s)
    # the integrand peaks near z = 0 and, for large alpha, near z = alpha
    lo = -40 * s
    hi = alpha + 1 + 40 * s
    h = s / steps_per_sigma
    n = int((hi - lo) / h) + 1

    def log_ratio(z):  # log(1 - q + q e^x), x = (2z - 1)/(2 s^2)
        x = (2 * z - 1) / (2 * s * s)
        if x > 0:
            return x + math.log(q + (1 - q) * math.exp(-x))
        return math.log1p(q * math.expm1(x))

    logs = []
    for k in range(n):
        z = lo + k * h
        logs.append(alpha * log_ratio(z) - z * z / (2 * s * s))
    m = max(logs)
    norm = math.log(h) - math.log(s * math.sqrt(2 * math.pi))
    if m > 1e-3:   # A well above 1: log-sum-exp
        return m + math.log(sum(math.exp(v - m) for v in logs)) + norm
    # A close to 1: A - 1 = E[(1 + qY)^alpha - 1 - alpha q Y] with
    # Y = exp((2z - 1)/(2 s^2)) - 1, as E[Y] = 0; removing the first-order
    # term pointwise keeps the second-order quantity A - 1 exact to about
    # 1e-9 relative even for q = 1e-7 (it is about q^2)
    total = 0.0
    weight = h / (s * math.sqrt(2 * math.pi))
    for k in range(n):
        z = lo + k * h
        u = q * math.expm1((2 * z - 1) / (2 * s * s))
        g = math.expm1(alpha * math.log1p(u)) - alpha * u
        total += g * math.exp(-z * z / (2 * s * s))
    return math.log1p(total * weight)


def log_a_binomial(q, s, alpha):
    """log A_alpha for an integer order by the exact binomial expansion
    (Mironov, Talwar & Zhang 2019, section 3.2),
        A_alpha = sum_k C(alpha, k) (1 - q)^(alpha - k) q^k exp((k^2 - k) / (2 s^2)),
    every term positive, summed in log space in 60-digit decimal arithmetic: a method that
    shares nothing with the integration."""
    from decimal import Decimal as D, getcontext
    getcontext().prec = 60
    n = int(alpha)
    q, s = D(repr(q)), D(repr(s))
    # in log space: the terms can exceed decimal's exponent range
    logs = [D(math.comb(n, k)).ln() + (n - k) * (1 - q).ln() + k * q.ln()
            + (k * k - k) / (2 * s * s) for k in range(n + 1)]
    m = max(logs)
    return float(m + sum((v - m).exp() for v in logs).ln())


def rdp(q, s, alpha):
    return log_a(q, s, alpha) / (alpha - 1)


def to_epsilon(orders, rdps, delta):
    best = math.inf
    for a, r in zip(orders, rdps):
        if a <= 1.01:
            continue
        best = min(best, r + math.log1p(-1 / a) - (math.log(delta) + math.log(a)) / (a - 1))
    return max(best, 0.0)


ORDERS = [1 + x / 10 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024]

# sigma of the analytic Gaussian at (0.5, 1e-6), sensitivity 1, from
# test/reference/gaussian.py (120-digit bisection)
SIGMA_05_1E6 = 8.05761848072504426


def composed_gaussian_epsilon(sigma, k, delta):
    """epsilon at delta of k Gaussian releases of noise multiplier sigma:
    Renyi DP k alpha / (2 sigma^2) at each order of the grid, converted by
    Balle et al. 2020, Theorem 21."""
    return to_epsilon(ORDERS, [k * a / (2 * sigma * sigma) for a in ORDERS], delta)


def laplace_rdp(eps, alpha):
    """Renyi DP of the continuous Laplace mechanism (Mironov 2017,
    Proposition 6): log(a/(2a-1) e^((a-1) eps) + (a-1)/(2a-1) e^(-a eps))/(a-1)."""
    return math.log(alpha / (2 * alpha - 1) * math.exp((alpha - 1) * eps)
                    + (alpha - 1) / (2 * alpha - 1) * math.exp(-alpha * eps)) / (alpha - 1)


if __name__ == "__main__":
    print("-- k Gaussian releases, sigma = gaussian_sigma(0.5, 1e-6, 1): epsilon at delta 1e-5")
    for k in (1, 10, 100, 1000):
        print(f"({k}, {composed_gaussian_epsilon(SIGMA_05_1E6, k, 1e-5):.15e}),")
    print("-- continuous Laplace Renyi DP at epsilon 1, orders 1.5, 2, 10, 63")
    for a in (1.5, 2, 10, 63):
        print(f"({a}, {laplace_rdp(1.0, a):.15e}),")
    print("-- rate, noise_multiplier, order, rdp")
    for q, s, a in [(0.1, 1.0, 1.5), (0.1, 1.0, 2.0), (0.1, 1.0, 32.5), (0.01, 2.0, 7.3),
                    (1e-7, 1.0, 1.01), (1e-7, 1.0, 1.1), (0.99, 0.1, 256.0), (0.5, 0.7, 3.0),
                    (0.25, 4.0, 64.0), (1.0, 2.0, 10.0)]:
        print(f"({q}, {s}, {a}, {rdp(q, s, a):.15e}),")
    print("-- rate, noise_multiplier, steps, delta, epsilon")
    for q, s, k, d in [(0.01, 1.1, 1000, 1e-5), (0.1, 2.0, 1, 1e-6), (1.0, 4.0, 10, 1e-5)]:
        eps = to_epsilon(ORDERS, [k * rdp(q, s, a) for a in ORDERS], d)
        print(f"({q}, {s}, {k}, {d}, {eps:.15e}),")
    if "--check" in sys.argv:
        # the integration against the exact binomial expansion at integer
        # orders, and at the fractional corners against itself with half the
        # step (the trapezoidal rule converges spectrally here: agreement
        # means both are exact to that precision)
        worst = 0.0
        for q, s, a in [(0.1, 1.0, 2), (0.1, 1.0, 32), (0.01, 2.0, 7), (1e-7, 1.0, 2),
                        (0.99, 0.1, 256), (0.5, 0.7, 3), (0.25, 4.0, 64)]:
            exact, integral = log_a_binomial(q, s, a), log_a(q, s, a)
            rel = abs(integral / exact - 1)
            worst = max(worst, rel)
            print(f"-- ({q}, {s}, {a}): binomial {exact:.15e}, integral {integral:.15e}, rel {rel:.1e}")
        for q, s, a in [(1e-7, 1.0, 1.01), (1e-7, 1.0, 1.1), (0.01, 2.0, 7.3), (0.1, 1.0, 1.5),
                        (0.1, 1.0, 32.5)]:
            coarse, fine = log_a(q, s, a), log_a(q, s, a, steps_per_sigma=80)
            rel = abs(coarse / fine - 1)
            worst = max(worst, rel)
            print(f"-- ({q}, {s}, {a}): step s/40 {coarse:.15e}, s/80 {fine:.15e}, rel {rel:.1e}")
        print(f"-- worst relative difference {worst:.1e}")
        sys.exit(0 if worst < 1e-9 else 1)
