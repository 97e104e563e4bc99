/* dp_agg: update from 0.3 to 0.4 (ALTER EXTENSION dp_agg UPDATE) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION dp_agg UPDATE TO '0.4'" to load this file. \quit

-- Each section below is one capability of 0.4; a new install runs 0.1 and
-- every update script, so this script is also part of every install.

--------------------------------------------------------------------------
-- Privacy units wherever their rows are read: the unit column by
-- attribute number
--
-- README, "Privacy units".  0.3 stored the unit column by name only, so
-- renaming another column to that name made it the unit, and renaming
-- the unit column made the statements fail.  From 0.4 the column is
-- stored by attribute number (unit_attnum), which follows renames;
-- unit_column is kept as its current name by the event trigger
-- dp_agg_privacy_unit_renamed.  Both are needed: pg_upgrade keeps
-- attribute numbers (and the catalog's rows as they are), but a restore
-- of pg_dump recreates tables without their dropped columns and may
-- number them differently, so a row written by INSERT (a restore, or
-- dp_agg.set_privacy_unit) takes its attribute number from the name.  The
-- library fails closed when the two disagree (a rename while event
-- triggers were disabled, a catalog written by hand).  A dropped unit
-- column removes the unit, with a notice (dp_agg_privacy_unit_forget_dropped).
-- A row of 0.3 whose column was renamed or dropped before the update gets
-- no attribute number and fails closed until its unit is set again.
--------------------------------------------------------------------------

ALTER TABLE dp_agg.privacy_unit ADD COLUMN unit_attnum smallint;
COMMENT ON COLUMN dp_agg.privacy_unit.unit_column IS
'the current name of the unit column (kept up to date through renames)';
COMMENT ON COLUMN dp_agg.privacy_unit.unit_attnum IS
'the attribute number of the unit column in the relation; set from unit_column when a row is written';

-- a row written (by dp_agg.set_privacy_unit, a restore, or a refresh of the
-- name) takes the attribute number of the column its name designates
CREATE FUNCTION dp_agg.privacy_unit_attnum()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    NEW.unit_attnum := (SELECT a.attnum FROM pg_attribute a
                        WHERE a.attrelid = NEW.relation AND a.attname = NEW.unit_column
                          AND a.attnum > 0 AND NOT a.attisdropped);
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION dp_agg.privacy_unit_attnum() IS
'trigger: sets dp_agg.privacy_unit.unit_attnum from the name of the unit column when a row is written';
REVOKE ALL ON FUNCTION dp_agg.privacy_unit_attnum() FROM PUBLIC;

CREATE TRIGGER privacy_unit_attnum
BEFORE INSERT OR UPDATE ON dp_agg.privacy_unit
FOR EACH ROW EXECUTE FUNCTION dp_agg.privacy_unit_attnum();

UPDATE dp_agg.privacy_unit SET unit_column = unit_column;

-- after a rename, the name of each unit column is its current one
CREATE FUNCTION dp_agg.privacy_unit_renamed()
RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF EXISTS (SELECT FROM dp_agg.privacy_unit p JOIN pg_attribute a
               ON a.attrelid = p.relation AND a.attnum = p.unit_attnum
               WHERE a.attname <> p.unit_column AND NOT a.attisdropped) THEN
        UPDATE dp_agg.privacy_unit p SET unit_column = a.attname
        FROM pg_attribute a
        WHERE a.attrelid = p.relation AND a.attnum = p.unit_attnum
          AND a.attname <> p.unit_column AND NOT a.attisdropped;
    END IF;
END
$$;
COMMENT ON FUNCTION dp_agg.privacy_unit_renamed() IS
'event trigger: keeps dp_agg.privacy_unit.unit_column the current name of each unit column';
REVOKE ALL ON FUNCTION dp_agg.privacy_unit_renamed() FROM PUBLIC;

CREATE EVENT TRIGGER dp_agg_privacy_unit_renamed ON ddl_command_end
WHEN TAG IN ('ALTER TABLE', 'ALTER MATERIALIZED VIEW', 'ALTER FOREIGN TABLE', 'ALTER TYPE')
EXECUTE FUNCTION dp_agg.privacy_unit_renamed();
COMMENT ON EVENT TRIGGER dp_agg_privacy_unit_renamed IS
'keeps the names of the unit columns of dp_agg.privacy_unit current through renames';

-- a dropped relation leaves no row behind (its OID could be reused), and
-- a dropped unit column no unit
CREATE OR REPLACE FUNCTION dp_agg.privacy_unit_forget_dropped()
RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
BEGIN
    FOR r IN
        DELETE FROM dp_agg.privacy_unit p
        USING pg_event_trigger_dropped_objects() d
        WHERE d.classid = 'pg_class'::regclass AND d.objid = p.relation::oid
          AND (d.objsubid = 0 OR d.objsubid = p.unit_attnum)
        RETURNING d.objsubid, d.object_identity, p.unit_column
    LOOP
        IF r.objsubid <> 0 THEN
            RAISE NOTICE 'privacy unit removed with its column %', r.object_identity
                USING DETAIL = 'Its rows have no privacy unit of their own any more.',
                      HINT = 'Set another privacy unit with dp_agg.set_privacy_unit.';
        END IF;
    END LOOP;
END
$$;
COMMENT ON FUNCTION dp_agg.privacy_unit_forget_dropped() IS
'event trigger: removes dropped relations, and relations whose unit column was dropped, from dp_agg.privacy_unit';



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

--------------------------------------------------------------------------
-- Public group keys: GROUP BY keys with a public domain (listed in the
-- statement, declared by a DBA, or derived from the statement's constants:
-- histograms and time series), defaults for the private selection of the
-- others, and top-k
--
-- README, "Public group keys".  A DP statement whose GROUP BY keys have a
-- public domain releases every key of the domain (a noisy zero where no row
-- has it) and drops the rows outside it, with no private selection: the
-- planner hook (src/public_domain.c) groups its rows by the index of their
-- key in the domain (dp_agg.domain_index over the domain's keys, a bytea
-- constant of the plan, src/keyset.c), adds one row of its own for each
-- key, which no DP aggregate counts, and releases only groups holding such
-- a row (dp_agg.dp_public, which takes dp_select's place and costs
-- nothing).  Its first argument has type internal: analysts cannot call
-- it.  dp_agg.public_domain holds the domains DBAs declare.
--------------------------------------------------------------------------

CREATE FUNCTION dp_agg.public_transfn(internal, internal, boolean, bigint)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_public_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.public_transfn(internal, internal, boolean, bigint) IS
'transition function of dp_agg.dp_public: counts the rows of a group that belong to its public domain';

CREATE FUNCTION dp_agg.public_finalfn(internal)
RETURNS boolean AS 'MODULE_PATHNAME', 'dp_public_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.public_finalfn(internal) IS
'true for a group of a public domain: one of the domain''s own rows is in it';

CREATE AGGREGATE dp_agg.dp_public(internal, boolean, bigint) (
    SFUNC = dp_agg.public_transfn,
    FINALFUNC = dp_agg.public_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE dp_agg.dp_public(internal, boolean, bigint) IS
'the groups of a public domain (internal: put in DP statements by dp_agg, never called directly); true for a group that holds one of the domain''s own rows; the third argument is the number of keys';

CREATE FUNCTION dp_agg.domain_index(keyset bytea, VARIADIC "any")
RETURNS integer AS 'MODULE_PATHNAME', 'dp_domain_index'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.domain_index(bytea, "any") IS
'the index of a key in the key set of a public domain, NULL if it is not there (made by dp_agg''s planner)';

CREATE FUNCTION dp_agg.domain_key(keyset bytea, index integer, col integer, anyelement)
RETURNS anyelement AS 'MODULE_PATHNAME', 'dp_domain_key'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.domain_key(bytea, integer, integer, anyelement) IS
'column col of the key of an index in the key set of a public domain (made by dp_agg''s planner; the last argument gives the type)';

-- the domains DBAs declare: the keys a column, or an expression of the
-- columns, of a relation can take
CREATE TABLE dp_agg.public_domain (
    relation regclass NOT NULL,
    key text NOT NULL,
    key_type regtype NOT NULL,
    keys text[] NOT NULL,
    set_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (relation, key)
);
COMMENT ON TABLE dp_agg.public_domain IS
'public domains of GROUP BY keys declared by DBAs: a DP statement grouping the rows of relation by key releases every one of keys (and drops the rows with other keys), without private selection';
COMMENT ON COLUMN dp_agg.public_domain.relation IS 'the relation (its partitions and inheritance children too)';
COMMENT ON COLUMN dp_agg.public_domain.key IS 'a column of the relation, or an expression of its columns, as declared (parsed with search_path pg_catalog, pg_temp)';
COMMENT ON COLUMN dp_agg.public_domain.key_type IS 'the type of the key';
COMMENT ON COLUMN dp_agg.public_domain.keys IS 'the keys, as text written with DateStyle ISO, TimeZone UTC and IntervalStyle postgres';
COMMENT ON COLUMN dp_agg.public_domain.set_at IS 'when the domain was last declared';
SELECT pg_catalog.pg_extension_config_dump('dp_agg.public_domain', '');
REVOKE ALL ON dp_agg.public_domain FROM PUBLIC;
GRANT SELECT ON dp_agg.public_domain TO PUBLIC;

CREATE FUNCTION dp_agg.public_domain_changed()
RETURNS trigger
AS 'MODULE_PATHNAME', 'dp_public_domain_changed'
LANGUAGE C;
COMMENT ON FUNCTION dp_agg.public_domain_changed() IS
'trigger: tells every backend that dp_agg.public_domain changed, so that plans made under the old domains are made again';
REVOKE ALL ON FUNCTION dp_agg.public_domain_changed() FROM PUBLIC;

CREATE TRIGGER public_domain_changed
AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON dp_agg.public_domain
FOR EACH STATEMENT EXECUTE FUNCTION dp_agg.public_domain_changed();

CREATE FUNCTION dp_agg.set_public_domain(relation regclass, key text, keys anyarray)
RETURNS integer
AS 'MODULE_PATHNAME', 'dp_set_public_domain'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_agg.set_public_domain(regclass, text, anyarray) IS
'declares the keys a column or expression of a relation can take (superusers and roles with the privileges of its owner): DP statements grouping by it release every key, without private selection; returns the number of keys';
REVOKE ALL ON FUNCTION dp_agg.set_public_domain(regclass, text, anyarray) FROM PUBLIC;

CREATE FUNCTION dp_agg.clear_public_domain(relation regclass, key text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'dp_clear_public_domain'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_agg.clear_public_domain(regclass, text) IS
'removes a declared public domain; false if there was none';
REVOKE ALL ON FUNCTION dp_agg.clear_public_domain(regclass, text) FROM PUBLIC;

-- a dropped relation leaves no domain behind (its OID could be reused)
CREATE FUNCTION dp_agg.public_domain_forget_dropped()
RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    DELETE FROM dp_agg.public_domain p
    USING pg_event_trigger_dropped_objects() d
    WHERE d.classid = 'pg_class'::regclass AND d.objid = p.relation::oid AND d.objsubid = 0;
END
$$;
COMMENT ON FUNCTION dp_agg.public_domain_forget_dropped() IS
'event trigger: removes the public domains of dropped relations from dp_agg.public_domain';
REVOKE ALL ON FUNCTION dp_agg.public_domain_forget_dropped() FROM PUBLIC;

CREATE EVENT TRIGGER dp_agg_public_domain_forget_dropped ON sql_drop
EXECUTE FUNCTION dp_agg.public_domain_forget_dropped();
COMMENT ON EVENT TRIGGER dp_agg_public_domain_forget_dropped IS
'removes the public domains of dropped relations from dp_agg.public_domain';

-- a DP statement on a Citus table whose GROUP BY keys have a public domain:
-- dist_run gets the domain's key set, and returns one row per key
CREATE FUNCTION dp_agg.dist_run(text, bytea) RETURNS SETOF record
AS 'MODULE_PATHNAME', 'dp_dist_run' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dp_agg.dist_run(text, bytea) IS
'runs the distributed part of a priced and charged DP statement on a Citus table whose GROUP BY keys have a public domain, the key set (made by the planner, never called by hand)';

-- top-k (src/top_k.c): HAVING dp_agg.top_k(k [, epsilon]) in a DP statement
-- with GROUP BY keeps the k groups with the most units, chosen by k rounds
-- of report noisy max over the groups the statement would release.  The
-- planner hook takes the condition out of HAVING and adds the internal
-- aggregate dp_agg.dp_top_k (each group's count, kept by the execution)
-- and the window function dp_agg.top_k_rank (which ranks them all at
-- once): analysts call neither.
CREATE FUNCTION dp_agg.top_k(k integer)
RETURNS boolean AS 'MODULE_PATHNAME', 'dp_top_k_condition'
LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.top_k(integer) IS
'HAVING dp_agg.top_k(k) in a DP statement with GROUP BY: release only the k groups with the most units, chosen privately at dp_agg.selection_epsilon (or its default share of the statement''s price)';

CREATE FUNCTION dp_agg.top_k(k integer, epsilon float8)
RETURNS boolean AS 'MODULE_PATHNAME', 'dp_top_k_condition'
LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.top_k(integer, float8) IS
'HAVING dp_agg.top_k(k, epsilon) in a DP statement with GROUP BY: release only the k groups with the most units, chosen privately at epsilon';

CREATE FUNCTION dp_agg.top_k_transfn(internal, internal, integer, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_select_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.top_k_transfn(internal, internal, integer, float8) IS
'transition function of dp_agg.dp_top_k: counts the rows (units) of a group';

CREATE FUNCTION dp_agg.top_k_finalfn(internal)
RETURNS bigint AS 'MODULE_PATHNAME', 'dp_top_k_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.top_k_finalfn(internal) IS
'keeps the count of a group for top-k and returns a handle to it';

CREATE AGGREGATE dp_agg.dp_top_k(internal, integer, float8) (
    SFUNC = dp_agg.top_k_transfn,
    FINALFUNC = dp_agg.top_k_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE dp_agg.dp_top_k(internal, integer, float8) IS
'the count of a group for top-k (internal: put in DP statements by dp_agg, never called directly); k, then epsilon (NULL for the default)';

CREATE FUNCTION dp_agg.top_k_rank(bigint)
RETURNS integer AS 'MODULE_PATHNAME', 'dp_top_k_rank'
LANGUAGE C WINDOW VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION dp_agg.top_k_rank(bigint) IS
'window function over the groups of a DP statement with top-k: ranks them all by report noisy max, once; NULL outside the k (internal: made by dp_agg''s planner)';

CREATE FUNCTION dp_agg.top_k_sample(counts bigint[], k integer, epsilon float8, draws integer)
RETURNS SETOF integer[] AS 'MODULE_PATHNAME', 'dp_top_k_sample'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.top_k_sample(bigint[], integer, float8, integer) IS
'the ranks the top-k mechanism gives counts at epsilon, in each of draws runs (0 outside the k), for tests and audits';
REVOKE ALL ON FUNCTION dp_agg.top_k_sample(bigint[], integer, float8, integer) FROM PUBLIC;
