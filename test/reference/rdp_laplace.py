#!/usr/bin/env python3
"""Independent reference values for the Renyi DP of the Poisson-subsampled
discrete Laplace mechanism (dp_agg.rdp_sampled_laplace, and the 'rdp'
charge of Laplace releases under TABLESAMPLE BERNOULLI).

The discrete Laplace of parameter lam, mu_0(x) = c a^|x| on the integers
(a = e^-lam, c = (1 - a)/(1 + a)), shifted by s for the other neighbour,
read on a Poisson sample of rate q: without the person the output has law
mu_0, with the person the mixture m = (1 - q) mu_0 + q mu_s.  Here the Renyi
divergences of both directions,

    remove: D_k(m || mu_0) = log(sum_x m(x)^k mu_0(x)^(1-k)) / (k - 1),
    add:    D_k(mu_0 || m) = log(sum_x mu_0(x)^k m(x)^(1-k)) / (k - 1),

are summed directly from the two probability mass functions in 60-digit
decimal arithmetic, with no binomial expansion and no theorem about which
direction is worse: term by term for 0 < x < s, and in closed form where
m / mu_0 is constant (x <= 0 and x >= s: geometric series of ratio a, summed
exactly), so nothing is truncated.  Any real order works the same way.

dp_agg computes the remove direction at integer orders by the binomial
expansion (Steinke 2022, Theorem 34), takes it as the worse direction
(Theorem 35), the largest shift s = d as the worst, and the next integer
order above a fractional one.  With --check this script checks each of
those claims on a grid (the add direction is never above the remove one;
the divergence grows with the shift; dp_agg's value at a fractional order
is at least the true one), and checks the direct sums against the binomial
expansion at integer orders, to a relative 1e-40; it exits non-zero on any
failure.

Releases computed from one sample (dp_avg's pair, several calls of a
statement) are one mechanism on the sample: shared_rdp sums its divergence
directly over the product of the releases' pmfs (the ratio takes finitely
many values per release, so the sum is finite and exact), and --check
compares it with dp_agg's expansion with the releases' moments multiplied.

It prints the values used by sql/accounting.sql: the divergence at a few
orders, the curve of two dp_count releases at 0.5 from one BERNOULLI(1)
sample (capped at 1 and alpha/2, what any 1-DP mechanism has), and the number of BERNOULLI(1) (q = 0.01) releases of dp_count at
epsilon 1 (base epsilon ln(1 + (e - 1)/0.01), sensitivity 1) that a budget
(5, 1e-5) admits under 'rdp', with the conversion of Balle et al. 2020,
Theorem 21, on the order grid of dp_agg.rdp_orders().

Usage: python3 test/reference/rdp_laplace.py [--check]
"""
import math
import sys
from decimal import Decimal, getcontext

getcontext().prec = 60


def pmfs(lam, s, q):
    """a, c, and the constant ratios m/mu_0 left of 0 and right of s."""
    a = (-lam).exp()
    c = (1 - a) / (1 + a)
    r_left = (1 - q) + q * a ** s
    r_right = (1 - q) + q / a ** s
    return a, c, r_left, r_right


def divergence_sums(lam, s, q, k):
    """(remove, add): sum_x m^k mu_0^(1-k) and sum_x mu_0^k m^(1-k)."""
    a, c, r_left, r_right = pmfs(lam, s, q)
    left = 1 / (1 + a)           # sum_{x <= 0} mu_0(x)
    right = a ** s / (1 + a)     # sum_{x >= s} mu_0(x)
    remove = left * r_left ** k + right * r_right ** k
    add = left * r_left ** (1 - k) + right * r_right ** (1 - k)
    for x in range(1, s):
        p0 = c * a ** x
        ps = c * a ** (s - x)
        m = (1 - q) * p0 + q * ps
        remove += m ** k * p0 ** (1 - k)
        add += p0 ** k * m ** (1 - k)
    return remove, add


def rdp(lam, s, q, k):
    """(remove, add) Renyi divergences of order k."""
    remove, add = divergence_sums(lam, s, q, k)
    return remove.ln() / (k - 1), add.ln() / (k - 1)


def binomial_sum(lam, s, q, k):
    """The remove sum by the binomial expansion (integer k): for checking."""
    total = Decimal(0)
    for j in range(k + 1):
        moment = divergence_sums(lam, s, Decimal(1), j)[0] if j >= 2 else Decimal(1)
        total += math.comb(k, j) * (1 - q) ** (k - j) * q ** j * moment
    return total


def ratio_values(lam, s, q):
    """The values of mu_s / mu_0 on the integers with their mu_0-masses:
    constant left of 0 and right of s, one value per point between."""
    a = (-lam).exp()
    c = (1 - a) / (1 + a)
    out = [(a ** s, 1 / (1 + a)), (1 / a ** s, a ** s / (1 + a))]
    for x in range(1, s):
        out.append((a ** (s - 2 * x) if s >= 2 * x else 1 / a ** (2 * x - s), c * a ** x))
    return out


def shared_rdp(lams, ss, q, k):
    """(remove, add) Renyi divergences of order k of several discrete Laplace
    releases computed from one Poisson sample: without the person the
    product of mu_0's, with the person (1 - q) prod mu_0 + q prod mu_s.
    Summed directly over the product of the value lists (exact)."""
    terms = [(Decimal(1), Decimal(1))]
    for lam, s in zip(lams, ss):
        terms = [(r * r2, w * w2) for r, w in terms for r2, w2 in ratio_values(lam, s, q)]
    remove = sum(w * ((1 - q) + q * r) ** k for r, w in terms)
    add = sum(w * ((1 - q) + q * r) ** (1 - k) for r, w in terms)
    return remove.ln() / (k - 1), add.ln() / (k - 1)


def shared_binomial(lams, ss, q, k):
    """The same remove sum by the binomial expansion with the moments of the
    releases multiplied (dp_agg's rdp_laplace.c): for checking."""
    total = Decimal(0)
    for j in range(k + 1):
        moment = Decimal(1)
        if j >= 2:
            for lam, s in zip(lams, ss):
                moment *= divergence_sums(lam, s, Decimal(1), j)[0]
        total += math.comb(k, j) * (1 - q) ** (k - j) * q ** j * moment
    return total.ln() / (k - 1)


def orders():
    """dp_agg.rdp_orders(): the dp_accounting grid."""
    return ([1 + x / 10 for x in range(1, 100)] + list(range(11, 64))
            + [128, 256, 512, 1024])


def charged(lam, d, q, alpha, epsilon):
    """What dp_agg charges at order alpha: next integer order, capped."""
    k = math.ceil(alpha)
    value = float(rdp(lam, d, q, k)[0])
    return min(value, epsilon, alpha * epsilon * epsilon / 2)


def to_epsilon(alphas, rdps, delta):
    """Balle et al. 2020, Theorem 21, orders above 1.01."""
    best = math.inf
    for a, r in zip(alphas, rdps):
        if a > 1.01:
            best = min(best, r + math.log1p(-1 / a)
                       - (math.log(delta) + math.log(a)) / (a - 1))
    return max(best, 0.0)


def base_epsilon(epsilon, q):
    """ln(1 + (e^epsilon - 1)/q), the noise of an amplified release."""
    return math.log1p(math.expm1(epsilon) / q)


def admitted(epsilon, q, budget_epsilon, budget_delta):
    """Releases of dp_count (sensitivity 1) admitted under 'rdp'."""
    lam = Decimal(base_epsilon(epsilon, q))
    cache = {}
    curve = []
    for a in orders():
        k = math.ceil(a)
        if k not in cache:
            cache[k] = float(rdp(lam, 1, Decimal(q), k)[0])
        curve.append(min(cache[k], epsilon, a * epsilon * epsilon / 2))
    n = 0
    while to_epsilon(orders(), [(n + 1) * c for c in curve], budget_delta) <= budget_epsilon:
        n += 1
    return n


CASES = [  # (noise_scale, sensitivity, rate, orders)
    (1.0, 1, 0.01, [2, 3, 11, 64, 1024]),
    (10.0, 3, 0.1, [2, 5.5, 6, 32]),
    (0.5, 7, 0.5, [2, 4]),
]


def check():
    failures = 0
    for scale, d, q, alphas in CASES + [(2.0, 5, 0.2, [2, 3, 7])]:
        lam = 1 / Decimal(scale)
        qd = Decimal(q)
        for alpha in alphas:
            k = math.ceil(alpha)
            remove, add = rdp(lam, d, qd, k)
            if add > remove:
                print(f"FAIL add above remove: scale {scale} d {d} q {q} k {k}")
                failures += 1
            if k == alpha:
                direct = divergence_sums(lam, d, qd, k)[0]
                expanded = binomial_sum(lam, d, qd, k)
                if abs(direct / expanded - 1) > Decimal("1e-40"):
                    print(f"FAIL binomial expansion: scale {scale} d {d} q {q} k {k}")
                    failures += 1
            else:
                true_frac = rdp(lam, d, qd, Decimal(str(alpha)))
                if max(true_frac) > remove:
                    print(f"FAIL fractional order {alpha} above order {k}")
                    failures += 1
            previous = Decimal(0)
            for s in range(1, d + 1):
                value = max(rdp(lam, s, qd, k))
                if value < previous:
                    print(f"FAIL not monotone in the shift: scale {scale} d {d} s {s} k {k}")
                    failures += 1
                previous = value
    for lams, ss, q, k in [((Decimal(1), Decimal("0.5")), (1, 3), Decimal("0.05"), 4),
                           ((Decimal("2.5"), Decimal("2.5")), (1, 1), Decimal("0.01"), 11)]:
        remove, add = shared_rdp(lams, ss, q, k)
        if add > remove:
            print(f"FAIL shared sample: add above remove, k {k}")
            failures += 1
        if abs(remove / shared_binomial(lams, ss, q, k) - 1) > Decimal("1e-40"):
            print(f"FAIL shared sample: binomial expansion, k {k}")
            failures += 1
    print(f"rdp_laplace.py --check: {failures} failures")
    return failures


def main():
    for scale, d, q, alphas in CASES:
        for alpha in alphas:
            remove, add = rdp(1 / Decimal(scale), d, Decimal(q), math.ceil(alpha))
            print(f"rate {q} scale {scale} sensitivity {d} order {alpha}: "
                  f"{float(remove):.15g} (add direction {float(add):.15g})")
    lam = Decimal(base_epsilon(1.0, 0.01)) / 2
    for k in (2, 11, 63, 1024):
        remove, add = shared_rdp((lam, lam), (1, 1), Decimal("0.01"), k)
        print(f"two dp_count at 0.5 from one BERNOULLI(1) sample, order {k}: "
              f"{min(float(remove), 1.0, k / 2):.15g} (add direction {float(add):.15g})")
    print("dp_count at epsilon 1, BERNOULLI(1), budget (5, 1e-5), 'rdp':",
          admitted(1.0, 0.01, 5.0, 1e-5), "releases")
    if "--check" in sys.argv and check():
        sys.exit(1)


if __name__ == "__main__":
    main()
