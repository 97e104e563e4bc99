/* dp_agg: update from 0.3 to 0.4 (ALTER EXTENSION dp_agg UPDATE) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION dp_agg UPDATE TO '0.4'" to load this file. \quit

-- Each section below is one capability of 0.4; a new install runs 0.1 and
-- every update script, so this script is also part of every install.


--------------------------------------------------------------------------
-- Major-version upgrades with pg_upgrade: the allow-list by signature
--
-- pg_upgrade refuses a cluster with a column of type regprocedure in any
-- table (the OIDs of functions are not kept across major versions), so
-- dp_agg.allowed_function names each function by its signature, as
-- pg_identify_object prints it ('pg_catalog.int4pl(integer,integer)'),
-- resolved when the guard reads the catalog (src/protect.c) under the
-- search_path pg_catalog, pg_temp.  An entry that names no function
-- allows nothing.  The other catalogs store only regclass and regrole,
-- whose OIDs pg_upgrade keeps.  Entries whose function no longer exists
-- allowed nothing and are dropped here (their OIDs, below
-- FirstNormalObjectId, are never given to a new function).
--------------------------------------------------------------------------

CREATE FUNCTION dp_agg.resolve_allowed_function(signature text)
RETURNS regprocedure
AS 'MODULE_PATHNAME', 'dp_resolve_allowed_function'
LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.resolve_allowed_function(text) IS
'the function an entry of dp_agg.allowed_function names, resolved as the guard resolves it (search_path pg_catalog, pg_temp); NULL if it names none';

DELETE FROM dp_agg.allowed_function a
WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_proc p WHERE p.oid OPERATOR(pg_catalog.=) a.function::pg_catalog.oid);

ALTER TABLE dp_agg.allowed_function ALTER COLUMN function TYPE text
    USING (pg_catalog.pg_identify_object('pg_catalog.pg_proc'::pg_catalog.regclass,
                                         function::pg_catalog.oid, 0)).identity;
COMMENT ON COLUMN dp_agg.allowed_function.function IS
'the allowed function''s signature, schema-qualified (pg_upgrade keeps no function OIDs); an entry that names no function allows nothing';

CREATE OR REPLACE FUNCTION dp_agg.allow_function(function regprocedure)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    f pg_catalog.pg_proc;
BEGIN
    SELECT * INTO f FROM pg_catalog.pg_proc p WHERE p.oid = allow_function.function;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'undefined_function',
            MESSAGE = format('function with OID %s does not exist', coalesce(allow_function.function::oid::text, 'NULL'));
    END IF;
    IF f.oid >= 16384 THEN  -- FirstNormalObjectId (access/transam.h): not built in
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = format('function %s cannot be allowed',
                             regexp_replace(allow_function.function::text, '^pg_temp_[0-9]+[.]', 'pg_temp.')),
            DETAIL = 'Only functions built into PostgreSQL can be allowed on the rows of protected relations.';
    END IF;
    IF f.provolatile = 'v' THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = format('function %s cannot be allowed',
                             regexp_replace(allow_function.function::text, '^pg_temp_[0-9]+[.]', 'pg_temp.')),
            DETAIL = 'It is volatile: it may have side effects.';
    END IF;
    -- an entry may name it in another spelling (written by hand, or
    -- restored from a dump of version 0.3, which printed no schema)
    IF EXISTS (SELECT FROM dp_agg.allowed_function a
               WHERE dp_agg.resolve_allowed_function(a.function) = f.oid) THEN
        RETURN false;
    END IF;
    INSERT INTO dp_agg.allowed_function (function)
    VALUES ((pg_identify_object('pg_proc'::regclass, f.oid, 0)).identity)
    ON CONFLICT DO NOTHING;
    RETURN FOUND;
END
$$;

CREATE OR REPLACE FUNCTION dp_agg.disallow_function(function regprocedure)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    DELETE FROM dp_agg.allowed_function a
    WHERE dp_agg.resolve_allowed_function(a.function) = disallow_function.function;
    RETURN FOUND;
END
$$;
COMMENT ON FUNCTION dp_agg.disallow_function(regprocedure) IS
'removes a function from dp_agg.allowed_function (every entry that names it); false if it was not there';
