--
-- variance: dp_var and dp_stddev, the population variance and standard
-- deviation of values clamped to [lower, upper] (README, "Aggregates").
-- Releases are checked by properties, never printed: at epsilon 1e9 the
-- noise of each of the three releases (count, centred sum, sum of centred
-- squares) is below 1e-6 of its bound except with probability about
-- 2 exp(-1e3), so the estimate is within 1e-6 of var_pop of the clamped
-- values (the count's noise is 0 on the integers).
--
SET dp_agg.group_keys = 'public';	-- keys of test data; private selection: below
SELECT dp_agg.set_budget(current_user::regrole, 1e15, 0.5);
CREATE TABLE vt (g int, i int, s smallint, b bigint, r real, d float8, n numeric, x float8);
INSERT INTO vt
SELECT k % 4, k % 37, (k % 11)::smallint, (k % 1000) * 1000, (k % 13) / 4.0, (k % 17) / 8.0,
       (k % 23) / 5.0, CASE WHEN k % 10 = 0 THEN NULL WHEN k % 10 = 1 THEN 'NaN'::float8
                            WHEN k % 10 = 2 THEN 'Infinity'::float8 ELSE k % 7 END
FROM generate_series(1, 4000) k;

-- result types: double precision, numeric for numeric
SET dp_agg.epsilon = 1;
SELECT pg_typeof(dp_var(s, 0, 10)) AS var_smallint, pg_typeof(dp_var(i, 0, 40)) AS var_int,
       pg_typeof(dp_var(b, 0, 10)) AS var_bigint, pg_typeof(dp_var(r, 0, 4)) AS var_real,
       pg_typeof(dp_var(d, 0, 3)) AS var_double, pg_typeof(dp_var(n, 0, 5)) AS var_numeric,
       pg_typeof(dp_stddev(i, 0, 40)) AS stddev_int, pg_typeof(dp_stddev(n, 0, 5)) AS stddev_numeric
FROM vt;

-- exact at epsilon 1e9, every type and form, against var_pop and stddev_pop
SELECT var_pop(s) AS e_s, var_pop(i) AS e_i, var_pop(b) AS e_b, var_pop(r) AS e_r,
       var_pop(d) AS e_d, var_pop(n) AS e_n, stddev_pop(i) AS e_sd_i, stddev_pop(n) AS e_sd_n,
       stddev_pop(d) AS e_sd_d, var_pop(least(greatest(i, 5), 20)) AS e_clamped
FROM vt \gset
SELECT var_pop(least(greatest(x, 0), 6)) AS e_x FROM vt WHERE x <> 'NaN' \gset
SET dp_agg.epsilon = 1e9;
SELECT abs(dp_var(s, 0, 10) - :e_s) < 1e-6 AS smallint,
       abs(dp_var(i, 0, 40, 1e9) - :e_i) < 1e-6 AS int,
       abs(dp_var(b, 0, 1000000, 1e9, 0) / :e_b - 1) < 1e-6 AS bigint,
       abs(dp_var(r, 0, 4) - :e_r) < 1e-6 AS real,
       abs(dp_var(d, 0, 3) - :e_d) < 1e-6 AS double,
       abs(dp_var(n, 0, 5) - :e_n) < 1e-6 AS numeric,
       abs(dp_stddev(i, 0, 40) - :e_sd_i) < 1e-6 AS stddev_int,
       abs(dp_stddev(n, 0, 5) - :e_sd_n) < 1e-6 AS stddev_numeric,
       abs(dp_stddev(d, 0, 3, 1e9, 1e-9) - :e_sd_d) < 1e-6 AS stddev_gaussian
FROM vt;

-- clamping: values outside the bounds count at the bounds; NULL and NaN
-- are skipped, Infinity is clamped
SELECT abs(dp_var(i, 5, 20) - :e_clamped) < 1e-6 AS clamped,
       abs(dp_var(x, 0, 6) - :e_x) < 1e-6 AS nan_skipped_infinity_clamped
FROM vt;

-- GROUP BY, serial and parallel, the same values
CREATE TABLE vt_exact AS SELECT g, var_pop(d) AS var_d, stddev_pop(i) AS sd_i, stddev_pop(n) AS sd_n
FROM vt GROUP BY g;
CREATE TEMP TABLE vt_ser AS SELECT g, dp_var(d, 0, 3) AS v, dp_stddev(i, 0, 40) AS sd FROM vt GROUP BY g;
SELECT s.g, abs(s.v - e.var_d) < 1e-6 AS var_ok, abs(s.sd - e.sd_i) < 1e-6 AS stddev_ok
FROM vt_ser s JOIN vt_exact e USING (g) ORDER BY g;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF) SELECT g, dp_var(d, 0, 3) FROM vt GROUP BY g;
CREATE TEMP TABLE vt_par AS SELECT g, dp_var(d, 0, 3) AS v, dp_stddev(n, 0, 5) AS sd FROM vt GROUP BY g;
SELECT s.g, abs(s.v - e.var_d) < 1e-6 AS var_ok, abs(s.sd - e.sd_n) < 1e-6 AS stddev_ok
FROM vt_par s JOIN vt_exact e USING (g) ORDER BY g;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- never negative, never above h^2: constant data (variance 0) and data at
-- the bounds (variance h^2 = 25), at epsilon 0.1, in 200 groups
CREATE TABLE vc AS SELECT k % 200 AS g, 5.0::float8 AS c, (k % 2) * 10.0::float8 AS e
FROM generate_series(1, 4000) k;
SELECT count(*) AS groups, count(*) FILTER (WHERE v0 >= 0 AND v0 <= 25) AS var0_in_range,
       count(*) FILTER (WHERE v1 >= 0 AND v1 <= 25) AS var25_in_range,
       count(*) FILTER (WHERE sd0 >= 0 AND sd0 <= 5) AS stddev_in_range
FROM (SELECT g, dp_var(c, 0, 10, 0.1) AS v0, dp_var(e, 0, 10, 0.1) AS v1,
             dp_stddev(c, 0, 10, 0.1) AS sd0
      FROM vc GROUP BY g) s;

-- empty input: 0 (the noisy count is below 1 or the estimate is clamped)
CREATE TABLE vempty (d float8, n numeric);
SELECT dp_var(d, 0, 10) >= 0 AS var_empty, dp_stddev(n, 0, 10) >= 0 AS stddev_empty FROM vempty;

-- a numeric release is rounded to the precision of its noise: its digits
-- stop one place below the first digit of its 95% half-width
SET dp_agg.epsilon = 1;
SELECT scale(dp_var(n, 0, 5)) BETWEEN 1 AND 4 AS rounded FROM vt;

-- the ledger: three releases, their shares of epsilon and delta, their
-- sensitivities (1, h, h^2 / 2)
SELECT dp_var(d, 0, 4, 1) IS NOT NULL AS released FROM vt;
SELECT d ->> 'aggregate' AS aggregate, r ->> 'release' AS release, r ->> 'mechanism' AS mechanism,
       round((r ->> 'epsilon')::numeric, 6) AS epsilon, (r ->> 'sensitivity')::float8 AS sensitivity
FROM dp_agg.my_ledger l, jsonb_array_elements(l.detail) d, jsonb_array_elements(d -> 'releases') r
WHERE l.id = (SELECT max(id) FROM dp_agg.my_ledger);
SELECT l.epsilon AS charged FROM dp_agg.my_ledger l WHERE l.id = (SELECT max(id) FROM dp_agg.my_ledger);
-- Gaussian: the three releases are calibrated jointly
SELECT dp_stddev(d, 0, 4, 1, 1e-6) IS NOT NULL AS released FROM vt;
SELECT r ->> 'release' AS release, r ->> 'mechanism' AS mechanism, r ->> 'calibration' AS calibration,
       round((r ->> 'delta')::numeric, 12) AS delta
FROM dp_agg.my_ledger l, jsonb_array_elements(l.detail) d, jsonb_array_elements(d -> 'releases') r
WHERE l.id = (SELECT max(id) FROM dp_agg.my_ledger);

-- preview: the same three rows
SELECT call, aggregate, release, mechanism, round(epsilon::numeric, 6) AS epsilon, sensitivity
FROM dp_agg.preview('SELECT dp_var(d, 0, 4, 1), dp_stddev(i, -10, 10, 0.5) FROM vt');

-- bad input: a clear error, nothing charged
SELECT count(*) AS ledger_before FROM dp_agg.my_ledger \gset
SELECT dp_var(d, 4, 0) FROM vt;
SELECT dp_var(d, 'NaN', 4) FROM vt;
SELECT dp_stddev(d, 0, 'Infinity') FROM vt;
SELECT dp_var(d, 0, 4, 0) FROM vt;
SELECT dp_var(d, 0, 4, 1, 1) FROM vt;
SELECT dp_var(d, 0, d) FROM vt;
SELECT dp_var(d, 0, 4) OVER () FROM vt;
SELECT count(*) = :ledger_before AS nothing_charged FROM dp_agg.my_ledger;

-- TABLESAMPLE BERNOULLI: the three releases from one sample are
-- amplified once, together
SELECT dp_var(d, 0, 4, 1) IS NOT NULL AS released FROM vt TABLESAMPLE BERNOULLI (50);
SELECT r ->> 'release' AS release, d -> 'sampling' ->> 'amplified' AS amplified,
       d -> 'sampling' ->> 'calibration' AS calibration
FROM dp_agg.my_ledger l, jsonb_array_elements(l.detail) d, jsonb_array_elements(d -> 'releases') r
WHERE l.id = (SELECT max(id) FROM dp_agg.my_ledger);

-- Renyi and PLD accounting record the three releases
CREATE ROLE regress_var_rdp;
CREATE ROLE regress_var_pld;
GRANT SELECT ON vt TO regress_var_rdp, regress_var_pld;
SELECT dp_agg.set_budget('regress_var_rdp', 10, 1e-5, 'rdp');
SELECT dp_agg.set_budget('regress_var_pld', 10, 1e-5, 'pld');
SET ROLE regress_var_rdp;
SELECT dp_var(d, 0, 4, 0.5) IS NOT NULL AS released FROM vt;
SELECT epsilon_spent, rdp IS NOT NULL AS has_curve FROM dp_agg.my_budget_curves;
RESET ROLE;
SET ROLE regress_var_pld;
SELECT dp_stddev(d, 0, 4, 0.5, 1e-7) IS NOT NULL AS released FROM vt;
SELECT epsilon_spent, jsonb_array_length(pld) AS kinds, pld_epsilon < 0.5 AS pld_tighter
FROM dp_agg.my_budget_curves;
RESET ROLE;

-- private selection of GROUP BY keys: the groups appear, the variance is
-- exact at epsilon 1e9
SET dp_agg.group_keys = 'private';
SET dp_agg.selection_epsilon = 1;
SET dp_agg.selection_delta = 1e-6;
CREATE TEMP TABLE vt_sel AS SELECT g, dp_var(d, 0, 3, 1e9) AS v FROM vt GROUP BY g;
SELECT s.g, abs(s.v - e.var_d) < 1e-6 AS var_ok FROM vt_sel s JOIN vt_exact e USING (g) ORDER BY g;
SET dp_agg.group_keys = 'public';

-- privacy units: each unit contributes at most max_rows_contributed rows'
-- worth at its own mean and mean square (README, "Privacy units"): with
-- every value 100, a unit of 1,000 rows leaves the variance 0 and the
-- average 100.  At epsilon 1e9 the variance keeps the noise of its sums
-- (the count's is 0): its error is (dQ - 2 t dC) / n to first order, two
-- independent Laplace noises whose standard deviation S is the release's
-- dp_noise_scale, so |error| > 20 S has probability at most
-- 2 exp(-20) = 4.1e-9 (each term beyond its share of 20 S, Laplace tails,
-- s1 + s2 <= sqrt(2) S); dp_stddev is its square root (its square checked
-- against the same S of the same rows and bounds).  The average's error,
-- one Laplace noise over n, is below 1e-6 by more than 100 of its S.
CREATE TABLE vu AS SELECT 1 AS person, 100::float8 AS cost FROM generate_series(1, 1000)
UNION ALL SELECT k + 1, 100 FROM generate_series(1, 50) k;
SELECT dp_agg.set_privacy_unit('vu', 'person');
SELECT abs(dp_avg(cost, 0, 200, 1e9) - 100) < 1e-6 AS avg_100,
       abs(dp_var(cost, 0, 200, 1e9)) < 20 * dp_noise_scale(dp_var(cost, 0, 200, 1e9))
         AND dp_noise_scale(dp_var(cost, 0, 200, 1e9)) < 1e-5 AS var_0,
       dp_stddev(cost, 0, 200, 1e9) ^ 2 < 20 * dp_noise_scale(dp_var(cost, 0, 200, 1e9)) AS stddev_0
FROM vu;
-- units with several rows: the weighted moments, with and without GROUP BY
CREATE TABLE vw AS SELECT k % 100 AS person, (k % 7)::float8 AS cost, k % 5 AS g
FROM generate_series(1, 10000) k;
SELECT dp_agg.set_privacy_unit('vw', 'person');
SET dp_agg.max_rows_contributed = 10;
-- every unit has 100 rows, all with the same 7 values in nearly equal
-- numbers: the weighted moments are those of the rows
SELECT var_pop(cost) AS e_vw FROM vw \gset
CREATE TABLE vw_exact AS SELECT g, var_pop(cost) AS v FROM vw GROUP BY g;
SELECT abs(dp_var(cost, 0, 10, 1e9) - :e_vw) < 1e-6 AS var_units FROM vw;
-- (each group holds 20 units: at the selection's epsilon 1 set above, one
-- of the 5 groups was dropped in 13 of 3,000 runs, 1 - selection_probability
-- (1, 1e-6, 20) = 7.4e-4 each; at epsilon 10 that probability rounds to 0
-- in double precision, below 1e-16 a group)
SET dp_agg.group_keys = 'private';
SET dp_agg.selection_epsilon = 10;
SELECT 1 - dp_agg.selection_probability(10, 1e-6, 20) < 1e-16 AS groups_kept;
CREATE TEMP TABLE vw_rel AS SELECT g, dp_var(cost, 0, 10, 1e9) AS v FROM vw GROUP BY g;
SET dp_agg.selection_epsilon = 1;
SET dp_agg.group_keys = 'public';
SELECT g, abs(r.v - e.v) < 1e-6 AS var_units_group FROM vw_rel r JOIN vw_exact e USING (g) ORDER BY g;
RESET dp_agg.max_rows_contributed;
-- the ledger records the bounded sensitivities
SELECT r ->> 'release' AS release, (r ->> 'sensitivity')::float8 AS sensitivity, d -> 'privacy_unit' AS unit
FROM dp_agg.my_ledger l, jsonb_array_elements(l.detail) d, jsonb_array_elements(d -> 'releases') r
WHERE l.id = (SELECT max(id) FROM dp_agg.my_ledger);

-- protected tables: an untrusted role with a grant runs dp_var and
-- dp_stddev; the exact aggregate is refused
CREATE ROLE regress_var_analyst;
SELECT dp_agg.set_budget('regress_var_analyst', 100, 1e-5);
SELECT dp_agg.protect('vt');
SELECT dp_agg.grant_access('vt', 'regress_var_analyst');
SET ROLE regress_var_analyst;
SELECT dp_var(d, 0, 3, 1) >= 0 AS var_ok, dp_stddev(i, 0, 40, 1) >= 0 AS stddev_ok FROM vt;
SELECT var_pop(d) FROM vt;
RESET ROLE;
SELECT dp_agg.unprotect('vt');

-- cleanup
DELETE FROM dp_agg.budget WHERE role::text LIKE 'regress_var_%';
DELETE FROM dp_agg.ledger WHERE role::text LIKE 'regress_var_%';
SELECT dp_agg.clear_privacy_unit('vu'), dp_agg.clear_privacy_unit('vw');
DROP TABLE vt, vt_exact, vc, vempty, vu, vw, vw_exact;
DROP ROLE regress_var_rdp, regress_var_pld, regress_var_analyst;
