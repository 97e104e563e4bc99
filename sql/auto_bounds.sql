--
-- auto_bounds: aggregates called without bounds (or with NULL bounds)
-- estimate them from a noisy histogram of the values by power of two, with
-- a quarter of epsilon (README, "Automatic bounds"); dp_bounds returns the
-- estimate.  Noisy values are never printed.  At epsilon 1e9 the histogram
-- is exact, so the bounds are the edges of the powers of two that hold the
-- smallest and largest values, and the releases are exact: every noise is
-- below 1e-6 of its bound except with probability about 2 exp(-1e3).
--
SET dp_agg.group_keys = 'public';
SELECT dp_agg.set_budget(current_user::regrole, 1e15, 0.5);
CREATE TABLE ab (g int, i int, b bigint, d float8, n numeric, m float8);
INSERT INTO ab SELECT k % 3, k % 1000, k * 1000, (k % 100) / 4.0, (k % 50) / 3.0, -(k % 100)
FROM generate_series(1, 30000) k;

-- dp_bounds: the edges of the powers of two, for every type
SET dp_agg.epsilon = 1e9;
SELECT dp_bounds(i) AS int, dp_bounds(b) AS bigint, dp_bounds(d) AS double,
       dp_bounds(n) AS numeric, dp_bounds(m) AS negative, dp_bounds(d - 10) AS both_signs
FROM ab;
SELECT (dp_bounds(d, 1e9)).lower, (dp_bounds(d, 1e9)).upper FROM ab;
SELECT pg_typeof(dp_bounds(d)) FROM ab;

-- the aggregates without bounds: the values of the clamped rows, which
-- the estimated bounds hold entirely here
SELECT sum(i) AS e_sum_i, avg(d) AS e_avg_d, var_pop(d) AS e_var_d, stddev_pop(n) AS e_sd_n,
       sum(n) AS e_sum_n, avg(m) AS e_avg_m, sum(b) AS e_sum_b
FROM ab \gset
SELECT dp_sum(i) = :e_sum_i AS sum_int, abs(dp_avg(d) - :e_avg_d) < 1e-6 AS avg_double,
       abs(dp_var(d) - :e_var_d) < 1e-6 AS var_double, abs(dp_stddev(n) - :e_sd_n) < 1e-6 AS stddev_numeric,
       abs(dp_sum(n) - :e_sum_n) < 1e-3 AS sum_numeric, abs(dp_avg(m) - :e_avg_m) < 1e-6 AS avg_negative,
       dp_sum(b) = :e_sum_b AS sum_bigint
FROM ab;
-- NULL bounds, with epsilon and delta.  The Gaussian variance's error is
-- (dQ - 2 t dC) / n to first order, two independent Gaussian noises whose
-- standard deviation S is the release's dp_noise_scale (3.3e-7 here): it
-- exceeds 20 S with probability below 1e-80 (a tolerance of 1e-6, 3 S,
-- failed in 4 of 1,500 runs)
SELECT abs(dp_avg(d, NULL, NULL, 1e9) - :e_avg_d) < 1e-6 AS avg_null_bounds,
       abs(dp_var(d, NULL, NULL, 1e9, 1e-9) - :e_var_d)
         < 20 * dp_noise_scale(dp_var(d, NULL, NULL, 1e9, 1e-9)) AS var_gaussian
FROM ab;
-- the error bars say which bounds were used
SELECT lo, hi, low <= a AND a <= high AS holds
FROM (SELECT dp_avg(d) AS a, dp_lower_bound(dp_avg(d)) AS lo, dp_upper_bound(dp_avg(d)) AS hi,
             dp_interval_low(dp_avg(d)) AS low, dp_interval_high(dp_avg(d)) AS high FROM ab) s;
-- and the ledger and preview: the histogram with a quarter of epsilon, the
-- sums in units of a grid chosen from the bounds
SELECT dp_sum(d, NULL, NULL, 1) IS NOT NULL AS released FROM ab;
SELECT d ->> 'bounds' AS bounds, d ->> 'bounds_epsilon' AS bounds_epsilon,
       r ->> 'release' AS release, r ->> 'epsilon' AS epsilon, r ->> 'grid' AS grid, r ->> 'units' AS units
FROM dp_agg.my_ledger l, jsonb_array_elements(l.detail) d, jsonb_array_elements(d -> 'releases') r
WHERE l.id = (SELECT max(id) FROM dp_agg.my_ledger);
SELECT release, epsilon, sensitivity, grid IS NULL AS grid_at_release, ci95 IS NULL AS interval_at_release
FROM dp_agg.preview('SELECT dp_var(d) FROM ab');

-- outliers are clamped: one huge value among many small ones leaves the
-- bounds where the bulk is (its bin has one row, below the threshold)
CREATE TABLE ab_out AS SELECT (k % 10)::float8 AS x FROM generate_series(1, 10000) k;
INSERT INTO ab_out VALUES (1e12);
SET dp_agg.epsilon = 1;
SELECT (b).upper <= 16 AS bulk FROM (SELECT dp_bounds(x) AS b FROM ab_out) s;
SELECT dp_avg(x) < 10 AS clamped FROM ab_out;

-- too few rows for bounds: NULL, and the error bars NULL too
CREATE TABLE ab_few AS SELECT k::float8 AS x FROM generate_series(1, 5) k;
SELECT dp_sum(x) IS NULL AS sum_null, dp_bounds(x) IS NULL AS bounds_null,
       dp_interval_low(dp_avg(x)) IS NULL AS interval_null
FROM ab_few;

-- GROUP BY, serial and parallel
SET dp_agg.epsilon = 1e9;
CREATE TABLE ab_exact AS SELECT g, avg(d) AS a, var_pop(d) AS v FROM ab GROUP BY g;
CREATE TEMP TABLE ab_ser AS SELECT g, dp_avg(d) AS a, dp_var(d) AS v FROM ab GROUP BY g;
SELECT g, abs(s.a - e.a) < 1e-6 AS avg_ok, abs(s.v - e.v) < 1e-6 AS var_ok
FROM ab_ser s JOIN ab_exact e USING (g) ORDER BY g;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF) SELECT g, dp_var(d) FROM ab GROUP BY g;
CREATE TEMP TABLE ab_par AS SELECT g, dp_avg(d) AS a, dp_var(d) AS v FROM ab GROUP BY g;
SELECT g, abs(s.a - e.a) < 1e-6 AS avg_ok, abs(s.v - e.v) < 1e-6 AS var_ok
FROM ab_par s JOIN ab_exact e USING (g) ORDER BY g;
SELECT dp_bounds(d) AS parallel_bounds FROM ab;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- private selection of GROUP BY keys: the groups appear, exact at 1e9
SET dp_agg.group_keys = 'private';
SET dp_agg.selection_epsilon = 1;
SET dp_agg.selection_delta = 1e-6;
CREATE TEMP TABLE ab_sel AS SELECT g, dp_avg(d) AS a FROM ab GROUP BY g;
SET dp_agg.group_keys = 'public';
SELECT g, abs(s.a - e.a) < 1e-6 AS avg_ok FROM ab_sel s JOIN ab_exact e USING (g) ORDER BY g;
-- a call whose bounds are written NULL (estimated) may host the private
-- selection (it is the first call with bounds): it gives the selection its
-- group's rows, as every host does.  It gave none, so any statement with a
-- group failed and one without rows did not: whether a row matched, told
-- exactly.  Both succeed, and the groups are those of ab_sel.
SET dp_agg.group_keys = 'private';
CREATE TEMP TABLE ab_host AS
SELECT g, dp_avg(d, NULL, NULL, 1e9) AS a, dp_var(d, NULL, NULL, 1e9) AS v, dp_sum(d, NULL, NULL, 1e9) AS s
FROM ab GROUP BY g;
SELECT g, dp_avg(d, NULL, NULL, 1e9) FROM ab WHERE d < 0 GROUP BY g;
SET dp_agg.group_keys = 'public';
SELECT g, abs(h.a - e.a) < 1e-6 AS avg_ok FROM ab_host h JOIN ab_exact e USING (g) ORDER BY g;
DROP TABLE ab_host;

-- TABLESAMPLE: the histogram and the sums come from one sample and are
-- amplified together, each at its share of the amplified epsilon
SET dp_agg.epsilon = 1;
SELECT dp_sum(d) IS NOT NULL AS released FROM ab TABLESAMPLE BERNOULLI (50);
SELECT r ->> 'release' AS release, (r ->> 'epsilon')::float8 < 1 AS share,
       d -> 'sampling' ->> 'method' AS method
FROM dp_agg.my_ledger l, jsonb_array_elements(l.detail) d, jsonb_array_elements(d -> 'releases') r
WHERE l.id = (SELECT max(id) FROM dp_agg.my_ledger);

-- Renyi and PLD accounting record the histogram and the releases
CREATE ROLE regress_ab_rdp;
CREATE ROLE regress_ab_pld;
GRANT SELECT ON ab TO regress_ab_rdp, regress_ab_pld;
SELECT dp_agg.set_budget('regress_ab_rdp', 10, 1e-5, 'rdp'), dp_agg.set_budget('regress_ab_pld', 10, 1e-5, 'pld');
SET ROLE regress_ab_rdp;
SELECT dp_avg(d, NULL, NULL, 1) IS NOT NULL AS avg_rdp, dp_bounds(d, 0.5) IS NOT NULL AS bounds_rdp FROM ab;
SELECT epsilon_spent = 1.5 AS spent, composed_epsilon > 0 AS composed FROM dp_agg.my_budget_curves;
RESET ROLE;
SET ROLE regress_ab_pld;
SELECT dp_var(d, NULL, NULL, 1, 1e-6) IS NOT NULL AS var_pld FROM ab;
SELECT epsilon_spent = 1 AS spent, pld IS NOT NULL AS tracked, pld_epsilon <= 1 AS pld_epsilon FROM dp_agg.my_budget_curves;
RESET ROLE;

-- protected tables: an untrusted role with a grant estimates bounds
CREATE ROLE regress_ab_analyst;
SELECT dp_agg.set_budget('regress_ab_analyst', 100, 1e-5);
SELECT dp_agg.protect('ab');
SELECT dp_agg.grant_access('ab', 'regress_ab_analyst');
SET ROLE regress_ab_analyst;
SELECT dp_bounds(d, 1) IS NOT NULL AS bounds, dp_stddev(d, NULL, NULL, 1) >= 0 AS stddev FROM ab;
RESET ROLE;
SELECT dp_agg.unprotect('ab');
DELETE FROM dp_agg.budget WHERE role::text LIKE 'regress_ab_%';
DELETE FROM dp_agg.ledger WHERE role::text LIKE 'regress_ab_%';
REVOKE SELECT ON ab FROM regress_ab_rdp, regress_ab_pld;
DROP ROLE regress_ab_rdp, regress_ab_pld, regress_ab_analyst;

-- bad input: one bound only, privacy units (not supported), nothing charged
SELECT count(*) AS ledger_before FROM dp_agg.my_ledger \gset
SELECT dp_sum(d, NULL, 10) FROM ab;
SELECT dp_avg(d, 0, NULL, 1) FROM ab;
SELECT dp_bounds(d, 0) FROM ab;
SELECT dp_bounds(d, -1) FROM ab;
CREATE TABLE ab_units AS SELECT k % 10 AS person, k::float8 AS x FROM generate_series(1, 100) k;
SELECT dp_agg.set_privacy_unit('ab_units', 'person');
SELECT dp_sum(x) FROM ab_units;
SELECT dp_avg(x, NULL, NULL, 1) FROM ab_units;
SELECT dp_bounds(x) FROM ab_units;
SELECT count(*) = :ledger_before AS nothing_charged FROM dp_agg.my_ledger;
SELECT dp_agg.clear_privacy_unit('ab_units');

DROP TABLE ab, ab_out, ab_few, ab_exact, ab_units;
