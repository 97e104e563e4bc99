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
-- Everyday statement shapes on protected tables: the sample of privacy
-- units
--
-- README, "Subsampling".  On a relation with a privacy unit, TABLESAMPLE
-- dp_agg.secure_bernoulli (p), and BERNOULLI (p) without REPEATABLE, keep
-- or drop each unit with all its rows: the rewrite of privacy units
-- (src/privacy_unit.c) replaces the clause by the condition
-- dp_agg.unit_sampled(unit, p, method), SipHash-2-4 of the unit's hash
-- under a secret key drawn for each execution (src/unit_sample.c).  The
-- releases are amplified at the level of units.  Lookup joins, privacy
-- units through views, sub-queries and CTEs, DISTINCT inside DP
-- aggregates over protected relations, INSERT ... SELECT and
-- partitionwise aggregation need no SQL object.  dp_agg.unit_sampled
-- stays executable by PUBLIC: the rewritten statement calls it as the
-- analyst; the guard refuses it anywhere else, and a leader evaluates only
-- the rewrite's calls.
--------------------------------------------------------------------------

CREATE FUNCTION dp_agg.unit_sampled(anyelement, real, integer)
RETURNS boolean
AS 'MODULE_PATHNAME', 'dp_unit_sampled'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.unit_sampled(anyelement, real, integer) IS
'internal (privacy units): whether a unit is in the sample of the execution (TABLESAMPLE on a relation with a privacy unit); only in statements rewritten by dp_agg';
