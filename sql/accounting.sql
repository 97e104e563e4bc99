--
-- accounting: budgets charged by the Renyi DP composition of a role's
-- releases (accounting 'rdp'), beside basic composition.
--
-- Reference values: test/reference/rdp.py computes them in Python from the
-- definitions (Renyi DP alpha / (2 sigma^2) per Gaussian release, summed,
-- converted by Balle et al. 2020, Theorem 21, on the same order grid), with
-- sigma = gaussian_sigma(0.5, 1e-6, 1) from test/reference/gaussian.py.
--
-- each statement charged alone, so that its ledger row is its own (charges
-- on leases are folded into rows of several: leases.sql, 016_leases.pl)
SET dp_agg.lease_time = 0;
\set SHOW_CONTEXT never
CREATE TABLE a_t (i int, f float8);
INSERT INTO a_t SELECT k, k % 2 FROM generate_series(1, 100) k;
CREATE ROLE regress_dp_renyi;
GRANT SELECT ON a_t TO regress_dp_renyi;
CREATE FUNCTION release_times(k int, eps float8, delta float8) RETURNS int LANGUAGE plpgsql AS $$
DECLARE n int := 0; x bigint;
BEGIN
    FOR j IN 1 .. k LOOP
        BEGIN
            SELECT dp_count(i, eps, delta) INTO x FROM a_t;
            n := n + 1;
        EXCEPTION WHEN SQLSTATE 'PB001' THEN
            EXIT;
        END;
    END LOOP;
    RETURN n;
END $$;
GRANT EXECUTE ON FUNCTION release_times(int, float8, float8) TO regress_dp_renyi;

-- the order grid (dp_accounting's)
SELECT cardinality(dp_agg.rdp_orders()) AS orders, (dp_agg.rdp_orders())[1] AS first,
       (dp_agg.rdp_orders())[99] AS last_fractional, (dp_agg.rdp_orders())[100:101] AS integers,
       (dp_agg.rdp_orders())[153:156] AS largest;

-- k identical Gaussian releases at (0.5, 1e-6): the composed epsilon at
-- delta 1e-5 matches the independent computation to relative 1e-6 and is
-- below basic composition (k * 0.5) for k >= 10
SELECT dp_agg.set_budget('regress_dp_renyi', 1e6, 0.5, 'rdp');
SET ROLE regress_dp_renyi;
CREATE TEMP TABLE composed (k int, epsilon float8, basic float8);
DO $$
BEGIN
    FOR k IN 1 .. 1000 LOOP
        PERFORM release_times(1, 0.5, 1e-6);
        IF k IN (1, 10, 100, 1000) THEN
            INSERT INTO composed
            SELECT k, dp_agg.spent_epsilon(current_user::regrole, 1e-5), epsilon_spent FROM dp_agg.my_budget_curves;
        END IF;
    END LOOP;
END $$;
SELECT c.k, abs(c.epsilon / r.ref - 1) < 1e-6 AS matches_reference,
       c.basic AS basic_composition, c.epsilon < c.basic AS below_basic,
       round(c.epsilon::numeric, 6) AS composed_epsilon
FROM composed c JOIN (VALUES (1, 4.738799485663349e-01), (10, 1.657857779840014e+00),
                            (100, 6.071545196852171e+00), (1000, 2.527349080017441e+01)) r(k, ref)
     ON r.k = c.k
ORDER BY c.k;
RESET ROLE;
-- the curve of one such release is alpha / (2 sigma^2), sigma the noise
-- actually used (the discrete Gaussian on a lattice; within 1e-9 of the
-- analytic sigma), rounded up
SELECT abs(l.rdp[10] / (2.0 / (2 * dp_agg.gaussian_sigma(0.5, 1e-6, 1) ^ 2)) - 1) < 1e-8 AS order_2,
       abs(l.rdp[153] / (128.0 / (2 * dp_agg.gaussian_sigma(0.5, 1e-6, 1) ^ 2)) - 1) < 1e-8 AS order_128,
       l.rdp[10] >= 2.0 / (2 * ((l.detail -> 0 ->> 'noise_scale')::float8) ^ 2) AS rounded_up
FROM dp_agg.ledger l WHERE l.id = (SELECT max(id) FROM dp_agg.ledger);
-- my_budget_curves shows the composed epsilon at delta_limit; spent_epsilon at
-- any delta
SET ROLE regress_dp_renyi;
SELECT accounting, epsilon_spent, abs(composed_epsilon / dp_agg.spent_epsilon(current_user::regrole, 0.5) - 1) < 1e-12 AS same,
       dp_agg.spent_epsilon(current_user::regrole, 1e-9) > dp_agg.spent_epsilon(current_user::regrole, 1e-5) AS smaller_delta_costs_more
FROM dp_agg.my_budget_curves;
RESET ROLE;

-- A role with epsilon limit 5 and delta limit 1e-5 makes strictly more
-- Gaussian releases of that size under rdp than under basic accounting
-- (basic stops after 9: the tenth delta would make the rounded-up sum of
-- the deltas 1.0000000000000004e-05)
SELECT dp_agg.set_budget('regress_dp_renyi', 5, 1e-5, 'basic');
SELECT dp_agg.reset_budget('regress_dp_renyi');
SET ROLE regress_dp_renyi;
SELECT release_times(1000, 0.5, 1e-6) AS basic_releases;
SELECT epsilon_spent, delta_spent FROM dp_agg.my_budget_curves;
RESET ROLE;
SELECT dp_agg.set_budget('regress_dp_renyi', 5, 1e-5, 'rdp');
SELECT dp_agg.reset_budget('regress_dp_renyi');
SET ROLE regress_dp_renyi;
SELECT release_times(1000, 0.5, 1e-6) AS rdp_releases;
SELECT accounting, composed_epsilon <= 5 AS within_limit, epsilon_spent > 5 AS beyond_basic,
       round(epsilon_remaining::numeric, 6) AS epsilon_remaining
FROM dp_agg.my_budget_curves;
-- the next one is refused, with both certificates in the message
SELECT dp_count(i, 0.5, 1e-6) FROM a_t;
-- as the independent computation says: epsilon(71) = 4.97833 <= 5 <
-- epsilon(72) = 5.01838
RESET ROLE;

-- Changing the accounting keeps the history consistent: every role's curve
-- is kept whatever its accounting, so the composed epsilon after switching
-- counts every release since the last reset
SELECT dp_agg.set_budget('regress_dp_renyi', 100, 1e-4, 'basic');
SELECT dp_agg.reset_budget('regress_dp_renyi');
SET ROLE regress_dp_renyi;
SELECT release_times(20, 0.5, 1e-6) AS released_under_basic;
RESET ROLE;
SELECT dp_agg.set_budget('regress_dp_renyi', 100, 1e-4, 'rdp');
SET ROLE regress_dp_renyi;
-- 20 releases composed at delta 1e-4: 2.116566 by the independent computation
SELECT accounting, epsilon_spent,
       abs(composed_epsilon / 2.116565903954305 - 1) < 1e-6 AS counts_all_twenty
FROM dp_agg.my_budget_curves;
RESET ROLE;

-- Laplace releases add their exact Renyi DP; on a fine lattice it is the
-- continuous Laplace's (Mironov 2017, Proposition 6), at epsilon 1:
SELECT dp_agg.set_budget('regress_dp_renyi', 100, 1e-5, 'rdp');
SET ROLE regress_dp_renyi;
SELECT dp_sum(f, 0, 1, 1) IS NOT NULL AS released FROM a_t;
RESET ROLE;
SELECT o.a, abs(l.rdp[o.idx] / o.ref - 1) < 1e-6 AS matches_mironov
FROM dp_agg.ledger l,
     (VALUES (1.5, 5, 5.128835112945087e-01), (2, 10, 6.191236299985928e-01),
             (10, 90, 9.286829020966803e-01), (63, 152, 9.889487256304715e-01)) o(a, idx, ref)
WHERE l.id = (SELECT max(id) FROM dp_agg.ledger) ORDER BY o.a;
-- on the integers (a count) the exact discrete divergence is at most
-- epsilon (up to the rounding margin of 2^-40)
SET ROLE regress_dp_renyi;
SELECT dp_count(i, 1) IS NOT NULL AS released FROM a_t;
RESET ROLE;
SELECT bool_and(r <= 1 + 1e-12) AS at_most_epsilon, bool_and(r > 0) AS positive
FROM dp_agg.ledger l, unnest(l.rdp) r WHERE l.id = (SELECT max(id) FROM dp_agg.ledger);
-- sampled releases: the Renyi DP of the sampled Gaussian
SET ROLE regress_dp_renyi;
SELECT dp_count(i, 1, 1e-6) IS NOT NULL AS released FROM a_t TABLESAMPLE BERNOULLI (10);
RESET ROLE;
SELECT abs(l.rdp[10] / (dp_agg.rdp_sampled_gaussian((l.detail -> 0 -> 'sampling' ->> 'rate')::float8,
                                                      (l.detail -> 0 ->> 'noise_scale')::float8, ARRAY[2]))[1] - 1) < 1e-6 AS sampled_gaussian
FROM dp_agg.ledger l WHERE l.id = (SELECT max(id) FROM dp_agg.ledger);

-- preview says whether the budget covers a statement by the same rule
SELECT dp_agg.set_budget('regress_dp_renyi', 5, 1e-5, 'rdp');
SELECT dp_agg.reset_budget('regress_dp_renyi');
SET ROLE regress_dp_renyi;
SELECT release_times(71, 0.5, 1e-6) AS released;
SELECT affordable FROM dp_agg.preview('SELECT dp_count(i, 0.5, 1e-6) FROM a_t');
SELECT affordable FROM dp_agg.preview('SELECT dp_count(i, 0.01, 1e-9) FROM a_t');
RESET ROLE;

-- Tight accounting: Laplace releases under TABLESAMPLE BERNOULLI are charged the
-- exact Renyi DP of the Poisson-subsampled discrete Laplace (rdp_laplace.c).
-- The calculator matches test/reference/rdp_laplace.py (direct sums of the
-- two pmfs in 60-digit decimals, the worse direction) to relative 1e-6 and
-- is never below it (rounding is upwards); fractional orders take the next
-- integer order's value.
SELECT c.rate, c.order_, abs(v / c.ref - 1) < 1e-6 AS matches_reference, v >= c.ref AS not_below
FROM (VALUES (0.01, 1.0, 1, 2.0, 0.000108610228658627), (0.01, 1.0, 1, 64, 0.00400969397205928),
             (0.01, 1.0, 1, 1024, 0.0157697812966135), (0.1, 10.0, 3, 5.5, 0.00252844770338988),
             (0.1, 10.0, 3, 32, 0.0127740594139938), (0.5, 0.5, 7, 4, 13.0334957706509))
     c(rate, scale, sens, order_, ref),
     LATERAL (SELECT (dp_agg.rdp_sampled_laplace(c.rate, c.scale, c.sens, ARRAY[c.order_::float8]))[1]) x(v)
ORDER BY 1, 2;
-- rate 1 is the unsampled discrete Laplace, rate 0 releases nothing
-- (at order 2, lambda 1, d 1: log((e + e^-2 + 0) / (1 + e^-1)) = 0.735325664056)
SELECT round((dp_agg.rdp_sampled_laplace(1, 1, 1, ARRAY[2.0]))[1]::numeric, 12) AS rate_one,
       dp_agg.rdp_sampled_laplace(0, 1, 1, ARRAY[2.0, 100]) AS rate_zero;
SELECT dp_agg.rdp_sampled_laplace(0.1, 0, 1, ARRAY[2.0]);
SELECT dp_agg.rdp_sampled_laplace(0.1, 1, 1.5, ARRAY[2.0]);
SELECT dp_agg.rdp_sampled_laplace(0.1, 1, 1, ARRAY['Infinity'::float8]);
SELECT dp_agg.rdp_sampled_laplace(0.1, 1, 1, ARRAY[1.0]);
-- a budget (5, 1e-5) admits 24 releases of dp_count at epsilon 1 on
-- BERNOULLI (1) under 'rdp' (test/reference/rdp_laplace.py), where the
-- previous curve, min(epsilon, alpha epsilon^2 / 2), admitted 5, as basic
-- composition does
CREATE FUNCTION sampled_laplace_times(k int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE n int := 0; x bigint;
BEGIN
    FOR j IN 1 .. k LOOP
        BEGIN
            SELECT dp_count(i, 1) INTO x FROM a_t TABLESAMPLE BERNOULLI (1);
            n := n + 1;
        EXCEPTION WHEN SQLSTATE 'PB001' THEN
            EXIT;
        END;
    END LOOP;
    RETURN n;
END $$;
GRANT EXECUTE ON FUNCTION sampled_laplace_times(int) TO regress_dp_renyi;
SELECT dp_agg.reset_budget('regress_dp_renyi');
SELECT dp_agg.set_budget('regress_dp_renyi', 5, 1e-5, 'rdp');
SET ROLE regress_dp_renyi;
SELECT sampled_laplace_times(30) AS admitted;
SELECT round(dp_agg.spent_epsilon(current_user::regrole, 1e-5)::numeric, 4) AS composed_epsilon;
RESET ROLE;
DROP FUNCTION sampled_laplace_times(int);
-- two releases from one sample are one mechanism on the sample (joint.c):
-- the statement's curve is the exact Renyi DP of the pair on BERNOULLI (1),
-- capped at min(1, alpha / 2) (the pair is 1-DP), as
-- test/reference/rdp_laplace.py sums it directly (orders 2, 11, 63, 1024)
SELECT dp_agg.reset_budget('regress_dp_renyi');
SET ROLE regress_dp_renyi;
SELECT dp_count(i, 0.5) IS NOT NULL AS a, dp_count(f, 0.5) IS NOT NULL AS b FROM a_t TABLESAMPLE BERNOULLI (1);
RESET ROLE;
SELECT o.a AS order_, abs(l.rdp[o.idx] / o.ref - 1) < 1e-6 AS matches_reference, l.rdp[o.idx] >= o.ref AS not_below
FROM dp_agg.ledger l,
     (VALUES (2, 10, 0.0147298816282381), (11, 100, 0.570409841519076),
             (63, 152, 0.930662544663176), (1024, 156, 0.995797729979586)) o(a, idx, ref)
WHERE l.id = (SELECT max(id) FROM dp_agg.ledger) ORDER BY o.a;

-- spent_epsilon: bad arguments, and other roles' budgets are private
SELECT dp_agg.spent_epsilon('regress_dp_renyi', 0);
CREATE ROLE regress_dp_nosy;
SET ROLE regress_dp_nosy;
SELECT dp_agg.spent_epsilon('regress_dp_renyi', 1e-5);
RESET ROLE;

-- a role with basic accounting is admitted by basic composition only, even
-- where the Renyi certificate of its history would admit more: Gaussian
-- counts at (0.4, 1e-7) cost 0.4 each by basic composition (two fit in the
-- limit 1), while five of them compose to about epsilon 0.76 at delta 1e-5
-- under Renyi DP (sigma about 14: 5 alpha / (2 sigma^2) + ln(1/delta) /
-- (alpha - 1) at its best alpha)
CREATE ROLE regress_dp_basic;
GRANT SELECT ON a_t TO regress_dp_basic;
SELECT dp_agg.set_budget('regress_dp_basic', 1, 1e-5, 'basic');
SET ROLE regress_dp_basic;
SELECT release_times(5, 0.4, 1e-7) AS basic_releases;
RESET ROLE;
DELETE FROM dp_agg.ledger WHERE role = 'regress_dp_basic'::regrole;
DELETE FROM dp_agg.budget WHERE role = 'regress_dp_basic'::regrole;
DROP OWNED BY regress_dp_basic;
DROP ROLE regress_dp_basic;

DROP TABLE composed;
DELETE FROM dp_agg.ledger WHERE role = 'regress_dp_renyi'::regrole;
DELETE FROM dp_agg.budget WHERE role = 'regress_dp_renyi'::regrole;
DROP FUNCTION release_times(int, float8, float8);
DROP TABLE a_t;
DROP ROLE regress_dp_renyi, regress_dp_nosy;
