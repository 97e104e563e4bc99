"""Shared checks of released values: calibration, grid, mean and variance.

Mean and variance assertions (assert_mean_and_variance)
    The G releases of one statement (one per GROUP BY group, all groups
    holding the same rows) are  y_i = t + V_i  with t the exact value and
    V_i independent copies of the noise law (laws.py, parameters read from
    the ledger).  With c = E V (0 for the symmetric noises; for dp_avg the
    exact mean of its estimate), the statistics are
        M = mean_i (y_i - t) - c             (mean)
        S = mean_i (y_i - t - c)^2           (its expectation is Var V)
    Each is the mean of G i.i.d. bounded variables (after the truncation
    coupling of laws.py), so its two tails are bounded by Chernoff's bound
    computed from the exact law (stats.chernoff_upper/lower): each side gets
    ALPHA_SIDE = 4.9e-7, and the truncation event ALPHA_TRUNC = 2e-8, so the
    false-failure probability of each assertion is at most 1e-6 -- without
    any normal approximation.  The variance side uses the law of
    (V - c)^2, whose spread is set by the fourth moment E (V - c)^4.
    For readability both are printed as z-scores,
        z = M / sqrt(Var V / G),  z = (S - Var V) / sqrt((E(V-c)^4 - Var^2) / G),
    with the acceptance interval in the same units (about +-5.4 for the
    mean; for the variance asymmetric, since (V - c)^2 >= 0 has a short
    lower and a long upper tail: about [-5.0, +5.9] for Laplace and
    [-5.2, +5.6] for Gaussian noise with G = 5000).

Deterministic checks (false-failure probability 0)
    * the ledger's mechanism, epsilon, delta and sensitivity are those of
      the call, and its noise scale is the documented calibration:
      Laplace b = sensitivity / epsilon (rounded up, so to 1e-12 relative);
      Gaussian sigma = dp_agg.discrete_gaussian_sigma(epsilon, delta,
      sensitivity / grid) * grid;
    * the grid is a power of two and every released value minus the exact
      (clamped, grid-rounded) value is an integer multiple of it.
"""

import math
from fractions import Fraction

import db
import stats

ALPHA_SIDE = 4.9e-7
ALPHA_TRUNC = 2e-8


# joint calibration (joint.c): relative margin on each release's mu
JOINT_MU_MARGIN = 2.0 ** -20


def joint_sigma(statement_epsilon, statement_delta, share, sensitivity):
    """The sigma of a jointly calibrated Gaussian release (joint.c): the
    statement's mu* is the analytic Gaussian's at (epsilon, delta), of which
    the release holds the share of mu^2, its mu raised by the margin, so
    that sensitivity / sigma = mu* sqrt(share) / (1 + margin)."""
    unit = float(db.scalar("SELECT dp_agg.gaussian_sigma(%r, %r, 1);"
                           % (statement_epsilon, statement_delta)))
    return unit * sensitivity / math.sqrt(share) * (1 + JOINT_MU_MARGIN)


def check_calibration(check, spec, what, epsilon, delta, sensitivity, joint=None):
    """Deterministic checks of one ledger release object against the call;
    joint = (statement epsilon, statement delta, share of mu^2) for a
    Gaussian release calibrated jointly."""
    mech = "laplace" if delta == 0 else "gaussian"
    ok = check.that(spec["mechanism"] == mech,
                    "%s mechanism %s, expected %s" % (what, spec["mechanism"], mech))
    check.that(_close(spec["epsilon"], epsilon, 1e-15) and _close(spec["delta"], delta, 1e-15),
               "%s epsilon/delta %r/%r, expected %r/%r"
               % (what, spec["epsilon"], spec["delta"], epsilon, delta))
    check.that(_close(spec["sensitivity"], sensitivity, 1e-15),
               "%s sensitivity %r, expected %r" % (what, spec["sensitivity"], sensitivity))
    grid = spec["grid"]
    m, e = math.frexp(grid)
    check.that(grid > 0 and m == 0.5, "%s grid %r is not a power of 2" % (what, grid))
    scale = spec["noise_scale"]
    if not ok:
        return
    if mech == "laplace":
        check.that(_close(scale, sensitivity / epsilon, 1e-12),
                   "%s Laplace scale %r, expected sensitivity/epsilon = %r"
                   % (what, scale, sensitivity / epsilon))
    elif joint is not None:
        sigma = joint_sigma(joint[0], joint[1], joint[2], sensitivity)
        check.that(spec.get("calibration") == "joint" and _close(scale, sigma, 1e-9),
                   "%s joint Gaussian sigma %r (%s), expected %r"
                   % (what, scale, spec.get("calibration"), sigma))
    else:
        sens_units = sensitivity / grid
        sigma = float(db.scalar("SELECT dp_agg.discrete_gaussian_sigma(%r, %r, %r);"
                                % (epsilon, delta, sens_units)))
        check.that(_close(scale, sigma * grid, 1e-12),
                   "%s Gaussian sigma %r, expected discrete_gaussian_sigma * grid = %r"
                   % (what, scale, sigma * grid))


def _close(a, b, rel):
    return abs(a - b) <= rel * max(abs(a), abs(b))


def parse_exact(text, kind):
    """A released value (psql text) as the exact rational it denotes:
    kind "int" (bigint), "numeric" (exact decimal) or "float" (the double)."""
    if kind == "float":
        return Fraction(float(text))
    if kind == "int":
        return Fraction(int(text))
    return Fraction(text)


def on_grid_noise(check, values, true_value, grid, what):
    """The noises (value - true) as floats; checks they are multiples of grid."""
    g = Fraction(grid)
    out = []
    bad = 0
    for v in values:
        d = v - true_value
        if (d / g).denominator != 1:
            bad += 1
        out.append(float(d))
    check.that(bad == 0, "%s: %d of %d releases are not the exact value plus a multiple "
               "of the grid %r" % (what, bad, len(values), grid))
    return out


def assert_mean_and_variance(check, noise, law):
    """Mean and variance assertions (module docstring) for noise values
    (release - exact value) against the NodeLaw law of one release's noise."""
    g = len(noise)
    c = law.mean()
    var = law.central_moment(2, c)
    m4 = law.central_moment(4, c)
    centred = law.map(lambda h: h - c)
    squares = law.map(lambda h: (h - c) ** 2)

    mean_stat = math.fsum(noise) / g - c
    sd_m = math.sqrt(var / g)
    lo = stats.chernoff_lower(centred, g, ALPHA_SIDE)
    hi = stats.chernoff_upper(centred, g, ALPHA_SIDE)
    check.within("mean z", mean_stat / sd_m, lo / sd_m, hi / sd_m, "%+.2f")

    s = math.fsum((x - c) ** 2 for x in noise) / g
    sd_s = math.sqrt((m4 - var * var) / g)
    lo2 = stats.chernoff_lower(squares, g, ALPHA_SIDE)
    hi2 = stats.chernoff_upper(squares, g, ALPHA_SIDE)
    check.within("var z", (s - var) / sd_s, (lo2 - var) / sd_s, (hi2 - var) / sd_s, "%+.2f")
    check.note("G=%d sd %.4g (exact %.4g)" % (g, math.sqrt(s), math.sqrt(var)))


# ---------- rounding of rows to a grid, as dp_agg documents it (grid.h) ----------

def round_int(v, grid):
    """Integers: half up, in units of grid (a power of 2 >= 1)."""
    g = int(grid)
    if g == 1:
        return v
    return ((v + g // 2) // g) * g


def round_float(v, grid):
    """Doubles: half to even (llrint)."""
    return round(Fraction(v) / Fraction(grid)) * Fraction(grid)


def round_numeric(v, grid):
    """Numerics: half away from zero (numeric_round)."""
    q = Fraction(v) / Fraction(grid)
    u = math.floor(abs(q) + Fraction(1, 2))
    return (u if q >= 0 else -u) * Fraction(grid)


def clamp(v, lo, hi):
    return lo if v < lo else (hi if v > hi else v)
