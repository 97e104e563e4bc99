--
-- protect_attack: 199 attacks on a protected table by an untrusted role
-- that has a grant (dp_agg.grant_access) and no SELECT (108-110: by one
-- that holds SELECT instead).  Each attack must be
-- refused, or return only DP values and be charged; none may crash or
-- hang (statement_timeout).  Released values are shown only as properties
-- (never the noisy numbers); the ledger count at the end checks that every
-- accepted statement was charged.  README, "Protected tables".
--
\set SHOW_CONTEXT never
\set VERBOSITY terse
SET statement_timeout = '20s';

CREATE ROLE regress_pa_owner;
CREATE ROLE regress_pa_analyst;
CREATE SCHEMA pa;
GRANT USAGE ON SCHEMA pa TO PUBLIC;
CREATE TABLE pa.people (id int PRIMARY KEY, age int, name text, salary numeric);
INSERT INTO pa.people
SELECT i, 18 + i % 70, CASE WHEN i % 97 = 0 THEN NULL ELSE 'name' || i END, (i % 1000) * 100.5
FROM generate_series(1, 2000) i;
CREATE TABLE pa.other (id int);
INSERT INTO pa.other SELECT generate_series(1, 10);
CREATE SEQUENCE pa.s;
CREATE VIEW pa.v AS SELECT id, age, name FROM pa.people;
ALTER TABLE pa.people OWNER TO regress_pa_owner;
ALTER VIEW pa.v OWNER TO regress_pa_owner;
ALTER SEQUENCE pa.s OWNER TO regress_pa_owner;
ANALYZE pa.people;
GRANT SELECT ON pa.v, pa.other TO regress_pa_analyst;
GRANT USAGE ON SEQUENCE pa.s TO regress_pa_analyst;
CREATE TABLE pa.sales (id int, region text, amount int) PARTITION BY LIST (region);
CREATE TABLE pa.sales_pub PARTITION OF pa.sales FOR VALUES IN ('pub');
CREATE TABLE pa.sales_sec PARTITION OF pa.sales FOR VALUES IN ('sec');
INSERT INTO pa.sales VALUES (1, 'pub', 10), (2, 'sec', 20);
CREATE TABLE pa.inh_parent (id int, amount int);
CREATE TABLE pa.inh_sec () INHERITS (pa.inh_parent);
INSERT INTO pa.inh_sec VALUES (3, 30);
GRANT SELECT ON pa.sales, pa.inh_parent TO regress_pa_analyst;
CREATE FUNCTION pa.tick() RETURNS boolean LANGUAGE plpgsql STABLE
AS 'BEGIN RAISE NOTICE ''tick''; RETURN true; END';
CREATE OPERATOR pa.### (RIGHTARG = oid, FUNCTION = pg_stat_get_live_tuples);
CREATE DOMAIN pa.small AS oid CHECK (pg_stat_get_live_tuples(VALUE) < 1000);
SELECT dp_agg.protect('pa.sales_sec');
SELECT dp_agg.protect('pa.inh_sec');
SELECT dp_agg.protect('pa.people');
SELECT dp_agg.grant_access('pa.people', 'regress_pa_analyst');
SELECT dp_agg.set_budget('regress_pa_analyst', 1e12, 0.5);

SET ROLE regress_pa_analyst;
SELECT count(*) AS ledger_before FROM dp_agg.my_ledger \gset

-- 1-10: exact aggregates, window functions and GROUP BY next to DP ones
-- (GROUP BY without the settings of private selection: refused; with
-- them: 86-107)
SELECT dp_count(id, 1e-15), count(*) FROM pa.people;
SELECT dp_count(id, 1e-15), string_agg(name, ',') FROM pa.people;
SELECT dp_count(id, 1) FROM pa.people HAVING count(*) > 100;
SELECT dp_count(id, 1) FROM pa.people ORDER BY sum(salary);
SELECT dp_count(id, 1), count(*) OVER () FROM pa.people;
SELECT id, dp_count(id, 1) FROM pa.people GROUP BY id;
SELECT name, dp_sum(salary, 0, 1e5, 1) FROM pa.people GROUP BY name;
SELECT dp_count(DISTINCT id, 1) FROM pa.people;
SELECT n, m FROM (SELECT dp_count(id, 1) AS n, max(age) AS m FROM pa.people) s;
SELECT count(*) FROM (SELECT dp_count(id, 1) AS n FROM pa.people) s;

-- 11-20: errors that depend on row values: the calls that fail on a row
-- yield NULL for it, the statement runs (DP values only, charged); a
-- pattern that varies with the row, and row_to_json, are refused
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people WHERE 1 / (age - 50) > 0;
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people WHERE name::int > 0;
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people WHERE age::text::int2 > 0;
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people WHERE salary::int > 0;
SELECT dp_sum(age * 100000000, 0, 10, 1) IS NOT NULL AS released FROM pa.people;
SELECT dp_count(id, 1) FROM pa.people WHERE name ~ ('(' || age::text);
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people WHERE substr(name, 1, 1) = 'n';
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people WHERE name LIKE 'name1%';
SELECT dp_count(id, 1) FROM pa.people WHERE row_to_json(people)::text <> '';
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people WHERE GREATEST(age, 50) > 60;

-- 21-30: per-row side effects read back afterwards, and timing
SELECT dp_count(id, 1) FROM pa.people WHERE set_config('pa.seen', name, true) IS NOT NULL;
SELECT dp_count(id, 1) FROM pa.people WHERE pg_notify('pa', name) IS NULL;
SELECT dp_count(id, 1) FROM pa.people WHERE pg_try_advisory_lock(age);
SELECT dp_count(id, 1) FROM pa.people WHERE nextval('pa.s') > 0;
SELECT dp_count(id, 1) FROM pa.people WHERE age = 42 AND pg_sleep(1) IS NULL;
CREATE FUNCTION pg_temp.peek(text) RETURNS boolean LANGUAGE plpgsql IMMUTABLE
AS 'BEGIN RAISE NOTICE ''%'', $1; RETURN true; END';
SELECT dp_count(id, 1) FROM pa.people WHERE pg_temp.peek(name);
CREATE FUNCTION pg_temp.nested(int) RETURNS boolean LANGUAGE plpgsql IMMUTABLE
AS 'BEGIN PERFORM dp_count(o.id, $1 * 1e-9) FROM pa.other o; RETURN true; END';
SELECT dp_count(id, 1) FROM pa.people WHERE pg_temp.nested(age);
SELECT dp_count(id, 1) FROM pa.people WHERE random() < 0.5;
SELECT dp_count(id, 1) FROM pa.people WHERE dp_agg.laplace_scale(1, age) > 0;
SELECT dp_count(id, 1) FROM pa.people, LATERAL (SELECT pg_sleep(0.001)) s;

-- 31-40: EXPLAIN and statistics
EXPLAIN SELECT dp_count(id, 1) FROM pa.people WHERE age = 42;
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT dp_count(id, 1) FROM pa.people WHERE age = 42;
EXPLAIN ANALYZE SELECT dp_count(id, 1) FROM pa.people WHERE age = 42;
SELECT count(*) FROM pg_stats WHERE tablename = 'people';
SELECT count(*) FROM pg_stats_ext;
SELECT pg_stat_get_xact_tuples_fetched('pa.people'::regclass);
SELECT pg_stat_get_live_tuples('pa.people'::regclass);
SELECT n_live_tup FROM pg_stat_user_tables WHERE relname = 'people';
SELECT idx_tup_fetch FROM pg_stat_xact_user_tables WHERE relname = 'people';
SELECT heap_blks_read FROM pg_statio_user_tables WHERE relname = 'people';

EXPLAIN (FORMAT JSON) SELECT * FROM pa.people WHERE id < 10;

-- 42-53: reading the rows otherwise than through DP aggregates
SELECT * FROM pa.people LIMIT 1;
SELECT * FROM pa.v LIMIT 1;
COPY pa.people TO STDOUT;
COPY (SELECT name FROM pa.v) TO STDOUT;
CREATE TEMPORARY TABLE stolen AS SELECT * FROM pa.v;
BEGIN;
DECLARE c CURSOR FOR SELECT * FROM pa.v;
ROLLBACK;
DO $$ BEGIN PERFORM count(*) FROM pa.v; END $$;
CREATE FUNCTION pg_temp.steal() RETURNS SETOF text LANGUAGE sql AS 'SELECT name FROM pa.v';
SELECT pg_temp.steal() LIMIT 1;
-- (refused at planning, before PostgreSQL's check of the view's row-lock
-- privilege)
SELECT id FROM pa.v WHERE id = 1 FOR UPDATE;
UPDATE pa.people SET age = age WHERE age = 42;
DELETE FROM pa.people WHERE id = -1;
INSERT INTO pa.people VALUES (1, 1, 'x', 1) ON CONFLICT (id) DO NOTHING;

-- 54-61: sub-queries, set operations, joins, CTEs, planner tricks
SELECT dp_count(id, 1) FROM pa.other WHERE id IN (SELECT id FROM pa.people);
SELECT dp_count(x, 1) FROM generate_series(1, 10) x WHERE EXISTS (SELECT 1 FROM pa.people WHERE id = x);
SELECT dp_count(id, 1) FROM pa.people UNION ALL SELECT count(*) FROM pa.v;
SELECT dp_count(p.id, 1) FROM pa.people p JOIN pa.other o ON o.id = p.id;
WITH r AS MATERIALIZED (SELECT * FROM pa.people) SELECT dp_count(r.id, 1) FROM r, pa.other;
WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3)
SELECT dp_count(id, 1) FROM pa.people, r;
SELECT 1 AS one FROM (SELECT dp_count(id, 1) AS n FROM pa.people) s;
SELECT dp_count(id, 1) FROM pa.people WHERE false;

-- 72-75: a protected partition or inheritance child read through its
-- unprotected parent, which the planner expands only after the checks
SELECT dp_count(id, 1e-15) IS NOT NULL, string_agg(region || ':' || amount, ',') FROM pa.sales;
SELECT region, amount FROM pa.sales;
SELECT dp_count(id, 1e-15) IS NOT NULL, string_agg(id || ':' || amount, ',') FROM pa.inh_parent;
SELECT id, amount FROM pa.inh_parent;

-- 76-78: a function of constants under CASE runs only for the rows that
-- match: its error or side effect would tell whether a row exists
SELECT dp_count(id, 1) FROM pa.people t
WHERE CASE WHEN t.id = 500 AND t.name = 'name500' THEN current_setting('no.such') IS NULL ELSE true END;
SELECT dp_count(id, 1) FROM pa.people t WHERE CASE WHEN t.age = 42 THEN pa.tick() ELSE true END;
SELECT dp_count(id, 1) FROM pa.people t WHERE COALESCE(NULLIF(t.age, 42) > 0, pa.tick());

-- 79-80: ARRAY[] whose error depends on the rows: nested arrays of
-- different dimensions, variable-length values beyond an array's size
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people t
WHERE ARRAY[CASE WHEN t.id = 500 THEN ARRAY[1, 2] ELSE ARRAY[1] END, ARRAY[1]] IS NOT NULL;
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people t WHERE ARRAY[t.name, t.name] IS NOT NULL;

-- 81-83: statistics functions called without a function call in the plan
-- or without the executor's start: a PL/pgSQL simple expression, an
-- operator, a domain's CHECK constraint
DO $$ BEGIN RAISE NOTICE '%', pg_stat_get_live_tuples('pa.people'::regclass); END $$;
SELECT OPERATOR(pa.###) 'pa.people'::regclass::oid;
SELECT 'pa.people'::regclass::oid::pa.small;

-- 84-85: a scalar sub-query fails when it returns more than one row: per
-- row, or once when some row reaches it under CASE
SELECT dp_count(id, 1) FROM (SELECT t.id FROM pa.people t
WHERE (SELECT o.id FROM pa.other o WHERE o.id <= t.age - 84) IS NULL) s;
SELECT dp_count(id, 1) FROM (SELECT t.id FROM pa.people t
WHERE CASE WHEN t.id = 500 THEN (SELECT o.id FROM pa.other o) = 1 ELSE true END) s;

-- 86-107: GROUP BY.  Keys are released only through private selection,
-- here at epsilon 1 and delta 1e-10: a group of one row is released with
-- probability 1e-10, whatever the selection epsilon (pi(1) = delta), so
-- GROUP BY the primary key (2,000 groups) or a unique name (1,980) releases
-- no group except with probability 2e-7.  Refused: public keys, grouping
-- sets, keys, HAVING and ORDER BY computed with functions that can fail,
-- exact aggregates, keys from sub-queries, window functions, grouping
-- below or above the DP aggregates, calling the selection directly.
SET dp_agg.selection_epsilon = 1;
SET dp_agg.selection_delta = 1e-10;
SELECT id, dp_count(id, 1) FROM pa.people GROUP BY id;
SELECT id, dp_count(id, 1) FROM pa.people GROUP BY id HAVING dp_count(id, 1) > -1000;
SET dp_agg.selection_epsilon = 1e6;
SELECT id FROM pa.people GROUP BY id HAVING dp_count(id, 1e9) > 0;
SET dp_agg.selection_epsilon = 1;
SELECT name, dp_sum(salary, 0, 1e5, 1) FROM pa.people WHERE name IS NOT NULL GROUP BY name;
SELECT age, dp_count(id, 1e9) FROM pa.people GROUP BY age HAVING dp_count(id, 1e9) > 1000;
SELECT DISTINCT dp_count(id, 1e9) > -1 AS released FROM pa.people GROUP BY age;
SET dp_agg.group_keys = 'public';
SELECT age, dp_count(id, 1) FROM pa.people GROUP BY age;
RESET dp_agg.group_keys;
SELECT age, dp_count(id, 1) FROM pa.people GROUP BY ROLLUP (age);
SELECT age, dp_count(id, 1) FROM pa.people GROUP BY CUBE (age, name);
SELECT age, dp_count(id, 1) FROM pa.people GROUP BY GROUPING SETS ((age), ());
-- (keys and HAVING that fail on some rows: NULL for them; at selection
-- epsilon 1e6 every group of 27 rows or more is released, and only those)
SET dp_agg.selection_epsilon = 1e6;
SELECT age / (age - 50) AS k, dp_count(id, 1e9) > 0 AS released FROM pa.people GROUP BY 1 ORDER BY 1;
SELECT name::int AS k, dp_count(id, 1e9) AS n FROM pa.people GROUP BY 1;
SELECT age, dp_count(id, 1e9) AS n FROM pa.people GROUP BY age HAVING 1 / (age - 50) > 0;
SELECT age FROM pa.people GROUP BY age HAVING dp_count(id, 1e9) > 0 AND 1 / (age - 50) > 0;
SELECT age, dp_count(id, 1e9) > 0 AS released FROM pa.people GROUP BY age ORDER BY 1 / (age - 50), age LIMIT 3;
SET dp_agg.selection_epsilon = 1;
SELECT age, dp_count(id, 1) FROM pa.people GROUP BY age HAVING count(*) > 1;
SELECT age, dp_count(id, 1) FROM pa.people GROUP BY age, (SELECT max(id) FROM pa.other);
SELECT age, dp_count(id, 1), rank() OVER (ORDER BY age) FROM pa.people GROUP BY age;
SELECT dp_count(age, 1) FROM (SELECT age FROM pa.people GROUP BY age) s;
SELECT n, count(*) FROM (SELECT age, dp_count(id, 1e9) AS n FROM pa.people GROUP BY age) s GROUP BY n;
SELECT DISTINCT age FROM pa.people;
-- (the parser refuses it, with a message that differs between PostgreSQL
-- versions: selection.sql)
DO $$
BEGIN
    PERFORM dp_agg.dp_select(NULL, 1) FROM pa.people;
    RAISE NOTICE 'accepted';
EXCEPTION WHEN undefined_function OR cannot_coerce OR feature_not_supported THEN
    RAISE NOTICE 'refused';
END $$;

-- 62-71: accepted: DP values only, each charged
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people;
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.v WHERE age < 30;
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people WHERE id = ANY (ARRAY[1, 2, 3]);
SELECT dp_count(id, 1) FILTER (WHERE name = 'name5') IS NOT NULL AS released FROM pa.people;
SELECT dp_sum(salary, 0, 1e5, 1) IS NOT NULL AS released FROM pa.people WHERE salary > 5e4;
SELECT dp_avg(age, 0, 100, 1) IS NOT NULL AS released FROM pa.people WHERE name IS NULL;
WITH r AS (SELECT id, age FROM pa.people) SELECT dp_count(id, 1) IS NOT NULL AS released FROM r;
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people TABLESAMPLE dp_agg.secure_bernoulli (50);
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people LIMIT 0;
SELECT dp_count(id, 1e9) > 0 AND dp_count(id, 1e9) IS NOT NULL AS released FROM ONLY pa.people;
-- every accepted statement was charged: 31 statements (11 with GROUP BY),
-- 31 ledger entries
SELECT count(*) - :ledger_before AS charged FROM dp_agg.my_ledger;
RESET ROLE;

-- none of the above crashed the server, changed the table or left a lock
SELECT count(*) AS rows, sum(age) AS ages FROM pa.people;
SELECT count(*) AS advisory_locks FROM pg_locks WHERE locktype = 'advisory';
SELECT last_value, is_called FROM pa.s;


--
-- The second attack review (108-): more attacks, by the analyst (a grant, no
-- SELECT) and by a reader that holds SELECT on the table (also untrusted).
--
CREATE ROLE regress_pa_reader;
GRANT SELECT ON pa.people TO regress_pa_reader;
SELECT dp_agg.set_budget('regress_pa_reader', 1e12);
SET ROLE regress_pa_reader;
SELECT count(*) AS reader_ledger_before FROM dp_agg.my_ledger \gset

-- 108-110: the planner's statistics through the reader's own operator.  A
-- role that may read a column gets its most common values and histogram
-- bounds passed to any operator's function when the planner estimates a
-- WHERE (statistic_proc_security_check): a statement that is refused must
-- be refused before it is planned, or the notices print the statistics
CREATE FUNCTION pg_temp.leak_int(int, int) RETURNS boolean LANGUAGE plpgsql IMMUTABLE
AS 'BEGIN RAISE NOTICE ''statistics: %'', $1; RETURN true; END';
CREATE OPERATOR pg_temp.<<< (LEFTARG = int, RIGHTARG = int,
	FUNCTION = pg_temp.leak_int, RESTRICT = scalarltsel);
SELECT 1 FROM pa.people WHERE age OPERATOR(pg_temp.<<<) 30;
UPDATE pa.people SET age = 1 WHERE age OPERATOR(pg_temp.<<<) 30;
SELECT 1 FROM pa.v WHERE age OPERATOR(pg_temp.<<<) 30;

-- every accepted statement of the reader was charged
SELECT count(*) - :reader_ledger_before AS reader_charged FROM dp_agg.my_ledger;
RESET ROLE;

-- the analyst again (a grant, no SELECT), on more tables of the owner: a
-- column with a nondeterministic collation (ICU; without ICU, as in the
-- PostgreSQL 16 build of expected/protect_attack_1.out, these fail sooner)
CREATE COLLATION pa.nocase (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE pa.emails (id int, email text COLLATE pa.nocase);
INSERT INTO pa.emails VALUES (1, 'a@example.org'), (500, 'B@example.org');
ALTER TABLE pa.emails OWNER TO regress_pa_owner;
SELECT dp_agg.protect('pa.emails');
SELECT dp_agg.grant_access('pa.emails', 'regress_pa_analyst');
SET ROLE regress_pa_analyst;
SELECT count(*) AS ledger_before2 FROM dp_agg.my_ledger \gset

-- 111-113: starts_with, which PostgreSQL marks LEAKPROOF, fails at each call
-- with a nondeterministic collation: under CASE WHEN a row predicate, its
-- error would tell whether a row with id 500 exists
SELECT dp_count(id, 1e9) AS n FROM pa.emails WHERE CASE WHEN id = 500 THEN starts_with(email, 'b') ELSE true END;
SELECT dp_count(id, 1e9) AS n FROM pa.emails WHERE CASE WHEN id = 500 THEN email ^@ 'b' ELSE true END;
SELECT dp_count(id, 1e9) AS n FROM pa.emails WHERE CASE WHEN id = 500 THEN email ^@ ANY (ARRAY['b']) ELSE true END;

-- 114: the planner does not evaluate a function returning RECORD, even
-- immutable and of constants: under CASE it runs for the matching rows only
-- (on a standby, pg_walfile_name_offset fails at each call)
SELECT dp_count(id, 1) FROM pa.people t
WHERE CASE WHEN t.id = 500 THEN pg_walfile_name_offset('0/0') IS NULL ELSE true END;

-- 115-118: timing amplified by a large expression evaluated only for the rows
-- that match: md5 of a 20 MB text, a comparison with each element of a
-- large array (both folded by the planner into one large constant), a
-- large parameter, an expression of many nodes.  For one row with id 500,
-- the statement would run hundreds of milliseconds longer: one measurement
-- would tell whether it exists
SELECT dp_count(id, 1) FROM pa.people t
WHERE md5(CASE WHEN t.id = 500 THEN repeat('x', 20000000) ELSE '' END) IS NOT NULL;
SELECT dp_count(id, 1) FROM pa.people t
WHERE CASE WHEN t.id = 500 THEN t.age < ANY (array_fill(5, ARRAY[1000000])) ELSE true END;
PREPARE pa_big(text) AS SELECT dp_count(id, 1) FROM pa.people t
WHERE md5(CASE WHEN t.id = 500 THEN $1 ELSE '' END) IS NOT NULL;
EXECUTE pa_big(repeat('x', 10000));
DEALLOCATE pa_big;
SELECT format('SELECT dp_count(id, 1) FROM pa.people t WHERE CASE WHEN t.id = 500 THEN %s ELSE true END',
	string_agg('t.age <> ' || i, ' AND ')) AS pa_many FROM generate_series(1, 2000) i \gset
:pa_many;

-- 119-120: the smallest epsilon an untrusted role may ask for is a DBA's
-- setting (dp_agg.protected_min_epsilon, 0.01 by default): a release at
-- 1e-15 would be a free question; the role cannot lower the floor
SELECT dp_count(id, 1e-15) FROM pa.people;
SELECT count(*) FROM dp_agg.preview('SELECT dp_count(id, 1e-15) FROM pa.people');
SET dp_agg.protected_min_epsilon = 0;

-- 121-122: BERNOULLI's seed comes from PostgreSQL's non-cryptographic
-- generator, whose state the analyst can learn by sampling its own tables:
-- knowing the sample voids the amplification the release is priced with.
-- Without amplification (REPEATABLE), sampling is only post-processing
SELECT dp_count(id, 1) FROM pa.people TABLESAMPLE BERNOULLI (50);
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people TABLESAMPLE BERNOULLI (50) REPEATABLE (7);
-- 170: SYSTEM_ROWS (n) reads rows until it has n: removing one row lets
-- another in, so a sum with bounds of both signs would move by twice its
-- sensitivity, at the price of once
RESET ROLE;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS tsm_system_rows;
RESET client_min_messages;
SET ROLE regress_pa_analyst;
SELECT dp_sum(age, -100, 100, 1) FROM pa.people TABLESAMPLE SYSTEM_ROWS (1000);

-- 123-130: planner and executor corners: a set-returning function in FROM
-- or LATERAL multiplies the rows; ORDER BY, DISTINCT ON, OFFSET and FOR
-- SHARE below the DP aggregates make rows depend on other rows (or lock
-- them, which other sessions see in pg_locks); GROUP BY () and ROLLUP
SELECT dp_count(id, 1) FROM pa.people, LATERAL generate_series(1, age) g;
SELECT dp_count(g, 1) FROM (SELECT generate_series(1, age) g FROM pa.people) s;
SELECT dp_count(id, 1) FROM (SELECT DISTINCT ON (age) id FROM pa.people) s;
SELECT dp_count(id, 1) FROM (SELECT id FROM pa.people OFFSET 0) s;
SELECT dp_count(id, 1) FROM (SELECT id FROM pa.people FOR SHARE) s;
SELECT dp_count(id, 1) FROM pa.people GROUP BY ();
SELECT dp_count(id, 1) FROM pa.people GROUP BY ROLLUP (age);
SELECT dp_count(id, 1) FROM (SELECT id FROM pa.people INTERSECT SELECT id FROM pa.other) s;

-- 171-172: ORDER BY below the DP aggregates sorts the matching rows: past
-- work_mem into temporary files, whose size pg_tablespace_size (readable by
-- every role for the database's tablespace) shows a second session while
-- the statement runs, and with trace_sort (any role may set it) the memory
-- the sort used comes back as a LOG message; the same in a CTE
SET work_mem = '64kB';
SELECT dp_count(id, 1) FROM (SELECT id, name FROM pa.people WHERE age > 20 ORDER BY name) s;
WITH r AS (SELECT id FROM pa.people ORDER BY name) SELECT dp_count(id, 1) FROM r;
RESET work_mem;

-- 131-138: sub-links in FILTER, aggregate arguments and LIMIT; a VALUES
-- join; window functions and set-returning functions over the release;
-- a DP statement joined with a table
SELECT dp_count(id, 1) FILTER (WHERE id IN (SELECT 1)) FROM pa.people;
SELECT dp_count((SELECT o.id FROM pa.other o LIMIT 1), 1) FROM pa.people;
SELECT dp_count(id, 1) FROM pa.people LIMIT (SELECT 1);
SELECT dp_count(p.id, 1) FROM pa.people p, (VALUES (1)) v(x) WHERE p.id = v.x;
SELECT n IS NOT NULL, row_number() OVER () FROM (SELECT dp_count(id, 1) AS n FROM pa.people) s;
SELECT s.n FROM (SELECT dp_count(id, 1) AS n FROM pa.people) s, pa.other;
SELECT dp_count(id, current_setting('pa.eps', true)::float8) FROM pa.people;
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people WHERE age::text = '5';

-- 139-146: expressions that can fail or are not checked: row comparisons,
-- COLLATE, narrowing casts, JSON, text search, pattern matching with a
-- bad escape, CURRENT_USER (an SQL value function), ILIKE
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people WHERE (id, age) > (5, 3);
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people WHERE name COLLATE "C" > 'name5';
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people WHERE age::int2 > 5;
SELECT dp_count(id, 1) FROM pa.people WHERE json_build_object('a', name) IS NOT NULL;
SELECT dp_count(id, 1) FROM pa.people WHERE to_tsvector(name) @@ 'x';
SELECT dp_count(id, 1) FROM pa.people WHERE name LIKE 'name1%' ESCAPE 'ab';
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people WHERE CURRENT_USER = 'x' AND age > 3;
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people WHERE name ILIKE 'name1%';

-- 147-152: statistics by other names: per-index scans, the database's
-- counters, the functions' calls, the planner's statistics of
-- expressions, a per-table function called directly
SELECT idx_scan FROM pg_stat_user_indexes;
SELECT blks_hit FROM pg_stat_database;
SELECT calls FROM pg_stat_user_functions;
SELECT most_common_vals FROM pg_stats_ext_exprs;
SELECT pg_stat_get_tuples_returned('pa.people_pkey'::regclass);
SELECT pg_stat_get_db_temp_bytes(oid) FROM pg_database LIMIT 1;

-- 153-154: buffer counters: after an index scan on a quiet server, the
-- buffers allocated (and, on PostgreSQL 16, the hits in pg_stat_io) count
-- the heap pages its predicate matched
SELECT pg_stat_get_buf_alloc();
SELECT buffers_alloc FROM pg_stat_bgwriter;

-- 155-156: the analyst's own view runs as the analyst, which holds no
-- SELECT: PostgreSQL's own permission error; a child table of its own would
-- add its rows to the protected table's
CREATE TEMPORARY VIEW pa_mine AS SELECT id, age FROM pa.people;
SELECT dp_count(id, 1) IS NOT NULL FROM pa_mine;
CREATE TEMPORARY TABLE pa_kid () INHERITS (pa.people);

-- 157-159: an operator of the analyst's whose function is int4eq (LEAKPROOF)
-- and whose negator is another operator of its own with a function that
-- raises a notice: the planner turns NOT (a === b) into a !== b, and the
-- notices would print every row's age
CREATE FUNCTION pg_temp.pa_show(int, int) RETURNS boolean LANGUAGE plpgsql IMMUTABLE
AS 'BEGIN RAISE NOTICE ''row: %'', $1; RETURN true; END';
CREATE OPERATOR pg_temp.!== (LEFTARG = int, RIGHTARG = int, FUNCTION = pg_temp.pa_show);
CREATE OPERATOR pg_temp.=== (LEFTARG = int, RIGHTARG = int, FUNCTION = int4eq,
	NEGATOR = OPERATOR(pg_temp.!==));
SELECT dp_count(id, 1) FROM pa.people WHERE NOT (age OPERATOR(pg_temp.===) 42);
SELECT dp_count(id, 1) FROM pa.people WHERE NOT (age OPERATOR(pg_temp.===) ANY (ARRAY[42, 43]));
CREATE OPERATOR pg_temp.==== (LEFTARG = int, RIGHTARG = int, FUNCTION = int4eq,
	COMMUTATOR = OPERATOR(pg_temp.!==));
SELECT dp_count(id, 1) FROM pa.people WHERE 42 OPERATOR(pg_temp.====) age;

-- 160: comparisons do not fail with a nondeterministic collation: accepted
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.emails WHERE email = 'b@example.org';
-- 161-169: accepted, DP values only, each charged: a cursor fetched
-- backwards and again, a cursor held past its transaction, a prepared
-- statement run twice, COPY and CREATE TABLE AS of a release, a SQL and a
-- SECURITY DEFINER function of the analyst, dynamic SQL, OFFSET and HAVING
-- on the release (post-processing)
BEGIN;
DECLARE pa_c SCROLL CURSOR FOR SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people;
FETCH ALL pa_c;
FETCH BACKWARD ALL pa_c;
COMMIT;
BEGIN;
DECLARE pa_h CURSOR WITH HOLD FOR SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people;
COMMIT;
FETCH ALL pa_h;
CLOSE pa_h;
PREPARE pa_p(float8) AS SELECT dp_count(id, $1) IS NOT NULL AS released FROM pa.people;
EXECUTE pa_p(1);
EXECUTE pa_p(1);
DEALLOCATE pa_p;
COPY (SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people) TO STDOUT;
CREATE TEMPORARY TABLE pa_out AS SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people;
CREATE FUNCTION pg_temp.pa_sd() RETURNS bigint LANGUAGE sql SECURITY DEFINER
AS 'SELECT dp_count(id, 1) FROM pa.people';
SELECT pg_temp.pa_sd() IS NOT NULL AS released;
DO $$ DECLARE n bigint; BEGIN EXECUTE 'SELECT dp_count(id, 1) FROM pa.people' INTO n; END $$;
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people OFFSET 1;
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people HAVING dp_count(id, 1) > -1e9;
-- 173-179: accepted, DP values only, each charged: values a DP aggregate
-- must not fail on (NaN, infinity, the largest bigint, a numeric beyond any
-- bound; NaN is skipped, the rest clamped), predicates on the whole row and
-- on system columns (tideq and xideq are LEAKPROOF), and a scroll cursor
-- rewound: the release is read again, not drawn again
SELECT dp_sum(CASE WHEN id = 500 THEN 'NaN'::float8 ELSE 0 END, 0, 1, 1) IS NOT NULL AS released FROM pa.people;
SELECT dp_avg(CASE WHEN id = 500 THEN 'Infinity'::float8 ELSE 0 END, 0, 1, 1) IS NOT NULL AS released FROM pa.people;
SELECT dp_sum(CASE WHEN id = 500 THEN 9223372036854775807::int8 ELSE 0 END, 0, 9223372036854775807, 1) IS NOT NULL AS released FROM pa.people;
SELECT dp_sum(CASE WHEN id = 500 THEN 1e300::numeric ELSE 0 END, 0, 1e300, 1) IS NOT NULL AS released FROM pa.people;
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people t WHERE t IS NOT NULL;
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people WHERE ctid = '(0,1)' OR xmin = '1'::xid;
BEGIN;
DECLARE pa_r SCROLL CURSOR FOR SELECT dp_count(id, 1) AS n FROM pa.people;
FETCH ALL pa_r \gset pa_first_
MOVE ABSOLUTE 0 pa_r;
FETCH ALL pa_r \gset pa_again_
COMMIT;
SELECT :pa_first_n = :pa_again_n AS same_release;

-- every accepted statement was charged: 28 statements, 28 ledger entries
-- (HAVING's dp_count and the output's are one call)
SELECT count(*) - :ledger_before2 AS charged FROM dp_agg.my_ledger;
RESET ROLE;

--
-- The review of the row path (180-199): nothing on the rows can fail or
-- report.  The two channels of the review, exactly as found, then attacks
-- on the trap and on the settings: each is refused before a row is read,
-- or runs with DP values only and is charged.
--
CREATE DOMAIN pa.text_c AS text COLLATE "C";
CREATE DOMAIN pa.text_posix AS text COLLATE "POSIX";
CREATE DOMAIN pa.tiny AS int CHECK (VALUE < 100);
CREATE FUNCTION pa.noisy(int) RETURNS boolean LANGUAGE plpgsql IMMUTABLE
AS 'BEGIN RAISE NOTICE ''value %'', $1; RETURN true; END';
CREATE DOMAIN pa.loud AS int CHECK (pa.noisy(VALUE));
GRANT SET ON PARAMETER log_executor_stats, temp_file_limit TO regress_pa_analyst;
SELECT dp_agg.allow_function('to_tsvector(regconfig, text)') \g /dev/null
CREATE TABLE pa.notes (id int, body text);
INSERT INTO pa.notes SELECT i, CASE WHEN i = 500 THEN repeat('x', 3000) ELSE 'note ' || i END
FROM generate_series(1, 1000) i;
ALTER TABLE pa.notes OWNER TO regress_pa_owner;
SELECT dp_agg.protect('pa.notes');
SELECT dp_agg.grant_access('pa.notes', 'regress_pa_analyst');
SET ROLE regress_pa_analyst;
SELECT count(*) AS ledger_before3 FROM dp_agg.my_ledger \gset
SET dp_agg.selection_epsilon = 1;
SET dp_agg.selection_delta = 1e-10;

-- 180-181: the first channel: an undetermined collation fails at run time,
-- only for the rows that reach the comparison (a generic plan keeps the
-- parameters); also in an IN list hashed by the executor (nine elements)
SET plan_cache_mode = force_generic_plan;
PREPARE pa_coll(pa.text_c, pa.text_posix) AS SELECT dp_count(id, 1) IS NOT NULL AS released
FROM pa.people WHERE CASE WHEN id = 500 AND salary = 50250 THEN $1 = $2 ELSE false END;
EXECUTE pa_coll('a', 'a');
PREPARE pa_coll_in(pa.text_c, pa.text_posix) AS SELECT dp_count(id, 1) IS NOT NULL AS released
FROM pa.people WHERE CASE WHEN id = 500 THEN $1 IN ($2, 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i') ELSE false END;
EXECUTE pa_coll_in('a', 'a');
DEALLOCATE pa_coll;
DEALLOCATE pa_coll_in;
RESET plan_cache_mode;

-- 182: the second channel: with the planner's own sort (hash aggregation
-- off), trace_sort reported the sort's memory in kB, and a filler
-- predicate just below a kB boundary let one row more or less flip it: no
-- LOG line reaches the client while the executor runs
SET enable_hashagg = off;
SET trace_sort = on;
SET client_min_messages = log;
SELECT age, dp_count(id, 1) IS NOT NULL AS released FROM pa.people WHERE id < 523 GROUP BY age ORDER BY age LIMIT 1;
-- 183-185: turning the report back on while the rows are read: from the
-- post-processing of a released group (set_config), from the analyst's own
-- function, from a function's SET clause
RESET client_min_messages;
SELECT age, set_config('trace_sort', 'on', false) FROM pa.people GROUP BY age HAVING dp_count(id, 1) > 0;
CREATE FUNCTION pg_temp.pa_loud(bigint) RETURNS bigint LANGUAGE plpgsql STABLE
AS 'BEGIN PERFORM set_config(''client_min_messages'', ''log'', false); RETURN $1; END';
SELECT age, pg_temp.pa_loud(dp_count(id, 1)) FROM pa.people GROUP BY age;
CREATE FUNCTION pg_temp.pa_set(bigint) RETURNS bigint LANGUAGE sql IMMUTABLE
SET client_min_messages = 'debug5' AS 'SELECT $1';
SELECT pg_temp.pa_set(dp_count(id, 1)) FROM pa.people;
-- 186: a cursor read in steps, the settings changed between the steps and
-- before it is closed (the end of a sort reports its memory)
BEGIN;
DECLARE pa_sorted CURSOR FOR SELECT age, dp_count(id, 1) IS NOT NULL AS released FROM pa.people
WHERE id < 523 GROUP BY age;
FETCH 1 FROM pa_sorted \g /dev/null
SET LOCAL client_min_messages = log;
FETCH 1 FROM pa_sorted \g /dev/null
CLOSE pa_sorted;
COMMIT;
RESET trace_sort;
RESET enable_hashagg;
-- 187: exit_on_error would end the session on the error of a matching row
SET exit_on_error = on;
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people WHERE CASE WHEN id = 500 THEN 1 / (id - 500) = 1 ELSE true END;
RESET exit_on_error;
-- 188-189: settings that report after the executor returned, or fail on
-- the size of what a sort wrote (the analyst was granted SET on them)
SET log_executor_stats = on;
SELECT dp_count(id, 1) FROM pa.people;
RESET log_executor_stats;
SET temp_file_limit = 0;
SET enable_hashagg = off;
SELECT age, dp_count(id, 1) FROM pa.people GROUP BY age;
RESET enable_hashagg;
RESET temp_file_limit;
-- 190: a notice that only one row raises (a DBA allowed to_tsvector, which
-- warns about words too long to index): never emitted, the row's value NULL
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.notes WHERE to_tsvector('simple', body) IS NOT NULL;
-- 191-193: errors of one row in a FILTER, in the value of a sum, in a
-- domain's CHECK: NULL for that row
SELECT dp_count(id, 1) FILTER (WHERE 1 / (id - 500) > 0) IS NOT NULL AS released FROM pa.people;
SELECT dp_sum(CASE WHEN id = 500 THEN age * 2147483647 ELSE 0 END, 0, 10, 1) IS NOT NULL AS released FROM pa.people;
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people WHERE (CASE WHEN id = 500 THEN 1000 ELSE age END)::pa.tiny > 0;
-- 194: a domain whose CHECK runs the analyst's function (a notice per row)
SELECT dp_count(id, 1) FROM pa.people WHERE age::pa.loud > 0;
-- 195-197: timing amplified by backtracking (a back-reference), by an
-- output size (lpad to 100 MB for one row), by a pattern parameter of a
-- generic plan
SELECT dp_count(id, 1) FROM pa.people WHERE CASE WHEN id = 500 THEN name ~ '^(a+)+\1$' ELSE true END;
PREPARE pa_pad(int) AS SELECT dp_count(id, 1) FROM pa.people WHERE CASE WHEN id = 500 THEN lpad(name, $1) <> '' ELSE true END;
EXECUTE pa_pad(100000000);
DEALLOCATE pa_pad;
SET plan_cache_mode = force_generic_plan;
PREPARE pa_pattern(text) AS SELECT dp_count(id, 1) FROM pa.people WHERE CASE WHEN id = 500 THEN name ~ $1 ELSE true END;
EXECUTE pa_pattern('((a|b)*)\2');
DEALLOCATE pa_pattern;
RESET plan_cache_mode;
-- 198-199: INT_MIN / -1 and a format that fails on one row's value
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people
WHERE (CASE WHEN id = 500 THEN -2147483648 ELSE age END) / -1 > 0;
SELECT dp_count(id, 1) IS NOT NULL AS released FROM pa.people
WHERE to_date(CASE WHEN id = 500 THEN '2024-13-45' ELSE '2024-01-01' END, 'YYYY-MM-DD') IS NOT NULL;
RESET dp_agg.selection_epsilon;
RESET dp_agg.selection_delta;
-- every accepted statement was charged: 11 statements, 11 ledger entries
SELECT count(*) - :ledger_before3 AS charged FROM dp_agg.my_ledger;
RESET ROLE;
SELECT dp_agg.disallow_function('to_tsvector(regconfig, text)');
REVOKE SET ON PARAMETER log_executor_stats, temp_file_limit FROM regress_pa_analyst;

-- cleanup
DROP FUNCTION pg_temp.pa_loud(bigint), pg_temp.pa_set(bigint);
DROP FUNCTION pg_temp.peek(text), pg_temp.nested(int), pg_temp.steal(), pg_temp.pa_sd();
DROP VIEW pa_mine;
DROP TABLE pa_out;
DROP OPERATOR pg_temp.<<< (int, int);
DROP OPERATOR pg_temp.=== (int, int), pg_temp.==== (int, int), pg_temp.!== (int, int);
DROP FUNCTION pg_temp.pa_show(int, int);
DROP FUNCTION pg_temp.leak_int(int, int);
SELECT dp_agg.unprotect('pa.people');
SELECT dp_agg.unprotect('pa.sales_sec');
SELECT dp_agg.unprotect('pa.inh_sec');
SELECT dp_agg.unprotect('pa.emails');
SELECT dp_agg.unprotect('pa.notes');
DROP SCHEMA pa CASCADE;
DELETE FROM dp_agg.budget WHERE role::text LIKE 'regress_pa_%';
DELETE FROM dp_agg.ledger WHERE role::text LIKE 'regress_pa_%';
DROP ROLE regress_pa_owner, regress_pa_analyst, regress_pa_reader;
