--
-- unit_sample: TABLESAMPLE on a relation with a privacy unit samples units
-- (README, "Subsampling").  dp_agg.secure_bernoulli (p), and BERNOULLI (p)
-- without REPEATABLE, keep or drop each unit with all its rows, under a
-- secret key drawn for each execution, and the releases are amplified at
-- the level of units in every accounting mode.  At epsilon 1e9 an integer
-- release is exact except with probability below 1e-300.  The statistical
-- suite (test/stat/test_unit_sampling.py) checks the inclusion rate.
--
\set VERBOSITY default
\set SHOW_CONTEXT never
CREATE FUNCTION us_try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN EXECUTE q; RETURN 'no error';
EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE || ': ' || SQLERRM; END $$;
SELECT dp_agg.set_budget(current_user::regrole, 1e15, 0.5);
CREATE FUNCTION us_plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN RETURN QUERY EXECUTE 'EXPLAIN (COSTS OFF) ' || q; END $$;
-- 200 units, unit u with 1 + u % 10 rows (1,100 rows)
CREATE TABLE us_t (u int, g int, x int);
INSERT INTO us_t SELECT u, u % 4, r FROM generate_series(0, 199) u, generate_series(0, 9) r
WHERE r <= u % 10;
CREATE TEMP TABLE us_rows AS SELECT u, count(*) AS n FROM us_t GROUP BY u;
SELECT dp_agg.set_privacy_unit('us_t', 'u');
SET dp_agg.epsilon = 1e9;
SET dp_agg.max_rows_contributed = 10;
CREATE TABLE us_other_plain AS SELECT u FROM us_t;
CREATE VIEW us_last AS
SELECT l.epsilon, l.delta, l.detail -> 0 AS call FROM dp_agg.ledger l
WHERE l.id = (SELECT max(id) FROM dp_agg.ledger);

-- every unit at 100%, none at 0%
SELECT dp_count(*) AS all_rows FROM us_t TABLESAMPLE dp_agg.secure_bernoulli (100);
SELECT dp_count(*) AS no_rows FROM us_t TABLESAMPLE dp_agg.secure_bernoulli (0);
SELECT call -> 'sampling' AS sampling FROM us_last;
-- all rows of a unit together: each group of one unit (GROUP BY u, public
-- keys) holds all its rows or is absent, in 5 executions (the bound of 10
-- rows is each unit's row count); the samples of two executions differ
-- (fresh keys: equal with probability 2^-200 at most, as each unit's
-- inclusion is a fair coin).  The units kept in 5 executions are
-- Binomial(1000, 1/2): outside [300, 700] with probability below 1e-30.
SET dp_agg.group_keys = 'public';
CREATE TEMP TABLE us_runs (run int, u int, c bigint);
DO $$
BEGIN
    FOR i IN 1..5 LOOP
        INSERT INTO us_runs SELECT i, u, dp_count(*) FROM us_t TABLESAMPLE dp_agg.secure_bernoulli (50) GROUP BY u;
    END LOOP;
END $$;
SELECT count(DISTINCT run) AS runs, bool_and(r.c = n.n) AS whole_units,
       count(*) BETWEEN 300 AND 700 AS plausible_size
FROM us_runs r JOIN us_rows n USING (u);
SELECT count(*) AS differing_runs FROM (
  SELECT run, array_agg(u ORDER BY u) AS units FROM us_runs GROUP BY run) a
WHERE units <> (SELECT array_agg(u ORDER BY u) FROM us_runs WHERE run = 1);
-- BERNOULLI without REPEATABLE samples units the same way
DELETE FROM us_runs;
INSERT INTO us_runs SELECT 1, u, dp_count(*) FROM us_t TABLESAMPLE BERNOULLI (50) GROUP BY u;
SELECT bool_and(r.c = n.n) AS whole_units_bernoulli FROM us_runs r JOIN us_rows n USING (u);
SELECT call -> 'sampling' ->> 'method' AS method, call -> 'sampling' -> 'units' AS units FROM us_last;
-- REPEATABLE and SYSTEM sample rows and pages as without a unit: no
-- amplification (a notice says why), each unit still bounded
DELETE FROM us_runs;
INSERT INTO us_runs SELECT 1, u, dp_count(*) FROM us_t TABLESAMPLE BERNOULLI (50) REPEATABLE (7) GROUP BY u;
SELECT bool_and(r.c <= n.n) AS rows_sampled, bool_or(r.c < n.n) AS partial_units
FROM us_runs r JOIN us_rows n USING (u);
SELECT call -> 'sampling' AS sampling FROM us_last;
SELECT dp_count(*) >= 0 AS released FROM us_t TABLESAMPLE SYSTEM (50);
RESET dp_agg.group_keys;
DROP TABLE us_runs;
-- through a view, a sub-query, a join to a lookup table, with GROUP BY and
-- private selection (fused path), over a partitioned table (the same
-- unit's rows in every partition sampled together)
CREATE VIEW us_view AS SELECT * FROM us_t TABLESAMPLE dp_agg.secure_bernoulli (100) WHERE x >= 0;
SELECT dp_count(*) AS through_view FROM us_view;
SELECT dp_count(*) AS sub_query FROM (SELECT * FROM us_t TABLESAMPLE dp_agg.secure_bernoulli (100)) s;
CREATE TABLE us_groups (g int PRIMARY KEY, label text);
INSERT INTO us_groups VALUES (0, 'a'), (1, 'b'), (2, 'c'), (3, 'd');
SELECT dp_count(*) AS lookup FROM us_t TABLESAMPLE dp_agg.secure_bernoulli (100) JOIN us_groups USING (g);
SET dp_agg.selection_epsilon = 1e9;
SET dp_agg.selection_delta = 1e-10;
SELECT label, dp_count(*) AS units FROM us_t TABLESAMPLE dp_agg.secure_bernoulli (100)
JOIN us_groups USING (g) GROUP BY label ORDER BY label;
CREATE TABLE us_p (u int, x int) PARTITION BY RANGE (x);
CREATE TABLE us_p0 PARTITION OF us_p FOR VALUES FROM (0) TO (5);
CREATE TABLE us_p1 PARTITION OF us_p FOR VALUES FROM (5) TO (100);
INSERT INTO us_p SELECT u, x FROM us_t;
SELECT dp_agg.set_privacy_unit('us_p', 'u');
SET dp_agg.group_keys = 'public';
CREATE TEMP TABLE us_runs AS SELECT u, dp_count(*) AS c FROM us_p TABLESAMPLE dp_agg.secure_bernoulli (50) GROUP BY u;
SELECT bool_and(r.c = n.n) AS whole_units_across_partitions FROM us_runs r JOIN us_rows n USING (u);
DROP TABLE us_runs;
-- in parallel plans (the partitions of us_p: on a plain table the sample
-- scan is never parallel, below): the workers sample with the leader's key
-- (units kept: Binomial(200, 1/2), outside [60, 140] with probability
-- below 2e-8)
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
SELECT count(*) FILTER (WHERE p ~ 'Gather') AS gathers, count(*) FILTER (WHERE p ~ 'Parallel Seq Scan') AS parallel_scans
FROM us_plan($$SELECT u, dp_count(*) FROM us_p TABLESAMPLE dp_agg.secure_bernoulli (50) GROUP BY u$$) p;
CREATE TEMP TABLE us_runs AS SELECT u, dp_count(*) AS c FROM us_p TABLESAMPLE dp_agg.secure_bernoulli (50) GROUP BY u;
SELECT bool_and(r.c = n.n) AS whole_units_parallel, count(*) BETWEEN 60 AND 140 AS plausible_units
FROM us_runs r JOIN us_rows n USING (u);
DROP TABLE us_runs;
RESET parallel_leader_participation;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET dp_agg.group_keys;

-- the price: amplified at the level of units.  Laplace: the noise is
-- calibrated to the base epsilon that the rate amplifies to the epsilon
-- paid, with the unit's sensitivity (R = 10 rows)
SELECT dp_count(x, 1) IS NOT NULL AS released FROM us_t TABLESAMPLE dp_agg.secure_bernoulli (10);
SELECT epsilon, call -> 'sampling' ->> 'method' AS method, call -> 'sampling' -> 'units' AS units,
       (call -> 'sampling' ->> 'rate')::float8 = round(2.0::float8 ^ 32 * 10::real / 100) / 2.0::float8 ^ 32 AS rate_is_cutoff,
       call -> 'sampling' -> 'amplified' AS amplified,
       (call -> 'sampling' ->> 'base_epsilon')::float8
         = dp_agg.base_epsilon(1, (call -> 'sampling' ->> 'rate')::float8) AS base_epsilon_ok,
       call ->> 'sensitivity' AS sensitivity,
       (call ->> 'noise_scale')::float8
         = dp_agg.laplace_scale((call -> 'sampling' ->> 'base_epsilon')::float8, 10) AS scale_ok
FROM us_last;
-- Gaussian: no larger than the unamplified sigma, and meeting the base
-- guarantee (epsilon0, delta / q) of the amplification, or the Renyi
-- calibration of the sampled Gaussian
SELECT dp_count(x, 1, 1e-6) IS NOT NULL AS released FROM us_t TABLESAMPLE dp_agg.secure_bernoulli (10);
SELECT call -> 'sampling' ->> 'calibration' AS calibration,
       (call ->> 'noise_scale')::float8 < dp_agg.gaussian_sigma(1, 1e-6, 10) AS smaller_than_unamplified,
       CASE call -> 'sampling' ->> 'calibration'
         WHEN 'amplified' THEN dp_agg.gaussian_delta((call ->> 'noise_scale')::float8,
                                                     (call -> 'sampling' ->> 'base_epsilon')::float8, 10)
                               <= 1e-6 / (call -> 'sampling' ->> 'rate')::float8
         ELSE dp_agg.sampled_gaussian_epsilon((call -> 'sampling' ->> 'rate')::float8,
                                              (call ->> 'noise_scale')::float8 / 10, 1, 1e-6) <= 1 + 1e-9
       END AS private
FROM us_last;
-- several releases from one sample of units are one mechanism on it,
-- amplified once: their base epsilons (sensitivity / scale) add up to the
-- base epsilon of the statement's price (1.5)
SELECT dp_sum(x, 0, 9, 0.5) IS NOT NULL AS a, dp_avg(x, 0, 9, 1) IS NOT NULL AS b
FROM us_t TABLESAMPLE dp_agg.secure_bernoulli (25);
SELECT count(*) FILTER (WHERE c -> 'sampling' ->> 'calibration' = 'shared') AS shared,
       bool_and((c -> 'sampling' -> 'units')::boolean) AS units,
       dp_agg.amplified_epsilon(sum((r ->> 'sensitivity')::float8 / (r ->> 'noise_scale')::float8),
                                min((c -> 'sampling' ->> 'rate')::float8)) BETWEEN 1.5 - 1e-9 AND 1.5 AS amplified_to_price
FROM dp_agg.ledger l, jsonb_array_elements(l.detail) c, jsonb_array_elements(c -> 'releases') r
WHERE l.id = (SELECT max(id) FROM dp_agg.ledger);
-- preview shows the sample of units and the same noise
SELECT sampling -> 'units' AS units, sampling ->> 'method' AS method,
       (sampling ->> 'base_epsilon')::float8 = dp_agg.base_epsilon(1, (sampling ->> 'rate')::float8) AS base_epsilon_ok,
       noise_scale = dp_agg.laplace_scale((sampling ->> 'base_epsilon')::float8, 10) AS scale_ok
FROM dp_agg.preview('SELECT dp_count(x, 1) FROM us_t TABLESAMPLE dp_agg.secure_bernoulli (10)');
-- Renyi accounting: the curve charged is the Renyi DP of the Poisson-
-- subsampled discrete Laplace at the rate, scale and sensitivity of units
CREATE ROLE regress_us_rdp;
CREATE ROLE regress_us_pld;
SELECT dp_agg.set_budget('regress_us_rdp', 100, 1e-5, 'rdp');
SELECT dp_agg.set_budget('regress_us_pld', 100, 1e-5, 'pld');
GRANT SELECT ON us_t TO regress_us_rdp, regress_us_pld;
SET ROLE regress_us_rdp;
SELECT dp_count(x, 1) IS NOT NULL AS released FROM us_t TABLESAMPLE dp_agg.secure_bernoulli (10);
RESET ROLE;
SELECT bool_and(abs(l.rdp[i] / c.v[i] - 1) < 1e-9) AS curve_of_sampled_units
FROM dp_agg.ledger l,
     LATERAL (SELECT dp_agg.rdp_sampled_laplace((l.detail -> 0 -> 'sampling' ->> 'rate')::float8,
                                                (l.detail -> 0 ->> 'noise_scale')::float8,
                                                (l.detail -> 0 ->> 'sensitivity')::float8,
                                                dp_agg.rdp_orders()) AS v) c,
     generate_series(1, array_length(l.rdp, 1)) i
WHERE l.id = (SELECT max(id) FROM dp_agg.ledger);
-- PLD accounting: the release is a subsampled one of the units' rate and
-- sensitivity (the budget's record), and composes below basic composition
SET ROLE regress_us_pld;
SELECT dp_count(x, 1) IS NOT NULL AS released FROM us_t TABLESAMPLE dp_agg.secure_bernoulli (10);
RESET ROLE;
SELECT k ->> 'mechanism' AS mechanism, k ->> 'sensitivity' AS sensitivity,
       (k ->> 'rate')::float8 = round(2.0::float8 ^ 32 * 10::real / 100) / 2.0::float8 ^ 32 AS rate_is_cutoff
FROM dp_agg.budget b, jsonb_array_elements(b.pld) k WHERE b.role = 'regress_us_pld'::regrole;
SELECT dp_agg.spent_epsilon('regress_us_pld', 1e-5) < 1 AS less_than_basic;

-- How the sample is read (unit_sample.c).  On a plain heap table whose unit
-- has a fixed length, a sample scan by the internal method
-- dp_agg_internal.unit_scan hands over only the rows of the units kept, the
-- condition still in its filter; on the partitions of us_p, and for a unit
-- of varying length, the condition alone.
SELECT p FROM us_plan($$SELECT dp_count(*) FROM us_t TABLESAMPLE dp_agg.secure_bernoulli (50)$$) p
WHERE p ~ 'Scan|Sampling|unit_sampled';
SELECT p FROM us_plan($$SELECT dp_count(*) FROM us_p TABLESAMPLE dp_agg.secure_bernoulli (50)$$) p
WHERE p ~ 'Scan|Sampling';
-- the scan reads the unit in place wherever it is in the tuple: after a
-- column of varying length and a dropped one (no cached offset), a bigint
-- and a uuid (fixed length, passed by reference); NULL units are never
-- read.  Whole units in each, at 100% every row, and the units kept in 5
-- executions at 50% Binomial(1000, 1/2) (outside [300, 700]: below 1e-30).
CREATE TABLE us_wide (note text, gone int, u bigint, id uuid, x int);
INSERT INTO us_wide SELECT repeat('n', u % 7), 0, u, md5(u::text)::uuid, r
FROM us_t t(u, g, r);
INSERT INTO us_wide VALUES ('no unit', 0, NULL, NULL, 1);
ALTER TABLE us_wide DROP COLUMN gone;
CREATE TABLE us_wide_id AS SELECT * FROM us_wide;
SELECT dp_agg.set_privacy_unit('us_wide', 'u');
SELECT dp_agg.set_privacy_unit('us_wide_id', 'id');
SELECT count(*) AS unit_scans FROM (
  SELECT p FROM us_plan($$SELECT dp_count(*) FROM us_wide TABLESAMPLE dp_agg.secure_bernoulli (50)$$) p
  UNION ALL
  SELECT p FROM us_plan($$SELECT dp_count(*) FROM us_wide_id TABLESAMPLE dp_agg.secure_bernoulli (50)$$) p) e
WHERE p ~ 'unit_scan';
SELECT dp_count(*) AS all_rows_bigint FROM us_wide TABLESAMPLE dp_agg.secure_bernoulli (100);
SELECT dp_count(*) AS all_rows_uuid FROM us_wide_id TABLESAMPLE dp_agg.secure_bernoulli (100);
SET dp_agg.group_keys = 'public';
CREATE TEMP TABLE us_runs (run int, u bigint, c bigint);
CREATE TEMP TABLE us_runs_id (run int, id uuid, c bigint);
DO $$
BEGIN
    FOR i IN 1..5 LOOP
        INSERT INTO us_runs SELECT i, u, dp_count(*) FROM us_wide TABLESAMPLE dp_agg.secure_bernoulli (50) GROUP BY u;
        INSERT INTO us_runs_id SELECT i, id, dp_count(*) FROM us_wide_id TABLESAMPLE dp_agg.secure_bernoulli (50) GROUP BY id;
    END LOOP;
END $$;
INSERT INTO us_runs SELECT -r.run, m.u, r.c FROM us_runs_id r JOIN (SELECT DISTINCT id, u FROM us_wide) m USING (id);
SELECT CASE WHEN run > 0 THEN 'bigint' ELSE 'uuid' END AS unit, bool_and(r.c = n.n) AS whole_units,
       count(*) BETWEEN 300 AND 700 AS plausible_size, count(*) FILTER (WHERE r.u IS NULL) AS null_units
FROM us_runs r LEFT JOIN us_rows n USING (u) GROUP BY 1 ORDER BY 1;
DROP TABLE us_runs, us_runs_id;
RESET dp_agg.group_keys;
-- a unit of varying length: the condition alone
CREATE TABLE us_text AS SELECT u::text AS u, x FROM us_t;
SELECT dp_agg.set_privacy_unit('us_text', 'u');
SELECT p FROM us_plan($$SELECT dp_count(*) FROM us_text TABLESAMPLE dp_agg.secure_bernoulli (50)$$) p
WHERE p ~ 'Scan|Sampling';
SELECT dp_agg.clear_privacy_unit('us_text');
DROP TABLE us_text;
-- the scan reads only the tuples the statement's snapshot sees: rows
-- inserted by a transaction that added columns and rolled back are of
-- another shape (their bytes, read with today's columns, were taken for a
-- length, and the server crashed here), and deleted rows are not read
-- either; at 100% the 40 visible rows, each its own unit
CREATE TABLE us_shape (id int) WITH (autovacuum_enabled = off);
BEGIN;
ALTER TABLE us_shape ADD COLUMN a int, ADD COLUMN b int, ADD COLUMN c text;
INSERT INTO us_shape SELECT i, -4, -4, 'z' FROM generate_series(1, 5) i;
ROLLBACK;
ALTER TABLE us_shape ADD COLUMN s text, ADD COLUMN u int;
INSERT INTO us_shape SELECT i, 'x', i FROM generate_series(1, 50) i;
DELETE FROM us_shape WHERE u > 40;
SELECT dp_agg.set_privacy_unit('us_shape', 'u');
SELECT count(*) AS unit_scans
FROM us_plan($$SELECT dp_count(*) FROM us_shape TABLESAMPLE dp_agg.secure_bernoulli (100)$$) p
WHERE p ~ 'unit_scan';
SELECT dp_count(*) AS visible_rows FROM us_shape TABLESAMPLE dp_agg.secure_bernoulli (100);
SELECT dp_agg.clear_privacy_unit('us_shape');
DROP TABLE us_shape;
-- the method is the rewrite's only: an analyst's TABLESAMPLE clause has no
-- mark, in a DP statement or any other
SELECT us_try($$SELECT count(*) FROM us_other_plain TABLESAMPLE dp_agg_internal.unit_scan (50, 1::int2)$$) AS plain;
SELECT us_try($$SELECT dp_count(*) FROM us_other_plain TABLESAMPLE dp_agg_internal.unit_scan (50, 1::int2)$$) AS dp;
SELECT us_try($$SELECT dp_count(*) FROM us_t TABLESAMPLE dp_agg_internal.unit_scan (50, 1::int2)$$) AS dp_units;

-- the key of the sample is never shown, and only superusers set it; the
-- function is the rewrite's only
SHOW dp_agg.unit_sample_key;
SELECT us_try($$SELECT dp_agg_internal.unit_sampled(1, 10, 0)$$);
SELECT us_try($$SELECT dp_count(*) FROM us_t WHERE dp_agg_internal.unit_sampled(u, 10, 0)$$);
SELECT us_try($$SELECT count(*) FROM us_t WHERE dp_agg_internal.unit_sampled(u, 10, 0)$$);
CREATE FUNCTION us_sampled(int) RETURNS boolean LANGUAGE sql AS 'SELECT dp_agg_internal.unit_sampled($1, 50::real, 0)';
SELECT us_try($$SELECT dp_count(*) FROM us_t TABLESAMPLE dp_agg.secure_bernoulli (50) WHERE us_sampled(u)$$);
-- a parallel worker of another statement finds no key, and while a
-- statement that samples units runs, no other statement of its process
-- may run the function (checked before its workers start)
CREATE VIEW us_samples AS SELECT dp_agg_internal.unit_sampled(u, 50::real, 0) AS s FROM us_t;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
SELECT split_part(us_try($$SELECT count(*) FROM us_samples WHERE s$$), ':', 1) AS refused;
CREATE TABLE us_other AS SELECT u FROM us_t;
CREATE FUNCTION us_nested(bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN SELECT count(*) INTO n FROM us_other WHERE dp_agg_internal.unit_sampled(u, 50::real, 0); RETURN n; END $$;
SELECT us_try($$SELECT us_nested(dp_count(*)) FROM us_t TABLESAMPLE dp_agg.secure_bernoulli (50)$$) AS nested;
RESET parallel_leader_participation;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET ROLE regress_us_rdp;
SELECT split_part(us_try($$SET dp_agg.unit_sample_key = '00000000000000000000000000000000'$$), ':', 1) AS set_refused;
RESET ROLE;
-- a unit column of a type without a hash function agreeing with its
-- equality cannot be sampled (nor can other methods be used)
CREATE TABLE us_bits (b varbit, x int);
INSERT INTO us_bits VALUES (B'101', 1), (B'11', 2);
SELECT dp_agg.set_privacy_unit('us_bits', 'b');
SELECT dp_count(*) AS units_of_bits FROM us_bits;
SELECT dp_count(*) FROM us_bits TABLESAMPLE dp_agg.secure_bernoulli (50);
SELECT dp_agg.clear_privacy_unit('us_bits');

-- a protected relation, by an untrusted role with a grant
CREATE ROLE regress_us_analyst;
SELECT dp_agg.set_budget('regress_us_analyst', 1e12, 0.5);
SELECT dp_agg.protect('us_t');
SELECT dp_agg.grant_access('us_t', 'regress_us_analyst');
SET ROLE regress_us_analyst;
SET dp_agg.max_rows_contributed = 1;
SELECT dp_count(*) AS units FROM us_t TABLESAMPLE dp_agg.secure_bernoulli (100);
SELECT dp_count(*) BETWEEN 0 AND 200 AS released FROM us_t TABLESAMPLE dp_agg.secure_bernoulli (50);
SELECT dp_count(*) FROM us_t TABLESAMPLE BERNOULLI (50);
SELECT split_part(us_try($$SHOW dp_agg.unit_sample_key$$), ':', 1) AS show_refused;
RESET ROLE;
SELECT dp_agg.unprotect('us_t');

RESET dp_agg.selection_epsilon;
RESET dp_agg.selection_delta;
RESET dp_agg.max_rows_contributed;
SELECT dp_agg.clear_privacy_unit('us_t');
SELECT dp_agg.clear_privacy_unit('us_p');
DROP VIEW us_last, us_view, us_samples;
SELECT dp_agg.clear_privacy_unit('us_wide');
SELECT dp_agg.clear_privacy_unit('us_wide_id');
DROP FUNCTION us_sampled(int), us_nested(bigint), us_plan(text);
DROP TABLE us_t, us_groups, us_p, us_bits, us_rows, us_other, us_other_plain, us_wide, us_wide_id;
DELETE FROM dp_agg.budget WHERE role::text LIKE 'regress_us_%';
DELETE FROM dp_agg.ledger WHERE role::text LIKE 'regress_us_%';
DROP ROLE regress_us_rdp, regress_us_pld, regress_us_analyst;
DROP FUNCTION us_try(text);
