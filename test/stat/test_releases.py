"""The whole distribution of released counts, through the aggregates.

Where test_samplers.py draws from the samplers directly, these tests take
the noise of real releases: table stat.single has G = 200000 groups of one
row, so  SELECT g, dp_count(*) ... GROUP BY g  releases 1 + X for 200000
independent X, all in one statement.  X is the sampler's integer law when
the count's grid is 1 (Laplace), and the rounded continuous law
(laws.RoundedLaw) when the noise is drawn on a finer grid and the count
rounded afterwards (Gaussian).  The noise parameter comes from the
statement's ledger entry (after a deterministic check that it is the
documented calibration), and X is tested against the exact pmf by the
chi-square procedure of gof.py (same bins rule, reject when p < 1e-6).

False-failure probability of each chi-square assertion: 1e-6 (up to the
chi-square approximation, see gof.py); the calibration checks are
deterministic.  The power of the procedure is shown by the negative controls
of test_samplers.py; here, with G = 200000, a 30% error of the scale would
give a noncentrality of about 18000 (reported as lambda).
"""

import db
import gof
import laws
import noise_checks as nc
from framework import stat_test

G = 200000


def single():
    return db.fixed_table("single", "SELECT g FROM generate_series(1, %d) AS g" % G)


def integer_law(mechanism, scale, grid):
    """The law of the integer noise of a count: the sampler's law on the
    integers (grid 1), or the rounded continuous law (grid < 1, laws.py)."""
    if grid == 1.0:
        return laws.make_law(mechanism, scale)
    return laws.RoundedLaw(mechanism, scale)


def gof_test(check, rel, epsilon, delta):
    spec = rel.noise()
    nc.check_calibration(check, spec, "dp_count", epsilon, delta, 1.0)
    check.that(spec["grid"] <= 1.0, "count grid %r > 1" % spec["grid"])
    check.that(len(rel.rows) == G, "expected %d groups, got %d" % (G, len(rel.rows)))
    check.stop_if_failed()
    hist = {}
    for r in rel.rows:
        x = int(r[-1]) - 1
        hist[x] = hist.get(x, 0) + 1
    law = integer_law(spec["mechanism"], spec["noise_scale"], spec["grid"])
    bins = gof.make_bins(law, G)
    p0 = bins.probs(law)
    res = gof.pearson(bins, p0, hist.items())
    lam = gof.noncentrality(G, p0, bins.probs(integer_law(spec["mechanism"],
                                                          1.3 * spec["noise_scale"], spec["grid"])))
    check.that(not res.rejected, "rejected: %s; worst bins %s" % (res.summary(), res.worst_bins(bins)))
    check.note("%s scale %.4g: %s (lambda at 1.3x: %.0f)"
               % (law.name, spec["noise_scale"], res.summary(), lam))


@stat_test("release_count_laplace_pmf")
def count_laplace(check):
    t = single()
    rel = db.release("SELECT g, dp_count(*) FROM %s GROUP BY g" % t,
                     settings={"dp_agg.epsilon": "0.3", "dp_agg.delta": "0"})
    gof_test(check, rel, 0.3, 0.0)


@stat_test("release_count_gaussian_pmf")
def count_gaussian(check):
    t = single()
    rel = db.release("SELECT g, dp_count(*) FROM %s GROUP BY g" % t,
                     settings={"dp_agg.epsilon": "1", "dp_agg.delta": "1e-5"})
    gof_test(check, rel, 1.0, 1e-5)
