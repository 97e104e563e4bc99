--
-- priced_releases: every DP aggregate is charged exactly the releases it
-- makes, under each accounting (README, "Budgets", "Renyi accounting",
-- "PLD accounting").  The ledger describes each call's noisy releases
-- (dp_avg: a count and a centred sum; the others one), with mechanism,
-- epsilon, delta, sensitivity, noise scale and grid; from that description
-- alone this test recomputes, for every aggregate and value type, with
-- Laplace (delta 0) and Gaussian (delta 1e-6) noise, under basic, rdp and
-- pld accounting:
--   - the price: the sums of the releases' epsilons and deltas, which the
--     ledger and the budget's spent amounts must equal;
--   - the Renyi DP curve, the sum of the releases' curves: a Gaussian
--     release alpha (sensitivity / sigma)^2 / 2 (Mironov 2017), a Laplace
--     release the exact curve of the discrete Laplace
--     (dp_agg.rdp_sampled_laplace at rate 1) capped at its epsilon, at the
--     integer orders of the grid; the ledger's and the budget's curves must
--     be within a relative 1e-9 above it (each term is rounded up by 2^-40),
--     never below;
--   - the releases by kind that PLD accounting composes: the budget's
--     column pld must hold each noisy release once, in grid units, and its
--     certificate must be the one of the ledger's description.
--
SELECT dp_agg.set_budget(current_user::regrole, 1e15, 0.5, 'basic');
CREATE TABLE pr_t (i int, f float8, n numeric);
INSERT INTO pr_t SELECT k, k / 100.0, k / 10.0 FROM generate_series(1, 100) k;
CREATE ROLE regress_dp_priced;
GRANT SELECT ON pr_t TO regress_dp_priced;
CREATE TABLE pr_statements (s int, sql text, calls int);
INSERT INTO pr_statements VALUES
    (1, 'SELECT dp_count(*) FROM pr_t', 1),
    (2, 'SELECT dp_count(i) FROM pr_t', 1),
    (3, 'SELECT dp_sum(i, -10, 100) FROM pr_t', 1),
    (4, 'SELECT dp_sum(f, 0, 1) FROM pr_t', 1),
    (5, 'SELECT dp_sum(n, 0, 10) FROM pr_t', 1),
    (6, 'SELECT dp_avg(i, 0, 100) FROM pr_t', 1),
    (7, 'SELECT dp_avg(f, 0, 1) FROM pr_t', 1),
    (8, 'SELECT dp_avg(n, 0, 10) FROM pr_t', 1),
    (9, 'SELECT dp_count(*), dp_avg(i, -100, 100), dp_sum(f, -1, 1) FROM pr_t', 3);
CREATE TABLE pr_charged (accounting text, delta float8, s int, ledger_epsilon float8,
                         ledger_delta float8, detail jsonb, ledger_rdp float8[],
                         epsilon_spent float8, delta_spent float8, budget_rdp float8[], pld jsonb);
-- each statement, under each accounting and noise, as the only charge
-- since a reset of the role's budget
DO $$
DECLARE st record; acc text; d float8;
BEGIN
    FOREACH acc IN ARRAY ARRAY['basic', 'rdp', 'pld'] LOOP
        FOREACH d IN ARRAY ARRAY[0, 1e-6]::float8[] LOOP
            FOR st IN SELECT * FROM pr_statements ORDER BY s LOOP
                PERFORM dp_agg.set_budget('regress_dp_priced', 1e6, 0.5, acc);
                PERFORM dp_agg.reset_budget('regress_dp_priced');
                -- a transaction that changed a budget may not charge
                COMMIT;
                SET ROLE regress_dp_priced;
                PERFORM set_config('dp_agg.epsilon', '0.5', false);
                PERFORM set_config('dp_agg.delta', d::text, false);
                EXECUTE st.sql;
                RESET ROLE;
                INSERT INTO pr_charged
                SELECT acc, d, st.s, l.epsilon, l.delta, l.detail, l.rdp,
                       b.epsilon_spent, b.delta_spent, b.rdp, b.pld
                FROM dp_agg.ledger l, dp_agg.budget b
                WHERE l.id = (SELECT max(id) FROM dp_agg.ledger WHERE role = 'regress_dp_priced'::regrole)
                  AND b.role = 'regress_dp_priced'::regrole;
                COMMIT;
            END LOOP;
        END LOOP;
    END LOOP;
END $$;
RESET dp_agg.epsilon;
RESET dp_agg.delta;

-- the noisy releases of a charge, from the ledger's description
CREATE VIEW pr_releases AS
SELECT c.accounting, c.delta AS noise_delta, c.s, r
FROM pr_charged c, jsonb_array_elements(c.detail) call, jsonb_array_elements(call -> 'releases') r
WHERE r ->> 'mechanism' <> 'none';
-- the Renyi DP curve of one release on the order grid (NULL at fractional
-- orders, where the calculator of the discrete Laplace takes the next
-- integer order's value)
CREATE FUNCTION pr_curve(r jsonb) RETURNS TABLE (i bigint, v float8) LANGUAGE sql AS $$
    SELECT u.i, CASE WHEN o <> trunc(o) THEN NULL
                     WHEN r ->> 'mechanism' = 'gaussian'
                     THEN o / 2 * ((r ->> 'sensitivity')::float8 / (r ->> 'noise_scale')::float8) ^ 2
                     ELSE least(l.v, (r ->> 'epsilon')::float8) END
    FROM unnest(dp_agg.rdp_orders()) WITH ORDINALITY u(o, i)
    LEFT JOIN unnest(CASE WHEN r ->> 'mechanism' = 'laplace'
                          THEN dp_agg.rdp_sampled_laplace(1, (r ->> 'noise_scale')::float8 / (r ->> 'grid')::float8,
                                                          (r ->> 'sensitivity')::float8 / (r ->> 'grid')::float8,
                                                          dp_agg.rdp_orders()) END)
              WITH ORDINALITY l(v, i) ON l.i = u.i
$$;
CREATE TEMP TABLE pr_expected_curve AS
SELECT accounting, noise_delta, s, c.i, sum(c.v) AS v
FROM pr_releases, pr_curve(r) c WHERE c.v IS NOT NULL GROUP BY 1, 2, 3, 4;

SELECT c.s, c.delta AS noise_delta,
       bool_and(c.ledger_epsilon = 0.5 * p.calls AND c.epsilon_spent = c.ledger_epsilon
                AND c.ledger_delta = c.delta * p.calls AND c.delta_spent = c.ledger_delta) AS price,
       bool_and(c.ledger_epsilon = (SELECT sum((r ->> 'epsilon')::float8) FROM pr_releases x
                                    WHERE x.accounting = c.accounting AND x.noise_delta = c.delta AND x.s = c.s)
                AND c.ledger_delta = (SELECT sum((r ->> 'delta')::float8) FROM pr_releases x
                                      WHERE x.accounting = c.accounting AND x.noise_delta = c.delta AND x.s = c.s))
           AS price_of_releases,
       bool_and((SELECT bool_and(c.ledger_rdp[e.i] >= e.v AND c.ledger_rdp[e.i] <= e.v * (1 + 1e-9)
                                 AND c.budget_rdp[e.i] = c.ledger_rdp[e.i]) AND count(*) = 66
                 FROM pr_expected_curve e
                 WHERE e.accounting = c.accounting AND e.noise_delta = c.delta AND e.s = c.s)) AS curve,
       bool_and((SELECT array_agg(x.kind ORDER BY x.kind)
                 FROM (SELECT concat_ws(' ', r ->> 'mechanism',
                                        (r ->> 'noise_scale')::float8 / (r ->> 'grid')::float8,
                                        (r ->> 'sensitivity')::float8 / (r ->> 'grid')::float8) AS kind
                       FROM pr_releases x
                       WHERE x.accounting = c.accounting AND x.noise_delta = c.delta AND x.s = c.s) x)
                IS NOT DISTINCT FROM
                (SELECT array_agg(y.kind ORDER BY y.kind)
                 FROM (SELECT concat_ws(' ', k ->> 'mechanism', (k ->> 'noise_scale')::float8,
                                        (k ->> 'sensitivity')::float8) AS kind
                       FROM jsonb_array_elements(c.pld) k, generate_series(1, (k ->> 'count')::int)) y))
           AS pld_kinds,
       bool_and(c.accounting <> 'pld' OR
                dp_agg.pld_epsilon(c.detail, 1e-5) = dp_agg.pld_state_epsilon(c.pld, 1e-5)) AS pld_certificate,
       count(*) AS accountings
FROM pr_charged c JOIN pr_statements p USING (s)
GROUP BY c.s, c.delta ORDER BY c.s, c.delta;

DROP VIEW pr_releases;
DROP FUNCTION pr_curve(jsonb);
DELETE FROM dp_agg.ledger WHERE role = 'regress_dp_priced'::regrole;
DELETE FROM dp_agg.budget WHERE role = 'regress_dp_priced'::regrole;
DROP TABLE pr_charged, pr_statements, pr_t;
DROP ROLE regress_dp_priced;
