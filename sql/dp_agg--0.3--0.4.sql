/* dp_agg: update from 0.3 to 0.4 (ALTER EXTENSION dp_agg UPDATE) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION dp_agg UPDATE TO '0.4'" to load this file. \quit

-- Each section below is one capability of 0.4; a new install runs 0.1 and
-- every update script, so this script is also part of every install.

-- Protected tables: statistics refused only where they count protected rows.
-- The planner calls the statistics of one relation (pg_stat_get_numscans(oid)
-- and its kin) through dp_agg.relation_statistic, which checks the relation
-- before calling the function, and filters the scans of pg_statistic and
-- pg_statistic_ext_data with dp_agg.statistics_visible (README, "Protected
-- tables", rule 5).
CREATE FUNCTION dp_agg.relation_statistic(relation oid, statistic regprocedure, result anyelement)
RETURNS anyelement
AS 'MODULE_PATHNAME', 'dp_relation_statistic'
LANGUAGE C STABLE PARALLEL RESTRICTED;
COMMENT ON FUNCTION dp_agg.relation_statistic(oid, regprocedure, anyelement) IS
'statistic(relation) if the current role may read the statistics of the relation (it is not protected, or the role is trusted for it or for statistics), else an error; result is a NULL of the statistic''s type. The planner puts it around calls of pg_stat_get_ functions of one relation';

CREATE FUNCTION dp_agg.relation_statistic_volatile(relation oid, statistic regprocedure, result anyelement)
RETURNS anyelement
AS 'MODULE_PATHNAME', 'dp_relation_statistic'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION dp_agg.relation_statistic_volatile(oid, regprocedure, anyelement) IS
'dp_agg.relation_statistic for the volatile statistics functions (pg_stat_get_xact_*)';

CREATE FUNCTION dp_agg.statistics_visible(catalog regclass, key oid)
RETURNS boolean
AS 'MODULE_PATHNAME', 'dp_statistics_visible'
LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.statistics_visible(regclass, oid) IS
'may the current role read this row of pg_statistic (key: starelid) or pg_statistic_ext_data (key: stxoid)? false for the statistics of a protected relation the role is not trusted for; the planner filters the scans of these catalogs with it';
