--
-- budget: the catalog, its administration and its privileges.
--
\set SHOW_CONTEXT never
\d dp_agg.budget
\d dp_agg.ledger
-- both tables (and the ledger's sequence) are dumped by pg_dump
SELECT unnest(extconfig)::regclass AS dumped FROM pg_extension WHERE extname = 'dp_agg' ORDER BY 1;

CREATE ROLE regress_dp_analyst;
CREATE ROLE regress_dp_other;
CREATE ROLE regress_dp_dba;
CREATE TABLE visits (id int, age int, cost numeric);
INSERT INTO visits SELECT i, 20 + i % 60, (i % 100) * 1.5 FROM generate_series(1, 500) i;
GRANT SELECT ON visits TO regress_dp_analyst, regress_dp_other;

-- set_budget creates and changes limits, never the amounts spent
SELECT dp_agg.set_budget('regress_dp_analyst', 1.5);
SELECT dp_agg.set_budget('regress_dp_other', 2, 1e-6);
SELECT role, epsilon_limit, delta_limit, epsilon_spent, delta_spent
FROM dp_agg.budget WHERE role::text LIKE 'regress_dp_%' ORDER BY 1;
UPDATE dp_agg.budget SET epsilon_spent = 0.25 WHERE role = 'regress_dp_analyst'::regrole;
SELECT dp_agg.set_budget('regress_dp_analyst', 2, 0);
SELECT role, epsilon_limit, delta_limit, epsilon_spent
FROM dp_agg.budget WHERE role = 'regress_dp_analyst'::regrole;
-- bad limits
SELECT dp_agg.set_budget('regress_dp_analyst', -1);
SELECT dp_agg.set_budget('regress_dp_analyst', 'NaN');
SELECT dp_agg.set_budget('regress_dp_analyst', 'Infinity');
SELECT dp_agg.set_budget('regress_dp_analyst', 1, 1);
SELECT dp_agg.set_budget('regress_dp_analyst', NULL);
SELECT dp_agg.set_budget(NULL, 1);
SELECT dp_agg.set_budget('regress_dp_nobody', 1);
SELECT dp_agg.set_budget('regress_dp_analyst', 1, 0, 'fancy');
SELECT dp_agg.set_budget('regress_dp_analyst', 1, 0, NULL);

-- reset_budget puts the amounts spent back to 0 and writes the ledger
SELECT dp_agg.reset_budget('regress_dp_analyst');
SELECT epsilon_spent, delta_spent FROM dp_agg.budget WHERE role = 'regress_dp_analyst'::regrole;
SELECT kind, epsilon, delta, detail ->> 'epsilon_spent_before' AS before
FROM dp_agg.ledger WHERE role = 'regress_dp_analyst'::regrole ORDER BY id;
SELECT dp_agg.reset_budget('regress_dp_dba');

-- Privileges.  An analyst can read only its own budget and ledger, through
-- the views, and can write nothing.
SET ROLE regress_dp_analyst;
SELECT * FROM dp_agg.budget;
SELECT * FROM dp_agg.ledger;
INSERT INTO dp_agg.budget (role, epsilon_limit) VALUES ('regress_dp_analyst', 100);
UPDATE dp_agg.budget SET epsilon_limit = 100;
DELETE FROM dp_agg.ledger;
TRUNCATE dp_agg.ledger;
SELECT dp_agg.set_budget('regress_dp_analyst', 100);
SELECT dp_agg.reset_budget('regress_dp_analyst');
SELECT role, epsilon_limit, epsilon_spent, epsilon_remaining, delta_remaining FROM dp_agg.my_budget;
SELECT kind, epsilon FROM dp_agg.my_ledger ORDER BY id;
-- a leaky function cannot see other roles' rows through the views
-- (security_barrier)
CREATE FUNCTION pg_temp.leak(r regrole) RETURNS bool LANGUAGE plpgsql COST 0.0000001 AS $$
BEGIN RAISE NOTICE 'saw %', r; RETURN true; END $$;
SELECT role FROM dp_agg.my_budget WHERE pg_temp.leak(role);
-- the catalog functions that only the extension may call
SELECT dp_agg.noise_sample('laplace', 1, 1);
RESET ROLE;

-- A DBA granted EXECUTE manages budgets without any privilege on the tables.
GRANT EXECUTE ON FUNCTION dp_agg.set_budget(regrole, float8, float8, text),
                          dp_agg.reset_budget(regrole) TO regress_dp_dba;
SET ROLE regress_dp_dba;
SELECT dp_agg.set_budget('regress_dp_analyst', 1);
SELECT * FROM dp_agg.budget;
RESET ROLE;
SELECT role, epsilon_limit FROM dp_agg.budget WHERE role = 'regress_dp_analyst'::regrole;

-- The role charged is current_user: the analyst spends its own budget.
SET ROLE regress_dp_analyst;
SELECT dp_count(id, 0.25) IS NOT NULL AS released FROM visits;
SELECT dp_sum(age, 0, 100, 0.5) IS NOT NULL AS released FROM visits;
SELECT epsilon_spent, epsilon_remaining FROM dp_agg.my_budget;
SELECT kind, epsilon, query FROM dp_agg.my_ledger ORDER BY id;
-- more than what remains: refused, nothing charged
SELECT dp_count(id, 0.5) FROM visits;
SELECT epsilon_spent FROM dp_agg.my_budget;
RESET ROLE;
SELECT role, epsilon_spent FROM dp_agg.budget WHERE role::text LIKE 'regress_dp_%' ORDER BY 1;

-- A role without a budget cannot release.
GRANT SELECT ON visits TO regress_dp_dba;
SET ROLE regress_dp_dba;
SELECT dp_count(id, 0.1) FROM visits;
RESET ROLE;

-- SECURITY DEFINER: the owner of the function is current_user inside it,
-- so the owner's budget pays.
CREATE FUNCTION count_visits() RETURNS bigint LANGUAGE sql SECURITY DEFINER
AS 'SELECT dp_count(id, 0.125) FROM visits';
ALTER FUNCTION count_visits() OWNER TO regress_dp_other;
SET ROLE regress_dp_analyst;
SELECT count_visits() IS NOT NULL AS released;
RESET ROLE;
SELECT role, epsilon_spent FROM dp_agg.budget WHERE role::text LIKE 'regress_dp_%' ORDER BY 1;

-- A transaction that locks the budget (set_budget, reset_budget, FOR
-- UPDATE) cannot release: its charge would wait for itself.
BEGIN;
SELECT dp_agg.set_budget('regress_dp_other', 3);
SELECT dp_count(id, 0.125) FROM visits;
ROLLBACK;
BEGIN;
SELECT 1 AS locked FROM dp_agg.budget WHERE role = current_user::regrole FOR UPDATE;
SELECT dp_count(id, 0.125) FROM visits;
ROLLBACK;

-- clean up (superusers may write the catalog directly)
DROP FUNCTION count_visits();
DROP FUNCTION pg_temp.leak(regrole);
DELETE FROM dp_agg.ledger WHERE role::text LIKE 'regress_dp_%';
DELETE FROM dp_agg.budget WHERE role::text LIKE 'regress_dp_%';
DROP TABLE visits;
REVOKE EXECUTE ON FUNCTION dp_agg.set_budget(regrole, float8, float8, text),
                           dp_agg.reset_budget(regrole) FROM regress_dp_dba;
DROP ROLE regress_dp_analyst, regress_dp_other, regress_dp_dba;
