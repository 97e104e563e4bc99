--
-- protect_shapes: everyday statement shapes over a protected relation, by
-- an untrusted role (README, "Protected tables"): DISTINCT inside DP
-- aggregates, its comparisons held to the rules of rows, and INSERT ...
-- SELECT of a DP statement into a table the role may write, charged as
-- the statement is.  (Lookup joins: lookup_join; views and sub-queries
-- with privacy units: privacy_unit_source; samples of units: unit_sample.)
-- At epsilon 1e9 integer releases are exact.
--
\set VERBOSITY default
\set SHOW_CONTEXT never
CREATE ROLE regress_sh_owner;
CREATE ROLE regress_sh_analyst;
SELECT dp_agg.set_budget('regress_sh_analyst', 1e12, 0.5);
CREATE SCHEMA sh;
GRANT USAGE ON SCHEMA sh TO PUBLIC;
CREATE TABLE sh.visits (id int, patient int, dept int, age int, name text, amount numeric,
                        code text COLLATE "C");
INSERT INTO sh.visits SELECT k, k % 50, k % 7, 20 + k % 60, 'n' || (k % 13), k % 11, 'c' || (k % 3)
FROM generate_series(1, 1000) k;
ALTER TABLE sh.visits OWNER TO regress_sh_owner;
SELECT dp_agg.protect('sh.visits');
SELECT dp_agg.grant_access('sh.visits', 'regress_sh_analyst');
CREATE TABLE sh.results (c bigint, s bigint);
GRANT ALL ON sh.results TO regress_sh_analyst;
SET dp_agg.epsilon = 1e9;
SET ROLE regress_sh_analyst;
SELECT count(*) AS ledger_before FROM dp_agg.my_ledger \gset

-- DISTINCT inside DP aggregates: the distinct values of integers, texts
SELECT dp_count(DISTINCT dept) AS depts, dp_count(DISTINCT name) AS names,
       dp_count(DISTINCT code) AS codes, dp_sum(DISTINCT age, 0, 100) AS distinct_ages
FROM sh.visits;
SELECT dp_count(DISTINCT dept) FILTER (WHERE age > 70) AS depts_over_70 FROM sh.visits;
-- in a parallel plan, where the aggregation with DISTINCT reads the rows
-- that the workers scan (a worker runs a part of the plan its leader
-- accepted)
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
SELECT dp_count(DISTINCT dept) AS depts_parallel FROM sh.visits;
RESET parallel_leader_participation;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
-- the comparison of numeric is not LEAKPROOF, but it never fails (NaN and
-- the infinities are ordered values): among the everyday built-ins
SELECT dp_count(DISTINCT amount) FROM sh.visits;
-- ORDER BY inside a DP aggregate stays refused
SELECT dp_count(age ORDER BY age) FROM sh.visits;

-- INSERT ... SELECT of a DP statement, charged once each
INSERT INTO sh.results SELECT dp_count(*), dp_sum(age, 0, 100) FROM sh.visits;
INSERT INTO sh.results SELECT dp_count(DISTINCT patient), NULL FROM sh.visits WHERE age > 50;
SELECT c, s FROM sh.results ORDER BY c;
-- not into the protected relation, nor a relation routing rows into a
-- protected partition; not without DP aggregates
INSERT INTO sh.visits SELECT 0, dp_count(*), 0, 0, '', 0, '' FROM sh.visits;
RESET ROLE;
CREATE TABLE sh.routed (k int, c bigint) PARTITION BY RANGE (k);
CREATE TABLE sh.routed_pub PARTITION OF sh.routed FOR VALUES FROM (0) TO (10);
CREATE TABLE sh.routed_sec PARTITION OF sh.routed FOR VALUES FROM (10) TO (20);
ALTER TABLE sh.routed_sec OWNER TO regress_sh_owner;
GRANT ALL ON sh.routed, sh.routed_pub TO regress_sh_analyst;
SELECT dp_agg.protect('sh.routed_sec');
SET ROLE regress_sh_analyst;
INSERT INTO sh.routed SELECT 1, dp_count(*) FROM sh.visits;
INSERT INTO sh.routed_pub SELECT 1, dp_count(*) FROM sh.visits;
INSERT INTO sh.results SELECT id, age FROM sh.visits;
-- nor a plain INSERT or COPY FROM into the parent, which would route rows
-- into the protected partition (a unique violation there would tell
-- whether a key exists); into the public partition they work
INSERT INTO sh.routed VALUES (1, 1);
INSERT INTO sh.routed VALUES (15, 1);
COPY sh.routed FROM STDIN;
2	2
\.
INSERT INTO sh.routed_pub VALUES (3, 3);
COPY sh.routed_pub FROM STDIN;
4	4
\.
SELECT k, c FROM sh.routed_pub WHERE k BETWEEN 3 AND 4 ORDER BY k;
-- a trigger of the target runs as the role, after the releases: it may
-- not read the rows the statement reads
RESET ROLE;
CREATE FUNCTION sh.peek() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM count(*) FROM sh.visits; RETURN NEW; END $$;
CREATE TABLE sh.watched (c bigint);
CREATE TRIGGER peek BEFORE INSERT ON sh.watched FOR EACH ROW EXECUTE FUNCTION sh.peek();
GRANT ALL ON sh.watched TO regress_sh_analyst;
SET ROLE regress_sh_analyst;
INSERT INTO sh.watched SELECT dp_count(*) FROM sh.visits;
-- the accepted statements were charged: 4 with DISTINCT, 2 INSERT, the one
-- into the public partition, and the watched one (charged before its
-- trigger failed)
SELECT count(*) - :ledger_before AS charged FROM dp_agg.my_ledger;
RESET ROLE;

SELECT dp_agg.unprotect('sh.visits');
SELECT dp_agg.unprotect('sh.routed_sec');
DROP SCHEMA sh CASCADE;
DELETE FROM dp_agg.budget WHERE role::text LIKE 'regress_sh_%';
DELETE FROM dp_agg.ledger WHERE role::text LIKE 'regress_sh_%';
DROP ROLE regress_sh_owner, regress_sh_analyst;
