"""Top-k: the groups chosen against the exact probabilities of the mechanism.

HAVING dp_agg.top_k(k, epsilon) chooses k groups by k rounds of report
noisy max (src/selection/top_k.c): in each round every remaining candidate's count
gets fresh discrete Laplace noise of scale b = k / epsilon, and the largest
noisy count wins, ties broken by a uniformly random order.  The exact
probability of each ordered outcome (i1, ..., ik) is the product over the
rounds of the probability that i_r wins among the candidates left:

    P(i wins) = sum_v f_i(v) E[1/(1 + T) ; every other count <= v]

where f_i is the law of c_i + Z, T the number of others equal to v, and
the expectation is the coefficient sum of prod_j (P(c_j + Z_j < v) +
P(c_j + Z_j = v) x) weighted by 1/(t + 1) at x^t (exact_outcomes below,
in double precision, the tails beyond 40 b summed in closed form: their
mass is below 1e-17).

top_k_mechanism: G = 200000 draws (8 calls) of dp_agg.top_k_sample (the mechanism's
own function, as the statements run it) for counts (6, 4, 4, 0), k = 2,
epsilon 1 (b = 2): the 12 ordered outcomes against their exact
probabilities by Pearson's chi-square (outcomes of expected count below 500
pooled), rejection at p < 1e-6: false failure 1e-6 (up to the chi-square
approximation, see gof.py).  Negative controls, whose probability of not
being rejected is bounded by gof.miss_bound and required to be below 1e-6
before drawing (false failure of a control: that bound): the mechanism at
epsilon 1.3 (the scale too small), and the exponential mechanism (peeling
with weights exp(c / b), the one-shot Gumbel top-k of Durfee & Rogers 2019)
at the same scale, which this mechanism is not.

top_k_statements: T = 3000 executions of a DP statement with a public
domain of 4 keys holding (12, 8, 8, 0) rows, HAVING dp_agg.top_k(1, 0.5)
(b = 2): the key each releases against the exact probabilities of one
round, by the same chi-square procedure (false failure 1e-6); the ledger
records top-k with k 1, epsilon 0.5 and noise scale 2 (deterministic).
"""

import math

import db
import gof
import stats
from framework import stat_test

G = 200000
T = 3000


def dlap_pmf_cdf(b):
    p = math.exp(-1.0 / b)
    norm = (1 - p) / (1 + p)

    def pmf(z):
        return norm * p ** abs(z)

    def cdf(z):
        """P(Z <= z)"""
        if z >= 0:
            return 1 - p ** (z + 1) / (1 + p)
        return p ** (-z) / (1 + p)
    return pmf, cdf


def round_probabilities(counts, cands, b):
    """P(i wins the round) for each candidate, report noisy max."""
    pmf, cdf = dlap_pmf_cdf(b)
    span = int(40 * b) + 2
    out = {}
    for i in cands:
        others = [j for j in cands if j != i]
        total = 0.0
        for z in range(-span, span + 1):
            v = counts[i] + z
            # polynomial in x: prod over others of (P(< v) + P(= v) x)
            poly = [1.0]
            for j in others:
                lt = cdf(v - counts[j] - 1)
                eq = pmf(v - counts[j])
                new = [0.0] * (len(poly) + 1)
                for t, c in enumerate(poly):
                    new[t] += c * lt
                    new[t + 1] += c * eq
                poly = new
            total += pmf(z) * math.fsum(c / (t + 1) for t, c in enumerate(poly))
        out[i] = total
    s = sum(out.values())
    return {i: v / s for i, v in out.items()}


def em_round_probabilities(counts, cands, b):
    """The exponential mechanism's round: P(i) proportional to exp(c_i / b)."""
    w = {i: math.exp((counts[i] - max(counts)) / b) for i in cands}
    s = math.fsum(w.values())
    return {i: w[i] / s for i in cands}


def exact_outcomes(counts, k, b, rounds=round_probabilities):
    """P(ordered outcome) for every ordered k-tuple of distinct candidates."""
    out = {}

    def rec(prefix, prob, left):
        if len(prefix) == k:
            out[tuple(prefix)] = prob
            return
        probs = rounds(counts, left, b)
        for i in left:
            rec(prefix + [i], prob * probs[i], [j for j in left if j != i])
    rec([], 1.0, list(range(len(counts))))
    return out


def pooled(p, n):
    """The outcomes, with those of expected count below 500 pooled into one bin."""
    keys = sorted(p, key=lambda o: -p[o])
    big = [o for o in keys if n * p[o] >= gof.MIN_EXPECTED]
    small = [o for o in keys if n * p[o] < gof.MIN_EXPECTED]
    bins = [[o] for o in big]
    if small:
        if n * math.fsum(p[o] for o in small) >= gof.MIN_EXPECTED or not bins:
            bins.append(small)
        else:
            bins[-1] = bins[-1] + small
    return bins


def chi_square(bins, p, observed):
    n = sum(observed.values())
    obs = [sum(observed.get(o, 0) for o in b) for b in bins]
    exp = [n * math.fsum(p[o] for o in b) for b in bins]
    x2 = math.fsum((o - e) ** 2 / e for o, e in zip(obs, exp))
    df = len(bins) - 1
    logp = stats.chi2_logsf(x2, df)
    return x2, df, logp, logp < math.log(gof.REJECT_P)


@stat_test("top_k_mechanism")
def mechanism(check):
    counts = [6, 4, 4, 0]
    k, epsilon = 2, 1.0
    b = k / epsilon
    p0 = exact_outcomes(counts, k, b)
    check.that(abs(math.fsum(p0.values()) - 1) < 1e-12, "outcome probabilities sum to %r" % math.fsum(p0.values()))
    bins = pooled(p0, G)
    controls = [("epsilon 1.3", exact_outcomes(counts, k, k / 1.3)),
                ("exponential mechanism", exact_outcomes(counts, k, b, em_round_probabilities))]
    q0 = [math.fsum(p0[o] for o in bn) for bn in bins]
    for name, p1 in controls:
        q1 = [math.fsum(p1[o] for o in bn) for bn in bins]
        bound = gof.miss_bound(G, q0, q1)
        check.that(bound <= 1e-6, "design: control %s misses with probability up to %.3g" % (name, bound))
    check.stop_if_failed()
    # in 8 calls of G / 8 draws (one call draws at most 1,000,000 noise values)
    out = []
    for _ in range(8):
        out += db.rows("COPY (SELECT r::text, count(*) FROM dp_agg.top_k_sample(ARRAY[%s]::bigint[], %d, %r, %d) r "
                       "GROUP BY r) TO STDOUT;" % (",".join(map(str, counts)), k, epsilon, G // 8))
    observed = {}
    for r, c in out:
        ranks = [int(x) for x in r.strip("{}").split(",")]
        outcome = tuple(sorted((i for i in range(len(ranks)) if ranks[i] > 0), key=lambda i: ranks[i]))
        check.that(sorted(ranks[i] for i in outcome) == list(range(1, k + 1)), "ranks %s" % r)
        observed[outcome] = observed.get(outcome, 0) + int(c)
    check.that(sum(observed.values()) == G, "%d draws, expected %d" % (sum(observed.values()), G))
    check.stop_if_failed()
    x2, df, logp, rejected = chi_square(bins, p0, observed)
    check.that(not rejected, "rejected: X2=%.1f df=%d p=%s" % (x2, df, stats.format_p(logp)))
    check.note("X2=%.1f df=%d p=%s over %d outcomes" % (x2, df, stats.format_p(logp), len(p0)))
    for name, p1 in controls:
        x2c, dfc, logpc, rej = chi_square(bins, p1, observed)
        check.that(rej, "control %s NOT rejected: X2=%.1f p=%s" % (name, x2c, stats.format_p(logpc)))
        check.note("control %s rejected: X2=%.0f" % (name, x2c))


@stat_test("top_k_statements")
def statements(check):
    t = db.fixed_table("topk_rows",
                       "SELECT g FROM (VALUES (1, 12), (2, 8), (3, 8)) v(g, n), generate_series(1, n)")
    counts = [12, 8, 8, 0]
    p0 = {(i,): p for i, p in round_probabilities(counts, [0, 1, 2, 3], 2.0).items()}
    bins = pooled(p0, T)
    rels = db.releases("SELECT g, dp_count(*) FROM %s WHERE g IN (1, 2, 3, 4) GROUP BY g "
                       "HAVING dp_agg.top_k(1, 0.5)" % t, T,
                       settings={"dp_agg.epsilon": "1", "dp_agg.group_keys": "private"})
    observed = {}
    for rel in rels:
        check.that(len(rel.rows) == 1, "a statement released %d groups" % len(rel.rows))
        if len(rel.rows) == 1:
            o = (int(rel.rows[0][0]) - 1,)
            observed[o] = observed.get(o, 0) + 1
    tk = [c["top_k"] for c in rels[0].detail if "top_k" in c]
    check.that(tk and tk[0]["k"] == 1 and tk[0]["epsilon"] == 0.5 and tk[0]["noise_scale"] == 2.0,
               "the ledger's top-k: %r" % tk)
    check.stop_if_failed()
    x2, df, logp, rejected = chi_square(bins, p0, observed)
    check.that(not rejected, "rejected: X2=%.1f df=%d p=%s, observed %r" % (x2, df, stats.format_p(logp), observed))
    check.note("X2=%.1f df=%d p=%s" % (x2, df, stats.format_p(logp)))
