--
-- leases: a session repeating a DP statement charges it on the budgets the
-- charger leased to it (dp_agg.lease_time; src/accounting/lease.c), and the
-- charger folds those charges into dp_agg.budget and dp_agg.ledger.  What
-- an analyst and a DBA read is the same as without leases: every charge,
-- at once (fold on read).  Crashes, races and windows: 016_leases.pl.
--
SET dp_agg.group_keys = 'public';
-- the charger's setting turns leases on (off by default)
ALTER SYSTEM SET dp_agg.lease_time = '1s';
SELECT pg_reload_conf();
SELECT pg_sleep(0.5);
CREATE TABLE lease_t (i int);
INSERT INTO lease_t SELECT g FROM generate_series(1, 100) g;
CREATE ROLE regress_dp_lessee;
GRANT SELECT ON lease_t TO regress_dp_lessee;
SELECT dp_agg.set_budget('regress_dp_lessee', 10, 0);
SHOW dp_agg.lease_time;

-- twelve statements of 0.125: the ledger and the budget hold each once
SET ROLE regress_dp_lessee;
SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM lease_t;
SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM lease_t \g /dev/null
SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM lease_t \g /dev/null
SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM lease_t \g /dev/null
SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM lease_t \g /dev/null
SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM lease_t \g /dev/null
SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM lease_t \g /dev/null
SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM lease_t \g /dev/null
SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM lease_t \g /dev/null
SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM lease_t \g /dev/null
SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM lease_t \g /dev/null
SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM lease_t \g /dev/null
SELECT epsilon_spent, epsilon_remaining FROM dp_agg.my_budget;
SELECT sum(statements) AS statements, sum(epsilon) AS epsilon, max(statements) > 1 AS folded_together
FROM dp_agg.my_ledger WHERE kind = 'charge';
RESET ROLE;
-- read, the journal is empty: the read folded it
SELECT count(*) AS journaled FROM dp_agg.journal;

-- a DBA's change applies to the next statement
SELECT dp_agg.set_budget('regress_dp_lessee', 1.6, 0);
SET ROLE regress_dp_lessee;
SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM lease_t;
SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM lease_t;
RESET ROLE;
SELECT dp_agg.set_budget('regress_dp_lessee', 10, 0);

-- a session with dp_agg.lease_time = 0 charges each statement alone; only
-- a superuser sets it
SET dp_agg.lease_time = 0;
SET ROLE regress_dp_lessee;
SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM lease_t \g /dev/null
SELECT dp_count(i, 0.125) IS NOT NULL AS released FROM lease_t \g /dev/null
SELECT statements FROM dp_agg.my_ledger WHERE kind = 'charge' ORDER BY id DESC LIMIT 2;
SET dp_agg.lease_time = '1s';
RESET ROLE;
RESET dp_agg.lease_time;

-- the journal, the function that folds it and the trigger that ends leases
-- are dp_agg's own
SET ROLE regress_dp_lessee;
SELECT count(*) FROM dp_agg.journal;
SELECT dp_agg_internal.fold_journal();
RESET ROLE;
SELECT tgname, tgrelid::regclass, tgtype FROM pg_trigger
WHERE tgname = 'dp_agg_recall_leases' ORDER BY tgrelid::regclass::text;

RESET ROLE;
DROP TABLE lease_t;
SELECT dp_agg.drop_budget('regress_dp_lessee');
DROP ROLE regress_dp_lessee;
ALTER SYSTEM RESET dp_agg.lease_time;
SELECT pg_reload_conf();
