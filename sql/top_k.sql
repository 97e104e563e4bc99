--
-- top_k: HAVING dp_agg.top_k(k [, epsilon]) releases the k groups with the
-- most units, chosen by k rounds of report noisy max (README, "Top-k").
--
-- Choices are checked where they are certain but for a negligible
-- probability: counts 100 or more apart at a top-k epsilon of 1000 per
-- round (noise of scale 1/1000: a round picks another group with
-- probability below 1e-40).  The statistical suite checks the mechanism's
-- probabilities at usual epsilons.
--
\set SHOW_CONTEXT never
SELECT dp_agg.set_budget(current_user::regrole, 1e15, 0.5);
SET dp_agg.epsilon = 1e9;
CREATE TABLE tk_t (u int, dept text NOT NULL, age int NOT NULL);
-- departments d1 .. d6 with 600, 500, ..., 100 rows; patient u has 5 rows, in one department
INSERT INTO tk_t SELECT (i - 1) / 5, 'd' || d, i % 90
FROM generate_series(1, 6) d, generate_series(1, 100 * (7 - d)) j,
     LATERAL (SELECT (d - 1) * 1000 + j AS i) x;
CREATE FUNCTION tk_last_detail() RETURNS jsonb LANGUAGE sql AS
$$SELECT detail FROM dp_agg.ledger ORDER BY id DESC LIMIT 1$$;
-- EXPLAIN (COSTS OFF) without the "Window:" lines PostgreSQL 18 adds
CREATE FUNCTION tk_plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        IF l !~ '^\s*Window: ' THEN RETURN NEXT l; END IF;
    END LOOP;
END $$;

-- 1. the k largest groups of a public domain, with their noisy counts
SELECT dept, dp_count(*) AS n FROM tk_t WHERE dept IN ('d1', 'd2', 'd3', 'd4', 'd5', 'd6', 'd9')
GROUP BY dept HAVING dp_agg.top_k(3, 3000) ORDER BY n DESC;
-- price: the releases and top-k (no selection): basic composition
SELECT epsilon, delta, tk_last_detail()->1 AS top_k FROM dp_agg.ledger ORDER BY id DESC LIMIT 1;
-- of groups the private selection releases (epsilon: its default share)
SELECT dept, dp_count(*) AS n FROM tk_t GROUP BY dept HAVING dp_agg.top_k(2, 2000) ORDER BY n DESC;
SELECT epsilon, delta, jsonb_array_length(tk_last_detail()) AS calls,
       tk_last_detail() @? '$[*].selection' AS selected
FROM dp_agg.ledger ORDER BY id DESC LIMIT 1;
-- any DP aggregate: the groups are ranked by their units all the same
SELECT dept FROM (SELECT dept, dp_sum(age, 0, 100) FROM tk_t GROUP BY dept HAVING dp_agg.top_k(4, 4000)) s
ORDER BY 1;
-- k beyond the groups: all of them
SELECT dept FROM (SELECT dept, dp_count(*) FROM tk_t WHERE dept IN ('d1', 'd2') GROUP BY dept
                  HAVING dp_agg.top_k(5)) s ORDER BY 1;
-- the other conditions of HAVING choose the candidates (on noisy values:
-- post-processing); top-k ranks those
SELECT dept FROM tk_t WHERE dept IN ('d1', 'd2', 'd3') GROUP BY dept
HAVING dp_agg.top_k(2, 2000) AND dp_count(*) < 550 ORDER BY 1;
-- a statement whose releases the planner drops (an outer count(*)): the
-- default share is of dp_agg.epsilon
SELECT count(*) FROM (SELECT dept, dp_count(*) FROM tk_t GROUP BY dept HAVING dp_agg.top_k(2)) s;
-- epsilon from dp_agg.selection_epsilon, else a share of the releases'
SET dp_agg.selection_epsilon = 7;
SELECT release, epsilon, noise_scale FROM dp_agg.preview(
    'SELECT dept, dp_count(*) FROM tk_t WHERE dept IN (''d1'', ''d2'') GROUP BY dept HAVING dp_agg.top_k(2)');
RESET dp_agg.selection_epsilon;
SELECT release, epsilon, noise_scale FROM dp_agg.preview(
    'SELECT dept, dp_count(u, 2) FROM tk_t WHERE dept IN (''d1'', ''d2'') GROUP BY dept HAVING dp_agg.top_k(2)');

-- 2. privacy units: the groups with the most units (not rows)
CREATE TABLE tk_u (u int, dept text NOT NULL);
-- d1: 10 units of 50 rows each; d2: 200 units of 1 row; d3: 100 units of 1 row
INSERT INTO tk_u SELECT u, 'd1' FROM generate_series(1, 10) u, generate_series(1, 50);
INSERT INTO tk_u SELECT 100 + u, 'd2' FROM generate_series(1, 200) u;
INSERT INTO tk_u SELECT 1000 + u, 'd3' FROM generate_series(1, 100) u;
SELECT dp_agg.set_privacy_unit('tk_u', 'u');
SELECT dept, dp_count(*) AS units FROM tk_u WHERE dept IN ('d1', 'd2', 'd3')
GROUP BY dept HAVING dp_agg.top_k(1, 1000);
SELECT tk_plan($$SELECT dept, dp_count(*) FROM tk_u WHERE dept IN ('d1', 'd2', 'd3')
GROUP BY dept HAVING dp_agg.top_k(1, 1000)$$);

-- 3. refused: misplaced or malformed conditions, the internal functions
SELECT dp_agg.top_k(3);
SELECT dept FROM tk_t GROUP BY dept HAVING dp_agg.top_k(3) OR dp_count(*) > 1;
SELECT dept, dp_count(*) FROM tk_t WHERE dp_agg.top_k(3) GROUP BY dept;
SELECT dp_count(*) FROM tk_t HAVING dp_agg.top_k(3);
SELECT dept, dp_count(*) FROM tk_t GROUP BY dept HAVING dp_agg.top_k(0);
SELECT dept, dp_count(*) FROM tk_t GROUP BY dept HAVING dp_agg.top_k(10001);
SELECT dept, dp_count(*) FROM tk_t GROUP BY dept HAVING dp_agg.top_k(2, -1);
PREPARE tk_p(int) AS SELECT dept, dp_count(*) FROM tk_t GROUP BY dept HAVING dp_agg.top_k($1);
EXECUTE tk_p(2);
DEALLOCATE tk_p;
SELECT dept, dp_count(*) FROM tk_t GROUP BY dept HAVING dp_agg.top_k(2) AND dp_agg.top_k(3);
SELECT dept, dp_agg_internal.top_k_rank(1) OVER () FROM tk_t;
-- (the parser refuses a value of type internal, with a message that
-- differs between versions: only the refusal is shown)
CREATE FUNCTION pg_temp.refused(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'accepted';
EXCEPTION WHEN undefined_function OR cannot_coerce OR feature_not_supported THEN
    RETURN 'refused';
END $$;
SELECT pg_temp.refused('SELECT dept, dp_agg_internal.dp_top_k(NULL::internal, 1, 1) FROM tk_t GROUP BY dept');
SELECT has_function_privilege('public', 'dp_agg.top_k_sample(bigint[], integer, float8, integer)', 'EXECUTE')
       AS public_sample;
SELECT dp_agg.top_k_sample(ARRAY[1, 2]::bigint[], 3, 1, 10);
SELECT dp_agg.top_k_sample(ARRAY[1, 2]::bigint[], 1, 0, 10);
SELECT dp_agg.top_k_sample(array_fill(1::bigint, ARRAY[1000]), 1000, 1, 3);

-- 4. accounting: each of the k rounds is e0-DP with e0 = k / epsilon's
-- inverse (the sampler's scale); Renyi: k min(e0, alpha e0^2 / 2); PLD: k
-- randomized responses at e0, whose composition is the optimal one of
-- Kairouz, Oh & Viswanath 2015, Theorem 3.3 (written out as in pld)
CREATE FUNCTION tk_kov_epsilon(e0 float8, m int, delta float8) RETURNS float8
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    lo float8 := 0;
    hi float8 := m * e0;
    mid float8;
    d float8;
    logc float8[];
    loss float8;
    logw float8;
BEGIN
    logc := array_fill(0::float8, ARRAY[m + 1]);
    FOR i IN 1 .. m LOOP
        logc[i + 1] := logc[i] + ln(m - i + 1) - ln(i);
    END LOOP;
    FOR step IN 1 .. 60 LOOP
        mid := (lo + hi) / 2;
        d := 0;
        FOR i IN 0 .. m LOOP
            loss := (m - 2 * i) * e0;
            IF loss > mid THEN
                logw := logc[i + 1] + (m - i) * e0 - m * ln(1 + exp(e0));
                d := d + exp(logw) - exp(logw + mid - loss);
            END IF;
        END LOOP;
        IF d <= delta THEN hi := mid; ELSE lo := mid; END IF;
    END LOOP;
    RETURN hi;
END $$;
SELECT e0, m, delta, p.eps >= k.eps AS never_below, p.eps <= 1.02 * k.eps AS tight
FROM (VALUES (0.05), (0.5)) e(e0), (VALUES (1), (10), (100)) c(m), (VALUES (1e-6)) d(delta),
     LATERAL (SELECT dp_agg.pld_epsilon(jsonb_build_array(jsonb_build_object(
                  'mechanism', 'randomized_response', 'epsilon', e0, 'count', m)), delta) AS eps) p,
     LATERAL (SELECT tk_kov_epsilon(e0, m, delta) AS eps) k
ORDER BY 1, 2;
SELECT dp_agg.pld_epsilon('[{"mechanism": "randomized_response", "epsilon": 0}]', 1e-6);
SELECT dp_agg.pld_epsilon('[{"mechanism": "randomized_response", "epsilon": 65}]', 1e-6);
-- a role under each accounting pays for top-k of a public domain; the
-- Renyi curve of top-k is what a role running the statement without it
-- does not have: 2 min(1/2, alpha / 8) at every order
CREATE ROLE regress_tk_pld;
CREATE ROLE regress_tk_rdp;
CREATE ROLE regress_tk_plain;
GRANT SELECT ON tk_t TO regress_tk_pld, regress_tk_rdp, regress_tk_plain;
SELECT dp_agg.set_budget('regress_tk_pld', 100, 1e-5, 'pld');
SELECT dp_agg.set_budget('regress_tk_rdp', 100, 1e-5, 'rdp');
SELECT dp_agg.set_budget('regress_tk_plain', 100, 1e-5, 'rdp');
SET ROLE regress_tk_pld;
SELECT dept FROM (SELECT dept, dp_count(u, 1) FROM tk_t WHERE dept IN ('d1', 'd2', 'd3')
                  GROUP BY dept HAVING dp_agg.top_k(2, 1)) s ORDER BY 1;
SELECT epsilon_spent, delta_spent, pld, pld_epsilon < 3 AS pld_finite FROM dp_agg.my_budget_curves;
RESET ROLE;
SET ROLE regress_tk_rdp;
SELECT count(*) AS groups FROM (SELECT dept, dp_count(u, 1) AS n FROM tk_t WHERE dept IN ('d1', 'd2', 'd3')
                                GROUP BY dept HAVING dp_agg.top_k(2, 1)) s WHERE n IS NOT NULL;
RESET ROLE;
SET ROLE regress_tk_plain;
SELECT count(*) AS groups FROM (SELECT dept, dp_count(u, 1) AS n FROM tk_t WHERE dept IN ('d1', 'd2', 'd3')
                                GROUP BY dept) s WHERE n IS NOT NULL;
RESET ROLE;
SELECT bool_and(abs(t.v - p.v - 2 * least(0.5, o.a / 8)) <= 1e-9 * t.v) AS curve
FROM unnest(dp_agg.rdp_orders()) WITH ORDINALITY o(a, i),
     unnest((SELECT rdp FROM dp_agg.budget WHERE role = 'regress_tk_rdp'::regrole)) WITH ORDINALITY t(v, i),
     unnest((SELECT rdp FROM dp_agg.budget WHERE role = 'regress_tk_plain'::regrole)) WITH ORDINALITY p(v, i)
WHERE o.i = t.i AND t.i = p.i;
SELECT dp_agg.spent_epsilon('regress_tk_rdp', 1e-5) < 2 AS composed_below_basic;

-- cleanup
DROP TABLE tk_t, tk_u;
DROP FUNCTION tk_last_detail(), tk_plan(text), tk_kov_epsilon(float8, int, float8);
DELETE FROM dp_agg.budget WHERE role::text LIKE 'regress_tk_%';
DELETE FROM dp_agg.ledger WHERE role::text LIKE 'regress_tk_%';
DROP ROLE regress_tk_pld, regress_tk_rdp, regress_tk_plain;
