"""dp_percentile (doc/statistics.md, "Quantiles"): one price for several
percentiles, and an empirical privacy audit.  The coverage of the quantiles'
intervals is in test_error_bars.py.

quant_price
    SELECT g, dp_percentile(x, ARRAY[0.1, 0.5, 0.9], 0, 100, 1) over 200
    groups of stat.quant_price (100 rows each):
      * deterministic (0): one ledger call, epsilon 1 in all, one tree
        release repeated 3 times (the height) with discrete Laplace noise
        of scale 3 (sensitivity 1 per level); every released array has
        three values in [0, 100], in order.
quant_audit
    Neighbouring tables: stat.quant_audit_minus (100 rows of 25 and 100 of
    75, bounds [0, 100]) and stat.quant_audit (the same and one more row of
    75).  T = 2500 releases each of dp_median(x, 0, 100, 1).  Event E:
    release >= 50 (the median moves to the upper cluster; the extra row
    shifts the rank p N~ by 1/2 and every prefix count above the lower
    cluster by 1).  The Clopper-Pearson lower bound of epsilon,
    ln(P_lower(E | D) / P_upper(E | D')) (each one-sided at 5e-7), must be
    at most the declared 1: false failure at most 1e-6 for any correct
    mechanism.  The point estimate is reported.  (A walk without noise would
    release the lower cluster on D' and the upper one on D every time: an
    infinite loss.)  The audit checks that the declared epsilon is never
    exceeded; its power is low for this mechanism: one row moves one node
    of each level by 1 and the walk reads them through noisy prefix sums,
    so no single threshold event approaches the worst case (the point
    estimate is near 0).
"""

import math

import db
from framework import stat_test
from test_privacy_units import cp_lower, cp_upper

T_AUDIT = 2500
CP_SIDE = 5e-7


@stat_test("quant_price")
def quant_price(check):
    t = db.fixed_table("quant_price", "SELECT g, (k % 101)::float8 AS x FROM generate_series(1, 200) g, "
                       "generate_series(1, 100) k")
    rel = db.release("SELECT g, dp_percentile(x, ARRAY[0.1, 0.5, 0.9], 0, 100, 1) FROM %s GROUP BY g" % t)
    check.that(len(rel.detail) == 1 and abs(rel.epsilon - 1.0) < 1e-12,
               "calls %d, epsilon %r" % (len(rel.detail), rel.epsilon))
    spec = rel.noise(0)
    check.that(spec["release"] == "tree" and int(spec["repeats"]) == 3
               and spec["mechanism"] == "laplace" and abs(float(spec["noise_scale"]) - 3) < 1e-12,
               "release %r" % (spec,))
    ok = 0
    for r in rel.rows:
        v = [float(a) for a in r[1].strip("{}").split(",")]
        ok += len(v) == 3 and 0 <= v[0] <= v[1] <= v[2] <= 100
    check.that(ok == 200, "%d of 200 arrays are three ordered values in [0, 100]" % ok)


@stat_test("quant_audit")
def quant_audit(check):
    base = "SELECT 25.0::float8 AS x FROM generate_series(1, 100) UNION ALL " \
           "SELECT 75.0 FROM generate_series(1, 100)"
    d_minus = db.fixed_table("quant_audit_minus", base)
    d = db.fixed_table("quant_audit", base + " UNION ALL SELECT 75.0")
    hits = []
    for tbl in (d, d_minus):
        rels = db.releases("SELECT dp_median(x, 0, 100, 1) FROM %s" % tbl, T_AUDIT)
        hits.append(sum(1 for rel in rels if float(rel.rows[0][0]) >= 50.0))
    p_lo = cp_lower(T_AUDIT, hits[0], CP_SIDE)
    q_hi = cp_upper(T_AUDIT, hits[1], CP_SIDE)
    eps_lb = math.log(p_lo / q_hi) if p_lo > 0 else -math.inf
    check.that(eps_lb <= 1.0, "epsilon lower bound %.4f exceeds the declared epsilon 1" % eps_lb)
    est = (math.log(hits[0] / hits[1]) if hits[0] > 0 and hits[1] > 0 else float("nan"))
    check.note("E hit %d/%d on D, %d/%d on D'; epsilon lower bound %.3f, point estimate %.3f "
               "(declared 1)" % (hits[0], T_AUDIT, hits[1], T_AUDIT, eps_lb, est))
