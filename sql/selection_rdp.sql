--
-- selection_rdp: Renyi accounting of the private selections of GROUP BY
-- keys.  A selection has no finite Renyi DP curve; an 'rdp' role composes
-- its selections beside its curve: the history is (epsilon_r(delta_limit -
-- selection_delta) + selection_epsilon, delta_limit)-DP (README, "Renyi
-- accounting"), so GROUP BY statements keep the Renyi advantage.
--
\set SHOW_CONTEXT never
CREATE TABLE sr_t (g int, x int);
INSERT INTO sr_t SELECT g, i FROM generate_series(1, 5) g, generate_series(1, 100) i;
CREATE ROLE regress_dp_selrdp;
GRANT SELECT ON sr_t TO regress_dp_selrdp;
-- run the GROUP BY statement up to k times, until the budget refuses it
CREATE FUNCTION sr_release(k int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE n int := 0; c bigint;
BEGIN
    FOR j IN 1 .. k LOOP
        BEGIN
            SELECT count(s.dc) INTO c FROM (SELECT g, dp_count(x, 0.1, 1e-7) AS dc FROM sr_t GROUP BY g) s;
            n := n + 1;
        EXCEPTION WHEN SQLSTATE 'PB001' THEN
            EXIT;
        END;
    END LOOP;
    RETURN n;
END $$;
GRANT EXECUTE ON FUNCTION sr_release(int) TO regress_dp_selrdp;
SET dp_agg.selection_epsilon = 0.1;
SET dp_agg.selection_delta = 1e-7;

-- one statement: a Gaussian count (0.1, 1e-7) and the selection (0.1, 1e-7);
-- its recorded curve is the count's alone, the budget keeps the selection's
-- sums beside it
SELECT dp_agg.set_budget('regress_dp_selrdp', 5, 1e-5, 'rdp');
SET ROLE regress_dp_selrdp;
SELECT sr_release(1) AS released;
SELECT epsilon_spent, delta_spent, selection_epsilon, selection_delta,
       abs(composed_epsilon - dp_agg.hybrid_epsilon(rdp, 0.1, 1e-7, 1e-5)) = 0 AS hybrid,
       composed_epsilon < 'Infinity' AS finite,
       dp_agg.spent_epsilon(current_user::regrole, 1e-5) = composed_epsilon AS spent_agrees
FROM dp_agg.my_budget_curves;
SELECT l.epsilon, l.delta, bool_and(c > 0 AND c < 'Infinity') AS finite_curve, l.rdp = b.rdp AS curve_is_the_count
FROM dp_agg.my_ledger l, unnest(l.rdp) c, dp_agg.my_budget_curves b
WHERE l.kind = 'charge' GROUP BY l.id, l.epsilon, l.delta, l.rdp, b.rdp;
RESET ROLE;

-- the expected number of such statements admitted under (5, 1e-5): the
-- largest n that basic composition (n * 0.2 <= 5 and n * 2e-7 <= 1e-5: 25)
-- or the hybrid certificate (n times the count's curve converted at
-- 1e-5 - n * 1e-7, plus n * 0.1, at most 5) admits
CREATE TEMP TABLE sr_curve AS SELECT rdp FROM dp_agg.ledger
WHERE role = 'regress_dp_selrdp'::regrole AND kind = 'charge';
CREATE TEMP TABLE sr_expected AS
SELECT max(n) AS n FROM generate_series(1, 100) n, sr_curve c
WHERE (n * 0.2 <= 5 AND n * 2e-7 <= 1e-5)
   OR dp_agg.hybrid_epsilon(ARRAY(SELECT n * x FROM unnest(c.rdp) x), n * 0.1, n * 1e-7, 1e-5) <= 5;
SELECT n AS expected, n > 25 AS beats_basic FROM sr_expected;
SET ROLE regress_dp_selrdp;
SELECT sr_release(100) AS more \gset
SELECT composed_epsilon <= 5 AS within_limit, epsilon_spent > 5 AS beyond_basic,
       selection_delta < 1e-5 AS delta_left
FROM dp_agg.my_budget_curves;
RESET ROLE;
SELECT 1 + :more = n AS admitted_as_expected FROM sr_expected;

-- 'basic' accounting of the same statements: 24 (the sums, rounded up,
-- stop one statement before 5 / 0.2)
SELECT dp_agg.reset_budget('regress_dp_selrdp');
SELECT dp_agg.set_budget('regress_dp_selrdp', 5, 1e-5, 'basic');
SET ROLE regress_dp_selrdp;
SELECT sr_release(100) AS basic_released;
RESET ROLE;

-- a statement after which the selections would spend all of delta_limit
-- has no Renyi certificate (its hybrid epsilon is Infinity): at (100, 2e-7)
-- the first statement is admitted (basic), the second by neither
SELECT dp_agg.reset_budget('regress_dp_selrdp');
SELECT dp_agg.set_budget('regress_dp_selrdp', 100, 2e-7, 'rdp');
SET ROLE regress_dp_selrdp;
SELECT sr_release(5) AS released;
SELECT selection_delta, composed_epsilon FROM dp_agg.my_budget_curves;
RESET ROLE;
SELECT dp_agg.hybrid_epsilon(NULL, 0, 1e-5, 1e-5) AS no_delta_left,
       dp_agg.hybrid_epsilon(NULL, 0.5, 0, 1e-5) AS selections_only;

-- reset: the sums back to 0
SELECT dp_agg.reset_budget('regress_dp_selrdp');
SELECT selection_epsilon, selection_delta, rdp FROM dp_agg.budget WHERE role = 'regress_dp_selrdp'::regrole;

-- a malformed sum is refused by the table
\set VERBOSITY terse
UPDATE dp_agg.budget SET selection_delta = -1 WHERE role = 'regress_dp_selrdp'::regrole;
UPDATE dp_agg.budget SET selection_epsilon = 'NaN' WHERE role = 'regress_dp_selrdp'::regrole;
\set VERBOSITY default

RESET dp_agg.selection_epsilon;
RESET dp_agg.selection_delta;
DELETE FROM dp_agg.budget WHERE role = 'regress_dp_selrdp'::regrole;
DELETE FROM dp_agg.ledger WHERE role = 'regress_dp_selrdp'::regrole;
DROP FUNCTION sr_release(int);
DROP TABLE sr_t;
DROP ROLE regress_dp_selrdp;
