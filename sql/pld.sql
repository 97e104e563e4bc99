--
-- pld: privacy loss distribution accounting.
--
-- 1. The calculator dp_agg.pld_epsilon checks its arguments (22023).
-- 2. Soundness: over a grid of compositions whose exact epsilon is known,
--    the certificate is never below it:
--    - discrete Laplace counts (sensitivity 1, scale b): the loss takes the
--      values +-1/b, so m releases are the optimal composition of Kairouz,
--      Oh & Viswanath 2015, Theorem 3.3 (kov_epsilon below, written out
--      from the theorem);
--    - Gaussian releases on a fine lattice (sigma >= 2^20 units: the
--      discrete Gaussian's loss law is the continuous one's up to
--      exp(-2 pi^2 sigma^2)): m releases are exactly one Gaussian of
--      sensitivity sqrt(m) D (Dong, Roth & Su 2019), whose delta at the
--      certificate's epsilon (dp_agg.gaussian_delta, Balle & Wang 2018)
--      must be at most the target;
--    - one discrete Gaussian release on the integers (sigma 2 to 20): its
--      exact delta (dp_agg.discrete_gaussian_delta, Canonne, Kamath &
--      Steinke 2020, Theorem 7) at the certificate's epsilon is at most
--      the target.
--    It is also tight: within 1.5% (Laplace; 5% for one release, whose
--    two loss values need not fall on the grid) and 0.5% (Gaussian) above.
-- 3. Acceptance: releases admitted under 'pld' for a budget (5, 1e-5), at
--    least 99% of the tight counts of test/reference/pld.py (an
--    independent computation), beside basic and rdp.  Counts are
--    deterministic (no noise involved).
--
\set SHOW_CONTEXT never
CREATE TABLE pld_t (i int);
INSERT INTO pld_t SELECT k FROM generate_series(1, 1000) k;
CREATE ROLE regress_dp_pld;
GRANT SELECT ON pld_t TO regress_dp_pld;

-- 1. arguments
SELECT dp_agg.pld_epsilon('{}', 1e-5);
SELECT dp_agg.pld_epsilon('[1]', 1e-5);
SELECT dp_agg.pld_epsilon('[{"mechanism": "cauchy", "sensitivity": 1, "noise_scale": 1}]', 1e-5);
SELECT dp_agg.pld_epsilon('[{"mechanism": "laplace", "sensitivity": 1.5, "noise_scale": 1}]', 1e-5);
SELECT dp_agg.pld_epsilon('[{"mechanism": "laplace", "sensitivity": 1, "noise_scale": 0}]', 1e-5);
SELECT dp_agg.pld_epsilon('[{"mechanism": "gaussian", "sensitivity": 1, "noise_scale": 0.001}]', 1e-5);
SELECT dp_agg.pld_epsilon('[{"mechanism": "laplace", "sensitivity": 1, "noise_scale": 10, "count": -1}]', 1e-5);
SELECT dp_agg.pld_epsilon('[{"mechanism": "laplace", "sensitivity": 1, "noise_scale": 10, "rate": 2}]', 1e-5);
SELECT dp_agg.pld_epsilon('[{"mechanism": "laplace", "sensitivity": 1, "noise_scale": 10}]', 0);
SELECT dp_agg.pld_epsilon('[{"mechanism": "laplace", "sensitivity": "1", "noise_scale": 10}]', 1e-5);
-- nothing released, or nothing private: epsilon 0
SELECT dp_agg.pld_epsilon('[]', 1e-5) AS nothing,
       dp_agg.pld_epsilon('[{"mechanism": "none", "sensitivity": 0, "noise_scale": 0}]', 1e-5) AS none;
-- the ledger's own description of a statement is accepted as it is
SELECT dp_agg.set_budget('regress_dp_pld', 1e6, 0.5, 'pld');
SET ROLE regress_dp_pld;
SELECT dp_avg(i, 0, 1000, 0.5, 1e-6) IS NOT NULL AS released FROM pld_t;
SELECT dp_agg.pld_epsilon(l.detail, 1e-5) = dp_agg.pld_state_epsilon(b.pld, 1e-5) AS ledger_matches_state,
       jsonb_array_length(b.pld) AS kinds
FROM dp_agg.my_ledger l, dp_agg.my_budget_curves b;
RESET ROLE;
SELECT dp_agg.reset_budget('regress_dp_pld');

-- 2. soundness
CREATE FUNCTION kov_epsilon(e0 float8, m int, delta float8) RETURNS float8
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    lo float8 := 0;
    hi float8 := m * e0;
    mid float8;
    d float8;
    logc float8[];
    loss float8;
    logw float8;
BEGIN
    -- log C(m, i), i = 0 .. m
    logc := array_fill(0::float8, ARRAY[m + 1]);
    FOR i IN 1 .. m LOOP
        logc[i + 1] := logc[i] + ln(m - i + 1) - ln(i);
    END LOOP;
    FOR step IN 1 .. 60 LOOP
        mid := (lo + hi) / 2;
        d := 0;
        FOR i IN 0 .. m LOOP
            loss := (m - 2 * i) * e0;
            IF loss > mid THEN
                logw := logc[i + 1] + (m - i) * e0 - m * ln(1 + exp(e0));
                d := d + exp(logw) - exp(logw + mid - loss);
            END IF;
        END LOOP;
        IF d <= delta THEN hi := mid; ELSE lo := mid; END IF;
    END LOOP;
    RETURN hi;
END $$;

SELECT b AS scale, m, delta,
       p.eps >= k.eps AS never_below,
       p.eps <= CASE WHEN m = 1 THEN 1.05 ELSE 1.015 END * k.eps AS tight
FROM (VALUES (2.0), (10.0), (40.0)) s(b), (VALUES (1), (10), (100), (400)) c(m),
     (VALUES (1e-3), (1e-6)) d(delta),
     LATERAL (SELECT dp_agg.pld_epsilon(jsonb_build_array(jsonb_build_object(
                  'mechanism', 'laplace', 'sensitivity', 1, 'noise_scale', b, 'count', m)), delta) AS eps) p,
     LATERAL (SELECT kov_epsilon(1 / b, m, delta) AS eps) k
ORDER BY 1, 2, 3;

SELECT nm, m, delta,
       dp_agg.gaussian_delta(sigma, p.eps, sqrt(m) * 1048576) <= delta AS never_below,
       dp_agg.gaussian_delta(sigma, p.eps / 1.005, sqrt(m) * 1048576) > delta AS tight
FROM ((SELECT * FROM (VALUES (2.0), (8.0)) s(nm), (VALUES (1), (10), (100)) c(m))
      UNION ALL VALUES (40.0, 1000)) s(nm, m),
     (VALUES (1e-5), (1e-9)) d(delta),
     LATERAL (SELECT nm * 1048576 AS sigma) g,
     LATERAL (SELECT dp_agg.pld_epsilon(jsonb_build_array(jsonb_build_object(
                  'mechanism', 'gaussian', 'sensitivity', 1048576, 'noise_scale', sigma, 'count', m)), delta) AS eps) p
ORDER BY 1, 2, 3;

SELECT sigma, sens, delta,
       dp_agg.discrete_gaussian_delta(sigma, p.eps, sens) <= delta AS never_below
FROM (VALUES (2.0), (5.5), (20.0)) s(sigma), (VALUES (1), (3)) c(sens),
     (VALUES (1e-3), (1e-7)) d(delta),
     LATERAL (SELECT dp_agg.pld_epsilon(jsonb_build_array(jsonb_build_object(
                  'mechanism', 'gaussian', 'sensitivity', sens, 'noise_scale', sigma)), delta) AS eps) p
ORDER BY 1, 2, 3;

-- more releases never cost less; sampling never costs more than reading whole
SELECT bool_and(a.eps <= b.eps) AS monotone_in_count,
       bool_and(s.eps <= a.eps) AS sampling_amplifies
FROM (VALUES (1), (5), (50)) c(m),
     LATERAL (SELECT dp_agg.pld_epsilon(jsonb_build_array(jsonb_build_object(
                  'mechanism', 'gaussian', 'sensitivity', 1024, 'noise_scale', 4096, 'count', m)), 1e-6) AS eps) a,
     LATERAL (SELECT dp_agg.pld_epsilon(jsonb_build_array(jsonb_build_object(
                  'mechanism', 'gaussian', 'sensitivity', 1024, 'noise_scale', 4096, 'count', m + 1)), 1e-6) AS eps) b,
     LATERAL (SELECT dp_agg.pld_epsilon(jsonb_build_array(jsonb_build_object(
                  'mechanism', 'gaussian', 'sensitivity', 1024, 'noise_scale', 4096, 'count', m,
                  'rate', 0.1)), 1e-6) AS eps) s;

-- 3. acceptance: how many releases a budget (5, 1e-5) buys under 'pld';
-- "tight" from test/reference/pld.py (for the mix: releases, two per
-- statement).  Each count runs in its own statement after a reset.
CREATE FUNCTION pld_release_count(stmt text, cap int) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE n int := 0;
BEGIN
    FOR j IN 1 .. cap LOOP
        BEGIN
            EXECUTE stmt;
            n := n + 1;
        EXCEPTION WHEN SQLSTATE 'PB001' THEN
            EXIT;
        END;
    END LOOP;
    RETURN n;
END $$;
GRANT EXECUTE ON FUNCTION pld_release_count(text, int) TO regress_dp_pld;
CREATE TABLE pld_acceptance (what text, releases_per_statement int, tight int, admitted int);
GRANT INSERT ON pld_acceptance TO regress_dp_pld;
SELECT dp_agg.set_budget('regress_dp_pld', 5, 1e-5, 'pld');
SELECT dp_agg.reset_budget('regress_dp_pld');
SET ROLE regress_dp_pld;
INSERT INTO pld_acceptance SELECT 'laplace 0.05', 1, 506,
    pld_release_count('SELECT dp_count(i, 0.05) FROM pld_t', 1000);
RESET ROLE;
SELECT dp_agg.reset_budget('regress_dp_pld');
SET ROLE regress_dp_pld;
INSERT INTO pld_acceptance SELECT 'laplace 0.1', 1, 128,
    pld_release_count('SELECT dp_count(i, 0.1) FROM pld_t', 1000);
RESET ROLE;
SELECT dp_agg.reset_budget('regress_dp_pld');
SET ROLE regress_dp_pld;
INSERT INTO pld_acceptance SELECT 'gaussian (0.5, 1e-6)', 1, 81,
    pld_release_count('SELECT dp_count(i, 0.5, 1e-6) FROM pld_t', 1000);
RESET ROLE;
SELECT dp_agg.reset_budget('regress_dp_pld');
SET ROLE regress_dp_pld;
INSERT INTO pld_acceptance SELECT 'gaussian (0.1, 1e-7)', 1, 2147,
    pld_release_count('SELECT dp_count(i, 0.1, 1e-7) FROM pld_t', 3000);
RESET ROLE;
SELECT dp_agg.reset_budget('regress_dp_pld');
SET ROLE regress_dp_pld;
INSERT INTO pld_acceptance SELECT 'mix: laplace 0.1 and gaussian (0.5, 1e-6)', 2, 98,
    2 * pld_release_count('SELECT dp_count(i, 0.1), dp_count(i, 0.5, 1e-6) FROM pld_t', 1000);
RESET ROLE;
SELECT dp_agg.reset_budget('regress_dp_pld');
SET ROLE regress_dp_pld;
INSERT INTO pld_acceptance SELECT 'bernoulli(1), gaussian (1, 1e-6)', 1, 2332,
    pld_release_count('SELECT dp_count(i, 1, 1e-6) FROM pld_t TABLESAMPLE BERNOULLI (1)', 3000);
RESET ROLE;
SELECT dp_agg.reset_budget('regress_dp_pld');
SET ROLE regress_dp_pld;
INSERT INTO pld_acceptance SELECT 'bernoulli(10), gaussian (1, 1e-6)', 1, 171,
    pld_release_count('SELECT dp_count(i, 1, 1e-6) FROM pld_t TABLESAMPLE BERNOULLI (10)', 1000);
RESET ROLE;
SELECT dp_agg.reset_budget('regress_dp_pld');
SET ROLE regress_dp_pld;
INSERT INTO pld_acceptance SELECT 'bernoulli(1), laplace 1', 1, 36,
    pld_release_count('SELECT dp_count(i, 1) FROM pld_t TABLESAMPLE BERNOULLI (1)', 1000);
RESET ROLE;
SELECT dp_agg.reset_budget('regress_dp_pld');
SET ROLE regress_dp_pld;
INSERT INTO pld_acceptance SELECT 'bernoulli(10), laplace 1', 1, 6,
    pld_release_count('SELECT dp_count(i, 1) FROM pld_t TABLESAMPLE BERNOULLI (10)', 1000);
-- the last role state: what it spent is within the limit by pld, which
-- my_budget and spent_epsilon report
SELECT accounting, epsilon_spent > epsilon_limit AS beyond_basic,
       pld_epsilon <= epsilon_limit AS pld_within_limit,
       composed_epsilon = LEAST(pld_epsilon, composed_epsilon) AS composed_is_best,
       dp_agg.spent_epsilon(current_user::regrole, 1e-5) = composed_epsilon AS spent_agrees,
       epsilon_remaining = epsilon_limit - pld_epsilon AS remaining_by_pld
FROM dp_agg.my_budget_curves;
RESET ROLE;
SELECT what, admitted >= 0.99 * tight AS at_least_99_percent, admitted <= tight AS not_above_tight
FROM pld_acceptance;

-- reset forgets the releases; set_budget rejects an unknown accounting
SELECT dp_agg.reset_budget('regress_dp_pld');
SELECT pld IS NULL AS forgotten FROM dp_agg.budget WHERE role = 'regress_dp_pld'::regrole;
SELECT dp_agg.set_budget('regress_dp_pld', 5, 1e-5, 'tight');

DROP FUNCTION pld_release_count(text, int), kov_epsilon(float8, int, float8);
DROP TABLE pld_t, pld_acceptance;
DELETE FROM dp_agg.ledger WHERE role = 'regress_dp_pld'::regrole;
DELETE FROM dp_agg.budget WHERE role = 'regress_dp_pld'::regrole;
DROP ROLE regress_dp_pld;
