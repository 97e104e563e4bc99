--
-- quantiles: dp_percentile and dp_median (README, "Quantiles"), the
-- quantile tree of branching 16 and height 3 over 4096 leaves.  Noisy
-- values are never printed: at epsilon 1e9 the noise of every node is 0
-- except with probability about 2 exp(-3e8), and the release is the
-- right edge of the leaf holding the rank p N (or a point of it), within
-- one leaf (range / 4096) of percentile_disc; at epsilon 1 the interval
-- holds the value, and the statistical suite tests its coverage.
--
SET dp_agg.group_keys = 'public';
SELECT dp_agg.set_budget(current_user::regrole, 1e15, 0.5);
CREATE TABLE qt (g int, i int, s smallint, b bigint, r real, d float8, n numeric);
INSERT INTO qt SELECT k % 3, k % 1000, (k % 100)::smallint, (k % 1000) * 1000, (k % 97) / 2.0,
                      (k % 1000) / 10.0, (k % 400) / 4.0
FROM generate_series(1, 30000) k;
SET dp_agg.epsilon = 1;

-- result types: double precision (numeric for numeric), arrays for arrays
SELECT pg_typeof(dp_percentile(i, 0.5, 0, 1000)) AS int, pg_typeof(dp_median(s, 0, 100)) AS smallint,
       pg_typeof(dp_median(n, 0, 100)) AS numeric,
       pg_typeof(dp_percentile(d, ARRAY[0.1, 0.9], 0, 100)) AS double_array,
       pg_typeof(dp_percentile(n, ARRAY[0.1, 0.9], 0, 100)) AS numeric_array,
       pg_typeof(dp_median(d)) AS without_bounds
FROM qt;

-- at epsilon 1e9: within one leaf of percentile_disc, every type and form
SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY i) AS e_i,
       percentile_disc(0.25) WITHIN GROUP (ORDER BY s) AS e_s,
       percentile_disc(0.9) WITHIN GROUP (ORDER BY b) AS e_b,
       percentile_disc(0.5) WITHIN GROUP (ORDER BY r) AS e_r,
       percentile_disc(0.1) WITHIN GROUP (ORDER BY d) AS e_d10,
       percentile_disc(0.5) WITHIN GROUP (ORDER BY d) AS e_d50,
       percentile_disc(0.99) WITHIN GROUP (ORDER BY d) AS e_d99,
       percentile_disc(0.5) WITHIN GROUP (ORDER BY n) AS e_n
FROM qt \gset
SET dp_agg.epsilon = 1e9;
SELECT abs(dp_median(i, 0, 1000) - :e_i) <= 1000.0 / 4096 AS int,
       abs(dp_percentile(s, 0.25, 0, 100, 1e9) - :e_s) <= 100.0 / 4096 AS smallint,
       abs(dp_percentile(b, 0.9, 0, 1000000) - :e_b) <= 1000000.0 / 4096 AS bigint,
       abs(dp_median(r, 0, 50, 1e9) - :e_r) <= 50.0 / 4096 AS real,
       abs(dp_median(n, 0, 100) - :e_n) <= 100.0 / 4096 AS numeric
FROM qt;
-- several percentiles in one call: one tree, one price
SELECT abs(p[1] - :e_d10) <= 0.1 / 4096 * 1000 AS p10, abs(p[2] - :e_d50) <= 0.1 / 4096 * 1000 AS p50,
       abs(p[3] - :e_d99) <= 0.1 / 4096 * 1000 AS p99, array_length(p, 1) AS n
FROM (SELECT dp_percentile(d, ARRAY[0.1, 0.5, 0.99], 0, 100) AS p FROM qt) s;
SELECT jsonb_array_length(l.detail) AS calls, l.epsilon AS charged,
       l.detail -> 0 -> 'percentiles' AS percentiles, l.detail -> 0 -> 'tree' AS tree
FROM dp_agg.my_ledger l WHERE l.id = (SELECT max(id) FROM dp_agg.my_ledger);
-- without bounds: log-linear leaves (16 per power of two), so within
-- 1/16 of the value
SELECT abs(dp_median(d) / :e_d50 - 1) <= 1.0 / 16 AS log_linear,
       abs(dp_percentile(i, 0.5, NULL, NULL, 1e9) / :e_i - 1) <= 1.0 / 16 AS null_bounds
FROM qt;
SELECT l.detail -> 0 -> 'tree' ->> 'leaves' AS leaves, l.detail -> 0 -> 'lower' AS lower,
       l.detail -> 0 -> 'upper' AS upper
FROM dp_agg.my_ledger l WHERE l.id = (SELECT max(id) FROM dp_agg.my_ledger);

-- clamping: values beyond the bounds count at the bounds; NULL and NaN
-- are skipped, Infinity clamped
CREATE TABLE qc (x float8);
INSERT INTO qc SELECT CASE WHEN k % 5 = 0 THEN NULL WHEN k % 5 = 1 THEN 'NaN'::float8
                           WHEN k % 5 = 2 THEN 'Infinity'::float8 ELSE 1000 + k END FROM generate_series(1, 1000) k;
SELECT dp_median(x, 0, 10) > 9.99 AS clamped_to_upper FROM qc;

-- GROUP BY, serial and parallel: the same releases
CREATE TABLE qt_exact AS SELECT g, percentile_disc(0.5) WITHIN GROUP (ORDER BY d) AS m FROM qt GROUP BY g;
CREATE TEMP TABLE qt_ser AS SELECT g, dp_median(d, 0, 100) AS m FROM qt GROUP BY g;
SELECT g, abs(s.m - e.m) <= 100.0 / 4096 AS ok FROM qt_ser s JOIN qt_exact e USING (g) ORDER BY g;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF) SELECT g, dp_median(d, 0, 100) FROM qt GROUP BY g;
CREATE TEMP TABLE qt_par AS SELECT g, dp_median(d, 0, 100) AS m FROM qt GROUP BY g;
SELECT g, abs(s.m - e.m) <= 100.0 / 4096 AS ok FROM qt_par s JOIN qt_exact e USING (g) ORDER BY g;
EXPLAIN (COSTS OFF) SELECT dp_percentile(d, ARRAY[0.1, 0.9], 0, 100) FROM qt;
SELECT abs(p[1] - :e_d10) <= 0.1 / 4096 * 1000 AS p10 FROM
  (SELECT dp_percentile(d, ARRAY[0.1, 0.9], 0, 100) AS p FROM qt) s;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- memory: a state is at most 4096 counters, whatever the rows
SET dp_agg.epsilon = 1;
SELECT count(*) AS groups FROM (SELECT g, dp_median(d, 0, 100) FROM qt GROUP BY g) s;

-- error bars: the interval holds the value (and the exact percentile at
-- epsilon 1e9); the noise scale is the tree's, 3 / epsilon
SELECT low <= m AND m <= high AS holds, scale, lo, hi
FROM (SELECT dp_median(d, 0, 100) AS m, dp_interval_low(dp_median(d, 0, 100)) AS low,
             dp_interval_high(dp_median(d, 0, 100)) AS high, dp_noise_scale(dp_median(d, 0, 100)) AS scale,
             dp_lower_bound(dp_median(d, 0, 100)) AS lo, dp_upper_bound(dp_median(d, 0, 100)) AS hi
      FROM qt) s;
SELECT bool_and(l <= v AND v <= h) AS holds, array_length(array_agg(v), 1) AS n
FROM (SELECT unnest(p) AS v, unnest(dp_interval_low(p)) AS l, unnest(dp_interval_high(p)) AS h
      FROM (SELECT dp_percentile(n, ARRAY[0.25, 0.5, 0.75], 0, 100) AS p FROM qt) s) t;
SELECT low <= :e_d50 AND :e_d50 <= high AS exact_held
FROM (SELECT dp_interval_low(dp_median(d, 0, 100, 1e9)) AS low,
             dp_interval_high(dp_median(d, 0, 100, 1e9)) AS high FROM qt) s;

-- preview: one release of three repeats (the levels)
SELECT release, mechanism, epsilon, sensitivity, noise_scale
FROM dp_agg.preview('SELECT dp_percentile(d, ARRAY[0.25, 0.75], 0, 100, 0.5) FROM qt');

-- bad input: clear errors, nothing charged
SELECT count(*) AS ledger_before FROM dp_agg.my_ledger \gset
SELECT dp_percentile(d, 1.5, 0, 100) FROM qt;
SELECT dp_percentile(d, -0.1, 0, 100) FROM qt;
SELECT dp_percentile(d, 'NaN'::float8, 0, 100) FROM qt;
SELECT dp_percentile(d, NULL::float8, 0, 100) FROM qt;
SELECT dp_percentile(d, ARRAY[0.5, NULL], 0, 100) FROM qt;
SELECT dp_percentile(d, ARRAY[]::float8[], 0, 100) FROM qt;
SELECT dp_percentile(d, ARRAY[[0.5]], 0, 100) FROM qt;
SELECT dp_percentile(d, d, 0, 100) FROM qt;
SELECT dp_median(d, 100, 0) FROM qt;
SELECT dp_median(d, 0, 'NaN') FROM qt;
SELECT dp_median(d, NULL, 100) FROM qt;
SELECT dp_median(d, 0, 100, 0) FROM qt;
SELECT count(*) = :ledger_before AS nothing_charged FROM dp_agg.my_ledger;

-- empty input: a value in the bounds
CREATE TABLE qempty (x float8);
SELECT dp_median(x, 0, 10) BETWEEN 0 AND 10 AS in_bounds FROM qempty;

-- TABLESAMPLE: amplified, the tree calibrated to the larger base epsilon
SELECT dp_median(d, 0, 100) BETWEEN 0 AND 100 AS released FROM qt TABLESAMPLE BERNOULLI (50);
SELECT l.detail -> 0 -> 'sampling' ->> 'amplified' AS amplified,
       (l.detail -> 0 ->> 'noise_scale')::float8 < 3 AS less_noise_per_node
FROM dp_agg.my_ledger l WHERE l.id = (SELECT max(id) FROM dp_agg.my_ledger);

-- Renyi and PLD accounting: three repeats of one Laplace release
CREATE ROLE regress_q_pld;
GRANT SELECT ON qt TO regress_q_pld;
SELECT dp_agg.set_budget('regress_q_pld', 10, 1e-5, 'pld');
SET ROLE regress_q_pld;
SELECT dp_median(d, 0, 100, 0.5) IS NOT NULL AS released FROM qt;
SELECT epsilon_spent, pld -> 0 ->> 'count' AS repeats, rdp IS NOT NULL AS has_curve FROM dp_agg.my_budget_curves;
RESET ROLE;

-- privacy units: each unit counts as at most max_rows_contributed rows,
-- chosen at random; at epsilon 1e9 with units of identical rows the
-- median is that of the units
CREATE TABLE qu AS SELECT k % 200 AS person, (k % 200)::float8 / 2 AS x, k % 2 AS g
FROM generate_series(1, 20000) k;
SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY x) AS e_qu FROM qu \gset
SELECT dp_agg.set_privacy_unit('qu', 'person');
SET dp_agg.max_rows_contributed = 3;
SELECT abs(dp_median(x, 0, 100, 1e9) - :e_qu) <= 100.0 / 4096 AS units FROM qu;
SELECT (d ->> 'sensitivity')::int AS sensitivity, d -> 'privacy_unit' AS unit
FROM dp_agg.my_ledger l, jsonb_array_elements(l.detail) d WHERE l.id = (SELECT max(id) FROM dp_agg.my_ledger);
SET dp_agg.group_keys = 'private';
SET dp_agg.selection_epsilon = 1;
SET dp_agg.selection_delta = 1e-6;
CREATE TEMP TABLE qu_rel AS SELECT g, dp_median(x, 0, 100, 1e9) AS m FROM qu GROUP BY g;
SELECT count(*) AS groups, bool_and(m BETWEEN 0 AND 100) AS in_bounds FROM qu_rel;
SELECT dp_median(x) FROM qu;
SET dp_agg.group_keys = 'public';
RESET dp_agg.max_rows_contributed;

-- protected tables
CREATE ROLE regress_q_analyst;
SELECT dp_agg.set_budget('regress_q_analyst', 100, 1e-5);
SELECT dp_agg.protect('qt');
SELECT dp_agg.grant_access('qt', 'regress_q_analyst');
SET ROLE regress_q_analyst;
SELECT dp_median(d, 0, 100, 1) BETWEEN 0 AND 100 AS ok,
       array_length(dp_percentile(i, ARRAY[0.1, 0.9], 0, 1000, 1), 1) AS n FROM qt;
SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY d) FROM qt;
RESET ROLE;
SELECT dp_agg.unprotect('qt');

-- cleanup
DELETE FROM dp_agg.budget WHERE role::text LIKE 'regress_q_%';
DELETE FROM dp_agg.ledger WHERE role::text LIKE 'regress_q_%';
SELECT dp_agg.clear_privacy_unit('qu');
DROP TABLE qt, qc, qt_exact, qempty, qu;
DROP ROLE regress_q_pld, regress_q_analyst;
