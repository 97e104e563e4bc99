--
-- public_domain: GROUP BY keys with a public domain (README, "Public group
-- keys").  A DP statement whose GROUP BY keys have a public domain
-- releases every key of it, a noisy zero where no row has the key, drops
-- the rows whose key is outside it, and pays no private selection.
--
-- Values are checked at epsilon 1e9: a Laplace release is exact except
-- with probability about 2 exp(-1e9), so an empty key releases exactly 0.
-- The statistical suite checks the noise of empty keys at usual epsilons.
--
\set SHOW_CONTEXT never
SELECT dp_agg.set_budget(current_user::regrole, 1e15, 0.5);
SET dp_agg.epsilon = 1e9;
CREATE TYPE pd_status AS ENUM ('new', 'open', 'closed');
CREATE TABLE pd_t (id int PRIMARY KEY, dept text NOT NULL, age int NOT NULL, score float8,
                   ts timestamp NOT NULL, day date NOT NULL, flag bool, status pd_status NOT NULL,
                   amount numeric NOT NULL);
-- departments a (500 rows), b (300), c (200); ages 0..99; March to August 2025
INSERT INTO pd_t
SELECT i, CASE WHEN i <= 500 THEN 'a' WHEN i <= 800 THEN 'b' ELSE 'c' END, i % 100,
       CASE WHEN i % 10 = 0 THEN NULL ELSE i % 50 END,
       timestamp '2025-03-01' + (i % 180) * interval '1 day' + interval '7 hours',
       date '2025-03-01' + (i % 180), i % 3 = 0, (ARRAY['new', 'open']::pd_status[])[1 + i % 2],
       (i % 7) * 1.5
FROM generate_series(1, 1000) i;
CREATE FUNCTION pd_last_detail() RETURNS jsonb LANGUAGE sql AS
$$SELECT detail FROM dp_agg.ledger ORDER BY id DESC LIMIT 1$$;
-- EXPLAIN (COSTS OFF) without the "Window:" lines PostgreSQL 18 adds
CREATE FUNCTION pd_plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        IF l !~ '^\s*Window: ' THEN RETURN NEXT l; END IF;
    END LOOP;
END $$;

-- 1. keys listed in the statement: an outer join from a VALUES list or an
-- array of keys.  Every key is released; d has no row: exactly 0.
SELECT k.dept, dp_count(t.*) AS n, dp_sum(t.age, 0, 100) AS s
FROM (VALUES ('a'), ('b'), ('d')) k(dept) LEFT JOIN pd_t t ON t.dept = k.dept
GROUP BY k.dept ORDER BY 1;
-- no selection, and a record of the domain in the ledger
SELECT jsonb_array_length(pd_last_detail()) AS calls, pd_last_detail() @? '$[*].selection' AS selected,
       pd_last_detail()->2 AS domain;
-- USING, unnest, RIGHT JOIN, the list's other columns, conditions
SELECT dept, dp_count(*) FROM unnest(ARRAY['c', 'a', 'zz']) AS k(dept) LEFT JOIN pd_t USING (dept)
GROUP BY dept ORDER BY 1;
SELECT k.code, k.label, dp_count(*) AS n
FROM pd_t t RIGHT JOIN (VALUES ('a', 'Alpha'), ('b', 'Beta')) k(code, label) ON t.dept = k.code
GROUP BY k.code, k.label ORDER BY 1;
-- conditions on the rows alone filter them; on the list alone, select keys
SELECT k.dept, dp_count(*) FROM (VALUES ('a'), ('b'), ('c')) k(dept)
LEFT JOIN pd_t t ON t.dept = k.dept AND t.age < 10
WHERE k.dept <> 'c'
GROUP BY k.dept ORDER BY 1;
-- an inner or comma join to a list releases every key too (the list is the domain)
SELECT k.dept, dp_count(*) FROM pd_t t, (VALUES ('b'), ('q')) k(dept) WHERE t.dept = k.dept
GROUP BY k.dept ORDER BY 1;
-- tuples of keys: the rows of a tuple, and only those
SELECT k.dept, k.flag, dp_count(*)
FROM (VALUES ('a', true), ('a', false), ('c', true)) k(dept, flag)
LEFT JOIN pd_t t ON t.dept = k.dept AND t.flag = k.flag
GROUP BY k.dept, k.flag ORDER BY 1, 2;
-- as under the join's equality, no row's NULL matches a key, a listed NULL
-- neither (score is NULL in 100 rows, 1 in 20)
SELECT k.s, dp_count(*) FROM (VALUES (1.0::float8), (NULL)) k(s) LEFT JOIN pd_t t ON t.score = k.s
GROUP BY k.s ORDER BY 1;
-- key = constant, key IN (constants) in the WHERE: the same
SELECT dept, dp_count(*) FROM pd_t WHERE dept IN ('a', 'c', 'e') GROUP BY dept ORDER BY 1;
SELECT dept, dp_count(*) FROM pd_t WHERE dept = ANY (ARRAY['b', 'f']) GROUP BY dept ORDER BY 1;
SELECT age, dp_count(*) FROM pd_t WHERE age = 7 GROUP BY age;
-- a list whose keys are not constants, or used in a DP aggregate, or on
-- the side a join does not keep, is refused and the message says what to
-- write; so is a list repeating a key
SELECT k.dept, dp_count(*) FROM (VALUES ((SELECT max(dept) FROM pd_t))) k(dept)
LEFT JOIN pd_t t ON t.dept = k.dept GROUP BY k.dept;
SELECT k.dept, dp_count(*) FROM (VALUES (now()::text)) k(dept)
LEFT JOIN pd_t t ON t.dept = k.dept GROUP BY k.dept;
PREPARE pd_param(text) AS SELECT k.dept, dp_count(*) FROM (VALUES ($1)) k(dept)
LEFT JOIN pd_t t ON t.dept = k.dept GROUP BY k.dept;
EXECUTE pd_param('a');
SELECT k.dept, dp_sum(k.w, 0, 10) FROM (VALUES ('a', 1)) k(dept, w)
LEFT JOIN pd_t t ON t.dept = k.dept GROUP BY k.dept;
SELECT k.dept, dp_count(*) FROM pd_t t LEFT JOIN (VALUES ('a')) k(dept) ON t.dept = k.dept GROUP BY k.dept;
SELECT k.dept, dp_count(*) FROM (VALUES ('a'), ('a')) k(dept) LEFT JOIN pd_t t ON t.dept = k.dept GROUP BY k.dept;
SELECT k.n, dp_count(*) FROM (VALUES (1), (2)) k(n) LEFT JOIN pd_t t ON t.age::bigint = k.n GROUP BY k.n;
SELECT k.dept, t.age, dp_count(*) FROM (VALUES ('a')) k(dept) LEFT JOIN pd_t t ON t.dept = k.dept
GROUP BY k.dept, t.age;
-- a sub-query of the table is not a list of keys: the join is refused
SELECT k.dept, dp_count(*) FROM (SELECT DISTINCT dept FROM pd_t) k LEFT JOIN pd_t t ON t.dept = k.dept
GROUP BY k.dept;

-- 2. a domain declared by a DBA: the keys of a column or expression,
-- kept by pg_dump, readable by everyone
SELECT dp_agg.set_public_domain('pd_t', 'dept', ARRAY['a', 'b', 'c', 'd', 'e']);
SELECT dp_agg.set_public_domain('pd_t', 'upper(dept)', ARRAY['A', 'B']);
SELECT relation, key, key_type, keys FROM dp_agg.public_domain ORDER BY key;
SELECT dept, dp_count(*) FROM pd_t GROUP BY dept ORDER BY 1;
SELECT upper(dept) AS d, dp_count(*) FROM pd_t GROUP BY 1 ORDER BY 1;
-- through a view, and with another key of its own
CREATE VIEW pd_v AS SELECT dept, age FROM pd_t WHERE age < 50;
SELECT dept, age / 25 AS q, dp_count(*) FROM pd_v WHERE age >= 0 GROUP BY 1, 2 ORDER BY 1, 2;
-- a statement's own list of the column comes first
SELECT dept, dp_count(*) FROM pd_t WHERE dept IN ('b', 'x') GROUP BY dept ORDER BY 1;
-- the keys are checked and stored as text under fixed settings
SELECT dp_agg.set_public_domain('pd_t', 'dept', ARRAY['a', 'a']);
SELECT dp_agg.set_public_domain('pd_t', 'nosuch', ARRAY['a']);
SELECT dp_agg.set_public_domain('pd_t', 'random()', ARRAY[1.0]);
SELECT dp_agg.set_public_domain('pd_t', 'age FROM pg_class', ARRAY[1]);
SELECT dp_agg.set_public_domain('pd_t', 'age', ARRAY['x']);
SELECT dp_agg.set_public_domain('pd_t', 'age', '{}'::int[]);
SELECT dp_agg.set_public_domain('pd_v', 'dept', ARRAY['a']);
SET datestyle = 'SQL, DMY';
SET timezone = 'Asia/Tokyo';
SELECT dp_agg.set_public_domain('pd_t', 'day', ARRAY['2025-03-01', '2025-03-02', '2025-03-03']::date[]);
SELECT keys FROM dp_agg.public_domain WHERE key = 'day';
SELECT day, dp_count(*) FROM pd_t GROUP BY day ORDER BY day;
RESET datestyle;
RESET timezone;
SELECT dp_agg.clear_public_domain('pd_t', 'day');
SELECT dp_agg.clear_public_domain('pd_t', 'day');
-- a changed domain: plans are made again with the new keys
PREPARE pd_dept AS SELECT dept, dp_count(*) FROM pd_t GROUP BY dept ORDER BY 1;
EXECUTE pd_dept;
SELECT dp_agg.set_public_domain('pd_t', 'dept', ARRAY['a', 'z']);
EXECUTE pd_dept;
DEALLOCATE pd_dept;
SELECT dp_agg.clear_public_domain('pd_t', 'dept');
SELECT dp_agg.clear_public_domain('pd_t', 'upper(dept)');
-- only trusted roles declare domains
CREATE ROLE regress_pd_other;
SELECT has_function_privilege('regress_pd_other', 'dp_agg.set_public_domain(regclass, text, anyarray)', 'EXECUTE') AS can_set;
GRANT EXECUTE ON FUNCTION dp_agg.set_public_domain(regclass, text, anyarray) TO regress_pd_other;
SET ROLE regress_pd_other;
SELECT dp_agg.set_public_domain('pd_t', 'dept', ARRAY['a']);
SELECT count(*) >= 0 AS readable FROM dp_agg.public_domain;
INSERT INTO dp_agg.public_domain VALUES ('pd_t', 'dept', 'text', '{a}');
RESET ROLE;
REVOKE EXECUTE ON FUNCTION dp_agg.set_public_domain(regclass, text, anyarray) FROM regress_pd_other;

-- 3. domains derived from the statement's constants: histograms, time
-- series, bands, booleans, enums.  width_bucket(x, 0, 100, 10) has the
-- keys 0 .. 11; a NOT NULL column gives no NULL key
SELECT width_bucket(age, 0, 100, 10) AS bin, dp_count(*) FROM pd_t GROUP BY 1 ORDER BY 1;
-- a column that may be NULL (score) adds the NULL key; numeric bounds; thresholds
SELECT width_bucket(score, 0, 40, 4) AS bin, dp_count(*) FROM pd_t GROUP BY 1 ORDER BY 1;
SELECT width_bucket(amount, 0.0, 9.0, 3) AS bin, dp_count(*) FROM pd_t GROUP BY 1 ORDER BY 1;
SELECT width_bucket(age, ARRAY[10, 20, 90]) AS bin, dp_count(*) FROM pd_t GROUP BY 1 ORDER BY 1;
-- every month between two dates, empty ones too (the rows end in August)
SELECT date_trunc('month', ts) AS month, dp_count(*) FROM pd_t
WHERE ts >= '2025-01-01' AND ts < '2026-01-01' GROUP BY 1 ORDER BY 1;
SELECT date_trunc('month', day) AS month, dp_count(*) FROM pd_t
WHERE day BETWEEN '2025-07-15' AND '2025-10-14' GROUP BY 1 ORDER BY 1;
SELECT date_trunc('week', ts) AS week, dp_count(*) FROM pd_t
WHERE ts > '2025-08-20' AND ts <= '2025-09-03' GROUP BY 1 ORDER BY 1;
SELECT date_trunc('year', ts) AS year, dp_count(*) FROM pd_t
WHERE ts >= '2024-06-01' AND ts < '2026-02-01' GROUP BY 1 ORDER BY 1;
-- integer bands over a range, and the column itself
SELECT age / 10 * 10 AS band, dp_count(*) FROM pd_t WHERE age >= 0 AND age < 50 GROUP BY 1 ORDER BY 1;
SELECT age, dp_count(*) FROM pd_t WHERE age BETWEEN 97 AND 101 GROUP BY 1 ORDER BY 1;
SELECT age / 30 AS q, dp_count(*) FROM pd_t WHERE age > -5 AND age <= 60 GROUP BY 1 ORDER BY 1;
-- booleans and enums: their types' values
SELECT flag, dp_count(*) FROM pd_t GROUP BY flag ORDER BY 1;
SELECT status, dp_count(*) FROM pd_t GROUP BY status ORDER BY 1;
-- products of domains
SELECT status, width_bucket(age, 0, 100, 2) AS half, dp_count(*) FROM pd_t GROUP BY 1, 2 ORDER BY 1, 2;
-- no domain: a range with one bound, a parameter, too many keys, other
-- expressions: private selection, as before (its row in preview)
SELECT release FROM dp_agg.preview('SELECT age / 10, dp_count(*) FROM pd_t WHERE age >= 0 GROUP BY 1');
SELECT release FROM dp_agg.preview('SELECT age % 10, dp_count(*) FROM pd_t WHERE age >= 0 AND age < 50 GROUP BY 1');
SELECT release FROM dp_agg.preview('SELECT age, dp_count(*) FROM pd_t WHERE age BETWEEN 0 AND 1000000 GROUP BY 1');
SELECT release FROM dp_agg.preview('SELECT width_bucket(age, 0, 0, 10), dp_count(*) FROM pd_t GROUP BY 1');
SELECT release FROM dp_agg.preview('SELECT date_trunc(''month'', ts), dp_count(*) FROM pd_t WHERE ts >= ''2025-01-01'' GROUP BY 1');
PREPARE pd_range(int) AS SELECT age, dp_count(*) FROM pd_t WHERE age BETWEEN 0 AND $1 GROUP BY 1;
SET plan_cache_mode = force_custom_plan;
EXECUTE pd_range(3);
SELECT pd_last_detail()->1 ? 'selection' AS selected;
RESET plan_cache_mode;
DEALLOCATE pd_range;
-- dp_agg.max_public_keys: a derived domain beyond it is selected privately,
-- a listed one is an error naming the setting
SET dp_agg.max_public_keys = 5;
SELECT release FROM dp_agg.preview('SELECT age, dp_count(*) FROM pd_t WHERE age BETWEEN 0 AND 9 GROUP BY 1');
SELECT age, dp_count(*) FROM pd_t WHERE age IN (1, 2, 3, 4, 5, 6) GROUP BY 1;
RESET dp_agg.max_public_keys;

-- 4. how it runs: the domain's rows beside the table's, in parallel plans too
EXPLAIN (COSTS OFF) SELECT flag, dp_count(*) FROM pd_t GROUP BY flag;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT dept, dp_count(*) FROM pd_t WHERE dept IN ('a', 'b', 'q') GROUP BY dept;
SELECT dept, dp_count(*), dp_avg(age, 0, 100) FROM pd_t WHERE dept IN ('a', 'b', 'q') GROUP BY dept ORDER BY 1;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET parallel_leader_participation;
-- equal values of other spellings are released as the domain's key
SELECT k.amount, dp_count(*) FROM (VALUES (1.50), (3.0)) k(amount) LEFT JOIN pd_t t ON t.amount = k.amount
GROUP BY k.amount ORDER BY 1;
-- a HAVING on the keys keeps some of them; one on the noisy values is
-- post-processing
SELECT dept, dp_count(*) FROM pd_t WHERE dept IN ('a', 'b', 'c') GROUP BY dept HAVING dept <> 'b' ORDER BY 1;
SELECT dept, dp_count(*) FROM pd_t WHERE dept IN ('a', 'b', 'c') GROUP BY dept HAVING dp_count(*) > 250 ORDER BY 1;
-- sub-queries, CTEs, INSERT ... SELECT
WITH s AS (SELECT flag, dp_count(*) AS n FROM pd_t GROUP BY flag) SELECT count(*) FROM s;
CREATE TABLE pd_out (flag bool, n bigint);
INSERT INTO pd_out SELECT flag, dp_count(*) FROM pd_t GROUP BY flag;
SELECT * FROM pd_out ORDER BY 1;
-- the internal functions are not the analyst's (the parser refuses a
-- value of type internal, with a message that differs between versions:
-- only the refusal is shown); a key set written by hand does not decode
CREATE FUNCTION pg_temp.refused(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'accepted';
EXCEPTION WHEN undefined_function OR cannot_coerce OR feature_not_supported THEN
    RETURN 'refused';
END $$;
SELECT pg_temp.refused('SELECT dept, dp_count(*) FROM pd_t GROUP BY dept HAVING dp_agg_internal.dp_public(NULL::internal, true, 3)');
SELECT dp_agg_internal.domain_index('\x00'::bytea, 1);
SELECT dp_agg_internal.domain_key('\x314b5044'::bytea, 0, 0, NULL::int);
-- the key sets of a DP statement are opened at the executor's start, before
-- any row is read (their time does not tell whether a row reaches them): a
-- key set that does not decode fails the statement even when no row reaches
-- it, and nothing is charged
SELECT count(*) AS ledger FROM dp_agg.ledger \gset
SELECT dp_count(*) FROM pd_t WHERE age < 0 GROUP BY dp_agg_internal.domain_index('\x00'::bytea, dept);
SELECT count(*) = :ledger AS nothing_charged FROM dp_agg.ledger;

-- 5. privacy units: each unit's groups are groups of the domain, at most k
-- of them; every key is released
CREATE TABLE pd_u (patient int, dept text NOT NULL, age int NOT NULL);
-- 100 patients, each with 10 visits in one department (a, b or c) and ages 0..99
INSERT INTO pd_u SELECT p, (ARRAY['a', 'b', 'c'])[1 + p % 3], (p + v * 10) % 100
FROM generate_series(1, 100) p, generate_series(1, 10) v;
SELECT dp_agg.set_privacy_unit('pd_u', 'patient');
-- k = 1: a count of units per department, q has none
SELECT k.dept, dp_count(*) FROM (VALUES ('a'), ('b'), ('c'), ('q')) k(dept)
LEFT JOIN pd_u u ON u.dept = k.dept GROUP BY k.dept ORDER BY 1;
SELECT pd_last_detail()->0->'privacy_unit' AS unit, pd_last_detail()->1 AS domain;
-- a histogram of units: each unit in one bin (k = 1)
SELECT sum(n) AS units, count(*) AS bins FROM (
    SELECT width_bucket(age, 0, 100, 5) AS bin, dp_count(*) AS n FROM pd_u GROUP BY 1) s;
-- k = 3: each unit in at most 3 of the bins of its ages
SELECT dp_agg.set_privacy_unit('pd_u', 'patient', 3);
SELECT count(*) AS bins, sum(n) <= 300 AS bounded FROM (
    SELECT width_bucket(age, 0, 100, 5) AS bin, dp_count(*) AS n FROM pd_u GROUP BY 1) s;
SELECT pd_plan($$SELECT dept, dp_count(*) FROM pd_u WHERE dept IN ('a', 'b') GROUP BY dept$$);

-- 6. protected tables: an untrusted role gets every key of a public domain,
-- with no selection and no selection's price
CREATE ROLE regress_pd_owner;
CREATE ROLE regress_pd_analyst;
ALTER TABLE pd_t OWNER TO regress_pd_owner;
SELECT dp_agg.protect('pd_t');
SELECT dp_agg.grant_access('pd_t', 'regress_pd_analyst');
SELECT dp_agg.set_budget('regress_pd_analyst', 1e12, 1e-3);
-- a DBA granted the function declares domains of the relations it is trusted for
GRANT EXECUTE ON FUNCTION dp_agg.set_public_domain(regclass, text, anyarray) TO regress_pd_owner;
SET ROLE regress_pd_owner;
SELECT dp_agg.set_public_domain('pd_t', 'dept', ARRAY['a', 'b', 'c', 'd']);
SET ROLE regress_pd_analyst;
SELECT dept, dp_count(id) FROM pd_t GROUP BY dept ORDER BY 1;
SELECT k.dept, dp_count(id) FROM (VALUES ('b'), ('e')) k(dept) LEFT JOIN pd_t t USING (dept) GROUP BY k.dept ORDER BY 1;
SELECT flag, dp_count(id) FROM pd_t GROUP BY flag ORDER BY 1;
SELECT age, dp_count(id) FROM pd_t WHERE age IN (1, 200) GROUP BY age ORDER BY 1;
SELECT epsilon, delta FROM dp_agg.my_ledger ORDER BY id DESC LIMIT 1;
-- without a domain, through the selection (its default price: as much as
-- the releases, delta 1e-7); groups of 10 rows are released with certainty
SELECT age, dp_count(id) FROM pd_t GROUP BY age ORDER BY 1 LIMIT 3;
SELECT epsilon, delta FROM dp_agg.my_ledger ORDER BY id DESC LIMIT 1;
-- group_keys = 'public' is still refused: the keys present would be released
SET dp_agg.group_keys = 'public';
SELECT dept, dp_count(id) FROM pd_t GROUP BY dept;
RESET dp_agg.group_keys;
-- the analyst cannot declare domains
SELECT dp_agg.set_public_domain('pd_t', 'age', ARRAY[1, 2]);
-- a range of the column: every age of it, 100 .. 104 with no row
SELECT age, dp_count(id) FROM pd_t WHERE age BETWEEN 97 AND 104 GROUP BY age ORDER BY 1;
-- histograms and monthly series: width_bucket and date_trunc are not
-- LEAKPROOF (a NaN, a timestamp of 4714 BC make them fail), but they are
-- among the everyday built-ins allowed on the rows of a protected relation
-- (a call that fails yields NULL for its row); a DBA's allowing them again
-- changes nothing: every bin and every month of the range is released, the
-- empty ones too
SELECT width_bucket(age, 0, 100, 10) AS bin, dp_count(id) FROM pd_t GROUP BY 1 ORDER BY 1;
RESET ROLE;
SELECT dp_agg.allow_function('width_bucket(double precision, double precision, double precision, integer)');
SELECT dp_agg.allow_function('date_trunc(text, timestamp without time zone)');
SET ROLE regress_pd_analyst;
SELECT width_bucket(age, 0, 100, 10) AS bin, dp_count(id) FROM pd_t GROUP BY 1 ORDER BY 1;
SELECT date_trunc('month', ts) AS month, dp_count(id) FROM pd_t
WHERE ts >= '2025-01-01' AND ts < '2026-01-01' GROUP BY 1 ORDER BY 1;
SELECT detail @? '$[*].selection' AS selected, detail->1 AS domain FROM dp_agg.my_ledger ORDER BY id DESC LIMIT 1;
-- with privacy units: each patient in one bin of the histogram of units
RESET ROLE;
ALTER TABLE pd_u OWNER TO regress_pd_owner;
SELECT dp_agg.set_privacy_unit('pd_u', 'patient', 1);
SELECT dp_agg.protect('pd_u');
SELECT dp_agg.grant_access('pd_u', 'regress_pd_analyst');
SET ROLE regress_pd_analyst;
-- (which bin of a patient's ages counts the patient is drawn at random:
-- only the total is certain)
CREATE TEMPORARY TABLE pd_hist AS
SELECT width_bucket(p.age, 0, 100, 4) AS bin, dp_count(*) AS patients FROM pd_u p GROUP BY 1;
SELECT array_agg(bin ORDER BY bin) AS bins, sum(patients) AS patients FROM pd_hist;
SELECT k.dept, dp_count(*) AS patients FROM (VALUES ('a'), ('c'), ('x')) k(dept)
LEFT JOIN pd_u u ON u.dept = k.dept GROUP BY k.dept ORDER BY 1;
RESET ROLE;
SELECT dp_agg.disallow_function('width_bucket(double precision, double precision, double precision, integer)');
SELECT dp_agg.disallow_function('date_trunc(text, timestamp without time zone)');
SELECT dp_agg.unprotect('pd_u');
DROP TABLE pd_hist;

-- cleanup
SELECT dp_agg.unprotect('pd_t');
REVOKE EXECUTE ON FUNCTION dp_agg.set_public_domain(regclass, text, anyarray) FROM regress_pd_owner;
DROP TABLE pd_t, pd_u, pd_out CASCADE;
DROP TYPE pd_status;
SELECT count(*) AS domains_left FROM dp_agg.public_domain;
DELETE FROM dp_agg.budget WHERE role::text LIKE 'regress_pd_%';
DELETE FROM dp_agg.ledger WHERE role::text LIKE 'regress_pd_%';
DROP ROLE regress_pd_owner, regress_pd_analyst, regress_pd_other;
