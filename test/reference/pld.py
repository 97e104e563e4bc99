#!/usr/bin/python3
"""Independent reference for dp_agg's 'pld' accounting (privacy loss distributions).

How many releases of one kind does a budget (epsilon, delta) admit, at
most, for the tightest accountant?  For each kind of release dp_agg makes,
with the noise parameters its ledger records (grid units), this computes
the composition of m releases with a method that shares nothing with
src/accounting/pld.c (no connect-the-dots, no tilting, no float FFT):

- discrete Laplace, sensitivity 1 (counts): the privacy loss takes two
  values, so m releases compose exactly by the binomial law (the optimal
  composition of Kairouz, Oh & Viswanath 2015, Theorem 3.3, for
  randomized response, to which this pair is equivalent).  Under Poisson
  sampling each direction (add, remove) still has two loss values: exact
  binomials again; the neighbouring relation is the same for all releases,
  so the tight delta is the larger of the two directions' compositions.
- Gaussian releases: dp_agg draws the discrete Gaussian on a lattice with
  sigma of about 2^40 units, whose loss law equals the continuous
  Gaussian's up to exp(-2 pi^2 sigma^2) (Poisson summation; Canonne, Kamath
  & Steinke 2020, section 2.1): m releases are exactly mu-GDP with
  mu = sqrt(m) D / sigma (Dong, Roth & Su 2019, Corollary 2.3) and the
  curve of Balle & Wang 2018, Theorem 8.
- sampled Gaussian and mixes: privacy loss distributions built by
  bucketing the output space (the mass of each cell of x, exactly from
  erfc, at the largest loss of the cell for an upper bound and the
  smallest for a lower bound: Meiser & Mohammadi 2018; Koskela, Jalko &
  Honkela 2020), composed by numpy's double-precision FFT, for each
  direction.  The two bounds bracket the tight count.

The tight count reported is the largest m whose lower-bound (optimistic)
epsilon at delta is within the limit: at least the true tight count.

With --check it checks itself, exits non-zero on a failure:
- the bucketed FFT pipeline against the exact mu-GDP formula (Gaussian)
  and the exact binomial (Laplace): the exact value lies between the two
  bounds, which are within 1% of each other;
- the binomial Laplace composition against the KOV formula written out
  independently (sum over i of binomial terms, Theorem 3.3 of KOV).

Usage: /usr/bin/python3 test/reference/pld.py [--check]  (needs
python3-numpy; prints the table of sql/pld.sql and doc/budgets.md, "PLD
accounting").
"""
import math
import sys

import numpy as np

BUDGET = (5.0, 1e-5)

# the kinds of release of the acceptance table, as dp_agg's ledger records
# them (grid units: noise scale / grid, sensitivity / grid; rate of
# TABLESAMPLE BERNOULLI); Gaussian ones as noise multipliers sigma / D
KINDS = {
    "laplace 0.05": ("laplace", 20.0, 1.0),
    "laplace 0.1": ("laplace", 10.0, 1.0),
    "gaussian (0.5, 1e-6)": ("gaussian", 8.0576184811500848, 1.0),
    "gaussian (0.1, 1e-7)": ("gaussian", 41.329451614905437, 1.0),
    "bernoulli(1) gaussian (1, 1e-6)": ("gaussian", 0.77643640637642797, 0.010000000009313226),
    "bernoulli(10) gaussian (1, 1e-6)": ("gaussian", 1.4325859102394449, 0.10000000009313226),
    "bernoulli(1) laplace 1": ("laplace", 0.19408815487103739, 0.010000000009313226),
    "bernoulli(10) laplace 1": ("laplace", 0.34477086581070165, 0.10000000009313226),
}


def phi_sf(x):
    return 0.5 * math.erfc(x / math.sqrt(2))


# ---------- exact: two-valued losses (Laplace counts) ----------

def two_point(kind_scale, rate):
    """The two-valued PLDs (losses, P-probabilities) of each direction."""
    b = kind_scale
    r = math.exp(-1 / b)
    a_le0 = 1 / (1 + r)        # P[X <= 0] for the noise X
    b_le0 = r / (1 + r)        # P[X + 1 <= 0] = P[X <= -1]
    q = rate
    lo_ratio, hi_ratio = math.exp(-1 / b), math.exp(1 / b)   # B/A on x <= 0, x >= 1
    # remove: P = (1-q)A + qB, Q = A
    rem = [(math.log(1 - q + q * hi_ratio), (1 - q) * (1 - a_le0) + q * (1 - b_le0)),
           (math.log(1 - q + q * lo_ratio), (1 - q) * a_le0 + q * b_le0)]
    # add: P = A, Q = (1-q)A + qB
    add = [(-math.log(1 - q + q * hi_ratio), 1 - a_le0),
           (-math.log(1 - q + q * lo_ratio), a_le0)]
    return [rem] if q == 1 else [rem, add]


def binomial_delta(pld, m, eps):
    """delta(eps) of m compositions of a two-point PLD, exactly (log space)."""
    (l1, p1), (l2, p2) = pld
    k = np.arange(m + 1)
    logc = np.array([math.lgamma(m + 1) - math.lgamma(i + 1) - math.lgamma(m - i + 1) for i in k])
    logp = logc + k * math.log(p1) + (m - k) * math.log(p2)
    loss = k * l1 + (m - k) * l2
    sel = loss > eps
    return float(np.sum(np.exp(logp[sel]) * -np.expm1(eps - loss[sel])))


def kov_delta(e0, m, eps):
    """KOV 2015, Theorem 3.3: the optimal delta of m eps0-DP mechanisms."""
    total = 0.0
    for i in range(m + 1):
        # loss (m - 2i) e0 with probability C(m, i) e^{(m-i) e0} / (1 + e^e0)^m
        loss = (m - 2 * i) * e0
        if loss > eps:
            logw = (math.lgamma(m + 1) - math.lgamma(i + 1) - math.lgamma(m - i + 1)
                    + (m - i) * e0 - m * math.log1p(math.exp(e0)))
            total += math.exp(logw) - math.exp(logw + eps - loss)
    return total


# ---------- exact: Gaussian ----------

def gdp_delta(mu, eps):
    return phi_sf(eps / mu - mu / 2) - math.exp(eps) * phi_sf(eps / mu + mu / 2)


# ---------- bucketed PLDs (sampled Gaussian, mixes) ----------

STEP = 2e-4


def gaussian_pld(nm, rate, mode):
    """PLDs of each direction of the (sampled) Gaussian with noise
    multiplier nm, by cells of the output: (loss indices, masses, +inf).
    mode 'upper': each cell at its largest loss rounded up; 'lower': its
    smallest rounded down; 'interp': its middle loss, split between the
    two grid points around it so that the mean is kept (second order)."""
    upper = mode == "upper"
    # output x in units of the sensitivity; A = N(0, nm^2), B = N(1, nm^2)
    xs = np.linspace(-12 * nm - 1, 12 * nm + 2, 400001)
    erfc = np.frompyfunc(math.erfc, 1, 1)
    cdf_a = (0.5 * erfc(xs / nm / math.sqrt(2))).astype(float)  # P[A > x]
    cdf_b = (0.5 * erfc((xs - 1) / nm / math.sqrt(2))).astype(float)
    ma = -np.diff(cdf_a)
    mb = -np.diff(cdf_b)
    q = rate
    # log B/A(x) = (2x - 1) / (2 nm^2), increasing in x
    lr = (2 * xs - 1) / (2 * nm * nm)
    out = []
    dirs = [("remove", lambda l: np.log1p(q * np.expm1(l)))]
    if q < 1:
        dirs.append(("add", lambda l: -np.log1p(q * np.expm1(l))))
    for name, loss_of in dirs:
        lo_edge, hi_edge = loss_of(lr[:-1]), loss_of(lr[1:])
        cell_max = np.maximum(lo_edge, hi_edge)
        cell_min = np.minimum(lo_edge, hi_edge)
        if name == "remove":
            pm = (1 - q) * ma + q * mb
        else:
            pm = ma
        tail = 1 - pm.sum()
        if mode == "interp":
            mid = loss_of((2 * ((xs[:-1] + xs[1:]) / 2) - 1) / (2 * nm * nm)) / STEP
            fl = np.floor(mid)
            w = mid - fl
            idx = np.concatenate([fl, fl + 1])
            pm = np.concatenate([pm * (1 - w), pm * w])
        else:
            loss = cell_max if upper else cell_min
            idx = np.ceil(loss / STEP) if upper else np.floor(loss / STEP)
        # tails outside the cells: to +inf (upper) or dropped
        out.append((idx.astype(np.int64), pm, tail if upper else 0.0))
    return out


def laplace_pld_bucketed(b, rate, mode):
    res = []
    for pld in two_point(b, rate):
        if mode == "upper":
            idx = [math.ceil(l / STEP) for l, _ in pld]
        elif mode == "lower":
            idx = [math.floor(l / STEP) for l, _ in pld]
        else:
            idx = [round(l / STEP) for l, _ in pld]
        res.append((np.array(idx, dtype=np.int64), np.array([p for _, p in pld]), 0.0))
    return res


def to_dense(idx, mass, inf):
    lo = int(idx.min())
    v = np.zeros(int(idx.max()) - lo + 1)
    np.add.at(v, idx - lo, mass)
    return [lo, v, inf]


def convolve(a, b, window, upper):
    lo = a[0] + b[0]
    n = len(a[1]) + len(b[1]) - 1
    size = 1 << (n - 1).bit_length()
    v = np.fft.irfft(np.fft.rfft(a[1], size) * np.fft.rfft(b[1], size), size)[:n]
    v = np.maximum(v, 0)
    inf = 1 - (1 - a[2]) * (1 - b[2])
    wlo, whi = window
    # bins above the window: to +inf (upper) or dropped; below: moved up or dropped
    top = whi - lo + 1
    if top < n:
        if upper:
            inf += v[top:].sum()
        v = v[:top]
    bot = wlo - lo
    if bot > 0:
        if upper:
            v[bot] += v[:bot].sum()
        v = v[bot:]
        lo = wlo
    return [lo, v, inf]


def dense_delta(d, eps):
    lo, v, inf = d
    loss = (lo + np.arange(len(v))) * STEP
    sel = loss > eps
    return float(np.sum(v[sel] * -np.expm1(eps - loss[sel]))) + inf


def compose_power(d, m, window, upper):
    result = None
    base = d
    while m:
        if m & 1:
            result = base if result is None else convolve(result, base, window, upper)
        m >>= 1
        if m:
            base = convolve(base, base, window, upper)
    return result


def moments(d):
    lo, v, _ = d
    loss = (lo + np.arange(len(v))) * STEP
    mass = v.sum()
    mean = float((v * loss).sum() / mass)
    var = float((v * (loss - mean) ** 2).sum() / mass)
    return mean, var


def bucketed_compose(parts, upper):
    """parts: list of (dense PLD per direction list, count); the composed
    dense PLD of each direction (the same direction for all releases)."""
    ndirs = max(len(p[0]) for p in parts)
    out = []
    for k in range(ndirs):
        mean = var = 0.0
        dens = []
        for dirs, count in parts:
            d = dirs[min(k, len(dirs) - 1)]
            mu, vv = moments(d)
            mean += count * mu
            var += count * vv
            dens.append((d, count))
        sd = math.sqrt(var)
        # the window: 40 standard deviations on both sides, and up to 20
        window = (int(math.floor((mean - 40 * sd - 1) / STEP)),
                  int(math.ceil(max(mean + 40 * sd + 1, 20.0) / STEP)))
        total = None
        for d, count in dens:
            part = compose_power(d, count, window, upper)
            total = part if total is None else convolve(total, part, window, upper)
        out.append(total)
    return out


def bucketed_delta(parts, eps, upper):
    return max(dense_delta(d, eps) for d in bucketed_compose(parts, upper))


def composed_delta_fn(parts, upper):
    comp = bucketed_compose(parts, upper)
    return lambda e: max(dense_delta(d, e) for d in comp)


def dense_dirs(plds):
    return [to_dense(*p) for p in plds]


# ---------- counts ----------

def max_count(delta_of, eps, delta, hi=1 << 15):
    """largest m with delta_of(m, eps) <= delta (delta_of grows with m)."""
    lo = 0
    if delta_of(hi, eps) <= delta:
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if delta_of(mid, eps) <= delta:
            lo = mid
        else:
            hi = mid
    return lo


def tight_count(name):
    mech, scale, rate = KINDS[name]
    eps, delta = BUDGET
    if mech == "laplace":
        plds = two_point(scale, rate)
        return max_count(lambda m, e: max(binomial_delta(p, m, e) for p in plds), eps, delta)
    if rate == 1:
        return max_count(lambda m, e: gdp_delta(math.sqrt(m) / scale, e), eps, delta)
    dirs = dense_dirs(gaussian_pld(scale, rate, "interp"))
    return max_count(lambda m, e: bucketed_delta([(dirs, m)], e, False), eps, delta, hi=1 << 13)


def mix_count():
    """a 50/50 mix: m Laplace 0.1 and m Gaussian (0.5, 1e-6) releases; the
    count of releases (2m)."""
    eps, delta = BUDGET
    lap = dense_dirs(laplace_pld_bucketed(KINDS["laplace 0.1"][1], 1, "interp"))
    gau = dense_dirs(gaussian_pld(KINDS["gaussian (0.5, 1e-6)"][1], 1, "interp"))
    return 2 * max_count(lambda m, e: bucketed_delta([(lap, m), (gau, m)], e, False),
                         eps, delta, hi=1 << 10)


def table():
    rows = [(name, tight_count(name)) for name in KINDS]
    rows.insert(4, ("mix 50/50 laplace 0.1 + gaussian (0.5, 1e-6)", mix_count()))
    return rows


# ---------- self-check ----------

def bisect_eps(delta_of, delta, hi=50.0):
    lo = 0.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if delta_of(mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def check():
    failures = 0
    delta = 1e-5
    # Gaussian: the bucketed bounds bracket the exact mu-GDP epsilon
    for nm, m in ((8.0576184811500848, 50), (41.329451614905437, 1000)):
        exact = bisect_eps(lambda e: gdp_delta(math.sqrt(m) / nm, e), delta)
        up = dense_dirs(gaussian_pld(nm, 1, "upper"))
        dn = dense_dirs(gaussian_pld(nm, 1, "lower"))
        e_up = bisect_eps(composed_delta_fn([(up, m)], True), delta)
        e_dn = bisect_eps(composed_delta_fn([(dn, m)], False), delta)
        mid = dense_dirs(gaussian_pld(nm, 1, "interp"))
        e_mid = bisect_eps(composed_delta_fn([(mid, m)], False), delta)
        ok = e_dn <= exact <= e_up and abs(e_mid - exact) < 1e-3 * exact
        print(f"gaussian nm={nm:.4g} m={m}: lower {e_dn:.6f} exact {exact:.6f} upper {e_up:.6f}"
              f" interpolated {e_mid:.6f} {'ok' if ok else 'FAILED'}")
        failures += not ok
    # Laplace: binomial = KOV, and the bucketed bounds bracket it
    for b, m in ((10.0, 128), (20.0, 300)):
        e0 = 1 / b
        plds = two_point(b, 1)
        exact = bisect_eps(lambda e: binomial_delta(plds[0], m, e), delta)
        kov = bisect_eps(lambda e: kov_delta(e0, m, e), delta)
        up = dense_dirs(laplace_pld_bucketed(b, 1, "upper"))
        dn = dense_dirs(laplace_pld_bucketed(b, 1, "lower"))
        e_up = bisect_eps(composed_delta_fn([(up, m)], True), delta)
        e_dn = bisect_eps(composed_delta_fn([(dn, m)], False), delta)
        ok = (abs(exact - kov) < 1e-9 * kov and e_dn <= exact * (1 + 1e-9) and
              exact <= e_up * (1 + 1e-9) and e_up - e_dn < 0.03 * exact)
        print(f"laplace eps0={e0:g} m={m}: binomial {exact:.9f} KOV {kov:.9f}"
              f" bucketed [{e_dn:.6f}, {e_up:.6f}] {'ok' if ok else 'FAILED'}")
        failures += not ok
    # sampled Gaussian: the two bounds within 2% of each other
    nm, q, m = KINDS["bernoulli(10) gaussian (1, 1e-6)"][1], 0.10000000009313226, 300
    up = dense_dirs(gaussian_pld(nm, q, "upper"))
    dn = dense_dirs(gaussian_pld(nm, q, "lower"))
    e_up = bisect_eps(composed_delta_fn([(up, m)], True), delta)
    e_dn = bisect_eps(composed_delta_fn([(dn, m)], False), delta)
    mid = dense_dirs(gaussian_pld(nm, q, "interp"))
    e_mid = bisect_eps(composed_delta_fn([(mid, m)], False), delta)
    ok = e_dn <= e_mid <= e_up < 1.02 * e_dn
    print(f"sampled gaussian q={q:.3g} m={m}: [{e_dn:.6f}, {e_up:.6f}] interpolated {e_mid:.6f}"
          f" {'ok' if ok else 'FAILED'}")
    failures += not ok
    print(f"-- worst: {failures} failed")
    return failures == 0


if __name__ == "__main__":
    if "--check" in sys.argv:
        sys.exit(0 if check() else 1)
    for name, count in table():
        print(f"{name}: {count}")
