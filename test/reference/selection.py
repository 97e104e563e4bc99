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
it exits non-zero on any failure.  It prints the table of
doc/units-and-groups.md ("Private group keys"): the smallest n released with
probability at least 0.5 and at least 0.99.

Gaussian thresholding (k > 1; Wilson et al. 2020; Google's and
PipelineDP's GaussianPartitionSelection): a group of n units is released
when n + Z >= tau, Z discrete Gaussian of variance v.  Its public rule
(src/noise/selection_gaussian.c), recomputed here: for each split delta_2 =
delta j / 64 (j = 1..63), delta_1 = delta - delta_2,
  rho = (1 - 1e-9) max over alpha = 1 + 2^(i/8 - 7), i = 0..216, of
        (eps - ln(1 - 1/alpha) + (ln delta_1 + ln alpha)/(alpha - 1)) / alpha,
  v = k / (2 rho) rounded up to a multiple of 2^-20, sigma = sqrt(v),
  tau = 1 + the smallest m >= sigma + 1/2 with k Q((m - 1/2)/sigma) e^(1e-9)
        <= delta_2 (Q the normal upper tail, here by its series),
and the split with the smallest tau (the first on a tie); the choice between
it and the split optimal mechanism: Gaussian when its tau, the smallest n
released with probability 1/2, is smaller.  The release curve P[Z >= tau - n]
is summed from the discrete Gaussian's mass in 60-digit decimals, not from
any bound.  --check also checks, for each case, that the plan is private by
the exact tail (k P[Z >= tau - 1] <= delta_2) and the zCDP conversion at
v, and that the tail bound costs at most one unit of tau.

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


# ---------- Gaussian thresholding ----------

SPLIT_STEPS = 64
RHO_MARGIN = D("1e-9")
LOG_TAIL_MARGIN = D("1e-9")
VARIANCE_BITS = 20
MAX_SIGMA = 4096
LN2 = D(2).ln()


def _pow2(x):
    return (D(x) * LN2).exp()


_ORDERS = []


def _orders():
    """The public orders, with ln(alpha) and ln(1 - 1/alpha): computed once."""
    if not _ORDERS:
        for i in range(217):
            a = 1 + _pow2(D(i) / 8 - 7)
            _ORDERS.append((a, a.ln(), (1 - 1 / a).ln()))
    return _ORDERS


def zcdp_epsilon(rho, delta):
    """The smallest epsilon of the conversion of rho-zCDP at delta over the orders."""
    ld = delta.ln()
    return min(a * rho + l1 - (ld + la) / (a - 1) for a, la, l1 in _orders())


def largest_rho(epsilon, delta_1):
    eps = _d(epsilon)
    ld = delta_1.ln()
    best = max((eps - l1 + (ld + la) / (a - 1)) / a for a, la, l1 in _orders())
    return best * (1 - RHO_MARGIN)


def normal_sf(x):
    """Q(x) for x >= 0: 1/2 - phi(x) sum_n x^(2n+1) / (2n+1)!!, with enough
    digits for the cancellation."""
    x = D(x)
    with decimal.localcontext() as ctx:
        ctx.prec = 60 + int(x * x / D("4.6")) + 10
        phi = (-(x * x) / 2).exp() / (2 * _pi()).sqrt()
        term = x
        total = x
        n = 0
        while term > total * D(10) ** -(ctx.prec - 2):
            n += 1
            term = term * x * x / (2 * n + 1)
            total += term
        r = D("0.5") - phi * total
    return +r


_PI = {}


def _pi():
    """pi by Machin's formula, to the context's precision (cached)."""
    prec = decimal.getcontext().prec
    if prec not in _PI:
        _PI[prec] = _machin_pi()
    return _PI[prec]


def _machin_pi():
    def arctan_inv(x):
        x = D(x)
        term = 1 / x
        total = term
        n = 1
        sign = -1
        x2 = x * x
        while True:
            term = term / x2
            t = term / (2 * n + 1)
            if t < D(10) ** -(decimal.getcontext().prec + 2):
                break
            total += sign * t
            sign = -sign
            n += 1
        return total
    return 16 * arctan_inv(5) - 4 * arctan_inv(239)


def tau_bound(sigma, delta_2, k):
    """1 + the smallest m >= sigma + 1/2 with k Q((m - 1/2)/sigma) e^margin <= delta_2."""
    lo = int((sigma + D("0.5")).to_integral_value(rounding=decimal.ROUND_CEILING))
    target = delta_2 / k / LOG_TAIL_MARGIN.exp()
    meets = lambda m: normal_sf((m - D("0.5")) / sigma) <= target
    hi = lo
    while not meets(hi):
        hi *= 2
    while lo < hi:             # bisection: the bound decreases in m
        mid = (lo + hi) // 2
        if meets(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo + 1


def gaussian_plan(epsilon, delta, k):
    """The Gaussian thresholding of the public rule, or None."""
    best = None
    dl = _d(delta)
    for j in range(1, SPLIT_STEPS):
        d2 = dl * j / SPLIT_STEPS
        d1 = dl * (SPLIT_STEPS - j) / SPLIT_STEPS
        rho = largest_rho(epsilon, d1)
        if rho <= 0:
            continue
        scale = D(2) ** VARIANCE_BITS
        v = (D(k) / (2 * rho) * scale).to_integral_value(rounding=decimal.ROUND_CEILING) / scale
        if v > MAX_SIGMA * MAX_SIGMA:
            continue
        sigma = v.sqrt()
        tau = tau_bound(sigma, d2, k)
        if best is None or tau < best["tau"]:
            best = {"variance": v, "sigma": sigma, "tau": tau, "delta_noise": d1,
                    "delta_threshold": d2, "j": j}
    return best


def dgauss_upper(v, m):
    """P[Z >= m], Z the discrete Gaussian of variance v, summed exactly."""
    f = lambda x: (-(D(x) * x) / (2 * v)).exp()
    cut = D(10) ** -70

    def tail(start):
        total = D(0)
        x = start
        while True:
            t = f(x)
            total += t
            if t < cut * total or t == 0:
                return total
            x += 1
    norm = 1 + 2 * tail(1)
    if m >= 1:
        return tail(m) / norm
    return 1 - tail(1 - m) / norm


def gaussian_curve(plan, n_max):
    """[P(n = 0), ..., P(n = n_max)] of Gaussian thresholding."""
    return [D(0)] + [dgauss_upper(plan["variance"], plan["tau"] - n) for n in range(1, n_max + 1)]


def mechanism(epsilon, delta, k=1):
    """('optimal', None) or ('gaussian', plan): the choice of dp_agg."""
    if k == 1:
        return "optimal", None
    plan = gaussian_plan(epsilon, delta, k)
    if plan is not None and plan["tau"] < smallest_n(epsilon, delta, D("0.5"), k):
        return "gaussian", plan
    return "optimal", None


def release_curve(epsilon, delta, n_max, k=1):
    """The release probabilities of the mechanism dp_agg chooses."""
    name, plan = mechanism(epsilon, delta, k)
    return gaussian_curve(plan, n_max) if name == "gaussian" else curve(epsilon, delta, n_max, k)


def half(epsilon, delta, k=1):
    name, plan = mechanism(epsilon, delta, k)
    return plan["tau"] if name == "gaussian" else smallest_n(epsilon, delta, D("0.5"), k)


GAUSSIAN_CASES = [(1, 1e-5, 5), (1, 1e-5, 10), (1, 1e-5, 100), (3, 1e-3, 8), (0.5, 1e-7, 20)]


def check_gaussian():
    bad = []
    for eps, dl, k in GAUSSIAN_CASES:
        plan = gaussian_plan(eps, dl, k)
        v, tau, k_d = plan["variance"], plan["tau"], D(k)
        # private: the exact tail of the groups of one unit, the zCDP conversion of the rest
        if k_d * dgauss_upper(v, tau - 1) > plan["delta_threshold"]:
            bad.append("delta_2 exceeded at %r" % ((eps, dl, k),))
        if zcdp_epsilon(k_d / (2 * v), plan["delta_noise"]) > _d(eps):
            bad.append("zCDP conversion above epsilon at %r" % ((eps, dl, k),))
        # tight: the bound costs at most one unit of tau
        m = tau - 1
        while m > 1 and k_d * dgauss_upper(v, m - 1) <= plan["delta_threshold"]:
            m -= 1
        if tau > m + 2:
            bad.append("tau %d, exact tail allows %d at %r" % (tau, m + 1, (eps, dl, k)))
        # the curve reaches 1/2 exactly at tau
        c = gaussian_curve(plan, tau + 1)
        if not (c[tau - 1] < D("0.5") <= c[tau]):
            bad.append("half is not tau at %r" % ((eps, dl, k),))
        print("-- gaussian %r: sigma %.6f tau %d split %d/64 (exact-tail tau %d)"
              % ((eps, dl, k), plan["sigma"], tau, plan["j"], m + 1))
    return bad


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
    bad += check_gaussian()
    for b in bad[:20]:
        print("FAIL", b)
    print("-- worst relative difference closed form / recursion: %.3g" % worst)
    return not bad


def main():
    print("epsilon  delta   n(pi >= 0.5)  n(pi >= 0.99)  n(pi = 1)")
    for eps, dl in CASES[:7]:
        print("%-8g %-7g %-13s %-14s %s" % (eps, dl, smallest_n(eps, dl, 0.5),
                                            smallest_n(eps, dl, 0.99), smallest_n(eps, dl, 1)))
    print("epsilon  delta   k    mechanism  n(P >= 0.5)  (split: n(pi >= 0.5))")
    for k in (1, 2, 5, 10, 100):
        name, _ = mechanism(1, 1e-5, k)
        print("%-8g %-7g %-4d %-10s %-12d %d" % (1, 1e-5, k, name, half(1, 1e-5, k),
                                                 smallest_n(1, 1e-5, D("0.5"), k)))
    if "--check" in sys.argv:
        sys.exit(0 if check() else 1)


if __name__ == "__main__":
    main()
