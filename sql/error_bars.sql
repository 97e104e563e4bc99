--
-- error_bars: dp_interval_low, dp_interval_high, dp_noise_scale,
-- dp_lower_bound and dp_upper_bound next to a release, in the same
-- statement, at no price (README, "Preview and error bars").  Noisy values
-- are never printed: the checks are properties (the interval holds the
-- value, its width is the ledger's, it holds the exact answer at epsilon
-- 1e9) and the coverage is tested by the statistical suite.
--
SET dp_agg.group_keys = 'public';
SELECT dp_agg.set_budget(current_user::regrole, 1e15, 0.5);
CREATE TABLE eb (g int, i int, d float8, n numeric);
INSERT INTO eb SELECT k % 3, k % 10, (k % 10) / 2.0, (k % 10) / 4.0 FROM generate_series(1, 3000) k;
SET dp_agg.epsilon = 1;

-- the types: those of the value (bounds too), the noise scale a double
SELECT pg_typeof(dp_interval_low(dp_count(*))) AS count_low,
       pg_typeof(dp_interval_high(dp_sum(i, 0, 9))) AS sum_int_high,
       pg_typeof(dp_interval_low(dp_sum(d, 0, 5))) AS sum_double_low,
       pg_typeof(dp_interval_low(dp_sum(n, 0, 3))) AS sum_numeric_low,
       pg_typeof(dp_interval_low(dp_avg(i, 0, 9))) AS avg_int_low,
       pg_typeof(dp_interval_high(dp_var(n, 0, 3))) AS var_numeric_high,
       pg_typeof(dp_noise_scale(dp_stddev(d, 0, 5))) AS stddev_scale,
       pg_typeof(dp_lower_bound(dp_sum(i, 0, 9))) AS sum_int_lower,
       pg_typeof(dp_upper_bound(dp_avg(i, 0, 9))) AS avg_int_upper
FROM eb;

-- the interval holds the value; for a count or a sum it is the value
-- +- the ledger's ci95, and the noise scale is the ledger's
SELECT c_low <= c AND c <= c_high AS count_holds, s_low <= s AND s <= s_high AS sum_holds,
       f_low <= f AND f <= f_high AS float_holds, n_low <= n AND n <= n_high AS numeric_holds,
       a_low <= a AND a <= a_high AS avg_holds, v_low <= v AND v <= v_high AS var_holds,
       sd_low <= sd AND sd <= sd_high AS stddev_holds, c_high - c_low AS count_width,
       s_high - s_low AS sum_width, c_scale, s_scale, lo, hi, c_lo IS NULL AS count_no_bounds
FROM (SELECT dp_count(*) AS c, dp_interval_low(dp_count(*)) AS c_low, dp_interval_high(dp_count(*)) AS c_high,
             dp_noise_scale(dp_count(*)) AS c_scale, dp_lower_bound(dp_count(*)) AS c_lo,
             dp_sum(i, 0, 9) AS s, dp_interval_low(dp_sum(i, 0, 9)) AS s_low,
             dp_interval_high(dp_sum(i, 0, 9)) AS s_high, dp_noise_scale(dp_sum(i, 0, 9)) AS s_scale,
             dp_lower_bound(dp_sum(i, 0, 9)) AS lo, dp_upper_bound(dp_sum(i, 0, 9)) AS hi,
             dp_sum(d, 0, 5) AS f, dp_interval_low(dp_sum(d, 0, 5)) AS f_low,
             dp_interval_high(dp_sum(d, 0, 5)) AS f_high,
             dp_sum(n, 0, 3) AS n, dp_interval_low(dp_sum(n, 0, 3)) AS n_low,
             dp_interval_high(dp_sum(n, 0, 3)) AS n_high,
             dp_avg(d, 0, 5) AS a, dp_interval_low(dp_avg(d, 0, 5)) AS a_low,
             dp_interval_high(dp_avg(d, 0, 5)) AS a_high,
             dp_var(n, 0, 3) AS v, dp_interval_low(dp_var(n, 0, 3)) AS v_low,
             dp_interval_high(dp_var(n, 0, 3)) AS v_high,
             dp_stddev(i, 0, 9) AS sd, dp_interval_low(dp_stddev(i, 0, 9)) AS sd_low,
             dp_interval_high(dp_stddev(i, 0, 9)) AS sd_high
      FROM eb) s;
-- ... which the ledger records once per call: seven calls, epsilon 7
SELECT l.epsilon AS charged, jsonb_array_length(l.detail) AS calls,
       (SELECT array_agg(DISTINCT (d ->> 'ci95')::float8 ORDER BY (d ->> 'ci95')::float8)
        FROM jsonb_array_elements(l.detail) d WHERE d ->> 'aggregate' IN ('dp_count', 'dp_sum')
          AND d ->> 'type' IS DISTINCT FROM 'numeric' AND d ->> 'type' IS DISTINCT FROM 'double precision') AS ci95
FROM dp_agg.my_ledger l WHERE l.id = (SELECT max(id) FROM dp_agg.my_ledger);

-- a numeric interval has the value's precision, rounded outward
SELECT scale(n_low) <= scale(n) AS low_precision, n_low <= n AND n <= n_high AS holds
FROM (SELECT dp_sum(n, 0, 3) AS n, dp_interval_low(dp_sum(n, 0, 3)) AS n_low,
             dp_interval_high(dp_sum(n, 0, 3)) AS n_high FROM eb) s;

-- at epsilon 1e9 the intervals hold the exact answers and are narrow.
-- The sums of doubles (dp_sum, the centred sum of dp_avg) keep a Laplace
-- noise of scale b on their fine grid, which their interval, the value
-- +- h with h = b ln 20, holds with probability 0.95 only: the exact
-- answer is checked within 5 h of the value, missed with probability
-- exp(-5 ln 20) = 20^-5 = 3.1e-7 each.  The counts have exactly 0 noise at
-- epsilon 1e9.  dp_var of these numeric values keeps a noise of about
-- 1e-11 on its fine grid, and its interval (of width w, at least
-- 2 |a_i| h_i for each of its m = 3 releases, h_i the half-width of
-- release i's central 1 - 0.05/3 interval, about 4.1 b_i, a_i its weight
-- in the statistic) missed the exact answer in 46 of 20,000 executions:
-- the exact answer is checked within 10 w of the interval, which needs
-- |a_i X_i| > 10 w / 3 for some i, so |X_i| > 27 b_i: probability at most
-- 3 * 2 exp(-27) = 1.1e-11 (the largest distance measured was 0.8 w).
-- dp_stddev of these integers has no noise (w = 0): checked the same way.
SELECT avg(d) AS e_avg, var_pop(n) AS e_var, stddev_pop(i) AS e_sd, sum(d) AS e_sum FROM eb \gset
SET dp_agg.epsilon = 1e9;
SELECT :e_avg BETWEEN a_low - 2 * (a_high - a_low) AND a_high + 2 * (a_high - a_low)
         AND a_high - a_low < 1e-6 AS avg_exact,
       :e_var BETWEEN v_low - 10 * (v_high - v_low) AND v_high + 10 * (v_high - v_low)
         AND v_high - v_low < 1e-6 AS var_exact,
       :e_sd BETWEEN sd_low - 10 * (sd_high - sd_low) AND sd_high + 10 * (sd_high - sd_low)
         AND sd_high - sd_low < 1e-6 AS stddev_exact,
       :e_sum BETWEEN s_low - 2 * (s_high - s_low) AND s_high + 2 * (s_high - s_low)
         AND s_high - s_low < 1e-6 AS sum_exact,
       c_low = 3000 AND c_high = 3000 AS count_exact
FROM (SELECT dp_interval_low(dp_avg(d, 0, 5)) AS a_low, dp_interval_high(dp_avg(d, 0, 5)) AS a_high,
             dp_interval_low(dp_var(n, 0, 3)) AS v_low, dp_interval_high(dp_var(n, 0, 3)) AS v_high,
             dp_interval_low(dp_stddev(i, 0, 9)) AS sd_low, dp_interval_high(dp_stddev(i, 0, 9)) AS sd_high,
             dp_interval_low(dp_sum(d, 0, 5)) AS s_low, dp_interval_high(dp_sum(d, 0, 5)) AS s_high,
             dp_interval_low(dp_count(*)) AS c_low, dp_interval_high(dp_count(*)) AS c_high
      FROM eb) s;
SET dp_agg.epsilon = 1;

-- GROUP BY, through a sub-query and a CTE, in HAVING, WHERE and ORDER BY
-- of the levels above: one release per call and group
SELECT count(*) AS groups, count(*) FILTER (WHERE low <= a AND a <= high) AS held
FROM (SELECT g, a, dp_interval_low(a) AS low, dp_interval_high(a) AS high
      FROM (SELECT g, dp_avg(d, 0, 5) AS a FROM eb GROUP BY g) s) t;
WITH s AS (SELECT g, dp_sum(i, 0, 9) AS total FROM eb GROUP BY g)
SELECT count(*) AS groups, bool_and(dp_interval_low(total) <= total) AS held FROM s;
SELECT count(*) AS groups FROM (
  SELECT g FROM (SELECT g, dp_count(*) AS c FROM eb GROUP BY g) s
  WHERE dp_interval_low(c) > 0 ORDER BY dp_interval_high(c) DESC) t;
SELECT count(*) AS groups FROM (
  SELECT g, dp_count(*) FROM eb GROUP BY g HAVING dp_interval_low(dp_count(*)) > 0) t;
-- the same call under two names is one call
SELECT jsonb_array_length(l.detail) AS calls, l.epsilon AS charged
FROM dp_agg.my_ledger l WHERE l.id = (SELECT max(id) FROM dp_agg.my_ledger);
-- a column asked twice, and the columns of a sub-query of a sub-query
SELECT low1 = low2 AS same, low1 <= c AS held FROM (
  SELECT c, dp_interval_low(c) AS low1, dp_interval_low(c) AS low2
  FROM (SELECT cc AS c FROM (SELECT dp_count(*) AS cc FROM eb) a) b) t;

-- private selection, parallel plans, privacy units
SET dp_agg.group_keys = 'private';
SET dp_agg.selection_epsilon = 1;
SET dp_agg.selection_delta = 1e-6;
SELECT count(*) AS groups, bool_and(low <= a AND a <= high) AS held
FROM (SELECT g, dp_avg(d, 0, 5) AS a, dp_interval_low(dp_avg(d, 0, 5)) AS low,
             dp_interval_high(dp_avg(d, 0, 5)) AS high FROM eb GROUP BY g) s;
SET dp_agg.group_keys = 'public';
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT bool_and(low <= v AND v <= high) AS held FROM (
  SELECT g, dp_var(d, 0, 5) AS v, dp_interval_low(dp_var(d, 0, 5)) AS low,
         dp_interval_high(dp_var(d, 0, 5)) AS high FROM eb GROUP BY g) s;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
CREATE TABLE ebu AS SELECT k % 50 AS person, (k % 7)::float8 AS x FROM generate_series(1, 1000) k;
SELECT dp_agg.set_privacy_unit('ebu', 'person');
SELECT low <= a AND a <= high AS held, lo, hi FROM (
  SELECT dp_avg(x, 0, 10) AS a, dp_interval_low(dp_avg(x, 0, 10)) AS low,
         dp_interval_high(dp_avg(x, 0, 10)) AS high, dp_lower_bound(dp_avg(x, 0, 10)) AS lo,
         dp_upper_bound(dp_avg(x, 0, 10)) AS hi FROM ebu) s;
SELECT dp_agg.clear_privacy_unit('ebu');
-- TABLESAMPLE: the count's interval is its release +- the amplified ci95
-- the ledger records
SELECT c, low, high FROM (
  SELECT dp_count(*) AS c, dp_interval_low(dp_count(*)) AS low, dp_interval_high(dp_count(*)) AS high
  FROM eb TABLESAMPLE BERNOULLI (50)) s \gset
SELECT :c - :low = (d -> 'releases' -> 0 ->> 'ci95')::float8 AS sampled_low,
       :high - :c = (d -> 'releases' -> 0 ->> 'ci95')::float8 AS sampled_high,
       d -> 'sampling' ->> 'method' AS method
FROM dp_agg.my_ledger l, jsonb_array_elements(l.detail) d WHERE l.id = (SELECT max(id) FROM dp_agg.my_ledger);
-- prepared statements with parameters, run twice
PREPARE ebp(float8, float8) AS
  SELECT dp_interval_low(dp_avg(d, 0, $1, $2)) <= dp_avg(d, 0, $1, $2)
     AND dp_avg(d, 0, $1, $2) <= dp_interval_high(dp_avg(d, 0, $1, $2)) AS held,
         dp_upper_bound(dp_avg(d, 0, $1, $2)) AS upper FROM eb;
EXECUTE ebp(5, 1);
EXECUTE ebp(4, 0.5);
DEALLOCATE ebp;
-- protected tables: an untrusted role with a grant asks for error bars,
-- directly and through a sub-query
CREATE ROLE regress_eb_analyst;
SELECT dp_agg.set_budget('regress_eb_analyst', 100, 1e-5);
SELECT dp_agg.protect('eb');
SELECT dp_agg.grant_access('eb', 'regress_eb_analyst');
SET ROLE regress_eb_analyst;
SELECT dp_interval_low(dp_var(d, 0, 5, 1)) <= dp_var(d, 0, 5, 1) AS direct,
       dp_noise_scale(dp_count(i, 1)) > 0 AS scale
FROM eb;
SET dp_agg.group_keys = 'private';
-- (no exact aggregate over the releases: the guard of protected tables
-- refuses every aggregate but the DP ones)
SELECT g, low <= m AND m <= high AS through_sub_query FROM (
  SELECT g, m, dp_interval_low(m) AS low, dp_interval_high(m) AS high
  FROM (SELECT g, dp_median(d, 0, 5, 1) AS m FROM eb GROUP BY g) s) t ORDER BY g;
SET dp_agg.group_keys = 'public';
SELECT dp_interval_low(sum(d)) FROM eb;
RESET ROLE;
SELECT dp_agg.unprotect('eb');
DELETE FROM dp_agg.budget WHERE role::text LIKE 'regress_eb_%';
DELETE FROM dp_agg.ledger WHERE role::text LIKE 'regress_eb_%';
DROP ROLE regress_eb_analyst;

-- preview prices the statement as it runs: one call
SELECT count(DISTINCT call) AS calls, min(statement_epsilon) AS epsilon
FROM dp_agg.preview('SELECT dp_avg(d, 0, 5), dp_interval_low(dp_avg(d, 0, 5)), dp_interval_high(dp_avg(d, 0, 5)) FROM eb');

-- refused, with what to write instead, before anything is charged
SELECT count(*) AS ledger_before FROM dp_agg.my_ledger \gset
SELECT dp_interval_low(d) FROM eb;
SELECT dp_interval_low(dp_count(*) + 1) FROM eb;
SELECT dp_interval_low(dp_sum(i, 0, 9) * 2) FROM eb;
SELECT dp_noise_scale(sum(i)) FROM eb;
SELECT dp_interval_high(42);
SELECT dp_interval_low(x) FROM (SELECT dp_count(*) + 1 AS x FROM eb) s;
SELECT count(*) = :ledger_before AS nothing_charged FROM dp_agg.my_ledger;
-- estimates cannot be entered
SELECT 'x'::dp_agg.estimate;

-- with estimated bounds, the error bar of dp_avg and dp_var covers the
-- statistic of the values clamped to the bounds used (the interval is made
-- from the half-widths of the count and the sums, not of the histogram
-- that chose the bounds: read one place off, it covered 70% to 74%).  Each
-- group is covered with probability at least 0.95; over 400 groups, more
-- than 45 misses has probability below 2e-7 (binomial tail)
SET dp_agg.group_keys = 'public';
CREATE TABLE eb_auto AS SELECT k % 400 AS g, 1000 + (k % 97)::float8 AS x FROM generate_series(1, 400000) k;
CREATE TEMP TABLE eb_auto_r AS
SELECT g, dp_interval_low(dp_avg(x, NULL, NULL, 1)) AS a_lo, dp_interval_high(dp_avg(x, NULL, NULL, 1)) AS a_hi,
       dp_lower_bound(dp_avg(x, NULL, NULL, 1)) AS a_lb, dp_upper_bound(dp_avg(x, NULL, NULL, 1)) AS a_ub,
       dp_interval_low(dp_var(x, NULL, NULL, 1)) AS v_lo, dp_interval_high(dp_var(x, NULL, NULL, 1)) AS v_hi,
       dp_lower_bound(dp_var(x, NULL, NULL, 1)) AS v_lb, dp_upper_bound(dp_var(x, NULL, NULL, 1)) AS v_ub
FROM eb_auto GROUP BY g;
SELECT count(*) AS groups,
       count(*) FILTER (WHERE e.a NOT BETWEEN r.a_lo AND r.a_hi) <= 45 AS avg_covered,
       count(*) FILTER (WHERE e.v NOT BETWEEN r.v_lo AND r.v_hi) <= 45 AS var_covered
FROM eb_auto_r r
JOIN (SELECT t.g, avg(least(greatest(t.x, r.a_lb), r.a_ub)) AS a,
             var_pop(least(greatest(t.x, r.v_lb), r.v_ub)) AS v
      FROM eb_auto t JOIN eb_auto_r r USING (g) GROUP BY t.g) e USING (g);
DROP TABLE eb, ebu, eb_auto;
