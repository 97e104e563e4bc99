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

As a second, independent check of the corners where A is close to 1 (tiny
rates), rdp_series_decimal evaluates the series of Mironov, Talwar & Zhang
2019 (section 3.3) in 80-digit decimal arithmetic, where its cancellations
are harmless; the two methods must agree.  It is slow (minutes): run it
with --series.

Usage: python3 test/reference/rdp.py  (prints the values used by
sql/sampling.sql and sql/accounting.sql).
"""
import math
import sys


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


PI_DEC = ("3.14159265358979323846264338327950288419716939937510582097494459"
          "230781640628620899862803482534211706798")


def _log_erfc_dec(x):
    """log erfc(x) in decimal arithmetic: the Maclaurin series of erf for
    |x| <= 3, and beyond the continued fraction
    erfc(x) = exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...))))
    evaluated backwards from a depth where it has converged."""
    from decimal import Decimal as D
    pi = D(PI_DEC)
    if x < -3:
        return (2 - (_log_erfc_dec(-x)).exp()).ln()
    if x > 3:
        depth = 4000
        f = x
        for k in range(depth, 0, -1):
            f = x + (D(k) / 2) / f
        return -x * x - pi.sqrt().ln() - f.ln()
    term = x
    total = x
    n = 0
    while True:
        n += 1
        term = -term * x * x / n
        add = term / (2 * n + 1)
        total += add
        if abs(add) < D(10) ** -70 and n > 10:
            break
    return (1 - 2 / pi.sqrt() * total).ln()


def rdp_series_decimal(q, s, alpha):
    """Mironov, Talwar & Zhang's series for fractional alpha, each term
    computed from its logarithm in 80-digit decimal arithmetic."""
    from decimal import Decimal as D, getcontext
    getcontext().prec = 80
    q, s, alpha = D(repr(q)), D(repr(s)), D(repr(alpha))
    z0 = s * s * (1 / q - 1).ln() + D("0.5")
    sq2 = D(2).sqrt()
    lq, l1q = q.ln(), (1 - q).ln()
    a0 = a1 = D(0)
    log_coef, sign = D(0), 1
    i = 0
    while True:
        j = alpha - i
        lt0 = log_coef + i * lq + j * l1q + (i * i - i) / (2 * s * s) \
            + _log_erfc_dec((i - z0) / (sq2 * s)) - D(2).ln()
        lt1 = log_coef + j * lq + i * l1q + (j * j - j) / (2 * s * s) \
            + _log_erfc_dec((z0 - j) / (sq2 * s)) - D(2).ln()
        a0 += sign * lt0.exp()
        a1 += sign * lt1.exp()
        if i > alpha + 5 and max(lt0, lt1) < D(-184):
            break
        log_coef += abs(alpha - i).ln() - D(i + 1).ln()
        if alpha - i < 0:
            sign = -sign
        i += 1
    return float((a0 + a1).ln() / (alpha - 1))


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
    if "--series" in sys.argv:
        print("-- corners by the 80-digit series, which must agree with the above")
        for q, s, a in [(1e-7, 1.0, 1.01), (1e-7, 1.0, 1.1), (0.01, 2.0, 7.3), (0.1, 1.0, 1.5)]:
            print(f"-- ({q}, {s}, {a}): series {rdp_series_decimal(q, s, a):.15e}, integral {rdp(q, s, a):.15e}")
