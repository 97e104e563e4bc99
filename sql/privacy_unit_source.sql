--
-- privacy_unit_source: the privacy unit of a relation read through views,
-- sub-queries and CTEs (README, "Privacy units").  The rewrite finds the
-- unit column through them (adding it to their output if they do not
-- select it) and bounds each unit as when the relation is read directly.
-- At epsilon 1e9 an integer release is the exact bounded value except
-- with probability below 1e-300, so releases are compared with those of
-- the same statement written over the relation itself.
--
\set VERBOSITY default
\set SHOW_CONTEXT never
CREATE FUNCTION ps_try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN EXECUTE q; RETURN 'no error';
EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE || ': ' || SQLERRM; END $$;
CREATE ROLE regress_ps_owner;
CREATE ROLE regress_ps_analyst;
SELECT dp_agg.set_budget('regress_ps_analyst', 1e12, 0.5);
SELECT dp_agg.set_budget(current_user::regrole, 1e15, 0.5);
-- 50 patients with 20 visits each (in depts 0..6), patient 0 with 1,000
-- visits in 50 depts, 7 visits without a patient
CREATE TABLE ps_visits (patient int, dept int, age int, cost float8);
INSERT INTO ps_visits SELECT 1 + k % 50, k % 7, 20 + k % 50, k / 8.0 FROM generate_series(0, 999) k;
INSERT INTO ps_visits SELECT 0, k % 50, 90, 100 FROM generate_series(0, 999) k;
INSERT INTO ps_visits SELECT NULL, 1, 30, 1 FROM generate_series(1, 7) k;
CREATE TABLE ps_depts (dept int PRIMARY KEY, ward text);
INSERT INTO ps_depts SELECT k, 'ward ' || (k % 3) FROM generate_series(0, 49) k;
ALTER TABLE ps_visits OWNER TO regress_ps_owner;
SELECT dp_agg.set_privacy_unit('ps_visits', 'patient', 3);
SET dp_agg.epsilon = 1e9;
SET dp_agg.max_rows_contributed = 5;

-- the releases of the relation read directly
SELECT dp_count(*) AS d_all, dp_sum(age, 0, 200) AS s_all FROM ps_visits \gset
SELECT dp_count(*) AS d_old, dp_sum(age, 0, 200) AS s_old FROM ps_visits WHERE age > 60 \gset
SELECT :d_all = 255 AS five_rows_per_unit, :d_old AS units_rows_over_60;

-- a view that renames the unit column, one that filters, one that does not
-- select the unit, a view of a view, sub-queries
CREATE VIEW ps_renamed AS SELECT patient AS person, dept, age FROM ps_visits;
CREATE VIEW ps_old AS SELECT * FROM ps_visits WHERE age > 60;
CREATE VIEW ps_no_unit AS SELECT dept, age FROM ps_visits;
CREATE VIEW ps_old_of_renamed AS SELECT * FROM ps_renamed WHERE age > 60;
SELECT (dp_count(*), dp_sum(age, 0, 200)) = (:d_all, :s_all) AS renamed FROM ps_renamed;
SELECT (dp_count(*), dp_sum(age, 0, 200)) = (:d_old, :s_old) AS filtered FROM ps_old;
SELECT (dp_count(*), dp_sum(age, 0, 200)) = (:d_all, :s_all) AS unit_not_selected FROM ps_no_unit;
SELECT (dp_count(*), dp_sum(age, 0, 200)) = (:d_old, :s_old) AS view_of_view FROM ps_old_of_renamed;
SELECT dp_count(*) = :d_old AS sub_query FROM (SELECT age FROM ps_visits WHERE age > 60) s;
SELECT dp_count(*) = :d_old AS nested FROM (SELECT * FROM (SELECT dept, age FROM ps_visits) a WHERE age > 60) b;
-- the sub-query's ORDER BY column is not its output: the unit goes before it
SELECT dp_count(*) = :d_all AS ordered_sub_query FROM (SELECT dept FROM ps_visits ORDER BY age) s;
-- a CTE read once; one read twice, or MATERIALIZED, is refused
SELECT dp_count(*) = :d_old AS cte FROM (WITH o AS (SELECT * FROM ps_visits WHERE age > 60) SELECT * FROM o) s;
WITH o AS (SELECT dept, age FROM ps_visits WHERE age > 60) SELECT dp_count(*) = :d_old AS cte FROM o;
WITH o AS NOT MATERIALIZED (SELECT * FROM ps_old) SELECT dp_count(*) = :d_old AS cte_of_view FROM o;
WITH o AS (SELECT * FROM ps_visits), p AS (SELECT * FROM o) SELECT dp_count(*) FROM o;
WITH o AS MATERIALIZED (SELECT * FROM ps_visits) SELECT dp_count(*) FROM o;
-- a security barrier view
CREATE VIEW ps_barrier WITH (security_barrier) AS SELECT * FROM ps_visits WHERE age > 60;
SELECT dp_count(*) = :d_old AS security_barrier FROM ps_barrier;
-- a view that joins a lookup table, grouped by its column (k = 3, the
-- window path; then k = 1, the fused path)
CREATE VIEW ps_wards AS SELECT v.*, d.ward FROM ps_visits v JOIN ps_depts d USING (dept);
SET dp_agg.group_keys = 'public';
CREATE TEMP TABLE ps_direct AS
SELECT d.ward, dp_count(*) AS c FROM ps_visits v JOIN ps_depts d USING (dept) GROUP BY d.ward;
CREATE TEMP TABLE ps_through AS SELECT ward, dp_count(*) AS c FROM ps_wards GROUP BY ward;
-- patients 1..50 are in wards 0..2 (depts 0..6) and keep all their three
-- wards (k = 3), 5 rows each; patient 0 is in all three too
SELECT count(*) AS wards, bool_and(t.c = d.c) AS same, sum(t.c) AS total
FROM ps_through t JOIN ps_direct d USING (ward);
SET dp_agg.max_groups_contributed = 1;
SELECT sum(c) AS fused_one_group_per_unit FROM (SELECT ward, dp_count(*) AS c FROM ps_wards GROUP BY ward) s;
RESET dp_agg.max_groups_contributed;
RESET dp_agg.group_keys;
DROP TABLE ps_direct, ps_through;

-- bounding: the unit with 1,000 rows moves each release through a view by
-- at most its bound (5 rows; a total clamped to 200)
SELECT :d_all - dp_count(*) AS count_moved, :s_all - dp_sum(age, 0, 200) AS sum_moved
FROM ps_renamed WHERE person <> 0;
-- with GROUP BY: in at most k groups, each by at most its bound.  With
-- k = 7, patients 1..50 keep all their 7 depts (no random choice), so the
-- two statements differ only by patient 0's rows, in the 7 depts it keeps
-- (a dept of patient 0 alone is released with probability below 1e-9)
SELECT dp_agg.set_privacy_unit('ps_visits', 'patient', 7);
SET dp_agg.selection_epsilon = 1e9;
SET dp_agg.selection_delta = 1e-10;
CREATE TEMP TABLE ps_with AS SELECT dept, dp_count(*) AS c FROM ps_renamed GROUP BY dept;
CREATE TEMP TABLE ps_without AS SELECT dept, dp_count(*) AS c FROM ps_renamed WHERE person <> 0 GROUP BY dept;
SELECT count(*) AS groups, count(*) FILTER (WHERE w.c IS DISTINCT FROM o.c) <= 7 AS at_most_k_groups,
       coalesce(max(abs(w.c - o.c)), 0) <= 5 AS within_bound
FROM ps_with w FULL JOIN ps_without o USING (dept);
DROP TABLE ps_with, ps_without;
SELECT dp_agg.set_privacy_unit('ps_visits', 'patient', 3);
RESET dp_agg.selection_epsilon;
RESET dp_agg.selection_delta;

-- in parallel plans
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT dp_count(*) = :d_old AS parallel_view FROM ps_old;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- what hides the unit is refused, saying what to write: a set operation,
-- an aggregate, DISTINCT, a window, LIMIT below the DP aggregates
CREATE VIEW ps_union AS SELECT patient, age FROM ps_visits UNION ALL SELECT patient, age FROM ps_visits;
SELECT dp_count(*) FROM ps_union;
SELECT dp_count(*) FROM (SELECT patient, count(*) AS n FROM ps_visits GROUP BY patient) s;
SELECT dp_count(*) FROM (SELECT DISTINCT patient, dept FROM ps_visits) s;
SELECT dp_count(*) FROM (SELECT patient, rank() OVER (ORDER BY age) FROM ps_visits) s;
SELECT dp_count(*) FROM (SELECT * FROM ps_visits LIMIT 10) s;

-- a protected relation: a view owned by its owner, which the untrusted
-- role reads without a grant (the view's owner checks the relation); and
-- a sub-query with a grant (one row per unit: the limit of untrusted roles)
SET dp_agg.max_rows_contributed = 1;
SELECT dp_count(*) AS d_old FROM ps_visits WHERE age > 60 \gset
SELECT dp_agg.protect('ps_visits');
CREATE VIEW ps_offered AS SELECT dept, age FROM ps_visits WHERE age > 60;
ALTER VIEW ps_offered OWNER TO regress_ps_owner;
GRANT SELECT ON ps_offered TO regress_ps_analyst;
SET ROLE regress_ps_analyst;
SELECT dp_count(*) = :d_old AS offered_view FROM ps_offered;
SELECT ps_try($$SELECT dp_count(*) FROM (SELECT * FROM ps_visits) s$$) AS without_grant;
RESET ROLE;
SELECT dp_agg.grant_access('ps_visits', 'regress_ps_analyst');
SET ROLE regress_ps_analyst;
SELECT dp_count(*) = :d_old AS sub_query_with_grant FROM (SELECT dept FROM ps_visits WHERE age > 60) s;
-- the view may not filter with what the rules of rows refuse
RESET ROLE;
CREATE VIEW ps_leaky AS SELECT * FROM ps_visits WHERE factorial(age) > 0;
ALTER VIEW ps_leaky OWNER TO regress_ps_owner;
GRANT SELECT ON ps_leaky TO regress_ps_analyst;
SET ROLE regress_ps_analyst;
SELECT dp_count(*) FROM ps_leaky;
RESET ROLE;
SELECT dp_agg.unprotect('ps_visits');

RESET dp_agg.max_rows_contributed;
SELECT dp_agg.clear_privacy_unit('ps_visits');
DROP VIEW ps_renamed, ps_old, ps_no_unit, ps_old_of_renamed, ps_barrier, ps_wards, ps_union,
  ps_offered, ps_leaky;
DROP TABLE ps_visits, ps_depts;
DELETE FROM dp_agg.budget WHERE role::text LIKE 'regress_ps_%';
DELETE FROM dp_agg.ledger WHERE role::text LIKE 'regress_ps_%';
DROP ROLE regress_ps_owner, regress_ps_analyst;
DROP FUNCTION ps_try(text);
