/* dp_agg: update from 0.1 to 0.2 (ALTER EXTENSION dp_agg UPDATE) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION dp_agg UPDATE TO '0.2'" to load this file. \quit

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

-- Version 0.2 is installed as 0.1 plus this script (there is no
-- dp_agg--0.2.sql): a new install and an updated one run the same SQL.
-- Every later SQL change goes into a new dp_agg--0.N--0.M.sql the same way.


--------------------------------------------------------------------------
-- The stored Renyi DP curves have the shape the charger composes on: one
-- value per order of dp_agg.rdp_orders(), none missing, none negative (a
-- Renyi divergence is never negative), none NaN (0 <= NaN holds in SQL, so
-- NaN needs its own test).  The charger counted a missing value
-- as 0, which would have understated the spent budget.  Adding the checks
-- validates the rows already there: an update over a damaged curve fails
-- and changes nothing.
--------------------------------------------------------------------------

ALTER TABLE dp_agg.budget ADD CONSTRAINT budget_rdp_shape CHECK (
    rdp IS NULL OR (
        pg_catalog.array_ndims(rdp) = 1
        AND pg_catalog.cardinality(rdp) = pg_catalog.cardinality(dp_agg.rdp_orders())
        AND pg_catalog.array_position(rdp, NULL) IS NULL
        AND 0 <= ALL (rdp)
        AND 'NaN'::float8 <> ALL (rdp)));

ALTER TABLE dp_agg.ledger ADD CONSTRAINT ledger_rdp_shape CHECK (
    rdp IS NULL OR (
        pg_catalog.array_ndims(rdp) = 1
        AND pg_catalog.cardinality(rdp) = pg_catalog.cardinality(dp_agg.rdp_orders())
        AND pg_catalog.array_position(rdp, NULL) IS NULL
        AND 0 <= ALL (rdp)
        AND 'NaN'::float8 <> ALL (rdp)));

--------------------------------------------------------------------------
-- Protected tables (README, "Protected tables").  Only the extension
-- writes these catalogs: the functions below, as the owner of the
-- catalogs, after checking that the caller may administer the relation.
-- Any change of either table (also by pg_restore or by hand) tells every
-- backend to drop its cached copy (trigger protect_changed).
--------------------------------------------------------------------------

CREATE TABLE dp_agg.protected (
    relation regclass PRIMARY KEY,
    protected_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE dp_agg.protected IS 'relations that untrusted roles read only through DP statements (a partitioned table with its partitions)';
COMMENT ON COLUMN dp_agg.protected.relation IS 'the protected table, partitioned table or materialized view';
COMMENT ON COLUMN dp_agg.protected.protected_at IS 'when it was protected';

CREATE TABLE dp_agg.access (
    relation regclass NOT NULL REFERENCES dp_agg.protected ON DELETE CASCADE,
    role regrole NOT NULL,
    granted_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (relation, role)
);
COMMENT ON TABLE dp_agg.access IS 'roles that may run DP statements over a protected relation without SELECT on it';
COMMENT ON COLUMN dp_agg.access.relation IS 'the protected relation';
COMMENT ON COLUMN dp_agg.access.role IS 'the role granted access (by OID: a role dropped and created again has none)';
COMMENT ON COLUMN dp_agg.access.granted_at IS 'when access was granted';

SELECT pg_catalog.pg_extension_config_dump('dp_agg.protected', '');
SELECT pg_catalog.pg_extension_config_dump('dp_agg.access', '');
REVOKE ALL ON dp_agg.protected, dp_agg.access FROM PUBLIC;

CREATE FUNCTION dp_agg.protect_changed()
RETURNS trigger
AS 'MODULE_PATHNAME', 'dp_protect_changed'
LANGUAGE C;
COMMENT ON FUNCTION dp_agg.protect_changed() IS
'trigger: tells every backend that dp_agg.protected or dp_agg.access changed';
REVOKE ALL ON FUNCTION dp_agg.protect_changed() FROM PUBLIC;

CREATE TRIGGER protect_changed
AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON dp_agg.protected
FOR EACH STATEMENT EXECUTE FUNCTION dp_agg.protect_changed();
CREATE TRIGGER protect_changed
AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON dp_agg.access
FOR EACH STATEMENT EXECUTE FUNCTION dp_agg.protect_changed();

CREATE VIEW dp_agg.my_access WITH (security_barrier) AS
SELECT a.relation, a.granted_at
FROM dp_agg.access a
WHERE a.role OPERATOR(pg_catalog.=)
      (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER)::pg_catalog.regrole;
COMMENT ON VIEW dp_agg.my_access IS 'the protected relations the current role was granted access to';
GRANT SELECT ON dp_agg.my_access TO PUBLIC;

CREATE FUNCTION dp_agg.protect(relation regclass)
RETURNS boolean
AS 'MODULE_PATHNAME', 'dp_protect'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_agg.protect(regclass) IS
'protects a table, partitioned table (with its partitions) or materialized view: untrusted roles read it only through DP statements; false if it already was';
REVOKE ALL ON FUNCTION dp_agg.protect(regclass) FROM PUBLIC;

CREATE FUNCTION dp_agg.unprotect(relation regclass)
RETURNS boolean
AS 'MODULE_PATHNAME', 'dp_unprotect'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_agg.unprotect(regclass) IS
'removes the protection of a relation and every grant of access to it; false if it was not protected';
REVOKE ALL ON FUNCTION dp_agg.unprotect(regclass) FROM PUBLIC;

CREATE FUNCTION dp_agg.grant_access(relation regclass, role regrole)
RETURNS boolean
AS 'MODULE_PATHNAME', 'dp_grant_access'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_agg.grant_access(regclass, regrole) IS
'lets a role run DP statements over a protected relation without SELECT on it; false if it already could';
REVOKE ALL ON FUNCTION dp_agg.grant_access(regclass, regrole) FROM PUBLIC;

CREATE FUNCTION dp_agg.revoke_access(relation regclass, role regrole)
RETURNS boolean
AS 'MODULE_PATHNAME', 'dp_revoke_access'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_agg.revoke_access(regclass, regrole) IS
'takes back a grant_access; false if the role had no grant';
REVOKE ALL ON FUNCTION dp_agg.revoke_access(regclass, regrole) FROM PUBLIC;

-- A dropped relation leaves no row behind: its OID could be reused by a
-- relation that nobody protected or granted.
CREATE FUNCTION dp_agg.protect_forget_dropped()
RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    DELETE FROM dp_agg.protected p
    WHERE p.relation::oid IN (SELECT d.objid FROM pg_event_trigger_dropped_objects() d
                              WHERE d.classid = 'pg_class'::regclass AND d.objsubid = 0);
END
$$;
COMMENT ON FUNCTION dp_agg.protect_forget_dropped() IS
'event trigger: removes dropped relations from dp_agg.protected (and their grants)';
REVOKE ALL ON FUNCTION dp_agg.protect_forget_dropped() FROM PUBLIC;

CREATE EVENT TRIGGER dp_agg_protect_forget_dropped ON sql_drop
EXECUTE FUNCTION dp_agg.protect_forget_dropped();
COMMENT ON EVENT TRIGGER dp_agg_protect_forget_dropped IS
'removes dropped relations from dp_agg.protected (and their grants from dp_agg.access)';

--------------------------------------------------------------------------
-- Functions allowed on the rows of protected relations in statements of
-- untrusted roles, besides the LEAKPROOF ones and dp_agg's built-in list
-- (README, "Protected tables").  Only built-in, non-volatile functions
-- can be allowed; the functions below check it.
--------------------------------------------------------------------------

CREATE TABLE dp_agg.allowed_function (
    function regprocedure PRIMARY KEY,
    allowed_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE dp_agg.allowed_function IS 'built-in functions a DBA allowed on the rows of protected relations: each must neither fail nor have side effects for any argument';
COMMENT ON COLUMN dp_agg.allowed_function.function IS 'the allowed function';
COMMENT ON COLUMN dp_agg.allowed_function.allowed_at IS 'when it was allowed';
SELECT pg_catalog.pg_extension_config_dump('dp_agg.allowed_function', '');
REVOKE ALL ON dp_agg.allowed_function FROM PUBLIC;
GRANT SELECT ON dp_agg.allowed_function TO PUBLIC;
CREATE TRIGGER protect_changed
AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON dp_agg.allowed_function
FOR EACH STATEMENT EXECUTE FUNCTION dp_agg.protect_changed();

CREATE FUNCTION dp_agg.allow_function(function regprocedure)
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
    INSERT INTO dp_agg.allowed_function (function) VALUES (allow_function.function) ON CONFLICT DO NOTHING;
    RETURN FOUND;
END
$$;
COMMENT ON FUNCTION dp_agg.allow_function(regprocedure) IS
'allows a built-in, non-volatile function on the rows of protected relations: call it only for functions that neither fail nor have side effects for any argument; false if it already was';
REVOKE ALL ON FUNCTION dp_agg.allow_function(regprocedure) FROM PUBLIC;

CREATE FUNCTION dp_agg.disallow_function(function regprocedure)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    DELETE FROM dp_agg.allowed_function a WHERE a.function = disallow_function.function;
    RETURN FOUND;
END
$$;
COMMENT ON FUNCTION dp_agg.disallow_function(regprocedure) IS
'removes a function from dp_agg.allowed_function; false if it was not there';
REVOKE ALL ON FUNCTION dp_agg.disallow_function(regprocedure) FROM PUBLIC;
