--
-- selection: private selection of GROUP BY keys (README, "Private group
-- keys").  A DP statement with GROUP BY releases a group only if the
-- private selection draws it: with probability pi(n) for a group of n rows
-- (Desfontaines et al. 2022, Theorem 1), priced and charged with the
-- statement.
--
-- Semantics are checked at epsilon 1e9 for the DP aggregates (integer
-- releases exact except with probability about 2 exp(-1e9)) and a
-- selection at epsilon 5, delta 1e-9, whose pi reaches 1 at n = 11:
-- every group of at least 11 rows is released, and the 51 groups of at most
-- 2 rows are all suppressed except with probability at most
-- 50 pi(1) + pi(2) = 50e-9 + 1.5e-7 < 1e-6.  Groups of 3 to 10 rows are
-- released at random and never shown.
--
\set SHOW_CONTEXT never
CREATE TABLE sel_t (g int, x int);
-- group g in 1..20 has g rows; 50 groups of one row; a NULL key with 30 rows
INSERT INTO sel_t SELECT g, i FROM generate_series(1, 20) g, generate_series(1, g) i;
INSERT INTO sel_t SELECT 100 + i, 1 FROM generate_series(1, 50) i;
INSERT INTO sel_t SELECT NULL, i FROM generate_series(1, 30) i;
SELECT dp_agg.set_budget(current_user::regrole, 1e12, 0.5);
SET dp_agg.epsilon = 1e9;

-- settings: documented defaults, so that a GROUP BY runs with
-- dp_agg.epsilon alone: selection_epsilon unset costs the share
-- selection_share of the statement's epsilon (half: as much as its
-- releases), selection_delta is 1e-7
SHOW dp_agg.selection_epsilon;
SHOW dp_agg.selection_delta;
SHOW dp_agg.selection_share;
SHOW dp_agg.group_keys;
SELECT count(*) FROM dp_agg.ledger \gset ledger_
-- at epsilon 1e9 the selection costs 1e9 too: every group of two rows or
-- more is released with certainty (pi(2) = 1), those of one row with
-- probability 1e-7 each (not counted here)
SELECT count(*) FILTER (WHERE g BETWEEN 2 AND 20 OR g IS NULL) AS large
FROM (SELECT g, dp_count(*) AS c FROM sel_t GROUP BY g) s;
SELECT epsilon, delta, jsonb_path_query_first(detail, '$[*].selection.epsilon') AS selection_epsilon,
       jsonb_path_query_first(detail, '$[*].selection.delta') AS selection_delta
FROM dp_agg.ledger ORDER BY id DESC LIMIT 1;
-- the share is a setting (a DBA sets it per role with ALTER ROLE ... SET)
SET dp_agg.selection_share = 0.2;
SELECT statement_epsilon, release, epsilon FROM dp_agg.preview('SELECT g, dp_count(*) FROM sel_t GROUP BY g');
RESET dp_agg.selection_share;
SET dp_agg.selection_share = 1;
SET dp_agg.selection_share = 0;
-- a delta set to empty is missing, and the error says which setting
SET dp_agg.selection_delta = '';
SELECT g, dp_count(*) FROM sel_t GROUP BY g;
\echo :LAST_ERROR_SQLSTATE
RESET dp_agg.selection_delta;
SET dp_agg.selection_epsilon = 5;
SELECT count(*) - :ledger_count AS charged FROM dp_agg.ledger;
SET dp_agg.selection_epsilon = 0;
SET dp_agg.selection_epsilon = -1;
SET dp_agg.selection_epsilon = 'Infinity';
SET dp_agg.selection_epsilon = 'NaN';
SET dp_agg.selection_epsilon = 'five';
SET dp_agg.selection_delta = 0;
SET dp_agg.selection_delta = 1;
SET dp_agg.selection_delta = 1e-9x;
SET dp_agg.group_keys = 'secret';
SET dp_agg.selection_delta = 1e-9;

-- which groups appear: n >= 11 always (exact counts), n <= 2 never
SELECT g, c FROM (SELECT g, dp_count(*) AS c FROM sel_t GROUP BY g) s
WHERE g IS NULL OR g >= 11 OR g <= 2 OR g > 100 ORDER BY g;
-- the same with dp_sum and dp_avg, a HAVING of the statement, and keys of
-- an expression
SELECT g, s, a FROM (SELECT g, dp_sum(x, 0, 100) AS s, dp_avg(x, 0, 100) AS a FROM sel_t
                     GROUP BY g HAVING dp_count(*) >= 15) q
WHERE g IS NULL OR g >= 11 OR g <= 2 ORDER BY g;
SELECT k, c FROM (SELECT g % 3 AS k, dp_count(*) AS c FROM sel_t WHERE g <= 20 GROUP BY 1) s
ORDER BY k;
-- a sub-query, a CTE and INSERT ... SELECT are selected the same way
WITH s AS (SELECT g, dp_count(*) AS c FROM sel_t GROUP BY g)
SELECT count(*) FILTER (WHERE g BETWEEN 11 AND 20 OR g IS NULL) AS large,
       count(*) FILTER (WHERE g <= 2 OR g > 100) AS small FROM s;
CREATE TABLE sel_out (g int, c bigint);
INSERT INTO sel_out SELECT g, dp_count(*) FROM sel_t GROUP BY g;
SELECT count(*) FILTER (WHERE g BETWEEN 11 AND 20 OR g IS NULL) AS large,
       count(*) FILTER (WHERE g <= 2 OR g > 100) AS small FROM sel_out;
-- views, PL/pgSQL, prepared statements with parameters and materialized
-- views are selected the same way (groups of 200 rows: always released);
-- GROUP BY in a SQL function that the planner inlines is refused, as the
-- rewrite does not see it
CREATE TABLE sel_big AS SELECT i % 5 AS g, i AS x FROM generate_series(1, 1000) i;
CREATE VIEW sel_v AS SELECT g, dp_count(*) AS c FROM sel_big GROUP BY g;
SELECT * FROM sel_v ORDER BY g;
DO $$ DECLARE r record; BEGIN
    FOR r IN SELECT g, dp_count(x) AS c FROM sel_big GROUP BY g ORDER BY g LOOP
        RAISE NOTICE 'group % has % rows', r.g, r.c;
    END LOOP;
END $$;
PREPARE sel_p(float8) AS SELECT g, dp_count(*) FROM sel_big GROUP BY g HAVING dp_count(*) > $1 ORDER BY g;
EXECUTE sel_p(100);
DEALLOCATE sel_p;
CREATE MATERIALIZED VIEW sel_mv AS SELECT g, dp_count(*) AS c FROM sel_big GROUP BY g;
SELECT count(*) AS groups, sum(c) AS rows FROM sel_mv;
CREATE FUNCTION sel_f() RETURNS TABLE (g int, c bigint) LANGUAGE sql STABLE
AS 'SELECT g, dp_count(*) FROM sel_big GROUP BY g';
SELECT * FROM sel_f();
DROP FUNCTION sel_f();
DROP MATERIALIZED VIEW sel_mv;
DROP VIEW sel_v;
DROP TABLE sel_big;
-- a selection epsilon too small to reach certainty within 2^20 rows fails
-- before anything is read or charged
SET dp_agg.selection_epsilon = 1e-9;
SELECT g, dp_count(*) FROM sel_t GROUP BY g;
SET dp_agg.selection_epsilon = 5;
-- a statement without GROUP BY has no selection and needs none
RESET dp_agg.selection_epsilon;
SELECT dp_count(*) FROM sel_t;
SET dp_agg.selection_epsilon = 5;

-- the plan: the selection comes first in the aggregation's condition,
-- in parallel plans too
EXPLAIN (COSTS OFF) SELECT g, dp_count(*) FROM sel_t GROUP BY g HAVING dp_count(*) > 3;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT g, dp_count(*) FROM sel_t GROUP BY g;
SELECT g, c FROM (SELECT g, dp_count(*) AS c FROM sel_t GROUP BY g) s
WHERE g IS NULL OR g >= 11 OR g <= 2 OR g > 100 ORDER BY g;
-- fused selection: the selection counts no row itself (FILTER (WHERE
-- false)) and reads the rows of each group from a DP aggregate of the
-- statement, counted or skipped (NULL, NaN), here in a parallel plan.
-- sel_n: group 1 has 4,000 rows whose values are NULL (x) and NaN (f), group 2
-- one row: group 1 is released (pi(4000) = 1) with nothing counted, group 2
-- is not (probability pi(1) = 1e-9 for each statement)
CREATE TABLE sel_n (g int, x int, f float8);
INSERT INTO sel_n SELECT 1, NULL, 'NaN' FROM generate_series(1, 4000);
ANALYZE sel_n;
INSERT INTO sel_n VALUES (2, 1, 1);
EXPLAIN (COSTS OFF) SELECT g, dp_sum(x, 0, 10) FROM sel_n GROUP BY g;
SELECT g, dp_sum(x, 0, 10) FROM sel_n GROUP BY g ORDER BY g;
SELECT g, dp_count(x) FROM sel_n GROUP BY g ORDER BY g;
SELECT g, dp_avg(f, 0, 10) IS NOT NULL AS released FROM sel_n GROUP BY g ORDER BY g;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET parallel_leader_participation;
-- serial: the same
SELECT g, dp_sum(x, 0, 10), dp_count(*) FROM sel_n GROUP BY g ORDER BY g;
SELECT g, dp_var(f, 0, 10) IS NOT NULL AS released FROM sel_n GROUP BY g ORDER BY g;
-- no host: a DP aggregate with FILTER, or only in HAVING, or with
-- estimated bounds counts other rows (or none): the selection counts the
-- group's rows itself
EXPLAIN (COSTS OFF) SELECT g, dp_count(*) FILTER (WHERE x > 0) FROM sel_n GROUP BY g;
SELECT g, dp_count(*) FILTER (WHERE x > 0) FROM sel_n GROUP BY g ORDER BY g;
EXPLAIN (COSTS OFF) SELECT g FROM sel_n GROUP BY g HAVING dp_count(*) >= 0;
SELECT g FROM sel_n GROUP BY g HAVING dp_count(*) >= 0 ORDER BY g;
EXPLAIN (COSTS OFF) SELECT g, dp_sum(x) FROM sel_n GROUP BY g;
DROP TABLE sel_n;

-- the fused selection counts the group's rows exactly: at selection (20,
-- 1e-3) the optimal mechanism releases a group of one unit with probability
-- 0.001 and one of two with 1 - 2e-9; of 500 groups of one row (each read
-- from the host dp_count(*)), the number released is Binomial(500, 0.001),
-- at most 10 except with probability 1.2e-11 (a selection that counted a
-- row more would release nearly all of them)
SELECT n, round(dp_agg.selection_probability(20, 1e-3, n, 1)::numeric, 6) AS probability
FROM generate_series(1, 2) n;
CREATE TABLE sel_one AS SELECT k AS g, 1 AS x FROM generate_series(1, 500) k;
BEGIN;
SET LOCAL dp_agg.selection_epsilon = 20;
SET LOCAL dp_agg.selection_delta = 1e-3;
CREATE TEMP TABLE sel_one_out AS SELECT g, dp_count(*) AS n FROM sel_one GROUP BY g;
COMMIT;
SELECT count(*) <= 10 AS few_released FROM sel_one_out;
DROP TABLE sel_one, sel_one_out;

-- the price: the selection is added to the statement's, and recorded
-- (groups 11..20 are released, those of one row above 100 with probability
-- 1e-9 each; a range with both bounds would be a public domain)
SELECT count(*) FILTER (WHERE g <= 20) AS groups, bool_and(c IS NOT NULL) AS counted
FROM (SELECT g, dp_count(g, 0.5) AS c FROM sel_t WHERE g > 10 GROUP BY g) s;
SELECT epsilon, delta, detail->1 AS selection FROM dp_agg.ledger ORDER BY id DESC LIMIT 1;
SELECT call, aggregate, release, mechanism, epsilon, delta, sensitivity, noise_scale, grid, ci95,
       statement_epsilon, statement_delta
FROM dp_agg.preview('SELECT g, dp_count(g, 0.5) FROM sel_t GROUP BY g');
-- its mechanism, from the calculators: pi(n) = delta (e^(n eps) - 1)/(e^eps - 1)
-- while the first term of the recursion binds (n = 1..4 here)
SELECT n, abs(dp_agg.selection_probability(5, 1e-9, n) / (1e-9 * (exp(5 * n) - 1) / (exp(5) - 1)) - 1) < 1e-12
       AS closed_form
FROM generate_series(1, 4) n;
SELECT dp_agg.selection_threshold(5, 1e-9) AS threshold,
       dp_agg.selection_probability(5, 1e-9, 10) < 1 AS below,
       dp_agg.selection_probability(5, 1e-9, 11) AS at,
       dp_agg.selection_probability(5, 1e-9, 1000000) AS beyond,
       dp_agg.selection_probability(5, 1e-9, 0) AS empty;
-- max_groups_contributed k: the mechanism at (epsilon/k, delta/k)
SELECT n, abs(dp_agg.selection_probability(6, 3e-9, n, 3) / dp_agg.selection_probability(2, 1e-9, n) - 1) < 1e-12
       AS split
FROM generate_series(1, 30, 7) n;
-- Gaussian thresholding for k > 1 when it releases groups sooner (README,
-- "Private group keys"): half is the smallest n released with probability
-- 1/2; at (1, 1e-5) the split needs 23, 33, 55, 109, 1083 units for k = 2,
-- 3, 5, 10, 100
SELECT k, mechanism, half, threshold, half = tau AS half_is_tau,
       sigma > 0 AS noisy, delta_noise + delta_threshold <= 1e-5 AS within_delta
FROM unnest(ARRAY[1, 2, 3, 5, 10, 100]) k, dp_agg.selection_mechanism(1, 1e-5, k);
SELECT dp_agg.selection_threshold(1, 1e-5, 5) AS never_certain;
-- its curve: P[n + Z >= tau], below 1/2 before tau and from 1/2 on at it,
-- symmetric about tau - 1/2, and a group of one unit released with
-- probability at most delta_threshold / k
SELECT dp_agg.selection_probability(1, 1e-5, tau - 1, 5) < 0.5 AS below_half,
       dp_agg.selection_probability(1, 1e-5, tau, 5) > 0.5 AS from_half,
       dp_agg.selection_probability(1, 1e-5, 1, 5) <= delta_threshold / 5 AS one_unit,
       dp_agg.selection_probability(1, 1e-5, 0, 5) AS empty
FROM dp_agg.selection_mechanism(1, 1e-5, 5);
SELECT bool_and(abs(dp_agg.selection_probability(1, 1e-5, tau + j, 5) +
                    dp_agg.selection_probability(1, 1e-5, tau - 1 - j, 5) - 1) < 1e-12) AS symmetric,
       bool_and(dp_agg.selection_probability(1, 1e-5, tau + j, 5) <
                dp_agg.selection_probability(1, 1e-5, tau + j + 1, 5)) AS increasing
FROM dp_agg.selection_mechanism(1, 1e-5, 5), generate_series(0, 40) j;
SELECT dp_agg.selection_threshold(1, 1e-5, 0);
SELECT dp_agg.selection_threshold(0, 1e-5);
SELECT dp_agg.selection_threshold(1, 0);
SELECT dp_agg.selection_probability(1, 1e-5, -1);
SELECT dp_agg.selection_threshold(1e-7, 1e-5);
SELECT dp_agg.selection_threshold(1, 5e-324, 3);
SELECT dp_agg.selection_mechanism(1e-5, 1e-5, 50);
SELECT has_function_privilege('public', 'dp_agg.selection_sample(float8, float8, bigint, integer, integer)',
                              'EXECUTE') AS public_sample;

-- nobody calls dp_select directly: its first argument has type internal,
-- which no SQL expression has.  The parser refuses each call, with a
-- message that differs between PostgreSQL versions (15: no such function,
-- or no cast to internal; 16 and later: no value of type internal): only
-- the refusal is shown.
CREATE FUNCTION pg_temp.refused(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'accepted';
EXCEPTION WHEN undefined_function OR cannot_coerce OR feature_not_supported THEN
    RETURN 'refused';
END $$;
SELECT pg_temp.refused('SELECT dp_agg_internal.dp_select(NULL, 1) FROM sel_t');
SELECT pg_temp.refused('SELECT g, dp_agg_internal.dp_select(NULL::internal, 1) FROM sel_t GROUP BY g');
SELECT pg_temp.refused('SELECT dp_agg_internal.select_finalfn(NULL)');

-- public group keys: released as they are, no selection, no price
SET dp_agg.group_keys = 'public';
SELECT count(*) AS groups, sum(c) AS rows FROM (SELECT g, dp_count(*) AS c FROM sel_t GROUP BY g) s;
SELECT epsilon, delta, jsonb_array_length(detail) AS calls FROM dp_agg.ledger ORDER BY id DESC LIMIT 1;
-- a plan made with public keys is refused once they are private again
SET plan_cache_mode = force_generic_plan;
PREPARE sel_public AS
SELECT count(*) AS groups, sum(c) AS rows FROM (SELECT g, dp_count(*) AS c FROM sel_t GROUP BY g) s;
EXECUTE sel_public;
SET dp_agg.group_keys = 'private';
EXECUTE sel_public;
\echo :LAST_ERROR_SQLSTATE
DEALLOCATE sel_public;
RESET plan_cache_mode;
RESET dp_agg.group_keys;

-- Renyi accounting: no Renyi DP curve bounds an (epsilon, delta) selection
-- with delta > 0; the role's selections are summed beside its curve and the
-- composed epsilon stays finite (the hybrid certificate; selection_rdp
-- tests it in depth)
CREATE ROLE regress_sel_rdp;
GRANT SELECT ON sel_t TO regress_sel_rdp;
SELECT dp_agg.set_budget('regress_sel_rdp', 100, 1e-3, 'rdp');
SET ROLE regress_sel_rdp;
SELECT dp_count(x, 1, 1e-6) >= 0 AS released FROM sel_t;
SELECT composed_epsilon < 10 AS finite FROM dp_agg.my_budget_curves;
SELECT count(*) >= 0 AS released FROM (SELECT g, dp_count(x, 1) FROM sel_t GROUP BY g) s;
SELECT composed_epsilon < 'Infinity' AS finite,
       composed_epsilon = dp_agg.hybrid_epsilon(rdp, selection_epsilon, selection_delta, delta_limit) AS hybrid,
       epsilon_spent, delta_spent, selection_epsilon, selection_delta
FROM dp_agg.my_budget_curves;
SELECT dp_count(x, 1) >= 0 AS released FROM sel_t;
RESET ROLE;
SELECT dp_agg.spent_epsilon('regress_sel_rdp', 1e-3) < 'Infinity' AS spent_finite;

-- protected relations: an untrusted role may GROUP BY, through the selection
CREATE ROLE regress_sel_owner;
CREATE ROLE regress_sel_analyst;
CREATE TABLE sel_p (id int PRIMARY KEY, grp int, name text);
INSERT INTO sel_p SELECT i, i % 5, 'n' || i FROM generate_series(1, 1000) i;
ALTER TABLE sel_p OWNER TO regress_sel_owner;
SELECT dp_agg.protect('sel_p');
SELECT dp_agg.grant_access('sel_p', 'regress_sel_analyst');
SELECT dp_agg.set_budget('regress_sel_analyst', 1e12, 0.5);
SET ROLE regress_sel_analyst;
-- groups of 200 rows: released with certainty, exact counts
SELECT grp, dp_count(id) FROM sel_p GROUP BY grp ORDER BY grp;
-- the primary key: each group has one row, released with probability
-- 1e-9: 1000 groups, none released except with probability 1e-6
SELECT id, dp_count(id) FROM sel_p GROUP BY id;
SELECT length(name) AS len, dp_count(id) FROM sel_p GROUP BY 1 HAVING length(name) > 2 ORDER BY 1;
SET dp_agg.group_keys = 'public';
SELECT grp, dp_count(id) FROM sel_p GROUP BY grp;
RESET dp_agg.group_keys;
SELECT grp, dp_count(id) FROM sel_p GROUP BY ROLLUP (grp);
-- keys and HAVING computed with calls that fail on some rows: such a
-- row's value is NULL (grp = 2, a division by zero), its group selected
-- like the others
SELECT grp / (grp - 2) AS k, dp_count(id) FROM sel_p GROUP BY 1 ORDER BY 1;
SELECT grp, dp_count(id) FROM sel_p GROUP BY grp HAVING 10 / (grp - 2) > 0 ORDER BY 1;
RESET ROLE;

-- cleanup
SELECT dp_agg.unprotect('sel_p');
DROP TABLE sel_p, sel_t, sel_out;
DELETE FROM dp_agg.budget WHERE role::text LIKE 'regress_sel_%';
DELETE FROM dp_agg.ledger WHERE role::text LIKE 'regress_sel_%';
DROP ROLE regress_sel_owner, regress_sel_analyst, regress_sel_rdp;
