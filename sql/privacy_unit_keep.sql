--
-- privacy_unit_keep: how many groups a privacy unit contributes to.  A unit
-- in n groups contributes to min(n, k) of them, k = max_groups_contributed
-- (README, "Privacy units"): all of them when n <= k, exactly k chosen at
-- random when n > k (level 2 of the rewrite, src/units/unit_keep.c; for k = 1 the
-- fused path, src/units/unit_pick.c).  The boundary cases n = k - 1, k, k + 1
-- and k + 2 are each checked for k = 1, 2 and 3.
--
-- Units of class m are in exactly m groups ('m:1' .. 'm:m', shared by the
-- class's 100 units), with 3 rows of value 10 in each; each unit's rows
-- in a group count once (dp_agg.max_rows_contributed = 1) and its total
-- there is clamped to the upper bound 10.  At epsilon 1e9 the noise of a
-- count is 0 except with probability below 1e-300 (discrete Laplace of
-- scale k / 1e9), and so is that of an integer sum (scale 10 k / 1e9), so
-- the releases are the bounded values.  With public keys (no selection),
-- the count released over the groups of class m is the number of (unit,
-- group) pairs kept: exactly 100 min(m, k); their sum 10 times that.
--
SELECT dp_agg.set_budget(current_user::regrole, 1e15, 0.5, 'basic');
CREATE TABLE pk_t (u int, g text, x int);
INSERT INTO pk_t
SELECT 1000 * m + i, m || ':' || j, 10
FROM generate_series(1, 5) m, generate_series(1, 100) i, generate_series(1, m) j,
     generate_series(1, 3) r;
SELECT dp_agg.set_privacy_unit('pk_t', 'u', 3);
SET dp_agg.epsilon = 1e9;
SET dp_agg.group_keys = 'public';
SET dp_agg.max_rows_contributed = 1;

CREATE TEMP TABLE pk_released (k int, g text, c bigint, s bigint);
CREATE FUNCTION pk_release(k int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('dp_agg.max_groups_contributed', k::text, true);
    -- planned at each call (the rewrite reads k when it plans)
    EXECUTE 'INSERT INTO pk_released SELECT $1, g, c, s FROM '
            '(SELECT g, dp_count(*) AS c, dp_sum(x, 0, 10) AS s FROM pk_t GROUP BY g) r' USING k;
END $$;
SELECT pk_release(1), pk_release(2), pk_release(3);
-- per k and class m: the releases sum to the pairs a correct bounding keeps
SELECT k, split_part(g, ':', 1)::int AS m, count(*) AS groups,
       sum(c) AS count_total, sum(c) = 100 * least(split_part(g, ':', 1)::int, k) AS count_ok,
       sum(s) = 1000 * least(split_part(g, ':', 1)::int, k) AS sum_ok
FROM pk_released GROUP BY 1, 2 ORDER BY 1, 2;
-- no group gets more units than it has
SELECT bool_and(c <= 100 AND s <= 1000) AS within_units FROM pk_released;

-- one unit alone (WHERE on its unit): the groups it contributes to, each
-- moved by its bound (one row, a total of 10), min(m, k) of them
CREATE FUNCTION pk_alone(k int, unit int) RETURNS TABLE (groups bigint, counts bigint[], sums bigint[])
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('dp_agg.max_groups_contributed', k::text, true);
    RETURN QUERY EXECUTE
        'SELECT count(*), array_agg(DISTINCT c), array_agg(DISTINCT s) '
        'FROM (SELECT g, dp_count(*) AS c, dp_sum(x, 0, 10) AS s FROM pk_t WHERE u = $1 GROUP BY g) r'
        USING unit;
END $$;
SELECT k, m, (pk_alone(k, 1000 * m + 1)).*
FROM generate_series(1, 3) k, generate_series(1, 5) m WHERE m BETWEEN k - 1 AND k + 2
ORDER BY k, m;

RESET dp_agg.max_rows_contributed;
RESET dp_agg.group_keys;
RESET dp_agg.epsilon;
DROP FUNCTION pk_release(int);
DROP FUNCTION pk_alone(int, int);
SELECT dp_agg.clear_privacy_unit('pk_t');
DROP TABLE pk_t;
