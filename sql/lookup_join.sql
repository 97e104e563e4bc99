--
-- lookup_join: the relation DP aggregates read joined to lookup tables on a
-- key unique there (README, "Lookup joins").  At epsilon 1e9 a count's
-- noise is 0 except with probability below 1e-300 (discrete Laplace of
-- scale 1e-9), so releases are compared with the exact values; groups
-- are released by private selection at epsilon 1e9 and delta 1e-10, which
-- releases a group of 2 or more units (rows) with probability at least
-- 1 - 1e-15 and one of 1 with probability below 1.5e-10 (checked below).
--
\set VERBOSITY default
\set SHOW_CONTEXT never
CREATE FUNCTION lj_try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN EXECUTE q; RETURN 'no error';
EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE || ': ' || SQLERRM; END $$;
CREATE ROLE regress_lj_owner;
CREATE ROLE regress_lj_analyst;
SELECT dp_agg.set_budget('regress_lj_analyst', 1e12, 0.5);
SELECT dp_agg.set_budget(current_user::regrole, 1e15, 0.5);
CREATE SCHEMA lj;
GRANT USAGE ON SCHEMA lj TO PUBLIC;
-- 1,000 visits of 50 patients (20 each, all in dept (p - 1) % 10), 1,000
-- visits of patient 0 in every dept, 7 visits without a patient, 5
-- without a dept
CREATE TABLE lj.visits (id int PRIMARY KEY, patient int, dept_id int, age int);
INSERT INTO lj.visits SELECT k, 1 + k % 50, k % 10, 20 + k % 60 FROM generate_series(0, 999) k;
INSERT INTO lj.visits SELECT 1000 + k, 0, k % 10, 90 FROM generate_series(0, 999) k;
INSERT INTO lj.visits SELECT 2000 + k, NULL, 1, 30 FROM generate_series(0, 6) k;
INSERT INTO lj.visits SELECT 3000 + k, 1 + k, NULL, 40 FROM generate_series(0, 4) k;
-- the lookup tables: 10 departments in 3 regions
CREATE TABLE lj.departments (dept_id int PRIMARY KEY, name text UNIQUE NOT NULL,
                             region_id int, budget int);
INSERT INTO lj.departments SELECT k, 'dept ' || k, k % 3, 100 * k FROM generate_series(0, 9) k;
CREATE TABLE lj.regions (region_id int PRIMARY KEY, rname text);
INSERT INTO lj.regions VALUES (0, 'north'), (1, 'south'), (2, 'east');
ALTER TABLE lj.visits OWNER TO regress_lj_owner;
GRANT SELECT ON lj.departments, lj.regions TO regress_lj_analyst;
SET dp_agg.epsilon = 1e9;
SET dp_agg.selection_epsilon = 1e9;
SET dp_agg.selection_delta = 1e-10;
SELECT dp_agg.selection_probability(1e9, 1e-10, 1) < 1.5e-10 AS one_row,
       dp_agg.selection_probability(1e9, 1e-10, 2) > 1 - 1e-15 AS two_rows;

-- the exact counts per department, region and budget
CREATE TEMP TABLE lj_expected AS
SELECT d.name, r.rname, count(*) AS rows, count(DISTINCT v.patient) AS units,
       sum(d.budget) AS budget
FROM lj.visits v JOIN lj.departments d USING (dept_id) JOIN lj.regions r USING (region_id)
GROUP BY d.name, r.rname;

--
-- Rows as units
--
-- a lookup join of 10 departments gives the per-department counts
CREATE TEMP TABLE r AS
SELECT d.name, dp_count(*) AS c FROM lj.visits v JOIN lj.departments d USING (dept_id) GROUP BY d.name;
SELECT count(*) AS depts, bool_and(c = rows) AS exact FROM r JOIN lj_expected USING (name);
DROP TABLE r;
-- the same written with WHERE, or from the lookup table first
CREATE TEMP TABLE r AS
SELECT d.name, dp_count(*) AS c FROM lj.departments d, lj.visits v WHERE v.dept_id = d.dept_id GROUP BY d.name;
SELECT count(*) AS depts, bool_and(c = rows) AS exact FROM r JOIN lj_expected USING (name);
DROP TABLE r;

-- the unique index must be older than the statement's snapshot: one built
-- in the statement's own transaction proves nothing about rows that other
-- sessions removed after that snapshot (refused, SQLSTATE 40001); once
-- committed, a new transaction uses it
BEGIN;
CREATE TABLE lj.fresh (dept_id int PRIMARY KEY, tag text);
INSERT INTO lj.fresh SELECT k, 'f' FROM generate_series(0, 9) k;
SELECT lj_try('SELECT dp_count(*) FROM lj.visits v JOIN lj.fresh f USING (dept_id)');
ROLLBACK;
CREATE TABLE lj.fresh (dept_id int PRIMARY KEY, tag text);
INSERT INTO lj.fresh SELECT k, 'f' FROM generate_series(0, 9) k;
SELECT dp_count(*) = 2007 AS each_visit_once FROM lj.visits v JOIN lj.fresh f USING (dept_id);
DROP TABLE lj.fresh;
-- looked-up columns in WHERE, GROUP BY and the arguments of DP aggregates;
-- a chain of lookups (regions through departments)
CREATE TEMP TABLE r AS
SELECT r.rname, dp_count(*) AS c, dp_sum(d.budget, 0, 1000) AS s
FROM lj.visits v JOIN lj.departments d ON d.dept_id = v.dept_id
JOIN lj.regions r ON r.region_id = d.region_id
WHERE d.name <> 'dept 9' GROUP BY r.rname;
SELECT count(*) AS regions,
       bool_and((c, s) = (SELECT sum(rows), sum(budget) FROM lj_expected e
                          WHERE e.rname = r.rname AND e.name <> 'dept 9')) AS exact
FROM r;
DROP TABLE r;
-- LEFT JOIN: every visit once, NULL columns where nothing matches (depts
-- 5..9 plus 5 have no department: 1,000 visits, and those without one)
SELECT dp_count(*) AS all_visits,
       dp_count(*) FILTER (WHERE d.name IS NULL) AS unmatched
FROM lj.visits v LEFT JOIN lj.departments d ON d.dept_id = v.dept_id + 5;
-- a constant key, an expression of the input, a cross-type equality
SELECT dp_count(*) AS dept_3 FROM lj.visits v JOIN lj.departments d ON d.dept_id = 3 AND v.dept_id = 3;
SELECT dp_count(*) AS shifted FROM lj.visits v JOIN lj.departments d ON d.dept_id = (v.age - 20) % 10;
SELECT dp_count(*) AS cross_type FROM lj.visits v JOIN lj.departments d ON d.dept_id = v.dept_id::bigint;
-- the text key, under the column's collation or a deterministic one
SELECT dp_count(*) AS by_name FROM lj.visits v JOIN lj.departments d ON d.name = 'dept ' || v.dept_id;
SELECT dp_count(*) AS by_name_c FROM lj.visits v JOIN lj.departments d ON d.name = ('dept ' || v.dept_id) COLLATE "C";
-- a key of two columns
CREATE TABLE lj.pairs (a int, b int, label text, PRIMARY KEY (a, b));
INSERT INTO lj.pairs SELECT a, b, a || '/' || b FROM generate_series(0, 9) a, generate_series(0, 1) b;
SELECT dp_count(*) AS pair FROM lj.visits v JOIN lj.pairs p ON p.a = v.dept_id AND p.b = v.age % 2;
-- a partitioned lookup table (its primary key holds across partitions),
-- a partition of it, and a table with inheritance children read with ONLY
CREATE TABLE lj.pdepts (dept_id int PRIMARY KEY, name text) PARTITION BY RANGE (dept_id);
CREATE TABLE lj.pdepts_low PARTITION OF lj.pdepts FOR VALUES FROM (0) TO (5);
CREATE TABLE lj.pdepts_high PARTITION OF lj.pdepts FOR VALUES FROM (5) TO (100);
INSERT INTO lj.pdepts SELECT dept_id, name FROM lj.departments;
SELECT dp_count(*) AS partitioned FROM lj.visits v JOIN lj.pdepts p USING (dept_id);
SELECT dp_count(*) AS a_partition FROM lj.visits v JOIN lj.pdepts_high p USING (dept_id);
CREATE TABLE lj.idepts (dept_id int PRIMARY KEY, name text);
CREATE TABLE lj.idepts_child () INHERITS (lj.idepts);
INSERT INTO lj.idepts SELECT dept_id, name FROM lj.departments;
INSERT INTO lj.idepts_child SELECT dept_id, name FROM lj.departments;
SELECT dp_count(*) AS only_parent FROM lj.visits v JOIN ONLY lj.idepts i USING (dept_id);
-- a unique index without a constraint is a unique key too
CREATE TABLE lj.codes (dept_id int, code text);
CREATE UNIQUE INDEX ON lj.codes (dept_id);
INSERT INTO lj.codes SELECT k, 'c' || k FROM generate_series(0, 9) k;
SELECT dp_count(*) AS unique_index FROM lj.visits v JOIN lj.codes c USING (dept_id);
-- a view that joins a lookup table, and a sub-query of one
CREATE VIEW lj.named_visits AS
SELECT v.id, v.patient, v.age, d.name FROM lj.visits v JOIN lj.departments d USING (dept_id);
CREATE TEMP TABLE r AS SELECT name, dp_count(*) AS c FROM lj.named_visits GROUP BY name;
SELECT count(*) AS depts, bool_and(c = rows) AS exact FROM r JOIN lj_expected USING (name);
DROP TABLE r;
SELECT dp_count(*) AS sub_query FROM (SELECT v.age FROM lj.visits v JOIN lj.regions r ON r.region_id = v.dept_id) s;
-- hash, merge and nested-loop joins, and parallel plans
SET enable_hashjoin = off;
SELECT dp_count(*) AS merge_or_nested FROM lj.visits v JOIN lj.departments d USING (dept_id);
SET enable_mergejoin = off;
SELECT dp_count(*) AS nested FROM lj.visits v JOIN lj.departments d USING (dept_id);
SELECT dp_count(*) AS nested_left FROM lj.visits v LEFT JOIN lj.departments d USING (dept_id);
RESET enable_hashjoin;
RESET enable_mergejoin;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
CREATE TEMP TABLE r AS
SELECT d.name, dp_count(*) AS c FROM lj.visits v JOIN lj.departments d USING (dept_id) GROUP BY d.name;
SELECT count(*) AS depts_parallel, bool_and(c = rows) AS exact FROM r JOIN lj_expected USING (name);
DROP TABLE r;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
-- the ledger and preview: a lookup join prices as the relation alone
SELECT l.epsilon, d -> 'aggregate' AS aggregate, d -> 'sensitivity' AS sensitivity
FROM dp_agg.my_ledger l, jsonb_array_elements(l.detail) d
WHERE l.id = (SELECT max(id) FROM dp_agg.my_ledger) ORDER BY 2;
SELECT call, aggregate, sensitivity, noise_scale
FROM dp_agg.preview('SELECT d.name, dp_count(*), dp_sum(d.budget, 0, 1000) FROM lj.visits v JOIN lj.departments d USING (dept_id) GROUP BY d.name');

--
-- Privacy units: each unit's contribution bounded in the joined rows
--
SELECT dp_agg.set_privacy_unit('lj.visits', 'patient');
-- per department, the units: 5 patients each, and patient 0 in the one
-- department its random choice keeps (k = 1)
CREATE TEMP TABLE r AS
SELECT d.name, dp_count(*) AS c FROM lj.visits v JOIN lj.departments d USING (dept_id) GROUP BY d.name;
SELECT count(*) AS depts, sum(c) AS units, count(*) FILTER (WHERE c = 6) AS with_patient_0,
       bool_and(c IN (5, 6)) AS bounded
FROM r;
DROP TABLE r;
-- a unit of 1,000 rows in 10 departments moves each release by at most its
-- bound (5 rows, a sum of 5 rows of at most 1000), in at most one group
SET dp_agg.max_rows_contributed = 5;
CREATE TEMP TABLE lj_with AS
SELECT d.name, dp_count(*) AS c, dp_sum(d.budget, 0, 1000) AS s
FROM lj.visits v JOIN lj.departments d USING (dept_id) GROUP BY d.name;
CREATE TEMP TABLE lj_without AS
SELECT d.name, dp_count(*) AS c, dp_sum(d.budget, 0, 1000) AS s
FROM lj.visits v JOIN lj.departments d USING (dept_id) WHERE v.patient <> 0 GROUP BY d.name;
SELECT count(*) AS groups, max(abs(w.c - o.c)) AS count_moved,
       max(abs(w.s - o.s)) <= 5000 AS sum_within_bound,
       count(*) FILTER (WHERE w.c <> o.c OR w.s <> o.s) <= 1 AS at_most_one_group
FROM lj_with w JOIN lj_without o USING (name);
SELECT sum(o.c) = (SELECT sum(least(n, 5)) FROM (SELECT count(*) n FROM lj.visits
                   WHERE patient > 0 AND dept_id IS NOT NULL GROUP BY patient) s) AS bounded_rows
FROM lj_without o;
-- k = 2 (the window path) through a chain, and without GROUP BY
SET dp_agg.max_groups_contributed = 2;
SELECT dp_agg.set_privacy_unit('lj.visits', 'patient', 2);
CREATE TEMP TABLE r AS
SELECT r.rname, dp_count(*) AS c FROM lj.visits v JOIN lj.departments d USING (dept_id)
JOIN lj.regions r USING (region_id) GROUP BY r.rname;
SELECT count(*) AS regions, sum(c) - (SELECT sum(least(n, 5)) FROM (SELECT count(*) n FROM lj.visits
       WHERE patient > 0 AND dept_id IS NOT NULL GROUP BY patient) s) AS patient_0_moves
FROM r;
DROP TABLE r;
RESET dp_agg.max_groups_contributed;
SELECT dp_agg.set_privacy_unit('lj.visits', 'patient');
SELECT dp_count(*) AS units_left FROM lj.visits v LEFT JOIN lj.departments d USING (dept_id);
RESET dp_agg.max_rows_contributed;
-- in parallel plans too
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
CREATE TEMP TABLE r AS
SELECT d.name, dp_count(*) AS c FROM lj.visits v JOIN lj.departments d USING (dept_id) GROUP BY d.name;
SELECT count(*) AS depts_parallel, sum(c) AS units, bool_and(c IN (5, 6)) AS bounded FROM r;
DROP TABLE r;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

--
-- A protected relation, by an untrusted role with a grant
--
SELECT dp_agg.protect('lj.visits');
SELECT dp_agg.grant_access('lj.visits', 'regress_lj_analyst');
SET ROLE regress_lj_analyst;
SELECT count(*) AS ledger_before FROM dp_agg.my_ledger \gset
CREATE TEMP TABLE r AS
SELECT d.name, dp_count(*) AS c FROM lj.visits v JOIN lj.departments d USING (dept_id) GROUP BY d.name;
SELECT count(*) AS depts, sum(c) AS units, bool_and(c IN (5, 6)) AS bounded FROM r;
DROP TABLE r;
SELECT dp_count(*) AS units_region_south FROM lj.visits v JOIN lj.departments d USING (dept_id)
JOIN lj.regions r USING (region_id) WHERE r.rname = 'south';
-- refused before the charge, each saying what to write
-- a join that can duplicate rows (no unique key on the join columns)
SELECT dp_count(*) FROM lj.visits v JOIN lj.departments d ON d.region_id = v.dept_id;
-- a cast of the key column, an operator other than its equality, OR
SELECT dp_count(*) FROM lj.visits v JOIN lj.departments d ON d.dept_id::float8 = v.dept_id / 2.0;
SELECT dp_count(*) FROM lj.visits v JOIN lj.departments d ON d.dept_id >= v.dept_id;
SELECT dp_count(*) FROM lj.visits v JOIN lj.departments d ON d.dept_id = v.dept_id OR d.dept_id = v.age;
SELECT dp_count(*) FROM lj.visits v JOIN lj.departments d ON d.dept_id IS NOT DISTINCT FROM v.dept_id;
-- a key compared with a volatile expression
SELECT dp_count(*) FROM lj.visits v JOIN lj.departments d ON d.dept_id = (random() * 10)::int;
-- FULL JOIN, the input on the nullable side, a join of two tables read
SELECT dp_count(*) FROM lj.visits v FULL JOIN lj.departments d USING (dept_id);
SELECT dp_count(*) FROM lj.departments d LEFT JOIN lj.visits v USING (dept_id);
SELECT dp_count(*) FROM lj.visits v JOIN lj.visits w ON w.id = v.id + 1;
SELECT dp_count(*) FROM lj.visits v JOIN (SELECT * FROM lj.departments) d USING (dept_id);
-- lookup tables that are not tables with a unique key: an inheritance
-- parent with its children, a table without unique key, a deferrable key,
-- a sampled one
RESET ROLE;
CREATE TABLE lj.nokey (dept_id int, name text);
CREATE TABLE lj.deferred (dept_id int UNIQUE DEFERRABLE, name text);
GRANT SELECT ON lj.nokey, lj.deferred, lj.idepts TO regress_lj_analyst;
SET ROLE regress_lj_analyst;
SELECT dp_count(*) FROM lj.visits v JOIN lj.idepts i USING (dept_id);
SELECT dp_count(*) FROM lj.visits v JOIN lj.nokey n USING (dept_id);
SELECT dp_count(*) FROM lj.visits v JOIN lj.deferred n USING (dept_id);
SELECT dp_count(*) FROM lj.visits v JOIN lj.departments d TABLESAMPLE BERNOULLI (50) USING (dept_id);
-- INSERT ... SELECT of a lookup join, charged as the statement
CREATE TEMP TABLE lj_out (name text, c bigint);
INSERT INTO lj_out SELECT d.name, dp_count(*) FROM lj.visits v JOIN lj.departments d USING (dept_id) GROUP BY d.name;
SELECT count(*) AS inserted FROM lj_out;
-- none of the refused statements was charged; the 3 accepted ones were
SELECT count(*) - :ledger_before AS charged FROM dp_agg.my_ledger;
-- the conditions of a join are on the row path: no row makes them fail,
-- whether the join hashes, merges, or looks the key up in the index (a
-- runtime key); a row of age 999 in dept 1 would divide by zero.  The
-- same statements, without and with that row, give the same outcome.
SELECT dp_count(*) IS NOT NULL AS joinqual FROM lj.visits v
JOIN lj.departments d ON d.dept_id = v.dept_id AND 1 / (v.age - 1000 + d.dept_id) > 0;
SELECT dp_count(*) IS NOT NULL AS key_expr FROM lj.visits v
JOIN lj.departments d ON d.dept_id = 100 / (v.age - 999);
RESET ROLE;
INSERT INTO lj.visits VALUES (5000, 100, 1, 999);
SET ROLE regress_lj_analyst;
SELECT dp_count(*) IS NOT NULL AS joinqual FROM lj.visits v
JOIN lj.departments d ON d.dept_id = v.dept_id AND 1 / (v.age - 1000 + d.dept_id) > 0;
SELECT dp_count(*) IS NOT NULL AS key_expr FROM lj.visits v
JOIN lj.departments d ON d.dept_id = 100 / (v.age - 999);
SET enable_hashjoin = off;
SELECT dp_count(*) IS NOT NULL AS merge_joinqual FROM lj.visits v
JOIN lj.departments d ON d.dept_id = v.dept_id AND 1 / (v.age - 1000 + d.dept_id) > 0;
SELECT dp_count(*) IS NOT NULL AS merge_key_expr FROM lj.visits v
JOIN lj.departments d ON d.dept_id = 100 / (v.age - 999);
SET enable_mergejoin = off;
SELECT dp_count(*) IS NOT NULL AS nested_joinqual FROM lj.visits v
JOIN lj.departments d ON d.dept_id = v.dept_id AND 1 / (v.age - 1000 + d.dept_id) > 0;
SELECT dp_count(*) IS NOT NULL AS nested_key_expr FROM lj.visits v
JOIN lj.departments d ON d.dept_id = 100 / (v.age - 999);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT dp_count(*) IS NOT NULL AS index_key_expr FROM lj.visits v
JOIN lj.departments d ON d.dept_id = 100 / (v.age - 999);
SET enable_indexscan = off;
SET enable_bitmapscan = on;
SELECT dp_count(*) IS NOT NULL AS bitmap_key_expr FROM lj.visits v
JOIN lj.departments d ON d.dept_id = 100 / (v.age - 999);
RESET enable_seqscan;
RESET enable_indexscan;
RESET enable_bitmapscan;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET ROLE;
DELETE FROM lj.visits WHERE id = 5000;
SET ROLE regress_lj_analyst;
DROP TABLE lj_out;
RESET ROLE;
-- a protected relation or one with a privacy unit is never a lookup table
CREATE TABLE lj.secret (dept_id int PRIMARY KEY, label text);
ALTER TABLE lj.secret OWNER TO regress_lj_owner;
SELECT dp_agg.protect('lj.secret');
SELECT lj_try($$SELECT dp_count(*) FROM lj.departments d JOIN lj.secret s USING (dept_id)$$);
SELECT lj_try($$SELECT dp_count(*) FROM lj.visits v JOIN lj.secret s USING (dept_id)$$);
SELECT dp_agg.unprotect('lj.secret');
SELECT dp_agg.set_privacy_unit('lj.secret', 'label');
SELECT lj_try($$SELECT dp_count(*) FROM lj.visits v JOIN lj.secret s USING (dept_id)$$);
SELECT lj_try($$SELECT dp_count(*) FROM lj.departments d JOIN lj.secret s USING (dept_id)$$);

-- a row-level security policy of a lookup table filters what it matches;
-- its expression is held to the rules of rows
CREATE TABLE lj.mydepts (dept_id int PRIMARY KEY, name text);
INSERT INTO lj.mydepts SELECT dept_id, name FROM lj.departments;
ALTER TABLE lj.mydepts ENABLE ROW LEVEL SECURITY;
CREATE POLICY low ON lj.mydepts USING (dept_id < 3);
GRANT SELECT ON lj.mydepts TO regress_lj_analyst;
SET ROLE regress_lj_analyst;
SELECT dp_count(*) AS units_in_visible_depts FROM lj.visits v JOIN lj.mydepts m USING (dept_id);
RESET ROLE;

-- enable_partitionwise_join with both sides partitioned the same way
CREATE TABLE lj.pvisits (id int, patient int, dept_id int) PARTITION BY RANGE (dept_id);
CREATE TABLE lj.pvisits_low PARTITION OF lj.pvisits FOR VALUES FROM (0) TO (5);
CREATE TABLE lj.pvisits_high PARTITION OF lj.pvisits FOR VALUES FROM (5) TO (100);
INSERT INTO lj.pvisits SELECT id, patient, dept_id FROM lj.visits WHERE dept_id IS NOT NULL;
SET enable_partitionwise_join = on;
SELECT dp_count(*) AS partitionwise_join FROM lj.pvisits v JOIN lj.pdepts p USING (dept_id);
RESET enable_partitionwise_join;

SELECT dp_agg.unprotect('lj.visits');
SELECT dp_agg.clear_privacy_unit('lj.visits');
SELECT dp_agg.clear_privacy_unit('lj.secret');
RESET dp_agg.selection_epsilon;
RESET dp_agg.selection_delta;
DROP SCHEMA lj CASCADE;
DROP TABLE lj_expected, lj_with, lj_without;
DELETE FROM dp_agg.budget WHERE role::text LIKE 'regress_lj_%';
DELETE FROM dp_agg.ledger WHERE role::text LIKE 'regress_lj_%';
DROP ROLE regress_lj_owner, regress_lj_analyst;
DROP FUNCTION lj_try(text);
