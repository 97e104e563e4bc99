--
-- guard: which statements may compute DP aggregates.  Each rule of the
-- README ("What the guard accepts") with accepted and rejected examples.
-- Rejected statements charge nothing.
--
SET dp_agg.group_keys = 'public';	-- keys of test data; private selection: selection.sql
SET dp_agg.epsilon = 1e9;	-- integer releases are exact, see interface.sql
CREATE TABLE g_t (id int PRIMARY KEY, x int, y float8);
INSERT INTO g_t SELECT i, i % 30, i / 7.0 FROM generate_series(1, 300) i;
CREATE TABLE g_other (x int PRIMARY KEY, label text);
INSERT INTO g_other SELECT i, 'label ' || i FROM generate_series(0, 29) i;
SELECT epsilon_spent AS spent_before, (SELECT count(*) FROM dp_agg.ledger) AS charges_before
FROM dp_agg.my_budget \gset

--
-- Accepted
--
-- one table
SELECT dp_count(*) FROM g_t;
SELECT dp_count(*) FILTER (WHERE x > 14) AS filtered, dp_count(DISTINCT x) AS distinct_x FROM g_t;
-- a view that expands to one table, and a sub-query that reads one table
-- row by row
CREATE VIEW g_view AS SELECT id, x FROM g_t WHERE x >= 10;
SELECT dp_count(*), dp_sum(x, 0, 29) FROM g_view;
SELECT dp_sum(z, 0, 10) FROM (SELECT x % 10 AS z FROM g_t WHERE x > 3) s;
WITH rows AS (SELECT x FROM g_t WHERE id <= 100) SELECT dp_count(*) FROM rows;
-- GROUP BY, HAVING on the noisy value, ORDER BY
SELECT x % 3 AS g, dp_count(*) FROM g_t GROUP BY 1 HAVING dp_count(*) > 50 ORDER BY 1;
-- post-processing of a DP sub-query evaluated once: filter, window,
-- aggregation, a CTE
SELECT g, c FROM (SELECT x % 3 AS g, dp_count(*) AS c FROM g_t GROUP BY 1) s WHERE c > 10 ORDER BY g;
SELECT g, c, rank() OVER (ORDER BY g DESC) FROM (SELECT x % 3 AS g, dp_count(*) AS c FROM g_t GROUP BY 1) s ORDER BY g;
SELECT sum(c) AS total FROM (SELECT x % 3 AS g, dp_count(*) AS c FROM g_t GROUP BY 1) s;
WITH s AS (SELECT x % 3 AS g, dp_count(*) AS c FROM g_t GROUP BY 1) SELECT * FROM s ORDER BY g;
-- storing releases
CREATE TABLE g_results (g int, c bigint);
INSERT INTO g_results SELECT x % 3, dp_count(*) FROM g_t GROUP BY 1;
CREATE TABLE g_results2 AS SELECT dp_count(*) AS c FROM g_t;
SELECT (SELECT count(*) FROM g_results) AS inserted, (SELECT c FROM g_results2) AS created;
-- a partitioned table is one table
CREATE TABLE g_part (k int, v int) PARTITION BY RANGE (k);
CREATE TABLE g_part_1 PARTITION OF g_part FOR VALUES FROM (0) TO (100);
CREATE TABLE g_part_2 PARTITION OF g_part FOR VALUES FROM (100) TO (200);
INSERT INTO g_part SELECT i, i % 5 FROM generate_series(0, 199) i;
SELECT dp_count(*), dp_sum(v, 0, 4) FROM g_part;
-- constants and statement parameters, also through immutable built-in
-- operators in a generic plan
PREPARE g_prep(float8, int) AS SELECT dp_sum(x, -$2, $2, $1) FROM g_t;
SET plan_cache_mode = force_generic_plan;
EXECUTE g_prep(1e9, 10);
RESET plan_cache_mode;
DEALLOCATE g_prep;

--
-- Rejected: a row could feed a release twice, or a release be evaluated
-- more often than charged
--
SELECT dp_count(*) FROM g_t a JOIN g_t b USING (id);
SELECT dp_count(*) FROM g_t a, g_other b;
SELECT dp_count(*) FROM g_t LEFT JOIN g_other ON g_other.label = g_t.y::text;
SELECT dp_count(*) FROM LATERAL (SELECT * FROM g_t) s;
SELECT dp_count(*) FROM generate_series(1, 10) i;
SELECT dp_count(*), generate_series(1, 2) FROM g_t;
SELECT dp_count(*) FROM (VALUES (1), (2)) v(x);
SELECT dp_count(*) FROM g_t UNION ALL SELECT dp_count(*) FROM g_t;
SELECT dp_count(*) FROM (SELECT x FROM g_t UNION ALL SELECT x FROM g_t) u;
SELECT dp_count(*) FROM g_t INTERSECT SELECT 1;
SELECT dp_count(*) FROM (SELECT x FROM g_t EXCEPT SELECT x FROM g_other) e;
WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3)
SELECT dp_count(*) FROM g_t;
SELECT x % 3, dp_count(*) FROM g_t GROUP BY ROLLUP (x % 3);
SELECT x % 3, x % 5, dp_count(*) FROM g_t GROUP BY GROUPING SETS ((x % 3), (x % 5));
SELECT x % 3, dp_count(*) FROM g_t GROUP BY CUBE (x % 3);
SELECT (SELECT dp_count(*) FROM g_t) AS scalar;
SELECT count(*) FROM g_t WHERE x < (SELECT dp_count(*) FROM g_t);
SELECT (SELECT dp_count(*) FROM g_t i WHERE i.x = o.x) FROM g_t o;
SELECT x, sum(dp_count(*)) OVER () FROM g_t GROUP BY x;
SELECT * FROM (SELECT x, dp_count(*) AS c FROM g_t GROUP BY x) s JOIN g_other USING (x);
UPDATE g_results SET c = (SELECT dp_count(*) FROM g_t);
SELECT dp_count(*) FROM (SELECT dp_count(*) FROM g_t) s;
-- a SQL function inlined into a lateral join: the plan evaluates it once
-- per outer row, so the plan-level check rejects it
CREATE FUNCTION g_count_above(int) RETURNS TABLE (c bigint) LANGUAGE sql STABLE
AS 'SELECT dp_count(x, 1e9) FROM g_t WHERE x > $1';
SELECT * FROM generate_series(1, 3) i, LATERAL g_count_above(i);
-- a materialized CTE is not read as one table
WITH m AS MATERIALIZED (SELECT * FROM g_t) SELECT dp_count(*) FROM m;

--
-- Rejected: a release would depend on other rows than its own
--
SELECT dp_count(*) FROM g_t WHERE x > (SELECT avg(x) FROM g_t);
SELECT dp_sum(c, 0, 100) FROM (SELECT x, count(*) AS c FROM g_t GROUP BY x) s;
SELECT dp_count(*) FROM (SELECT * FROM g_t ORDER BY y LIMIT 10) s;
SELECT dp_count(*) FROM (SELECT DISTINCT x FROM g_t) s;
SELECT dp_count(*) FROM (SELECT x, rank() OVER (ORDER BY y) FROM g_t) s;
SELECT dp_count(*) FROM (SELECT * FROM g_t FOR UPDATE) s;
CREATE VIEW g_join_view AS SELECT g_t.x, label FROM g_t JOIN g_other ON g_other.x < g_t.x;
SELECT dp_count(*) FROM g_join_view;

--
-- Rejected: the noise or the price would depend on the data
--
SELECT dp_count(x, x::float8) FROM g_t;
SELECT dp_sum(x, 0, (random() * 10)::int, 1) FROM g_t;
-- a stable built-in function is not decided before execution either (this
-- one reads the table's statistics)
SELECT dp_sum(x, 0, pg_stat_get_live_tuples('g_t'::regclass)::int, 1) FROM g_t;
SELECT dp_sum(x, 0, x, 1) FROM g_t;
SELECT dp_count(x, (SELECT 1.0::float8)) FROM g_t;
SELECT dp_count(*) FROM g_t TABLESAMPLE BERNOULLI (random() * 100);

-- EXPLAIN plans the statement through the same checks
EXPLAIN (COSTS OFF) SELECT dp_count(*) FROM g_t a JOIN g_t b USING (id);

-- none of the rejected statements was charged: the 14 accepted statements
-- above were charged once each (the CTE and the INSERT, the CREATE TABLE AS
-- and the prepared statement included)
SELECT (SELECT count(*) FROM dp_agg.ledger) - :charges_before AS charges;
