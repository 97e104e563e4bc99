--
-- parallel: DP aggregates run as partial aggregates in parallel workers
-- and combine exactly; noise is drawn once, in the leader.
--
SET dp_agg.group_keys = 'public';	-- keys of test data; private selection: selection.sql
CREATE TABLE par (g int, i int, b bigint, f float8, r real, n numeric);
INSERT INTO par
SELECT k % 10, k % 100, k, (k % 16) / 4.0, (k % 8) / 2.0, (k % 40) / 8.0
FROM generate_series(1, 200000) k;
ANALYZE par;

SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET dp_agg.epsilon = 1e9;

EXPLAIN (COSTS OFF)
SELECT dp_count(*), dp_sum(i, 0, 99), dp_avg(f, 0, 4) FROM par;
EXPLAIN (COSTS OFF)
SELECT g, dp_count(*), dp_sum(b, 0, 200000) FROM par GROUP BY g;

-- integer releases equal the exact answers (noise 0 except with
-- probability about 2 exp(-1e9)); the others carry Laplace noise of scale
-- at most 5e-9 and lie within 1e-6 of them except with probability below
-- 1e-80
SELECT dp_count(*) AS n, dp_count(i) AS ni, dp_sum(i, 0, 99) AS si,
       dp_sum(b, 0, 200000) AS sb
FROM par;
SELECT count(*) AS n, count(i) AS ni, sum(i) AS si, sum(b) AS sb FROM par;
SELECT abs(dp_sum(f, 0, 4) - 375000) < 1e-6 AS sum_double,
       abs(dp_sum(r, 0, 4) - 350000) < 1e-6 AS sum_real,
       abs(dp_sum(n, 0, 5) - 487500) < 1e-6 AS sum_numeric,
       abs(dp_avg(f, 0, 4) - 1.875) < 1e-6 AS avg_double,
       abs(dp_avg(i, 0, 99) - 49.5) < 1e-6 AS avg_int
FROM par;
SELECT sum(f) AS f, sum(r) AS r, sum(n) AS n, avg(f) AS af, avg(i) AS ai FROM par;

SELECT g, dp_count(*) AS n, dp_sum(b, 0, 200000) AS sb FROM par GROUP BY g ORDER BY g;
SELECT g, count(*) AS n, sum(b) AS sb FROM par GROUP BY g ORDER BY g;

-- the same releases in a serial plan
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF)
SELECT dp_count(*), dp_sum(i, 0, 99) FROM par;
SELECT dp_count(*) AS n, dp_sum(i, 0, 99) AS si, dp_sum(b, 0, 200000) AS sb FROM par;
RESET max_parallel_workers_per_gather;

-- a release is charged once, by the leader, whatever the number of workers
SELECT count(*) AS charges_before FROM dp_agg.ledger \gset
SET dp_agg.epsilon = 1;
SELECT dp_count(*) IS NOT NULL AS released FROM par;
SELECT count(*) - :charges_before AS new_charges FROM dp_agg.ledger;
