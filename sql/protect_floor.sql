--
-- protect_floor: the floor on epsilon for untrusted roles over a protected
-- relation (README, "Protected tables", rule 7), at its boundary.  Each DP
-- call of such a role, and the private selection of its groups, must cost
-- at least dp_agg.protected_min_epsilon (0.01 by default, a superuser's
-- setting, also per role): just below it the statement fails before it is
-- charged (42501), at it the statement runs and is charged.
--
\set VERBOSITY terse
SELECT current_user AS pf_superuser \gset
CREATE ROLE regress_pf_owner;
CREATE ROLE regress_pf_analyst LOGIN;
CREATE TABLE pf_t (id int, g int);
INSERT INTO pf_t SELECT i, i % 3 FROM generate_series(1, 300) i;
ALTER TABLE pf_t OWNER TO regress_pf_owner;
SELECT dp_agg.protect('pf_t');
SELECT dp_agg.grant_access('pf_t', 'regress_pf_analyst');
SELECT dp_agg.set_budget('regress_pf_analyst', 1e6, 0.5);
CREATE FUNCTION pf_run(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'ran';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLERRM;
END $$;
SHOW dp_agg.protected_min_epsilon;

SET ROLE regress_pf_analyst;
SELECT dp_count(id, 0.0099) IS NOT NULL AS released FROM pf_t;
SELECT dp_count(id, 0.01) IS NOT NULL AS released FROM pf_t;
SELECT dp_sum(id, 0, 300, 0.0099) IS NOT NULL AS released FROM pf_t;
SELECT dp_avg(id, 0, 300, 0.01) IS NOT NULL AS released FROM pf_t;
-- the private selection of the groups is a call too (the groups it
-- releases are noisy: only whether the statement ran is shown)
SET dp_agg.selection_delta = 1e-6;
SET dp_agg.selection_epsilon = 0.0099;
SELECT pf_run('SELECT g, dp_count(id, 1) FROM pf_t GROUP BY g');
SET dp_agg.selection_epsilon = 0.01;
SELECT pf_run('SELECT g, dp_count(id, 1) FROM pf_t GROUP BY g');
-- only the charged statements are in the ledger
SELECT count(*) AS charged, array_agg(epsilon ORDER BY id) AS epsilons FROM dp_agg.my_ledger;
RESET ROLE;

-- a floor for one role, from its next session
ALTER ROLE regress_pf_analyst SET dp_agg.protected_min_epsilon = 0.5;
\c - regress_pf_analyst
SHOW dp_agg.protected_min_epsilon;
SELECT dp_count(id, 0.49) IS NOT NULL AS released FROM pf_t;
SELECT dp_count(id, 0.5) IS NOT NULL AS released FROM pf_t;
\c - :pf_superuser
ALTER ROLE regress_pf_analyst RESET dp_agg.protected_min_epsilon;

SELECT dp_agg.unprotect('pf_t');
DELETE FROM dp_agg.ledger WHERE role = 'regress_pf_analyst'::regrole;
DELETE FROM dp_agg.budget WHERE role = 'regress_pf_analyst'::regrole;
DROP FUNCTION pf_run(text);
DROP TABLE pf_t;
DROP ROLE regress_pf_analyst, regress_pf_owner;
