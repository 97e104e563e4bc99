"""Public domains: a key no row has releases its mechanism's noise alone.

A DP statement whose GROUP BY keys have a public domain releases every key
of the domain (src/selection/public_domain.c).  Table stat.domain_outside holds rows
whose keys are all outside the range the statement groups, so

    SELECT k, dp_count(*) FROM stat.domain_outside WHERE k BETWEEN 1 AND G GROUP BY k

(a domain derived from the range: every integer of [1, G]) releases G keys,
each of them empty: its value is the count's noise X alone, G independent
draws in one statement (each key is its own group, with its own draw).
X must follow the exact law of the noise the ledger records (after a
deterministic check that it is the documented calibration, and that the
statement paid no selection): the sampler's integer law for Laplace, the
rounded continuous law for a Gaussian count drawn on a finer grid
(laws.RoundedLaw), by the chi-square procedure of gof.py (bins fixed from
the pmf in advance, every expected count >= 500, reject when p < 1e-6).

Assertions and their false-failure probabilities:
  * deterministic (0): G keys released, each once; the ledger has the count
    and the public domain of G keys, and no selection; the calibration;
  * the chi-square test of X against the exact law: 1e-6 (up to the
    chi-square approximation, see gof.py);
  * the negative control: the same X tested against the law at 1.3 times
    the scale must be rejected; before looking, gof.miss_bound bounds the
    probability of not rejecting and it is required to be below 1e-6 (false
    failure of the control: that bound).
The empty keys of a key list (an outer join from VALUES) are checked the
same way, with a smaller G (a list of 20000 keys), Laplace only.
"""

import db
import gof
import laws
import noise_checks as nc
from framework import stat_test

G = 200000
G_LIST = 20000
WRONG = 1.3


def outside():
    # rows with keys -100..0: outside every range the tests group
    return db.fixed_table("domain_outside",
                          "SELECT -(i % 101) AS k FROM generate_series(1, 5000) AS i")


def integer_law(mechanism, scale, grid):
    if grid == 1.0:
        return laws.make_law(mechanism, scale)
    return laws.RoundedLaw(mechanism, scale)


def empty_keys_test(check, rel, epsilon, delta, n):
    spec = rel.noise()
    nc.check_calibration(check, spec, "dp_count", epsilon, delta, 1.0)
    kinds = [list(c.keys()) for c in rel.detail]
    check.that(any("public_domain" in k for k in kinds), "no public domain in the ledger: %r" % kinds)
    check.that(not any("selection" in k for k in kinds), "a selection in the ledger: %r" % kinds)
    domain = [c["public_domain"] for c in rel.detail if "public_domain" in c]
    check.that(domain and domain[0]["keys"] == n, "domain %r, expected %d keys" % (domain, n))
    keys = [r[0] for r in rel.rows]
    check.that(len(keys) == n and len(set(keys)) == n,
               "expected %d distinct keys, got %d rows, %d distinct" % (n, len(keys), len(set(keys))))
    check.stop_if_failed()
    hist = {}
    for r in rel.rows:
        x = int(r[-1])
        hist[x] = hist.get(x, 0) + 1
    law0 = integer_law(spec["mechanism"], spec["noise_scale"], spec["grid"])
    law1 = integer_law(spec["mechanism"], WRONG * spec["noise_scale"], spec["grid"])
    bins = gof.make_bins(law0, n)
    p0 = bins.probs(law0)
    p1 = bins.probs(law1)
    bound = gof.miss_bound(n, p0, p1)
    check.that(bound <= 1e-6, "design: miss probability bound %.3g > 1e-6" % bound)
    check.stop_if_failed()
    res = gof.pearson(bins, p0, hist.items())
    check.that(not res.rejected, "rejected: %s; worst bins %s" % (res.summary(), res.worst_bins(bins)))
    wrong = gof.pearson(bins, p1, hist.items())
    check.that(wrong.rejected, "the law at %.1fx the scale NOT rejected: %s" % (WRONG, wrong.summary()))
    check.note("%s scale %.4g: %s; at %.1fx: rejected (miss<=%.1g)"
               % (law0.name, spec["noise_scale"], res.summary(), WRONG, max(bound, 1e-300)))


@stat_test("public_domain_empty_keys_laplace")
def empty_laplace(check):
    t = outside()
    rel = db.release("SELECT k, dp_count(*) FROM %s WHERE k BETWEEN 1 AND %d GROUP BY k" % (t, G),
                     settings={"dp_agg.epsilon": "0.3", "dp_agg.delta": "0",
                               "dp_agg.group_keys": "private", "dp_agg.max_public_keys": str(G)})
    empty_keys_test(check, rel, 0.3, 0.0, G)


@stat_test("public_domain_empty_keys_gaussian")
def empty_gaussian(check):
    t = outside()
    rel = db.release("SELECT k, dp_count(*) FROM %s WHERE k BETWEEN 1 AND %d GROUP BY k" % (t, G),
                     settings={"dp_agg.epsilon": "1", "dp_agg.delta": "1e-5",
                               "dp_agg.group_keys": "private", "dp_agg.max_public_keys": str(G)})
    empty_keys_test(check, rel, 1.0, 1e-5, G)


@stat_test("public_domain_empty_keys_list")
def empty_list(check):
    t = outside()
    keys = ",".join(str(100000 + i) for i in range(G_LIST))
    rel = db.release("SELECT l.k, dp_count(t.k) FROM unnest(ARRAY[%s]) AS l(k) LEFT JOIN %s t ON t.k = l.k "
                     "GROUP BY l.k" % (keys, t),
                     settings={"dp_agg.epsilon": "0.5", "dp_agg.delta": "0",
                               "dp_agg.group_keys": "private"})
    empty_keys_test(check, rel, 0.5, 0.0, G_LIST)
