--
-- protect_settings: no setting reports on the execution of an untrusted
-- role's statement over a protected relation (README, "Protected tables",
-- "Settings").
--
\set SHOW_CONTEXT never
\set VERBOSITY default

-- Every setting a role other than a superuser can change (contexts user
-- and superuser, which GRANT SET ON PARAMETER opens) is classified, on the
-- running version of PostgreSQL, with the modules it can load here.  This
-- query fails the test on a version that adds a setting dp_agg does not
-- know: classify it in src/protect_settings.c and the README.
DO $$
BEGIN
    EXECUTE 'LOAD ''plpgsql''';
    BEGIN
        EXECUTE 'LOAD ''auto_explain''';
    EXCEPTION WHEN undefined_file THEN
        NULL;                   -- not built with this PostgreSQL
    END;
END $$;
SELECT s.name, s.context FROM pg_settings s
WHERE s.context IN ('user', 'superuser')
  AND NOT EXISTS (SELECT FROM dp_agg.setting_classes() c WHERE lower(c.name) = lower(s.name))
ORDER BY 1;
-- the classes, and what is enforced
SELECT class, count(*) > 0 AS some FROM dp_agg.setting_classes() GROUP BY 1 ORDER BY 1;
SELECT name, quiet FROM dp_agg.setting_classes() WHERE class IN ('forced', 'refused') ORDER BY class, name;
-- each name once
SELECT lower(name) FROM dp_agg.setting_classes() GROUP BY 1 HAVING count(*) > 1;

CREATE ROLE regress_ps_owner;
CREATE ROLE regress_ps_analyst;
CREATE TABLE ps_t (id int, g int, w text);
INSERT INTO ps_t SELECT i, i % 3, repeat('w', i % 50) FROM generate_series(1, 3000) i;
ALTER TABLE ps_t OWNER TO regress_ps_owner;
SELECT dp_agg.protect('ps_t');
SELECT dp_agg.grant_access('ps_t', 'regress_ps_analyst');
SELECT dp_agg.set_budget('regress_ps_analyst', 1e12, 0.5);
GRANT SET ON PARAMETER log_executor_stats, temp_file_limit, log_temp_files TO regress_ps_analyst;

-- forced: while the executor runs, trace_sort is off and client_min_messages
-- at least notice: no LOG line (the sort of GROUP BY g, with hashing off;
-- the output of a released group reads the sort while it runs)
SET ROLE regress_ps_analyst;
SET dp_agg.epsilon = 1e9;
SET dp_agg.selection_epsilon = 1;
SET dp_agg.selection_delta = 1e-6;
SET enable_hashagg = off;
SET trace_sort = on;
SET client_min_messages = log;
SET log_temp_files = 0;
SET work_mem = '64kB';
SELECT g, dp_count(*) AS n FROM ps_t GROUP BY g ORDER BY g;
SHOW trace_sort;
SHOW client_min_messages;
-- exit_on_error would end the session when a trapped call failed on a row
SET exit_on_error = on;
SELECT dp_count(*) AS n FROM ps_t WHERE 1 / (g - 1) = 1;
SHOW exit_on_error;
RESET exit_on_error;
RESET log_temp_files;
RESET work_mem;
RESET client_min_messages;
RESET trace_sort;
-- refused: log_executor_stats prints its report after the executor
-- returned; temp_file_limit's error would count the rows a sort wrote
SET log_executor_stats = on;
SELECT dp_count(*) AS n FROM ps_t;
RESET log_executor_stats;
SET temp_file_limit = 0;
SELECT g, dp_count(*) AS n FROM ps_t GROUP BY g ORDER BY g;
-- (a plan that writes no temporary file is not refused)
SELECT dp_count(*) AS n FROM ps_t;
RESET temp_file_limit;
-- a cursor's FETCH runs under the same rules, with the settings of the
-- moment
BEGIN;
DECLARE c CURSOR FOR SELECT g, dp_count(*) AS n FROM ps_t GROUP BY g ORDER BY g;
FETCH 1 FROM c;
SET LOCAL log_executor_stats = on;
FETCH 1 FROM c;
ROLLBACK;
-- the abort of a transaction drops the cursor without the executor's end:
-- the temporary files of its sort are closed then, and log_temp_files
-- would report their sizes; the abort is quiet too (here, with the spill
-- of work_mem = 64kB)
SET work_mem = '64kB';
SET log_temp_files = 0;
BEGIN;
DECLARE c CURSOR FOR SELECT g, dp_count(*) AS n FROM ps_t GROUP BY g ORDER BY g;
FETCH 1 FROM c;
SET LOCAL client_min_messages = log;
ROLLBACK;
SHOW client_min_messages;
BEGIN;
SAVEPOINT s;
DECLARE c CURSOR FOR SELECT g, dp_count(*) AS n FROM ps_t GROUP BY g ORDER BY g;
FETCH 1 FROM c;
SET LOCAL client_min_messages = log;
ROLLBACK TO SAVEPOINT s;
COMMIT;
RESET log_temp_files;
RESET work_mem;
RESET enable_hashagg;
-- a placeholder that no module reads: ignored (a setting of a loaded module
-- that dp_agg does not know, changed by the session, would be refused)
SET dp_agg_test.placeholder = 'x';
SELECT dp_count(*) AS n FROM ps_t;
RESET ROLE;
-- (plpgsql is loaded: a change of one of its settings is classified)
SET plpgsql.extra_warnings = 'all';
SET ROLE regress_ps_analyst;
SELECT dp_count(*) AS n FROM ps_t;
RESET ROLE;
RESET plpgsql.extra_warnings;

-- cleanup
RESET dp_agg.epsilon;
RESET dp_agg.selection_epsilon;
RESET dp_agg.selection_delta;
REVOKE SET ON PARAMETER log_executor_stats, temp_file_limit, log_temp_files FROM regress_ps_analyst;
SELECT dp_agg.unprotect('ps_t');
DROP TABLE ps_t;
DELETE FROM dp_agg.budget WHERE role::text LIKE 'regress_ps_%';
DELETE FROM dp_agg.ledger WHERE role::text LIKE 'regress_ps_%';
DROP ROLE regress_ps_owner, regress_ps_analyst;
