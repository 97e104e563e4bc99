--
-- ledger: what each charge records.  One row per charged statement; its
-- detail holds one object per DP aggregate call with the mechanism, the
-- price, the sensitivity and the noise scale actually used (in the units
-- of the released value), which anybody can recompute with the calculator
-- functions.
--
SET dp_agg.group_keys = 'public';	-- keys of test data; private selection: selection.sql
CREATE TABLE l_t (i int, f float8, n numeric);
INSERT INTO l_t SELECT k, k / 4.0, k / 8.0 FROM generate_series(1, 100) k;
CREATE VIEW last_charge AS
SELECT * FROM dp_agg.ledger WHERE id = (SELECT max(id) FROM dp_agg.ledger);
CREATE VIEW last_calls AS
SELECT c.ord, c.call FROM last_charge l, jsonb_array_elements(l.detail) WITH ORDINALITY c(call, ord);

SELECT dp_count(i, 0.5) IS NOT NULL AS released FROM l_t WHERE i < 0;
SELECT dp_count(i, 0.5) IS NOT NULL AS released FROM l_t;
SELECT role = current_user::regrole AS role_ok, kind, epsilon, delta, query FROM last_charge;
SELECT jsonb_pretty(detail) FROM last_charge;
-- the keys of every call
SELECT jsonb_object_keys(call) AS key FROM last_calls ORDER BY 1;

-- Laplace: noise_scale = dp_agg.laplace_scale(epsilon, sensitivity)
SELECT dp_sum(i, -5, 20, 1) IS NOT NULL AS a, dp_sum(f, 0, 2.5, 0.25) IS NOT NULL AS b,
       dp_sum(n, -1, 1, 2) IS NOT NULL AS c FROM l_t;
SELECT ord, call ->> 'aggregate' AS aggregate, call ->> 'type' AS type, call ->> 'mechanism' AS mechanism,
       (call ->> 'epsilon')::float8 AS epsilon, (call ->> 'sensitivity')::float8 AS sensitivity,
       (call ->> 'noise_scale')::float8 AS noise_scale,
       (call ->> 'noise_scale')::float8 = dp_agg.laplace_scale((call ->> 'epsilon')::float8,
                                                               (call ->> 'sensitivity')::float8) AS recomputed,
       call ->> 'lower' AS lower, call ->> 'upper' AS upper, call -> 'sampling' AS sampling
FROM last_calls ORDER BY ord;
SELECT epsilon, delta FROM last_charge;

-- dp_avg: two releases with half of epsilon and delta each, a count and a
-- sum of values centred at the midpoint (sensitivity (upper - lower)/2)
SELECT dp_avg(i, 0, 100, 1) IS NOT NULL AS released FROM l_t;
SELECT r ->> 'release' AS release, r ->> 'mechanism' AS mechanism, (r ->> 'epsilon')::float8 AS epsilon,
       (r ->> 'sensitivity')::float8 AS sensitivity, (r ->> 'noise_scale')::float8 AS noise_scale,
       (r ->> 'grid')::float8 AS grid
FROM last_calls, jsonb_array_elements(call -> 'releases') r;

-- Gaussian: the discrete Gaussian on a fine lattice, sigma within 0.01% of
-- the analytic continuous sigma for the same (epsilon, delta, sensitivity)
SELECT dp_count(i, 1, 1e-6) IS NOT NULL AS a FROM l_t;
SELECT ord, r ->> 'release' AS release, r ->> 'mechanism' AS mechanism,
       (r ->> 'epsilon')::float8 AS epsilon, (r ->> 'delta')::float8 AS delta,
       (r ->> 'sensitivity')::float8 AS sensitivity,
       (r ->> 'noise_scale')::float8 / dp_agg.gaussian_sigma((r ->> 'epsilon')::float8, (r ->> 'delta')::float8,
                                                             (r ->> 'sensitivity')::float8)
         BETWEEN 1 AND 1.0001 AS within_0_01_percent, r ? 'calibration' AS joint
FROM last_calls, jsonb_array_elements(call -> 'releases') r ORDER BY ord, 2;

-- several Gaussian releases in one statement are calibrated jointly
-- (joint.c): each keeps its price, every sigma is the stand-alone analytic
-- sigma times one common factor below 1, and together they are one Gaussian
-- of mu = sqrt(sum (sensitivity / sigma)^2) whose exact delta at the
-- statement's epsilon is its delta (less the margin of 2^-20 on mu)
SELECT dp_count(i, 1, 1e-6) IS NOT NULL AS a, dp_sum(f, 0, 10, 0.5, 1e-7) IS NOT NULL AS b,
       dp_avg(n, 0, 4, 2, 1e-8) IS NOT NULL AS c FROM l_t;
SELECT ord, r ->> 'release' AS release, r ->> 'mechanism' AS mechanism,
       (r ->> 'epsilon')::float8 AS epsilon, (r ->> 'delta')::float8 AS delta,
       (r ->> 'sensitivity')::float8 AS sensitivity, r ->> 'calibration' AS calibration,
       round(((r ->> 'noise_scale')::float8 / dp_agg.gaussian_sigma((r ->> 'epsilon')::float8, (r ->> 'delta')::float8,
                                                                   (r ->> 'sensitivity')::float8))::numeric, 4) AS factor
FROM last_calls, jsonb_array_elements(call -> 'releases') r ORDER BY ord, 2;
SELECT count(DISTINCT (r ->> 'joint_mu')) AS one_mu,
       dp_agg.gaussian_delta(1, 3.5, dp_agg.gaussian_mu(array_agg((r ->> 'noise_scale')::float8),
                                                         array_agg((r ->> 'sensitivity')::float8)))
         BETWEEN 1.11e-6 * (1 - 1e-4) AND 1.11e-6 AS exact_at_price,
       min((r ->> 'joint_mu')::float8) / dp_agg.gaussian_mu(array_agg((r ->> 'noise_scale')::float8),
                                                            array_agg((r ->> 'sensitivity')::float8))
         BETWEEN 1 AND 1 + 2e-6 AS recorded_mu
FROM last_calls, jsonb_array_elements(call -> 'releases') r;
SELECT epsilon, delta FROM last_charge;

-- dp_avg at (1, 1e-6): its count and centred sum together are exactly
-- (1, 1e-6)-DP by the mu formula (less the lattice margin), where the two
-- halves calibrated alone at (0.5, 5e-7) were (0.698, 1e-6)-DP: their mu
-- has delta 1e-6 at epsilon 0.6979 already
SELECT dp_avg(n, 0, 4, 1, 1e-6) IS NOT NULL AS released FROM l_t;
SELECT dp_agg.gaussian_delta(1, 1, mu) BETWEEN 1e-6 * (1 - 1e-4) AND 1e-6 AS exactly_at_price,
       abs(dp_agg.gaussian_delta(1, 0.6978614, alone) / 1e-6 - 1) < 1e-5 AS alone_at_0_698,
       round((mu / alone)::numeric, 4) AS mu_ratio
FROM (SELECT dp_agg.gaussian_mu(array_agg((r ->> 'noise_scale')::float8), array_agg((r ->> 'sensitivity')::float8)) AS mu,
             dp_agg.gaussian_mu(array_agg(dp_agg.gaussian_sigma(0.5, 5e-7, (r ->> 'sensitivity')::float8)),
                                array_agg((r ->> 'sensitivity')::float8)) AS alone
      FROM last_calls, jsonb_array_elements(call -> 'releases') r) m;

-- preview shows the same joint sigmas and error bars as the ledger
SELECT count(*) AS releases,
       bool_and(p.noise_scale = (r ->> 'noise_scale')::float8 AND p.ci95 = (r ->> 'ci95')::float8) AS same
FROM dp_agg.preview('SELECT dp_avg(n, 0, 4, 1, 1e-6) IS NOT NULL AS released FROM l_t') p,
     last_calls c, jsonb_array_elements(c.call -> 'releases') r
WHERE p.release = r ->> 'release';

-- identical calls are evaluated, released and charged once
SELECT dp_count(i, 0.25) = dp_count(i, 0.25) AS same_release FROM l_t;
SELECT epsilon, jsonb_array_length(detail) AS calls FROM last_charge;
-- GROUP BY: groups are disjoint, so the price does not depend on their number
SELECT count(*) AS groups FROM (SELECT i, dp_count(i, 0.25) FROM l_t GROUP BY i) s;
SELECT epsilon, jsonb_array_length(detail) AS calls FROM last_charge;

-- the statement text is the statement's own, also in a multi-statement string
SELECT 1 AS one \; SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM l_t \; SELECT 2 AS two;
SELECT query FROM last_charge;
