--
-- privacy_unit_tree: a privacy unit set on a partitioned table or an
-- inheritance parent applies to every relation below it, named directly
-- (ONLY or not) at any depth (README, "Privacy units"), on every path of
-- the rewrite (no GROUP BY; k = 1 fused; k = 2 window; parallel plans);
-- two different units meeting are refused.  At epsilon 1e9 a count's
-- noise is 0 except with probability below 1e-300 (discrete Laplace of
-- scale k R / 1e9), so each release is the unit-bounded value itself and
-- is compared with it, computed directly; counting rows instead would
-- give 4 to 100 times more.
--
CREATE FUNCTION pt_try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN EXECUTE q; RETURN 'no error';
EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE || ': ' || SQLERRM; END $$;
SELECT dp_agg.set_budget(current_user::regrole, 1e15, 0.5, 'basic');
SET dp_agg.epsilon = 1e9;

-- three levels: pt (range of g) > pt_a (range of h) > pt_a1, pt_a2, and
-- pt_b.  Unit u (1..60) has one row in each (g, h) with (u + g + h) % 3
-- <> 0, so each unit has rows in every partition and in 2 or more groups
-- g of each; and 5 rows have no unit.
CREATE TABLE pt (u int, g int, h int, x int) PARTITION BY RANGE (g);
CREATE TABLE pt_a PARTITION OF pt FOR VALUES FROM (0) TO (5) PARTITION BY RANGE (h);
CREATE TABLE pt_a1 PARTITION OF pt_a FOR VALUES FROM (0) TO (5);
CREATE TABLE pt_a2 PARTITION OF pt_a FOR VALUES FROM (5) TO (10);
CREATE TABLE pt_b PARTITION OF pt FOR VALUES FROM (5) TO (10);
INSERT INTO pt SELECT u, g, h, 1 FROM generate_series(1, 60) u, generate_series(0, 9) g,
       generate_series(0, 9) h WHERE (u + g + h) % 3 <> 0;
INSERT INTO pt SELECT NULL, g, g, 1 FROM generate_series(0, 8, 2) g;
SELECT dp_agg.set_privacy_unit('pt', 'u');

-- each level named directly: one count per unit, rows without a unit left
-- out; a unit's total of x clamped to 7
CREATE TEMP TABLE pt_expected AS
SELECT r, (SELECT count(DISTINCT u) FROM pt WHERE tableoid = ANY (rels)) AS units,
       (SELECT count(*) FROM pt WHERE tableoid = ANY (rels)) AS rows_,
       (SELECT sum(least(n, 7)) FROM (SELECT count(*) n FROM pt WHERE tableoid = ANY (rels)
        AND u IS NOT NULL GROUP BY u) s) AS clamped
FROM (VALUES ('pt', ARRAY['pt_a1', 'pt_a2', 'pt_b']::regclass[]),
             ('pt_a', ARRAY['pt_a1', 'pt_a2']::regclass[]),
             ('pt_a1', ARRAY['pt_a1']::regclass[]), ('pt_a2', ARRAY['pt_a2']::regclass[]),
             ('pt_b', ARRAY['pt_b']::regclass[])) v(r, rels);
SELECT r, units, rows_ FROM pt_expected ORDER BY r;
CREATE FUNCTION pt_released(rel text, only_ boolean) RETURNS TABLE (c bigint, s bigint)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format('SELECT dp_count(*), dp_sum(x, 0, 7) FROM %s %I',
                                CASE WHEN only_ THEN 'ONLY' ELSE '' END, rel);
END $$;
SELECT e.r, (p.c, p.s) = (e.units, e.clamped) AS unit_bounded
FROM pt_expected e, pt_released(e.r, false) p ORDER BY e.r;
-- ONLY a leaf: the same, and the ledger records the unit's bound
SELECT (p.c, p.s) = (e.units, e.clamped) AS only_leaf
FROM pt_expected e, pt_released('pt_a1', true) p WHERE e.r = 'pt_a1';
SELECT d -> 'aggregate' AS aggregate, d -> 'sensitivity' AS sensitivity, d -> 'privacy_unit' AS privacy_unit
FROM dp_agg.my_ledger l, jsonb_array_elements(l.detail) d
WHERE l.id = (SELECT max(id) FROM dp_agg.my_ledger);
-- ONLY a partitioned table reads no table: refused as without a unit
SELECT pt_try($$SELECT dp_count(*) FROM ONLY pt_a$$);

-- GROUP BY with public keys (every group a kept unit is in appears):
-- with k = 1 (the fused path) each unit is counted in exactly one group,
-- with k = 2 (the window path) in exactly two; the plans show each path
SET dp_agg.group_keys = 'public';
CREATE FUNCTION pt_plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        IF l ~ 'Aggregate|WindowAgg|Scan|Append|Gather' THEN
            RETURN NEXT regexp_replace(l, '\s+\(.*$|Group Key.*$|Sort Key.*$', '');
        END IF;
    END LOOP;
END $$;
SELECT pt_plan($$SELECT g, dp_count(*) FROM pt_a1 GROUP BY g$$);
CREATE FUNCTION pt_group_sums(k int) RETURNS TABLE (r text, groups bigint, total numeric)
LANGUAGE plpgsql AS $$
DECLARE rel text;
BEGIN
    PERFORM set_config('dp_agg.max_groups_contributed', k::text, true);
    FOREACH rel IN ARRAY ARRAY['pt', 'pt_a', 'pt_a1', 'pt_a2', 'pt_b'] LOOP
        RETURN QUERY EXECUTE format(
            'SELECT %L::text, count(*), sum(c) FROM (SELECT g, dp_count(*) c FROM %I GROUP BY g) s', rel, rel);
    END LOOP;
END $$;
SELECT s.r, s.total = e.units AS one_group_per_unit
FROM pt_group_sums(1) s JOIN pt_expected e USING (r) ORDER BY s.r;
SELECT pt_plan($$SELECT g, dp_count(*) FROM pt_a1 GROUP BY g$$) FROM (SELECT set_config('dp_agg.max_groups_contributed', '2', false)) k;
SELECT s.r, s.total = 2 * e.units AS two_groups_per_unit
FROM pt_group_sums(2) s JOIN pt_expected e USING (r) ORDER BY s.r;
RESET dp_agg.max_groups_contributed;
-- the same in parallel plans (a parallel append of the partitions, or a
-- parallel scan of one), the workers computing level 1
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
SELECT pt_plan($$SELECT g, dp_count(*) FROM pt_a GROUP BY g$$);
SELECT s.r, s.total = e.units AS parallel_one_group_per_unit
FROM pt_group_sums(1) s JOIN pt_expected e USING (r) ORDER BY s.r;
SELECT s.r, s.total = 2 * e.units AS parallel_two_groups_per_unit
FROM pt_group_sums(2) s JOIN pt_expected e USING (r) ORDER BY s.r;
SELECT e.r, (p.c, p.s) = (e.units, e.clamped) AS parallel_unit_bounded
FROM pt_expected e, pt_released(e.r, false) p ORDER BY e.r;
RESET parallel_leader_participation;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET dp_agg.group_keys;

-- a view or sub-query over a partition finds the unit like one over the
-- parent: the same releases as read directly
CREATE VIEW pt_view AS SELECT * FROM pt_a1;
SELECT dp_count(*) AS direct_a1 FROM pt_a1 \gset
SELECT dp_count(*) AS direct_b FROM pt_b \gset
SELECT dp_count(*) = :direct_a1 AS through_view FROM pt_view;
SELECT dp_count(*) = :direct_b AS through_sub_query FROM (SELECT * FROM pt_b) s;

-- the same unit set again below: the smallest max_groups_contributed
-- applies (the ledger's), on the relation and what it holds
SELECT dp_agg.set_privacy_unit('pt', 'u', 3);
SELECT dp_agg.set_privacy_unit('pt_a', 'u', 2);
SET dp_agg.group_keys = 'public';
SELECT count(c) > 0 AS released FROM (SELECT g, dp_count(*) c FROM pt_a1 GROUP BY g) s;
SELECT d -> 'privacy_unit' AS privacy_unit FROM dp_agg.my_ledger l, jsonb_array_elements(l.detail) d
WHERE l.id = (SELECT max(id) FROM dp_agg.my_ledger);
SELECT count(c) > 0 AS released FROM (SELECT g, dp_count(*) c FROM pt_b GROUP BY g) s;
SELECT d -> 'privacy_unit' AS privacy_unit FROM dp_agg.my_ledger l, jsonb_array_elements(l.detail) d
WHERE l.id = (SELECT max(id) FROM dp_agg.my_ledger);
RESET dp_agg.group_keys;
-- two different units meeting: a partition with a unit of its own, read
-- directly or through its parent, is refused, the others are not
ALTER TABLE pt ADD COLUMN v int;
SELECT dp_agg.set_privacy_unit('pt_a2', 'v');
SELECT pt_try($$SELECT dp_count(*) FROM pt_a2$$);
SELECT pt_try($$SELECT dp_count(*) FROM pt$$);
SELECT pt_try($$SELECT dp_count(*) FROM pt_a$$);
SELECT c = e.units AS sibling_unaffected FROM pt_released('pt_a1', false), pt_expected e WHERE e.r = 'pt_a1';
-- rows with a unit and rows without one: a unit on a partition only
SELECT dp_agg.clear_privacy_unit('pt_a2');
SELECT dp_agg.clear_privacy_unit('pt');
SELECT dp_agg.clear_privacy_unit('pt_a');
SELECT dp_agg.set_privacy_unit('pt_b', 'u');
SELECT pt_try($$SELECT dp_count(*) FROM pt$$);
SELECT c = e.units AS own_unit FROM pt_released('pt_b', false), pt_expected e WHERE e.r = 'pt_b';
SELECT c = e.rows_ AS rows_are_units FROM pt_released('pt_a', false), pt_expected e WHERE e.r = 'pt_a';
SELECT dp_agg.clear_privacy_unit('pt_b');

-- plain inheritance: ip > ic1 (with a column of its own) > ic2, the unit
-- on ip; 10 units with 5 rows in each table
CREATE TABLE ip (u int, x int);
CREATE TABLE ic1 (y int) INHERITS (ip);
CREATE TABLE ic2 () INHERITS (ic1);
INSERT INTO ip SELECT u, 1 FROM generate_series(1, 10) u, generate_series(1, 5) r;
INSERT INTO ic1 SELECT u + 5, 1, 0 FROM generate_series(1, 10) u, generate_series(1, 5) r;
INSERT INTO ic2 SELECT u + 10, 1, 0 FROM generate_series(1, 10) u, generate_series(1, 5) r;
SELECT dp_agg.set_privacy_unit('ip', 'u');
SELECT r, only_, c AS released,
       c = (SELECT count(DISTINCT u) FROM ip WHERE tableoid = ANY (rels)) AS unit_bounded
FROM (VALUES ('ip', false, ARRAY['ip', 'ic1', 'ic2']::regclass[]), ('ip', true, ARRAY['ip']::regclass[]),
             ('ic1', false, ARRAY['ic1', 'ic2']::regclass[]), ('ic1', true, ARRAY['ic1']::regclass[]),
             ('ic2', false, ARRAY['ic2']::regclass[])) v(r, only_, rels),
     pt_released(r, only_) ORDER BY r, only_;
-- a second parent with another unit: its child has two units
CREATE TABLE ip2 (w int);
CREATE TABLE imulti () INHERITS (ip, ip2);
SELECT dp_agg.set_privacy_unit('ip2', 'w');
SELECT pt_try($$SELECT dp_count(*) FROM imulti$$);
SELECT pt_try($$SELECT dp_count(*) FROM ip$$);
SELECT c AS only_parent FROM pt_released('ip', true);
-- children of two trees brought together by UNION ALL: refused by the
-- guard (set operations), whatever their units
SELECT pt_try($$SELECT dp_count(*) FROM (SELECT u FROM ic2 UNION ALL SELECT w FROM ip2) s$$);
-- the unit follows the parent's column through a rename, in the children too
DROP TABLE imulti, ip2;
ALTER TABLE ip RENAME COLUMN u TO person;
SELECT unit_column FROM dp_agg.privacy_unit WHERE relation = 'ip'::regclass;
SELECT c = 10 AS renamed_unit FROM pt_released('ic2', false);

DROP TABLE ic2, ic1, ip;
DROP VIEW pt_view;
DROP TABLE pt;
SELECT count(*) AS units_left FROM dp_agg.privacy_unit;
DROP FUNCTION pt_try(text), pt_released(text, boolean), pt_plan(text), pt_group_sums(int);
RESET dp_agg.epsilon;
