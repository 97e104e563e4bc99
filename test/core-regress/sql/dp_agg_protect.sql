--
-- dp_agg_protect: run first in the database of test/core-regress.sh's
-- dp_agg side, after pg_regress created dp_agg (--load-extension): one
-- protected table, with rows and statistics, that every role may read
-- through DP statements, and a role untrusted for it that reads it once.
-- PostgreSQL's own tests then run beside it.
--
CREATE SCHEMA dp_agg_core;
CREATE TABLE dp_agg_core.secret(x int);
INSERT INTO dp_agg_core.secret SELECT g FROM generate_series(1, 1000) g;
ANALYZE dp_agg_core.secret;
SELECT dp_agg.protect('dp_agg_core.secret');
GRANT USAGE ON SCHEMA dp_agg_core TO PUBLIC;
GRANT SELECT ON dp_agg_core.secret TO PUBLIC;
-- the protection is in force for an untrusted role
CREATE ROLE dp_agg_core_analyst;
SET ROLE dp_agg_core_analyst;
SELECT count(*) FROM dp_agg_core.secret;
SELECT pg_stat_get_live_tuples('dp_agg_core.secret'::regclass);
SELECT count(*) FROM pg_stats WHERE tablename = 'secret';
RESET ROLE;
DROP ROLE dp_agg_core_analyst;
