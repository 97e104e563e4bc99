/* dp_agg--0.1.sql: differentially private aggregates */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION dp_agg" to load this file. \quit

-- Every name this script leaves unqualified resolves in pg_catalog only,
-- never in the schema CREATE EXTENSION targets (@extschema@, which the
-- script names where it means it): a role that may create objects there
-- (public, in a database upgraded from PostgreSQL 14 or older) would
-- otherwise have its own functions and operators, exact matches where
-- pg_catalog's need a cast, run by this script as a superuser or bound
-- into its CHECK constraints.  SET LOCAL, not SET: the extension's
-- machinery saved search_path when the script began and restores it when
-- the script ends (a plain SET would outlive the script, in the session
-- that ran CREATE EXTENSION).
SET LOCAL search_path = pg_catalog, pg_temp;

-- The aggregates go to the schema CREATE EXTENSION targets (public by
-- default), so that analysts call them unqualified; everything else lives in
-- the schema dp_agg.
CREATE SCHEMA dp_agg;
COMMENT ON SCHEMA dp_agg IS 'dp_agg: support functions, calculators and privacy budgets';
GRANT USAGE ON SCHEMA dp_agg TO PUBLIC;

--------------------------------------------------------------------------
-- Aggregate support functions.  EXECUTE is revoked from PUBLIC: running an
-- aggregate needs no privilege on them, and nobody should build other
-- aggregates out of them.  They refuse to run outside a priced DP aggregate
-- anyway.
--------------------------------------------------------------------------

CREATE FUNCTION dp_agg.count_star_transfn(internal)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_count_star_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.count_star_transfn(internal) IS 'transition function of dp_count(*)';

CREATE FUNCTION dp_agg.count_transfn(internal, anyelement)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_count_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.count_transfn(internal, anyelement) IS 'transition function of dp_count';

CREATE FUNCTION dp_agg.count_transfn(internal, anyelement, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_count_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.count_transfn(internal, anyelement, float8) IS 'transition function of dp_count';

CREATE FUNCTION dp_agg.count_transfn(internal, anyelement, float8, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_count_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.count_transfn(internal, anyelement, float8, float8) IS 'transition function of dp_count';

CREATE FUNCTION dp_agg.sum_transfn(internal, int2, int2, int2)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_int2_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.sum_transfn(internal, int2, int2, int2) IS 'transition function of dp_sum(smallint)';

CREATE FUNCTION dp_agg.sum_transfn(internal, int2, int2, int2, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_int2_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.sum_transfn(internal, int2, int2, int2, float8) IS 'transition function of dp_sum(smallint)';

CREATE FUNCTION dp_agg.sum_transfn(internal, int2, int2, int2, float8, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_int2_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.sum_transfn(internal, int2, int2, int2, float8, float8) IS 'transition function of dp_sum(smallint)';

CREATE FUNCTION dp_agg.sum_transfn(internal, int4, int4, int4)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_int4_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.sum_transfn(internal, int4, int4, int4) IS 'transition function of dp_sum(integer)';

CREATE FUNCTION dp_agg.sum_transfn(internal, int4, int4, int4, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_int4_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.sum_transfn(internal, int4, int4, int4, float8) IS 'transition function of dp_sum(integer)';

CREATE FUNCTION dp_agg.sum_transfn(internal, int4, int4, int4, float8, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_int4_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.sum_transfn(internal, int4, int4, int4, float8, float8) IS 'transition function of dp_sum(integer)';

CREATE FUNCTION dp_agg.sum_transfn(internal, int8, int8, int8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_int8_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.sum_transfn(internal, int8, int8, int8) IS 'transition function of dp_sum(bigint)';

CREATE FUNCTION dp_agg.sum_transfn(internal, int8, int8, int8, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_int8_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.sum_transfn(internal, int8, int8, int8, float8) IS 'transition function of dp_sum(bigint)';

CREATE FUNCTION dp_agg.sum_transfn(internal, int8, int8, int8, float8, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_int8_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.sum_transfn(internal, int8, int8, int8, float8, float8) IS 'transition function of dp_sum(bigint)';

CREATE FUNCTION dp_agg.sum_transfn(internal, float4, float4, float4)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_float4_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.sum_transfn(internal, float4, float4, float4) IS 'transition function of dp_sum(real)';

CREATE FUNCTION dp_agg.sum_transfn(internal, float4, float4, float4, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_float4_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.sum_transfn(internal, float4, float4, float4, float8) IS 'transition function of dp_sum(real)';

CREATE FUNCTION dp_agg.sum_transfn(internal, float4, float4, float4, float8, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_float4_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.sum_transfn(internal, float4, float4, float4, float8, float8) IS 'transition function of dp_sum(real)';

CREATE FUNCTION dp_agg.sum_transfn(internal, float8, float8, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_float8_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.sum_transfn(internal, float8, float8, float8) IS 'transition function of dp_sum(double precision)';

CREATE FUNCTION dp_agg.sum_transfn(internal, float8, float8, float8, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_float8_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.sum_transfn(internal, float8, float8, float8, float8) IS 'transition function of dp_sum(double precision)';

CREATE FUNCTION dp_agg.sum_transfn(internal, float8, float8, float8, float8, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_float8_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.sum_transfn(internal, float8, float8, float8, float8, float8) IS 'transition function of dp_sum(double precision)';

CREATE FUNCTION dp_agg.sum_transfn(internal, numeric, numeric, numeric)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_numeric_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.sum_transfn(internal, numeric, numeric, numeric) IS 'transition function of dp_sum(numeric)';

CREATE FUNCTION dp_agg.sum_transfn(internal, numeric, numeric, numeric, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_numeric_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.sum_transfn(internal, numeric, numeric, numeric, float8) IS 'transition function of dp_sum(numeric)';

CREATE FUNCTION dp_agg.sum_transfn(internal, numeric, numeric, numeric, float8, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_numeric_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.sum_transfn(internal, numeric, numeric, numeric, float8, float8) IS 'transition function of dp_sum(numeric)';

CREATE FUNCTION dp_agg.avg_transfn(internal, int2, int2, int2)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_int2_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.avg_transfn(internal, int2, int2, int2) IS 'transition function of dp_avg(smallint)';

CREATE FUNCTION dp_agg.avg_transfn(internal, int2, int2, int2, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_int2_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.avg_transfn(internal, int2, int2, int2, float8) IS 'transition function of dp_avg(smallint)';

CREATE FUNCTION dp_agg.avg_transfn(internal, int2, int2, int2, float8, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_int2_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.avg_transfn(internal, int2, int2, int2, float8, float8) IS 'transition function of dp_avg(smallint)';

CREATE FUNCTION dp_agg.avg_transfn(internal, int4, int4, int4)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_int4_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.avg_transfn(internal, int4, int4, int4) IS 'transition function of dp_avg(integer)';

CREATE FUNCTION dp_agg.avg_transfn(internal, int4, int4, int4, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_int4_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.avg_transfn(internal, int4, int4, int4, float8) IS 'transition function of dp_avg(integer)';

CREATE FUNCTION dp_agg.avg_transfn(internal, int4, int4, int4, float8, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_int4_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.avg_transfn(internal, int4, int4, int4, float8, float8) IS 'transition function of dp_avg(integer)';

CREATE FUNCTION dp_agg.avg_transfn(internal, int8, int8, int8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_int8_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.avg_transfn(internal, int8, int8, int8) IS 'transition function of dp_avg(bigint)';

CREATE FUNCTION dp_agg.avg_transfn(internal, int8, int8, int8, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_int8_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.avg_transfn(internal, int8, int8, int8, float8) IS 'transition function of dp_avg(bigint)';

CREATE FUNCTION dp_agg.avg_transfn(internal, int8, int8, int8, float8, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_int8_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.avg_transfn(internal, int8, int8, int8, float8, float8) IS 'transition function of dp_avg(bigint)';

CREATE FUNCTION dp_agg.avg_transfn(internal, float4, float4, float4)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_float4_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.avg_transfn(internal, float4, float4, float4) IS 'transition function of dp_avg(real)';

CREATE FUNCTION dp_agg.avg_transfn(internal, float4, float4, float4, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_float4_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.avg_transfn(internal, float4, float4, float4, float8) IS 'transition function of dp_avg(real)';

CREATE FUNCTION dp_agg.avg_transfn(internal, float4, float4, float4, float8, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_float4_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.avg_transfn(internal, float4, float4, float4, float8, float8) IS 'transition function of dp_avg(real)';

CREATE FUNCTION dp_agg.avg_transfn(internal, float8, float8, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_float8_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.avg_transfn(internal, float8, float8, float8) IS 'transition function of dp_avg(double precision)';

CREATE FUNCTION dp_agg.avg_transfn(internal, float8, float8, float8, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_float8_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.avg_transfn(internal, float8, float8, float8, float8) IS 'transition function of dp_avg(double precision)';

CREATE FUNCTION dp_agg.avg_transfn(internal, float8, float8, float8, float8, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_float8_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.avg_transfn(internal, float8, float8, float8, float8, float8) IS 'transition function of dp_avg(double precision)';

CREATE FUNCTION dp_agg.avg_transfn(internal, numeric, numeric, numeric)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_numeric_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.avg_transfn(internal, numeric, numeric, numeric) IS 'transition function of dp_avg(numeric)';

CREATE FUNCTION dp_agg.avg_transfn(internal, numeric, numeric, numeric, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_numeric_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.avg_transfn(internal, numeric, numeric, numeric, float8) IS 'transition function of dp_avg(numeric)';

CREATE FUNCTION dp_agg.avg_transfn(internal, numeric, numeric, numeric, float8, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_sum_numeric_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.avg_transfn(internal, numeric, numeric, numeric, float8, float8) IS 'transition function of dp_avg(numeric)';

CREATE FUNCTION dp_agg.combinefn(internal, internal)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_agg_combine'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.combinefn(internal, internal) IS 'combines partial states of the DP aggregates';

CREATE FUNCTION dp_agg.serialfn(internal)
RETURNS bytea AS 'MODULE_PATHNAME', 'dp_agg_serialize'
LANGUAGE C STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.serialfn(internal) IS 'serializes a partial state of a DP aggregate (only between processes)';

CREATE FUNCTION dp_agg.deserialfn(bytea, internal)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_agg_deserialize'
LANGUAGE C STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.deserialfn(bytea, internal) IS 'deserializes a partial state of a DP aggregate (only between processes)';

CREATE FUNCTION dp_agg.count_finalfn(internal)
RETURNS bigint AS 'MODULE_PATHNAME', 'dp_count_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.count_finalfn(internal) IS 'releases a noisy count';

CREATE FUNCTION dp_agg.sum_int_finalfn(internal)
RETURNS bigint AS 'MODULE_PATHNAME', 'dp_sum_int_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.sum_int_finalfn(internal) IS 'releases a noisy sum of integers';

CREATE FUNCTION dp_agg.sum_float_finalfn(internal)
RETURNS double precision AS 'MODULE_PATHNAME', 'dp_sum_float_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.sum_float_finalfn(internal) IS 'releases a noisy sum of floating-point values';

CREATE FUNCTION dp_agg.sum_numeric_finalfn(internal)
RETURNS numeric AS 'MODULE_PATHNAME', 'dp_sum_numeric_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.sum_numeric_finalfn(internal) IS 'releases a noisy sum of numerics';

CREATE FUNCTION dp_agg.avg_float_finalfn(internal)
RETURNS double precision AS 'MODULE_PATHNAME', 'dp_avg_float_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.avg_float_finalfn(internal) IS 'releases a noisy average';

CREATE FUNCTION dp_agg.avg_numeric_finalfn(internal)
RETURNS numeric AS 'MODULE_PATHNAME', 'dp_avg_numeric_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.avg_numeric_finalfn(internal) IS 'releases a noisy average of numerics';

REVOKE ALL ON FUNCTION

    dp_agg.count_star_transfn(internal),
    dp_agg.count_transfn(internal, anyelement),
    dp_agg.count_transfn(internal, anyelement, float8),
    dp_agg.count_transfn(internal, anyelement, float8, float8),
    dp_agg.sum_transfn(internal, int2, int2, int2),
    dp_agg.sum_transfn(internal, int2, int2, int2, float8),
    dp_agg.sum_transfn(internal, int2, int2, int2, float8, float8),
    dp_agg.sum_transfn(internal, int4, int4, int4),
    dp_agg.sum_transfn(internal, int4, int4, int4, float8),
    dp_agg.sum_transfn(internal, int4, int4, int4, float8, float8),
    dp_agg.sum_transfn(internal, int8, int8, int8),
    dp_agg.sum_transfn(internal, int8, int8, int8, float8),
    dp_agg.sum_transfn(internal, int8, int8, int8, float8, float8),
    dp_agg.sum_transfn(internal, float4, float4, float4),
    dp_agg.sum_transfn(internal, float4, float4, float4, float8),
    dp_agg.sum_transfn(internal, float4, float4, float4, float8, float8),
    dp_agg.sum_transfn(internal, float8, float8, float8),
    dp_agg.sum_transfn(internal, float8, float8, float8, float8),
    dp_agg.sum_transfn(internal, float8, float8, float8, float8, float8),
    dp_agg.sum_transfn(internal, numeric, numeric, numeric),
    dp_agg.sum_transfn(internal, numeric, numeric, numeric, float8),
    dp_agg.sum_transfn(internal, numeric, numeric, numeric, float8, float8),
    dp_agg.avg_transfn(internal, int2, int2, int2),
    dp_agg.avg_transfn(internal, int2, int2, int2, float8),
    dp_agg.avg_transfn(internal, int2, int2, int2, float8, float8),
    dp_agg.avg_transfn(internal, int4, int4, int4),
    dp_agg.avg_transfn(internal, int4, int4, int4, float8),
    dp_agg.avg_transfn(internal, int4, int4, int4, float8, float8),
    dp_agg.avg_transfn(internal, int8, int8, int8),
    dp_agg.avg_transfn(internal, int8, int8, int8, float8),
    dp_agg.avg_transfn(internal, int8, int8, int8, float8, float8),
    dp_agg.avg_transfn(internal, float4, float4, float4),
    dp_agg.avg_transfn(internal, float4, float4, float4, float8),
    dp_agg.avg_transfn(internal, float4, float4, float4, float8, float8),
    dp_agg.avg_transfn(internal, float8, float8, float8),
    dp_agg.avg_transfn(internal, float8, float8, float8, float8),
    dp_agg.avg_transfn(internal, float8, float8, float8, float8, float8),
    dp_agg.avg_transfn(internal, numeric, numeric, numeric),
    dp_agg.avg_transfn(internal, numeric, numeric, numeric, float8),
    dp_agg.avg_transfn(internal, numeric, numeric, numeric, float8, float8),
    dp_agg.combinefn(internal, internal),
    dp_agg.serialfn(internal),
    dp_agg.deserialfn(bytea, internal),
    dp_agg.count_finalfn(internal),
    dp_agg.sum_int_finalfn(internal),
    dp_agg.sum_float_finalfn(internal),
    dp_agg.sum_numeric_finalfn(internal),
    dp_agg.avg_float_finalfn(internal),
    dp_agg.avg_numeric_finalfn(internal)
FROM PUBLIC;

--------------------------------------------------------------------------
-- The aggregates.  FINALFUNC_MODIFY = READ_WRITE: the final function records
-- its release in the state (a second call returns the same value), and no
-- two aggregates share a transition state.
--------------------------------------------------------------------------

CREATE AGGREGATE @extschema@.dp_count(*) (
    SFUNC = dp_agg.count_star_transfn,
    FINALFUNC = dp_agg.count_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_count(*) IS
'differentially private count of rows (sensitivity 1); epsilon and delta from dp_agg.epsilon and dp_agg.delta';

CREATE AGGREGATE @extschema@.dp_count(anyelement) (
    SFUNC = dp_agg.count_transfn,
    FINALFUNC = dp_agg.count_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_count(anyelement) IS
'differentially private count of rows where value is not NULL; epsilon and delta from the settings';

CREATE AGGREGATE @extschema@.dp_count(anyelement, float8) (
    SFUNC = dp_agg.count_transfn,
    FINALFUNC = dp_agg.count_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_count(anyelement, float8) IS
'differentially private count of rows where value is not NULL with the given epsilon; delta from dp_agg.delta';

CREATE AGGREGATE @extschema@.dp_count(anyelement, float8, float8) (
    SFUNC = dp_agg.count_transfn,
    FINALFUNC = dp_agg.count_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_count(anyelement, float8, float8) IS
'differentially private count of rows where value is not NULL with the given epsilon and delta';

CREATE AGGREGATE @extschema@.dp_sum(int2, int2, int2) (
    SFUNC = dp_agg.sum_transfn,
    FINALFUNC = dp_agg.sum_int_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_sum(int2, int2, int2) IS
'differentially private sum of values clamped to [lower, upper] (sensitivity max(|lower|, |upper|)); epsilon and delta from the settings';

CREATE AGGREGATE @extschema@.dp_sum(int2, int2, int2, float8) (
    SFUNC = dp_agg.sum_transfn,
    FINALFUNC = dp_agg.sum_int_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_sum(int2, int2, int2, float8) IS
'differentially private sum of values clamped to [lower, upper] (sensitivity max(|lower|, |upper|)); with the given epsilon; delta from dp_agg.delta';

CREATE AGGREGATE @extschema@.dp_sum(int2, int2, int2, float8, float8) (
    SFUNC = dp_agg.sum_transfn,
    FINALFUNC = dp_agg.sum_int_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_sum(int2, int2, int2, float8, float8) IS
'differentially private sum of values clamped to [lower, upper] (sensitivity max(|lower|, |upper|)); with the given epsilon and delta';

CREATE AGGREGATE @extschema@.dp_sum(int4, int4, int4) (
    SFUNC = dp_agg.sum_transfn,
    FINALFUNC = dp_agg.sum_int_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_sum(int4, int4, int4) IS
'differentially private sum of values clamped to [lower, upper] (sensitivity max(|lower|, |upper|)); epsilon and delta from the settings';

CREATE AGGREGATE @extschema@.dp_sum(int4, int4, int4, float8) (
    SFUNC = dp_agg.sum_transfn,
    FINALFUNC = dp_agg.sum_int_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_sum(int4, int4, int4, float8) IS
'differentially private sum of values clamped to [lower, upper] (sensitivity max(|lower|, |upper|)); with the given epsilon; delta from dp_agg.delta';

CREATE AGGREGATE @extschema@.dp_sum(int4, int4, int4, float8, float8) (
    SFUNC = dp_agg.sum_transfn,
    FINALFUNC = dp_agg.sum_int_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_sum(int4, int4, int4, float8, float8) IS
'differentially private sum of values clamped to [lower, upper] (sensitivity max(|lower|, |upper|)); with the given epsilon and delta';

CREATE AGGREGATE @extschema@.dp_sum(int8, int8, int8) (
    SFUNC = dp_agg.sum_transfn,
    FINALFUNC = dp_agg.sum_int_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_sum(int8, int8, int8) IS
'differentially private sum of values clamped to [lower, upper] (sensitivity max(|lower|, |upper|)); epsilon and delta from the settings';

CREATE AGGREGATE @extschema@.dp_sum(int8, int8, int8, float8) (
    SFUNC = dp_agg.sum_transfn,
    FINALFUNC = dp_agg.sum_int_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_sum(int8, int8, int8, float8) IS
'differentially private sum of values clamped to [lower, upper] (sensitivity max(|lower|, |upper|)); with the given epsilon; delta from dp_agg.delta';

CREATE AGGREGATE @extschema@.dp_sum(int8, int8, int8, float8, float8) (
    SFUNC = dp_agg.sum_transfn,
    FINALFUNC = dp_agg.sum_int_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_sum(int8, int8, int8, float8, float8) IS
'differentially private sum of values clamped to [lower, upper] (sensitivity max(|lower|, |upper|)); with the given epsilon and delta';

CREATE AGGREGATE @extschema@.dp_sum(float4, float4, float4) (
    SFUNC = dp_agg.sum_transfn,
    FINALFUNC = dp_agg.sum_float_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_sum(float4, float4, float4) IS
'differentially private sum of values clamped to [lower, upper] (sensitivity max(|lower|, |upper|)); epsilon and delta from the settings';

CREATE AGGREGATE @extschema@.dp_sum(float4, float4, float4, float8) (
    SFUNC = dp_agg.sum_transfn,
    FINALFUNC = dp_agg.sum_float_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_sum(float4, float4, float4, float8) IS
'differentially private sum of values clamped to [lower, upper] (sensitivity max(|lower|, |upper|)); with the given epsilon; delta from dp_agg.delta';

CREATE AGGREGATE @extschema@.dp_sum(float4, float4, float4, float8, float8) (
    SFUNC = dp_agg.sum_transfn,
    FINALFUNC = dp_agg.sum_float_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_sum(float4, float4, float4, float8, float8) IS
'differentially private sum of values clamped to [lower, upper] (sensitivity max(|lower|, |upper|)); with the given epsilon and delta';

CREATE AGGREGATE @extschema@.dp_sum(float8, float8, float8) (
    SFUNC = dp_agg.sum_transfn,
    FINALFUNC = dp_agg.sum_float_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_sum(float8, float8, float8) IS
'differentially private sum of values clamped to [lower, upper] (sensitivity max(|lower|, |upper|)); epsilon and delta from the settings';

CREATE AGGREGATE @extschema@.dp_sum(float8, float8, float8, float8) (
    SFUNC = dp_agg.sum_transfn,
    FINALFUNC = dp_agg.sum_float_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_sum(float8, float8, float8, float8) IS
'differentially private sum of values clamped to [lower, upper] (sensitivity max(|lower|, |upper|)); with the given epsilon; delta from dp_agg.delta';

CREATE AGGREGATE @extschema@.dp_sum(float8, float8, float8, float8, float8) (
    SFUNC = dp_agg.sum_transfn,
    FINALFUNC = dp_agg.sum_float_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_sum(float8, float8, float8, float8, float8) IS
'differentially private sum of values clamped to [lower, upper] (sensitivity max(|lower|, |upper|)); with the given epsilon and delta';

CREATE AGGREGATE @extschema@.dp_sum(numeric, numeric, numeric) (
    SFUNC = dp_agg.sum_transfn,
    FINALFUNC = dp_agg.sum_numeric_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_sum(numeric, numeric, numeric) IS
'differentially private sum of values clamped to [lower, upper] (sensitivity max(|lower|, |upper|)); epsilon and delta from the settings';

CREATE AGGREGATE @extschema@.dp_sum(numeric, numeric, numeric, float8) (
    SFUNC = dp_agg.sum_transfn,
    FINALFUNC = dp_agg.sum_numeric_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_sum(numeric, numeric, numeric, float8) IS
'differentially private sum of values clamped to [lower, upper] (sensitivity max(|lower|, |upper|)); with the given epsilon; delta from dp_agg.delta';

CREATE AGGREGATE @extschema@.dp_sum(numeric, numeric, numeric, float8, float8) (
    SFUNC = dp_agg.sum_transfn,
    FINALFUNC = dp_agg.sum_numeric_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_sum(numeric, numeric, numeric, float8, float8) IS
'differentially private sum of values clamped to [lower, upper] (sensitivity max(|lower|, |upper|)); with the given epsilon and delta';

CREATE AGGREGATE @extschema@.dp_avg(int2, int2, int2) (
    SFUNC = dp_agg.avg_transfn,
    FINALFUNC = dp_agg.avg_float_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_avg(int2, int2, int2) IS
'differentially private average of values clamped to [lower, upper]: midpoint + noisy centred sum / noisy count, each with half of epsilon and delta; epsilon and delta from the settings';

CREATE AGGREGATE @extschema@.dp_avg(int2, int2, int2, float8) (
    SFUNC = dp_agg.avg_transfn,
    FINALFUNC = dp_agg.avg_float_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_avg(int2, int2, int2, float8) IS
'differentially private average of values clamped to [lower, upper]: midpoint + noisy centred sum / noisy count, each with half of epsilon and delta; with the given epsilon; delta from dp_agg.delta';

CREATE AGGREGATE @extschema@.dp_avg(int2, int2, int2, float8, float8) (
    SFUNC = dp_agg.avg_transfn,
    FINALFUNC = dp_agg.avg_float_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_avg(int2, int2, int2, float8, float8) IS
'differentially private average of values clamped to [lower, upper]: midpoint + noisy centred sum / noisy count, each with half of epsilon and delta; with the given epsilon and delta';

CREATE AGGREGATE @extschema@.dp_avg(int4, int4, int4) (
    SFUNC = dp_agg.avg_transfn,
    FINALFUNC = dp_agg.avg_float_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_avg(int4, int4, int4) IS
'differentially private average of values clamped to [lower, upper]: midpoint + noisy centred sum / noisy count, each with half of epsilon and delta; epsilon and delta from the settings';

CREATE AGGREGATE @extschema@.dp_avg(int4, int4, int4, float8) (
    SFUNC = dp_agg.avg_transfn,
    FINALFUNC = dp_agg.avg_float_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_avg(int4, int4, int4, float8) IS
'differentially private average of values clamped to [lower, upper]: midpoint + noisy centred sum / noisy count, each with half of epsilon and delta; with the given epsilon; delta from dp_agg.delta';

CREATE AGGREGATE @extschema@.dp_avg(int4, int4, int4, float8, float8) (
    SFUNC = dp_agg.avg_transfn,
    FINALFUNC = dp_agg.avg_float_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_avg(int4, int4, int4, float8, float8) IS
'differentially private average of values clamped to [lower, upper]: midpoint + noisy centred sum / noisy count, each with half of epsilon and delta; with the given epsilon and delta';

CREATE AGGREGATE @extschema@.dp_avg(int8, int8, int8) (
    SFUNC = dp_agg.avg_transfn,
    FINALFUNC = dp_agg.avg_float_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_avg(int8, int8, int8) IS
'differentially private average of values clamped to [lower, upper]: midpoint + noisy centred sum / noisy count, each with half of epsilon and delta; epsilon and delta from the settings';

CREATE AGGREGATE @extschema@.dp_avg(int8, int8, int8, float8) (
    SFUNC = dp_agg.avg_transfn,
    FINALFUNC = dp_agg.avg_float_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_avg(int8, int8, int8, float8) IS
'differentially private average of values clamped to [lower, upper]: midpoint + noisy centred sum / noisy count, each with half of epsilon and delta; with the given epsilon; delta from dp_agg.delta';

CREATE AGGREGATE @extschema@.dp_avg(int8, int8, int8, float8, float8) (
    SFUNC = dp_agg.avg_transfn,
    FINALFUNC = dp_agg.avg_float_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_avg(int8, int8, int8, float8, float8) IS
'differentially private average of values clamped to [lower, upper]: midpoint + noisy centred sum / noisy count, each with half of epsilon and delta; with the given epsilon and delta';

CREATE AGGREGATE @extschema@.dp_avg(float4, float4, float4) (
    SFUNC = dp_agg.avg_transfn,
    FINALFUNC = dp_agg.avg_float_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_avg(float4, float4, float4) IS
'differentially private average of values clamped to [lower, upper]: midpoint + noisy centred sum / noisy count, each with half of epsilon and delta; epsilon and delta from the settings';

CREATE AGGREGATE @extschema@.dp_avg(float4, float4, float4, float8) (
    SFUNC = dp_agg.avg_transfn,
    FINALFUNC = dp_agg.avg_float_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_avg(float4, float4, float4, float8) IS
'differentially private average of values clamped to [lower, upper]: midpoint + noisy centred sum / noisy count, each with half of epsilon and delta; with the given epsilon; delta from dp_agg.delta';

CREATE AGGREGATE @extschema@.dp_avg(float4, float4, float4, float8, float8) (
    SFUNC = dp_agg.avg_transfn,
    FINALFUNC = dp_agg.avg_float_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_avg(float4, float4, float4, float8, float8) IS
'differentially private average of values clamped to [lower, upper]: midpoint + noisy centred sum / noisy count, each with half of epsilon and delta; with the given epsilon and delta';

CREATE AGGREGATE @extschema@.dp_avg(float8, float8, float8) (
    SFUNC = dp_agg.avg_transfn,
    FINALFUNC = dp_agg.avg_float_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_avg(float8, float8, float8) IS
'differentially private average of values clamped to [lower, upper]: midpoint + noisy centred sum / noisy count, each with half of epsilon and delta; epsilon and delta from the settings';

CREATE AGGREGATE @extschema@.dp_avg(float8, float8, float8, float8) (
    SFUNC = dp_agg.avg_transfn,
    FINALFUNC = dp_agg.avg_float_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_avg(float8, float8, float8, float8) IS
'differentially private average of values clamped to [lower, upper]: midpoint + noisy centred sum / noisy count, each with half of epsilon and delta; with the given epsilon; delta from dp_agg.delta';

CREATE AGGREGATE @extschema@.dp_avg(float8, float8, float8, float8, float8) (
    SFUNC = dp_agg.avg_transfn,
    FINALFUNC = dp_agg.avg_float_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_avg(float8, float8, float8, float8, float8) IS
'differentially private average of values clamped to [lower, upper]: midpoint + noisy centred sum / noisy count, each with half of epsilon and delta; with the given epsilon and delta';

CREATE AGGREGATE @extschema@.dp_avg(numeric, numeric, numeric) (
    SFUNC = dp_agg.avg_transfn,
    FINALFUNC = dp_agg.avg_numeric_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_avg(numeric, numeric, numeric) IS
'differentially private average of values clamped to [lower, upper]: midpoint + noisy centred sum / noisy count, each with half of epsilon and delta; epsilon and delta from the settings';

CREATE AGGREGATE @extschema@.dp_avg(numeric, numeric, numeric, float8) (
    SFUNC = dp_agg.avg_transfn,
    FINALFUNC = dp_agg.avg_numeric_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_avg(numeric, numeric, numeric, float8) IS
'differentially private average of values clamped to [lower, upper]: midpoint + noisy centred sum / noisy count, each with half of epsilon and delta; with the given epsilon; delta from dp_agg.delta';

CREATE AGGREGATE @extschema@.dp_avg(numeric, numeric, numeric, float8, float8) (
    SFUNC = dp_agg.avg_transfn,
    FINALFUNC = dp_agg.avg_numeric_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.dp_avg(numeric, numeric, numeric, float8, float8) IS
'differentially private average of values clamped to [lower, upper]: midpoint + noisy centred sum / noisy count, each with half of epsilon and delta; with the given epsilon and delta';

--------------------------------------------------------------------------
-- Calculators: every noise scale the aggregates use can be recomputed.
--------------------------------------------------------------------------

CREATE FUNCTION dp_agg.laplace_scale(epsilon float8, sensitivity float8)
RETURNS float8 AS 'MODULE_PATHNAME', 'dp_laplace_scale_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.laplace_scale(float8, float8) IS
'scale of the Laplace mechanism: sensitivity / epsilon, rounded up';

CREATE FUNCTION dp_agg.gaussian_sigma(epsilon float8, delta float8, sensitivity float8)
RETURNS float8 AS 'MODULE_PATHNAME', 'dp_gaussian_sigma_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.gaussian_sigma(float8, float8, float8) IS
'smallest sigma of the continuous Gaussian mechanism that is (epsilon, delta)-DP (analytic Gaussian, Balle and Wang 2018)';

CREATE FUNCTION dp_agg.gaussian_delta(sigma float8, epsilon float8, sensitivity float8)
RETURNS float8 AS 'MODULE_PATHNAME', 'dp_gaussian_delta_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.gaussian_delta(float8, float8, float8) IS
'exact delta(epsilon) of the continuous Gaussian mechanism (Balle and Wang 2018, Theorem 8)';

CREATE FUNCTION dp_agg.discrete_gaussian_sigma(epsilon float8, delta float8, sensitivity float8)
RETURNS float8 AS 'MODULE_PATHNAME', 'dp_discrete_gaussian_sigma_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.discrete_gaussian_sigma(float8, float8, float8) IS
'sigma of the discrete Gaussian the aggregates use, in grid units, for an integer sensitivity (Canonne, Kamath and Steinke 2020, Theorem 7)';

CREATE FUNCTION dp_agg.discrete_gaussian_delta(sigma float8, epsilon float8, sensitivity float8)
RETURNS float8 AS 'MODULE_PATHNAME', 'dp_discrete_gaussian_delta_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.discrete_gaussian_delta(float8, float8, float8) IS
'delta(epsilon) of the discrete Gaussian mechanism for an integer sensitivity, as the aggregates evaluate it (never understated)';

CREATE FUNCTION dp_agg.noise_sample(mechanism text, scale float8, n integer)
RETURNS TABLE (noise bigint) AS 'MODULE_PATHNAME', 'dp_noise_sample'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.noise_sample(text, float8, integer) IS
'n draws of the exact discrete Laplace (scale) or discrete Gaussian (sigma) sampler, for tests and audits';
REVOKE ALL ON FUNCTION dp_agg.noise_sample(text, float8, integer) FROM PUBLIC;

CREATE FUNCTION dp_agg.rdp_orders()
RETURNS float8[] AS 'MODULE_PATHNAME', 'dp_rdp_orders_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.rdp_orders() IS
'the Renyi DP orders dp_agg composes on: the grid of Google''s dp_accounting (1 + x/10 for x = 1..99, 11..63, 128, 256, 512, 1024)';

CREATE FUNCTION dp_agg.numeric_units(value numeric, k integer)
RETURNS bigint AS 'MODULE_PATHNAME', 'dp_numeric_units_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.numeric_units(numeric, integer) IS
'round(value * 2^-k), half away from zero, saturated at +-2^62: how dp_sum and dp_avg round each numeric row to their grid of 2^k, read in place without numeric arithmetic; NULL where that path declines (NaN, infinities, compressed values, more digits than 128-bit integers hold) and numeric arithmetic does the same rounding';

CREATE FUNCTION dp_agg.rdp_to_epsilon(orders float8[], rdp float8[], delta float8)
RETURNS float8 AS 'MODULE_PATHNAME', 'dp_rdp_to_epsilon_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.rdp_to_epsilon(float8[], float8[], float8) IS
'smallest epsilon at delta over the orders (above 1.01) of a Renyi DP curve (Balle et al. 2020, Theorem 21)';


--------------------------------------------------------------------------
-- Privacy budgets.  Only the extension writes these tables: the charger
-- (a background worker) and the SECURITY DEFINER functions below.
--------------------------------------------------------------------------

CREATE TABLE dp_agg.budget (
    role regrole PRIMARY KEY,
    epsilon_limit float8 NOT NULL CHECK (epsilon_limit >= 0 AND epsilon_limit < 'infinity'),
    delta_limit float8 NOT NULL DEFAULT 0 CHECK (delta_limit >= 0 AND delta_limit < 1),
    epsilon_spent float8 NOT NULL DEFAULT 0 CHECK (epsilon_spent >= 0 AND epsilon_spent < 'infinity'),
    delta_spent float8 NOT NULL DEFAULT 0 CHECK (delta_spent >= 0 AND delta_spent < 'infinity'),
    accounting text NOT NULL DEFAULT 'basic' CHECK (accounting IN ('basic', 'rdp')),
    rdp float8[],
    created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    updated_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE dp_agg.budget IS 'privacy budget of each role: limits and amounts spent (basic composition)';
COMMENT ON COLUMN dp_agg.budget.role IS 'the role charged: current_user of the statements that release';
COMMENT ON COLUMN dp_agg.budget.epsilon_limit IS 'total epsilon the role may spend';
COMMENT ON COLUMN dp_agg.budget.delta_limit IS 'total delta the role may spend';
COMMENT ON COLUMN dp_agg.budget.epsilon_spent IS 'sum of the epsilons charged since the last reset, rounded up';
COMMENT ON COLUMN dp_agg.budget.delta_spent IS 'sum of the deltas charged since the last reset, rounded up';
COMMENT ON COLUMN dp_agg.budget.accounting IS 'basic: admitted while the sums stay within the limits; rdp: also while the composed Renyi DP curve, converted at delta_limit, stays within epsilon_limit';
COMMENT ON COLUMN dp_agg.budget.rdp IS 'composed Renyi DP curve of the releases since the last reset, on the order grid dp_agg.rdp_orders() (kept for every role)';
COMMENT ON COLUMN dp_agg.budget.created_at IS 'when the budget was created';
COMMENT ON COLUMN dp_agg.budget.updated_at IS 'when the limits or the amounts spent last changed';

CREATE TABLE dp_agg.ledger (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    role regrole NOT NULL,
    kind text NOT NULL CHECK (kind IN ('charge', 'reset')),
    epsilon float8 NOT NULL,
    delta float8 NOT NULL,
    query text,
    detail jsonb NOT NULL,
    rdp float8[]
) WITH (toast_tuple_target = 8160);  -- keep entries inline: no compression on the charge path
CREATE INDEX ledger_role_id ON dp_agg.ledger (role, id);
COMMENT ON TABLE dp_agg.ledger IS 'one row per charged statement (kind charge) and per budget reset (kind reset)';
COMMENT ON COLUMN dp_agg.ledger.id IS 'order of the entries';
COMMENT ON COLUMN dp_agg.ledger.at IS 'when the entry was committed';
COMMENT ON COLUMN dp_agg.ledger.role IS 'the role charged or reset';
COMMENT ON COLUMN dp_agg.ledger.kind IS 'charge: a statement paid epsilon and delta; reset: spent amounts set back to 0';
COMMENT ON COLUMN dp_agg.ledger.epsilon IS 'epsilon charged (0 for a reset)';
COMMENT ON COLUMN dp_agg.ledger.delta IS 'delta charged (0 for a reset)';
COMMENT ON COLUMN dp_agg.ledger.query IS 'the statement text';
COMMENT ON COLUMN dp_agg.ledger.rdp IS 'Renyi DP curve of the statement on the order grid dp_agg.rdp_orders() (charges)';
COMMENT ON COLUMN dp_agg.ledger.detail IS 'charge: one object per DP aggregate call (aggregate, mechanism, epsilon, delta, sensitivity, noise_scale, sampling, releases); reset: the amounts spent before';

SELECT pg_catalog.pg_extension_config_dump('dp_agg.budget', '');
SELECT pg_catalog.pg_extension_config_dump('dp_agg.ledger', '');
SELECT pg_catalog.pg_extension_config_dump('dp_agg.ledger_id_seq', '');
COMMENT ON SEQUENCE dp_agg.ledger_id_seq IS 'identity of dp_agg.ledger';

REVOKE ALL ON dp_agg.budget, dp_agg.ledger FROM PUBLIC;

CREATE VIEW dp_agg.my_budget WITH (security_barrier) AS
SELECT b.role,
       b.accounting,
       b.epsilon_limit,
       b.delta_limit,
       b.epsilon_spent,
       b.delta_spent,
       c.composed_epsilon,
       GREATEST(b.epsilon_limit - CASE WHEN b.accounting = 'rdp'
                                       THEN LEAST(b.epsilon_spent, coalesce(c.composed_epsilon, b.epsilon_spent))
                                       ELSE b.epsilon_spent END, 0::float8) AS epsilon_remaining,
       GREATEST(b.delta_limit - b.delta_spent, 0::float8) AS delta_remaining,
       b.rdp,
       b.created_at,
       b.updated_at
FROM dp_agg.budget b,
     LATERAL (SELECT CASE WHEN b.delta_limit > 0
                          THEN dp_agg.rdp_to_epsilon(dp_agg.rdp_orders(),
                                                     coalesce(b.rdp, array_fill(0::float8, ARRAY[cardinality(dp_agg.rdp_orders())])),
                                                     b.delta_limit) END AS composed_epsilon) c
WHERE b.role OPERATOR(pg_catalog.=)
      (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER)::pg_catalog.regrole;
COMMENT ON VIEW dp_agg.my_budget IS 'the privacy budget of the current role, with what remains (for rdp accounting: of the limit, by the better of the two certificates) and the Renyi-composed epsilon at delta_limit';
GRANT SELECT ON dp_agg.my_budget TO PUBLIC;

CREATE VIEW dp_agg.my_ledger WITH (security_barrier) AS
SELECT l.id, l.at, l.kind, l.epsilon, l.delta, l.query, l.detail, l.rdp
FROM dp_agg.ledger l
WHERE l.role OPERATOR(pg_catalog.=)
      (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER)::pg_catalog.regrole;
COMMENT ON VIEW dp_agg.my_ledger IS 'the ledger entries of the current role';
GRANT SELECT ON dp_agg.my_ledger TO PUBLIC;

CREATE FUNCTION dp_agg.set_budget(role regrole, epsilon float8, delta float8 DEFAULT 0,
                                  accounting text DEFAULT 'basic')
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF set_budget.role IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'role must not be NULL';
    END IF;
    IF set_budget.epsilon IS NULL OR NOT (set_budget.epsilon >= 0 AND set_budget.epsilon < 'infinity') THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'epsilon limit must be a finite number at least 0',
            DETAIL = format('epsilon is %s.', coalesce(set_budget.epsilon::text, 'NULL')),
            HINT = 'The limit is the total epsilon the role may spend, for example 1 or 10.';
    END IF;
    IF set_budget.delta IS NULL OR NOT (set_budget.delta >= 0 AND set_budget.delta < 1) THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'delta limit must be at least 0 and less than 1',
            DETAIL = format('delta is %s.', coalesce(set_budget.delta::text, 'NULL')),
            HINT = 'Use 0 for Laplace releases only, or a small delta such as 1e-6 for Gaussian releases.';
    END IF;
    IF set_budget.accounting IS NULL OR set_budget.accounting NOT IN ('basic', 'rdp') THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'accounting must be ''basic'' or ''rdp''',
            DETAIL = format('accounting is %s.', coalesce(quote_literal(set_budget.accounting), 'NULL')),
            HINT = 'rdp charges by the Renyi DP composition of all releases, which buys more Gaussian releases.';
    END IF;
    INSERT INTO dp_agg.budget AS b (role, epsilon_limit, delta_limit, accounting)
    VALUES (set_budget.role, set_budget.epsilon, set_budget.delta, set_budget.accounting)
    ON CONFLICT ON CONSTRAINT budget_pkey DO UPDATE
        SET epsilon_limit = excluded.epsilon_limit,
            delta_limit = excluded.delta_limit,
            accounting = excluded.accounting,
            updated_at = now();
END
$$;
COMMENT ON FUNCTION dp_agg.set_budget(regrole, float8, float8, text) IS
'creates or changes the privacy budget limits and accounting (basic or rdp) of a role (never the amounts spent)';
REVOKE ALL ON FUNCTION dp_agg.set_budget(regrole, float8, float8, text) FROM PUBLIC;

CREATE FUNCTION dp_agg.reset_budget(role regrole)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    old_epsilon float8;
    old_delta float8;
BEGIN
    SELECT b.epsilon_spent, b.delta_spent INTO old_epsilon, old_delta
    FROM dp_agg.budget b WHERE b.role = reset_budget.role FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'PB002',
            MESSAGE = format('role %s has no privacy budget', reset_budget.role),
            HINT = 'A privacy budget is given with dp_agg.set_budget(role, epsilon, delta).';
    END IF;
    UPDATE dp_agg.budget b SET epsilon_spent = 0, delta_spent = 0, rdp = NULL, updated_at = now()
    WHERE b.role = reset_budget.role;
    INSERT INTO dp_agg.ledger (role, kind, epsilon, delta, query, detail)
    VALUES (reset_budget.role, 'reset', 0, 0, current_query(),
            jsonb_build_object('epsilon_spent_before', old_epsilon,
                               'delta_spent_before', old_delta,
                               'reset_by', session_user));
END
$$;
COMMENT ON FUNCTION dp_agg.reset_budget(regrole) IS
'sets the amounts a role has spent (and its Renyi DP curve) back to 0, and records it in the ledger';
REVOKE ALL ON FUNCTION dp_agg.reset_budget(regrole) FROM PUBLIC;

CREATE FUNCTION dp_agg.spent_epsilon(role regrole, delta float8)
RETURNS float8
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    curve float8[];
BEGIN
    IF spent_epsilon.delta IS NULL OR NOT (spent_epsilon.delta > 0 AND spent_epsilon.delta < 1) THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'delta must be greater than 0 and less than 1',
            DETAIL = format('delta is %s.', coalesce(spent_epsilon.delta::text, 'NULL'));
    END IF;
    -- one's own budget through the view; another role's needs the right to
    -- read dp_agg.budget (superusers, or a DBA granted SELECT on it)
    IF spent_epsilon.role::oid = (SELECT r.oid FROM pg_roles r WHERE r.rolname = current_user) THEN
        SELECT b.rdp INTO curve FROM dp_agg.my_budget b;
    ELSE
        SELECT b.rdp INTO curve FROM dp_agg.budget b WHERE b.role = spent_epsilon.role;
    END IF;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'PB002',
            MESSAGE = format('role %s has no privacy budget', spent_epsilon.role);
    END IF;
    RETURN dp_agg.rdp_to_epsilon(dp_agg.rdp_orders(),
                                 coalesce(curve, array_fill(0::float8, ARRAY[cardinality(dp_agg.rdp_orders())])),
                                 spent_epsilon.delta);
END
$$;
COMMENT ON FUNCTION dp_agg.spent_epsilon(regrole, float8) IS
'the epsilon, at the given delta, of everything a role has released since its last reset, by Renyi DP composition';

--------------------------------------------------------------------------
-- Subsampling: the CSPRNG sampling method and the amplification and Renyi
-- DP calculators the aggregates use.
--------------------------------------------------------------------------

CREATE FUNCTION dp_agg.secure_bernoulli(internal)
RETURNS tsm_handler AS 'MODULE_PATHNAME', 'dp_secure_bernoulli_handler'
LANGUAGE C STRICT;
COMMENT ON FUNCTION dp_agg.secure_bernoulli(internal) IS
'TABLESAMPLE method: BERNOULLI with each row''s coin drawn from the CSPRNG (not repeatable); amplified like BERNOULLI';

CREATE FUNCTION dp_agg.amplified_epsilon(epsilon float8, rate float8)
RETURNS float8 AS 'MODULE_PATHNAME', 'dp_amplified_epsilon_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.amplified_epsilon(float8, float8) IS
'epsilon of an epsilon-DP release after Poisson subsampling at rate: ln(1 + rate (e^epsilon - 1))';

CREATE FUNCTION dp_agg.base_epsilon(epsilon float8, rate float8)
RETURNS float8 AS 'MODULE_PATHNAME', 'dp_base_epsilon_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.base_epsilon(float8, float8) IS
'the epsilon that Poisson subsampling at rate amplifies to epsilon: ln(1 + (e^epsilon - 1) / rate), rounded down';

CREATE FUNCTION dp_agg.rdp_sampled_gaussian(rate float8, noise_multiplier float8, orders float8[])
RETURNS float8[] AS 'MODULE_PATHNAME', 'dp_rdp_sampled_gaussian_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.rdp_sampled_gaussian(float8, float8, float8[]) IS
'Renyi DP at each order of one release of the Poisson-subsampled Gaussian mechanism (Mironov, Talwar and Zhang 2019)';

CREATE FUNCTION dp_agg.sampled_gaussian_epsilon(rate float8, noise_multiplier float8, steps integer, delta float8)
RETURNS float8 AS 'MODULE_PATHNAME', 'dp_sampled_gaussian_epsilon_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.sampled_gaussian_epsilon(float8, float8, integer, float8) IS
'epsilon at delta of steps releases of the sampled Gaussian, composed in Renyi DP on the dp_accounting order grid';

CREATE FUNCTION dp_agg.sampled_gaussian_sigma(epsilon float8, delta float8, rate float8, sensitivity float8)
RETURNS float8 AS 'MODULE_PATHNAME', 'dp_sampled_gaussian_sigma_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.sampled_gaussian_sigma(float8, float8, float8, float8) IS
'sigma of an (epsilon, delta)-DP Gaussian release over a Poisson sample at rate: the better of amplified analytic Gaussian and Renyi DP';

--------------------------------------------------------------------------
-- Know the price and the error before paying.
--------------------------------------------------------------------------

CREATE FUNCTION dp_agg.preview(query text)
RETURNS TABLE (
    call integer,
    aggregate text,
    release text,
    mechanism text,
    epsilon float8,
    delta float8,
    sensitivity float8,
    noise_scale float8,
    grid float8,
    sampling jsonb,
    ci95 float8,
    statement_epsilon float8,
    statement_delta float8,
    affordable boolean
) AS 'MODULE_PATHNAME', 'dp_preview'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dp_agg.preview(text) IS
'plans a SELECT through the same guard and pricing as execution, runs and charges nothing; one row per noisy release with its mechanism, noise scale and 95% half-width, the statement price and whether the caller''s budget covers it';

CREATE FUNCTION dp_agg.noise_interval(mechanism text, noise_scale float8, confidence float8)
RETURNS float8 AS 'MODULE_PATHNAME', 'dp_noise_interval_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.noise_interval(text, float8, float8) IS
'half-width of the central interval, at the given confidence, of the discrete Laplace (scale) or discrete Gaussian (sigma) noise on the integers';
