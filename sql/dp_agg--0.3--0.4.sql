/* dp_agg: update from 0.3 to 0.4 (ALTER EXTENSION dp_agg UPDATE) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION dp_agg UPDATE TO '0.4'" to load this file. \quit

-- Each section below is one capability of 0.4; a new install runs 0.1 and
-- every update script, so this script is also part of every install.

--------------------------------------------------------------------------
-- Nothing on the row path can fail or report (protected tables, README
-- "Protected tables"): in a statement of a role untrusted for a protected
-- relation, calls on rows go through a trap (src/row_trap.c) that turns a
-- failure into NULL; allow_function says what allowing means, and refuses
-- what the trap cannot call.
--------------------------------------------------------------------------

CREATE FUNCTION dp_agg.row_call(internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'dp_row_call'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_call(internal) IS
'the trap of a call on the rows of a protected relation: the plan names the callee; a failing call yields NULL (not callable from SQL)';

CREATE FUNCTION dp_agg.row_eval(internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'dp_row_eval'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_eval(internal) IS
'the trap of an expression on the rows of a protected relation (a cast, GREATEST, a subscript...): a failing expression yields NULL (not callable from SQL)';

-- The soft arithmetic: the trap puts these in place of the functions of
-- the arithmetic operators on rows; each returns NULL where PostgreSQL's
-- function raises an error (overflow, division by zero).

CREATE FUNCTION dp_agg.row_int2pl(smallint, smallint) RETURNS smallint
AS 'MODULE_PATHNAME', 'dp_row_soft_int2pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int2pl(smallint, smallint) IS 'smallint + smallint (int2pl), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int2mi(smallint, smallint) RETURNS smallint
AS 'MODULE_PATHNAME', 'dp_row_soft_int2mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int2mi(smallint, smallint) IS 'smallint - smallint (int2mi), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int2mul(smallint, smallint) RETURNS smallint
AS 'MODULE_PATHNAME', 'dp_row_soft_int2mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int2mul(smallint, smallint) IS 'smallint * smallint (int2mul), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int2div(smallint, smallint) RETURNS smallint
AS 'MODULE_PATHNAME', 'dp_row_soft_int2div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int2div(smallint, smallint) IS 'smallint / smallint (int2div), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int2mod(smallint, smallint) RETURNS smallint
AS 'MODULE_PATHNAME', 'dp_row_soft_int2mod' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int2mod(smallint, smallint) IS 'smallint % smallint (int2mod), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int2um(smallint) RETURNS smallint
AS 'MODULE_PATHNAME', 'dp_row_soft_int2um' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int2um(smallint) IS '- smallint (int2um), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int2abs(smallint) RETURNS smallint
AS 'MODULE_PATHNAME', 'dp_row_soft_int2abs' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int2abs(smallint) IS '@ smallint (int2abs), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int4pl(integer, integer) RETURNS integer
AS 'MODULE_PATHNAME', 'dp_row_soft_int4pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int4pl(integer, integer) IS 'integer + integer (int4pl), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int4mi(integer, integer) RETURNS integer
AS 'MODULE_PATHNAME', 'dp_row_soft_int4mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int4mi(integer, integer) IS 'integer - integer (int4mi), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int4mul(integer, integer) RETURNS integer
AS 'MODULE_PATHNAME', 'dp_row_soft_int4mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int4mul(integer, integer) IS 'integer * integer (int4mul), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int4div(integer, integer) RETURNS integer
AS 'MODULE_PATHNAME', 'dp_row_soft_int4div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int4div(integer, integer) IS 'integer / integer (int4div), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int4mod(integer, integer) RETURNS integer
AS 'MODULE_PATHNAME', 'dp_row_soft_int4mod' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int4mod(integer, integer) IS 'integer % integer (int4mod), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int4um(integer) RETURNS integer
AS 'MODULE_PATHNAME', 'dp_row_soft_int4um' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int4um(integer) IS '- integer (int4um), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int4abs(integer) RETURNS integer
AS 'MODULE_PATHNAME', 'dp_row_soft_int4abs' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int4abs(integer) IS '@ integer (int4abs), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int8pl(bigint, bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_row_soft_int8pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int8pl(bigint, bigint) IS 'bigint + bigint (int8pl), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int8mi(bigint, bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_row_soft_int8mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int8mi(bigint, bigint) IS 'bigint - bigint (int8mi), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int8mul(bigint, bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_row_soft_int8mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int8mul(bigint, bigint) IS 'bigint * bigint (int8mul), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int8div(bigint, bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_row_soft_int8div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int8div(bigint, bigint) IS 'bigint / bigint (int8div), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int8mod(bigint, bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_row_soft_int8mod' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int8mod(bigint, bigint) IS 'bigint % bigint (int8mod), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int8um(bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_row_soft_int8um' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int8um(bigint) IS '- bigint (int8um), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int8abs(bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_row_soft_int8abs' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int8abs(bigint) IS '@ bigint (int8abs), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int24pl(smallint, integer) RETURNS integer
AS 'MODULE_PATHNAME', 'dp_row_soft_int24pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int24pl(smallint, integer) IS 'smallint + integer (int24pl), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int24mi(smallint, integer) RETURNS integer
AS 'MODULE_PATHNAME', 'dp_row_soft_int24mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int24mi(smallint, integer) IS 'smallint - integer (int24mi), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int24mul(smallint, integer) RETURNS integer
AS 'MODULE_PATHNAME', 'dp_row_soft_int24mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int24mul(smallint, integer) IS 'smallint * integer (int24mul), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int24div(smallint, integer) RETURNS integer
AS 'MODULE_PATHNAME', 'dp_row_soft_int24div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int24div(smallint, integer) IS 'smallint / integer (int24div), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int42pl(integer, smallint) RETURNS integer
AS 'MODULE_PATHNAME', 'dp_row_soft_int42pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int42pl(integer, smallint) IS 'integer + smallint (int42pl), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int42mi(integer, smallint) RETURNS integer
AS 'MODULE_PATHNAME', 'dp_row_soft_int42mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int42mi(integer, smallint) IS 'integer - smallint (int42mi), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int42mul(integer, smallint) RETURNS integer
AS 'MODULE_PATHNAME', 'dp_row_soft_int42mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int42mul(integer, smallint) IS 'integer * smallint (int42mul), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int42div(integer, smallint) RETURNS integer
AS 'MODULE_PATHNAME', 'dp_row_soft_int42div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int42div(integer, smallint) IS 'integer / smallint (int42div), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int28pl(smallint, bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_row_soft_int28pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int28pl(smallint, bigint) IS 'smallint + bigint (int28pl), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int28mi(smallint, bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_row_soft_int28mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int28mi(smallint, bigint) IS 'smallint - bigint (int28mi), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int28mul(smallint, bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_row_soft_int28mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int28mul(smallint, bigint) IS 'smallint * bigint (int28mul), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int28div(smallint, bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_row_soft_int28div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int28div(smallint, bigint) IS 'smallint / bigint (int28div), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int82pl(bigint, smallint) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_row_soft_int82pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int82pl(bigint, smallint) IS 'bigint + smallint (int82pl), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int82mi(bigint, smallint) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_row_soft_int82mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int82mi(bigint, smallint) IS 'bigint - smallint (int82mi), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int82mul(bigint, smallint) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_row_soft_int82mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int82mul(bigint, smallint) IS 'bigint * smallint (int82mul), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int82div(bigint, smallint) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_row_soft_int82div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int82div(bigint, smallint) IS 'bigint / smallint (int82div), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int48pl(integer, bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_row_soft_int48pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int48pl(integer, bigint) IS 'integer + bigint (int48pl), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int48mi(integer, bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_row_soft_int48mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int48mi(integer, bigint) IS 'integer - bigint (int48mi), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int48mul(integer, bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_row_soft_int48mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int48mul(integer, bigint) IS 'integer * bigint (int48mul), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int48div(integer, bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_row_soft_int48div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int48div(integer, bigint) IS 'integer / bigint (int48div), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int84pl(bigint, integer) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_row_soft_int84pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int84pl(bigint, integer) IS 'bigint + integer (int84pl), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int84mi(bigint, integer) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_row_soft_int84mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int84mi(bigint, integer) IS 'bigint - integer (int84mi), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int84mul(bigint, integer) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_row_soft_int84mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int84mul(bigint, integer) IS 'bigint * integer (int84mul), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_int84div(bigint, integer) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_row_soft_int84div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_int84div(bigint, integer) IS 'bigint / integer (int84div), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_float4pl(real, real) RETURNS real
AS 'MODULE_PATHNAME', 'dp_row_soft_float4pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_float4pl(real, real) IS 'real + real (float4pl), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_float4mi(real, real) RETURNS real
AS 'MODULE_PATHNAME', 'dp_row_soft_float4mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_float4mi(real, real) IS 'real - real (float4mi), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_float4mul(real, real) RETURNS real
AS 'MODULE_PATHNAME', 'dp_row_soft_float4mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_float4mul(real, real) IS 'real * real (float4mul), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_float4div(real, real) RETURNS real
AS 'MODULE_PATHNAME', 'dp_row_soft_float4div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_float4div(real, real) IS 'real / real (float4div), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_float8pl(double precision, double precision) RETURNS double precision
AS 'MODULE_PATHNAME', 'dp_row_soft_float8pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_float8pl(double precision, double precision) IS 'double precision + double precision (float8pl), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_float8mi(double precision, double precision) RETURNS double precision
AS 'MODULE_PATHNAME', 'dp_row_soft_float8mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_float8mi(double precision, double precision) IS 'double precision - double precision (float8mi), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_float8mul(double precision, double precision) RETURNS double precision
AS 'MODULE_PATHNAME', 'dp_row_soft_float8mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_float8mul(double precision, double precision) IS 'double precision * double precision (float8mul), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_float8div(double precision, double precision) RETURNS double precision
AS 'MODULE_PATHNAME', 'dp_row_soft_float8div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_float8div(double precision, double precision) IS 'double precision / double precision (float8div), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_float48pl(real, double precision) RETURNS double precision
AS 'MODULE_PATHNAME', 'dp_row_soft_float48pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_float48pl(real, double precision) IS 'real + double precision (float48pl), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_float48mi(real, double precision) RETURNS double precision
AS 'MODULE_PATHNAME', 'dp_row_soft_float48mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_float48mi(real, double precision) IS 'real - double precision (float48mi), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_float48mul(real, double precision) RETURNS double precision
AS 'MODULE_PATHNAME', 'dp_row_soft_float48mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_float48mul(real, double precision) IS 'real * double precision (float48mul), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_float48div(real, double precision) RETURNS double precision
AS 'MODULE_PATHNAME', 'dp_row_soft_float48div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_float48div(real, double precision) IS 'real / double precision (float48div), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_float84pl(double precision, real) RETURNS double precision
AS 'MODULE_PATHNAME', 'dp_row_soft_float84pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_float84pl(double precision, real) IS 'double precision + real (float84pl), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_float84mi(double precision, real) RETURNS double precision
AS 'MODULE_PATHNAME', 'dp_row_soft_float84mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_float84mi(double precision, real) IS 'double precision - real (float84mi), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_float84mul(double precision, real) RETURNS double precision
AS 'MODULE_PATHNAME', 'dp_row_soft_float84mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_float84mul(double precision, real) IS 'double precision * real (float84mul), NULL where it fails: on the rows of protected relations';
CREATE FUNCTION dp_agg.row_float84div(double precision, real) RETURNS double precision
AS 'MODULE_PATHNAME', 'dp_row_soft_float84div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_float84div(double precision, real) IS 'double precision / real (float84div), NULL where it fails: on the rows of protected relations';

CREATE OR REPLACE FUNCTION dp_agg.allow_function(function regprocedure)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    f pg_catalog.pg_proc;
    name text := regexp_replace(allow_function.function::text, '^pg_temp_[0-9]+[.]', 'pg_temp.');
BEGIN
    SELECT * INTO f FROM pg_catalog.pg_proc p WHERE p.oid = allow_function.function;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'undefined_function',
            MESSAGE = format('function with OID %s does not exist', coalesce(allow_function.function::oid::text, 'NULL'));
    END IF;
    IF f.oid >= 16384 THEN  -- FirstNormalObjectId (access/transam.h): not built in
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = format('function %s cannot be allowed', name),
            DETAIL = 'Only functions built into PostgreSQL can be allowed on the rows of protected relations.';
    END IF;
    IF f.provolatile = 'v' THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = format('function %s cannot be allowed', name),
            DETAIL = 'It is volatile: it may have side effects, which would count or show the rows it runs for.',
            HINT = 'Only immutable and stable functions can be allowed.';
    END IF;
    IF f.proretset OR f.prolang <> 12 OR f.proconfig IS NOT NULL THEN  -- 12: language internal
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = format('function %s cannot be allowed', name),
            DETAIL = 'Only plain built-in C functions (language internal) that return one value and set no settings can be trapped on rows.';
    END IF;
    INSERT INTO dp_agg.allowed_function (function) VALUES (allow_function.function) ON CONFLICT DO NOTHING;
    IF FOUND THEN
        RAISE NOTICE USING
            MESSAGE = format('function %s is allowed on the rows of protected relations', name),
            DETAIL = 'Roles untrusted for a protected relation may call it on its rows in DP statements. Each call goes through a trap: when it raises an error, the call yields NULL for that row and the error is discarded; its notices are discarded too.',
            HINT = 'Allow only functions without side effects, that run no query and hold no lock or buffer when they fail, and whose work is bounded by the size of their arguments.';
    END IF;
    RETURN FOUND;
END
$$;
COMMENT ON FUNCTION dp_agg.allow_function(regprocedure) IS
'allows a built-in, non-volatile C function on the rows of protected relations, where each call is trapped (a failing call yields NULL): call it only for functions without side effects that run no query, hold no lock when they fail and do work bounded by their arguments; false if it already was';
REVOKE ALL ON FUNCTION dp_agg.allow_function(regprocedure) FROM PUBLIC;

CREATE FUNCTION dp_agg.setting_classes(
    OUT name text, OUT class text, OUT quiet text, OUT reason text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'dp_setting_classes'
LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.setting_classes() IS
'every setting a role can change, classified by what it can make the server tell about the execution of a statement over a protected relation (README "Protected tables", "Settings"): forced to its quiet value during the execution, refused unless quiet, or neither, and why';

CREATE FUNCTION dp_agg.row_functions(OUT function regprocedure, OUT evaluation text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'dp_row_functions'
LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.row_functions() IS
'every built-in function allowed on the rows of protected relations (LEAKPROOF, among the everyday built-ins, or allowed by a DBA), and how its calls are evaluated: never fails, or trapped (a call that fails yields NULL)';
