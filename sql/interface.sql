--
-- interface: the SQL objects of dp_agg, their signatures and properties,
-- and a first release of each aggregate.
--

-- The aggregates are created in the schema CREATE EXTENSION targets
-- (public here), the other functions users call in the schema dp_agg, and
-- the internal functions and aggregates in dp_agg_internal.
SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS arguments,
       pg_get_function_result(p.oid) AS result, p.proparallel
FROM pg_proc p
WHERE p.prokind = 'a' AND p.pronamespace = 'public'::regnamespace
ORDER BY 1, 2;

SELECT count(*) AS objects_outside_the_three_schemas
FROM pg_depend d JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'dp_agg')
  AND d.deptype = 'e'
  AND NOT (p.pronamespace IN ('dp_agg'::regnamespace, 'dp_agg_internal'::regnamespace)
           OR (p.prokind = 'a' AND p.pronamespace = 'public'::regnamespace)
           OR (p.proname IN ('dp_interval_low', 'dp_interval_high', 'dp_noise_scale',
                             'dp_lower_bound', 'dp_upper_bound')
               AND p.pronamespace = 'public'::regnamespace));

-- Besides the aggregates, analysts call the error-bar functions unqualified.
SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS arguments,
       pg_get_function_result(p.oid) AS result, p.provolatile, p.proparallel
FROM pg_proc p
WHERE p.prokind = 'f' AND p.pronamespace = 'public'::regnamespace
  AND p.proname LIKE 'dp\_%'
ORDER BY 1;

-- Every SQL object of the extension has a comment.
SELECT pg_describe_object(d.classid, d.objid, 0) AS uncommented
FROM pg_depend d
WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'dp_agg')
  AND d.deptype = 'e'
  AND obj_description(d.objid, d.classid::regclass::name) IS NULL
  AND d.classid <> 'pg_type'::regclass
ORDER BY 1;

-- pg_upgrade can upgrade a cluster with dp_agg: no table, index or
-- materialized view of the extension stores a type that pg_upgrade refuses
-- (as its data type checks find them: the reg* types whose OIDs it does not
-- keep, aclitem, whose format changed in 16, and system composite types,
-- also inside domains, arrays, composites and ranges).  regclass, regrole
-- and regtype are kept.
WITH RECURSIVE refused(oid) AS (
    SELECT t.oid FROM pg_type t
    WHERE (t.typnamespace = 'pg_catalog'::regnamespace
           AND t.typname IN ('regcollation', 'regconfig', 'regdictionary', 'regnamespace',
                             'regoper', 'regoperator', 'regproc', 'regprocedure', 'aclitem'))
       OR (t.typtype = 'c' AND t.oid < 16384)
    UNION ALL
    SELECT * FROM (
        WITH r AS (SELECT oid FROM refused)
        SELECT t.oid FROM pg_type t JOIN r ON t.typbasetype = r.oid WHERE t.typtype = 'd'
        UNION ALL
        SELECT t.oid FROM pg_type t JOIN r ON t.typelem = r.oid WHERE t.typtype = 'b'
        UNION ALL
        SELECT t.oid FROM pg_type t JOIN pg_attribute a ON a.attrelid = t.typrelid
             JOIN r ON a.atttypid = r.oid
        WHERE t.typtype = 'c' AND NOT a.attisdropped
        UNION ALL
        SELECT t.oid FROM pg_type t JOIN pg_range g ON g.rngtypid = t.oid
             JOIN r ON g.rngsubtype = r.oid
        WHERE t.typtype = 'r') s
)
SELECT c.oid::regclass AS relation, a.attname, a.atttypid::regtype
FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
WHERE c.relnamespace = 'dp_agg'::regnamespace AND c.relkind IN ('r', 'm', 'i')
  AND NOT a.attisdropped AND a.atttypid IN (SELECT oid FROM refused)
ORDER BY 1, 2;

-- Schema dp_agg holds what users and DBAs call, each function listed in
-- doc/sql-reference.md or on the page of its feature: a function added to
-- dp_agg changes this list, and belongs in dp_agg_internal unless users
-- call it.  Calculators are IMMUTABLE STRICT PARALLEL SAFE; the functions
-- that change catalogs or draw noise are not executable by PUBLIC.
SELECT p.proname, p.prokind, count(*) AS overloads, p.provolatile, p.proisstrict, p.proparallel,
       has_function_privilege('public', p.oid, 'EXECUTE') AS public_execute
FROM pg_proc p
WHERE p.pronamespace = 'dp_agg'::regnamespace
GROUP BY 1, 2, 4, 5, 6, 7
ORDER BY 1;

-- Schema dp_agg_internal holds the internal functions and aggregates, by
-- name and kind.  PUBLIC may use the schema (a Citus worker parses the
-- fragments it is sent, which name dp_agg_internal.sum, as the role of the
-- statement) and create nothing in it.  PUBLIC may execute only what runs
-- with the privileges of the role of a statement: the aggregates and
-- functions the rewrites put into statements (which the guard refuses in
-- statements that name them) and the functions the views of budgets call.
-- Not the support functions of aggregates (PostgreSQL checks them for the
-- aggregate's owner), the input and output of types, the triggers and the
-- helpers of the budget functions.
SELECT has_schema_privilege('public', 'dp_agg_internal', 'USAGE') AS public_usage,
       has_schema_privilege('public', 'dp_agg_internal', 'CREATE') AS public_create;
SELECT p.proname, p.prokind, count(*) AS overloads,
       has_function_privilege('public', p.oid, 'EXECUTE') AS public_execute
FROM pg_proc p
WHERE p.pronamespace = 'dp_agg_internal'::regnamespace
GROUP BY 1, 2, 4
ORDER BY 1;
-- No SECURITY DEFINER function of either schema is executable by PUBLIC.
SELECT p.oid::regprocedure AS public_security_definer
FROM pg_proc p
WHERE p.pronamespace IN ('dp_agg'::regnamespace, 'dp_agg_internal'::regnamespace)
  AND p.prosecdef AND has_function_privilege('public', p.oid, 'EXECUTE')
ORDER BY 1;

-- Budget for the tests of this suite (the superuser running them).
SELECT dp_agg.set_budget(current_user::regrole, 1e15, 0.5);

CREATE TABLE items (id int, qty smallint, price int, weight bigint,
                    score real, ratio float8, amount numeric, tag text);
INSERT INTO items
SELECT i, (i % 7)::smallint, i % 100, i * 1000, (i % 10) / 4.0, (i % 20) / 8.0,
       (i % 50) / 4.0, CASE WHEN i % 3 = 0 THEN NULL ELSE 'x' END
FROM generate_series(1, 1000) i;

-- Without an epsilon argument, dp_agg.epsilon must be set.
SELECT dp_count(*) FROM items;
SHOW dp_agg.epsilon;
SHOW dp_agg.delta;

-- Result types.
SET dp_agg.epsilon = 1;
SELECT pg_typeof(dp_count(*)) AS count_star, pg_typeof(dp_count(tag)) AS count,
       pg_typeof(dp_sum(qty, 0, 6)) AS sum_smallint, pg_typeof(dp_sum(price, 0, 99)) AS sum_int,
       pg_typeof(dp_sum(weight, 0, 10)) AS sum_bigint, pg_typeof(dp_sum(score, 0, 3)) AS sum_real,
       pg_typeof(dp_sum(ratio, 0, 3)) AS sum_double, pg_typeof(dp_sum(amount, 0, 20)) AS sum_numeric
FROM items;
SELECT pg_typeof(dp_avg(qty, 0, 6)) AS avg_smallint, pg_typeof(dp_avg(price, 0, 99)) AS avg_int,
       pg_typeof(dp_avg(weight, 0, 10)) AS avg_bigint, pg_typeof(dp_avg(score, 0, 3)) AS avg_real,
       pg_typeof(dp_avg(ratio, 0, 3)) AS avg_double, pg_typeof(dp_avg(amount, 0, 20)) AS avg_numeric
FROM items;

-- With an enormous epsilon the Laplace noise of an integer release is 0
-- except with probability about 2 exp(-1e9): releases equal the exact
-- answers.  Each form of each aggregate, explicit and from the settings.
SET dp_agg.epsilon = 1e9;
SELECT dp_count(*) AS n, dp_count(tag) AS tagged, dp_count(tag, 1e9) AS tagged2,
       dp_count(tag, 1e9, 0) AS tagged3,
       dp_sum(qty, 0, 6) AS qty, dp_sum(price, 0, 99, 1e9) AS price,
       dp_sum(weight, 0, 1000000, 1e9, 0) AS weight
FROM items;
SELECT count(*) AS n, count(tag) AS tagged, sum(qty) AS qty, sum(price) AS price,
       sum(weight) AS weight
FROM items;
SELECT round(dp_avg(qty, 0, 6)::numeric, 10) AS qty, round(dp_avg(price, 0, 99, 1e9)::numeric, 10) AS price FROM items;
SELECT round(avg(qty), 10) AS qty, round(avg(price), 10) AS price FROM items;
-- floating-point and numeric releases carry noise of scale S/epsilon,
-- at most 2e-8 here: within 1e-6 except with probability below 1e-20
SELECT abs(dp_sum(score, 0, 3) - 1125) < 1e-6 AS real_ok,
       abs(dp_sum(ratio, 0, 3, 1e9) - 1187.5) < 1e-6 AS double_ok,
       abs(dp_sum(amount, 0, 20, 1e9, 0) - 6125) < 1e-6 AS numeric_ok,
       abs(dp_avg(amount, 0, 20) - 6.125) < 1e-6 AS numeric_avg_ok
FROM items;
SELECT sum(score) AS score, sum(ratio) AS ratio, sum(amount) AS amount, avg(amount) AS avg_amount
FROM items;

-- The Gaussian mechanism (delta > 0): same exactness for integer counts.
SELECT dp_count(id, 1e9, 1e-6) AS n, dp_sum(price, 0, 99, 1e9, 1e-6) AS price FROM items;
