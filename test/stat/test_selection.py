"""Private selection of GROUP BY keys: the probability that a group of n
units is released, against the exact curve of the mechanism.

dp_agg releases a group of n units with probability pi(n), the optimal
mechanism of Desfontaines et al. 2022 (Theorem 1) at (epsilon/k,
delta/k) for units in at most k groups (src/noise/selection_mechanism.c).  The
exact curve comes from the independent reference test/reference/selection.py
(closed form, 60-digit decimals).

For k > 1 dp_agg chooses Gaussian thresholding when it releases groups
sooner (src/noise/selection_gaussian.c): a group of n units is released when
n + Z >= tau, Z discrete Gaussian; its exact curve P[Z >= tau - n] comes
from the same reference (the discrete Gaussian's mass summed in 60-digit
decimals, sigma and tau recomputed from the public rule).
selection_curve_gaussian draws it G = 20000 times for each n with
dp_agg.selection_sample at (3, 1e-3, k = 8), where sigma = 3.29, tau = 15;
its controls are the curve with tau one unit lower and the split optimal
mechanism's curve.  Deterministic assertions there: the mechanism, sigma
(relative 1e-12) and tau equal the reference's, and the extension's curve
is within relative 1e-9 of the exact one (both sides: the draws do not use
it).

selection_curve_k1: one GROUP BY statement over table stat.sel_sizes, which
holds G = 4000 groups of each size n = 1..20 (840,000 rows): the number X_n
of groups of size n released is Binomial(G, pi(n)), groups being decided
independently.  selection_curve_k3: dp_agg.selection_sample draws the
decision G = 20000 times for each n with max_groups_contributed 3.

Assertions:
  * deterministic (false failure 0): the ledger records the selection; the
    extension's pi(n) (dp_agg.selection_probability, which the draws use)
    is within relative 1e-9 of the reference and never above it (its
    rounding errs on the private side);
  * for each n, X_n lies in the two-sided acceptance interval of
    Binomial(G, pi(n)) with 0.5e-6 in each tail (stats.binomial_acceptance,
    a rigorous Chernoff bound): false failure at most 1e-6 per n;
  * negative controls: the same acceptance intervals computed from a wrong
    curve (epsilon 20% too large; the curve shifted by one unit; for k = 3,
    the curve without the split of epsilon and delta) must reject for some
    n.  Before drawing, the probability that the true curve's data pass
    every interval of the wrong one is bounded (Chernoff, the smallest over
    n of the probability that X_n falls in the wrong interval) and checked
    to be at most 1e-6: that bounds the false failure of the control.
"""

import decimal
import os
import sys

import db
import stats
from framework import stat_test

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import selection as reference   # noqa: E402

N_MAX = 20
G1 = 4000
G3 = 20000
ALPHA_SIDE = 0.5e-6
KEY = 100000        # group key n * KEY + j, j < G1


def sizes_table():
    return db.fixed_table(
        "sel_sizes",
        "SELECT n * %d + j AS g FROM generate_series(1, %d) n, generate_series(0, %d) j, "
        "generate_series(1, n) r" % (KEY, N_MAX, G1 - 1))


def extension_curve(check, epsilon, delta, k):
    """pi(1..N_MAX) of the extension, checked against the reference."""
    out = db.rows("SELECT n, dp_agg.selection_probability(%r::float8, %r::float8, n, %d)::text "
                  "FROM generate_series(1, %d) n ORDER BY n;" % (epsilon, delta, k, N_MAX))
    ext = {int(n): float(p) for n, p in out}
    ref = reference.curve(epsilon, delta, N_MAX, k)
    worst = 0.0
    for n in range(1, N_MAX + 1):
        r = ref[n]
        e = decimal.Decimal(ext[n])
        rel = float(abs(e - r) / r)
        worst = max(worst, rel)
        check.that(rel <= 1e-9, "pi(%d) = %r, reference %s" % (n, ext[n], r))
        check.that(e <= r * (1 + decimal.Decimal(10) ** -40),
                   "pi(%d) = %r above the exact %s" % (n, ext[n], r))
    check.note("pi(n) within relative %.2g of the reference, never above" % worst)
    return ext


def acceptance(g, curve):
    return {n: stats.binomial_acceptance(g, curve[n], ALPHA_SIDE) if 0 < curve[n] < 1
            else ((g, g) if curve[n] >= 1 else (0, 0))
            for n in range(1, N_MAX + 1)}


def pass_bound(g, true_curve, wrong_interval):
    """Bound of P[X_n in the wrong interval for every n] under the true
    curve: the smallest over n of a Chernoff bound of P[X_n in [lo, hi]]."""
    best = 1.0
    for n in range(1, N_MAX + 1):
        p = true_curve[n]
        lo, hi = wrong_interval[n]
        if p <= 0 or p >= 1:
            inside = lo <= (g if p >= 1 else 0) <= hi
            b = 1.0 if inside else 0.0
        elif lo > g * p:
            b = stats.binom_tail_bound(g, p, lo, upper=True)
        elif hi < g * p:
            b = stats.binom_tail_bound(g, p, hi, upper=False)
        else:
            b = 1.0
        best = min(best, b)
    return best


def curve_test(check, g, released, ext, controls):
    """released[n]: groups of size n released out of g; controls: name ->
    wrong curve (dict n -> probability)."""
    accept = acceptance(g, ext)
    for n in range(1, N_MAX + 1):
        lo, hi = accept[n]
        check.that(lo <= released[n] <= hi,
                   "n=%d: %d of %d released, outside [%d, %d] of pi=%.6g"
                   % (n, released[n], g, lo, hi, ext[n]))
    check.note("X_n within the acceptance of pi(n) for n = 1..%d" % N_MAX)
    for name, wrong in controls.items():
        bound = pass_bound(g, ext, acceptance(g, wrong))
        check.that(bound <= 1e-6, "control %s has no power: bound %.3g" % (name, bound))
        waccept = acceptance(g, wrong)
        rejected = [n for n in range(1, N_MAX + 1)
                    if not waccept[n][0] <= released[n] <= waccept[n][1]]
        check.that(rejected != [], "the wrong curve (%s) was not rejected" % name)
        check.note("%s rejected at n=%s (pass bound %.2g)" % (name, rejected[:4], bound))


def as_floats(curve):
    return {n: float(curve[n]) for n in range(1, N_MAX + 1)}


@stat_test("selection_curve_k1")
def selection_curve_k1(check):
    epsilon, delta = 0.5, 0.01
    ext = extension_curve(check, epsilon, delta, 1)
    ref = as_floats(reference.curve(epsilon, delta, N_MAX))
    controls = {
        "epsilon 20% too large": as_floats(reference.curve(1.2 * epsilon, delta, N_MAX)),
        "shifted by one unit": {n: (ref[n - 1] if n > 1 else 0.0) for n in range(1, N_MAX + 1)},
    }
    # the controls must have power before anything is drawn
    for name, wrong in controls.items():
        check.that(pass_bound(G1, ext, acceptance(G1, wrong)) <= 1e-6, "control %s has no power" % name)
    check.stop_if_failed()

    rel = db.release("SELECT g / %d AS n, count(*) FROM (SELECT g, dp_count(*) AS c FROM %s GROUP BY g) s "
                     "GROUP BY 1 ORDER BY 1" % (KEY, sizes_table()),
                     {"dp_agg.group_keys": "private", "dp_agg.selection_epsilon": epsilon,
                      "dp_agg.selection_delta": delta})
    sel = [c["selection"] for c in rel.detail if "selection" in c]
    check.that(len(sel) == 1, "expected one selection in the ledger, found %d" % len(sel))
    check.stop_if_failed()
    s = sel[0]
    check.that(s["mechanism"] == "optimal" and s["epsilon"] == epsilon and s["delta"] == delta
               and s["max_groups_contributed"] == 1
               and s["threshold"] == reference.smallest_n(epsilon, delta, 1),
               "ledger selection %r" % s)
    released = {n: 0 for n in range(1, N_MAX + 1)}
    for n, c in rel.rows:
        released[int(n)] = int(c)
    curve_test(check, G1, released, ext, controls)


@stat_test("selection_curve_k3")
def selection_curve_k3(check):
    epsilon, delta, k = 3.0, 3e-3, 3
    ext = extension_curve(check, epsilon, delta, k)
    controls = {"no split by k": as_floats(reference.curve(epsilon, delta, N_MAX))}
    for name, wrong in controls.items():
        check.that(pass_bound(G3, ext, acceptance(G3, wrong)) <= 1e-6, "control %s has no power" % name)
    check.stop_if_failed()
    out = db.rows("SELECT n, dp_agg.selection_sample(%r::float8, %r::float8, n, %d, %d) "
                  "FROM generate_series(1, %d) n ORDER BY n;" % (epsilon, delta, G3, k, N_MAX))
    released = {int(n): int(c) for n, c in out}
    curve_test(check, G3, released, ext, controls)


@stat_test("selection_curve_gaussian")
def selection_curve_gaussian(check):
    epsilon, delta, k = 3.0, 1e-3, 8
    name, plan = reference.mechanism(epsilon, delta, k)
    check.that(name == "gaussian", "the reference chooses %s at %r" % (name, (epsilon, delta, k)))
    check.stop_if_failed()
    out = db.rows("SELECT mechanism, sigma::text, tau FROM dp_agg.selection_mechanism(%r::float8, %r::float8, %d);"
                  % (epsilon, delta, k))
    mech, sigma, tau = out[0][0], decimal.Decimal(out[0][1]), int(out[0][2])
    check.that(mech == "gaussian" and tau == plan["tau"]
               and abs(sigma - plan["sigma"]) <= plan["sigma"] * decimal.Decimal("1e-12"),
               "extension %s sigma %s tau %d, reference sigma %s tau %d"
               % (mech, sigma, tau, plan["sigma"], plan["tau"]))
    check.stop_if_failed()
    exact = reference.gaussian_curve(plan, N_MAX)
    out = db.rows("SELECT n, dp_agg.selection_probability(%r::float8, %r::float8, n, %d)::text "
                  "FROM generate_series(1, %d) n ORDER BY n;" % (epsilon, delta, k, N_MAX))
    ext = {int(n): float(p) for n, p in out}
    worst = 0.0
    for n in range(1, N_MAX + 1):
        rel = float(abs(decimal.Decimal(ext[n]) - exact[n]) / exact[n])
        worst = max(worst, rel)
        check.that(rel <= 1e-9, "P(%d) = %r, exact %s" % (n, ext[n], exact[n]))
    check.note("P(n) within relative %.2g of the exact curve" % worst)
    lower = dict(plan, tau=plan["tau"] - 1)
    controls = {"tau one unit lower": as_floats(reference.gaussian_curve(lower, N_MAX)),
                "split optimal mechanism": as_floats(reference.curve(epsilon, delta, N_MAX, k))}
    for cname, wrong in controls.items():
        check.that(pass_bound(G3, ext, acceptance(G3, wrong)) <= 1e-6, "control %s has no power" % cname)
    check.stop_if_failed()
    out = db.rows("SELECT n, dp_agg.selection_sample(%r::float8, %r::float8, n, %d, %d) "
                  "FROM generate_series(1, %d) n ORDER BY n;" % (epsilon, delta, G3, k, N_MAX))
    released = {int(n): int(c) for n, c in out}
    curve_test(check, G3, released, ext, controls)
