--
-- side_reads: a DP statement reads the rows of its input only through its
-- DP aggregates, for every role (README, "What the guard accepts").  A
-- function whose value depends on other rows of the relations that feed
-- the DP aggregates would make a release depend on them: WHERE f() > 0,
-- where f counts unit 42's rows, releases a count or nothing as unit 42 is
-- there or not.  Refused at planning, before the charge: SQL functions
-- (seen into) that read those relations, built-in functions that read
-- relations or their statistics by name, and on the rows' path functions
-- in other languages that are not IMMUTABLE.  At execution, the property
-- itself: no statement run while a DP statement is planned or runs reads
-- them (an IMMUTABLE function that does, a function over the releases).
-- Here as a role that holds SELECT on an unprotected table: protection
-- plays no part.
--
CREATE FUNCTION sr_try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN EXECUTE q; RETURN 'no error';
EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE || ': ' || SQLERRM; END $$;
CREATE ROLE regress_sr_analyst;
SELECT dp_agg.set_budget('regress_sr_analyst', 1e12, 0.5);
CREATE SCHEMA sr;
GRANT USAGE ON SCHEMA sr TO regress_sr_analyst;
-- 100 units of 5 rows; unit 42 has 50 rows more; a lookup table
CREATE TABLE sr.visits (u int, x int);
INSERT INTO sr.visits SELECT u, 1 FROM generate_series(1, 100) u, generate_series(1, 5) r;
INSERT INTO sr.visits SELECT 42, 1 FROM generate_series(1, 50) r;
SELECT dp_agg.set_privacy_unit('sr.visits', 'u');
CREATE TABLE sr.lookup (k int);
INSERT INTO sr.lookup VALUES (1);
CREATE VIEW sr.visits_view AS SELECT * FROM sr.visits;
GRANT SELECT ON sr.visits, sr.lookup, sr.visits_view TO regress_sr_analyst;
-- functions that read the rows, in every form
CREATE FUNCTION sr.unit42_present() RETURNS bigint LANGUAGE sql STABLE
AS 'SELECT count(*) FROM sr.visits WHERE u = 42';
CREATE FUNCTION sr.via_view() RETURNS bigint LANGUAGE sql STABLE
AS 'SELECT count(*) FROM sr.visits_view WHERE u = 42';
CREATE FUNCTION sr.atomic42() RETURNS bigint LANGUAGE sql STABLE
BEGIN ATOMIC SELECT count(*) FROM sr.visits WHERE u = 42; END;
CREATE FUNCTION sr.nested(int) RETURNS bigint LANGUAGE sql STABLE
AS 'SELECT $1 + sr.unit42_present()';
CREATE FUNCTION sr.poly(anyelement) RETURNS bigint LANGUAGE sql STABLE
AS 'SELECT count(*) FROM sr.visits WHERE u = 42';
CREATE FUNCTION sr.plpgsql42() RETURNS bigint LANGUAGE plpgsql STABLE
AS 'BEGIN RETURN (SELECT count(*) FROM sr.visits WHERE u = 42); END';
CREATE FUNCTION sr.liar42() RETURNS bigint LANGUAGE plpgsql IMMUTABLE
AS 'BEGIN RETURN (SELECT count(*) FROM sr.visits WHERE u = 42); END';
CREATE FUNCTION sr.liar_row(int) RETURNS bigint LANGUAGE plpgsql IMMUTABLE
AS 'BEGIN RETURN (SELECT count(*) FROM sr.visits WHERE u = $1); END';
CREATE FUNCTION sr.plus42(bigint) RETURNS bigint LANGUAGE plpgsql
AS 'BEGIN RETURN $1 + (SELECT count(*) FROM sr.visits WHERE u = 42); END';
CREATE DOMAIN sr.checked AS int CHECK (sr.unit42_present() > 0);
-- functions that do not: a lookup in another table, arithmetic, a
-- formatting function over the releases
CREATE FUNCTION sr.lookup_one() RETURNS int LANGUAGE sql STABLE
AS 'SELECT min(k) FROM sr.lookup';
CREATE FUNCTION sr.plus_one(int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT $1 + 1';
CREATE FUNCTION sr.plus_one_pl(int) RETURNS int LANGUAGE plpgsql IMMUTABLE
AS 'BEGIN RETURN $1 + 1; END';
CREATE FUNCTION sr.label(bigint) RETURNS text LANGUAGE plpgsql
AS 'BEGIN RETURN ''about '' || $1; END';
-- the same name in another schema, read under the function's search_path
CREATE SCHEMA sr_other;
GRANT USAGE ON SCHEMA sr_other TO regress_sr_analyst;
CREATE TABLE sr_other.visits (u int);
GRANT SELECT ON sr_other.visits TO regress_sr_analyst;
CREATE FUNCTION sr.other_visits() RETURNS bigint LANGUAGE sql STABLE
SET search_path = sr_other AS 'SELECT count(*) FROM visits';
CREATE FUNCTION sr.own_visits() RETURNS bigint LANGUAGE sql STABLE
SET search_path = sr AS 'SELECT count(*) FROM visits';

SET ROLE regress_sr_analyst;
SET dp_agg.epsilon = 1e9;
SELECT count(*) AS charges_before FROM dp_agg.my_ledger \gset
-- refused at planning, before the charge
SELECT sr_try($$SELECT dp_count(*) FROM sr.visits WHERE sr.unit42_present() > 0$$);
SELECT sr_try($$SELECT dp_count(*) FROM sr.visits WHERE x < sr.via_view()$$);
SELECT sr_try($$SELECT dp_count(*) FROM sr.visits WHERE sr.atomic42() > 0$$);
SELECT sr_try($$SELECT dp_count(*) FROM sr.visits WHERE sr.nested(x) > 0$$);
SELECT sr_try($$SELECT dp_count(*) FROM sr.visits WHERE sr.poly(x) > 0$$);
SELECT sr_try($$SELECT dp_sum(x, 0, 10) FILTER (WHERE sr.unit42_present() > 0) FROM sr.visits$$);
SELECT sr_try($$SELECT dp_count(*) FROM sr.visits WHERE sr.own_visits() > 0$$);
SELECT sr_try($$SELECT dp_count(*) FROM sr.visits WHERE x::sr.checked > 0$$);
SELECT sr_try($$SELECT dp_count(*) FROM (SELECT * FROM sr.visits_view WHERE sr.atomic42() > 0) s$$);
-- over the releases too: the output would not be DP
SELECT sr_try($$SELECT dp_count(*) + sr.unit42_present() FROM sr.visits$$);
SELECT sr_try($$SELECT c FROM (SELECT dp_count(*) c FROM sr.visits) s WHERE c > sr.unit42_present()$$);
-- built-in functions that read relations or their statistics by name
SELECT sr_try($$SELECT dp_count(*) FROM sr.visits WHERE query_to_xml('SELECT 1', true, true, '') IS NOT NULL$$);
SELECT sr_try($$SELECT dp_count(*), table_to_xml('sr.visits', true, true, '') FROM sr.visits$$);
SELECT sr_try($$SELECT dp_count(*) FROM sr.visits WHERE pg_stat_get_live_tuples('sr.visits'::regclass) > 0$$);
-- on the rows' path, a function dp_agg cannot see into: refused unless
-- IMMUTABLE (the message says what to write)
\set VERBOSITY default
SELECT dp_count(*) FROM sr.visits WHERE sr.plpgsql42() > 0;
SELECT dp_count(*) FROM sr.visits WHERE sr.unit42_present() > 0;
\set VERBOSITY terse
SELECT count(*) - :charges_before AS charged_for_refused FROM dp_agg.my_ledger;

-- at execution: an IMMUTABLE function that reads the rows anyway.  Of
-- constants, the planner evaluates it: refused before the charge; of a
-- row, while the statement runs: charged, nothing released
SELECT sr_try($$SELECT dp_count(*) FROM sr.visits WHERE sr.liar42() > 0$$);
SELECT count(*) - :charges_before AS charged_after_planning FROM dp_agg.my_ledger;
SELECT sr_try($$SELECT dp_count(*) FROM sr.visits WHERE sr.liar_row(u) > 0$$);
-- a function in another language over the releases
SELECT sr_try($$SELECT sr.plus42(dp_count(*)) FROM sr.visits$$);
SELECT count(*) - :charges_before AS charged_at_execution FROM dp_agg.my_ledger;
-- a cursor on the rows, fetched by a function on them
BEGIN;
DECLARE sr_rows CURSOR FOR SELECT u FROM sr.visits;
CREATE FUNCTION pg_temp.fetch_row() RETURNS int LANGUAGE plpgsql IMMUTABLE
AS $$DECLARE r int; c refcursor := 'sr_rows'; BEGIN FETCH c INTO r; RETURN r; END$$;
SELECT sr_try($$SELECT dp_count(*) FROM sr.visits WHERE pg_temp.fetch_row() IS NOT NULL$$);
ROLLBACK;
-- a DP statement inside another over the same rows
CREATE FUNCTION pg_temp.dp_inside() RETURNS bigint LANGUAGE plpgsql
AS 'DECLARE v bigint; BEGIN SELECT dp_count(*) INTO v FROM sr.visits; RETURN v; END';
SELECT sr_try($$SELECT dp_count(*) + pg_temp.dp_inside() FROM sr.visits$$);

-- accepted: functions that read other relations, or none; the unit bounds
-- the release (100 units).  A release over another relation may depend on
-- these rows: it is DP for its own rows, and this role may read them.
SELECT count(*) AS charges_before FROM dp_agg.my_ledger \gset
SELECT dp_count(*) = 99 AS lookup FROM sr.visits WHERE u <> 42 AND x = sr.lookup_one();
SELECT dp_count(*) = 100 AS other_schema FROM sr.visits WHERE sr.other_visits() >= 0;
SELECT dp_count(*) = 100 AS inlined FROM sr.visits WHERE sr.plus_one(x) = 2;
SELECT dp_count(*) = 100 AS immutable FROM sr.visits WHERE sr.plus_one_pl(x) = 2;
SELECT sr.label(dp_count(*)) = 'about 100' AS over_the_release FROM sr.visits;
CREATE FUNCTION pg_temp.dp_lookup() RETURNS bigint LANGUAGE plpgsql
AS 'DECLARE v bigint; BEGIN SELECT dp_count(*) INTO v FROM sr.lookup; RETURN v; END';
SELECT dp_count(*) + pg_temp.dp_lookup() = 101 AS dp_inside_on_other_rows FROM sr.visits;
SELECT dp_count(*) = 1 AS other_rows FROM sr.lookup WHERE sr.unit42_present() > 0;
SELECT count(*) - :charges_before AS charges FROM dp_agg.my_ledger;
DROP FUNCTION pg_temp.dp_inside(), pg_temp.dp_lookup();
RESET dp_agg.epsilon;
RESET ROLE;

DROP SCHEMA sr CASCADE;
DROP SCHEMA sr_other CASCADE;
SELECT dp_agg.reset_budget('regress_sr_analyst');
DELETE FROM dp_agg.budget WHERE role = 'regress_sr_analyst'::regrole;
DROP ROLE regress_sr_analyst;
DROP FUNCTION sr_try(text);
