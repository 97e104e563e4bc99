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

Usage: python3 test/reference/rdp.py  (prints the values used by
sql/sampling.sql and sql/accounting.sql).
"""
import math


def log_a(q, s, alpha):
    """log A_alpha by trapezoidal integration (relative error < 1e-10)."""
    if q == 1:
        return alpha * (alpha - 1) / (2 * s * s)
    # the integrand peaks near z = 0 and, for large alpha, near z = alpha
    lo = -40 * s
    hi = alpha + 1 + 40 * s
    h = s / 40
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

if __name__ == "__main__":
    print("-- rate, noise_multiplier, order, rdp")
    for q, s, a in [(0.1, 1.0, 1.5), (0.1, 1.0, 2.0), (0.1, 1.0, 32.5), (0.01, 2.0, 7.3),
                    (1e-7, 1.0, 1.01), (1e-7, 1.0, 1.1), (0.99, 0.1, 256.0), (0.5, 0.7, 3.0),
                    (0.25, 4.0, 64.0), (1.0, 2.0, 10.0)]:
        print(f"({q}, {s}, {a}, {rdp(q, s, a):.15e}),")
    print("-- rate, noise_multiplier, steps, delta, epsilon")
    for q, s, k, d in [(0.01, 1.1, 1000, 1e-5), (0.1, 2.0, 1, 1e-6), (1.0, 4.0, 10, 1e-5)]:
        eps = to_epsilon(ORDERS, [k * rdp(q, s, a) for a in ORDERS], d)
        print(f"({q}, {s}, {k}, {d}, {eps:.15e}),")
