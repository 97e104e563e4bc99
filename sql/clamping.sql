--
-- clamping: bounds, NULL, NaN, Infinity, empty input and saturation.
--
-- With epsilon = 1e9 an integer release carries no noise except with
-- probability about 2 exp(-1e9), and a floating-point or numeric release
-- carries noise of scale S/epsilon (S the sensitivity): the checks below
-- hold except with probability below 1e-20 each.
--
SET dp_agg.group_keys = 'public';	-- keys of test data; private selection: selection.sql
SET dp_agg.epsilon = 1e9;

CREATE TABLE c (i int, b bigint, f float8, r real, n numeric);
INSERT INTO c VALUES
  (-5, -5, -5, -5, -5), (0, 0, 0, 0, 0), (3, 3, 3, 3, 3), (7, 7, 7, 7, 7), (20, 20, 20, 20, 20),
  (NULL, NULL, NULL, NULL, NULL),
  (NULL, NULL, 'NaN', 'NaN', 'NaN'),
  (NULL, NULL, 'Infinity', 'Infinity', 'Infinity'),
  (NULL, NULL, '-Infinity', '-Infinity', '-Infinity');

-- each value is clamped to [lower, upper]: -5 -> 0, 20 -> 10; NULL and NaN
-- are skipped; +-Infinity clamp to the bounds
SELECT dp_sum(i, 0, 10) AS int_sum, dp_sum(b, 0, 10) AS bigint_sum,
       dp_count(i) AS int_count, dp_count(f) AS float_count, dp_count(*) AS rows
FROM c;
SELECT abs(dp_sum(f, 0, 10) - 30) < 1e-6 AS float_sum,      -- 0+0+3+7+10+10+0
       abs(dp_sum(r, 0, 10) - 30) < 1e-6 AS real_sum,
       abs(dp_sum(n, 0, 10) - 30) < 1e-6 AS numeric_sum
FROM c;
-- dp_avg does not count NaN: 30 / 7 over the non-NaN, non-NULL values
SELECT abs(dp_avg(f, 0, 10) - 30.0 / 7) < 1e-6 AS float_avg,
       abs(dp_avg(n, 0, 10) - 30.0 / 7) < 1e-6 AS numeric_avg,
       abs(dp_avg(i, 0, 10) - 20.0 / 5) < 1e-9 AS int_avg
FROM c;
-- negative and asymmetric bounds
SELECT dp_sum(i, -2, 4) AS sum_m2_4, dp_sum(i, -10, -1) AS sum_m10_m1, dp_sum(i, 5, 5) AS sum_5_5
FROM c;
SELECT dp_avg(i, 5, 5) AS avg_5_5, abs(dp_avg(i, -10, -1) + 1.8) < 1e-9 AS avg_m10_m1 FROM c;
-- bounds [0, 0]: sensitivity 0, nothing to hide, no noise at all
SELECT dp_sum(f, 0, 0, 1e-3) AS zero_float, dp_sum(i, 0, 0, 1e-3) AS zero_int FROM c;

-- Empty input still releases a noisy value: 0 (count, sum) and, when the
-- noisy count is below 1, the midpoint (average).
CREATE TABLE empty (i int, f float8, n numeric);
SELECT dp_count(*) AS n, dp_count(i) AS ni, dp_sum(i, 0, 10) AS si, dp_avg(i, 0, 10) AS ai,
       dp_avg(f, -4, 10) AS af, dp_avg(n, 1, 2) AS an
FROM empty;
SELECT abs(dp_sum(f, 0, 10)) < 1e-6 AS float_sum_near_0 FROM empty;
-- with epsilon = 1 the discrete Laplace noise of scale 1 has
-- P(|X| >= 23) = 2 e^-23 / (1 + e^-1) < 1e-9
SET dp_agg.epsilon = 1;
SELECT abs(dp_count(*)) <= 22 AS count_within_bound FROM empty;
SELECT abs(dp_count(i, 1)) <= 22 AS count_within_bound FROM empty;
SET dp_agg.epsilon = 1e9;
-- grouped: an empty table has no groups, so nothing is released
SELECT i, dp_count(*) FROM empty GROUP BY i;

-- Saturation: sums never overflow during accumulation (128 bits) and the
-- release is saturated to the range of its type.
CREATE TABLE big (b bigint, f float8);
INSERT INTO big SELECT 4611686018427387904, 1.7e308 FROM generate_series(1, 8);
SELECT dp_sum(b, 0, 4611686018427387904) AS saturated_bigint,
       dp_sum(f, 0, 1.7e308) AS saturated_double
FROM big;
SELECT dp_sum(-b, -4611686018427387904, 0) AS saturated_negative FROM big;
-- average of the same values: no overflow either (noise of scale
-- (upper - lower) / epsilon, relative 1e-9 here)
SELECT abs(dp_avg(b, 0, 4611686018427387904) / 4611686018427387904 - 1) < 1e-6 AS avg_bigint,
       abs(dp_avg(f, 0, 1.7e308) / 1.7e308 - 1) < 1e-6 AS avg_double
FROM big;
