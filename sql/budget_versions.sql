--
-- budget_versions: the charger finds each budget row at the version it last
-- locked or wrote (a hint, src/accounting/budget_store.c), so that its cost
-- per charge does not grow with the dead versions a long transaction keeps
-- from being pruned.  The hint is used only when it still holds: a change
-- by SQL, a rewrite of the table, a row dropped and made again, another
-- row at the old place, or a transaction holding back the horizon must
-- leave every charge exactly where the index would have put it.
--
-- each statement charged alone, so that its ledger row is its own (charges
-- on leases are folded into rows of several: leases.sql, 016_leases.pl)
SET dp_agg.lease_time = 0;
CREATE ROLE regress_dp_versions;
CREATE ROLE regress_dp_versions_b;
CREATE TABLE bv_t (x int);
INSERT INTO bv_t SELECT generate_series(1, 20);
GRANT SELECT ON bv_t TO regress_dp_versions, regress_dp_versions_b;
SELECT dp_agg.set_budget('regress_dp_versions', 100, 0.5, 'basic');
SELECT dp_agg.set_budget('regress_dp_versions_b', 100, 0.5, 'basic');
CREATE FUNCTION bv_charge(r text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE ok bool;
BEGIN
    EXECUTE format('SET LOCAL ROLE %I', r);
    SELECT dp_count(x, 1.0) IS NOT NULL INTO ok FROM public.bv_t;
    RESET ROLE;
    RETURN ok;
END $$;
CREATE VIEW bv_spent AS
SELECT b.role::text, b.epsilon_limit, b.epsilon_spent
FROM dp_agg.budget b
WHERE b.role::text IN ('regress_dp_versions', 'regress_dp_versions_b')
ORDER BY 1;

-- charges in a row: each finds the version the one before wrote
SELECT bv_charge('regress_dp_versions'), bv_charge('regress_dp_versions'), bv_charge('regress_dp_versions_b');
SELECT * FROM bv_spent;

-- a change by SQL (a new version the charger did not write)
SELECT dp_agg.set_budget('regress_dp_versions', 50, 0.5, 'basic');
SELECT bv_charge('regress_dp_versions');
SELECT * FROM bv_spent;

-- a rewrite of the table: every TID changes
VACUUM FULL dp_agg.budget;
SELECT bv_charge('regress_dp_versions'), bv_charge('regress_dp_versions_b');
SELECT * FROM bv_spent;

-- dropped and made again (another row where the old one was, once pruned)
SELECT dp_agg.drop_budget('regress_dp_versions');
VACUUM dp_agg.budget;
SELECT dp_agg.set_budget('regress_dp_versions', 3, 0.5, 'basic');
SELECT bv_charge('regress_dp_versions'), bv_charge('regress_dp_versions_b');
SELECT * FROM bv_spent;

-- the row last seen on a page a VACUUM then truncated away: filler budgets
-- after the other rows, the row among them, charged, then all dropped
SELECT dp_agg.drop_budget('regress_dp_versions_b');
DO $$
BEGIN
    FOR i IN 1..60 LOOP
        EXECUTE format('CREATE ROLE regress_dp_versions_f%s', i);
        PERFORM dp_agg.set_budget(format('regress_dp_versions_f%s', i)::regrole, 1, 0.5, 'basic');
    END LOOP;
END $$;
SELECT dp_agg.set_budget('regress_dp_versions_b', 100, 0.5, 'basic');
SELECT (ctid::text::point)[0] > 0 AS on_a_later_page FROM dp_agg.budget
WHERE role::text = 'regress_dp_versions_b';
SELECT bv_charge('regress_dp_versions_b');
SELECT dp_agg.drop_budget('regress_dp_versions_b');
DO $$
BEGIN
    FOR i IN 1..60 LOOP
        PERFORM dp_agg.drop_budget(format('regress_dp_versions_f%s', i)::regrole);
        EXECUTE format('DROP ROLE regress_dp_versions_f%s', i);
    END LOOP;
END $$;
VACUUM dp_agg.budget;
SELECT dp_agg.set_budget('regress_dp_versions_b', 100, 0.5, 'basic');
SELECT bv_charge('regress_dp_versions_b');
SELECT * FROM bv_spent;

-- the limit still holds exactly: 3 charged, the fourth refused
SELECT bv_charge('regress_dp_versions'), bv_charge('regress_dp_versions');
SELECT bv_charge('regress_dp_versions');
SELECT * FROM bv_spent;

DROP VIEW bv_spent;
DROP FUNCTION bv_charge(text);
DROP TABLE bv_t;
SELECT dp_agg.drop_budget('regress_dp_versions');
SELECT dp_agg.drop_budget('regress_dp_versions_b');
DROP ROLE regress_dp_versions;
DROP ROLE regress_dp_versions_b;
