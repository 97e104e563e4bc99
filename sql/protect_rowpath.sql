--
-- protect_rowpath: nothing on the row path of a protected relation can fail
-- or report (README, "Protected tables").  In a statement of a role
-- untrusted for the relation, a call that fails on a row yields NULL for
-- that row, and nothing it raises reaches the client.  At epsilon 1e9 a
-- count equals the exact count except with probability about 2 exp(-1e9),
-- so the counts below are exact.
--
\set SHOW_CONTEXT never
\set VERBOSITY default

CREATE ROLE regress_rp_owner;
CREATE ROLE regress_rp_analyst;
CREATE SCHEMA rp;
GRANT USAGE ON SCHEMA rp TO PUBLIC;
CREATE DOMAIN rp.text_c AS text COLLATE "C";
CREATE DOMAIN rp.text_posix AS text COLLATE "POSIX";
CREATE DOMAIN rp.small AS int CHECK (VALUE BETWEEN -100 AND 100);
CREATE TYPE rp.mood AS ENUM ('sad', 'ok', 'happy');

-- one row of everyday values and rows of extreme ones, each of which makes
-- some everyday function fail
CREATE TABLE rp.x (id int PRIMARY KEY, i2 int2, i4 int4, i8 int8, f4 float4, f8 float8,
                   n numeric, t text, d date, ts timestamp, tz timestamptz, iv interval,
                   j jsonb, a int[], m rp.mood);
INSERT INTO rp.x VALUES
 (1, 7, 42, 1000, 1.5, 2.25, 12.345, 'Alice', '2024-02-29', '2024-02-29 13:14:15', '2024-02-29 13:14:15+00',
  '1 day 2 hours', '{"a": 1, "b": "x"}', '{1,2,3}', 'ok'),
 (2, 0, 0, 0, 0, 0, 0, '', '2000-01-01', '2000-01-01', '2000-01-01+00', '0', '{}', '{}', 'sad'),
 (3, 32767, 2147483647, 9223372036854775807, 3.4e38, 1.7976931348623157e308, 1e131071,
  'zzzz', '5874897-12-31', '294276-12-31 23:59:59', '294276-12-31 23:59:59+00',
  '178000000 years', '{"a": "not a number"}', '{2147483647}', 'happy'),
 (4, -32768, -2147483648, -9223372036854775808, -3.4e38, -1.7976931348623157e308, -1e131071,
  '-17', '4713-01-01 BC', '4713-01-01 00:00:00 BC', '4713-01-01 00:00:00+00 BC',
  '-178000000 years', '[1, 2]', '{-2147483648,NULL}', NULL),
 (5, NULL, NULL, NULL, 'NaN', 'NaN', 'NaN', '2024-13-45', 'infinity', 'infinity', '-infinity',
  NULL, 'null', NULL, NULL),
 (6, 1, 1, 1, 'Infinity', '-Infinity', 'Infinity', '12.5e3', '-infinity', '-infinity', 'infinity',
  '-1 microsecond', '{"a": {"b": [1]}}', '{{1,2},{3,4}}', 'sad'),
 (7, -1, -1, -1, 1e-45, 5e-324, -1e-16383, repeat('é', 300), '1999-12-31', '1999-12-31 23:59:59.999999',
  '1999-12-31 23:59:59.999999+00', '1 month -1 day', '"text"', '{0}', 'happy');
ALTER TABLE rp.x OWNER TO regress_rp_owner;
SELECT dp_agg.protect('rp.x');
SELECT dp_agg.grant_access('rp.x', 'regress_rp_analyst');
SELECT dp_agg.set_budget('regress_rp_analyst', 1e13, 0.5);

--
-- The first channel of the review: a comparison whose collation is
-- undetermined fails at run time ("could not determine which collation to
-- use"), only for the rows that reach it.  Two parameters of text domains
-- with different collations, compared under CASE WHEN a row predicate, in a
-- generic plan: on the table (where id = 3 exists) and on its neighbour
-- without it (id = 33), the statement succeeds the same way.
--
SET ROLE regress_rp_analyst;
SET dp_agg.epsilon = 1e9;
SET plan_cache_mode = force_generic_plan;
PREPARE collation_probe(rp.text_c, rp.text_posix, int) AS
SELECT dp_count(*) AS n FROM rp.x WHERE CASE WHEN id = $3 THEN $1 = $2 ELSE false END;
EXECUTE collation_probe('a', 'a', 3);
EXECUTE collation_probe('a', 'a', 33);
DEALLOCATE collation_probe;
RESET plan_cache_mode;

--
-- The second channel: a setting that makes the server report on the
-- execution.  A grouped statement sorts its input (enable_hashagg off), and
-- trace_sort would report the sort's memory in kB, with one row more or
-- less flipping the figure: while the executor runs, trace_sort is off and
-- client_min_messages at least notice.  No LOG line below; the settings are
-- the role's again afterwards.
--
SET dp_agg.selection_epsilon = 1;
SET dp_agg.selection_delta = 1e-10;
SET enable_hashagg = off;
SET trace_sort = on;
SET client_min_messages = log;
-- (groups of one row: none is released, except with probability 7e-10)
SELECT i2, dp_count(*) AS n FROM rp.x GROUP BY i2;
BEGIN;
DECLARE sorted CURSOR FOR SELECT i4, dp_count(*) AS n FROM rp.x GROUP BY i4;
FETCH 1 FROM sorted;
FETCH ALL FROM sorted;
CLOSE sorted;
COMMIT;
SHOW trace_sort;
SHOW client_min_messages;
RESET client_min_messages;
RESET trace_sort;
RESET enable_hashagg;
RESET ROLE;

--
-- Every everyday built-in on the extreme rows.  For each expression, the
-- owner computes what it gives on each row, or that it fails (in a
-- subtransaction per row); the analyst then counts, with DP aggregates,
-- the rows where its own evaluation gives the same, or NULL where the
-- owner's fails: all of them, every time.  "fails" lists the rows where the
-- expression fails for the owner.  A call that fails inside a larger
-- expression yields NULL to it (same_as says what the analyst sees then).
--
CREATE TABLE rp.cases (k int PRIMARY KEY, expr text NOT NULL, same_as text);
INSERT INTO rp.cases (k, expr) VALUES
 -- integer, numeric and floating-point arithmetic
 (1, 'i4 + 1'), (2, 'i4 - 1'), (3, 'i4 * 2'), (4, 'i4 / i2'), (5, 'i4 % i2'), (6, '-i4'),
 (7, 'abs(i4)'), (8, 'i2 + i2'), (9, 'i2 * 100'), (10, 'i8 * 2'), (11, 'i8 / i4'), (12, 'i4 + i8'),
 (13, 'i2::int2 * i4'), (14, 'i8 - i4'), (15, 'i4 / 10 * 10'),
 (16, 'n + 1'), (17, 'n * n'), (18, 'n / n'), (19, 'n % 7'), (20, 'round(n, 2)'), (21, 'floor(n)'),
 (22, 'ceil(n)'), (23, 'abs(n)'), (24, 'sqrt(n)'), (25, 'ln(n)'), (26, 'power(n, 2)'),
 (27, 'f8 + 1e308'), (28, 'f8 * f8'), (29, 'f8 / f4'), (30, 'sqrt(f8)'), (31, 'round(f8)'),
 (32, 'floor(f8)'), (33, 'ceil(f4)'), (34, 'ln(f8)'), (35, 'exp(f8)'), (36, 'f4 * f4'),
 (37, 'round(f8::numeric, 3)'),
 -- text, under any collation
 (38, 'lower(t)'), (39, 'upper(t)'), (40, 'substring(t from 2 for 3)'), (41, 'left(t, 2)'),
 (42, 'right(t, -1)'), (43, 'length(t)'), (44, 'position(''e'' in t)'), (45, 'replace(t, ''e'', ''E'')'),
 (46, 'trim(t)'), (47, 't || ''!'''), (48, 't < ''m'' COLLATE "C"'), (49, 't = ''Alice'' COLLATE "POSIX"'),
 (50, 't > ''a'''), (51, 'initcap(t)'), (52, 'split_part(t, ''l'', 2)'), (53, 'concat(t, i4, d)'),
 (54, 'lpad(t, 8, ''*'')'), (55, 'rpad(t, 3)'), (56, 'md5(t)'), (57, 'starts_with(t, ''A'')'),
 -- dates and times
 (58, 'date_trunc(''month'', ts)'), (59, 'date_trunc(''week'', ts)'), (60, 'date_trunc(''day'', tz)'),
 (61, 'extract(month FROM ts)'), (62, 'extract(epoch FROM tz)'), (63, 'date_part(''year'', d)'),
 (64, 'extract(dow FROM d)'), (65, 'make_date(i4, 1, 1)'), (66, 'make_date(2024, i2, 1)'),
 (67, 'd + iv'), (68, 'ts + iv'), (69, 'ts - iv'), (70, 'd - d'), (71, 'd + i4'), (72, 'ts - ts'),
 (73, 'iv * 1e6'), (74, 'date_trunc(''year'', iv)'), (75, 'to_char(ts, ''YYYY-MM'')'),
 (76, 'to_char(n, ''FM999.99'')'), (77, 'date_bin(''1 day'', ts, ''2000-01-01'')'),
 -- casts among numbers, text and dates
 (78, 't::int'), (79, 't::numeric'), (80, 't::date'), (81, 't::timestamp'), (82, 'i4::text'),
 (83, 'n::int4'), (84, 'f8::int8'), (85, 'i8::int2'), (86, 'd::timestamp'), (87, 'ts::date'),
 (88, 'f8::float4'), (89, 'n::float8'), (90, 'i4::small'), (91, 't::mood'), (92, 'm::text::int'),
 (93, 'to_date(t, ''YYYY-MM-DD'')'), (94, 'to_number(t, ''99999'')'),
 -- width_bucket, rounding, conditional expressions, IN, LIKE, regular expressions
 (95, 'width_bucket(f8, 0, 100, 10)'), (96, 'width_bucket(n, 0, 100, 10)'),
 (97, 'COALESCE(i4 + 1, 0)'), (98, 'NULLIF(i4, 0)'), (99, 'GREATEST(i4 * 2, 10)'),
 (100, 'LEAST(t, ''m'' COLLATE "C")'), (101, 'i4 IN (0, 42, -1)'), (102, 't IN (''Alice'', '''', ''-17'')'),
 (103, 't LIKE ''A%'''), (104, 't ILIKE ''%E%'''), (105, 't ~ ''^[A-Z]'''), (106, 't ~* ''ice$'''),
 (107, 'regexp_replace(t, ''[aeiou]'', ''_'', ''g'')'), (108, 'substring(t from ''[0-9]+'')'),
 (109, 't SIMILAR TO ''%(ic|zz)%'''), (110, 'regexp_match(t, ''(.)(.)'')'),
 -- arrays and JSON
 (111, 'a[1] + 1'), (112, 'cardinality(a)'), (113, 'array_length(a, 1)'), (114, 'a @> ARRAY[1]'),
 (115, '(j->>''a'')::int'), (116, 'j->''a''->''b'''), (117, 'jsonb_array_length(j)'),
 (118, 'j @> ''{"a": 1}'''), (119, '(j->''a'')::numeric'),
 -- row values, ARRAY[] and subscripts
 (120, '(i4, i8) < (1, 2)'), (121, 'ARRAY[a, a]'), (122, 'ARRAY[t, t]'), (123, 'a[2:3]'),
 -- date and time functions called outside the trap inside their domain (a
 -- unit known good, a value between the years 1 and 190,000), with units
 -- that change from row to row
 (124, 'date_trunc(CASE WHEN id % 2 = 0 THEN ''month'' ELSE ''nonsense'' END, ts)'),
 (125, 'date_trunc(CASE WHEN id % 2 = 0 THEN ''millennium'' ELSE ''MilLennium'' END, tz)'),
 (126, 'date_part(CASE WHEN id % 3 = 0 THEN ''hour'' ELSE ''doy'' END, ts)'),
 (127, 'extract(isoyear FROM tz)'), (128, 'd::timestamptz'), (129, 'date_trunc(t, ts)');
UPDATE rp.cases SET same_as = 'CASE WHEN i4 = 2147483647 THEN 0 ELSE COALESCE(i4 + 1, 0) END' WHERE k = 97;
UPDATE rp.cases SET same_as = 'CASE WHEN abs(i4::int8) > 1073741823 THEN 10 ELSE GREATEST(i4 * 2, 10) END'
WHERE k = 99;
GRANT SELECT ON rp.cases TO regress_rp_analyst;
SET search_path = rp, public;

-- the owner's computation, one subtransaction per row
CREATE FUNCTION rp.expected(expr text, row_id int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    r text;
BEGIN
    EXECUTE format('SELECT (%s)::text FROM rp.x WHERE id = $1', expr) INTO r USING row_id;
    RETURN coalesce(r, 'NULL');
EXCEPTION WHEN others THEN
    RETURN 'fails';
END $$;
DO $$
DECLARE
    c record;
BEGIN
    FOR c IN SELECT k, expr, same_as FROM rp.cases ORDER BY k LOOP
        EXECUTE format('ALTER TABLE rp.x ADD COLUMN e%s text', c.k);
        EXECUTE format('UPDATE rp.x SET e%s = rp.expected(%L, id)', c.k,
                       coalesce(c.same_as, c.expr));
    END LOOP;
END $$;
-- where each fails (the owner's view)
CREATE FUNCTION rp.fails(expr text) RETURNS text LANGUAGE sql AS $$
SELECT coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM rp.x WHERE rp.expected(expr, id) = 'fails'
$$;
SELECT k, expr, rp.fails(expr) AS fails FROM rp.cases ORDER BY k;

-- the analyst's: the same on every row (rows where the owner's call fails
-- yield NULL for the analyst)
SET ROLE regress_rp_analyst;
CREATE FUNCTION pg_temp.same_everywhere() RETURNS TABLE (k int, expr text, same boolean)
LANGUAGE plpgsql AS $$
DECLARE
    c record;
    total bigint;
    same bigint;
BEGIN
    FOR c IN SELECT * FROM rp.cases ORDER BY 1 LOOP
        EXECUTE format('SELECT dp_count(*), dp_count(*) FILTER (WHERE CASE WHEN e%s = ''fails'' '
                       'THEN (%s) IS NULL ELSE coalesce((%s)::text, ''NULL'') = e%s END) FROM rp.x',
                       c.k, c.expr, c.expr, c.k) INTO total, same;
        k := c.k;
        expr := c.expr;
        same_everywhere.same := total = same AND total = 7;
        RETURN NEXT;
    END LOOP;
END $$;
SELECT k, expr FROM pg_temp.same_everywhere() WHERE NOT same;
SELECT count(*) AS cases, bool_and(same) AS all_same FROM pg_temp.same_everywhere();
RESET ROLE;
RESET search_path;

--
-- What the trap does with what a call raises.  A DBA allows to_tsvector,
-- which raises a notice for a word too long to be indexed: the analyst's
-- statement shows no notice, and the row's value is NULL.
--
SELECT dp_agg.allow_function('to_tsvector(regconfig, text)');
CREATE TABLE rp.words (id int, w text);
INSERT INTO rp.words VALUES (1, 'short words'), (2, repeat('x', 3000));
ALTER TABLE rp.words OWNER TO regress_rp_owner;
SELECT dp_agg.protect('rp.words');
SELECT dp_agg.grant_access('rp.words', 'regress_rp_analyst');
SELECT id, to_tsvector('simple', w) IS NULL AS null_value FROM rp.words ORDER BY id;
SET ROLE regress_rp_analyst;
SELECT dp_count(*) FILTER (WHERE to_tsvector('simple', w) IS NULL) AS nulls FROM rp.words;
RESET ROLE;
SELECT dp_agg.disallow_function('to_tsvector(regconfig, text)');
-- a query cancel (here: statement_timeout) raised inside a trapped call is
-- not swallowed: a long regular expression match checks for interrupts
CREATE TABLE rp.long (id int, s text);
INSERT INTO rp.long SELECT i, repeat('ab', 5000000) FROM generate_series(1, 4) i;
ALTER TABLE rp.long OWNER TO regress_rp_owner;
SELECT dp_agg.protect('rp.long');
SELECT dp_agg.grant_access('rp.long', 'regress_rp_analyst');
SET ROLE regress_rp_analyst;
SET statement_timeout = '50ms';
SELECT dp_count(*) FROM rp.long WHERE s ~ '(a|b)*c';
RESET statement_timeout;
RESET ROLE;

-- The soft arithmetic (dp_agg_internal.row_int4pl and the like, in place of the
-- functions of arithmetic operators on rows) agrees with PostgreSQL's
-- functions on extreme values: the same value, or NULL where they fail.
CREATE FUNCTION pg_temp.soft_disagreements() RETURNS TABLE (soft text, a text, b text, pg text, dp text)
LANGUAGE plpgsql AS $$
DECLARE
    f record;
    x text;
    y text;
    cases int := 0;
    extremes jsonb := '{"smallint": ["-32768", "-1", "0", "1", "7", "32767"],
        "integer": ["-2147483648", "-1", "0", "1", "7", "46341", "2147483647"],
        "bigint": ["-9223372036854775808", "-1", "0", "1", "7", "3037000500", "9223372036854775807"],
        "real": ["-3.4e38", "-1", "-0", "0", "1e-38", "1e-45", "1.5", "3.4e38", "Infinity", "-Infinity", "NaN"],
        "double precision": ["-1.7e308", "-1", "0", "1e-308", "5e-324", "1.5", "1.7e308", "Infinity", "NaN"]}';
BEGIN
    FOR f IN SELECT 'dp_agg_internal.' || p.proname AS soft, substr(p.proname, 5) AS callee,
                    p.proargtypes[0]::regtype::text AS ta, p.proargtypes[1]::regtype::text AS tb, p.pronargs
             FROM pg_proc p WHERE p.pronamespace = 'dp_agg_internal'::regnamespace AND p.proname ~ '^row_(int|float)'
             ORDER BY 1 LOOP
        FOR x IN SELECT jsonb_array_elements_text(extremes->f.ta) LOOP
            FOR y IN SELECT jsonb_array_elements_text(extremes->coalesce(f.tb, 'smallint')) LOOP
                CONTINUE WHEN f.pronargs = 1 AND y <> '0';
                BEGIN
                    EXECUTE format(CASE f.pronargs WHEN 1 THEN 'SELECT pg_catalog.%s(%L::%s)::text'
                                   ELSE 'SELECT pg_catalog.%s(%L::%s, %L::%s)::text' END,
                                   f.callee, x, f.ta, y, f.tb) INTO pg;
                EXCEPTION WHEN others THEN
                    pg := NULL;
                END;
                EXECUTE format(CASE f.pronargs WHEN 1 THEN 'SELECT %s(%L::%s)::text'
                               ELSE 'SELECT %s(%L::%s, %L::%s)::text' END,
                               f.soft, x, f.ta, y, f.tb) INTO dp;
                cases := cases + 1;
                IF pg IS DISTINCT FROM dp THEN
                    soft := f.soft; a := x; b := y;
                    RETURN NEXT;
                END IF;
            END LOOP;
        END LOOP;
    END LOOP;
    RAISE NOTICE 'soft arithmetic: % functions, % cases', (SELECT count(*) FROM pg_proc p
        WHERE p.pronamespace = 'dp_agg_internal'::regnamespace AND p.proname ~ '^row_(int|float)'), cases;
END $$;
SELECT * FROM pg_temp.soft_disagreements();
-- on rows: operators of the analyst use them, the owner's PostgreSQL's
SET ROLE regress_rp_analyst;
SELECT dp_count(*) FILTER (WHERE i4 + 1 IS NULL) >= 0 AS overflow_is_null,
       dp_count(*) FILTER (WHERE f8 * 10 IS NULL) >= 0 AS float_overflow_is_null FROM rp.x;
RESET ROLE;

--
-- What may not be computed on rows, and what the trap cannot call
--
SET ROLE regress_rp_analyst;
-- patterns and sizes come from the statement
SELECT dp_count(*) FROM rp.x WHERE t ~ t;
SELECT dp_count(*) FROM rp.x WHERE t LIKE t || '%';
SELECT dp_count(*) FROM rp.x WHERE lpad(t, i4) IS NULL;
-- back-references match by backtracking
SELECT dp_count(*) FROM rp.x WHERE t ~ '(a)\1';
PREPARE backref(text) AS SELECT dp_count(*) FROM rp.x WHERE t ~ $1;
EXECUTE backref('(a)\1');
EXECUTE backref('^A');
DEALLOCATE backref;
-- the work a row may cost: a pattern counts 8 times its length, lpad its size
SELECT dp_count(*) FROM rp.x WHERE t ~ repeat('a?', 300);
SELECT dp_count(*) FROM rp.x WHERE lpad(t, 100000) IS NULL;
-- functions that are not allowed, volatile or not built in: on rows, and,
-- since no code of the analyst may run while the rows are read, over the
-- released values too (dp_agg's own calculators excepted)
SELECT dp_count(*) FROM rp.x WHERE to_tsvector(t) IS NULL;
SELECT dp_count(*) FROM rp.x WHERE t::regclass IS NULL;
CREATE FUNCTION pg_temp.twice(bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS 'SELECT 2 * $1';
SELECT pg_temp.twice(dp_count(*)) FROM rp.x;
SELECT set_config('trace_sort', 'on', false), dp_count(*) FROM rp.x;
SELECT dp_count(*) > 0 AS released, dp_agg.laplace_scale(1, 1) AS scale FROM rp.x;
SELECT dp_count(*) * 2 > 0 AS released, round(dp_count(*) / 7.0, 2) IS NOT NULL AS rounded FROM rp.x;
-- built-ins in SQL over the released values; named arguments on rows
SELECT ('n=' || dp_count(*)) IS NOT NULL AS cat, quote_literal(dp_count(*)) IS NOT NULL AS quoted,
       lpad(dp_count(*)::text, 3) IS NOT NULL AS padded FROM rp.x;
SELECT dp_count(*) >= 0 AS released FROM rp.x
WHERE make_date(year => 2000, month => 1, day => i4) > '2000-01-05' AND lpad(t, 4) <> '';
RESET ROLE;

-- allow_function refuses what the trap cannot call, and says what allowing means
SELECT dp_agg.allow_function('random()');
SELECT dp_agg.allow_function('generate_series(integer, integer)');
SELECT dp_agg.allow_function('lpad(text, integer)');
SELECT dp_agg.allow_function('pg_relation_size(regclass)');
SELECT dp_agg.allow_function('sha256(bytea)');
SELECT dp_agg.allow_function('sha256(bytea)');
SELECT dp_agg.disallow_function('sha256(bytea)');

-- cleanup
DROP FUNCTION pg_temp.same_everywhere(), pg_temp.twice(bigint);
RESET dp_agg.epsilon;
RESET dp_agg.selection_epsilon;
RESET dp_agg.selection_delta;
SELECT dp_agg.unprotect(relation) FROM dp_agg.protected WHERE relation::text LIKE 'rp.%';
DROP SCHEMA rp CASCADE;
DELETE FROM dp_agg.budget WHERE role::text LIKE 'regress_rp_%';
DELETE FROM dp_agg.ledger WHERE role::text LIKE 'regress_rp_%';
DROP ROLE regress_rp_owner, regress_rp_analyst;
