"""Automatic bounds (doc/statistics.md, "Automatic bounds"): the threshold of
the noisy histogram of dp_bounds, by the exact probability that a bin of t
rows passes it.

bounds_threshold
    stat.bounds_rows: G = 20000 groups of N rows, every one 1.5 (the bin
    [1, 2)).  SELECT g, dp_bounds(x, 1) ... GROUP BY g: the histogram of 191
    bins gets discrete Laplace noise of the ledger's scale b (1 at epsilon
    1, sensitivity 1); the threshold t is the smallest integer with
    191 P(X >= t) <= 1e-6, P(X >= t) = q^t / (1 + q), q = e^(-1/b)
    (auto_bounds.c).  N is chosen equal to t, so the release is
      * (1, 2) when the bin's noisy count N + X reaches t and no empty bin
        passes: probability between P(X >= 0) (1 - 1e-6) and P(X >= 0);
      * NULL when it does not and no empty bin passes;
      * anything else with probability at most 1e-6 (an empty bin passes).
    Assertions:
      * deterministic (0): the ledger records one histogram release,
        Laplace, sensitivity 1, and t computed here from its scale makes
        191 P(X >= t) <= 1e-6 < 191 P(X >= t - 1).
      * the count K of (1, 2) lies in the Chernoff acceptance interval
        (4.9e-7 a side) of Binomial(G, p) for p = P(X >= 0)(1 - 1e-6) on
        the low side and p = P(X >= 0) on the high side: at most 1e-6.
      * the count of releases that are neither (1, 2) nor NULL is at most
        the upper end of the acceptance interval of Binomial(G, 1e-6):
        at most 4.9e-7.
      * negative controls, checked to have acceptance intervals disjoint
        from the correct one before looking (so the statistic falls in
        them only if it falls outside the correct interval: no further
        false failure): the threshold one lower (p = P(X >= -1)), one
        higher (P(X >= 1)), and the noise scale 1.3 b (t unchanged).
"""

import math

import db
import stats
from framework import stat_test

G = 20000
BINS = 191
FALSE_BIN = 1e-6
ALPHA = 4.9e-7


def sf(q, x):
    """P(X >= x) for the discrete Laplace with parameter q = e^(-1/b)"""
    if x >= 1:
        return q ** x / (1 + q)
    return 1.0 - q ** (1 - x) / (1 + q)


def threshold(q):
    t = 1
    while BINS * sf(q, t) > FALSE_BIN:
        t += 1
    return t


@stat_test("bounds_threshold")
def bounds_threshold(check):
    # the threshold at epsilon 1 (scale 1), from the ledger's record below
    q = math.exp(-1.0)
    n = threshold(q)
    t = db.fixed_table("bounds_rows_%d" % n, "SELECT g, 1.5::float8 AS x FROM generate_series(1, %d) g, "
                       "generate_series(1, %d) k" % (G, n))
    rel = db.release("SELECT g, dp_bounds(x, 1) FROM %s GROUP BY g" % t)
    spec = rel.noise(0)
    check.that(spec["release"] == "histogram" and spec["mechanism"] == "laplace"
               and float(spec["sensitivity"]) == 1 and float(spec["grid"]) == 1,
               "ledger: %r" % (spec,))
    b = float(spec["noise_scale"])
    check.that(abs(b - 1.0) < 1e-12, "noise scale %r, expected 1" % b)
    check.that(BINS * sf(q, n) <= FALSE_BIN < BINS * sf(q, n - 1), "threshold %d" % n)
    check.that(len(rel.rows) == G, "expected %d groups, got %d" % (G, len(rel.rows)))
    check.stop_if_failed()

    p = sf(q, 0)
    lo, _ = stats.binomial_acceptance(G, p * (1 - FALSE_BIN), ALPHA)
    _, hi = stats.binomial_acceptance(G, p, ALPHA)
    controls = {"threshold t - 1": sf(q, -1), "threshold t + 1": sf(q, 1),
                "scale 1.3 b": sf(math.exp(-1.0 / 1.3), 0)}
    for name, pc in controls.items():
        clo, chi = stats.binomial_acceptance(G, pc, ALPHA)
        check.that(chi < lo or clo > hi, "control %s: acceptance [%d, %d] meets [%d, %d]"
                   % (name, clo, chi, lo, hi))
    check.stop_if_failed()

    exact = sum(1 for r in rel.rows if r[1] == "(1,2)")
    null = sum(1 for r in rel.rows if r[1] == "\\N")
    other = G - exact - null
    check.within("K (1,2)", exact, lo, hi, "%d")
    _, ohi = stats.binomial_acceptance(G, FALSE_BIN, ALPHA)
    check.within("other", other, 0, ohi, "%d")
    check.note("t = N = %d; P(X >= 0) = %.4f; %d NULL; controls P: %s"
               % (n, p, null, ", ".join("%s %.4f" % kv for kv in controls.items())))
