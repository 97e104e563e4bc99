--
-- prepay: dp_agg.prepay lets a session that repeats a DP statement pay for
-- several at once and run the next ones without asking the charger.  Every
-- statement released is paid for: the ledger's statements add up to at
-- least the statements run, the budgets are charged exactly as that many
-- charges one by one, and a prepayment never takes more than half of what
-- a budget would still admit.
--
-- each statement charged alone, so that its ledger row is its own (charges
-- on leases are folded into rows of several: leases.sql, 016_leases.pl)
SET dp_agg.lease_time = 0;
SET dp_agg.group_keys = 'public';
CREATE TABLE prepay_t (i int);
INSERT INTO prepay_t SELECT k FROM generate_series(1, 100) k;
CREATE ROLE regress_dp_prepay;
CREATE ROLE regress_dp_prepay_other;
GRANT SELECT ON prepay_t TO regress_dp_prepay, regress_dp_prepay_other;
SELECT dp_agg.set_budget('regress_dp_prepay', 100);
SELECT dp_agg.set_budget('regress_dp_prepay_other', 100);
-- a long dp_agg.prepay_time: no prepaid statement expires in this test
-- unless it waits for it
SET dp_agg.prepay_time = '10s';
CREATE FUNCTION pg_temp.rows_of(r text) RETURNS int[] LANGUAGE sql AS
  $$SELECT coalesce(array_agg(statements ORDER BY id), '{}') FROM dp_agg.ledger
    WHERE role = r::regrole AND kind = 'charge'$$;
CREATE FUNCTION pg_temp.spent_of(r text) RETURNS float8 LANGUAGE sql AS
  $$SELECT epsilon_spent FROM dp_agg.budget WHERE role = r::regrole$$;

-- only a superuser sets it
SET ROLE regress_dp_prepay;
SET dp_agg.prepay = 8;
RESET ROLE;

-- off (0, the default): one charge per statement
SET ROLE regress_dp_prepay;
SELECT dp_count(i, 0.5) IS NOT NULL AS released FROM prepay_t;
SELECT dp_count(i, 0.5) IS NOT NULL AS released FROM prepay_t;
SELECT dp_count(i, 0.5) IS NOT NULL AS released FROM prepay_t;
RESET ROLE;
SELECT pg_temp.rows_of('regress_dp_prepay') AS off, pg_temp.spent_of('regress_dp_prepay') AS spent;

-- on: the first statement is charged alone; its first repeat pays for 4
-- (itself and 3 more, run without a charge); the fifth asks again
SET dp_agg.prepay = 4;
SET ROLE regress_dp_prepay;
SELECT dp_count(i, 0.25) IS NOT NULL AS released FROM prepay_t;
SELECT dp_count(i, 0.25) IS NOT NULL AS released FROM prepay_t;
SELECT dp_count(i, 0.25) IS NOT NULL AS released FROM prepay_t;
SELECT dp_count(i, 0.25) IS NOT NULL AS released FROM prepay_t;
SELECT dp_count(i, 0.25) IS NOT NULL AS released FROM prepay_t;
SELECT dp_count(i, 0.25) IS NOT NULL AS released FROM prepay_t;
RESET ROLE;
-- 1.5 + 9 x 0.25: the 3 statements prepaid by the last charge are spent too
SELECT pg_temp.rows_of('regress_dp_prepay') AS on, pg_temp.spent_of('regress_dp_prepay') AS spent;
-- the row of a charge of several statements: their sums, one statement's detail
SELECT statements, epsilon, (detail->0->>'epsilon')::float8 AS statement_epsilon,
       rdp[1] = 4 * (SELECT rdp[1] FROM dp_agg.ledger WHERE role = 'regress_dp_prepay'::regrole
                     AND statements = 1 ORDER BY id DESC LIMIT 1) AS curve_summed
FROM dp_agg.ledger WHERE role = 'regress_dp_prepay'::regrole ORDER BY id DESC LIMIT 1;

-- with dp_agg.prepay back to 0, what is left of them is not run: the
-- next statement is charged
SET dp_agg.prepay = 0;
SET ROLE regress_dp_prepay;
SELECT dp_count(i, 0.25) IS NOT NULL AS released FROM prepay_t;
RESET ROLE;
SET dp_agg.prepay = 4;
SELECT pg_temp.rows_of('regress_dp_prepay') AS prepay_off;

-- a statement with another price is charged (the prepaid ones are given
-- up), and so is the first statement again: it is no longer the last one
-- charged; so is one with another text
SET ROLE regress_dp_prepay;
SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM prepay_t;
SELECT dp_count(i, 0.25) IS NOT NULL AS released FROM prepay_t;
SELECT dp_count(i, 0.25) IS NOT NULL AS released FROM prepay_t WHERE i > 0;
RESET ROLE;
SELECT pg_temp.rows_of('regress_dp_prepay') AS after_others;

-- prepaid statements are paid by the role's budgets: after a repeat
-- prepays 3, another role running the same statement is charged itself
SET ROLE regress_dp_prepay;
SELECT dp_count(i, 0.25) IS NOT NULL AS released FROM prepay_t WHERE i > 0;
RESET ROLE;
SELECT pg_temp.rows_of('regress_dp_prepay') AS prepaid;
SET ROLE regress_dp_prepay_other;
SELECT dp_count(i, 0.25) IS NOT NULL AS released FROM prepay_t WHERE i > 0;
RESET ROLE;
SELECT pg_temp.rows_of('regress_dp_prepay_other') AS other_role;

-- they expire after dp_agg.prepay_time
SET dp_agg.prepay_time = 1;
SET ROLE regress_dp_prepay_other;
SELECT dp_count(i, 0.25) IS NOT NULL AS released FROM prepay_t WHERE i > 0;
SELECT pg_sleep(0.05);
SELECT dp_count(i, 0.25) IS NOT NULL AS released FROM prepay_t WHERE i > 0;
RESET ROLE;
SELECT pg_temp.rows_of('regress_dp_prepay_other') AS expired;
SET dp_agg.prepay_time = '10s';

-- nothing is prepaid when a window of the budgets ends before the
-- prepaid statements would expire: a budget renewed every second pays for
-- one statement per charge
SELECT dp_agg.set_budget_window('regress_dp_prepay_other', '1 second');
SET ROLE regress_dp_prepay_other;
SELECT dp_count(i, 0.25) IS NOT NULL AS released FROM prepay_t WHERE i > 0;
SELECT dp_count(i, 0.25) IS NOT NULL AS released FROM prepay_t WHERE i > 0;
SELECT dp_count(i, 0.25) IS NOT NULL AS released FROM prepay_t WHERE i > 0;
RESET ROLE;
SELECT pg_temp.rows_of('regress_dp_prepay_other') AS one_second_window;

-- near the end of a budget: 12 statements of 0.25 fit in 3.  A prepayment
-- takes at most half of what the budget would still admit (the second
-- charge: itself and 5 of the 10 left), and every statement the budget
-- pays for is released, none more
CREATE ROLE regress_dp_prepay_end;
GRANT SELECT ON prepay_t TO regress_dp_prepay_end;
SELECT dp_agg.set_budget('regress_dp_prepay_end', 3);
SET dp_agg.prepay = 64;
SET ROLE regress_dp_prepay_end;
CREATE FUNCTION pg_temp.run(n int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    released int := 0;
    refused text := 'none';
    v bigint;
BEGIN
    FOR k IN 1 .. n LOOP
        BEGIN
            SELECT dp_count(i, 0.25) INTO v FROM prepay_t;
            released := released + 1;
        EXCEPTION WHEN SQLSTATE 'PB001' THEN
            refused := coalesce(nullif(refused, 'none'), '') || k || ' ';
        END;
    END LOOP;
    RETURN released || ' released; refused: ' || refused;
END $$;
SELECT pg_temp.run(14);
RESET ROLE;
SELECT pg_temp.rows_of('regress_dp_prepay_end') AS near_the_end,
       pg_temp.spent_of('regress_dp_prepay_end') AS spent;
-- the DBA's view of the spending counts the statements
SELECT statements, epsilon FROM dp_agg.budget_spending
WHERE budget_role = 'regress_dp_prepay_end'::regrole;

-- a group's budget pays for the prepaid statements too, and holds back
-- half of what it would still admit from its other members
CREATE ROLE regress_dp_prepay_team;
CREATE ROLE regress_dp_prepay_a IN ROLE regress_dp_prepay_team;
CREATE ROLE regress_dp_prepay_b IN ROLE regress_dp_prepay_team;
GRANT SELECT ON prepay_t TO regress_dp_prepay_team;
SELECT dp_agg.set_budget('regress_dp_prepay_a', 100);
SELECT dp_agg.set_budget('regress_dp_prepay_b', 100);
SELECT dp_agg.set_group_budget('regress_dp_prepay_team', 2);
SET dp_agg.prepay = 64;
SET ROLE regress_dp_prepay_a;
SELECT pg_temp.run(3);
SET ROLE regress_dp_prepay_b;
SELECT pg_temp.run(5);
RESET ROLE;
SELECT pg_temp.rows_of('regress_dp_prepay_a') AS a, pg_temp.rows_of('regress_dp_prepay_b') AS b,
       (SELECT epsilon_spent FROM dp_agg.budget
        WHERE role = 'regress_dp_prepay_team'::regrole) AS team_spent;

-- 'pld' accounting: each prepaid statement is one more release of its kind
CREATE ROLE regress_dp_prepay_pld;
GRANT SELECT ON prepay_t TO regress_dp_prepay_pld;
SELECT dp_agg.set_budget('regress_dp_prepay_pld', 50, 1e-6, 'pld');
SET dp_agg.prepay = 8;
SET ROLE regress_dp_prepay_pld;
SELECT dp_count(i, 0.5, 1e-9) IS NOT NULL AS released FROM prepay_t;
SELECT dp_count(i, 0.5, 1e-9) IS NOT NULL AS released FROM prepay_t;
RESET ROLE;
SELECT pg_temp.rows_of('regress_dp_prepay_pld') AS pld,
       (SELECT sum((e->>'count')::float8) FROM dp_agg.budget b, jsonb_array_elements(b.pld) e
        WHERE b.role = 'regress_dp_prepay_pld'::regrole) AS releases_by_kind;

RESET dp_agg.prepay;
RESET dp_agg.prepay_time;
DROP FUNCTION pg_temp.run(int);
SELECT dp_agg.drop_budget(r) FROM unnest(ARRAY['regress_dp_prepay', 'regress_dp_prepay_other',
    'regress_dp_prepay_end', 'regress_dp_prepay_a', 'regress_dp_prepay_b', 'regress_dp_prepay_team',
    'regress_dp_prepay_pld']::regrole[]) r;
DROP TABLE prepay_t;
DROP ROLE regress_dp_prepay, regress_dp_prepay_other, regress_dp_prepay_end, regress_dp_prepay_a,
    regress_dp_prepay_b, regress_dp_prepay_team, regress_dp_prepay_pld;
