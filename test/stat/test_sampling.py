"""Privacy amplification by subsampling: the noise of releases read with
TABLESAMPLE BERNOULLI.

When the one table of a Laplace release (delta = 0) of epsilon is read with
TABLESAMPLE BERNOULLI (p) and no REPEATABLE, each row is kept independently
with probability q = rint(2^32 p / 100) / 2^32, and the noise is calibrated
to the base epsilon  epsilon0 = ln(1 + (e^epsilon - 1) / q)  (sampling.c,
release.c): discrete Laplace of scale sensitivity / epsilon0.  With
REPEATABLE or SYSTEM there is no amplification: scale sensitivity / epsilon.
Here p = 10, epsilon = 1: q = 429496730 / 2^32 = 0.1000000000931...,
epsilon0 = 2.9005, so the amplified scale is 1/epsilon0 = 0.3448 (in grid
units; P(0) = 0.896) against 1 unamplified (P(0) = 0.462).

Design: the noise is isolated from the randomness of the sample.  Table
stat.sampling_zeros has G = 5000 groups of K = 40 rows whose column z is 0,
and the statement

    SELECT g, dp_sum(z, 0, 1, 1::float8) FROM stat.sampling_zeros
        TABLESAMPLE BERNOULLI (10) GROUP BY g

releases, for every group that has a row in the sample (probability
pi = 1 - (1 - q)^K = 0.985), the exact sum 0 plus one independent discrete
Laplace noise: an integer sum with bounds [0, 1] has sensitivity 1 and grid 1,
so each released value IS the noise, whatever rows were sampled.  The
statement is run S = 40 times (db.releases: one psql session, S charges of
epsilon 1), about 197000 releases; which groups appear depends on the
sample only, never on the noise, so conditionally on it the released
values are i.i.d. noise.

Chi-square tests are the procedure of gof.py (bins from the null pmf and the
number of releases n alone, every expected count >= 500, Pearson's X^2,
reject at p < 1e-6), with at most MAX_BINS = 1000 bins instead of the
default 200, i.e. p_min = max(1/1000, 500/n): with the default,
p_min = 0.005 exceeds P(X >= 2) = 0.0029 of the amplified law and it would
get only the three bins {0} and the two tails; here it gets five
((-inf,-2], -1, 0, 1, [2,inf)), so the shape as well as the scale is seen.

Tests and the false-failure probability of each assertion:

  sampling_bernoulli_laplace_pmf
      * deterministic (0): every ledger entry charges epsilon 1 and delta 0
        and records a Laplace dp_sum release of sensitivity 1 and grid 1,
        sampling method "bernoulli", rate == q exactly, amplified true,
        base_epsilon = epsilon0 (computed here with log1p/expm1) and
        noise_scale = 1/epsilon0, both to 1e-12 relative; every release is
        an integer.
      * the number of releases, Binomial(S G, pi) if BERNOULLI keeps rows at
        rate q independently (PostgreSQL decides by a hash of the row's
        position and a per-scan random seed, modelled as independent coins):
        rigorous Chernoff acceptance interval (stats.binomial_acceptance),
        4.9e-7 per side: false failure 9.8e-7.  It shows the sample really
        is taken, at the rate of the ledger.
      * the sets of groups of the S statements are not all the same (fresh
        samples without REPEATABLE): false failure at most the probability
        that two independent samples coincide, (pi^2 + (1-pi)^2)^G ~ 1e-64.
      * chi-square of the released values against the discrete Laplace pmf
        of scale 1/epsilon0 must not reject: 1e-6 (up to the chi-square
        approximation, see gof.py).  The noncentrality of a 1.3 times
        larger scale is reported.
  sampling_bernoulli_laplace_mean_var
      * mean (0) and variance of the same releases against the exact law of
        scale 1/epsilon0 (noise_checks.assert_mean_and_variance: Chernoff
        bounds from the exact truncated law): at most 1e-6 each.
  sampling_bernoulli_vs_unamplified_scale  (negative control)
      * the same releases, tested by the same procedure against the pmf of
        the UNamplified scale 1/epsilon = 1 (bins from that pmf), must be
        rejected.  The rigorous bound of the probability of not rejecting
        (gof.miss_bound) is computed for the actual n before the test and
        must be below 1e-6 (deterministic given n, which does not depend on
        the noise); false failure: at most that bound (astronomically
        small; reported with the noncentrality lambda).
  sampling_repeatable_laplace_pmf  (second negative control)
      * deterministic (0): the same statement with REPEATABLE (42), run
        S_REP = 10 times: the ledger says method bernoulli, amplified false
        (with a reason), rate 1, base_epsilon 1 and the unamplified
        calibration noise_scale = sensitivity/epsilon = 1; every execution
        returns the same set of groups (the sample is repeatable).
      * chi-square of its releases against the pmf of scale 1 must not
        reject: 1e-6 (as above).
  sampling_repeatable_vs_amplified_scale
      * the REPEATABLE releases tested against the amplified pmf (scale
        1/epsilon0) must be rejected: the two calibrations are told apart in
        both directions.  Miss bound as above, below 1e-6 (astronomically
        small).
  sampling_system_not_amplified
      * deterministic (0): with TABLESAMPLE SYSTEM (10) the ledger says
        method system, amplified false, noise_scale 1.

Eight statistical assertions, the sum of their false-failure probabilities
below 6e-6.
"""

import math
import struct

import db
import gof
import laws
import noise_checks as nc
import stats
from framework import stat_test

G = 5000                # groups
K = 40                  # rows per group, all with z = 0
S_AMP = 40              # executions of the amplified statement
S_REP = 10              # executions of the REPEATABLE statement
PERCENT = 10.0
EPSILON = 1.0
MAX_BINS = 1000
WRONG = 1.3             # reported resolution: noncentrality at 1.3 times the scale
ALPHA_SIDE = 4.9e-7

SETTINGS = {"dp_agg.delta": "0"}
QUERY = "SELECT g, dp_sum(z, 0, 1, %r::float8) FROM %s TABLESAMPLE %s GROUP BY g"


def bernoulli_rate(percent):
    """The rate BERNOULLI applies (sampling.c, tsm_bernoulli): the percentage
    as a float4, cutoff rint(2^32 p / 100), rate cutoff / 2^32."""
    p = struct.unpack("f", struct.pack("f", percent))[0]
    return math.ldexp(round(4294967296.0 * p / 100.0), -32)    # round: half to even, as rint


Q = bernoulli_rate(PERCENT)
EPSILON0 = math.log1p(math.expm1(EPSILON) / Q)      # the base epsilon
B_AMP = 1.0 / EPSILON0                              # amplified scale (sensitivity 1)
B_PLAIN = 1.0 / EPSILON                             # unamplified scale
PI = -math.expm1(K * math.log1p(-Q))                # P(a group has a row in the sample)


def zeros():
    return db.fixed_table("sampling_zeros",
                          "SELECT g, 0::int4 AS z FROM generate_series(1, %d) AS g, "
                          "generate_series(1, %d) AS k" % (G, K))


_draws = {}


def draws(kind):
    """The releases of S executions of the statement (cached for the run):
    kind "amplified" (BERNOULLI (10)) or "repeatable" (... REPEATABLE (42))."""
    if kind not in _draws:
        method, times = {"amplified": ("BERNOULLI (%g)" % PERCENT, S_AMP),
                         "repeatable": ("BERNOULLI (%g) REPEATABLE (42)" % PERCENT, S_REP)}[kind]
        _draws[kind] = db.releases(QUERY % (EPSILON, zeros(), method), times, settings=SETTINGS)
    return _draws[kind]


def _close(a, b, rel):
    return abs(a - b) <= rel * max(abs(a), abs(b))


def check_entry(check, rel, what, amplified, scale):
    """Deterministic checks of one statement's ledger entry."""
    ok = check.that(len(rel.detail) == 1 and len(rel.detail[0]["releases"]) == 1,
                    "%s: expected one call with one release in the ledger" % what)
    if not ok:
        return
    call = rel.call()
    spec = rel.noise()
    samp = call.get("sampling") or {}
    check.that(rel.epsilon == EPSILON and rel.delta == 0.0,
               "%s: charged epsilon/delta %r/%r, expected %r/0 (the price asked)"
               % (what, rel.epsilon, rel.delta, EPSILON))
    check.that(call["aggregate"] == "dp_sum" and spec["mechanism"] == "laplace"
               and spec["epsilon"] == EPSILON and spec["delta"] == 0.0,
               "%s: %s %s epsilon %r delta %r, expected dp_sum laplace %r 0"
               % (what, call["aggregate"], spec["mechanism"], spec["epsilon"], spec["delta"], EPSILON))
    check.that(spec["sensitivity"] == 1.0 and spec["grid"] == 1.0,
               "%s: sensitivity %r grid %r, expected 1 and 1" % (what, spec["sensitivity"], spec["grid"]))
    check.that(samp.get("amplified") is amplified,
               "%s: sampling.amplified %r, expected %r (sampling %r)"
               % (what, samp.get("amplified"), amplified, samp))
    check.that(_close(spec["noise_scale"], scale, 1e-12)
               and _close(call["noise_scale"], scale, 1e-12),
               "%s: noise_scale %r, expected %r" % (what, spec["noise_scale"], scale))
    return samp


def values(check, rels, what):
    """The released values (the noise) of all statements, as integers, and
    the list of the sets of groups of each statement."""
    noise, groups = [], []
    for rel in rels:
        gs = set()
        for r in rel.rows:
            gs.add(int(r[0]))
            noise.append(int(r[1]))       # a bigint: int() fails on anything else
        check.that(len(gs) == len(rel.rows) and gs <= set(range(1, G + 1)),
                   "%s: %d rows, %d distinct groups in 1..%d" % (what, len(rel.rows), len(gs), G))
        groups.append(gs)
    return noise, groups


def histogram(noise):
    hist = {}
    for x in noise:
        hist[x] = hist.get(x, 0) + 1
    return hist.items()


def fit(noise, b):
    """Chi-square of the noise against the discrete Laplace pmf of scale b
    (bins from that pmf and len(noise)); (result, bins, bin probabilities)."""
    law = laws.DiscreteLaplace(b)
    bins = gof.make_bins(law, len(noise), max_bins=MAX_BINS)
    p0 = bins.probs(law)
    return gof.pearson(bins, p0, histogram(noise)), bins, p0


def amplified_values(check):
    rels = draws("amplified")
    for i, rel in enumerate(rels):
        samp = check_entry(check, rel, "statement %d" % (i + 1), True, B_AMP)
        if samp is None:
            continue
        check.that(samp.get("method") == "bernoulli" and samp.get("rate") == Q,
                   "statement %d: sampling method %r rate %r, expected bernoulli %r"
                   % (i + 1, samp.get("method"), samp.get("rate"), Q))
        check.that(_close(samp.get("base_epsilon", 0.0), EPSILON0, 1e-12),
                   "statement %d: base_epsilon %r, expected ln(1 + (e^eps - 1)/q) = %r"
                   % (i + 1, samp.get("base_epsilon"), EPSILON0))
        check.that(samp.get("calibration") == "amplified",
                   "statement %d: calibration %r" % (i + 1, samp.get("calibration")))
    check.stop_if_failed()
    noise, groups = values(check, rels, "amplified")
    check.stop_if_failed()
    return noise, groups


def negative_control(check, noise, b_null, b_true, what):
    """The procedure against scale b_null on noise of scale b_true must reject."""
    n = len(noise)
    law0, law1 = laws.DiscreteLaplace(b_null), laws.DiscreteLaplace(b_true)
    bins = gof.make_bins(law0, n, max_bins=MAX_BINS)
    p0, p1 = bins.probs(law0), bins.probs(law1)
    bound = gof.miss_bound(n, p0, p1)
    lam = gof.noncentrality(n, p0, p1)
    check.that(bound <= 1e-6, "design: miss probability bound %.3g > 1e-6 at n=%d" % (bound, n))
    check.stop_if_failed()
    res = gof.pearson(bins, p0, histogram(noise))
    check.that(res.rejected, "%s NOT rejected: %s (lambda=%.0f); worst bins %s"
               % (what, res.summary(), lam, res.worst_bins(bins)))
    if res.rejected:
        check.note("%s rejected as it must: %s lambda=%.0f miss%s"
                   % (what, res.summary(), lam, ("<=%.1g" % bound) if bound > 0 else "<1e-300"))


@stat_test("sampling_bernoulli_laplace_pmf")
def bernoulli_pmf(check):
    noise, groups = amplified_values(check)
    n = len(noise)
    lo, hi = stats.binomial_acceptance(S_AMP * G, PI, ALPHA_SIDE)
    check.within("releases", n, lo, hi, "%d")
    same = (PI * PI + (1 - PI) ** 2) ** G
    check.that(any(gs != groups[0] for gs in groups[1:]),
               "all %d statements sampled the same %d groups (probability %.2g if fresh)"
               % (S_AMP, len(groups[0]), same))
    res, bins, p0 = fit(noise, B_AMP)
    lam = gof.noncentrality(n, p0, bins.probs(laws.DiscreteLaplace(WRONG * B_AMP)))
    check.that(not res.rejected, "rejected: %s; worst bins %s" % (res.summary(), res.worst_bins(bins)))
    check.note("q=%.17g epsilon0=%.6f scale %.6f: %s bins %s (lambda at %.1fx: %.0f)"
               % (Q, EPSILON0, B_AMP, res.summary(), bins.describe(), WRONG, lam))


@stat_test("sampling_bernoulli_laplace_mean_var")
def bernoulli_mean_var(check):
    noise, _ = amplified_values(check)
    law, _, _ = laws.ReleaseNoise("laplace", B_AMP, 1.0).truncated(nc.ALPHA_TRUNC / len(noise))
    nc.assert_mean_and_variance(check, [float(x) for x in noise], law)


@stat_test("sampling_bernoulli_vs_unamplified_scale")
def bernoulli_vs_unamplified(check):
    noise, _ = amplified_values(check)
    negative_control(check, noise, B_PLAIN, B_AMP, "amplified releases against scale 1/epsilon:")


def repeatable_values(check):
    rels = draws("repeatable")
    for i, rel in enumerate(rels):
        what = "REPEATABLE statement %d" % (i + 1)
        samp = check_entry(check, rel, what, False, B_PLAIN)
        if samp is None:
            continue
        check.that(samp.get("method") == "bernoulli" and samp.get("rate") == 1.0
                   and samp.get("base_epsilon") == EPSILON and samp.get("why_not"),
                   "%s: sampling %r, expected bernoulli, rate 1, base_epsilon %r and a reason"
                   % (what, samp, EPSILON))
    check.stop_if_failed()
    noise, groups = values(check, rels, "repeatable")
    check.that(all(gs == groups[0] for gs in groups),
               "REPEATABLE (42) returned different sets of groups: %s"
               % sorted({len(gs) for gs in groups}))
    check.that(0 < len(groups[0]) < G, "REPEATABLE (42) sampled %d of %d groups"
               % (len(groups[0]), G))
    check.stop_if_failed()
    return noise, groups


@stat_test("sampling_repeatable_laplace_pmf")
def repeatable_pmf(check):
    noise, groups = repeatable_values(check)
    res, bins, _ = fit(noise, B_PLAIN)
    check.that(not res.rejected, "rejected: %s; worst bins %s" % (res.summary(), res.worst_bins(bins)))
    check.note("%d groups x %d: scale %g: %s" % (len(groups[0]), S_REP, B_PLAIN, res.summary()))


@stat_test("sampling_repeatable_vs_amplified_scale")
def repeatable_vs_amplified(check):
    noise, _ = repeatable_values(check)
    negative_control(check, noise, B_AMP, B_PLAIN, "REPEATABLE releases against scale 1/epsilon0:")


@stat_test("sampling_system_not_amplified")
def system_not_amplified(check):
    rel = db.release(QUERY % (EPSILON, zeros(), "SYSTEM (%g)" % PERCENT), settings=SETTINGS)
    samp = check_entry(check, rel, "SYSTEM", False, B_PLAIN)
    if samp is not None:
        check.that(samp.get("method") == "system" and samp.get("rate") == 1.0
                   and samp.get("base_epsilon") == EPSILON,
                   "SYSTEM: sampling %r, expected system, rate 1, base_epsilon %r" % (samp, EPSILON))
        check.note("sampling %s" % ", ".join("%s=%s" % kv for kv in sorted(samp.items())
                                             if kv[0] != "why_not"))
