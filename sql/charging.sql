--
-- charging: every execution is charged, before any row is read, outside
-- the caller's transaction; nothing the caller does afterwards undoes it.
--
-- each statement charged alone, so that its ledger row is its own (charges
-- on leases are folded into rows of several: leases.sql, 016_leases.pl)
SET dp_agg.lease_time = 0;
SET dp_agg.group_keys = 'public';	-- keys of test data; private selection: selection.sql
CREATE TABLE c_t (i int);
INSERT INTO c_t SELECT k FROM generate_series(1, 100) k;
CREATE ROLE regress_dp_payer;
GRANT SELECT ON c_t TO regress_dp_payer;
SELECT dp_agg.set_budget('regress_dp_payer', 4);
SET ROLE regress_dp_payer;
CREATE FUNCTION pg_temp.spent() RETURNS float8 LANGUAGE sql AS
  'SELECT epsilon_spent FROM dp_agg.my_budget';
CREATE FUNCTION pg_temp.charges() RETURNS bigint LANGUAGE sql AS
  'SELECT count(*) FROM dp_agg.my_ledger WHERE kind = ''charge''';

-- ROLLBACK, ROLLBACK TO SAVEPOINT and an EXCEPTION block keep the charge
BEGIN;
SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM c_t;
ROLLBACK;
SELECT pg_temp.spent() AS after_rollback;
BEGIN;
SAVEPOINT s;
SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM c_t;
ROLLBACK TO SAVEPOINT s;
COMMIT;
SELECT pg_temp.spent() AS after_savepoint;
DO $$
DECLARE n bigint;
BEGIN
    SELECT dp_count(i, 0.125) INTO n FROM c_t;
    RAISE EXCEPTION 'oops';
EXCEPTION WHEN raise_exception THEN
    RAISE NOTICE 'caught';
END $$;
SELECT pg_temp.spent() AS after_exception_block;
-- an error later in the same statement
SELECT dp_count(i, 0.125) / 0 FROM c_t;
SELECT pg_temp.spent() AS after_error;

-- prepared statements: each EXECUTE is charged, at the price of its
-- parameters
PREPARE p(float8) AS SELECT dp_count(i, $1) IS NOT NULL AS released FROM c_t;
EXECUTE p(0.125);
EXECUTE p(0.25);
SELECT pg_temp.spent() AS after_two_executes;
DEALLOCATE p;

-- cursors: each opening is charged (even if nothing is fetched), fetching
-- is not
BEGIN;
DECLARE c1 CURSOR FOR SELECT i % 2 AS g, dp_count(i, 0.125) IS NOT NULL AS released
  FROM c_t GROUP BY 1 ORDER BY 1;
DECLARE c2 CURSOR FOR SELECT dp_count(i, 0.125) FROM c_t;
FETCH 1 FROM c1;
FETCH 1 FROM c1;
COMMIT;
SELECT pg_temp.spent() AS after_two_cursors;
-- a scroll cursor that is rewound reads the same releases again, without
-- recomputing them: they were materialized
DO $$
DECLARE
    c3 SCROLL CURSOR FOR SELECT i % 2 AS g, dp_count(i, 0.125) AS c FROM c_t GROUP BY 1 ORDER BY 1;
    first bigint[] := '{}';
    second bigint[] := '{}';
    r record;
BEGIN
    OPEN c3;
    LOOP FETCH c3 INTO r; EXIT WHEN NOT FOUND; first := first || r.c; END LOOP;
    MOVE ABSOLUTE 0 IN c3;
    LOOP FETCH c3 INTO r; EXIT WHEN NOT FOUND; second := second || r.c; END LOOP;
    CLOSE c3;
    RAISE NOTICE 'rows read twice: %, same values: %', cardinality(second), first = second;
END $$;
SELECT pg_temp.spent() AS after_scroll_cursor;

-- a function that runs a DP statement in a loop is charged for each run
CREATE FUNCTION pg_temp.loop(n int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE x bigint;
BEGIN
    FOR k IN 1 .. n LOOP
        SELECT dp_count(i, 0.125) INTO x FROM c_t;
    END LOOP;
END $$;
SELECT pg_temp.charges() AS charges_before \gset
SELECT pg_temp.loop(4);
SELECT pg_temp.charges() - :charges_before AS loop_charges, pg_temp.spent() AS after_loop;

-- the whole statement text reaches the ledger, whether the request fits in
-- the charger's shared-memory slot (8 kB) or travels in its own segment
DO $$
DECLARE x bigint;
BEGIN
    FOREACH x IN ARRAY ARRAY[100, 7000, 8200, 50000] LOOP
        EXECUTE 'SELECT dp_count(i, 0.125) /* ' || repeat('x', x::int) || ' */ FROM c_t' INTO x;
    END LOOP;
END $$;
SELECT length(query) - length('SELECT dp_count(i, 0.125) /*  */ FROM c_t') AS comment_length,
       epsilon, jsonb_array_length(detail) AS releases, cardinality(rdp) = cardinality(dp_agg.rdp_orders()) AS curve
FROM dp_agg.my_ledger ORDER BY id DESC LIMIT 4;

-- EXPLAIN does not run the statement and is not charged; EXPLAIN ANALYZE is
EXPLAIN (COSTS OFF) SELECT dp_count(i, 0.125) FROM c_t;
SELECT pg_temp.spent() AS after_explain;
-- (its output, which differs between PostgreSQL versions, is not shown: what
-- counts is that it runs and is charged)
\o /dev/null
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT dp_count(i, 0.125) FROM c_t;
\o
SELECT pg_temp.spent() AS after_explain_analyze;

-- the noise is the one priced when the statement started, whatever the
-- statement does to the settings while it runs
SET dp_agg.epsilon = 0.125;
SELECT dp_count(*) IS NOT NULL AS released FROM c_t
WHERE set_config('dp_agg.epsilon', '1000', true) IS NOT NULL;
SHOW dp_agg.epsilon;
SELECT epsilon, detail -> 0 -> 'releases' -> 0 ->> 'noise_scale' AS noise_scale
FROM dp_agg.my_ledger ORDER BY id DESC LIMIT 1;
RESET dp_agg.epsilon;

-- a statement the budget cannot pay fails before reading any row: the
-- division by zero in its WHERE clause is never evaluated
SELECT pg_temp.spent() AS spent, 4 - pg_temp.spent() AS remaining;
SELECT dp_count(i, 2.5) FROM c_t WHERE 1 / (i - i) = 1;
SELECT pg_temp.spent() AS unchanged;

-- fail closed in a read-only transaction
BEGIN READ ONLY;
SELECT dp_count(i, 0.125) FROM c_t;
ROLLBACK;
SET default_transaction_read_only = on;
SELECT dp_count(i, 0.125) FROM c_t;
RESET default_transaction_read_only;
SELECT pg_temp.spent() AS unchanged;

-- the charger writes the ledger itself (not through SQL): a constraint or
-- a trigger a DBA adds to dp_agg.ledger still holds for its rows, and the
-- statement whose charge it rejects releases nothing
RESET ROLE;
ALTER TABLE dp_agg.ledger ADD CONSTRAINT regress_small CHECK (epsilon <= 1) NOT VALID;
SET ROLE regress_dp_payer;
SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM c_t;
\set VERBOSITY terse
SELECT dp_count(i, 1.125) FROM c_t;
\set VERBOSITY default
SELECT pg_temp.spent() AS only_the_small_one;
RESET ROLE;
ALTER TABLE dp_agg.ledger DROP CONSTRAINT regress_small;
CREATE TABLE regress_ledger_audit (id bigint, epsilon float8);
CREATE FUNCTION regress_ledger_audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO public.regress_ledger_audit VALUES (NEW.id, NEW.epsilon);
    RETURN NEW;
END $$;
CREATE TRIGGER regress_audit AFTER INSERT ON dp_agg.ledger
    FOR EACH ROW EXECUTE FUNCTION public.regress_ledger_audit();
SET ROLE regress_dp_payer;
SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM c_t;
RESET ROLE;
SELECT count(*) AS audited, max(epsilon) AS epsilon FROM regress_ledger_audit;
DROP TRIGGER regress_audit ON dp_agg.ledger;
DROP FUNCTION regress_ledger_audit();
-- so do rules on dp_agg.ledger and dp_agg.budget (the rewriter applies
-- them to an INSERT or an UPDATE: the charger's rows go through SQL then)
TRUNCATE regress_ledger_audit;
CREATE RULE regress_audit_ledger AS ON INSERT TO dp_agg.ledger
    DO ALSO INSERT INTO public.regress_ledger_audit VALUES (-1, NEW.epsilon);
CREATE RULE regress_audit_budget AS ON UPDATE TO dp_agg.budget
    DO ALSO INSERT INTO public.regress_ledger_audit VALUES (-2, NEW.epsilon_spent);
SET ROLE regress_dp_payer;
SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM c_t;
RESET ROLE;
SELECT id AS table_audited, epsilon = CASE id WHEN -1 THEN 0.125 ELSE
    (SELECT epsilon_spent FROM dp_agg.budget WHERE role = 'regress_dp_payer'::regrole) END AS value
FROM regress_ledger_audit ORDER BY id;
DROP RULE regress_audit_ledger ON dp_agg.ledger;
DROP RULE regress_audit_budget ON dp_agg.budget;
DROP TABLE regress_ledger_audit;
-- a CHECK constraint runs the function it calls as it is now: replaced
-- (CREATE OR REPLACE FUNCTION), a SQL function the charger had inlined
-- when it compiled the constraint is compiled again
CREATE FUNCTION public.regress_small_enough(e float8) RETURNS boolean
    LANGUAGE sql IMMUTABLE AS 'SELECT e < 10';
ALTER TABLE dp_agg.ledger ADD CONSTRAINT regress_checked
    CHECK (public.regress_small_enough(epsilon)) NOT VALID;
SET ROLE regress_dp_payer;
SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM c_t;
RESET ROLE;
CREATE OR REPLACE FUNCTION public.regress_small_enough(e float8) RETURNS boolean
    LANGUAGE sql IMMUTABLE AS 'SELECT e < 0.1';
SET ROLE regress_dp_payer;
SELECT pg_temp.spent() AS spent_before;
\set VERBOSITY terse
SELECT dp_count(i, 0.125) FROM c_t;
\set VERBOSITY default
SELECT pg_temp.spent() AS unchanged;
RESET ROLE;
ALTER TABLE dp_agg.ledger DROP CONSTRAINT regress_checked;
DROP FUNCTION public.regress_small_enough(float8);
SET ROLE regress_dp_payer;
SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM c_t;

DROP FUNCTION pg_temp.spent(), pg_temp.charges(), pg_temp.loop(int);
RESET ROLE;
DELETE FROM dp_agg.ledger WHERE role = 'regress_dp_payer'::regrole;
DELETE FROM dp_agg.budget WHERE role = 'regress_dp_payer'::regrole;
DROP TABLE c_t;
DROP ROLE regress_dp_payer;
