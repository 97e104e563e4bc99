#!/usr/bin/env python3
"""Independent reference values for dp_agg's Gaussian calibration.

Computes, with Python's decimal module at 120 significant digits (no
floating point, no code shared with dp_agg):

  delta(sigma, eps) of the continuous Gaussian mechanism with sensitivity 1
  (Balle & Wang 2018, Theorem 8):
      delta = Phi(1/(2 sigma) - eps sigma) - e^eps Phi(-1/(2 sigma) - eps sigma)
  with Phi(x) = erfc(-x / sqrt 2) / 2 and erfc from the Maclaurin series of
  erf (exact to the working precision for |x| <= 14, tails beyond are
  below 1e-44 and taken as 0);

  the smallest sigma with delta(sigma, eps) <= delta, by 200 bisection steps
  on [1e-3, 1e3] (relative resolution far below 1e-15).

Usage: python3 test/reference/gaussian.py   (prints the values used by
sql/calibration.sql).
"""
from decimal import Decimal as D, getcontext

getcontext().prec = 120


def exp(x):
    return x.exp()


def erf(x):
    # 2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1))
    pi = D("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899862803482534211706798")
    term = x
    total = x
    n = 0
    x2 = x * x
    while True:
        n += 1
        term = -term * x2 / n
        add = term / (2 * n + 1)
        total += add
        if abs(add) < D(10) ** -110 and n > 10:
            break
    return 2 / pi.sqrt() * total


def Phi(x):
    # |x| > 14: the tail is below 1e-44, far under the precision of the
    # deltas computed here (relative 1e-30 for delta >= 1e-12)
    if x > 14:
        return D(1)
    if x < -14:
        return D(0)
    return (1 - erf(-x / D(2).sqrt())) / 2


def delta(sigma, eps):
    return Phi(1 / (2 * sigma) - eps * sigma) - exp(eps) * Phi(-1 / (2 * sigma) - eps * sigma)


def sigma_for(eps, target):
    lo, hi = D("0.001"), D("1000")
    # bracket first so the bisection works on a sane interval
    while delta(hi / 2, eps) <= target and hi > D("0.002"):
        hi /= 2
    lo = hi / 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if delta(mid, eps) <= target:
            hi = mid
        else:
            lo = mid
    return hi


CASES = [(D("1"), D("1e-5")), (D("0.5"), D("1e-6")), (D("0.1"), D("1e-6")),
         (D("2"), D("1e-9")), (D("5"), D("1e-3")), (D("0.01"), D("1e-5"))]

if __name__ == "__main__":
    print("-- eps, delta, sigma (sensitivity 1)")
    for eps, dl in CASES:
        print(f"({eps}, {dl}, {sigma_for(eps, dl):.17e}),")
    print("-- sigma, eps, delta(sigma, eps)")
    for s, eps in [(D("1"), D("1")), (D("3"), D("0.5")), (D("10"), D("0.1")), (D("0.7"), D("3")), (D("5"), D("2"))]:
        print(f"({s}, {eps}, {delta(s, eps):.17e}),")
