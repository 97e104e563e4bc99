--
-- protect: protected relations (README, "Protected tables").
--
\set SHOW_CONTEXT never
\set VERBOSITY default

-- the catalogs, dumped by pg_dump, readable by nobody but their owner
\d dp_agg.protected
\d dp_agg.access
SELECT d.dumped FROM (SELECT unnest(extconfig)::regclass AS dumped FROM pg_extension WHERE extname = 'dp_agg') d
WHERE d.dumped::text IN ('dp_agg.protected', 'dp_agg.access') ORDER BY 1;
SELECT c.relname, has_table_privilege('public', c.oid, 'SELECT') AS public_select
FROM pg_class c WHERE c.oid IN ('dp_agg.protected'::regclass, 'dp_agg.access'::regclass, 'dp_agg.my_access'::regclass)
ORDER BY 1;
-- the administration functions: EXECUTE revoked from PUBLIC
SELECT p.proname, has_function_privilege('public', p.oid, 'EXECUTE') AS public_execute
FROM pg_proc p WHERE p.pronamespace IN ('dp_agg'::regnamespace, 'dp_agg_internal'::regnamespace)
  AND p.proname IN ('protect', 'unprotect', 'grant_access', 'revoke_access', 'protect_changed', 'protect_forget_dropped')
ORDER BY 1;
-- everything is commented
SELECT c.relname FROM pg_class c
WHERE c.oid IN ('dp_agg.protected'::regclass, 'dp_agg.access'::regclass, 'dp_agg.my_access'::regclass)
  AND obj_description(c.oid, 'pg_class') IS NULL;
SELECT p.proname FROM pg_proc p WHERE p.pronamespace IN ('dp_agg'::regnamespace, 'dp_agg_internal'::regnamespace)
  AND p.proname IN ('protect', 'unprotect', 'grant_access', 'revoke_access', 'protect_changed', 'protect_forget_dropped')
  AND obj_description(p.oid, 'pg_proc') IS NULL;

CREATE ROLE regress_pr_owner;
CREATE ROLE regress_pr_analyst;
CREATE ROLE regress_pr_member IN ROLE regress_pr_owner;
CREATE ROLE regress_pr_admin;
CREATE ROLE regress_pr_noexec;
GRANT EXECUTE ON FUNCTION dp_agg.protect(regclass), dp_agg.unprotect(regclass),
  dp_agg.grant_access(regclass, regrole), dp_agg.revoke_access(regclass, regrole)
  TO regress_pr_owner, regress_pr_analyst, regress_pr_admin;
CREATE SCHEMA pr;
GRANT USAGE ON SCHEMA pr TO PUBLIC;
CREATE TABLE pr.visits (id int, age int);
INSERT INTO pr.visits SELECT i, 20 + i % 60 FROM generate_series(1, 500) i;
CREATE TABLE pr.parts (id int, age int) PARTITION BY RANGE (id);
CREATE TABLE pr.parts_low PARTITION OF pr.parts FOR VALUES FROM (0) TO (250);
CREATE TABLE pr.parts_high PARTITION OF pr.parts FOR VALUES FROM (250) TO (1000);
CREATE MATERIALIZED VIEW pr.mv AS SELECT id, age FROM pr.visits;
CREATE VIEW pr.v AS SELECT id FROM pr.visits;
CREATE SEQUENCE pr.seq;
CREATE INDEX visits_id ON pr.visits (id);
CREATE TYPE pr.pair AS (a int, b int);
CREATE TABLE pr.other (id int);
ALTER TABLE pr.visits OWNER TO regress_pr_owner;
ALTER TABLE pr.parts OWNER TO regress_pr_owner;
ALTER MATERIALIZED VIEW pr.mv OWNER TO regress_pr_owner;

-- protect: tables, partitioned tables, materialized views; true when it changed
SELECT dp_agg.protect('pr.visits');
SELECT dp_agg.protect('pr.visits');
SELECT dp_agg.protect('pr.parts');
SELECT dp_agg.protect('pr.mv');
SELECT relation, protected_at <= now() AS in_the_past FROM dp_agg.protected ORDER BY relation::text;
-- other kinds of relation, system catalogs, temporary tables, missing relations, NULL
SELECT dp_agg.protect('pr.v');
SELECT dp_agg.protect('pr.seq');
SELECT dp_agg.protect('pr.visits_id');
SELECT dp_agg.protect('pr.pair');
SELECT dp_agg.protect('pg_class');
SELECT dp_agg.protect('pg_toast.pg_toast_1262');
CREATE TEMPORARY TABLE tmp_visits (id int);
SELECT dp_agg.protect('tmp_visits');
SELECT dp_agg.protect(4294967295::oid::regclass);
SELECT dp_agg.protect(NULL);

-- grant_access and revoke_access: true when they changed something
SELECT dp_agg.grant_access('pr.visits', 'regress_pr_analyst');
SELECT dp_agg.grant_access('pr.visits', 'regress_pr_analyst');
SELECT dp_agg.grant_access('pr.parts', 'regress_pr_analyst');
SELECT relation, role, granted_at <= now() AS in_the_past FROM dp_agg.access ORDER BY relation::text, role::text;
SELECT dp_agg.grant_access('pr.parts_low', 'regress_pr_analyst');
SELECT dp_agg.grant_access('pr.visits', 4294967295::oid::regrole);
SELECT dp_agg.grant_access('pr.visits', NULL);
SELECT dp_agg.grant_access(NULL, 'regress_pr_analyst');
SELECT dp_agg.revoke_access('pr.parts', 'regress_pr_analyst');
SELECT dp_agg.revoke_access('pr.parts', 'regress_pr_analyst');
-- a role that no longer exists can lose its grant
SELECT dp_agg.revoke_access('pr.visits', 4294967295::oid::regrole);

-- my_access: the current role's grants only
SET ROLE regress_pr_analyst;
SELECT relation FROM dp_agg.my_access ORDER BY 1;
SELECT count(*) FROM dp_agg.access;
SELECT count(*) FROM dp_agg.protected;
-- an untrusted role administers nothing, even with EXECUTE
SELECT dp_agg.protect('pr.visits');
SELECT dp_agg.unprotect('pr.visits');
SELECT dp_agg.grant_access('pr.visits', 'regress_pr_analyst');
SELECT dp_agg.revoke_access('pr.visits', 'regress_pr_analyst');
-- nor writes the catalogs directly
INSERT INTO dp_agg.protected VALUES ('pr.v');
DELETE FROM dp_agg.access;
RESET ROLE;
SET ROLE regress_pr_admin;
SELECT dp_agg.unprotect('pr.visits');
RESET ROLE;
-- without EXECUTE: the standard error
SET ROLE regress_pr_noexec;
SELECT dp_agg.unprotect('pr.mv');
RESET ROLE;
-- the owner, and a role with its privileges, administer the relation
SET ROLE regress_pr_owner;
SELECT dp_agg.grant_access('pr.mv', 'regress_pr_analyst');
SET ROLE regress_pr_member;
SELECT dp_agg.revoke_access('pr.mv', 'regress_pr_analyst');
SELECT dp_agg.unprotect('pr.mv');
SELECT dp_agg.protect('pr.mv');
-- but not a relation it does not own
SELECT dp_agg.protect('pr.other');
RESET ROLE;

-- grants need protection; unprotect removes them
SELECT dp_agg.unprotect('pr.mv');
SELECT dp_agg.grant_access('pr.mv', 'regress_pr_analyst');
SELECT dp_agg.grant_access('pr.parts', 'regress_pr_analyst');
SELECT dp_agg.unprotect('pr.parts');
SELECT dp_agg.unprotect('pr.parts');
SELECT relation, role FROM dp_agg.access ORDER BY relation::text, role::text;

-- a dropped relation leaves no row behind (its OID could be reused)
CREATE TABLE pr.dropped (id int);
SELECT dp_agg.protect('pr.dropped');
SELECT dp_agg.grant_access('pr.dropped', 'regress_pr_analyst');
DROP TABLE pr.dropped;
SELECT relation FROM dp_agg.protected ORDER BY relation::text;
SELECT relation, role FROM dp_agg.access ORDER BY relation::text, role::text;

-- Rules 1 and 2: an untrusted role reads a protected relation only through
-- DP statements; with a grant it needs no SELECT.  At epsilon 1e9 a count
-- equals the exact count except with probability about 2 exp(-1e9)
-- (discrete Laplace noise of scale 1e-9), so the values below are exact.
CREATE ROLE regress_pr_reader;
CREATE ROLE regress_pr_nobody;
SELECT dp_agg.protect('pr.parts');
INSERT INTO pr.parts SELECT i, 20 + i % 60 FROM generate_series(1, 400) i;
SELECT dp_agg.grant_access('pr.parts', 'regress_pr_analyst');
SELECT dp_agg.protect('pr.mv');
SELECT dp_agg.grant_access('pr.mv', 'regress_pr_analyst');
GRANT SELECT ON pr.visits TO regress_pr_reader;
GRANT SELECT ON pr.other TO regress_pr_analyst;
SELECT dp_agg.set_budget(r, 1e12) FROM unnest('{regress_pr_analyst, regress_pr_reader, regress_pr_nobody, regress_pr_owner}'::regrole[]) r;
CREATE VIEW pr.visits_view AS SELECT id, age FROM pr.visits;
ALTER VIEW pr.visits_view OWNER TO regress_pr_owner;
GRANT SELECT ON pr.visits_view TO regress_pr_analyst, regress_pr_reader;
CREATE FUNCTION pr.count_visits() RETURNS bigint LANGUAGE sql AS 'SELECT count(*) FROM pr.visits';
CREATE FUNCTION pr.count_visits_plpgsql() RETURNS bigint LANGUAGE plpgsql AS 'BEGIN RETURN (SELECT count(*) FROM pr.visits); END';
SET ROLE regress_pr_analyst;
-- what plain SQL would read is refused, with or without SELECT
SELECT * FROM pr.visits LIMIT 1;
SELECT count(*) FROM pr.visits;
SELECT count(*) FROM pr.visits_view;
SELECT pr.count_visits();
SELECT pr.count_visits_plpgsql();
CREATE TEMPORARY TABLE copied AS SELECT * FROM pr.visits;
COPY (SELECT id FROM pr.visits) TO STDOUT;
BEGIN;
DECLARE c CURSOR FOR SELECT id FROM pr.visits;
ROLLBACK;
SELECT count(*) FROM pr.parts;
SELECT count(*) FROM pr.parts_low;
SELECT count(*) FROM pr.mv;
-- DP statements are allowed and charged
SELECT count(*) AS ledger_before FROM dp_agg.my_ledger \gset
SELECT dp_count(id, 1e9) AS n FROM pr.visits;
SELECT dp_count(id, 1e9) AS n FROM pr.visits WHERE age < 30;
SELECT dp_count(id, 1e9) AS n FROM pr.visits_view;
SELECT dp_count(id, 1e9) AS n FROM pr.parts;
SELECT dp_count(id, 1e9) AS n FROM pr.parts_high;
SELECT dp_count(id, 1e9) AS n FROM pr.mv;
COPY (SELECT dp_count(id, 1e9) AS n FROM pr.visits) TO STDOUT;
CREATE TEMPORARY TABLE released AS SELECT dp_count(id, 1e9) AS n FROM pr.visits;
SELECT n FROM released;
DROP TABLE released;
SELECT count(*) - :ledger_before AS charged FROM dp_agg.my_ledger;
-- in parallel workers too
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT dp_count(id, 1e9) AS n FROM pr.visits;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
-- a DP statement that also reads the relation elsewhere is refused
SELECT dp_count(id, 1e9), (SELECT count(*) FROM pr.visits) FROM pr.other;
SELECT n, (SELECT max(id) FROM pr.visits) FROM (SELECT dp_count(id, 1e9) AS n FROM pr.other) s;
WITH rows AS MATERIALIZED (SELECT id FROM pr.visits)
SELECT dp_count(id, 1e9) FROM rows;
-- writes too
INSERT INTO pr.visits VALUES (1, 1);
-- unprotected relations behave as before
SELECT count(*) FROM pr.other;
RESET ROLE;

-- SELECT without a grant: DP statements only
SET ROLE regress_pr_reader;
SELECT count(*) FROM pr.visits;
COPY pr.visits TO STDOUT;
SELECT dp_count(id, 1e9) AS n FROM pr.visits;
SELECT dp_count(id, 1e9) AS n FROM pr.visits_view;
RESET ROLE;
-- neither SELECT nor a grant: the standard permission error
SET ROLE regress_pr_nobody;
SELECT dp_count(id, 1e9) AS n FROM pr.visits;
COPY pr.visits TO STDOUT;
RESET ROLE;

-- trusted roles: superusers, the owner and its members read as before
SELECT count(*) FROM pr.visits;
SET ROLE regress_pr_owner;
SELECT count(*) FROM pr.visits;
-- (the partitions belong to the superuser: the owner of the partitioned
-- table is trusted for them, and reads them through it as PostgreSQL lets
-- it; reading one directly needs SELECT on it, as before)
SELECT count(*) FROM pr.parts;
SET ROLE regress_pr_member;
SELECT count(*) FROM pr.parts_low;
RESET ROLE;

-- a cached plan carries nobody's rights to another role
SET plan_cache_mode = force_generic_plan;
SET ROLE regress_pr_analyst;
PREPARE released_count AS SELECT dp_count(id, 1e9) AS n FROM pr.visits;
EXECUTE released_count;
SET ROLE regress_pr_nobody;
EXECUTE released_count;
SET ROLE regress_pr_analyst;
EXECUTE released_count;
RESET ROLE;
-- and a revoked grant or lifted protection takes effect at once
SELECT dp_agg.revoke_access('pr.visits', 'regress_pr_analyst');
SET ROLE regress_pr_analyst;
EXECUTE released_count;
RESET ROLE;
SELECT dp_agg.grant_access('pr.visits', 'regress_pr_analyst');
SET ROLE regress_pr_analyst;
EXECUTE released_count;
RESET ROLE;
DEALLOCATE released_count;
RESET plan_cache_mode;
SELECT dp_agg.unprotect('pr.visits');
SET ROLE regress_pr_reader;
SELECT count(*) FROM pr.visits;
RESET ROLE;
SELECT dp_agg.protect('pr.visits');
SELECT dp_agg.grant_access('pr.visits', 'regress_pr_analyst');

-- Rule 3: the stricter guard for untrusted roles.  Outputs: DP aggregates,
-- constants and expressions over them only
SET ROLE regress_pr_analyst;
SELECT dp_count(id, 1e9) AS n, count(*) FROM pr.visits;
SELECT dp_count(id, 1e9) AS n FROM pr.visits HAVING count(*) > 0;
SELECT dp_count(id, 1e9) AS n FROM pr.visits ORDER BY max(age);
SELECT dp_count(id, 1e9) AS n, string_agg(id::text, ',') FROM pr.visits;
SELECT dp_count(id, 1e9) OVER () FROM pr.visits;
SELECT dp_count(id, 1e9) AS n, row_number() OVER () FROM pr.visits;
SELECT age, dp_count(id, 1e9) AS n FROM pr.visits GROUP BY age;
SELECT dp_count(id, 1e9) AS n FROM pr.visits GROUP BY ();
-- expressions over the DP results are free
SELECT dp_count(id, 1e9) * 2 + 1 AS twice, round(dp_count(id, 1e9)::numeric / 7, 2) AS seventh
FROM pr.visits HAVING dp_count(id, 1e9) > 0;
SELECT n + 1 AS n1 FROM (SELECT dp_count(id, 1e9) AS n FROM pr.visits) s WHERE n > 0;
-- a DP aggregate the planner removes costs nothing: the scan that would
-- feed it is refused
SELECT 1 AS one FROM (SELECT dp_count(id, 1e9) AS n FROM pr.visits) s;
SELECT count(*) FROM (SELECT dp_count(id, 1e9) AS n FROM pr.visits) s;
SELECT EXISTS (SELECT dp_count(id, 1e9) FROM pr.visits) AS e;
-- functions on rows: LEAKPROOF, the everyday built-ins (a call that fails
-- on a row yields NULL for it: 1 / (age - 50) for age 50, age::text::int2
-- never), the allow-list (protect_rowpath tests each built-in on extreme
-- values)
SELECT dp_count(id, 1e9) AS n FROM pr.visits WHERE age < 30 AND id <> 7 AND id IN (1, 2, 3);
SELECT dp_count(id, 1e9) AS n FROM pr.visits WHERE age::numeric < 30.5;
SELECT dp_count(id, 1e9) AS n FROM pr.visits WHERE 1 / (age - 50) > 0;
SELECT dp_count(id, 1e9) AS n FROM pr.visits WHERE age + 1 < 31;
SELECT dp_count(id, 1e9) AS n FROM pr.visits WHERE age::text::int < 30;
SELECT dp_count(id, 1e9) AS n FROM pr.visits WHERE (age::text)::int2 > 0;
SELECT dp_sum(age * 2, 0, 200, 1e9) FROM pr.visits;
SELECT dp_count(id, 1e9) FILTER (WHERE age % 2 = 0) FROM pr.visits;
SELECT dp_count(id, 1e9) AS n FROM pr.visits WHERE CASE WHEN age < 30 THEN true ELSE NULL END IS NOT NULL;
SELECT dp_count(id, 1e9) AS n FROM pr.visits WHERE GREATEST(age, 1) > 0;
-- side effects, per row or not: volatile functions, sequences, user-defined functions
SELECT dp_count(id, 1e9) AS n FROM pr.visits WHERE nextval('pr.seq') > 0;
SELECT dp_count(id, 1e9) AS n FROM pr.visits WHERE set_config('pr.x', id::text, true) IS NOT NULL;
SELECT dp_count(id, 1e9) AS n FROM pr.visits WHERE pg_notify('pr', age::text) IS NOT NULL;
SELECT dp_count(id, 1e9) AS n FROM pr.visits WHERE random() < 2;
SELECT dp_count(id, 1e9) AS n FROM pr.visits WHERE pg_sleep(0) IS NOT NULL;
CREATE FUNCTION pg_temp.peek(int) RETURNS bool LANGUAGE plpgsql IMMUTABLE AS 'BEGIN RAISE NOTICE ''%'', $1; RETURN true; END';
SELECT dp_count(id, 1e9) AS n FROM pr.visits WHERE pg_temp.peek(age);
SELECT dp_count(id, dp_agg.laplace_scale(1, 1)) AS n FROM pr.visits;
-- in views and sub-queries too
SELECT dp_count(id, 1e9) AS n FROM (SELECT id FROM pr.visits WHERE 10 / (age - 50) > 0) s;
SELECT dp_count(id, 1e9) AS n FROM pr.visits_view WHERE age + 0 > 0;
RESET ROLE;
-- the allow-list: built-in, non-volatile C functions only; allowing one
-- says what it means
SET ROLE regress_pr_analyst;
SELECT dp_count(id, 1e9) AS n FROM pr.visits WHERE encode(age::text::bytea, 'hex') = '3230';
RESET ROLE;
SELECT dp_agg.allow_function('encode(bytea, text)');
SELECT dp_agg.allow_function('encode(bytea, text)');
SELECT function FROM dp_agg.allowed_function ORDER BY 1;
SET ROLE regress_pr_analyst;
SELECT dp_count(id, 1e9) AS n FROM pr.visits WHERE encode(age::text::bytea, 'hex') = '3230';
-- (a bad encoding fails on every row: each yields NULL)
SELECT dp_count(id, 1e9) AS n FROM pr.visits WHERE encode(age::text::bytea, 'no such') IS NULL;
SELECT function FROM dp_agg.allowed_function ORDER BY 1;
SELECT dp_agg.allow_function('int4mi(integer, integer)');
RESET ROLE;
SELECT dp_agg.disallow_function('encode(bytea, text)');
SELECT dp_agg.disallow_function('encode(bytea, text)');
SELECT dp_agg.allow_function('random()');
SELECT dp_agg.allow_function('pg_temp.peek(int)');
SELECT dp_agg.allow_function('dp_agg.protect(regclass)');
SELECT dp_agg.allow_function('lpad(text, integer)');
SELECT dp_agg.allow_function(NULL);
SELECT p.proname, has_function_privilege('public', p.oid, 'EXECUTE') AS public_execute
FROM pg_proc p WHERE p.pronamespace = 'dp_agg'::regnamespace AND p.proname IN ('allow_function', 'disallow_function')
ORDER BY 1;
SET ROLE regress_pr_analyst;
SELECT dp_count(id, 1e9) AS n FROM pr.visits WHERE encode(age::text::bytea, 'hex') = '3230';
RESET ROLE;
-- the functions allowed on rows (dp_agg.row_functions): built in, not
-- volatile, one value each, C or SQL the planner inlines; every LEAKPROOF
-- one among them
SELECT evaluation, count(*) > 100 AS many FROM dp_agg.row_functions() GROUP BY 1 ORDER BY 1;
SELECT f.function FROM dp_agg.row_functions() f JOIN pg_proc p ON p.oid = f.function
WHERE p.oid >= 16384 OR p.provolatile = 'v' OR p.proretset OR p.prolang NOT IN (12, 14);
SELECT p.oid::regprocedure FROM pg_proc p
WHERE p.proleakproof AND p.oid < 16384 AND p.prolang = 12 AND p.provolatile <> 'v' AND NOT p.proretset
  AND p.proconfig IS NULL AND p.oid NOT IN (SELECT function FROM dp_agg.row_functions());
-- the everyday ones of the README are among them
SELECT f FROM (VALUES
  ('int4pl(integer,integer)'),
  ('int4div(integer,integer)'),
  ('numeric_add(numeric,numeric)'),
  ('float8mul(double precision,double precision)'),
  ('lower(text)'),
  ('substring(text,integer,integer)'),
  ('left(text,integer)'),
  ('position(text,text)'),
  ('replace(text,text,text)'),
  ('btrim(text)'),
  ('textcat(text,text)'),
  ('date_trunc(text,timestamp without time zone)'),
  ('date_part(text,timestamp with time zone)'),
  ('extract(text,date)'),
  ('make_date(integer,integer,integer)'),
  ('timestamp_pl_interval(timestamp without time zone,interval)'),
  ('to_char(timestamp without time zone,text)'),
  ('width_bucket(numeric,numeric,numeric,integer)'),
  ('round(numeric,integer)'),
  ('floor(double precision)'),
  ('ceil(numeric)'),
  ('abs(integer)'),
  ('textlike(text,text)'),
  ('texticlike(text,text)'),
  ('textregexeq(text,text)'),
  ('regexp_replace(text,text,text)')) v(f)
WHERE f::regprocedure NOT IN (SELECT function FROM dp_agg.row_functions());
-- entries name functions by signature (pg_upgrade keeps no function OIDs),
-- resolved under the search_path pg_catalog, pg_temp whatever the
-- session's; a bare OID or a signature of no function names none
SELECT dp_agg.resolve_allowed_function('pg_catalog.int4pl(integer,integer)') AS qualified,
       dp_agg.resolve_allowed_function('int4pl( int4, pg_catalog.int4 )') AS spelled,
       dp_agg.resolve_allowed_function('pg_catalog.no_such(integer)') AS missing,
       dp_agg.resolve_allowed_function('177') AS bare_oid,
       dp_agg.resolve_allowed_function('177'::regprocedure::text) AS oid_text;
-- an entry in another spelling (as restored from a dump of version 0.3)
-- allows the function, also for a session whose search_path finds another
-- encode first; entries of no function allow nothing and break nothing
-- (encode, not int4pl: the everyday built-ins need no entry)
CREATE FUNCTION pr.encode(bytea, text) RETURNS text LANGUAGE sql IMMUTABLE AS 'SELECT ''3230''';
INSERT INTO dp_agg.allowed_function (function)
VALUES ('encode(bytea, text)'), ('pg_catalog.no_such(integer)'), ('177');
SET ROLE regress_pr_analyst;
SET search_path = pr, pg_catalog, public;
SELECT dp_agg.resolve_allowed_function('encode(bytea,text)') = 'pg_catalog.encode(bytea,text)'::regprocedure AS built_in;
SELECT dp_count(id, 1e9) AS n FROM pr.visits WHERE pg_catalog.encode(age::text::bytea, 'hex') = '3230';
RESET search_path;
RESET ROLE;
SELECT dp_agg.allow_function('encode(bytea,text)') AS added_again;
SELECT dp_agg.disallow_function('encode(bytea,text)') AS removed;
SELECT function, dp_agg.resolve_allowed_function(function) FROM dp_agg.allowed_function ORDER BY 1;
SET ROLE regress_pr_analyst;
SELECT dp_count(id, 1e9) AS n FROM pr.visits WHERE pg_catalog.encode(age::text::bytea, 'hex') = '3230';
RESET ROLE;
DELETE FROM dp_agg.allowed_function;
DROP FUNCTION pr.encode(bytea, text);
-- the built-in list neither fails nor has side effects on extreme values
-- (the integer casts to numeric, exact, are LEAKPROOF already)
SELECT 'NaN'::numeric = 'Infinity'::numeric AS eq, 'NaN'::numeric <> '-Infinity'::numeric AS ne,
       '-Infinity'::numeric < 'NaN'::numeric AS lt, 'NaN'::numeric <= 'NaN'::numeric AS le,
       '1e-16383'::numeric > '-1e131071'::numeric AS gt, '9.999e131071'::numeric >= 'Infinity'::numeric AS ge;
SELECT abs('-Infinity'::float4) AS a4, abs('NaN'::float8) AS a8, float4abs('-3.4e38') AS f4,
       float8abs('-1.7976931348623157e308') AS f8, abs('-4.9e-324'::float8) AS tiny;
SELECT float8larger('NaN', 'Infinity') AS larger, float8smaller('-Infinity', 'NaN') AS smaller,
       float8larger('-0', '0') AS zeros;
SELECT length(''::text) AS empty, length(repeat('é', 100000)) AS long, char_length(E'\u00e9t\u00e9') AS chars,
       textlen(repeat('x', 1000000)) AS million;
-- each entry of the list is built in, not volatile, and not LEAKPROOF already
SELECT p.oid::regprocedure, p.provolatile, p.proleakproof FROM pg_proc p
WHERE p.oid IN ('numeric_eq'::regproc, 'numeric_ne'::regproc, 'numeric_lt'::regproc, 'numeric_le'::regproc,
                'numeric_gt'::regproc, 'numeric_ge'::regproc, 'float4abs'::regproc,
                'float8abs'::regproc, 'abs(real)'::regprocedure, 'abs(double precision)'::regprocedure,
                'float8larger'::regproc, 'float8smaller'::regproc, 'textlen'::regproc,
                'length(text)'::regprocedure, 'char_length(text)'::regprocedure)
ORDER BY p.oid;
-- trusted roles are not restricted
SET ROLE regress_pr_owner;
SELECT dp_count(id, 1e9) AS n, count(*) FROM pr.visits WHERE age + 1 < 31;
SET dp_agg.group_keys = 'public';
SELECT age / 10 AS decade, dp_count(id, 1e9) AS n FROM pr.visits GROUP BY 1 ORDER BY 1 LIMIT 2;
RESET dp_agg.group_keys;
RESET ROLE;
-- a plan cached for a trusted role is planned again for an untrusted one
SET plan_cache_mode = force_generic_plan;
SET ROLE regress_pr_owner;
PREPARE leaky AS SELECT dp_count(id, 1e9) AS n, count(*) AS exact FROM pr.visits;
EXECUTE leaky;
SET ROLE regress_pr_analyst;
EXECUTE leaky;
RESET ROLE;
DEALLOCATE leaky;
-- and a plan made before the relation was protected is made again after
SET ROLE regress_pr_analyst;
PREPARE before_protect AS SELECT dp_count(id, 1e9) AS n, count(*) AS exact FROM pr.other;
EXECUTE before_protect;
RESET ROLE;
SELECT dp_agg.protect('pr.other');
SET ROLE regress_pr_analyst;
EXECUTE before_protect;
RESET ROLE;
SELECT dp_agg.unprotect('pr.other');
DEALLOCATE before_protect;
RESET plan_cache_mode;

-- Rule 4: EXPLAIN in any form is refused to untrusted roles; preview works
SET ROLE regress_pr_analyst;
EXPLAIN SELECT dp_count(id, 1e9) FROM pr.visits;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT dp_count(id, 1e9) FROM pr.visits;
EXPLAIN ANALYZE SELECT dp_count(id, 1e9) FROM pr.visits;
EXPLAIN (ANALYZE, BUFFERS) SELECT dp_count(id, 1e9) FROM pr.visits;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT dp_count(id, 1e9) FROM pr.visits_view WHERE age < 30;
EXPLAIN (COSTS OFF) SELECT * FROM pr.visits;
PREPARE counted AS SELECT dp_count(id, 1e9) AS n FROM pr.visits WHERE age < 30;
EXPLAIN (COSTS OFF) EXECUTE counted;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) EXECUTE counted;
SELECT count(*) AS ledger_before FROM dp_agg.my_ledger \gset
SELECT call, aggregate, epsilon FROM dp_agg.preview('SELECT dp_count(id, 0.5) FROM pr.visits WHERE age < 30');
SELECT count(*) - :ledger_before AS charged FROM dp_agg.my_ledger;
SELECT call FROM dp_agg.preview('SELECT dp_count(id, 0.5), count(*) FROM pr.visits');
DEALLOCATE counted;
RESET ROLE;
-- trusted roles explain as before
SET ROLE regress_pr_owner;
EXPLAIN (COSTS OFF) SELECT dp_count(id, 1e9) FROM pr.visits;
RESET ROLE;

-- Rule 5: no row counts from statistics for a role untrusted for some
-- protected relation; table sizes stay public
ANALYZE pr.visits;
CREATE STATISTICS pr.visits_stats (ndistinct) ON id, age FROM pr.visits;
ANALYZE pr.visits;
CREATE FUNCTION pr.fetched(oid) RETURNS bigint LANGUAGE sql STABLE AS 'SELECT pg_stat_get_tuples_fetched($1)';
SET ROLE regress_pr_reader;
SELECT count(*) FROM pg_stats WHERE tablename = 'visits';
SELECT count(*) FROM pg_stats_ext;
SELECT pg_stat_get_tuples_fetched('pr.visits'::regclass) >= 0 AS fetched;
SELECT pg_stat_get_xact_tuples_fetched('pr.visits'::regclass) >= 0 AS fetched;
SELECT pg_stat_get_db_tuples_fetched(d.oid) >= 0 AS fetched FROM pg_database d WHERE d.datname = current_database();
SELECT pr.fetched('pr.visits'::regclass) >= 0 AS fetched;
SELECT count(n_live_tup) FROM pg_stat_user_tables WHERE relname = 'visits';
SELECT count(*) FROM pg_stat_xact_user_tables WHERE relname = 'visits';
SELECT sum(heap_blks_hit) >= 0 AS hits FROM pg_statio_user_tables WHERE relname = 'visits';
SELECT sum(tup_fetched) >= 0 AS fetched FROM pg_stat_database;
-- (statistics the query does not compute are not refused)
SELECT count(*) > 0 AS databases FROM pg_stat_database;
SELECT count(*) FROM pg_stat_user_functions;
-- what remains public: sizes, server activity
SELECT reltuples > 0 AS has_rows, relpages > 0 AS has_pages FROM pg_class WHERE oid = 'pr.visits'::regclass;
SELECT pg_relation_size('pr.visits') > 0 AS sized;
SELECT count(*) > 0 AS active FROM pg_stat_activity;
RESET ROLE;
-- trusted roles read statistics as before
SELECT count(*) > 0 AS stats FROM pg_stats WHERE schemaname = 'pr' AND tablename = 'visits';
SELECT pg_stat_get_numscans('pr.visits'::regclass) >= 0 AS scans;
SELECT count(n_live_tup) > 0 AS live FROM pg_stat_user_tables WHERE schemaname = 'pr';

-- cleanup
DROP FUNCTION pg_temp.peek(int);
SELECT dp_agg.unprotect(relation) FROM dp_agg.protected WHERE relation::text LIKE 'pr.%';
DROP SCHEMA pr CASCADE;
REVOKE EXECUTE ON FUNCTION dp_agg.protect(regclass), dp_agg.unprotect(regclass),
  dp_agg.grant_access(regclass, regrole), dp_agg.revoke_access(regclass, regrole)
  FROM regress_pr_owner, regress_pr_analyst, regress_pr_admin;
DELETE FROM dp_agg.budget WHERE role::text LIKE 'regress_pr_%';
DELETE FROM dp_agg.ledger WHERE role::text LIKE 'regress_pr_%';
DROP ROLE regress_pr_owner, regress_pr_analyst, regress_pr_member, regress_pr_admin, regress_pr_noexec,
  regress_pr_reader, regress_pr_nobody;
