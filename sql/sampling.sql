--
-- sampling: privacy amplification by subsampling under TABLESAMPLE.
--
-- BERNOULLI (p) without REPEATABLE keeps each row independently with
-- probability q (Poisson sampling): a release costs the epsilon asked for,
-- and its noise is calibrated to the weaker base epsilon0 that subsampling
-- amplifies to epsilon (reference 000, Claim 19; reference 001, Theorem 29).
--
-- each statement charged alone, so that its ledger row is its own (charges
-- on leases are folded into rows of several: leases.sql, 016_leases.pl)
SET dp_agg.lease_time = 0;
CREATE TABLE s_t (g int, i int, f float8);
INSERT INTO s_t SELECT k % 10, k % 100, k / 100.0 FROM generate_series(1, 5000) k;
CREATE VIEW s_last AS
SELECT l.epsilon, l.delta, l.detail -> 0 AS call FROM dp_agg.ledger l
WHERE l.id = (SELECT max(id) FROM dp_agg.ledger);

-- BERNOULLI: amplified.  The rate is the one BERNOULLI applies, its 32-bit
-- cutoff rint(2^32 p / 100) / 2^32 (no tie here, so round() is rint());
-- the noise scale is 1 / epsilon0.
SELECT dp_count(i, 1) IS NOT NULL AS released FROM s_t TABLESAMPLE BERNOULLI (10);
SELECT epsilon, call -> 'sampling' ->> 'method' AS method,
       (call -> 'sampling' ->> 'rate')::float8 = round(2.0::float8 ^ 32 * 10::real / 100) / 2.0::float8 ^ 32 AS rate_is_cutoff,
       call -> 'sampling' ->> 'amplified' AS amplified,
       (call -> 'sampling' ->> 'base_epsilon')::float8
         = dp_agg.base_epsilon(1, (call -> 'sampling' ->> 'rate')::float8) AS base_epsilon_ok,
       (call ->> 'noise_scale')::float8
         = dp_agg.laplace_scale((call -> 'sampling' ->> 'base_epsilon')::float8, 1) AS scale_ok,
       round((call ->> 'noise_scale')::numeric, 6) AS noise_scale
FROM s_last;
-- the base epsilon is amplified back to (at most) the epsilon paid
SELECT dp_agg.amplified_epsilon((call -> 'sampling' ->> 'base_epsilon')::float8,
                                (call -> 'sampling' ->> 'rate')::float8) <= 1 AS within_price,
       dp_agg.amplified_epsilon((call -> 'sampling' ->> 'base_epsilon')::float8,
                                (call -> 'sampling' ->> 'rate')::float8) > 1 - 1e-12 AS tight
FROM s_last;
-- a sum and an average: three releases from one sample are one mechanism
-- on the sample (joint.c), amplified once: the base epsilon0 that
-- amplifies to the statement's 1.5 is shared in proportion to the prices,
-- so the three Laplace scales are sensitivity / (epsilon0 epsilon_i / 1.5)
-- and their base epsilons add up to epsilon0 (amplifying each release on
-- its own and adding the prices understated the cost)
SELECT dp_sum(f, 0, 50, 0.5) IS NOT NULL AS a, dp_avg(i, 0, 99, 1) IS NOT NULL AS b
FROM s_t TABLESAMPLE BERNOULLI (25);
SELECT c ->> 'aggregate' AS aggregate, r ->> 'release' AS release,
       c -> 'sampling' ->> 'calibration' AS calibration,
       abs((r ->> 'noise_scale')::float8 / dp_agg.laplace_scale(
           dp_agg.base_epsilon(1.5, (c -> 'sampling' ->> 'rate')::float8) * (r ->> 'epsilon')::float8 / 1.5,
           (r ->> 'sensitivity')::float8) - 1) < 1e-12 AS shared_scale
FROM dp_agg.ledger l, jsonb_array_elements(l.detail) c, jsonb_array_elements(c -> 'releases') r
WHERE l.id = (SELECT max(id) FROM dp_agg.ledger) ORDER BY 1, 2;
SELECT dp_agg.amplified_epsilon(sum((r ->> 'sensitivity')::float8 / (r ->> 'noise_scale')::float8),
                                min((c -> 'sampling' ->> 'rate')::float8)) BETWEEN 1.5 - 1e-9 AND 1.5 AS amplified_to_price
FROM dp_agg.ledger l, jsonb_array_elements(l.detail) c, jsonb_array_elements(c -> 'releases') r
WHERE l.id = (SELECT max(id) FROM dp_agg.ledger);
-- Gaussian releases from one sample: one Gaussian on the sample whose mu
-- meets the base (epsilon0, delta / rate) of the statement's (2, 2e-6)
SELECT dp_avg(i, 0, 99, 2, 2e-6) IS NOT NULL AS released FROM s_t TABLESAMPLE BERNOULLI (25);
SELECT count(*) FILTER (WHERE c -> 'sampling' ->> 'calibration' = 'shared') AS shared,
       dp_agg.gaussian_delta(1, dp_agg.base_epsilon(2, min((c -> 'sampling' ->> 'rate')::float8)),
                             dp_agg.gaussian_mu(array_agg((r ->> 'noise_scale')::float8),
                                                array_agg((r ->> 'sensitivity')::float8)))
         / (2e-6 / min((c -> 'sampling' ->> 'rate')::float8)) BETWEEN 1 - 1e-4 AND 1 AS meets_base
FROM dp_agg.ledger l, jsonb_array_elements(l.detail) c, jsonb_array_elements(c -> 'releases') r
WHERE l.id = (SELECT max(id) FROM dp_agg.ledger);
-- with delta / rate at least 1 only the Renyi DP of the sampled Gaussian
-- can calibrate them: the group is the sampled Gaussian of multiplier
-- 1/mu, and one such release is (1, 0.02)-DP by its Renyi DP
SELECT dp_avg(i, 0, 99, 1, 0.02) IS NOT NULL AS released FROM s_t TABLESAMPLE BERNOULLI (1);
SELECT min(c -> 'sampling' ->> 'calibration') AS calibration,
       dp_agg.sampled_gaussian_epsilon(min((c -> 'sampling' ->> 'rate')::float8),
                                       1 / dp_agg.gaussian_mu(array_agg((r ->> 'noise_scale')::float8),
                                                              array_agg((r ->> 'sensitivity')::float8)),
                                       1, 0.02) BETWEEN 0.999 AND 1 AS meets_price
FROM dp_agg.ledger l, jsonb_array_elements(l.detail) c, jsonb_array_elements(c -> 'releases') r
WHERE l.id = (SELECT max(id) FROM dp_agg.ledger);
-- one release per sample keeps its own amplification
SELECT dp_count(i, 1) IS NOT NULL AS released FROM s_t TABLESAMPLE BERNOULLI (20);
SELECT c -> 'sampling' ->> 'calibration' AS calibration FROM dp_agg.ledger l, jsonb_array_elements(l.detail) c
WHERE l.id = (SELECT max(id) FROM dp_agg.ledger);
-- Gaussian: the better of the amplified analytic Gaussian and the Renyi DP
-- of the sampled Gaussian, as dp_agg.sampled_gaussian_sigma computes it
-- (the aggregates use the discrete Gaussian on a fine lattice: within 1e-4)
SELECT dp_count(i, 1, 1e-6) IS NOT NULL AS released FROM s_t TABLESAMPLE BERNOULLI (10);
SELECT call -> 'sampling' ->> 'amplified' AS amplified,
       call -> 'sampling' ->> 'calibration' AS calibration,
       (call -> 'sampling' ->> 'base_delta')::float8 / 1e-6 * (call -> 'sampling' ->> 'rate')::float8 AS base_delta_times_rate,
       (call ->> 'noise_scale')::float8 / dp_agg.sampled_gaussian_sigma(1, 1e-6, (call -> 'sampling' ->> 'rate')::float8, 1)
         BETWEEN 1 AND 1.0001 AS matches_calculator,
       (call ->> 'noise_scale')::float8 < dp_agg.gaussian_sigma(1, 1e-6, 1) AS less_noise_than_unsampled
FROM s_last;
-- the dp_agg.secure_bernoulli method (coins from the CSPRNG) is amplified too
SELECT dp_count(i, 1) IS NOT NULL AS released FROM s_t TABLESAMPLE dp_agg.secure_bernoulli (10);
SELECT call -> 'sampling' ->> 'method' AS method, call -> 'sampling' ->> 'amplified' AS amplified,
       (call -> 'sampling' ->> 'rate')::float8 = round(2.0::float8 ^ 32 * 10::real / 100) / 2.0::float8 ^ 32 AS rate_is_cutoff
FROM s_last;
SELECT count(*) BETWEEN 350 AND 650 AS plausible_sample_size
FROM s_t TABLESAMPLE dp_agg.secure_bernoulli (10);   -- Binomial(5000, 0.1): 7 sd, P < 1e-11
SELECT count(*) FROM s_t TABLESAMPLE dp_agg.secure_bernoulli (10) REPEATABLE (1);
-- a statement parameter as the percentage
PREPARE s_prep(real) AS SELECT dp_count(i, 1) IS NOT NULL AS released FROM s_t TABLESAMPLE BERNOULLI ($1);
EXECUTE s_prep(50);
SELECT (call -> 'sampling' ->> 'rate')::float8 AS rate, call -> 'sampling' ->> 'amplified' AS amplified FROM s_last;
DEALLOCATE s_prep;

-- No amplification (priced and calibrated as if the table were read
-- whole, with a NOTICE): REPEATABLE, SYSTEM, several parts; other methods
-- are refused
SELECT dp_count(i, 1) IS NOT NULL AS released FROM s_t TABLESAMPLE BERNOULLI (10) REPEATABLE (42);
SELECT call -> 'sampling' AS sampling, (call ->> 'noise_scale')::float8 AS noise_scale FROM s_last;
SELECT dp_count(i, 1) IS NOT NULL AS released FROM s_t TABLESAMPLE SYSTEM (50);
SELECT call -> 'sampling' ->> 'amplified' AS amplified, (call ->> 'noise_scale')::float8 AS noise_scale FROM s_last;
-- the NOTICE is given once per plan, as at planning: three executions of
-- a prepared statement's cached plan, each priced without amplification
-- and charged, give it once
SELECT max(id) AS ledger_before FROM dp_agg.ledger \gset
PREPARE s_sys AS SELECT dp_count(i, 1) IS NOT NULL AS released FROM s_t TABLESAMPLE SYSTEM (50);
EXECUTE s_sys;
EXECUTE s_sys;
EXECUTE s_sys;
DEALLOCATE s_sys;
SELECT count(*) AS charged,
       bool_and(call -> 'sampling' ->> 'amplified' = 'false') AS none_amplified
FROM dp_agg.ledger, LATERAL jsonb_array_elements(detail) call
WHERE id > :ledger_before;
-- ... also with a parameter, when the plan is generic
SET plan_cache_mode = force_generic_plan;
PREPARE s_rep(float4) AS SELECT dp_count(i, 1) IS NOT NULL AS released FROM s_t TABLESAMPLE BERNOULLI ($1) REPEATABLE (7);
EXECUTE s_rep(10);
EXECUTE s_rep(20);
EXECUTE s_rep(10);
DEALLOCATE s_rep;
RESET plan_cache_mode;
CREATE EXTENSION tsm_system_rows;
-- refused: SYSTEM_ROWS is not 1-stable (removing a row lets another in)
SELECT dp_count(i, 1) IS NOT NULL AS released FROM s_t TABLESAMPLE SYSTEM_ROWS (100);
SELECT count(*) AS charged FROM dp_agg.ledger WHERE detail::text LIKE '%system_rows%';
CREATE TABLE s_part (k int, v int) PARTITION BY RANGE (k);
CREATE TABLE s_part_1 PARTITION OF s_part FOR VALUES FROM (0) TO (100);
CREATE TABLE s_part_2 PARTITION OF s_part FOR VALUES FROM (100) TO (200);
INSERT INTO s_part SELECT i, i % 5 FROM generate_series(0, 199) i;
SELECT dp_count(v, 1) IS NOT NULL AS released FROM s_part TABLESAMPLE BERNOULLI (50);
SELECT call -> 'sampling' ->> 'amplified' AS amplified, (call ->> 'noise_scale')::float8 AS noise_scale FROM s_last;

-- Rejected: a percentage that is not decided before execution
SELECT dp_count(i, 1) FROM s_t TABLESAMPLE BERNOULLI ((SELECT 10));
SELECT dp_count(i, 1) FROM s_t TABLESAMPLE BERNOULLI (random() * 10);
-- and an invalid one fails before anything is charged
SELECT count(*) AS charges FROM dp_agg.ledger \gset
SELECT dp_count(i, 1) FROM s_t TABLESAMPLE BERNOULLI (150);
SELECT count(*) - :charges AS new_charges FROM dp_agg.ledger;

--
-- The calculators, against values derived independently by integrating
-- the Renyi divergence of the sampled Gaussian numerically
-- (test/reference/rdp.py), to relative 1e-6 (1e-12 for the closed forms)
--
SELECT q, s, a,
       abs((dp_agg.rdp_sampled_gaussian(q, s, ARRAY[a]))[1] / ref - 1) < 1e-6 AS matches_reference
FROM (VALUES (0.1, 1.0, 1.5, 1.173459219668522e-02),
             (0.1, 1.0, 2.0, 1.703686323617656e-02),
             (0.1, 1.0, 32.5, 1.387431696754602e+01),
             (0.01, 2.0, 7.3, 1.053933348315879e-04),
             (1e-07, 1.0, 1.01, 8.677320863031738e-15),
             (1e-07, 1.0, 1.1, 9.450547768705527e-15),
             (0.99, 0.1, 256.0, 1.279998991025106e+04),
             (0.5, 0.7, 3.0, 2.050360721879676e+00),
             (0.25, 4.0, 64.0, 6.576692494400207e-01),
             (1.0, 2.0, 10.0, 1.250000000000000e+00)) v(q, s, a, ref);
SELECT q, s, k, d,
       abs(dp_agg.sampled_gaussian_epsilon(q, s, k, d) / ref - 1) < 1e-6 AS matches_reference
FROM (VALUES (0.01, 1.1, 1000, 1e-05, 1.711770091218176e+00),
             (0.1, 2.0, 1, 1e-06, 6.613789061251177e-01),
             (1.0, 4.0, 10, 1e-05, 3.617099772983339e+00)) v(q, s, k, d, ref);
-- the curve releases are charged (and sampled_gaussian_epsilon composes)
-- bounds the precise one from above: its epsilon is never below
SELECT q, s,
       bool_and(dp_agg.sampled_gaussian_epsilon(q, s, 1, d) >=
                dp_agg.rdp_to_epsilon(dp_agg.rdp_orders(), dp_agg.rdp_sampled_gaussian(q, s, dp_agg.rdp_orders()), d))
         AS charged_at_least_precise
FROM (VALUES (1e-7, 1.0), (1e-5, 0.5), (0.001, 2.0), (0.01, 1.1), (0.1, 1.0), (0.5, 20.0), (0.99, 0.3)) v(q, s),
     (VALUES (1e-5), (1e-9)) w(d)
GROUP BY q, s ORDER BY q, s;
-- rate 1 is the plain Gaussian: order / (2 noise_multiplier^2); infinite
-- order gives infinity
SELECT dp_agg.rdp_sampled_gaussian(1, 2, ARRAY[2, 3.5, 'Infinity']) AS plain;
SELECT dp_agg.rdp_sampled_gaussian(0, 2, ARRAY[2, 100]) AS rate_zero;
-- the conversion, written out (Balle et al. 2020, Theorem 21) for two
-- orders, the smaller of which wins; orders at or below 1.01 are ignored
SELECT abs(dp_agg.rdp_to_epsilon(ARRAY[2, 8, 1.005], ARRAY[0.5, 1.2, 0], 1e-5)
           - least(0.5 + ln(1 - 1.0 / 2) - (ln(1e-5) + ln(2)) / 1,
                   1.2 + ln(1 - 1.0 / 8) - (ln(1e-5) + ln(8)) / 7)) < 1e-12 AS conversion_ok;
-- amplified and base epsilon: the formula, each other's inverse, stable
-- for tiny values
SELECT abs(dp_agg.amplified_epsilon(1, 0.1) - ln(1 + 0.1 * (exp(1) - 1))) < 1e-15 AS amplified_ok,
       abs(dp_agg.base_epsilon(1, 0.1) - ln(1 + (exp(1) - 1) / 0.1)) < 1e-14 AS base_ok,
       dp_agg.base_epsilon(1, 0.1) <= ln(1 + (exp(1) - 1) / 0.1) AS base_rounded_down,
       abs(dp_agg.amplified_epsilon(dp_agg.base_epsilon(0.3, 0.02), 0.02) / 0.3 - 1) < 1e-14 AS inverse,
       abs(dp_agg.amplified_epsilon(1e-12, 1e-6) / 1e-18 - 1) < 1e-9 AS tiny,
       dp_agg.base_epsilon(0.7, 1) = 0.7 AS rate_one;
-- the sigma the aggregates use under sampling is private by one of the two
-- methods (the Renyi DP of the sampled Gaussian, or the analytic Gaussian
-- at the base (epsilon0, delta/q)) and below the unsampled sigma
SELECT e, d, q,
       s < dp_agg.gaussian_sigma(e, d, 1) AS smaller,
       dp_agg.sampled_gaussian_epsilon(q, s, 1, d) <= e + 1e-12 AS private_by_renyi,
       dp_agg.gaussian_delta(s, dp_agg.base_epsilon(e, q), 1) <= d / q AS private_by_amplification
FROM (VALUES (1.0, 1e-6, 0.1), (0.5, 1e-5, 0.01), (2.0, 1e-8, 0.5), (0.2, 1e-6, 0.001)) v(e, d, q),
     LATERAL (SELECT dp_agg.sampled_gaussian_sigma(e, d, q, 1) AS s) c;
-- bad arguments
SELECT dp_agg.base_epsilon(1, 0);
SELECT dp_agg.rdp_sampled_gaussian(1.5, 1, ARRAY[2]);
SELECT dp_agg.rdp_sampled_gaussian(0.1, 1, ARRAY[1]);
SELECT dp_agg.rdp_sampled_gaussian(0.1, 1, ARRAY[2, NULL]);
SELECT dp_agg.rdp_to_epsilon(ARRAY[2, 3], ARRAY[1], 1e-5);
SELECT dp_agg.sampled_gaussian_epsilon(0.1, 1, -1, 1e-5);
