--
-- pld_admission: admission by the PLD certificate, decided without the
-- charger composing, and the views that report it.
--
-- 1. Exactness.  A 'pld' role (limits (5, 1e-5)) spends its budget with
--    statements of three shapes, cycled, well past what basic and Renyi
--    composition pay for.  After every statement:
--    - admitted: some certificate the views report is within the limit
--      (basic sums, the hybrid Renyi one, or my_budget_curves.pld_epsilon);
--    - refused (PB001): the PLD certificate of history + statement, as
--      dp_agg.pld_state_epsilon computes it from my_budget_curves.pld and the
--      statement's ledger description, exceeds the limit.  No statement is
--      refused that this certificate admits.
--    Refusals of an exhausted role are answered again without composing:
--    the second cycle of refusals is checked the same way.
-- 2. The views never fail: a history too wide to compose (set directly in
--    dp_agg.budget, as releases of very different noise scales make it)
--    shows pld_epsilon NULL, and composed_epsilon, epsilon_remaining and
--    spent_epsilon by the Renyi certificate; statements are still admitted
--    by it.  The calculator dp_agg.pld_state_epsilon keeps its error.
--
\set SHOW_CONTEXT never
CREATE TABLE pa_t (i int);
INSERT INTO pa_t SELECT k FROM generate_series(1, 1000) k;
CREATE ROLE regress_dp_pa;
GRANT SELECT ON pa_t TO regress_dp_pa;
SELECT dp_agg.set_budget('regress_dp_pa', 5, 1e-5, 'pld');

CREATE TABLE pa_log (n int, shape int, admitted bool, certified bool);
GRANT SELECT, INSERT ON pa_log TO regress_dp_pa;

-- one attempt of shape k: admitted or refused, and whether the certificate
-- named above agrees
CREATE FUNCTION pa_try(n int, k int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    stmts text[] := ARRAY['SELECT dp_count(i, 0.1) FROM pa_t',
                          'SELECT dp_count(i, 0.5, 1e-6) FROM pa_t',
                          'SELECT dp_count(i, 0.1), dp_sum(i, 0, 10, 0.2) FROM pa_t'];
    b record;
    shape_detail jsonb;
    ok bool := true;
    certified bool;
BEGIN
    BEGIN
        EXECUTE stmts[k];
    EXCEPTION WHEN SQLSTATE 'PB001' THEN
        ok := false;
    END;
    SELECT * INTO STRICT b FROM dp_agg.my_budget_curves;
    IF ok THEN
        certified := b.epsilon_spent <= b.epsilon_limit
                     OR b.composed_epsilon <= b.epsilon_limit
                     OR b.pld_epsilon <= b.epsilon_limit;
    ELSE
        SELECT l.detail INTO STRICT shape_detail FROM dp_agg.my_ledger l
        WHERE l.query = stmts[k] ORDER BY l.id LIMIT 1;
        certified := dp_agg.pld_state_epsilon(b.pld || shape_detail, b.delta_limit)
                     > b.epsilon_limit;
    END IF;
    INSERT INTO pa_log VALUES (n, k, ok, certified);
END $$;
GRANT EXECUTE ON FUNCTION pa_try(int, int) TO regress_dp_pa;

SET ROLE regress_dp_pa;
-- the shapes in turn (the first three admitted by basic composition, so
-- that the ledger describes each), until every shape was refused twice in
-- a row
DO $$
DECLARE
    k int := 1;
BEGIN
    LOOP
        PERFORM pa_try(k, 1 + (k - 1) % 3);
        EXIT WHEN (SELECT count(*) FROM (SELECT l.admitted FROM pa_log l ORDER BY l.n DESC LIMIT 6) s
                   WHERE NOT s.admitted) = 6 OR k >= 400;
        k := k + 1;
    END LOOP;
END $$;
-- a refusal by the PLD certificate says what it would reach
CREATE TEMP TABLE pa_refusal (detail text);
DO $$
DECLARE d text;
BEGIN
    EXECUTE 'SELECT dp_count(i, 0.5, 1e-6) FROM pa_t';
EXCEPTION WHEN SQLSTATE 'PB001' THEN
    GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
    INSERT INTO pa_refusal VALUES (d);
END $$;
SELECT detail ~ 'and the privacy loss distribution epsilon [0-9.]+ \(at delta 1e-05\)' AS names_pld,
       substring(detail FROM 'privacy loss distribution epsilon ([0-9.]+)')::float8 > 5 AS beyond_limit
FROM pa_refusal;
DROP TABLE pa_refusal;
RESET ROLE;

SELECT count(*) FILTER (WHERE NOT admitted) >= 6 AS exhausted,
       bool_and(certified) FILTER (WHERE admitted) AS admitted_within_a_certificate,
       bool_and(certified) FILTER (WHERE NOT admitted) AS refused_only_beyond_pld,
       (SELECT epsilon_spent > 5 FROM dp_agg.budget WHERE role = 'regress_dp_pa'::regrole)
           AS basic_overspent_by_then
FROM pa_log;
-- the frontier the backends composed is in the budget row, with its certificate
SELECT pld_frontier ? 'fit' AS has_fit,
       (pld_frontier->>'fit_epsilon')::float8 <= epsilon_limit AS fit_within_limit,
       (pld_frontier->>'delta')::float8 = delta_limit AS at_delta_limit
FROM dp_agg.budget WHERE role = 'regress_dp_pa'::regrole;

-- 2. a history too wide to compose
SELECT dp_agg.reset_budget('regress_dp_pa');
SELECT dp_agg.set_budget('regress_dp_pa', 50, 1e-5, 'pld');
SET ROLE regress_dp_pa;
SELECT dp_count(i, 0.5, 1e-6) IS NOT NULL AS released FROM pa_t;
RESET ROLE;
UPDATE dp_agg.budget SET pld =
    '[{"mechanism": "gaussian", "sensitivity": 1, "noise_scale": 0.5, "rate": 1, "count": 1},
      {"mechanism": "gaussian", "sensitivity": 1, "noise_scale": 100000, "rate": 1, "count": 1000}]'
WHERE role = 'regress_dp_pa'::regrole;
SET ROLE regress_dp_pa;
SELECT pld_epsilon IS NULL AS no_pld_certificate,
       composed_epsilon = dp_agg.hybrid_epsilon(rdp, selection_epsilon, selection_delta, delta_limit)
           AS composed_by_renyi,
       epsilon_remaining = epsilon_limit - LEAST(epsilon_spent, composed_epsilon) AS remaining_by_renyi,
       dp_agg.spent_epsilon(current_user::regrole, 1e-5) = composed_epsilon AS spent_by_renyi
FROM dp_agg.my_budget_curves;
-- admitted by the other certificates, without an error
SELECT dp_count(i, 0.5, 1e-6) IS NOT NULL AS released FROM pa_t;
RESET ROLE;
SELECT dp_agg.spent_epsilon('regress_dp_pa', 1e-6) > 0 AS spent_of_another_role;
-- the calculator still says why it cannot answer
SELECT dp_agg.pld_state_epsilon(pld, 1e-5) FROM dp_agg.budget WHERE role = 'regress_dp_pa'::regrole;
-- an untracked history: no PLD certificate either
UPDATE dp_agg.budget SET pld = '"untracked"' WHERE role = 'regress_dp_pa'::regrole;
SET ROLE regress_dp_pa;
SELECT pld_epsilon IS NULL AS no_pld_certificate, composed_epsilon IS NOT NULL AS renyi
FROM dp_agg.my_budget_curves;
RESET ROLE;

DROP FUNCTION pa_try(int, int);
DROP TABLE pa_t, pa_log;
DELETE FROM dp_agg.ledger WHERE role = 'regress_dp_pa'::regrole;
DELETE FROM dp_agg.budget WHERE role = 'regress_dp_pa'::regrole;
DROP ROLE regress_dp_pa;
