--
-- protect_scope: what protecting a table changes for other roles and
-- statements (README, "Protected tables", "What protection changes"):
-- nothing, but the statements that read it and the statistics that count
-- its rows.
--
\set VERBOSITY default

CREATE ROLE regress_ps_owner;
CREATE ROLE regress_ps_monitor IN ROLE pg_monitor;
CREATE ROLE regress_ps_analyst;
CREATE SCHEMA ps;
GRANT USAGE, CREATE ON SCHEMA ps TO PUBLIC;
-- the protected table: rows, an index, a TOAST table, statistics
CREATE TABLE ps.secret (id int PRIMARY KEY, note text);
INSERT INTO ps.secret SELECT i, repeat('x', i % 10) FROM generate_series(1, 300) i;
ANALYZE ps.secret;
CREATE STATISTICS ps.secret_stats (ndistinct) ON id, note FROM ps.secret;
ANALYZE ps.secret;
SELECT dp_agg.protect('ps.secret');
GRANT SELECT ON ps.secret TO regress_ps_analyst, regress_ps_monitor;
-- a partitioned table with one protected partition
CREATE TABLE ps.parts (id int) PARTITION BY RANGE (id);
CREATE TABLE ps.parts_low PARTITION OF ps.parts FOR VALUES FROM (0) TO (100);
CREATE TABLE ps.parts_high PARTITION OF ps.parts FOR VALUES FROM (100) TO (200);
SELECT dp_agg.protect('ps.parts_low');
-- the owner's own table, unprotected
SET ROLE regress_ps_owner;
CREATE TABLE ps.mine (id int, note text);
INSERT INTO ps.mine SELECT i, 'n' || i % 3 FROM generate_series(1, 100) i;
CREATE INDEX mine_id ON ps.mine (id);
ANALYZE ps.mine;
CREATE STATISTICS ps.mine_stats (ndistinct) ON id, note FROM ps.mine;
ANALYZE ps.mine;
GRANT SELECT ON ps.mine TO PUBLIC;
RESET ROLE;

-- 1. PL/pgSQL is as without dp_agg: simple expressions keep their fast
-- path, so GET DIAGNOSTICS ROW_COUNT reports the last SQL statement, not
-- the evaluation of IF FOUND, and an error in an expression has no
-- "SQL expression" context line
CREATE FUNCTION ps.row_count() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
  m bigint;
BEGIN
  INSERT INTO ps.mine SELECT i, 'r' FROM generate_series(1, 14) i;
  IF FOUND THEN
    NULL;
  END IF;
  GET DIAGNOSTICS n = ROW_COUNT;
  UPDATE ps.mine SET id = id WHERE id < 0;
  IF NOT FOUND THEN
    NULL;
  END IF;
  GET DIAGNOSTICS m = ROW_COUNT;
  DELETE FROM ps.mine WHERE note = 'r';
  RETURN n || ' ' || m;
END $$;
SELECT ps.row_count();
CREATE FUNCTION ps.divide(x int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  y int;
BEGIN
  y := 1 / x;
  RETURN y;
END $$;
SELECT ps.divide(0);
DO $$ BEGIN PERFORM ps.divide(0); EXCEPTION WHEN division_by_zero THEN RAISE NOTICE 'caught'; END $$;

-- 2. the owner of an unprotected table reads its statistics as
-- PostgreSQL shows them, though it is untrusted for ps.secret
SET ROLE regress_ps_owner;
SELECT n_live_tup > 0 AS live, seq_scan >= 0 AS scans FROM pg_stat_user_tables WHERE relname = 'mine';
SELECT idx_scan >= 0 AS idx FROM pg_stat_user_indexes WHERE indexrelname = 'mine_id';
SELECT heap_blks_read + heap_blks_hit >= 0 AS io FROM pg_statio_user_tables WHERE relname = 'mine';
SELECT n_tup_ins >= 0 AS ins FROM pg_stat_xact_user_tables WHERE relname = 'mine';
SELECT pg_stat_get_live_tuples('ps.mine'::regclass) > 0 AS live,
       pg_stat_get_xact_tuples_inserted('ps.mine'::regclass) >= 0 AS xact;
SELECT attname, n_distinct FROM pg_stats WHERE schemaname = 'ps' AND tablename = 'mine' ORDER BY 1;
SELECT statistics_name, n_distinct IS NOT NULL AS has_ndistinct FROM pg_stats_ext WHERE schemaname = 'ps';
-- in PL/pgSQL too, and through a SQL function the planner inlines
CREATE FUNCTION ps.live(r regclass) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
  RETURN pg_stat_get_live_tuples(r);
END $$;
CREATE FUNCTION ps.live_sql(r regclass) RETURNS bigint LANGUAGE sql STABLE AS 'SELECT pg_stat_get_live_tuples(r)';
SELECT ps.live('ps.mine') > 0 AS plpgsql, ps.live_sql('ps.mine') > 0 AS sql;
-- not the protected table's, nor what mixes its reads
SELECT pg_stat_get_live_tuples('ps.secret'::regclass);
SELECT ps.live('ps.secret');
SELECT ps.live_sql('ps.secret');
SELECT relname, n_live_tup FROM pg_stat_user_tables WHERE relname IN ('mine', 'secret') ORDER BY relname;
SELECT tup_fetched FROM pg_stat_database WHERE datname = current_database();
RESET ROLE;

-- 3. a member of pg_monitor (through pg_read_all_stats, which
-- dp_agg.stats_trusted_role names) reads every cumulative statistic
SET ROLE regress_ps_monitor;
SELECT relname, n_live_tup > 0 AS live FROM pg_stat_user_tables WHERE schemaname = 'ps' ORDER BY 1;
SELECT pg_stat_get_live_tuples('ps.secret'::regclass) > 0 AS live,
       pg_stat_get_numscans('ps.secret_pkey'::regclass) >= 0 AS index_scans;
SELECT tup_fetched >= 0 AS fetched FROM pg_stat_database WHERE datname = current_database();
SELECT count(calls) >= 0 AS functions FROM pg_stat_user_functions;
-- but not the planner's statistics of the protected table, which hold its
-- values (it holds SELECT on it, which would show them without dp_agg)
SELECT count(*) FROM pg_stats WHERE schemaname = 'ps' AND tablename = 'secret';
SELECT count(*) FROM pg_stats WHERE schemaname = 'ps' AND tablename = 'mine';
RESET ROLE;
SELECT count(*) FROM pg_stats WHERE schemaname = 'ps' AND tablename = 'secret';
-- a DBA chooses the role; empty: nobody but each relation's trusted roles
SET dp_agg.stats_trusted_role = '';
SET ROLE regress_ps_monitor;
SELECT pg_stat_get_live_tuples('ps.secret'::regclass);
SELECT tup_fetched FROM pg_stat_database WHERE datname = current_database();
SELECT n_live_tup > 0 AS live FROM pg_stat_user_tables WHERE relname = 'mine';
-- only a superuser sets it
SET dp_agg.stats_trusted_role = 'regress_ps_monitor';
RESET ROLE;
RESET dp_agg.stats_trusted_role;

-- 4. an untrusted role is still refused every statistic that counts the
-- protected rows: the table's, its index's, its TOAST table's, its
-- partitioned parent's, the database's; the planner's statistics of the
-- table are filtered out of pg_stats and pg_stats_ext
SET ROLE regress_ps_analyst;
SELECT pg_stat_get_live_tuples('ps.secret'::regclass);
SELECT pg_stat_get_xact_tuples_fetched('ps.secret'::regclass);
SELECT pg_stat_get_tuples_fetched('ps.secret_pkey'::regclass);
SELECT pg_stat_get_mod_since_analyze('ps.parts'::regclass);
SELECT pg_stat_get_numscans('ps.parts_high'::regclass) >= 0 AS other_partition;
DO $$
BEGIN
  PERFORM pg_stat_get_blocks_fetched(reltoastrelid) FROM pg_class WHERE oid = 'ps.secret'::regclass;
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE 'TOAST table refused: %', SQLSTATE;
END $$;
SELECT relname, n_live_tup FROM pg_stat_user_tables WHERE relname IN ('mine', 'secret') ORDER BY relname;
SELECT n_live_tup > 0 AS live FROM pg_stat_user_tables WHERE relname = 'mine';
SELECT blks_hit FROM pg_stat_database WHERE datname = current_database();
SELECT count(*) FROM pg_stats WHERE schemaname = 'ps' AND tablename = 'secret';
SELECT count(*) FROM pg_stats WHERE schemaname = 'ps' AND tablename = 'mine';
SELECT dp_agg_internal.statistics_visible('pg_statistic', 'ps.secret'::regclass) AS secret,
       dp_agg_internal.statistics_visible('pg_statistic', 'ps.mine'::regclass) AS mine;
-- in PL/pgSQL, and through the owner's SQL function
SELECT ps.live('ps.secret');
SELECT ps.live_sql('ps.secret');
DO $$ BEGIN RAISE NOTICE '%', pg_stat_get_live_tuples('ps.secret'::regclass); END $$;
-- through an operator or a CHECK constraint, the relation is not known
-- before the call runs: refused whatever the relation
CREATE OPERATOR ps.### (RIGHTARG = oid, FUNCTION = pg_stat_get_live_tuples);
SELECT OPERATOR(ps.###) 'ps.mine'::regclass::oid;
CREATE TABLE ps.probe (r oid CHECK (pg_stat_get_live_tuples(r) < 1000));
INSERT INTO ps.probe VALUES ('ps.secret'::regclass);
-- nor in expressions that no planner hook sees, which told the exact
-- count before: CALL's arguments, EXECUTE's parameters, an aggregate's
-- final function
CREATE PROCEDURE ps.show(x bigint) LANGUAGE plpgsql AS $$ BEGIN RAISE NOTICE '%', x; END $$;
CALL ps.show(pg_stat_get_live_tuples('ps.secret'::regclass));
PREPARE shown(bigint) AS SELECT $1;
EXECUTE shown(pg_stat_get_live_tuples('ps.secret'::regclass));
DEALLOCATE shown;
CREATE AGGREGATE ps.live_agg(oid) (SFUNC = oidlarger, STYPE = oid, FINALFUNC = pg_stat_get_live_tuples);
SELECT ps.live_agg(r) FROM (VALUES ('ps.secret'::regclass::oid)) v(r);
-- the checking function calls nothing but a statistic of one relation,
-- of its own type, that the role may execute
SELECT dp_agg_internal.relation_statistic('ps.mine'::regclass, 'pg_sleep(double precision)'::regprocedure, NULL::void);
SELECT dp_agg_internal.relation_statistic('ps.mine'::regclass, 'pg_stat_get_live_tuples(oid)'::regprocedure, NULL::text);
SELECT dp_agg_internal.relation_statistic('ps.mine'::regclass, 'pg_stat_get_db_tuples_fetched(oid)'::regprocedure, NULL::bigint);
SELECT dp_agg_internal.relation_statistic('ps.secret'::regclass, 'pg_stat_get_live_tuples(oid)'::regprocedure, NULL::bigint);
SELECT dp_agg_internal.relation_statistic('ps.mine'::regclass, 'pg_stat_get_live_tuples(oid)'::regprocedure, NULL::bigint) > 0 AS live;
RESET ROLE;
REVOKE EXECUTE ON FUNCTION pg_stat_get_dead_tuples(oid) FROM PUBLIC;
SET ROLE regress_ps_analyst;
SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'mine';
RESET ROLE;
GRANT EXECUTE ON FUNCTION pg_stat_get_dead_tuples(oid) TO PUBLIC;

-- 5. cached plans: a plan of the trusted role is not reused by the
-- untrusted one, in the same transaction (SET ROLE) or after
CREATE FUNCTION ps.fetched() RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
  RETURN pg_stat_get_db_tuples_fetched(0);
END $$;
BEGIN;
SELECT ps.live('ps.secret') > 0 AS live, ps.fetched() >= 0 AS fetched;
SET LOCAL ROLE regress_ps_analyst;
SELECT ps.live('ps.secret');
ROLLBACK;
BEGIN;
SELECT ps.fetched() >= 0 AS fetched;
SET LOCAL ROLE regress_ps_analyst;
-- (its context line names the expression as PostgreSQL 18 words it differently)
\set SHOW_CONTEXT never
SELECT ps.fetched();
\set SHOW_CONTEXT errors
ROLLBACK;
-- a SECURITY DEFINER function reads as its owner
CREATE FUNCTION ps.live_definer(r regclass) RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
  RETURN pg_stat_get_live_tuples(r);
END $$;
SET ROLE regress_ps_analyst;
SELECT ps.live_definer('ps.secret') > 0 AS as_owner;
RESET ROLE;
-- a plan cached before a table was protected is made again
CREATE TABLE ps.later (id int);
INSERT INTO ps.later VALUES (1), (2);
GRANT SELECT ON ps.later TO regress_ps_analyst;
SET ROLE regress_ps_analyst;
PREPARE later_rows AS SELECT count(*) FROM ps.later;
EXECUTE later_rows;
CREATE FUNCTION ps.later_live() RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
  RETURN pg_stat_get_live_tuples('ps.later'::regclass);
END $$;
SELECT ps.later_live() >= 0 AS live;
RESET ROLE;
SELECT dp_agg.protect('ps.later');
SET ROLE regress_ps_analyst;
EXECUTE later_rows;
SELECT ps.later_live();
RESET ROLE;
SELECT dp_agg.unprotect('ps.later');
SET ROLE regress_ps_analyst;
EXECUTE later_rows;
SELECT ps.later_live() >= 0 AS live;
DEALLOCATE later_rows;
RESET ROLE;

-- the bounds of a privacy unit that an untrusted role may not raise hold
-- over the whole tree of a protected partition: through its unprotected
-- parent, and whichever partition the plan reads first
CREATE TABLE ps.caps (u int, g int, x int) PARTITION BY LIST (g);
CREATE TABLE ps.caps_pub PARTITION OF ps.caps FOR VALUES IN (0);
CREATE TABLE ps.caps_sec PARTITION OF ps.caps FOR VALUES IN (1);
INSERT INTO ps.caps SELECT k % 50, k % 2, 1 FROM generate_series(1, 1000) k;
CREATE ROLE regress_ps_caps;
GRANT USAGE ON SCHEMA ps TO regress_ps_caps;
GRANT SELECT ON ps.caps TO regress_ps_caps;
SELECT dp_agg.protect('ps.caps_sec');
SELECT dp_agg.grant_access('ps.caps_sec', 'regress_ps_caps');
SELECT dp_agg.set_privacy_unit('ps.caps', 'u', 1);
SELECT dp_agg.set_budget('regress_ps_caps', 1e12, 0.5);
SET ROLE regress_ps_caps;
SET dp_agg.max_groups_contributed = 2;
SELECT g, dp_count(u, 1) FROM ps.caps GROUP BY g;
RESET dp_agg.max_groups_contributed;
SET dp_agg.max_rows_contributed = 100;
SELECT dp_count(u, 1) FROM ps.caps;
SELECT dp_count(u, 1) FROM ps.caps WHERE g IN (0, 1);
RESET dp_agg.max_rows_contributed;
SELECT count(*) AS charged FROM dp_agg.my_ledger;
RESET ROLE;
SELECT dp_agg.clear_privacy_unit('ps.caps');
SELECT dp_agg.unprotect('ps.caps_sec');
DELETE FROM dp_agg.budget WHERE role = 'regress_ps_caps'::regrole;
DELETE FROM dp_agg.ledger WHERE role = 'regress_ps_caps'::regrole;

-- cleanup
SELECT dp_agg.unprotect('ps.secret'), dp_agg.unprotect('ps.parts_low');
DROP SCHEMA ps CASCADE;
DROP ROLE regress_ps_owner, regress_ps_monitor, regress_ps_analyst, regress_ps_caps;
