--
-- privacy_unit: a relation's privacy unit bounds each unit's contribution
-- (README, "Privacy units").  At epsilon 1e9 the noise of a count is 0
-- except with probability below 1e-300 (discrete Laplace of scale 1e-9),
-- and that of a sum far below the tolerances used (stated with them), so
-- the releases are the bounded values themselves and are compared with
-- them.
--
CREATE FUNCTION pu_try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN EXECUTE q; RETURN 'no error';
EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE || ': ' || SQLERRM; END $$;
-- EXPLAIN (COSTS OFF) without the "Window:" lines PostgreSQL 18 adds
CREATE FUNCTION pu_plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        IF l !~ '^\s*Window: ' THEN RETURN NEXT l; END IF;
    END LOOP;
END $$;
CREATE ROLE regress_pu_analyst;
CREATE ROLE regress_pu_owner;
SELECT dp_agg.set_budget('regress_pu_analyst', 1e12, 0.5);
SELECT dp_agg.set_budget(current_user::regrole, 1e15, 0.5, 'basic');

-- 50 patients with 20 visits each, patient 0 with 1,000 visits in 50
-- departments, and 7 visits without a patient
CREATE TABLE pu_visits (patient int, dept int, age int, cost float8, amount numeric);
INSERT INTO pu_visits SELECT 1 + k % 50, k % 7, 20 + k % 50, k / 8.0, k / 4.0
FROM generate_series(0, 999) k;
INSERT INTO pu_visits SELECT 0, k % 50, 90, 100, 100 FROM generate_series(0, 999) k;
INSERT INTO pu_visits SELECT NULL, 1, 30, 1, 1 FROM generate_series(1, 7) k;
ALTER TABLE pu_visits OWNER TO regress_pu_owner;
GRANT SELECT ON pu_visits TO regress_pu_analyst;
CREATE VIEW pu_view AS SELECT * FROM pu_visits;
GRANT SELECT ON pu_view TO regress_pu_analyst;

-- administration: superusers and the owner, EXECUTE revoked from PUBLIC
SET ROLE regress_pu_analyst;
SELECT pu_try($$SELECT dp_agg.set_privacy_unit('pu_visits', 'patient')$$);
RESET ROLE;
GRANT EXECUTE ON FUNCTION dp_agg.set_privacy_unit(regclass, name, integer),
                          dp_agg.clear_privacy_unit(regclass) TO regress_pu_analyst, regress_pu_owner;
SET ROLE regress_pu_analyst;
SELECT pu_try($$SELECT dp_agg.set_privacy_unit('pu_visits', 'patient')$$);
RESET ROLE;
SELECT pu_try($$SELECT dp_agg.set_privacy_unit('pu_visits', 'nope')$$);
SELECT pu_try($$SELECT dp_agg.set_privacy_unit('pu_visits', 'ctid')$$);
SELECT pu_try($$SELECT dp_agg.set_privacy_unit('pu_visits', 'patient', 0)$$);
SELECT pu_try($$SELECT dp_agg.set_privacy_unit('pu_visits', 'patient', 65537)$$);
SELECT pu_try($$SELECT dp_agg.set_privacy_unit('pu_view', 'patient')$$);
SELECT pu_try($$SELECT dp_agg.set_privacy_unit(NULL, 'patient')$$);
-- a statement prepared before the unit is set is planned again after
SET dp_agg.epsilon = 1e9;
PREPARE q_count AS SELECT n = 2007 AS per_row, n = 51 AS per_unit FROM (SELECT dp_count(*) n FROM pu_visits) s;
EXECUTE q_count;
SET ROLE regress_pu_owner;
SELECT dp_agg.set_privacy_unit('pu_visits', 'patient', 3);
RESET ROLE;
SELECT relation, unit_column, max_groups_contributed FROM dp_agg.privacy_unit;
EXECUTE q_count;

-- the bounded values, computed directly
SELECT count(DISTINCT patient) AS e_units,
       (SELECT sum(least(n, 5)) FROM (SELECT count(*) n FROM pu_visits
        WHERE patient IS NOT NULL GROUP BY patient) s) AS e_rows5,
       (SELECT sum(least(n, 5)) FROM (SELECT count(*) n FROM pu_visits
        WHERE patient IS NOT NULL AND age > 60 GROUP BY patient) s) AS e_filtered,
       (SELECT sum(least(n, 5)) FROM (SELECT count(DISTINCT dept) n FROM pu_visits
        WHERE patient IS NOT NULL GROUP BY patient) s) AS e_distinct,
       (SELECT sum(least(t, 500)) FROM (SELECT sum(age) t FROM pu_visits
        WHERE patient IS NOT NULL GROUP BY patient) s) AS e_sum_int,
       (SELECT sum(least(t, 300)) FROM (SELECT sum(least(cost, 300)) t FROM pu_visits
        WHERE patient IS NOT NULL GROUP BY patient) s) AS e_sum_float,
       (SELECT sum(least(t, 300)) FROM (SELECT sum(least(amount, 300)) t FROM pu_visits
        WHERE patient IS NOT NULL GROUP BY patient) s) AS e_sum_numeric,
       (SELECT sum(floor(c * t::numeric / n + 0.5)) / sum(c)
        FROM (SELECT count(*) n, least(count(*), 5) c, sum(least(age, 50)) t
              FROM pu_visits WHERE patient IS NOT NULL GROUP BY patient) s) AS e_avg
FROM pu_visits \gset

-- semantics: one count per unit, rows without a unit left out
SELECT dp_count(*) = :e_units AS units FROM pu_visits;
-- counts up to max_rows_contributed rows per unit
SET dp_agg.max_rows_contributed = 5;
SELECT dp_count(*) = :e_rows5 AS bounded FROM pu_visits;
-- dp_count(value) counts non-NULL values, FILTER and DISTINCT apply per unit
SELECT dp_count(age) FILTER (WHERE age > 60) = :e_filtered AS filtered,
       dp_count(DISTINCT dept) = :e_distinct AS distinct_depts
FROM pu_visits;
-- dp_sum clamps each row to the bounds and each unit's total to them too.
-- On a fine grid the noise is discrete Laplace of scale 300 / 1e9 = 3e-7:
-- it exceeds 1e-4 with probability below 2 exp(-1e-4 / 3e-7) < 1e-140
-- (1e-6 would fail once in 30 runs)
SELECT dp_sum(age, 0, 500) = :e_sum_int AS sum_int,
       abs(dp_sum(cost, 0, 300) - :e_sum_float) < 1e-4 AS sum_float,
       abs(dp_sum(amount, 0, 300) - :e_sum_numeric) < 1e-4 AS sum_numeric
FROM pu_visits;
-- dp_avg: each unit contributes c = min(n, 5) of its n rows' worth at its
-- own mean: count c, total c t / n (rounded to the grid, here integers:
-- ages use the grid 1 with Laplace noise), the average of the bounded rows
SELECT abs(dp_avg(age, 0, 50) - :e_avg) < 1e-6 AS avg_bounded FROM pu_visits;

-- bounding: the unit with 1,000 rows moves each release by at most its
-- bound (5 rows; the upper bound for a sum)
SELECT dp_count(*) AS c_all, dp_sum(age, 0, 200) AS s_all FROM pu_visits \gset
SELECT :c_all - dp_count(*) AS count_moved, :s_all - dp_sum(age, 0, 200) AS sum_moved
FROM pu_visits WHERE patient <> 0;

-- the ledger records the unit's bounds; the sensitivity is the bound
SELECT d -> 'aggregate' AS aggregate, d -> 'sensitivity' AS sensitivity, d -> 'privacy_unit' AS privacy_unit
FROM dp_agg.my_ledger l, jsonb_array_elements(l.detail) d
WHERE l.id = (SELECT max(id) FROM dp_agg.my_ledger);
-- preview shows the same; Gaussian: the L2 sensitivity (one group: 5)
SELECT call, aggregate, release, mechanism, sensitivity
FROM dp_agg.preview('SELECT dp_count(*), dp_sum(age, 0, 100), dp_avg(age, 0, 100), dp_count(age, 1, 1e-6) FROM pu_visits');
RESET dp_agg.max_rows_contributed;

-- the rewritten statement runs in parallel plans too
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT dp_count(*) = 51 AS units_parallel FROM pu_visits;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- GROUP BY with a privacy unit: its keys are released only by a private
-- selection, which counts units (README, "Private group keys"), at its
-- default price
SELECT pu_try($$SELECT dept, dp_count(*) FROM pu_visits GROUP BY dept$$);
-- A generous selection: at epsilon 1e9, delta 1e-10 and k = 7 a group of
-- 2 or more units is released with probability 1 - 1e-16 or more, one of 1
-- unit with probability 1.4e-11 (selection_probability below).  Patients
-- 1..50 are in all of depts 0..6, so with k = 7 every one of them keeps
-- all its groups (no random choice); patient 0 is in 50 depts and keeps 7
-- of them.  Depts 7..49 have patient 0 only: at most 7 of them are kept,
-- so one of them is released with probability below 7 * 1.4e-11 = 1e-10.
SET dp_agg.selection_epsilon = 1e9;
SET dp_agg.selection_delta = 1e-10;
SET dp_agg.max_groups_contributed = 7;
SET dp_agg.max_rows_contributed = 5;
SELECT dp_agg.selection_probability(1e9, 1e-10, 1, 7) < 1.5e-11 AS one_unit,
       dp_agg.selection_probability(1e9, 1e-10, 2, 7) > 1 - 1e-15 AS two_units;
-- the bounded values per dept, computed directly (patient 0 left out: it
-- is in depts 0..6 or not depending on its random choice)
CREATE TEMP TABLE pu_expected AS
SELECT dept, sum(least(n, 5)) AS e_count, sum(least(t, 200)) AS e_sum
FROM (SELECT patient, dept, count(*) n, sum(age) t FROM pu_visits
      WHERE patient > 0 GROUP BY patient, dept) s GROUP BY dept;
-- the released groups are depts 0..6; each release is the bounded value
-- of the 50 patients, moved by patient 0 by exactly its bounds (5 rows,
-- a total clamped to 200) or not at all
CREATE TEMP TABLE pu_with AS
SELECT dept, dp_count(*) AS c, dp_sum(age, 0, 200) AS s FROM pu_visits GROUP BY dept;
SELECT array_agg(dept ORDER BY dept) AS released,
       bool_and((c, s) IN ((e_count, e_sum), (e_count + 5, e_sum + 200))) AS bounded_values
FROM pu_with JOIN pu_expected USING (dept);
-- bounding: a unit with 1,000 rows in 50 groups moves the released values
-- by at most the bounds, in at most k = 7 groups: with and without it
CREATE TEMP TABLE pu_without AS
SELECT dept, dp_count(*) AS c, dp_sum(age, 0, 200) AS s FROM pu_visits
WHERE patient IS DISTINCT FROM 0 GROUP BY dept;
SELECT count(*) AS groups,
       count(*) FILTER (WHERE w.c IS NULL OR o.c IS NULL) AS released_once,
       max(abs(w.c - o.c)) <= 5 AS count_within_bound,
       max(abs(w.s - o.s)) <= 200 AS sum_within_bound,
       count(*) FILTER (WHERE w.c <> o.c OR w.s <> o.s) <= 7 AS at_most_k_groups
FROM pu_with w FULL JOIN pu_without o USING (dept);
-- the ledger: the releases' privacy_unit objects and the selection's
SELECT d -> 'aggregate' AS aggregate, d -> 'sensitivity' AS sensitivity, d -> 'privacy_unit' AS privacy_unit,
       d #> '{selection,mechanism}' AS selection, d #> '{selection,max_groups_contributed}' AS selection_k,
       d #> '{selection,threshold}' AS threshold
FROM dp_agg.my_ledger l, jsonb_array_elements(l.detail) d
WHERE l.id = (SELECT max(id) FROM dp_agg.my_ledger);
-- preview: both, the selection on its own row
SELECT call, aggregate, release, mechanism, sensitivity
FROM dp_agg.preview('SELECT dept, dp_count(*), dp_sum(age, 0, 100) FROM pu_visits GROUP BY dept');
-- in parallel plans too (level 1 computed by the workers)
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
CREATE TEMP TABLE pu_parallel AS
SELECT dept, dp_count(*) AS c FROM pu_visits GROUP BY dept;
SELECT array_agg(dept ORDER BY dept) AS released_parallel,
       bool_and(c IN (e_count, e_count + 5)) AS bounded_parallel
FROM pu_parallel JOIN pu_expected USING (dept);
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
-- public keys: no selection, every dept a kept unit is in appears (depts
-- 0..6, and those of patient 0's 7 that are not among them), and a
-- generic plan made with public keys is not run with private ones
SET dp_agg.group_keys = 'public';
SET plan_cache_mode = force_generic_plan;
PREPARE q_public AS SELECT dept, dp_count(*) FROM pu_visits GROUP BY dept;
CREATE TEMP TABLE pu_public AS EXECUTE q_public;
SELECT count(*) BETWEEN 7 AND 14 AS public_groups FROM pu_public;
RESET dp_agg.group_keys;
SELECT pu_try($$EXECUTE q_public$$);
DEALLOCATE q_public;
RESET plan_cache_mode;
-- forging the selection: dp_select has an argument of type internal, and
-- the rewrite's three levels written out are refused
-- (refused by the parser, whose error differs between minor versions)
SELECT pu_try($$SELECT dept, dp_count(*) FROM pu_visits GROUP BY dept HAVING dp_agg_internal.dp_select(NULL::internal, 50)$$) <> 'no error' AS refused;
SELECT pu_try($$SELECT g, dp_agg_internal.unit_release_dp_count(c) FROM (SELECT patient, dept g, dp_agg_internal.unit_bound_dp_count(*) c FROM pu_visits GROUP BY 1, 2) s GROUP BY g$$);
-- a DP sub-query whose releases are not used: the planner drops them and
-- leaves the selection alone over the rewrite, which is refused (fail
-- closed; use the releases, as count(c) does)
SELECT pu_try($$SELECT count(*) FROM (SELECT dept, dp_count(*) c FROM pu_visits GROUP BY dept) s$$);
-- a GROUP BY of the rewrite's level 1 in a sub-query is refused
SELECT pu_try($$SELECT dp_count(*) FROM (SELECT dept FROM pu_visits GROUP BY dept) s$$);
RESET dp_agg.max_groups_contributed;
RESET dp_agg.max_rows_contributed;
DROP TABLE pu_with, pu_without, pu_expected, pu_parallel, pu_public;

-- k = 1: levels 1 and 2 fused into one aggregation by unit (README,
-- "Privacy units"; src/units/unit_pick.c): each unit keeps the group of smallest
-- priority, a SipHash-2-4 under a key drawn for each execution.  500
-- units with 3 rows each in one group (grp = u % 10, NULL for u % 10 = 0,
-- with a text key n<grp> beside it), and unit 0 with 1,000 rows in 50
-- groups (0..49).  At epsilon 1e9, delta 1e-10 and k = 1 a group of 2 or
-- more units is released with probability 1 - 1e-15 or more, a group of
-- one unit with probability delta = 1e-10 (selection_probability below):
-- groups 10..49 hold unit 0 alone, which is in one of them at most.
CREATE TABLE pu_one (u int, grp int, name text, x int);
INSERT INTO pu_one SELECT u, NULLIF(u % 10, 0), 'n' || NULLIF(u % 10, 0), 7
FROM generate_series(1, 500) u, generate_series(1, 3) r;
INSERT INTO pu_one SELECT 0, k % 50, 'n' || (k % 50), 150 FROM generate_series(0, 999) k;
SELECT dp_agg.set_privacy_unit('pu_one', 'u');
SET dp_agg.selection_epsilon = 1e9;
SET dp_agg.selection_delta = 1e-10;
SELECT dp_agg.selection_probability(1e9, 1e-10, 1, 1) <= 1e-10 AS one_unit,
       dp_agg.selection_probability(1e9, 1e-10, 2, 1) > 1 - 1e-15 AS two_units;
-- the plan: one hash aggregation by the unit below the releases
SELECT pu_plan($$SELECT grp, name, dp_count(*), dp_sum(x, 0, 200) FROM pu_one GROUP BY grp, name$$);
-- each release counts the units of its group: 50 units of 3 rows, the
-- count bounded to max_rows_contributed = 1 row, the sum 3 x 7 = 21 per
-- unit; unit 0 adds 1 and at most 200 to at most one group (one of 0..9,
-- or one of 10..49, which is then not released).  The names are those
-- of the groups (both keys come from the same rows).
CREATE TEMP TABLE pu_one_with AS
SELECT grp, name, dp_count(*) AS c, dp_sum(x, 0, 200) AS s FROM pu_one GROUP BY grp, name;
SELECT array_agg(grp ORDER BY grp) AS released,
       bool_and(name IS NOT DISTINCT FROM 'n' || grp) AS names_of_groups,
       count(*) FILTER (WHERE (c, s) <> (50, 1050)) <= 1 AS one_group_moved,
       bool_and((c, s) = (50, 1050) OR (c, s) = (51, 1050 + 200)) AS moved_by_its_bound
FROM pu_one_with;
CREATE TEMP TABLE pu_one_without AS
SELECT grp, name, dp_count(*) AS c, dp_sum(x, 0, 200) AS s FROM pu_one WHERE u <> 0 GROUP BY grp, name;
SELECT count(*) AS groups, bool_and((c, s) = (50, 1050)) AS units_counted FROM pu_one_without;
SELECT count(*) FILTER (WHERE w.c IS DISTINCT FROM o.c OR w.s IS DISTINCT FROM o.s) <= 1 AS at_most_one_group,
       coalesce(max(abs(w.c - o.c)), 0) <= 1 AS count_within_bound,
       coalesce(max(abs(w.s - o.s)), 0) <= 200 AS sum_within_bound
FROM pu_one_with w FULL JOIN pu_one_without o ON coalesce(w.grp, -1) = coalesce(o.grp, -1);
-- a unit of 1,000 rows in 50 groups, alone, with its keys public (no
-- selection): it is counted in one group, never in two
SET dp_agg.group_keys = 'public';
SELECT count(*) AS groups_of_unit_0, sum(c) AS its_count
FROM (SELECT grp, dp_count(*) c FROM pu_one WHERE u = 0 GROUP BY grp) s;
RESET dp_agg.group_keys;
-- dp_avg, and max_rows_contributed = 5 (each unit's 3 rows counted)
SET dp_agg.max_rows_contributed = 5;
SELECT count(*) AS groups, bool_and(c = 150 AND a = 7) AS avg_of_units
FROM (SELECT grp, dp_count(*) c, dp_avg(x, 0, 200) a FROM pu_one WHERE u <> 0 GROUP BY grp) s;
RESET dp_agg.max_rows_contributed;
-- in parallel plans: level 1 partially in the workers, with the leader's key
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
SELECT pu_plan($$SELECT grp, name, dp_count(*), dp_sum(x, 0, 200) FROM pu_one GROUP BY grp, name$$);
SELECT array_agg(grp ORDER BY grp) AS released_parallel,
       bool_and(name IS NOT DISTINCT FROM 'n' || grp) AS names_parallel,
       count(*) FILTER (WHERE (c, s) <> (50, 1050)) <= 1 AS one_group_moved_parallel,
       bool_and((c, s) = (50, 1050) OR (c, s) = (51, 1050 + 200)) AS moved_by_its_bound_parallel
FROM (SELECT grp, name, dp_count(*) AS c, dp_sum(x, 0, 200) AS s FROM pu_one GROUP BY grp, name) s;
RESET parallel_leader_participation;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
-- FILTER inside a DP call, a volatile key, or k > 1: the window path (its
-- choice must see every row of the unit, its contribution only some; a
-- volatile key would differ from the one its priority hashed)
SELECT pu_plan($$SELECT grp, dp_count(*) FILTER (WHERE x > 7) FROM pu_one GROUP BY grp$$);
SELECT pu_plan($$SELECT (grp + floor(random()))::int AS k, dp_count(*) FROM pu_one GROUP BY 1$$);
SET dp_agg.max_groups_contributed = 2;
SELECT pu_plan($$SELECT grp, dp_count(*) FROM pu_one GROUP BY grp$$);
RESET dp_agg.max_groups_contributed;
-- the key: drawn for each execution (equal twice with probability
-- 2^-128), overwriting what a superuser set (which could not weaken
-- privacy anyway: README), and gone when its statement ends (seen here
-- while cursors run: a statement that ends restores the key of the
-- newest one still running); only superusers set or show it
SET dp_agg.unit_pick_key = '00000000000000000000000000000000';
BEGIN;
DECLARE pu_c1 CURSOR FOR SELECT grp, dp_count(*) c FROM pu_one GROUP BY grp;
SELECT current_setting('dp_agg.unit_pick_key') AS key1 \gset
SELECT length(:'key1') = 32 AND :'key1' <> '00000000000000000000000000000000' AS key_drawn;
DECLARE pu_c2 CURSOR FOR SELECT grp, dp_count(*) c FROM pu_one GROUP BY grp;
SELECT current_setting('dp_agg.unit_pick_key') AS key2 \gset
SELECT length(:'key2') = 32 AND :'key2' <> :'key1' AS key_fresh;
MOVE ALL FROM pu_c1;
CLOSE pu_c2;
SELECT current_setting('dp_agg.unit_pick_key') = :'key1' AS key_of_the_running_one;
CLOSE pu_c1;
SELECT current_setting('dp_agg.unit_pick_key') AS key_after_both;
COMMIT;
-- after a statement, after its error, and after one that failed in a
-- subtransaction (x - 7 is 0 for 1,500 rows: the error comes after the
-- key was drawn)
SELECT count(c) > 0 AS released FROM (SELECT grp, dp_count(*) c FROM pu_one GROUP BY grp) s;
SELECT current_setting('dp_agg.unit_pick_key') AS key_after_statement;
SELECT grp, dp_count(*) FROM pu_one WHERE x / (x - 7) > 0 GROUP BY grp;
SELECT current_setting('dp_agg.unit_pick_key') AS key_after_error;
SELECT pu_try($$SELECT grp, dp_count(*) FROM pu_one WHERE x / (x - 7) > 0 GROUP BY grp$$);
SELECT current_setting('dp_agg.unit_pick_key') AS key_after_savepoint;
SELECT pu_try($$SET dp_agg.unit_pick_key = 'not a key'$$);
-- dp_agg_internal.unit_priority outside the rewrite is refused, and a parallel
-- worker (which copies the leader's settings) finds no key after the
-- statement that drew it
SELECT pu_try($$SELECT dp_agg_internal.unit_priority(1, 2, NULL::text)$$);
CREATE VIEW pu_priorities AS SELECT dp_agg_internal.unit_priority(u, grp) AS p FROM pu_one;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
SELECT count(c) > 0 AS released FROM (SELECT grp, dp_count(*) c FROM pu_one GROUP BY grp) s;
SELECT pu_try($$SELECT count(p) FROM pu_priorities$$);
RESET parallel_leader_participation;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
DROP VIEW pu_priorities;
-- the internal functions of the fused path are the rewrite's only
SELECT pu_try($$SELECT g, dp_count(*) FROM (SELECT dp_agg_internal.unit_pick(grp, dp_agg_internal.unit_priority(u, grp)) g FROM pu_one GROUP BY u) s GROUP BY g$$);
SELECT pu_try($$SELECT g, dp_agg_internal.unit_release_dp_count(c) FROM (SELECT dp_agg_internal.unit_pick(grp, 1::bigint) g, dp_agg_internal.unit_pick_bound_dp_count(1::bigint) c FROM pu_one GROUP BY u) s GROUP BY g$$);
SELECT pu_try($$SELECT dp_count(*) FROM pu_one WHERE dp_agg_internal.unit_priority(u) > 0$$);
GRANT SELECT ON pu_one TO regress_pu_analyst;
SELECT has_function_privilege('regress_pu_analyst', 'dp_agg_internal.unit_pick_key_serialfn(internal)', 'EXECUTE') AS serialfn,
       has_function_privilege('regress_pu_analyst', 'dp_agg_internal.unit_pick_transfn(internal, bigint)', 'EXECUTE') AS transfn;
SET ROLE regress_pu_analyst;
-- (the SQLSTATE only: the message changed in PostgreSQL 16)
SELECT split_part(pu_try($$SHOW dp_agg.unit_pick_key$$), ':', 1) AS sqlstate;
SELECT pu_try($$SET dp_agg.unit_pick_key = '00000000000000000000000000000000'$$);
SELECT pu_try($$SELECT g, dp_agg_internal.unit_release_dp_count(c) FROM (SELECT dp_agg_internal.unit_pick(grp, 1::bigint) g, dp_agg_internal.unit_pick_bound_dp_count(1::bigint) c FROM pu_one GROUP BY u) s GROUP BY g$$);
RESET ROLE;
RESET dp_agg.selection_epsilon;
RESET dp_agg.selection_delta;
DROP TABLE pu_one, pu_one_with, pu_one_without;

-- through a view, a sub-query, and a sample of all units, the unit is
-- bounded as when the relation is read directly (more shapes in
-- privacy_unit_source and unit_sample)
SELECT dp_count(*) AS direct FROM pu_visits \gset
SELECT dp_count(*) = :direct AS through_view FROM pu_view;
SELECT dp_count(*) = :direct AS through_sub_query FROM (SELECT * FROM pu_visits WHERE age > 3) s;
SELECT dp_count(*) = :direct AS sampled_whole FROM pu_visits TABLESAMPLE BERNOULLI (100);
-- what is refused (fail closed)
SELECT pu_try($$SELECT dp_count(*), count(*) FROM pu_visits$$);
-- the internal functions are the rewrite's only
SELECT pu_try($$SELECT dp_agg_internal.unit_release_dp_count(dp_agg_internal.unit_bound_dp_count(*)) FROM pu_visits$$);
SELECT pu_try($$SELECT dp_agg_internal.unit_bound_dp_sum(age, 0, 10) FROM pu_visits GROUP BY patient$$);
SELECT pu_try($$SELECT dp_count(*) FROM (SELECT dp_agg_internal.unit_keep(1) OVER (PARTITION BY patient) k FROM pu_visits) s$$);

-- untrusted roles (protected relation) may lower the bounds, not raise them
SELECT dp_agg.protect('pu_visits');
SELECT dp_agg.grant_access('pu_visits', 'regress_pu_analyst');
SET ROLE regress_pu_analyst;
SELECT dp_count(*) = 51 AS units_untrusted FROM pu_visits;
SET dp_agg.max_rows_contributed = 2;
SELECT pu_try($$SELECT dp_count(*) FROM pu_visits$$);
RESET dp_agg.max_rows_contributed;
SET dp_agg.max_groups_contributed = 4;
SELECT pu_try($$SELECT dp_count(*) FROM pu_visits$$);
SET dp_agg.max_groups_contributed = 2;
SELECT dp_count(*) = 51 AS lowered FROM pu_visits;
-- GROUP BY: the selection counts units with the lowered k.  At epsilon
-- 1e9, delta 1e-10, a group of patient 0 alone is released with
-- probability at most 5e-11 (k = 2 or 3; at most 3 such groups kept); a
-- dept has fewer than 2 of the 50 patients, each keeping 3 of its 7 depts,
-- with probability below 3e-11, and 2 or more are released except with
-- probability below 1e-15: the released depts are 0..6 except with
-- probability below 1e-9.  With k = 2 some depts may have too few units.
SET dp_agg.selection_epsilon = 1e9;
SET dp_agg.selection_delta = 1e-10;
SELECT pu_try($$CREATE TEMP TABLE pu_untrusted AS SELECT dept, dp_count(*) FROM pu_visits GROUP BY dept$$);
SELECT array_agg(dept ORDER BY dept) <@ '{0,1,2,3,4,5,6}' AS released_lowered FROM pu_untrusted;
SELECT d #> '{selection,max_groups_contributed}' AS selection_k
FROM dp_agg.my_ledger l, jsonb_array_elements(l.detail) d
WHERE l.id = (SELECT max(id) FROM dp_agg.my_ledger) AND d ? 'selection';
DROP TABLE pu_untrusted;
RESET dp_agg.max_groups_contributed;
CREATE TEMP TABLE pu_untrusted AS SELECT dept, dp_count(*) FROM pu_visits GROUP BY dept;
SELECT array_agg(dept ORDER BY dept) AS released_untrusted FROM pu_untrusted;
DROP TABLE pu_untrusted;
-- lowered to k = 1: the fused path (unit_pick.c), serial and parallel.
-- The 50 patients keep one of depts 0..6 each, so some dept has 2 or more
-- of them (released except with probability below 1e-15); a dept of one
-- patient (patient 0's depts 7..49 among them) is released with
-- probability 1e-10 at most.
SET dp_agg.max_groups_contributed = 1;
CREATE TEMP TABLE pu_untrusted AS SELECT dept, dp_count(*) FROM pu_visits GROUP BY dept;
SELECT count(*) >= 1 AND array_agg(dept) <@ '{0,1,2,3,4,5,6}' AS released_fused FROM pu_untrusted;
DROP TABLE pu_untrusted;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
CREATE TEMP TABLE pu_untrusted AS SELECT dept, dp_count(*) FROM pu_visits GROUP BY dept;
SELECT count(*) >= 1 AND array_agg(dept) <@ '{0,1,2,3,4,5,6}' AS released_fused_parallel FROM pu_untrusted;
DROP TABLE pu_untrusted;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET dp_agg.max_groups_contributed;
-- public keys are refused to untrusted roles
SET dp_agg.group_keys = 'public';
SELECT pu_try($$SELECT dept, dp_count(*) FROM pu_visits GROUP BY dept$$);
RESET dp_agg.group_keys;
-- an untrusted role forging the pieces of either half: a contribution of
-- level 1 handed to level 3, the levels written out, a window of
-- unit_keep under a GROUP BY, the selection
SELECT pu_try($$SELECT dept, dp_agg_internal.unit_release_dp_count(decode(repeat('00', 32), 'hex')) FROM pu_visits GROUP BY dept$$);
SELECT pu_try($$SELECT g, dp_agg_internal.unit_release_dp_count(c) FROM (SELECT patient, dept g, dp_agg_internal.unit_bound_dp_count(*) c FROM pu_visits GROUP BY 1, 2) s GROUP BY g$$);
SELECT pu_try($$SELECT dept, dp_count(*) FROM (SELECT dept, dp_agg_internal.unit_keep(1) OVER (PARTITION BY patient) k FROM pu_visits) s GROUP BY dept$$);
SELECT pu_try($$SELECT dept, dp_count(*) FROM pu_visits GROUP BY dept HAVING dp_agg_internal.dp_select(NULL, 1)$$) <> 'no error' AS refused;
RESET dp_agg.selection_epsilon;
RESET dp_agg.selection_delta;
RESET dp_agg.max_groups_contributed;
SELECT pu_try($$SET dp_agg.max_rows_contributed_limit = 10$$);
RESET ROLE;
-- the DBA raises the limit; trusted roles are not limited
SET dp_agg.max_rows_contributed_limit = 2;
SET ROLE regress_pu_analyst;
SET dp_agg.max_rows_contributed = 2;
SELECT dp_count(*) = 102 AS raised FROM pu_visits;
RESET dp_agg.max_rows_contributed;
RESET ROLE;
RESET dp_agg.max_rows_contributed_limit;
SET dp_agg.max_rows_contributed = 3;
SELECT dp_count(*) = 153 AS trusted FROM pu_visits;
RESET dp_agg.max_rows_contributed;
SELECT dp_agg.unprotect('pu_visits');

-- the unit column is stored by attribute number: a rename follows it
-- (the catalog keeps its current name), and another column renamed to its
-- old name does not become the unit (counting depts would give 50 units,
-- patients are 51)
ALTER TABLE pu_visits RENAME COLUMN patient TO person;
ALTER TABLE pu_visits RENAME COLUMN dept TO patient;
SELECT unit_column, unit_attnum FROM dp_agg.privacy_unit WHERE relation = 'pu_visits'::regclass;
SELECT dp_count(*) = 51 AS units_follow_the_column FROM pu_visits;
ALTER TABLE pu_visits RENAME COLUMN patient TO dept;
ALTER TABLE pu_visits RENAME COLUMN person TO patient;
SELECT unit_column FROM dp_agg.privacy_unit WHERE relation = 'pu_visits'::regclass;
EXECUTE q_count;
-- a rename the catalog did not see (event triggers disabled) fails closed
SET session_replication_role = replica;
ALTER TABLE pu_visits RENAME COLUMN patient TO person;
RESET session_replication_role;
SELECT pu_try($$SELECT dp_count(*) FROM pu_visits$$);
SET session_replication_role = replica;
ALTER TABLE pu_visits RENAME COLUMN person TO patient;
RESET session_replication_role;
EXECUTE q_count;
-- a dropped unit column removes the unit, with a notice; a dropped
-- relation leaves no unit behind
CREATE TABLE pu_gone (v int, u int);
INSERT INTO pu_gone VALUES (1, 1), (1, 1), (2, 1);
SELECT dp_agg.set_privacy_unit('pu_gone', 'u');
SELECT dp_count(*) AS one_unit FROM pu_gone;
ALTER TABLE pu_gone DROP COLUMN u;
SELECT count(*) AS unit_of_pu_gone FROM dp_agg.privacy_unit WHERE relation = 'pu_gone'::regclass;
SELECT dp_count(*) AS rows_again FROM pu_gone;
SELECT dp_agg.set_privacy_unit('pu_gone', 'v');
DROP TABLE pu_gone;
SELECT count(*) AS units_left FROM dp_agg.privacy_unit;

-- clearing the unit: rows are units again
SET ROLE regress_pu_owner;
SELECT dp_agg.clear_privacy_unit('pu_visits');
SELECT dp_agg.clear_privacy_unit('pu_visits');
RESET ROLE;
EXECUTE q_count;
DEALLOCATE q_count;

DROP VIEW pu_view;
DROP TABLE pu_visits;
DROP FUNCTION pu_try(text);
DROP FUNCTION pu_plan(text);
SELECT dp_agg.reset_budget('regress_pu_analyst');
DELETE FROM dp_agg.budget WHERE role = 'regress_pu_analyst'::regrole;
REVOKE EXECUTE ON FUNCTION dp_agg.set_privacy_unit(regclass, name, integer),
                           dp_agg.clear_privacy_unit(regclass) FROM regress_pu_analyst, regress_pu_owner;
DROP ROLE regress_pu_analyst;
DROP ROLE regress_pu_owner;
RESET dp_agg.epsilon;
