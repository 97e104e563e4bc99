"""The sample of privacy units: TABLESAMPLE dp_agg.secure_bernoulli (p) on a
relation with a privacy unit keeps each unit, with all its rows, with
probability q = rint(2^32 p / 100) / 2^32, under a key drawn for each
execution, and the releases are amplified at the level of units
(doc/sampling.md, "Subsampling"; src/units/unit_sample.c).

Inclusion.  Table stat.unit_sample_incl has U = 5000 units, unit u with
m_u = 1 + u % 3 rows.  The statement

    SELECT u, dp_count(*) FROM stat.unit_sample_incl
        TABLESAMPLE dp_agg.secure_bernoulli (30) GROUP BY u

(public keys: a group is released exactly when its unit is in the sample,
whatever the noise; dp_agg.max_rows_contributed 3, epsilon 1e4: the count's
noise, discrete Laplace of scale 3e-4, is 0 except with probability below
2 exp(-3333) per release) is run S = 40 times.  If each execution keeps each
unit independently with probability q (SipHash-2-4 as a pseudorandom
function of the unit under a fresh key), the number of executions that
kept unit u, X_u, is Binomial(S, q), independently across units.

  unit_sampling_inclusion
      * deterministic (0): every ledger entry records sampling method
        secure_bernoulli, units true, rate == q exactly, amplified true;
        every released count is the unit's row count m_u (all its rows
        together: a unit split by the sample would release fewer), and no
        unit is released twice by one execution.
      * the total T = sum X_u, Binomial(U S, q): rigorous Chernoff acceptance
        interval (stats.binomial_acceptance) at 4.9e-7 per side: 9.8e-7.
      * each X_u within the Chernoff acceptance interval of Binomial(S, q)
        at 1e-7 / U per side (at S = 40 it catches a unit the sample
        always keeps; one it never keeps is within the chi-square's view
        only in aggregate): union bound 2e-7 for the assertion.
      * chi-square of the histogram of the X_u against the Binomial(S, q)
        pmf, bins fixed from the pmf alone (each of probability at least
        500 / U = 0.1, tails pooled), Pearson, reject at p < 1e-6: false
        failure 1e-6 up to the chi-square approximation (gof.py).
  unit_sampling_inclusion_condition
      * the same, over the same rows in two partitions, whose scans keep
        their rows by the condition unit_sampled alone (a plain table is
        read through the sample scan dp_agg_internal.unit_scan, which
        hands over only the rows the condition keeps; the plan of each is
        checked, deterministic): the same three statistical assertions,
        9.8e-7 + 2e-7 + 1e-6.
  unit_sampling_inclusion_wrong_rate  (negative control of the procedure)
      * the same X_u tested against Binomial(S, 1.25 q) must be rejected;
        the rigorous bound of the probability of not rejecting
        (gof.miss_bound) is computed for n = U before looking and must be
        below 1e-6: false failure at most that bound.
  unit_sampling_repeatable_rejected  (negative control: a wrong sampler)
      * deterministic (0): the same statement with BERNOULLI (30)
        REPEATABLE (7) (rows sampled under a fixed seed, not units), run
        S_REP = 40 times, releases counts below m_u (units split).
      * its X_u (each unit kept in every execution or in none) tested by
        the same chi-square must be rejected; the miss bound under the
        law of that sampler (a unit of m rows is kept with probability
        1 - (1 - q)^m, always or never) is computed first and must be
        below 1e-6.

Amplification.  Table stat.unit_sample_zeros has G = 2000 groups of
K = 10 units of 2 rows each whose column z is 0; the statement

    SELECT g, dp_sum(z, 0, 1, 1::float8) FROM stat.unit_sample_zeros
        TABLESAMPLE dp_agg.secure_bernoulli (10) GROUP BY g

releases, for every group with a unit in the sample (probability
pi = 1 - (1 - q)^K), the exact sum 0 plus one discrete Laplace noise of
scale 1/epsilon0 (a unit's total clamped to [0, 1]: sensitivity 1),
epsilon0 = ln(1 + (e^1 - 1) / q) the base epsilon of units sampled at rate
q.  Run S_AMP = 30 times (about 39000 releases).

  unit_sampling_laplace_pmf
      * deterministic (0): each ledger entry: Laplace dp_sum of sensitivity
        1, sampling secure_bernoulli, units true, rate q, amplified,
        base_epsilon = epsilon0 and noise_scale = 1/epsilon0 to 1e-12.
      * the number of releases, Binomial(S_AMP G, pi) when units are
        sampled at rate q (sampling rows at rate q would give
        1 - (1 - q)^(2K) = 0.88 instead of 0.65): acceptance interval at
        4.9e-7 per side: 9.8e-7.
      * chi-square of the released values against the pmf of scale
        1/epsilon0 must not reject: 1e-6 (as above).
  unit_sampling_laplace_mean_var
      * mean and variance of the same releases against the exact law
        (noise_checks.assert_mean_and_variance): at most 1e-6 each.
  unit_sampling_vs_unamplified_scale  (negative control)
      * the releases tested against the unamplified scale 1/epsilon = 1
        must be rejected; miss bound below 1e-6 checked first.

Thirteen statistical assertions, the sum of their false-failure
probabilities below 8.4e-6 (the two negative controls' miss bounds are astronomically
small).
"""

import math

import db
import gof
import laws
import noise_checks as nc
import stats
from framework import stat_test
from test_sampling import bernoulli_rate, fit, histogram, negative_control

U = 5000                # units of the inclusion table
S = 40                  # executions
PERCENT = 30.0
Q = bernoulli_rate(PERCENT)
WRONG_RATE = 1.25
S_REP = 40
ALPHA_SIDE = 4.9e-7
MIN_EXPECTED = 500

G = 2000                # groups of the amplification table
K = 10                  # units per group
PERCENT_AMP = 10.0
Q_AMP = bernoulli_rate(PERCENT_AMP)
EPSILON = 1.0
EPSILON0 = math.log1p(math.expm1(EPSILON) / Q_AMP)
B_AMP = 1.0 / EPSILON0
B_PLAIN = 1.0 / EPSILON
PI = -math.expm1(K * math.log1p(-Q_AMP))
S_AMP = 30

INCL_SETTINGS = {"dp_agg.epsilon": "1e4", "dp_agg.max_rows_contributed": "3"}
INCL_QUERY = "SELECT u, dp_count(*) FROM %s TABLESAMPLE %s GROUP BY u"
AMP_SETTINGS = {"dp_agg.delta": "0"}
AMP_QUERY = ("SELECT g, dp_sum(z, 0, 1, %r::float8) FROM %s "
             "TABLESAMPLE dp_agg.secure_bernoulli (%g) GROUP BY g")


def rows_of(u):
    return 1 + u % 3


def incl_table():
    t = db.fixed_table("unit_sample_incl",
                       "SELECT u, r FROM generate_series(0, %d) AS u, generate_series(1, 3) AS r "
                       "WHERE r <= 1 + u %% 3" % (U - 1))
    db.run("SELECT dp_agg.set_privacy_unit(%s, 'u');" % db.literal(t))
    return t


_parts = []


def incl_parts_table():
    """The rows of the inclusion table in two partitions: the scans of a
    partitioned table keep their rows by the condition unit_sampled alone,
    where a plain table is read through dp_agg_internal.unit_scan
    (src/units/unit_sample.c): both readings are tested."""
    if not _parts:
        t = incl_table()
        db.run("DROP TABLE IF EXISTS stat.unit_sample_parts;\n"
               "CREATE TABLE stat.unit_sample_parts (u int, r int) PARTITION BY RANGE (u);\n"
               "CREATE TABLE stat.unit_sample_parts_0 PARTITION OF stat.unit_sample_parts FOR VALUES FROM (0) TO (%d);\n"
               "CREATE TABLE stat.unit_sample_parts_1 PARTITION OF stat.unit_sample_parts FOR VALUES FROM (%d) TO (MAXVALUE);\n"
               "INSERT INTO stat.unit_sample_parts SELECT u, r FROM %s;\n"
               "ANALYZE stat.unit_sample_parts;\n"
               "SELECT dp_agg.set_privacy_unit('stat.unit_sample_parts', 'u');\n" % (U // 2, U // 2, t))
        _parts.append("stat.unit_sample_parts")
    return _parts[0]


def zeros_table():
    t = db.fixed_table("unit_sample_zeros",
                       "SELECT g, g * %d + k AS u, 0::int4 AS z FROM generate_series(1, %d) AS g, "
                       "generate_series(0, %d) AS k, generate_series(1, 2) AS r" % (K, G, K - 1))
    db.run("SELECT dp_agg.set_privacy_unit(%s, 'u');" % db.literal(t))
    return t


def binomial_pmf(n, p):
    return [math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
                     + k * math.log(p) + (n - k) * math.log1p(-p)) for k in range(n + 1)]


def binomial_bins(pmf, n_obs):
    """Bins of 0..len(pmf)-1 fixed from the pmf alone: consecutive intervals,
    each of probability at least MIN_EXPECTED / n_obs, tails pooled."""
    pmin = MIN_EXPECTED / float(n_obs)
    edges, lo, acc = [], 0, 0.0
    for k, p in enumerate(pmf):
        acc += p
        if acc >= pmin and math.fsum(pmf[k + 1:]) >= pmin:
            edges.append((lo, k))
            lo, acc = k + 1, 0.0
    edges.append((lo, math.inf))
    edges[0] = (-math.inf, edges[0][1])
    return gof.Bins(edges)


def bin_probs(bins, pmf):
    out = []
    for lo, hi in bins.edges:
        a = 0 if lo == -math.inf else int(lo)
        b = len(pmf) - 1 if hi == math.inf else int(hi)
        out.append(math.fsum(pmf[a:b + 1]))
    return out


_draws = {}


def inclusion_runs(check, kind):
    """X_u of the S executions (cached), checking each release's count."""
    if kind in _draws:
        return _draws[kind]
    method, times = {"secure": ("dp_agg.secure_bernoulli (%g)" % PERCENT, S),
                     "condition": ("dp_agg.secure_bernoulli (%g)" % PERCENT, S),
                     "repeatable": ("BERNOULLI (%g) REPEATABLE (7)" % PERCENT, S_REP)}[kind]
    table = incl_parts_table() if kind == "condition" else incl_table()
    if kind != "repeatable":
        # the reading each kind tests: through unit_scan, or the condition alone
        plan = db.run(db.settings_script(INCL_SETTINGS) + "EXPLAIN (COSTS OFF) "
                      + INCL_QUERY % (table, method) + ";")
        check.that(("unit_scan" in plan) == (kind == "secure") and "unit_sampled" in plan,
                   "%s: the plan does not read the sample as it should:\n%s" % (kind, plan))
        check.stop_if_failed()
    rels = db.releases(INCL_QUERY % (table, method), times, settings=INCL_SETTINGS)
    x = [0] * U
    split = 0
    for i, rel in enumerate(rels):
        samp = rel.call().get("sampling") or {}
        if kind != "repeatable":
            check.that(samp.get("method") == "secure_bernoulli" and samp.get("units") is True
                       and samp.get("rate") == Q and samp.get("amplified") is True,
                       "execution %d: sampling %r, expected secure_bernoulli of units at rate %r"
                       % (i + 1, samp, Q))
        seen = set()
        for r in rel.rows:
            u, c = int(r[0]), int(r[1])
            check.that(0 <= u < U and u not in seen, "execution %d: unit %d released twice or unknown"
                       % (i + 1, u))
            seen.add(u)
            if c != rows_of(u):
                split += 1
            x[u] += 1
    _draws[kind] = (x, split)
    return x, split


def check_inclusion(check, kind):
    x, split = inclusion_runs(check, kind)
    check.that(split == 0, "%d releases of units split by the sample (count below the unit's rows)" % split)
    check.stop_if_failed()
    lo, hi = stats.binomial_acceptance(U * S, Q, ALPHA_SIDE)
    check.within("units kept", sum(x), lo, hi, "%d")
    ulo, uhi = stats.binomial_acceptance(S, Q, 1e-7 / U)
    out = [u for u in range(U) if not ulo <= x[u] <= uhi]
    check.that(not out, "units kept in a number of executions outside [%d, %d]: %s"
               % (ulo, uhi, ", ".join("%d (%d)" % (u, x[u]) for u in out[:10])))
    pmf = binomial_pmf(S, Q)
    bins = binomial_bins(pmf, U)
    p0 = bin_probs(bins, pmf)
    res = gof.pearson(bins, p0, histogram(x))
    check.that(not res.rejected, "rejected: %s; worst bins %s" % (res.summary(), res.worst_bins(bins)))
    check.note("q=%.17g: X_u against Binomial(%d, q): %s, per unit in [%d, %d]"
               % (Q, S, res.summary(), ulo, uhi))


@stat_test("unit_sampling_inclusion")
def inclusion(check):
    check_inclusion(check, "secure")


@stat_test("unit_sampling_inclusion_condition")
def inclusion_condition(check):
    check_inclusion(check, "condition")


@stat_test("unit_sampling_inclusion_wrong_rate")
def inclusion_wrong_rate(check):
    x, _ = inclusion_runs(check, "secure")
    wrong = binomial_pmf(S, WRONG_RATE * Q)
    bins = binomial_bins(wrong, U)
    p0 = bin_probs(bins, wrong)
    p1 = bin_probs(bins, binomial_pmf(S, Q))
    bound = gof.miss_bound(U, p0, p1)
    check.that(bound <= 1e-6, "design: miss probability bound %.3g > 1e-6" % bound)
    check.stop_if_failed()
    res = gof.pearson(bins, p0, histogram(x))
    check.that(res.rejected, "X_u against Binomial(%d, %.2f q) NOT rejected: %s"
               % (S, WRONG_RATE, res.summary()))
    check.note("against rate %.2f q rejected as it must: %s lambda=%.0f miss<=%.1g"
               % (WRONG_RATE, res.summary(), gof.noncentrality(U, p0, p1), bound))


@stat_test("unit_sampling_repeatable_rejected")
def repeatable_rejected(check):
    x, split = inclusion_runs(check, "repeatable")
    check.that(split > 0, "BERNOULLI REPEATABLE split no unit (it samples rows)")
    pmf = binomial_pmf(S_REP, Q)
    bins = binomial_bins(pmf, U)
    p0 = bin_probs(bins, pmf)
    # the law of X_u under a fixed sample of rows: S_REP or 0
    keep = math.fsum(1 - (1 - Q) ** rows_of(u) for u in range(U)) / U
    # gof.miss_bound's argument on the union A = {the bin of 0}: not
    # rejecting needs |O_A - U p0_A| <= sqrt(c U p0_A), O_A ~ Bin(U, 1 - keep)
    a = bins.index(0)
    c = stats.chi2_isf(gof.REJECT_P, len(bins) - 1)
    r = math.sqrt(c * U * p0[a])
    q1 = 1 - keep
    if q1 * U > U * p0[a] + r:
        bound = stats.binom_tail_bound(U, q1, U * p0[a] + r, upper=False)
    elif q1 * U < U * p0[a] - r:
        bound = stats.binom_tail_bound(U, q1, U * p0[a] - r, upper=True)
    else:
        bound = 1.0
    check.that(bound <= 1e-6, "design: miss probability bound %.3g > 1e-6" % bound)
    check.stop_if_failed()
    res = gof.pearson(bins, p0, histogram(x))
    check.that(res.rejected, "a fixed sample of rows NOT rejected: %s" % res.summary())
    check.note("REPEATABLE: %d split releases; rejected as it must: %s" % (split, res.summary()))


def amplified_releases(check):
    if "amp" in _draws:
        return _draws["amp"]
    rels = db.releases(AMP_QUERY % (EPSILON, zeros_table(), PERCENT_AMP), S_AMP,
                       settings=AMP_SETTINGS)
    noise = []
    for i, rel in enumerate(rels):
        call = rel.call()
        spec = rel.noise()
        samp = call.get("sampling") or {}
        check.that(rel.epsilon == EPSILON and spec["mechanism"] == "laplace"
                   and spec["sensitivity"] == 1.0 and spec["grid"] == 1.0,
                   "execution %d: %r %r" % (i + 1, rel.epsilon, spec))
        check.that(samp.get("method") == "secure_bernoulli" and samp.get("units") is True
                   and samp.get("rate") == Q_AMP and samp.get("amplified") is True,
                   "execution %d: sampling %r" % (i + 1, samp))
        check.that(abs(samp.get("base_epsilon", 0) / EPSILON0 - 1) < 1e-12
                   and abs(spec["noise_scale"] / B_AMP - 1) < 1e-12,
                   "execution %d: base_epsilon %r noise_scale %r, expected %r and %r"
                   % (i + 1, samp.get("base_epsilon"), spec["noise_scale"], EPSILON0, B_AMP))
        for r in rel.rows:
            noise.append(int(r[1]))
    check.stop_if_failed()
    _draws["amp"] = noise
    return noise


@stat_test("unit_sampling_laplace_pmf")
def laplace_pmf(check):
    noise = amplified_releases(check)
    lo, hi = stats.binomial_acceptance(S_AMP * G, PI, ALPHA_SIDE)
    check.within("releases", len(noise), lo, hi, "%d")
    res, bins, _ = fit(noise, B_AMP)
    check.that(not res.rejected, "rejected: %s; worst bins %s" % (res.summary(), res.worst_bins(bins)))
    check.note("q=%.6f epsilon0=%.6f scale %.6f: %s" % (Q_AMP, EPSILON0, B_AMP, res.summary()))


@stat_test("unit_sampling_laplace_mean_var")
def laplace_mean_var(check):
    noise = amplified_releases(check)
    law, _, _ = laws.ReleaseNoise("laplace", B_AMP, 1.0).truncated(nc.ALPHA_TRUNC / len(noise))
    nc.assert_mean_and_variance(check, [float(v) for v in noise], law)


@stat_test("unit_sampling_vs_unamplified_scale")
def vs_unamplified(check):
    noise = amplified_releases(check)
    negative_control(check, noise, B_PLAIN, B_AMP, "releases over sampled units against scale 1/epsilon:")
