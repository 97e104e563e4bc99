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
