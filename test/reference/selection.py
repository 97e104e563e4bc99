#!/usr/bin/env python3
"""Independent reference of the private partition selection of dp_agg.

Desfontaines, Voss, Gipson & Mandayam 2022, "Differentially private
partition selection" (PoPETs 2022(1)), Theorem 1: the (epsilon, delta)-DP
mechanism that releases a group of n units (each unit in one group) with
the highest probability releases it with probability pi(n), pi(0) = 0,

    pi(n) = min(e^eps pi(n-1) + delta, 1 - e^-eps (1 - pi(n-1) - delta), 1).

Here pi is computed from its closed form instead (the two linear
recurrences solved): while the first term binds (n <= m),

    pi(n) = delta (e^(n eps) - 1) / (e^eps - 1),

and after it, with q(n) = 1 - pi(n) = e^-eps (q(n-1) - delta),

    q(n) = e^(-(n-m) eps) q(m) - delta (1 - e^(-(n-m) eps)) / (e^eps - 1),

until q reaches 0 (pi = 1).  m is the last n at which the first term is the
smaller.  Everything is in 60-digit decimal arithmetic.  With max_groups
k > 1, dp_agg uses the same mechanism at (epsilon/k, delta/k).

With --check it checks itself: the closed form against the recursion of
Theorem 1 evaluated step by step (relative 1e-40), and every value against
the four (epsilon, delta)-DP constraints between n-1 and n units (to 1e-40);
it exits non-zero on any failure.  It prints the table of the README
("Private group keys"): the smallest n released with probability at least
0.5 and at least 0.99.

Usage: python3 test/reference/selection.py [--check]
"""
import decimal
import sys

from decimal import Decimal as D

decimal.getcontext().prec = 60


def _d(x):
    """A double (or int) as the exact decimal of its binary value."""
    return D(x) if isinstance(x, int) else D(float(x))


def curve(epsilon, delta, n_max, k=1):
    """[pi(0), ..., pi(n_max)] from the closed form (module docstring)."""
    eps = _d(epsilon) / k
    dl = _d(delta) / k
    e = eps.exp()
    ramp = lambda n: dl * ((eps * n).exp() - 1) / (e - 1)
    # m: last n where the first term binds, i.e. where the ramp value is
    # at most the second term evaluated at the ramp's previous value
    m = 0
    while m < n_max:
        prev = ramp(m)
        if ramp(m + 1) > 1 - (1 - prev - dl) / e:
            break
        m += 1
    pis = [ramp(n) for n in range(m + 1)]
    qm = 1 - pis[m]
    for n in range(m + 1, n_max + 1):
        t = (-(eps * (n - m))).exp()
        q = t * qm - dl * (1 - t) / (e - 1)
        if q <= 0:
            break               # 1 from here on
        pis.append(1 - q)
    pis += [D(1)] * (n_max + 1 - len(pis))
    return pis[:n_max + 1]


def pi(epsilon, delta, n, k=1):
    return curve(epsilon, delta, n, k)[n]


def recursion(epsilon, delta, n_max, k=1):
    """Theorem 1's recursion, step by step."""
    eps = _d(epsilon) / k
    dl = _d(delta) / k
    e = eps.exp()
    pis = [D(0)]
    for _ in range(n_max):
        p = pis[-1]
        pis.append(min(e * p + dl, 1 - (1 - p - dl) / e, D(1)))
    return pis


def smallest_n(epsilon, delta, level, k=1):
    n_max = 64
    while True:
        c = curve(epsilon, delta, n_max, k)
        for n, p in enumerate(c):
            if p >= level:
                return n
        n_max *= 2


CASES = [(0.1, 1e-5), (0.5, 1e-5), (1, 1e-5), (1, 1e-7), (1, 1e-9), (2, 1e-9), (5, 1e-9),
         (0.5, 1e-2), (1, 1e-3)]


def check():
    worst = D(0)
    bad = []
    for eps, dl in CASES:
        for k in (1, 3):
            n_max = 3 * smallest_n(eps, dl, 0.99, k) + 10
            c = curve(eps, dl, n_max, k)
            r = recursion(eps, dl, n_max, k)
            e = (_d(eps) / k).exp()
            dk = _d(dl) / k
            for n in range(1, n_max + 1):
                diff = abs(c[n] - r[n]) / max(r[n], D(10) ** -300)
                worst = max(worst, diff)
                if diff > D(10) ** -40:
                    bad.append("closed form %s vs recursion %s at eps %g delta %g k %d n %d"
                               % (c[n], r[n], eps, dl, k, n))
                p, q = c[n - 1], c[n]
                tol = D(10) ** -40
                for lhs, rhs in ((q, e * p + dk), (p, e * q + dk),
                                 (1 - p, e * (1 - q) + dk), (1 - q, e * (1 - p) + dk)):
                    if lhs > rhs + tol:
                        bad.append("DP constraint violated at eps %g delta %g k %d n %d" % (eps, dl, k, n))
                if q < p:
                    bad.append("pi decreases at eps %g delta %g k %d n %d" % (eps, dl, k, n))
    for b in bad[:20]:
        print("FAIL", b)
    print("-- worst relative difference closed form / recursion: %.3g" % worst)
    return not bad


def main():
    print("epsilon  delta   n(pi >= 0.5)  n(pi >= 0.99)  n(pi = 1)")
    for eps, dl in CASES[:7]:
        print("%-8g %-7g %-13s %-14s %s" % (eps, dl, smallest_n(eps, dl, 0.5),
                                            smallest_n(eps, dl, 0.99), smallest_n(eps, dl, 1)))
    if "--check" in sys.argv:
        sys.exit(0 if check() else 1)


if __name__ == "__main__":
    main()
