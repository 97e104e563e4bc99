"""Coverage of the 95% half-width "ci95" that the ledger and preview report.

Every release object of the ledger (dp_agg.ledger.detail -> i ->
'releases' -> j) carries "ci95": the half-width h of the central 95%
interval of its noise, exact for the discrete law used, including the
rounding to an integer of bigint results; dp_agg.preview(query) reports
the same before running.  So a release y of exact value t satisfies
|y - t| <= h with probability

    p_cover = P(|V| <= h),   V the noise of the release,

which is at least 0.95 and, the law being discrete, can be well above it
(discrete Laplace of scale 1: h = 3 and p_cover = 0.973).  h is the
smallest such value on the noise's grid of values: P(|V| <= h - step)
< 0.95, step the spacing of the noise's values (the grid, or 1 when a
bigint result is rounded).

Design.  Table stat.coverage_rows has G = 20000 groups of the same four
rows (i int4 in [-10, 10], f float8 in [-10, 10]), so one GROUP BY g
statement gives G independent releases of the same exact value t (count 4,
integer sum 15, double sum 4.875: no row is clamped, and the rows lie on
every grid used, so t needs no rounding).  Four configurations, one
statement each (epsilon 1; dp_agg.delta = 0 is set):

  count_laplace       dp_count(*)                          discrete Laplace, b = 1, grid 1
  count_gaussian      dp_count(i, 1, 1e-6)                 discrete Gaussian on a lattice of
                                                           about sigma / 2^40, rounded half up
                                                           to an integer (laws.RoundedLaw)
  sum_int_laplace     dp_sum(i, -10, 10, 1)                discrete Laplace, b = 10, grid 1
  sum_float8_gaussian dp_sum(f, -10.0, 10.0, 1, 1e-6)      discrete Gaussian on a lattice of
                                                           about sigma / 2^40 (not rounded)

p_cover is computed here from the exact pmf, with the noise parameters of
the ledger (laws.py), sigma_u denoting the Gaussian parameter in lattice
units (noise_scale / grid, about 2^40 here) and Q the normal upper tail:
  * discrete Laplace (grid 1): the closed form, P(|X| <= K) = 1 - 2 a^(K+1)
    / (1 + a), a = e^(-1/b);
  * rounded Gaussian (counts): laws.RoundedLaw, P(|N| <= K) = 1 - 2 Q((K +
    1/2) / sigma).  The discrete law gives P(-M <= X < M), M = (K + 1/2)
    2^s; by the midpoint rule each tail is the continuity-corrected normal
    tail up to O(sigma_u^-2), and the half-unit offsets of the two tails
    cancel, so the two agree to about 1e-25;
  * fine Gaussian lattice (double sum; ~1.5e12 lattice units, too many to
    tabulate): P(|X| <= K) = 1 - erfc((K + 1/2) / (sigma_u sqrt 2)); by the
    midpoint rule the discrete tails exceed these by z phi(z) / (12
    sigma_u^2) < 1e-25 in all (z ~ 1.96).  It is evaluated in 50-digit
    decimal arithmetic (erf by its series of positive terms), since one
    lattice step moves it by only ~1e-13 and the minimality of K must be
    decided at that resolution.

Tests and the false-failure probability of each assertion:

  coverage_<configuration>   (four tests)
      * deterministic (0): the ledger's release object has the documented
        calibration (noise_checks.check_calibration); the call-level ci95
        equals the release's; preview of the same statement (same settings)
        reports the same noise scale, grid and ci95, bit for bit; h is a
        non-negative integer multiple of step; from the pmf, p_cover >= 0.95
        and P(|V| <= h - step) < 0.95 (h is the smallest 95% half-width);
        the statement returns G distinct groups and every release is the
        exact value plus a multiple of the grid (noise_checks.on_grid_noise).
      * the number C of releases with |y - t| <= h (compared exactly, with
        rationals) is Binomial(G, p_cover): it must lie in the rigorous
        Chernoff acceptance interval stats.binomial_acceptance(G, p_cover,
        4.9e-7), 4.9e-7 per side: false failure at most 9.8e-7.
  coverage_<configuration>_shrunk_rejected   (four negative controls)
      * the same releases against the half-width 0.7 h (30% smaller): the
        count C' of |y - t| <= 0.7 h must be below the lower end lo of the
        same acceptance interval for nominal coverage 0.95,
        binomial_acceptance(G, 0.95, 4.9e-7) -- coverage significantly
        below 95% (and a fortiori below p_cover >= 0.95).  C' is
        Binomial(G, q) with q = P(|V| <= 0.7 h) from the pmf (0.927 for
        count_laplace, the closest to 0.95); the Chernoff bound of
        P[C' >= lo], the probability of NOT rejecting, is computed before
        looking at the data and required to be <= 1e-6 (deterministic given
        G); false failure at most that bound (about 1e-14 for count_laplace,
        astronomically small for the others; reported).

Eight statistical assertions, each with false-failure probability below
1e-6, their sum below 4e-6 (coverage) + 1e-14 (controls).
"""

import decimal
import math
from fractions import Fraction

import db
import laws
import noise_checks as nc
import stats
from framework import stat_test

G = 20000
ALPHA_SIDE = 4.9e-7
NOMINAL = 0.95
SHRINK = Fraction(7, 10)
MAX_MISS = 1e-6

# the four rows of every group: (i, f)
ROWS = [(3, "2.5"), (7, "-3.75"), (-4, "0.125"), (9, "6.0")]
EXACT_COUNT = Fraction(len(ROWS))
EXACT_INT_SUM = Fraction(sum(i for i, _ in ROWS))
EXACT_FLOAT_SUM = sum(Fraction(float(f)) for _, f in ROWS)

SETTINGS = {"dp_agg.epsilon": "1", "dp_agg.delta": "0"}

# name: (select list item, result kind, exact value, epsilon, delta, sensitivity)
CONFIGS = {
    "count_laplace": ("dp_count(*)", "int", EXACT_COUNT, 1.0, 0.0, 1.0),
    "count_gaussian": ("dp_count(i, 1::float8, 1e-6::float8)", "int", EXACT_COUNT, 1.0, 1e-6, 1.0),
    "sum_int_laplace": ("dp_sum(i, -10, 10, 1::float8)", "int", EXACT_INT_SUM, 1.0, 0.0, 10.0),
    "sum_float8_gaussian": ("dp_sum(f, -10::float8, 10::float8, 1::float8, 1e-6::float8)",
                            "float", EXACT_FLOAT_SUM, 1.0, 1e-6, 10.0),
}


def rows_table():
    values = ", ".join("(%d, %s::float8)" % (i, f) for i, f in ROWS)
    return db.fixed_table(
        "coverage_rows",
        "SELECT g, r.i, r.f FROM generate_series(1, %d) AS g, (VALUES %s) AS r(i, f)"
        % (G, values))


def query(name):
    return "SELECT g, %s FROM %s GROUP BY g" % (CONFIGS[name][0], rows_table())


# ---------- the exact coverage probability ----------

_PI = decimal.Decimal("3.14159265358979323846264338327950288419716939937510582097494459")


def erfc_decimal(x, digits=50):
    """erfc(x) for a Decimal x >= 0 of moderate size (< 6), to about
    `digits` significant digits: erf(x) = 2/sqrt(pi) e^(-x^2)
    sum_n 2^n x^(2n+1) / (1 3 5 ... (2n+1)), a series of positive terms."""
    with decimal.localcontext() as ctx:
        ctx.prec = digits + 10
        x = +x
        x2 = x * x
        term = x
        total = term
        n = 0
        eps = decimal.Decimal(10) ** (-(digits + 5))
        while term > eps * total:
            n += 1
            term = term * 2 * x2 / (2 * n + 1)
            total += term
        erf = 2 / _PI.sqrt() * (-x2).exp() * total
        return 1 - erf


class FineGaussian:
    """|X| of the discrete Gaussian with parameter sigma_u (lattice units)
    far too large to tabulate: P(|X| <= k) = 1 - erfc((k + 1/2) /
    (sigma_u sqrt 2)) (module docstring), as a Decimal."""

    def __init__(self, sigma_units):
        self.sigma = decimal.Decimal(Fraction(sigma_units).numerator) / \
            decimal.Decimal(Fraction(sigma_units).denominator)

    def cover(self, k):
        with decimal.localcontext() as ctx:
            ctx.prec = 60
            z = (decimal.Decimal(k) + decimal.Decimal("0.5")) / (self.sigma * decimal.Decimal(2).sqrt())
            return 1 - erfc_decimal(z)


class Coverage:
    """The exact law of |noise| of one release, on its grid of values:
    cover(k) = P(|V| <= k step) for integers k >= 0."""

    def __init__(self, spec, integer):
        rn = laws.ReleaseNoise(spec["mechanism"], spec["noise_scale"], spec["grid"],
                               integer=integer)
        self.step = rn.step
        self.rounded = rn.rounded
        if rn.lattice is not None:
            self.law = rn.lattice
            self.what = rn.lattice.name
            self._cover = lambda k: decimal.Decimal(self.law.prob(-k, k))
        else:
            self.law = FineGaussian(Fraction(spec["noise_scale"]) / Fraction(spec["grid"]))
            self.what = "fine gaussian"
            self._cover = self.law.cover

    def cover(self, k):
        """P(|V| <= k step) as a Decimal (exact to double precision for the
        tabulated laws, to about 1e-25 for the fine Gaussian lattice)."""
        if k < 0:
            return decimal.Decimal(0)
        return self._cover(k)

    def units(self, halfwidth):
        """floor(halfwidth / step): the largest k with k step <= halfwidth."""
        return math.floor(Fraction(halfwidth) / Fraction(self.step))


# ---------- the releases of one configuration (cached for the run) ----------

class Draw:
    def __init__(self, name, rel, spec, cov, h, exact_value, noise, preview):
        self.name = name
        self.rel = rel
        self.spec = spec
        self.cov = cov              # Coverage
        self.h = h                  # ci95 (float, exact)
        self.exact = exact_value
        self.noise = noise          # list of Fractions: release - exact
        self.preview = preview


_draws = {}


def preview_rows(q):
    """Rows (release, mechanism, noise_scale, grid, ci95) of dp_agg.preview
    of the statement q under SETTINGS."""
    script = db.settings_script(SETTINGS)
    script += ("SELECT release, mechanism, noise_scale, grid, ci95 FROM dp_agg.preview(%s) "
               "ORDER BY call, release;\n" % db.literal(q))
    return db.rows(script)


def draw(check, name):
    """The releases of configuration `name`, after the deterministic
    checks of the module docstring (stops the test if one fails)."""
    if name not in _draws:
        q = query(name)
        pv = preview_rows(q)
        rel = db.release(q, settings=SETTINGS)
        _draws[name] = (q, pv, rel)
    q, pv, rel = _draws[name]
    item, kind, exact_value, epsilon, delta, sens = CONFIGS[name]

    check.that(len(rel.detail) == 1 and len(rel.detail[0]["releases"]) == 1,
               "expected one call with one release in the ledger, got %r" % (rel.detail,))
    check.stop_if_failed()
    spec = rel.noise()
    call = rel.call()
    nc.check_calibration(check, spec, name, epsilon, delta, sens)
    check.that("ci95" in spec and "ci95" in call,
               "ledger without ci95: call %r" % (call,))
    check.stop_if_failed()
    h = spec["ci95"]
    check.that(call["ci95"] == h, "call-level ci95 %r != release ci95 %r" % (call["ci95"], h))
    # preview: same statement, same settings, same noise and same half-width, bit for bit
    ok = check.that(len(pv) == 1, "preview gave %d rows, expected 1" % len(pv))
    if ok:
        p_rel, p_mech, p_scale, p_grid, p_ci = pv[0]
        check.that(p_rel == spec["release"] and p_mech == spec["mechanism"]
                   and float(p_scale) == spec["noise_scale"] and float(p_grid) == spec["grid"]
                   and float(p_ci) == h,
                   "preview (%s %s scale %s grid %s ci95 %s) differs from the ledger "
                   "(%s %s scale %r grid %r ci95 %r)"
                   % (p_rel, p_mech, p_scale, p_grid, p_ci, spec["release"], spec["mechanism"],
                      spec["noise_scale"], spec["grid"], h))

    cov = Coverage(spec, integer=(kind == "int"))
    k = cov.units(h)
    check.that(h >= 0 and Fraction(h) == k * Fraction(cov.step),
               "ci95 %r is not a non-negative multiple of the step %r" % (h, cov.step))
    check.stop_if_failed()
    p = cov.cover(k)
    below = cov.cover(k - 1)
    nominal = decimal.Decimal("0.95")
    check.that(p >= nominal, "P(|noise| <= ci95 = %r) = %.17g < 0.95 (%s)" % (h, p, cov.what))
    check.that(below < nominal,
               "ci95 %r is not the smallest: P(|noise| <= ci95 - step) = %.17g >= 0.95 (%s)"
               % (h, below, cov.what))
    check.stop_if_failed()

    vals = [nc.parse_exact(r[-1], kind) for r in rel.rows]
    check.that(len(rel.rows) == G and len({r[0] for r in rel.rows}) == G,
               "expected %d groups, got %d rows" % (G, len(rel.rows)))
    nc.on_grid_noise(check, vals, exact_value, spec["grid"], name)
    check.stop_if_failed()
    noise = [v - exact_value for v in vals]
    return Draw(name, rel, spec, cov, h, exact_value, noise, pv)


def covered(noise, halfwidth):
    hw = Fraction(halfwidth)
    return sum(1 for d in noise if abs(d) <= hw)


def coverage_test(check, name):
    d = draw(check, name)
    k = d.cov.units(d.h)
    p = d.cov.cover(k)
    below = d.cov.cover(k - 1)
    pc = float(p)
    lo, hi = stats.binomial_acceptance(G, pc, ALPHA_SIDE)
    c = covered(d.noise, d.h)
    check.within("covered", c, lo, hi, "%d")
    step_note = ("1 (rounded)" if d.cov.rounded else "grid 2^%d" % (math.frexp(d.cov.step)[1] - 1))
    if p - below > 0:
        where = " (0.95 at %.3f of the last step)" % float((decimal.Decimal("0.95") - below)
                                                           / (p - below))
    else:
        where = ""
    check.note("%s scale %.6g ci95 %.10g = %d steps of %s: p_cover %.6f, P(<= ci95 - step) %.6f%s; "
               "coverage %.4f of %d"
               % (d.spec["mechanism"], d.spec["noise_scale"], d.h, k, step_note, pc,
                  float(below), where, c / G, G))


def shrunk_test(check, name):
    d = draw(check, name)
    h2 = SHRINK * Fraction(d.h)
    q = float(d.cov.cover(d.cov.units(h2)))
    lo, _ = stats.binomial_acceptance(G, NOMINAL, ALPHA_SIDE)
    miss = stats.binom_tail_bound(G, q, lo, upper=True)
    check.that(miss <= MAX_MISS,
               "design: P(not rejecting) bound %.3g > %g (q=%.4f, lo=%d, G=%d)"
               % (miss, MAX_MISS, q, lo, G))
    check.stop_if_failed()
    c = covered(d.noise, h2)
    ok = check.that(c < lo, "coverage of 0.7 ci95 NOT rejected: %d covered >= %d (lower end "
                    "of the 95%% acceptance interval); exact coverage %.4f" % (c, lo, q))
    if ok:
        check.note("0.7 ci95 = %.6g covers %d of %d (%.4f, exact %.4f) < %d: rejected as it must; "
                   "miss%s" % (float(h2), c, G, c / G, q, lo,
                               ("<=%.1g" % miss) if miss > 0 else "<1e-300"))


def _register(name):
    stat_test("coverage_" + name)(lambda check: coverage_test(check, name))
    stat_test("coverage_" + name + "_shrunk_rejected")(lambda check: shrunk_test(check, name))


for _name in CONFIGS:
    _register(_name)
