--
-- partitionwise: DP statements over partitioned tables with
-- enable_partitionwise_aggregate = on (README, "What the guard accepts").
-- They are planned without partitionwise aggregation: the partitions are
-- read through one Append below one aggregation, so the releases are
-- those of the setting off (exact at epsilon 1e9), priced once.
--
\set VERBOSITY default
SELECT dp_agg.set_budget(current_user::regrole, 1e15, 0.5);
CREATE ROLE regress_pw_owner;
CREATE ROLE regress_pw_analyst;
SELECT dp_agg.set_budget('regress_pw_analyst', 1e12, 0.5);
CREATE TABLE pw (k int, g int, u int, x int, h int) PARTITION BY RANGE (k);
CREATE TABLE pw_1 PARTITION OF pw FOR VALUES FROM (0) TO (400);
CREATE TABLE pw_2 PARTITION OF pw FOR VALUES FROM (400) TO (700);
CREATE TABLE pw_3 PARTITION OF pw FOR VALUES FROM (700) TO (1000);
INSERT INTO pw SELECT k, k % 5, k % 40, k % 10, k % 3 FROM generate_series(0, 999) k;
ALTER TABLE pw OWNER TO regress_pw_owner;
ANALYZE pw;
SET dp_agg.epsilon = 1e9;
SET dp_agg.group_keys = 'public';
SET enable_partitionwise_aggregate = on;
-- aggregation nodes of a plan
CREATE FUNCTION pw_aggs(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE j text;
BEGIN
    EXECUTE 'EXPLAIN (COSTS OFF, FORMAT JSON) ' || q INTO j;
    RETURN (SELECT count(*) FROM regexp_matches(j, '"Node Type": "Aggregate"', 'g'));
END $$;
-- the setting still holds for other statements: a native aggregate is
-- aggregated per partition (grouped by the partition key)
SELECT pw_aggs('SELECT k, count(*) FROM pw GROUP BY k') AS native_aggregations;
-- without GROUP BY, by a column, by the partition key
SELECT dp_count(*), dp_sum(x, 0, 9) FROM pw;
CREATE TEMP TABLE r AS SELECT g, dp_count(*) AS c, dp_sum(x, 0, 9) AS s FROM pw GROUP BY g;
SELECT count(*) AS groups, bool_and(c = 200) AS counts, sum(s) AS total FROM r;
DROP TABLE r;
CREATE TEMP TABLE r AS SELECT k, dp_count(*) AS c FROM pw GROUP BY k;
SELECT count(*) AS groups, bool_and(c = 1) AS counts FROM r;
DROP TABLE r;
-- one charge each, of the epsilon asked (not one per partition)
SELECT epsilon, jsonb_array_length(detail) AS calls FROM dp_agg.my_ledger ORDER BY id DESC LIMIT 1;
-- the plan: one aggregation over the Append
SELECT pw_aggs('SELECT k, dp_count(*) FROM pw GROUP BY k') AS dp_aggregations;
-- parallel plans too
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT dp_count(*) AS parallel_count FROM pw;
CREATE TEMP TABLE r AS SELECT g, dp_count(*) AS c FROM pw GROUP BY g;
SELECT count(*) AS groups, bool_and(c = 200) AS parallel_counts FROM r;
DROP TABLE r;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
-- with a privacy unit (the window path, the fused path, a partition
-- named): each of the 40 units is in the 3 groups of h
SELECT dp_agg.set_privacy_unit('pw', 'u', 2);
SELECT dp_count(*) AS units FROM pw;
CREATE TEMP TABLE r AS SELECT h, dp_count(*) AS c FROM pw GROUP BY h;
SELECT count(*) AS groups, sum(c) AS two_groups_per_unit FROM r;
DROP TABLE r;
SET dp_agg.max_groups_contributed = 1;
CREATE TEMP TABLE r AS SELECT h, dp_count(*) AS c FROM pw GROUP BY h;
SELECT count(*) AS groups, sum(c) AS one_group_per_unit FROM r;
DROP TABLE r;
RESET dp_agg.max_groups_contributed;
SELECT dp_count(*) AS units_of_a_partition FROM pw_2;
-- a protected partitioned table, by an untrusted role with a grant
SELECT dp_agg.protect('pw');
SELECT dp_agg.grant_access('pw', 'regress_pw_analyst');
SET ROLE regress_pw_analyst;
SET dp_agg.selection_epsilon = 1e9;
SET dp_agg.selection_delta = 1e-10;
SET dp_agg.group_keys = 'private';
SELECT dp_count(*) AS units FROM pw;
CREATE TEMP TABLE r AS SELECT h, dp_count(*) AS c FROM pw GROUP BY h;
SELECT count(*) AS groups, sum(c) AS two_groups_per_unit FROM r;
DROP TABLE r;
-- the setting is as the role left it
SHOW enable_partitionwise_aggregate;
RESET ROLE;
SELECT dp_agg.unprotect('pw');
SELECT dp_agg.clear_privacy_unit('pw');
-- an error while planning restores the setting too
SELECT dp_count(*) FROM pw WHERE x = 1 / 0;
SHOW enable_partitionwise_aggregate;
RESET enable_partitionwise_aggregate;
RESET dp_agg.group_keys;
RESET dp_agg.selection_epsilon;
RESET dp_agg.selection_delta;
DROP TABLE pw;
DELETE FROM dp_agg.budget WHERE role::text LIKE 'regress_pw_%';
DELETE FROM dp_agg.ledger WHERE role::text LIKE 'regress_pw_%';
DROP ROLE regress_pw_owner, regress_pw_analyst;
DROP FUNCTION pw_aggs(text);
