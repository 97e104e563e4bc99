--
-- privacy_unit_group: the shapes of GROUP BY a privacy unit rewrite
-- handles (README, "Privacy units"), with the same results on every
-- supported PostgreSQL: on 18 the grouped expressions of the target list
-- and HAVING are Vars of the GROUP range table entry, which the rewrite
-- replaces by the expressions first.
--
-- 40 units, each with 4 rows in every dept 0..4; max_rows_contributed 3,
-- so every (unit, dept) contributes 3 rows, and k = 10 >= 5 groups per
-- unit, so every unit keeps all its groups (no random choice).  At
-- epsilon 1e9 a count's noise is 0 except with probability below 1e-300
-- (discrete Laplace of scale k R / epsilon = 3e-8), and a group of 40 units is selected
-- with probability above 1 - 1e-15 (checked below): the releases are the
-- bounded values themselves and are compared with them.
--
CREATE FUNCTION pg_try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN EXECUTE q; RETURN 'no error';
EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE || ': ' || SQLERRM; END $$;
SELECT dp_agg.set_budget(current_user::regrole, 1e15, 0.5, 'basic');
CREATE TABLE pg_visits (patient int, dept int, age int, name text);
INSERT INTO pg_visits SELECT k % 40, (k / 40) % 5, 20 + k % 30,
       CASE WHEN k % 2 = 0 THEN 'A' ELSE 'a' END
FROM generate_series(0, 799) k;
SELECT dp_agg.set_privacy_unit('pg_visits', 'patient', 10);
SET dp_agg.epsilon = 1e9;
SET dp_agg.selection_epsilon = 1e9;
SET dp_agg.selection_delta = 1e-10;
SET dp_agg.max_rows_contributed = 3;
SELECT dp_agg.selection_probability(1e9, 1e-10, 40, 10) > 1 - 1e-15 AS selected;

-- the bounded count of each dept, and of each (dept, age parity), directly
CREATE TEMP TABLE pg_expected AS
SELECT dept, sum(least(n, 3)) AS e FROM (SELECT patient, dept, count(*) n
  FROM pg_visits GROUP BY patient, dept) s GROUP BY dept;
CREATE TEMP TABLE pg_expected2 AS
SELECT dept, p, sum(least(n, 3)) AS e FROM (SELECT patient, dept, age % 2 p, count(*) n
  FROM pg_visits GROUP BY patient, dept, age % 2) s GROUP BY dept, p;
SELECT array_agg(e ORDER BY dept) AS expected FROM pg_expected;

-- (the guard refuses joins with a DP sub-query: each release is stored,
-- then compared)
-- an expression of the grouped column in the target list
CREATE TEMP TABLE r AS SELECT dept + 1 AS d1, dp_count(*) c FROM pg_visits GROUP BY dept;
SELECT count(*) AS groups, bool_and(c = e) AS exact FROM r JOIN pg_expected ON d1 - 1 = dept;
DROP TABLE r;
-- the key not in the target list
CREATE TEMP TABLE r AS SELECT dp_count(*) c FROM pg_visits GROUP BY dept;
SELECT count(*) AS groups, bool_and(c = 120) AS exact, (SELECT bool_and(e = 120) FROM pg_expected) AS all_120
FROM r;
DROP TABLE r;
-- HAVING on the key, and on the key with a DP aggregate
CREATE TEMP TABLE r AS SELECT dept, dp_count(*) c FROM pg_visits GROUP BY dept HAVING dept > 2;
SELECT array_agg(dept ORDER BY dept) AS released, bool_and(c = e) AS exact FROM r JOIN pg_expected USING (dept);
DROP TABLE r;
CREATE TEMP TABLE r AS SELECT dept, dp_count(*) c FROM pg_visits GROUP BY dept
HAVING dp_count(*) > 0 AND dept < 2;
SELECT array_agg(dept ORDER BY dept) AS released, bool_and(c = e) AS exact FROM r JOIN pg_expected USING (dept);
DROP TABLE r;
-- an expression as the key, by position, and two keys
CREATE TEMP TABLE r AS SELECT dept % 2 AS g, dp_count(*) c FROM pg_visits GROUP BY 1;
SELECT array_agg(g ORDER BY g) AS released,
       bool_and(c = (SELECT sum(least(n, 3)) FROM (SELECT count(*) n FROM pg_visits
                     WHERE dept % 2 = g GROUP BY patient) x)) AS exact
FROM r;
DROP TABLE r;
CREATE TEMP TABLE r AS SELECT dept, age % 2 AS p, dp_count(*) c FROM pg_visits GROUP BY dept, age % 2;
SELECT count(*) AS groups, bool_and(c = e) AS exact FROM r JOIN pg_expected2 USING (dept, p);
DROP TABLE r;
-- a function of a column as the key: 'A' and 'a' are one group, where each
-- unit's 20 rows contribute 3
CREATE TEMP TABLE r AS SELECT lower(name) AS n, dp_count(*) c FROM pg_visits GROUP BY lower(name);
SELECT array_agg(n) AS released, bool_and(c = 40 * 3) AS exact FROM r;
DROP TABLE r;
-- the level with the DP aggregates in a sub-query and in a CTE
CREATE TEMP TABLE r AS SELECT * FROM (SELECT dept, dp_count(*) c FROM pg_visits GROUP BY dept) s;
SELECT count(*) AS groups, bool_and(c = e) AS exact FROM r JOIN pg_expected USING (dept);
DROP TABLE r;
CREATE TEMP TABLE r AS WITH w AS (SELECT dept, dp_count(*) c FROM pg_visits GROUP BY dept) SELECT * FROM w;
SELECT count(*) AS groups, bool_and(c = e) AS exact FROM r JOIN pg_expected USING (dept);
DROP TABLE r;
-- a generic plan, executed twice
SET plan_cache_mode = force_generic_plan;
PREPARE pg_q(int) AS SELECT dept, dp_count(*) c FROM pg_visits WHERE dept < $1 GROUP BY dept;
CREATE TEMP TABLE r AS EXECUTE pg_q(3);
SELECT array_agg(dept ORDER BY dept) AS released, bool_and(c = e) AS exact FROM r JOIN pg_expected USING (dept);
DROP TABLE r;
CREATE TEMP TABLE r AS EXECUTE pg_q(2);
SELECT array_agg(dept ORDER BY dept) AS released, bool_and(c = e) AS exact FROM r JOIN pg_expected USING (dept);
DROP TABLE r;
DEALLOCATE pg_q;
RESET plan_cache_mode;

-- refusals with GROUP BY are those without it
SELECT pg_try($$SELECT dept, dp_count(*), count(*) FROM pg_visits GROUP BY dept$$);
SELECT pg_try($$SELECT dept, dp_count(*) FROM pg_visits GROUP BY ROLLUP (dept)$$);
SELECT pg_try($$SELECT dept, dp_count(*) FROM pg_visits TABLESAMPLE BERNOULLI (random()) GROUP BY dept$$);

SELECT dp_agg.clear_privacy_unit('pg_visits');
DROP TABLE pg_visits, pg_expected, pg_expected2;
DROP FUNCTION pg_try(text);
