"""Privacy units (doc/units-and-groups.md, "Privacy units"): the noise is
calibrated to the bounded contribution of a unit, and neighbouring databases
that differ by one unit of many rows are told apart no better than epsilon
allows.

Data.  stat.units_many: U = 200 units of M = 50 rows each (column z = 0,
unit u).  stat.units_audit and stat.units_audit_minus: the same 200 units
of 50 rows, the first with one more unit of A = 30 rows: neighbouring
databases (they differ by all the rows of one unit).

Without GROUP BY there is one group, so the sensitivity is that of one
unit's bounded contribution (k plays no role); the tests units_group_* run
GROUP BY with k = max_groups_contributed > 1, where the sensitivity is k
times that bound and the group keys pass the private selection, which
counts units.  Every statement is run S times in one psql session
(db.releases: S releases, each with its own charge).

units_count_variance
    SELECT dp_count(*) FROM stat.units_many, dp_agg.max_rows_contributed =
    R = 4, epsilon 1, delta 0: the exact bounded value is U R = 800; the
    noise is discrete Laplace of scale R / epsilon = 4 (sensitivity R: one
    unit's rows, counted up to R).  S = 3000.
      * deterministic (0): every ledger entry records the same release:
        dp_count, Laplace, sensitivity 4, noise scale 4, and privacy_unit {max_groups_contributed
        1, max_rows_contributed 4}; every release is an integer.
      * mean and variance of release - 800 against the exact discrete
        Laplace of scale 4 (noise_checks.assert_mean_and_variance: Chernoff
        bounds from the exact truncated law): at most 1e-6 each.
      * negative control: the variance statistic must lie outside the
        acceptance interval of the row-level calibration (scale 1, what an
        implementation unaware of units would use).  Before looking at the
        data the test checks that the two acceptance intervals (each at
        4.9e-7 per side) are disjoint, so that the statistic can fall in
        the wrong one only if it falls outside the right one: false failure
        at most 9.8e-7.
units_sum_variance
    SELECT dp_sum(z, 0, 3, ...) with z = 1 on every row of
    stat.units_ones (U = 200 units of M = 50 rows): each unit's total 50
    is clamped to the upper bound 3, so the exact value is 600 and the
    sensitivity 3 (not 50 times 3), epsilon 0.5, Gaussian delta 1e-6: sigma
    = discrete_gaussian_sigma(0.5, 1e-6, 3 / grid) grid.  S = 2000.
      * deterministic (0): calibration as in the ledger (noise_checks.
        check_calibration with sensitivity 3), privacy_unit recorded.
      * mean and variance of release - 600 against the exact law: at most
        1e-6 each.
units_audit
    An empirical audit (the method of Jagielski et al. 2020 and Nasr et al.
    2021: Clopper-Pearson intervals on the rates of an event).  Statistic:
    the release of SELECT dp_count(*) (R = 1, epsilon 1, Laplace) over D =
    stat.units_audit (201 units) and D' = stat.units_audit_minus (200
    units), T = 2500 releases each.  Event E: release >= 201.  Its exact
    probabilities are P(X >= 0) and P(X >= 1) for the discrete Laplace of
    scale 1, whose ratio is exactly e^1: the event is the worst case, so
    the audit is as powerful as a single threshold can be.  The epsilon
    lower bound is ln(lower CP bound of P_D(E) / upper CP bound of
    P_D'(E)) (each one-sided at 5e-7).
      * the lower bound is at most the declared epsilon 1: false failure at
        most 1e-6 (the union of the two one-sided Clopper-Pearson errors;
        exact binomial tails, no approximation).
      * reported (not asserted): the epsilon an implementation that counted
        rows would leak (event: release >= its count over D' plus 30,
        ln P(X >= 0) / P(X >= 30) = 30.0), and the lower bound's value.
    Run time: about 5000 statements (a few tens of seconds on 2 cores).
units_audit_partition
    The same audit through a partition named directly, the privacy unit
    set on its partitioned parent: stat.units_audit_pt_p0 (U = 200 units
    with one row each, and unit 0 with A = 30 rows; each unit also has 5
    rows in the other partition) and stat.units_audit_pt_minus_p0 (without
    unit 0).  SELECT dp_count(*) over the partition, epsilon 1, T = 2500
    releases each, event release >= 201.  One row per other unit makes
    counting rows (the unit of the parent ignored) detectable: the event
    then has probabilities about 1 and 0.269, whose ratio 3.72 the
    Clopper-Pearson bound exceeds e except with probability below 1e-8.
      * deterministic (0): the ledger's privacy_unit.
      * the lower bound is at most the declared epsilon 1: false failure at
        most 1e-6.

units_group_count_variance
    SELECT g, dp_count(*) ... GROUP BY g over stat.units_groups: U = 200
    units, each with 10 rows in each of the groups g = 1, 2, 3, privacy
    unit k = 3 (every unit keeps all its groups: no random choice), R = 4,
    epsilon 1, delta 0; the selection at (1, 1e-6) releases a group of 200
    units with certainty (its threshold, checked first, is below 200).
    The exact value of each group is U R = 800 and the noise discrete
    Laplace of scale k R / epsilon = 12 (L1 sensitivity: one unit changes 3
    groups by 4 each).  S = 1000 statements, 3000 releases (independent:
    fresh noise per group).
      * deterministic (0): three groups released each time; the ledger
        records dp_count with sensitivity 12, scale 12, privacy_unit {3, 4},
        and the selection with max_groups_contributed 3.
      * mean and variance against the exact law: at most 1e-6 each.
      * negative control: the scale R = 4 of an implementation that ignored
        k is rejected (disjoint acceptance intervals, checked first): false
        failure at most 9.8e-7.
units_group_audit
    The audit of units_audit with GROUP BY: D' = stat.units_pairs (U = 200
    units, each with 25 rows in group 1 and 25 in group 2, k = 2, R = 1),
    D = stat.units_pairs_plus (the same, and unit 0 with 15 rows in each
    group: 30 rows).  Statistic: the two releases of SELECT g, dp_count(*)
    ... GROUP BY g at epsilon 1 (Laplace of scale k R / epsilon = 2), the
    selection at (1, 1e-6) releasing both groups with certainty in both
    databases (so it tells them apart with probability 0, and the declared
    epsilon of the audit is the count's, 1).  Event E: both releases >= 201,
    of probabilities P(X >= 0)^2 on D and P(X >= 1)^2 on D', ratio exactly
    e^(2 / 2) = e: the worst case.  T = 2500 statements on each.
      * the Clopper-Pearson lower bound of epsilon is at most 1: false
        failure at most 1e-6 (as units_audit).
units_selection_curve
    The selection counts units, not rows: stat.units_sel holds, for each
    n = 1..20, 1000 pairs of groups; each pair has n units of its own, each
    unit with 3 rows in each group of its pair (k = 2: the units keep both
    groups).  One statement SELECT g / KEY, count(c) FROM (SELECT g,
    dp_count(*) c ... GROUP BY g) s GROUP BY 1 at selection (1, 0.02): the
    number X_n of the 2000 groups of n units released is Binomial(2000,
    pi(n)), pi the curve at k = 2 (decisions are independent per group),
    checked as in test_selection.py against the reference curve:
      * deterministic (0): pi(n) within 1e-9 of the reference, never above;
        the ledger's selection has k = 2.
      * X_n in its acceptance interval, 0.5e-6 per tail: 1e-6 per n (20
        assertions).
      * negative controls, their power bounded below 1e-6 before drawing:
        the curve of rows (pi(3n)) and the curve without the split by k.
units_pick_uniform
    The choice of a unit's group with k = 1 (the fused path: the group of
    smallest SipHash-2-4 priority under a key drawn per execution,
    src/units/unit_pick.c).  stat.units_pick: N = 4000 units, unit u with rows in
    its own groups 4u + j, j = 0..3, with 1, 2, 5 and 10 rows (so that a
    choice weighted by rows would show).  SELECT g, dp_count(*) ... GROUP
    BY g with public keys: a group appears iff its unit chose it (the keys,
    not the noisy counts, carry the choice), twice (executions 1 and 2).
      * deterministic (0): each execution releases N groups, one per unit.
      * X_j, the number of units choosing j in execution 1, is
        Binomial(N, 1/4) for a uniform choice: X_j in its acceptance
        interval (binomial_acceptance, Chernoff, 5e-7 per tail): 1e-6 per j
        (4 assertions).  Negative control, its power checked before
        drawing: a choice weighted by rows (probability 10/18 for j = 3)
        falls in the interval of j = 3 with probability below 1e-6.
      * independence across executions: the number of units choosing the
        same j in both is Binomial(N, 1/4) (independent uniform choices):
        in its acceptance interval, 1e-6.  A key reused across executions
        would give N, outside it (checked).
      * independence across units: of the N/2 disjoint pairs (2i - 1, 2i),
        the number whose two units choose the same j in execution 1 is
        Binomial(N/2, 1/4): in its acceptance interval, 1e-6.
units_keep_uniform
    The choice of a unit's groups with k > 1 (level 2 of the rewrite, the
    window function dp_agg_internal.unit_keep: Floyd's algorithm over the unit's
    groups, src/units/unit_keep.c).  stat.units_keep: N = 3000 units, unit u with
    rows in its own groups 4u + j, j = 0..3, with 1, 2, 5 and 10 rows,
    max_groups_contributed k = 2: each unit keeps one of the 6 pairs of its
    groups, each with probability 1/6.  SELECT g, dp_count(*) ... GROUP BY g
    with public keys: a group appears iff its unit kept it, twice
    (executions 1 and 2).  Hash aggregation is off, so level 1 is sorted by
    unit and group and the window sees each unit's groups in the order j:
    a choice that depended on the position of a group in its unit's
    partition would show in the pairs (the uniformity holds whatever the
    plan; this plan makes a bias visible).
      * deterministic (0): each execution releases exactly 2 N groups, two
        per unit.
      * Y_S, the number of units keeping the pair S in execution 1, is
        Binomial(N, 1/6): in its acceptance interval (Chernoff, 5e-7 per
        tail): 1e-6 per pair (6 assertions).  Negative control, its power
        checked before drawing: a pair kept with probability 1/3 (as Floyd's
        algorithm drawing among j instead of j + 1 rows keeps its first two
        positions) falls in the interval with probability below 1e-6.
      * independence across executions: the number of units keeping the
        same pair in both is Binomial(N, 1/6): in its acceptance interval,
        1e-6.

Forty-seven statistical assertions (units_selection_curve: 20 and 2
controls; units_pick_uniform: 6; units_keep_uniform: 7), the sum of their
false-failure probabilities below 4.7e-5.
"""

import math

import db
import laws
import noise_checks as nc
import stats
import test_selection as ts
from framework import stat_test

U = 200
M = 50
A = 30
R = 4
S_COUNT = 3000
S_SUM = 2000
T_AUDIT = 2500
CP_SIDE = 5e-7


def unit_table(name, units, rows, value, extra_rows=0):
    """units units of rows rows (z = value), plus one unit of extra_rows;
    its privacy unit is u."""
    sql = ("SELECT u, %d AS z FROM generate_series(1, %d) u, generate_series(1, %d) r"
           % (value, units, rows))
    if extra_rows:
        sql += " UNION ALL SELECT 0, %d FROM generate_series(1, %d) r" % (value, extra_rows)
    t = db.fixed_table(name, sql)
    db.run("SELECT dp_agg.set_privacy_unit(%s, 'u');" % db.literal(t))
    return t


def check_unit_record(check, rels, rows):
    for rel in rels:
        pu = rel.call().get("privacy_unit")
        if not check.that(pu == {"max_groups_contributed": 1, "max_rows_contributed": rows},
                          "ledger privacy_unit %r, expected groups 1 and rows %d" % (pu, rows)):
            return


def noise_of(check, rels, exact, kind):
    spec = rels[0].noise()
    vals = [nc.parse_exact(rel.rows[0][0], kind) for rel in rels]
    return spec, nc.on_grid_noise(check, vals, exact, spec["grid"], "release")


@stat_test("units_count_variance")
def units_count_variance(check):
    t = unit_table("units_many", U, M, 0)
    rels = db.releases("SELECT dp_count(*) FROM %s" % t, S_COUNT,
                       settings={"dp_agg.max_rows_contributed": str(R),
                                 "dp_agg.epsilon": "1", "dp_agg.delta": "0"})
    nc.check_calibration(check, rels[0].noise(), "dp_count", 1.0, 0.0, float(R))
    check.that(all(rel.noise() == rels[0].noise() for rel in rels),
               "the releases were calibrated differently")
    check_unit_record(check, rels, R)
    check.stop_if_failed()
    spec, noise = noise_of(check, rels, U * R, "int")
    check.stop_if_failed()

    right, _, _ = laws.ReleaseNoise("laplace", float(R), 1.0, integer=True).truncated(
        nc.ALPHA_TRUNC / S_COUNT)
    wrong, _, _ = laws.ReleaseNoise("laplace", 1.0, 1.0, integer=True).truncated(
        nc.ALPHA_TRUNC / S_COUNT)
    nc.assert_mean_and_variance(check, noise, right)

    def var_interval(law):
        squares = law.map(lambda h: h * h)
        return (stats.chernoff_lower(squares, S_COUNT, nc.ALPHA_SIDE),
                stats.chernoff_upper(squares, S_COUNT, nc.ALPHA_SIDE))
    r_lo, r_hi = var_interval(right)
    w_lo, w_hi = var_interval(wrong)
    check.that(w_hi < r_lo or r_hi < w_lo,
               "the acceptance intervals of scales %d and 1 overlap: [%g, %g] [%g, %g]"
               % (R, r_lo, r_hi, w_lo, w_hi))
    check.stop_if_failed()
    s = math.fsum(x * x for x in noise) / S_COUNT
    check.that(not (w_lo <= s <= w_hi),
               "the variance %g is accepted by the row-level scale 1 ([%g, %g])" % (s, w_lo, w_hi))
    check.note("variance %.3g: scale %d accepts [%.3g, %.3g], scale 1 [%.3g, %.3g]"
               % (s, R, r_lo, r_hi, w_lo, w_hi))


@stat_test("units_sum_variance")
def units_sum_variance(check):
    t = unit_table("units_ones", U, M, 1)
    rels = db.releases("SELECT dp_sum(z, 0, 3, 0.5::float8, 1e-6::float8) FROM %s" % t, S_SUM)
    nc.check_calibration(check, rels[0].noise(), "dp_sum", 0.5, 1e-6, 3.0)
    check.that(all(rel.noise() == rels[0].noise() for rel in rels),
               "the releases were calibrated differently")
    check_unit_record(check, rels, 1)
    check.stop_if_failed()
    spec, noise = noise_of(check, rels, U * 3, "int")
    check.stop_if_failed()
    rn = laws.ReleaseNoise(spec["mechanism"], spec["noise_scale"], spec["grid"], integer=True)
    law, _, _ = rn.truncated(nc.ALPHA_TRUNC / S_SUM)
    nc.assert_mean_and_variance(check, noise, law)


def log_binom_sf(n, p, k):
    """log P[Bin(n, p) >= k], exactly (log-sum-exp of the pmf)."""
    if k <= 0:
        return 0.0
    if k > n:
        return -math.inf
    lp, lq = math.log(p), math.log1p(-p)
    terms = [math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) + j * lp + (n - j) * lq
             for j in range(k, n + 1)]
    top = max(terms)
    return top + math.log(math.fsum(math.exp(x - top) for x in terms))


def cp_lower(n, k, alpha):
    """One-sided Clopper-Pearson lower bound: the p with P[Bin(n,p) >= k] = alpha."""
    if k == 0:
        return 0.0
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if log_binom_sf(n, mid, k) < math.log(alpha):
            lo = mid
        else:
            hi = mid
    return lo


def cp_upper(n, k, alpha):
    """One-sided Clopper-Pearson upper bound: the p with P[Bin(n,p) <= k] = alpha."""
    return 1.0 - cp_lower(n, n - k, alpha)


@stat_test("units_audit")
def units_audit(check):
    d = unit_table("units_audit", U, M, 0, extra_rows=A)
    d_minus = unit_table("units_audit_minus", U, M, 0)
    settings = {"dp_agg.epsilon": "1", "dp_agg.delta": "0"}
    hits = []
    for t in (d, d_minus):
        rels = db.releases("SELECT dp_count(*) FROM %s" % t, T_AUDIT, settings=settings)
        hits.append(sum(1 for rel in rels if int(rel.rows[0][0]) >= U + 1))
    p_lo = cp_lower(T_AUDIT, hits[0], CP_SIDE)
    q_hi = cp_upper(T_AUDIT, hits[1], CP_SIDE)
    eps_lb = math.log(p_lo / q_hi) if p_lo > 0 else -math.inf
    check.that(eps_lb <= 1.0, "epsilon lower bound %.4f exceeds the declared epsilon 1" % eps_lb)
    row_level = laws.DiscreteLaplace(1.0)
    # counting rows, D and D' differ by A: the event release >= (its count
    # over D') + A has probabilities P(X >= 0) and P(X >= A)
    leak = math.log(row_level.sf(0) / row_level.sf(A))
    check.note("E hit %d/%d on D, %d/%d on D'; epsilon lower bound %.3f (declared 1); "
               "counting rows would leak %.1f" % (hits[0], T_AUDIT, hits[1], T_AUDIT, eps_lb, leak))



def partitioned_unit_table(name, units, extra_rows):
    """stat.<name>, partitioned by p, with privacy unit u set on it: its
    partition stat.<name>_p0 holds one row of each unit 1..units and
    extra_rows rows of unit 0; stat.<name>_p1 holds 5 rows of each of
    them (so a unit spans both partitions).  Returns the partition p0."""
    t, p0, p1 = "stat." + name, "stat.%s_p0" % name, "stat.%s_p1" % name
    rows = "SELECT u, %d FROM generate_series(1, %d) u" % (0, units)
    if extra_rows:
        rows += " UNION ALL SELECT 0, 0 FROM generate_series(1, %d) r" % extra_rows
    db.run("DROP TABLE IF EXISTS %s;\n"
           "CREATE TABLE %s (u int, p int) PARTITION BY LIST (p);\n"
           "CREATE TABLE %s PARTITION OF %s FOR VALUES IN (0);\n"
           "CREATE TABLE %s PARTITION OF %s FOR VALUES IN (1);\n"
           "INSERT INTO %s (u, p) %s;\n"
           "INSERT INTO %s (u, p) SELECT u, 1 FROM generate_series(%d, %d) u, generate_series(1, 5) r;\n"
           "ANALYZE %s;\n"
           "SELECT dp_agg.set_privacy_unit(%s, 'u');\n"
           % (t, t, p0, t, p1, t, t, rows, t, 0 if extra_rows else 1, units, t, db.literal(t)))
    return p0


@stat_test("units_audit_partition")
def units_audit_partition(check):
    """The audit of units_audit through a partition named directly, the
    unit set on its parent: D's partition holds one row of each of U = 200
    units and unit 0's A = 30 rows, D''s the same without unit 0.  Each
    other unit has one row in the partition, so that counting rows instead
    of units shows: the event release >= U + 1 then has probabilities
    P(X >= 1 - A), about 1, on D and P(X >= 1) = 0.269 on D' (a ratio of
    3.72, ln 1.31), and the Clopper-Pearson lower bound exceeds 1 unless
    the rate on D' is 5.9 standard deviations above its mean (probability
    below 1e-8).  Counting units, the ratio is exactly e.
      * deterministic (0): the ledger records the unit's bound.
      * the lower bound is at most the declared epsilon 1: false failure at
        most 1e-6 (as units_audit)."""
    d = partitioned_unit_table("units_audit_pt", U, A)
    d_minus = partitioned_unit_table("units_audit_pt_minus", U, 0)
    settings = {"dp_agg.epsilon": "1", "dp_agg.delta": "0"}
    hits = []
    for t in (d, d_minus):
        rels = db.releases("SELECT dp_count(*) FROM %s" % t, T_AUDIT, settings=settings)
        check_unit_record(check, rels[:1], 1)
        hits.append(sum(1 for rel in rels if int(rel.rows[0][0]) >= U + 1))
    check.stop_if_failed()
    p_lo = cp_lower(T_AUDIT, hits[0], CP_SIDE)
    q_hi = cp_upper(T_AUDIT, hits[1], CP_SIDE)
    eps_lb = math.log(p_lo / q_hi) if p_lo > 0 else -math.inf
    check.that(eps_lb <= 1.0, "epsilon lower bound %.4f through a partition exceeds the declared "
               "epsilon 1" % eps_lb)
    law = laws.DiscreteLaplace(1.0)
    check.note("E hit %d/%d on D, %d/%d on D'; epsilon lower bound %.3f (declared 1); counting "
               "rows would give about %.2f" % (hits[0], T_AUDIT, hits[1], T_AUDIT, eps_lb,
                                               math.log(law.sf(1 - A) / law.sf(1))))


# ---------- GROUP BY with k > 1 ----------

K_GROUPS = 3
S_GROUPS = 1000
SEL = {"dp_agg.group_keys": "private", "dp_agg.selection_epsilon": "1",
       "dp_agg.selection_delta": "1e-6"}


def certain_threshold(check, k, units):
    """the selection at SEL releases a group of `units` units with certainty"""
    th = int(db.scalar("SELECT dp_agg.selection_threshold(1, 1e-6, %d);" % k))
    check.that(th <= units, "selection threshold %d above %d units" % (th, units))
    check.stop_if_failed()


def grouped_table(name, units, groups, rows, k, extra=None):
    """units units with rows rows (z = 0) in each of the groups 1..groups,
    plus, if extra = (unit, rows per group), one more unit; unit column u,
    max_groups_contributed k."""
    sql = ("SELECT u, g, 0 AS z FROM generate_series(1, %d) u, generate_series(1, %d) g, "
           "generate_series(1, %d) r" % (units, groups, rows))
    if extra:
        sql += (" UNION ALL SELECT %d, g, 0 FROM generate_series(1, %d) g, generate_series(1, %d) r"
                % (extra[0], groups, extra[1]))
    t = db.fixed_table(name, sql)
    db.run("SELECT dp_agg.set_privacy_unit(%s, 'u', %d);" % (db.literal(t), k))
    return t


def call_index(rel, aggregate):
    for i, c in enumerate(rel.detail):
        if c.get("aggregate") == aggregate:
            return i
    raise db.SqlError("no %s call in the ledger entry" % aggregate)


def selection_of(rel):
    sel = [c["selection"] for c in rel.detail if "selection" in c]
    return sel[0] if len(sel) == 1 else None


@stat_test("units_group_count_variance")
def units_group_count_variance(check):
    certain_threshold(check, K_GROUPS, U)
    t = grouped_table("units_groups", U, K_GROUPS, 10, K_GROUPS)
    settings = dict(SEL)
    settings.update({"dp_agg.max_rows_contributed": str(R), "dp_agg.epsilon": "1",
                     "dp_agg.delta": "0"})
    rels = db.releases("SELECT g, dp_count(*) FROM %s GROUP BY g" % t, S_GROUPS, settings=settings)
    sens = float(K_GROUPS * R)
    i = call_index(rels[0], "dp_count")
    nc.check_calibration(check, rels[0].noise(i), "dp_count", 1.0, 0.0, sens)
    check.that(all(len(rel.rows) == K_GROUPS for rel in rels),
               "a statement did not release its %d groups" % K_GROUPS)
    check.that(all(rel.noise(i) == rels[0].noise(i) for rel in rels),
               "the releases were calibrated differently")
    pu = rels[0].call(i).get("privacy_unit")
    check.that(pu == {"max_groups_contributed": K_GROUPS, "max_rows_contributed": R},
               "ledger privacy_unit %r" % pu)
    sel = selection_of(rels[0])
    check.that(sel is not None and sel["max_groups_contributed"] == K_GROUPS,
               "ledger selection %r" % sel)
    check.stop_if_failed()
    vals = [nc.parse_exact(row[1], "int") for rel in rels for row in rel.rows]
    noise = nc.on_grid_noise(check, vals, U * R, rels[0].noise(i)["grid"], "release")
    check.stop_if_failed()
    n = len(noise)
    right, _, _ = laws.ReleaseNoise("laplace", sens, 1.0, integer=True).truncated(
        nc.ALPHA_TRUNC / n)
    wrong, _, _ = laws.ReleaseNoise("laplace", float(R), 1.0, integer=True).truncated(
        nc.ALPHA_TRUNC / n)
    nc.assert_mean_and_variance(check, noise, right)

    def var_interval(law):
        squares = law.map(lambda h: h * h)
        return (stats.chernoff_lower(squares, n, nc.ALPHA_SIDE),
                stats.chernoff_upper(squares, n, nc.ALPHA_SIDE))
    r_lo, r_hi = var_interval(right)
    w_lo, w_hi = var_interval(wrong)
    check.that(w_hi < r_lo or r_hi < w_lo,
               "the acceptance intervals of scales %g and %d overlap" % (sens, R))
    check.stop_if_failed()
    s = math.fsum(x * x for x in noise) / n
    check.that(not (w_lo <= s <= w_hi),
               "the variance %g is accepted by the scale %d that ignores k ([%g, %g])"
               % (s, R, w_lo, w_hi))
    check.note("variance %.3g: scale %g accepts [%.3g, %.3g], scale %d [%.3g, %.3g]"
               % (s, sens, r_lo, r_hi, R, w_lo, w_hi))


@stat_test("units_group_audit")
def units_group_audit(check):
    k = 2
    certain_threshold(check, k, U)
    d_minus = grouped_table("units_pairs", U, k, 25, k)
    d = grouped_table("units_pairs_plus", U, k, 25, k, extra=(0, A // 2))
    settings = dict(SEL)
    settings.update({"dp_agg.epsilon": "1", "dp_agg.delta": "0"})
    hits = []
    for t in (d, d_minus):
        rels = db.releases("SELECT g, dp_count(*) FROM %s GROUP BY g" % t, T_AUDIT,
                           settings=settings)
        check.that(all(len(rel.rows) == k for rel in rels), "a statement did not release both groups")
        hits.append(sum(1 for rel in rels if all(int(row[1]) >= U + 1 for row in rel.rows)))
    check.stop_if_failed()
    p_lo = cp_lower(T_AUDIT, hits[0], CP_SIDE)
    q_hi = cp_upper(T_AUDIT, hits[1], CP_SIDE)
    eps_lb = math.log(p_lo / q_hi) if p_lo > 0 else -math.inf
    check.that(eps_lb <= 1.0, "epsilon lower bound %.4f exceeds the declared epsilon 1" % eps_lb)
    check.note("E hit %d/%d on D, %d/%d on D'; epsilon lower bound %.3f (declared 1)"
               % (hits[0], T_AUDIT, hits[1], T_AUDIT, eps_lb))


SEL_PAIRS = 1000
SEL_ROWS = 3
SEL_EPSILON, SEL_DELTA = 1.0, 0.02


@stat_test("units_selection_curve")
def units_selection_curve(check):
    k = 2
    ext = ts.extension_curve(check, SEL_EPSILON, SEL_DELTA, k)
    ref = [float(p) for p in ts.reference.curve(SEL_EPSILON, SEL_DELTA, SEL_ROWS * ts.N_MAX, k)]
    controls = {
        "rows, not units": {n: ref[SEL_ROWS * n] for n in range(1, ts.N_MAX + 1)},
        "no split by k": ts.as_floats(ts.reference.curve(SEL_EPSILON, SEL_DELTA, ts.N_MAX)),
    }
    g = k * SEL_PAIRS
    for name, wrong in controls.items():
        check.that(ts.pass_bound(g, ext, ts.acceptance(g, wrong)) <= 1e-6,
                   "control %s has no power" % name)
    check.stop_if_failed()
    # group n KEY + 2 j + s (s = 0, 1) of pair j of size n; unit (n KEY + j) 32 + i
    t = db.fixed_table(
        "units_sel",
        "SELECT ((n * %d + j) * 32 + i) AS u, n * %d + 2 * j + s AS g "
        "FROM generate_series(1, %d) n, generate_series(0, %d) j, generate_series(1, n) i, "
        "generate_series(0, 1) s, generate_series(1, %d) r"
        % (ts.KEY, ts.KEY, ts.N_MAX, SEL_PAIRS - 1, SEL_ROWS))
    db.run("SELECT dp_agg.set_privacy_unit(%s, 'u', %d);" % (db.literal(t), k))
    rel = db.release("SELECT g / %d AS n, count(c) FROM (SELECT g, dp_count(*) AS c FROM %s "
                     "GROUP BY g) s GROUP BY 1 ORDER BY 1" % (ts.KEY, t),
                     {"dp_agg.group_keys": "private", "dp_agg.selection_epsilon": SEL_EPSILON,
                      "dp_agg.selection_delta": SEL_DELTA, "dp_agg.epsilon": "1"})
    sel = selection_of(rel)
    check.that(sel is not None and sel["max_groups_contributed"] == k
               and sel["threshold"] == ts.reference.smallest_n(SEL_EPSILON, SEL_DELTA, 1, k),
               "ledger selection %r" % sel)
    check.stop_if_failed()
    released = {n: 0 for n in range(1, ts.N_MAX + 1)}
    for n, c in rel.rows:
        released[int(n)] = int(c)
    ts.curve_test(check, g, released, ext, controls)


PICK_UNITS = 4000
PICK_ROWS = (1, 2, 5, 10)       # rows of each unit in its groups j = 0..3
PICK_SIDE = 5e-7


def pick_choices(check, rel, m):
    """{unit: j} of one execution; checks one group per unit"""
    choice = {}
    for row in rel.rows:
        g = int(row[0])
        choice[g // m] = g % m
    check.that(len(rel.rows) == PICK_UNITS and len(choice) == PICK_UNITS,
               "%d groups released for %d units, expected one per unit of %d"
               % (len(rel.rows), len(choice), PICK_UNITS))
    return choice


@stat_test("units_pick_uniform")
def units_pick_uniform(check):
    m = len(PICK_ROWS)
    n = PICK_UNITS
    p = 1.0 / m
    lo, hi = stats.binomial_acceptance(n, p, PICK_SIDE)
    by_rows = PICK_ROWS[-1] / sum(PICK_ROWS)
    check.that(stats.binom_tail_bound(n, by_rows, hi, upper=False) <= 1e-6,
               "control: a choice weighted by rows is not rejected")
    check.that(hi < n, "control: a key reused across executions is not rejected")
    check.stop_if_failed()
    t = db.fixed_table(
        "units_pick",
        "SELECT u, %d * u + j AS g FROM generate_series(1, %d) u, "
        "(VALUES %s) w(j, n), generate_series(1, n) r"
        % (m, n, ", ".join("(%d, %d)" % (j, r) for j, r in enumerate(PICK_ROWS))))
    db.run("SELECT dp_agg.set_privacy_unit(%s, 'u', 1);" % db.literal(t))
    rels = db.releases("SELECT g, dp_count(*) FROM %s GROUP BY g" % t, 2,
                       settings={"dp_agg.epsilon": "1", "dp_agg.delta": "0"})
    first = pick_choices(check, rels[0], m)
    second = pick_choices(check, rels[1], m)
    check.stop_if_failed()
    for j in range(m):
        x = sum(1 for c in first.values() if c == j)
        check.that(lo <= x <= hi, "%d units chose group %d of %d, outside [%d, %d]"
                   % (x, j, m, lo, hi))
    same = sum(1 for u in first if first[u] == second[u])
    check.that(lo <= same <= hi, "%d units chose the same group twice, outside [%d, %d]"
               % (same, lo, hi))
    plo, phi = stats.binomial_acceptance(n // 2, p, PICK_SIDE)
    pairs = sum(1 for i in range(1, n // 2 + 1) if first[2 * i - 1] == first[2 * i])
    check.that(plo <= pairs <= phi, "%d pairs of units chose the same j, outside [%d, %d]"
               % (pairs, plo, phi))
    check.note("choices %s; same twice %d; same in pairs %d (acceptance [%d, %d], [%d, %d])"
               % ([sum(1 for c in first.values() if c == j) for j in range(m)], same, pairs,
                  lo, hi, plo, phi))


KEEP_UNITS = 3000
KEEP_ROWS = (1, 2, 5, 10)       # rows of each unit in its groups j = 0..3
KEEP_K = 2
KEEP_SIDE = 5e-7


def keep_choices(check, rel, m):
    """{unit: (j1, j2)} of one execution; checks k groups per unit"""
    kept = {}
    for row in rel.rows:
        g = int(row[0])
        kept.setdefault(g // m, []).append(g % m)
    check.that(len(rel.rows) == KEEP_K * KEEP_UNITS and len(kept) == KEEP_UNITS and
               all(len(v) == KEEP_K for v in kept.values()),
               "%d groups released for %d units, expected %d per unit of %d"
               % (len(rel.rows), len(kept), KEEP_K, KEEP_UNITS))
    return {u: tuple(sorted(v)) for u, v in kept.items()}


@stat_test("units_keep_uniform")
def units_keep_uniform(check):
    m = len(KEEP_ROWS)
    n = KEEP_UNITS
    pairs = [(a, b) for a in range(m) for b in range(a + 1, m)]
    p = 1.0 / len(pairs)
    lo, hi = stats.binomial_acceptance(n, p, KEEP_SIDE)
    check.that(stats.binom_tail_bound(n, 1.0 / 3, hi, upper=False) <= 1e-6,
               "control: a pair kept with probability 1/3 is not rejected")
    check.stop_if_failed()
    t = db.fixed_table(
        "units_keep",
        "SELECT u, %d * u + j AS g FROM generate_series(1, %d) u, "
        "(VALUES %s) w(j, n), generate_series(1, n) r"
        % (m, n, ", ".join("(%d, %d)" % (j, r) for j, r in enumerate(KEEP_ROWS))))
    db.run("SELECT dp_agg.set_privacy_unit(%s, 'u', %d);" % (db.literal(t), KEEP_K))
    rels = db.releases("SELECT g, dp_count(*) FROM %s GROUP BY g" % t, 2,
                       settings={"dp_agg.epsilon": "1", "dp_agg.delta": "0",
                                 "enable_hashagg": "off"})
    first = keep_choices(check, rels[0], m)
    second = keep_choices(check, rels[1], m)
    check.stop_if_failed()
    counts = [sum(1 for c in first.values() if c == pair) for pair in pairs]
    for pair, y in zip(pairs, counts):
        check.that(lo <= y <= hi, "%d units kept groups %s of %d, outside [%d, %d]"
                   % (y, pair, m, lo, hi))
    same = sum(1 for u in first if first[u] == second[u])
    check.that(lo <= same <= hi, "%d units kept the same pair twice, outside [%d, %d]"
               % (same, lo, hi))
    check.note("pairs %s; same twice %d (acceptance [%d, %d])" % (counts, same, lo, hi))
