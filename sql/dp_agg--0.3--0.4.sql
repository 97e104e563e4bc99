/* dp_agg: update from 0.3 to 0.4 (ALTER EXTENSION dp_agg UPDATE) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION dp_agg UPDATE TO '0.4'" to load this file. \quit

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


--------------------------------------------------------------------------
-- The analyst's statistics: spread, quantiles, automatic bounds and error
-- bars (README, "Aggregates", "Error bars" and "Privacy units").
--
-- dp_var and dp_stddev release the population variance and standard
-- deviation of values clamped to [lower, upper] from a noisy count, a
-- noisy centred sum and a noisy sum of centred squares (src/estimators.c,
-- the split of epsilon in src/release.c).  Their transition functions run
-- the C code of dp_avg's, which adds the squares when the ticket asks for
-- them, under names of their own: PostgreSQL shares one transition state
-- between aggregates of the same transition function and arguments whose
-- final functions allow it (the internal aggregates of privacy units), and
-- a variance must not share an average's state, which has no squares.
-- The same combine, serialize and deserialize functions; under a privacy
-- unit each unit contributes at most max_rows_contributed rows' worth at
-- its own mean (as dp_avg now does).
--------------------------------------------------------------------------

CREATE FUNCTION dp_agg.var_float_finalfn(internal)
RETURNS double precision AS 'MODULE_PATHNAME', 'dp_var_float_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.var_float_finalfn(internal) IS 'releases a noisy population variance';

CREATE FUNCTION dp_agg.var_numeric_finalfn(internal)
RETURNS numeric AS 'MODULE_PATHNAME', 'dp_var_numeric_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.var_numeric_finalfn(internal) IS 'releases a noisy population variance of numerics, rounded to the precision of its noise';

CREATE FUNCTION dp_agg.stddev_float_finalfn(internal)
RETURNS double precision AS 'MODULE_PATHNAME', 'dp_stddev_float_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.stddev_float_finalfn(internal) IS 'releases a noisy population standard deviation';

CREATE FUNCTION dp_agg.stddev_numeric_finalfn(internal)
RETURNS numeric AS 'MODULE_PATHNAME', 'dp_stddev_numeric_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.stddev_numeric_finalfn(internal) IS 'releases a noisy population standard deviation of numerics, rounded to the precision of its noise';

CREATE FUNCTION dp_agg.unit_bound_var_finalfn(internal)
RETURNS bytea AS 'MODULE_PATHNAME', 'dp_unit_bound_var_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.unit_bound_var_finalfn(internal) IS
'internal (privacy units): one unit''s count, total and sum of centred squares in a group, max_rows_contributed rows'' worth at the unit''s own mean';

CREATE FUNCTION dp_agg.unit_bound_stddev_finalfn(internal)
RETURNS bytea AS 'MODULE_PATHNAME', 'dp_unit_bound_stddev_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.unit_bound_stddev_finalfn(internal) IS
'internal (privacy units): one unit''s count, total and sum of centred squares in a group, max_rows_contributed rows'' worth at the unit''s own mean';

DO $$
DECLARE
    t text;
    tail text;
    c text;
BEGIN
    FOREACH t IN ARRAY ARRAY['int2', 'int4', 'int8', 'float4', 'float8', 'numeric'] LOOP
        c := 'dp_sum_' || t || '_trans';
        FOREACH tail IN ARRAY ARRAY['', ', float8', ', float8, float8'] LOOP
            EXECUTE pg_catalog.format(
                'CREATE FUNCTION dp_agg.var_transfn(internal, %1$s, %1$s, %1$s%2$s) RETURNS internal '
                'AS %3$L, %4$L LANGUAGE C PARALLEL SAFE', t, tail, 'MODULE_PATHNAME', c);
            EXECUTE pg_catalog.format(
                'COMMENT ON FUNCTION dp_agg.var_transfn(internal, %1$s, %1$s, %1$s%2$s) IS %3$L', t, tail,
                'transition function of dp_var and dp_stddev(' || pg_catalog.format_type(t::regtype, NULL) ||
                '): rows, their clamped sum and their centred squares');
            EXECUTE pg_catalog.format(
                'REVOKE ALL ON FUNCTION dp_agg.var_transfn(internal, %1$s, %1$s, %1$s%2$s) FROM PUBLIC', t, tail);
            EXECUTE pg_catalog.format(
                'CREATE FUNCTION dp_agg.unit_pick_var_transfn(internal, %1$s, %1$s, %1$s%2$s, bigint) '
                'RETURNS internal AS %3$L, %4$L LANGUAGE C PARALLEL SAFE', t, tail, 'MODULE_PATHNAME',
                'dp_unit_pick_trans');
            EXECUTE pg_catalog.format(
                'COMMENT ON FUNCTION dp_agg.unit_pick_var_transfn(internal, %1$s, %1$s, %1$s%2$s, bigint) IS %3$L',
                t, tail, 'internal (privacy units): accumulates the rows of a unit''s smallest priority, with their squares');
            EXECUTE pg_catalog.format(
                'REVOKE ALL ON FUNCTION dp_agg.unit_pick_var_transfn(internal, %1$s, %1$s, %1$s%2$s, bigint) FROM PUBLIC',
                t, tail);
        END LOOP;
    END LOOP;
END
$$;

REVOKE ALL ON FUNCTION dp_agg.var_float_finalfn(internal), dp_agg.var_numeric_finalfn(internal),
    dp_agg.stddev_float_finalfn(internal), dp_agg.stddev_numeric_finalfn(internal),
    dp_agg.unit_bound_var_finalfn(internal), dp_agg.unit_bound_stddev_finalfn(internal)
FROM PUBLIC;

-- The level-1 bounding of dp_avg now weights a unit's rows: the comment of
-- its final function says so.
COMMENT ON FUNCTION dp_agg.unit_bound_avg_finalfn(internal) IS
'internal (privacy units): one unit''s count and total in a group, max_rows_contributed rows'' worth at the unit''s own mean';

-- dp_var and dp_stddev of each value type, with bounds, with epsilon, with
-- epsilon and delta; and for each, the internal aggregates of privacy
-- units (as the 0.3 update made them for dp_count, dp_sum and dp_avg).
DO $$
DECLARE
    t text;
    stat text;
    args text;
    tail text;
    result text;
    finalfn text;
    what text;
BEGIN
    FOREACH stat IN ARRAY ARRAY['var', 'stddev'] LOOP
        FOREACH t IN ARRAY ARRAY['int2', 'int4', 'int8', 'float4', 'float8', 'numeric'] LOOP
            result := CASE WHEN t = 'numeric' THEN 'numeric' ELSE 'float8' END;
            finalfn := pg_catalog.format('dp_agg.%s_%s_finalfn', stat,
                                         CASE WHEN t = 'numeric' THEN 'numeric' ELSE 'float' END);
            what := CASE WHEN stat = 'var' THEN 'variance' ELSE 'standard deviation' END;
            FOREACH tail IN ARRAY ARRAY['', ', float8', ', float8, float8'] LOOP
                args := pg_catalog.format('%1$s, %1$s, %1$s%2$s', t, tail);
                EXECUTE pg_catalog.format(
                    'CREATE AGGREGATE @extschema@.%I(%s) (SFUNC = dp_agg.var_transfn, STYPE = internal, '
                    'SSPACE = 128, FINALFUNC = %s, COMBINEFUNC = dp_agg.combinefn, '
                    'SERIALFUNC = dp_agg.serialfn, DESERIALFUNC = dp_agg.deserialfn, '
                    'FINALFUNC_MODIFY = READ_WRITE, PARALLEL = SAFE)',
                    'dp_' || stat, args, finalfn);
                EXECUTE pg_catalog.format(
                    'COMMENT ON AGGREGATE @extschema@.%I(%s) IS %L', 'dp_' || stat, args,
                    'differentially private population ' || what || ' of values clamped to [lower, upper]: '
                    'from a noisy count, centred sum and sum of centred squares (epsilon and delta split 0.371, 0.450, 0.179), '
                    'never negative; ' ||
                    CASE tail WHEN '' THEN 'epsilon and delta from the settings'
                              WHEN ', float8' THEN 'with the given epsilon; delta from dp_agg.delta'
                              ELSE 'with the given epsilon and delta' END);
                -- privacy units: level 1, level 3, and the fused level 1 of k = 1
                EXECUTE pg_catalog.format(
                    'CREATE AGGREGATE dp_agg.%I(%s) (SFUNC = dp_agg.var_transfn, STYPE = internal, SSPACE = 128, '
                    'FINALFUNC = dp_agg.unit_bound_%s_finalfn, COMBINEFUNC = dp_agg.combinefn, '
                    'SERIALFUNC = dp_agg.serialfn, DESERIALFUNC = dp_agg.deserialfn, PARALLEL = SAFE)',
                    'unit_bound_dp_' || stat, args, stat);
                EXECUTE pg_catalog.format(
                    'COMMENT ON AGGREGATE dp_agg.%I(%s) IS %L', 'unit_bound_dp_' || stat, args,
                    'internal (privacy units): one unit''s bounded contribution to dp_' || stat ||
                    ' in one group; only in statements rewritten by dp_agg');
                EXECUTE pg_catalog.format(
                    'CREATE AGGREGATE dp_agg.%I(bytea, %2$s, %2$s%3$s) (SFUNC = dp_agg.unit_collect_transfn, '
                    'STYPE = internal, SSPACE = 128, FINALFUNC = %4$s, FINALFUNC_MODIFY = READ_WRITE, '
                    'COMBINEFUNC = dp_agg.combinefn, SERIALFUNC = dp_agg.serialfn, '
                    'DESERIALFUNC = dp_agg.deserialfn, PARALLEL = SAFE)',
                    'unit_release_dp_' || stat, t, tail, finalfn);
                EXECUTE pg_catalog.format(
                    'COMMENT ON AGGREGATE dp_agg.%I(bytea, %2$s, %2$s%3$s) IS %4$L',
                    'unit_release_dp_' || stat, t, tail,
                    'internal (privacy units): dp_' || stat ||
                    ' over the bounded contributions of units; only in statements rewritten by dp_agg');
                EXECUTE pg_catalog.format(
                    'CREATE AGGREGATE dp_agg.%I(%s, bigint) (SFUNC = dp_agg.unit_pick_var_transfn, STYPE = internal, '
                    'SSPACE = 144, FINALFUNC = dp_agg.unit_bound_%s_finalfn, COMBINEFUNC = dp_agg.combinefn, '
                    'SERIALFUNC = dp_agg.serialfn, DESERIALFUNC = dp_agg.deserialfn, PARALLEL = SAFE)',
                    'unit_pick_bound_dp_' || stat, args, stat);
                EXECUTE pg_catalog.format(
                    'COMMENT ON AGGREGATE dp_agg.%I(%s, bigint) IS %L', 'unit_pick_bound_dp_' || stat, args,
                    'internal (privacy units): one unit''s bounded contribution to dp_' || stat ||
                    ' in its group of smallest priority; only in statements rewritten by dp_agg');
            END LOOP;
        END LOOP;
    END LOOP;
END
$$;

-- Error bars, in the statement that releases the value (README, "Preview
-- and error bars").  dp_interval_low(x), dp_interval_high(x): the 95%
-- interval of the release x, a DP aggregate or a sub-query's column that
-- holds one; dp_noise_scale(x): the scale of its noise; dp_lower_bound(x),
-- dp_upper_bound(x): the clamping bounds it used.  The planner hook
-- (src/error_bars.c) makes the aggregate return a dp_agg.estimate (its
-- value and error bar from the noise it drew) and every use of it read a
-- part of that estimate, so the error bar costs nothing.  The functions'
-- own bodies run only when their argument is not a release: they refuse.

CREATE TYPE dp_agg.estimate;

CREATE FUNCTION dp_agg.estimate_in(cstring) RETURNS dp_agg.estimate
AS 'MODULE_PATHNAME', 'dp_estimate_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.estimate_in(cstring) IS
'input of dp_agg.estimate: refuses, estimates are made by DP aggregates only';

CREATE FUNCTION dp_agg.estimate_out(dp_agg.estimate) RETURNS cstring
AS 'MODULE_PATHNAME', 'dp_estimate_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.estimate_out(dp_agg.estimate) IS
'output of dp_agg.estimate: (value, low, high, noise scale, lower bound, upper bound)';

CREATE TYPE dp_agg.estimate (
    INPUT = dp_agg.estimate_in,
    OUTPUT = dp_agg.estimate_out,
    INTERNALLENGTH = VARIABLE,
    ALIGNMENT = double,
    STORAGE = plain
);
COMMENT ON TYPE dp_agg.estimate IS
'a released value with its error bar (95% interval, noise scale, clamping bounds), made by a DP aggregate whose error bars a statement asks for';

CREATE FUNCTION dp_agg.estimate_part(dp_agg.estimate, integer, anyelement) RETURNS anyelement
AS 'MODULE_PATHNAME', 'dp_estimate_part_sql' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.estimate_part(dp_agg.estimate, integer, anyelement) IS
'a part of an estimate (0 the value, 1 and 2 the ends of its 95% interval, 3 and 4 the clamping bounds), of the type of the third argument (made by the rewrite of error bars)';

CREATE FUNCTION dp_agg.estimate_scale(dp_agg.estimate) RETURNS float8
AS 'MODULE_PATHNAME', 'dp_estimate_scale_sql' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.estimate_scale(dp_agg.estimate) IS
'the noise scale of an estimate (made by the rewrite of error bars)';

CREATE FUNCTION @extschema@.dp_interval_low(anyelement) RETURNS anyelement
AS 'MODULE_PATHNAME', 'dp_interval_outside' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.dp_interval_low(anyelement) IS
'the low end of the 95% interval of a DP aggregate''s release (the aggregate, or a sub-query''s column that holds one), from the noise it drew, at no price';

CREATE FUNCTION @extschema@.dp_interval_high(anyelement) RETURNS anyelement
AS 'MODULE_PATHNAME', 'dp_interval_outside' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.dp_interval_high(anyelement) IS
'the high end of the 95% interval of a DP aggregate''s release (the aggregate, or a sub-query''s column that holds one), from the noise it drew, at no price';

CREATE FUNCTION @extschema@.dp_noise_scale(anyelement) RETURNS float8
AS 'MODULE_PATHNAME', 'dp_interval_outside' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.dp_noise_scale(anyelement) IS
'the noise scale of a DP aggregate''s release: the Laplace scale or Gaussian sigma of a count or sum, the first-order standard deviation of the error of an average, variance or standard deviation, the scale of a quantile tree''s counts';

CREATE FUNCTION @extschema@.dp_lower_bound(anyelement) RETURNS anyelement
AS 'MODULE_PATHNAME', 'dp_interval_outside' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.dp_lower_bound(anyelement) IS
'the lower clamping bound a DP aggregate''s release used (given, or estimated when the bounds were left out); NULL for a count';

CREATE FUNCTION @extschema@.dp_upper_bound(anyelement) RETURNS anyelement
AS 'MODULE_PATHNAME', 'dp_interval_outside' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.dp_upper_bound(anyelement) IS
'the upper clamping bound a DP aggregate''s release used (given, or estimated when the bounds were left out); NULL for a count';

-- the estimate of a call on a Citus table, released on the coordinator
CREATE FUNCTION dp_agg.dist_release(dp_agg.dist_state, integer, dp_agg.estimate) RETURNS dp_agg.estimate
AS 'MODULE_PATHNAME', 'dp_dist_release' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_agg.dist_release(dp_agg.dist_state, integer, dp_agg.estimate) IS
'noisy release of a DP aggregate on a Citus table with its error bar, on the coordinator (made by the planner)';

-- Quantiles (README, "Quantiles"): dp_percentile(x, p, lower, upper
-- [, epsilon]) with p a fraction or an array of them (one price for all),
-- and dp_median(x, lower, upper [, epsilon]); without bounds the tree's
-- leaves are log-linear over every value.  Epsilon-DP: the bounded
-- quantile tree (src/quantile_tree.c), branching factor 16, height 3,
-- 4096 leaves; its state is at most 16 kB whatever the rows, combined by
-- addition in parallel plans.

CREATE FUNCTION dp_agg.tree_combinefn(internal, internal)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_tree_combine'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.tree_combinefn(internal, internal) IS 'combines partial quantile trees';

CREATE FUNCTION dp_agg.tree_serialfn(internal)
RETURNS bytea AS 'MODULE_PATHNAME', 'dp_tree_serialize_sql'
LANGUAGE C STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.tree_serialfn(internal) IS 'serializes a partial quantile tree (only between processes)';

CREATE FUNCTION dp_agg.tree_deserialfn(bytea, internal)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_tree_deserialize_sql'
LANGUAGE C STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.tree_deserialfn(bytea, internal) IS 'deserializes and validates a partial quantile tree (only between processes)';

CREATE FUNCTION dp_agg.percentile_float_finalfn(internal)
RETURNS double precision AS 'MODULE_PATHNAME', 'dp_percentile_float_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.percentile_float_finalfn(internal) IS 'releases a noisy percentile';

CREATE FUNCTION dp_agg.percentile_numeric_finalfn(internal)
RETURNS numeric AS 'MODULE_PATHNAME', 'dp_percentile_numeric_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.percentile_numeric_finalfn(internal) IS 'releases a noisy percentile of numerics, rounded to the precision of its noise';

CREATE FUNCTION dp_agg.percentile_float_array_finalfn(internal)
RETURNS double precision[] AS 'MODULE_PATHNAME', 'dp_percentile_float_array_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.percentile_float_array_finalfn(internal) IS 'releases noisy percentiles from one noisy tree';

CREATE FUNCTION dp_agg.percentile_numeric_array_finalfn(internal)
RETURNS numeric[] AS 'MODULE_PATHNAME', 'dp_percentile_numeric_array_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.percentile_numeric_array_finalfn(internal) IS 'releases noisy percentiles of numerics from one noisy tree, each rounded to the precision of its noise';

CREATE FUNCTION dp_agg.median_float_finalfn(internal)
RETURNS double precision AS 'MODULE_PATHNAME', 'dp_median_float_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.median_float_finalfn(internal) IS 'releases a noisy median';

CREATE FUNCTION dp_agg.median_numeric_finalfn(internal)
RETURNS numeric AS 'MODULE_PATHNAME', 'dp_median_numeric_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.median_numeric_finalfn(internal) IS 'releases a noisy median of numerics, rounded to the precision of its noise';

CREATE FUNCTION dp_agg.unit_bound_percentile_finalfn(internal)
RETURNS bytea AS 'MODULE_PATHNAME', 'dp_unit_bound_percentile_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.unit_bound_percentile_finalfn(internal) IS
'internal (privacy units): max_rows_contributed of one unit''s rows in a group, chosen at random, as leaves of the quantile tree';

CREATE FUNCTION dp_agg.unit_bound_median_finalfn(internal)
RETURNS bytea AS 'MODULE_PATHNAME', 'dp_unit_bound_median_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.unit_bound_median_finalfn(internal) IS
'internal (privacy units): max_rows_contributed of one unit''s rows in a group, chosen at random, as leaves of the quantile tree';

REVOKE ALL ON FUNCTION dp_agg.tree_combinefn(internal, internal), dp_agg.tree_serialfn(internal),
    dp_agg.tree_deserialfn(bytea, internal), dp_agg.percentile_float_finalfn(internal),
    dp_agg.percentile_numeric_finalfn(internal), dp_agg.percentile_float_array_finalfn(internal),
    dp_agg.percentile_numeric_array_finalfn(internal), dp_agg.median_float_finalfn(internal),
    dp_agg.median_numeric_finalfn(internal), dp_agg.unit_bound_percentile_finalfn(internal),
    dp_agg.unit_bound_median_finalfn(internal)
FROM PUBLIC;

-- For each value type: the transition functions, the aggregates with and
-- without bounds, and (with bounds) the internal aggregates of privacy
-- units.
DO $$
DECLARE
    t text;
    kind text;
    pt text;
    args text;
    tail text;
    body text;
    result text;
    finalfn text;
    what text;
    forms text[];
    sargs text;
    i int;
BEGIN
    FOREACH t IN ARRAY ARRAY['int2', 'int4', 'int8', 'float4', 'float8', 'numeric'] LOOP
        FOREACH kind IN ARRAY ARRAY['percentile', 'median'] LOOP
            FOREACH pt IN ARRAY CASE kind WHEN 'percentile' THEN ARRAY['float8', 'float8[]'] ELSE ARRAY[''] END LOOP
                -- the forms: (x[, p], lower, upper), with epsilon, and without bounds
                body := CASE WHEN pt = '' THEN t ELSE t || ', ' || pt END;
                forms := ARRAY[pg_catalog.format('%1$s, %2$s, %2$s', body, t),
                               pg_catalog.format('%1$s, %2$s, %2$s, float8', body, t),
                               body];
                result := CASE WHEN t = 'numeric' THEN 'numeric' ELSE 'float8' END ||
                          CASE WHEN pt = 'float8[]' THEN '[]' ELSE '' END;
                finalfn := pg_catalog.format('dp_agg.%s_%s%s_finalfn', kind,
                                             CASE WHEN t = 'numeric' THEN 'numeric' ELSE 'float' END,
                                             CASE WHEN pt = 'float8[]' THEN '_array' ELSE '' END);
                what := CASE WHEN kind = 'median' THEN 'median'
                             WHEN pt = 'float8[]' THEN 'percentiles p (an array, one price for all)'
                             ELSE 'percentile p' END;
                FOR i IN 1 .. 3 LOOP
                    args := forms[i];
                    EXECUTE pg_catalog.format(
                        'CREATE FUNCTION dp_agg.%I(internal, %s) RETURNS internal AS %L, %L '
                        'LANGUAGE C PARALLEL SAFE', kind || '_transfn', args, 'MODULE_PATHNAME',
                        'dp_tree_' || t || '_trans');
                    EXECUTE pg_catalog.format(
                        'COMMENT ON FUNCTION dp_agg.%I(internal, %s) IS %L', kind || '_transfn', args,
                        'transition function of dp_' || kind || '(' || pg_catalog.format_type(t::regtype, NULL) ||
                        '): the leaves of the quantile tree');
                    EXECUTE pg_catalog.format(
                        'REVOKE ALL ON FUNCTION dp_agg.%I(internal, %s) FROM PUBLIC', kind || '_transfn', args);
                    EXECUTE pg_catalog.format(
                        'CREATE AGGREGATE @extschema@.%I(%s) (SFUNC = dp_agg.%I, STYPE = internal, '
                        'SSPACE = 16384, FINALFUNC = %s, COMBINEFUNC = dp_agg.tree_combinefn, '
                        'SERIALFUNC = dp_agg.tree_serialfn, DESERIALFUNC = dp_agg.tree_deserialfn, '
                        'FINALFUNC_MODIFY = READ_WRITE, PARALLEL = SAFE)',
                        'dp_' || kind, args, kind || '_transfn', finalfn);
                    EXECUTE pg_catalog.format(
                        'COMMENT ON AGGREGATE @extschema@.%I(%s) IS %L', 'dp_' || kind, args,
                        'differentially private ' || what || ' of values ' ||
                        CASE WHEN args = body THEN 'on log-linear leaves over every value (no bounds needed)'
                             ELSE 'clamped to [lower, upper]' END ||
                        ': a quantile tree (branching 16, height 3, discrete Laplace noise of scale 3 / epsilon on its counts), '
                        'epsilon-DP (delta 0); ' ||
                        CASE WHEN i = 2 THEN 'with the given epsilon (NULL bounds: log-linear leaves)'
                             ELSE 'epsilon from dp_agg.epsilon' END);
                    IF i < 3 THEN
                        -- privacy units: level 1, level 3 and the fused level 1 of k = 1
                        EXECUTE pg_catalog.format(
                            'CREATE AGGREGATE dp_agg.%I(%s) (SFUNC = dp_agg.%I, STYPE = internal, SSPACE = 512, '
                            'FINALFUNC = dp_agg.unit_bound_%s_finalfn, COMBINEFUNC = dp_agg.tree_combinefn, '
                            'SERIALFUNC = dp_agg.tree_serialfn, DESERIALFUNC = dp_agg.tree_deserialfn, PARALLEL = SAFE)',
                            'unit_bound_dp_' || kind, args, kind || '_transfn', kind);
                        EXECUTE pg_catalog.format(
                            'COMMENT ON AGGREGATE dp_agg.%I(%s) IS %L', 'unit_bound_dp_' || kind, args,
                            'internal (privacy units): one unit''s bounded contribution to dp_' || kind ||
                            ' in one group; only in statements rewritten by dp_agg');
                        -- level 3: the contribution in place of the value
                        sargs := pg_catalog.regexp_replace(args, '^[^,]+', 'bytea');
                        IF pg_catalog.to_regprocedure(pg_catalog.format('dp_agg.unit_collect_tree_transfn(internal, %s)', sargs)) IS NULL THEN
                            EXECUTE pg_catalog.format(
                                'CREATE FUNCTION dp_agg.unit_collect_tree_transfn(internal, %s) RETURNS internal '
                                'AS %L, %L LANGUAGE C PARALLEL SAFE', sargs, 'MODULE_PATHNAME', 'dp_unit_collect_tree_trans');
                            EXECUTE pg_catalog.format(
                                'COMMENT ON FUNCTION dp_agg.unit_collect_tree_transfn(internal, %s) IS %L', sargs,
                                'internal (privacy units): adds one unit''s bounded rows to a group''s quantile tree');
                            EXECUTE pg_catalog.format(
                                'REVOKE ALL ON FUNCTION dp_agg.unit_collect_tree_transfn(internal, %s) FROM PUBLIC', sargs);
                        END IF;
                        EXECUTE pg_catalog.format(
                            'CREATE AGGREGATE dp_agg.%I(%s) (SFUNC = dp_agg.unit_collect_tree_transfn, '
                            'STYPE = internal, SSPACE = 16384, FINALFUNC = %s, FINALFUNC_MODIFY = READ_WRITE, '
                            'COMBINEFUNC = dp_agg.tree_combinefn, SERIALFUNC = dp_agg.tree_serialfn, '
                            'DESERIALFUNC = dp_agg.tree_deserialfn, PARALLEL = SAFE)',
                            'unit_release_dp_' || kind, sargs, finalfn);
                        EXECUTE pg_catalog.format(
                            'COMMENT ON AGGREGATE dp_agg.%I(%s) IS %L', 'unit_release_dp_' || kind, sargs,
                            'internal (privacy units): dp_' || kind ||
                            ' over the bounded contributions of units; only in statements rewritten by dp_agg');
                        IF pg_catalog.to_regprocedure(pg_catalog.format('dp_agg.unit_pick_tree_transfn(internal, %s, bigint)', args)) IS NULL THEN
                            EXECUTE pg_catalog.format(
                                'CREATE FUNCTION dp_agg.unit_pick_tree_transfn(internal, %s, bigint) RETURNS internal '
                                'AS %L, %L LANGUAGE C PARALLEL SAFE', args, 'MODULE_PATHNAME', 'dp_unit_pick_tree_trans');
                            EXECUTE pg_catalog.format(
                                'COMMENT ON FUNCTION dp_agg.unit_pick_tree_transfn(internal, %s, bigint) IS %L', args,
                                'internal (privacy units): the rows of a unit''s smallest priority, in a quantile tree');
                            EXECUTE pg_catalog.format(
                                'REVOKE ALL ON FUNCTION dp_agg.unit_pick_tree_transfn(internal, %s, bigint) FROM PUBLIC', args);
                        END IF;
                        EXECUTE pg_catalog.format(
                            'CREATE AGGREGATE dp_agg.%I(%s, bigint) (SFUNC = dp_agg.unit_pick_tree_transfn, '
                            'STYPE = internal, SSPACE = 512, FINALFUNC = dp_agg.unit_bound_%s_finalfn, '
                            'COMBINEFUNC = dp_agg.tree_combinefn, SERIALFUNC = dp_agg.tree_serialfn, '
                            'DESERIALFUNC = dp_agg.tree_deserialfn, PARALLEL = SAFE)',
                            'unit_pick_bound_dp_' || kind, args, kind);
                        EXECUTE pg_catalog.format(
                            'COMMENT ON AGGREGATE dp_agg.%I(%s, bigint) IS %L', 'unit_pick_bound_dp_' || kind, args,
                            'internal (privacy units): one unit''s bounded contribution to dp_' || kind ||
                            ' in its group of smallest priority; only in statements rewritten by dp_agg');
                    END IF;
                END LOOP;
            END LOOP;
        END LOOP;
    END LOOP;
END
$$;

-- Automatic bounds (README, "Automatic bounds"): dp_sum, dp_avg, dp_var and
-- dp_stddev without bounds (or with NULL bounds) spend a quarter of epsilon
-- on a noisy histogram of the values by power of two (the approximate
-- bounds of Google's differential privacy library, src/auto_bounds.c),
-- which gives the bounds, and release the rest from partial sums by bin;
-- NULL when too few rows give bounds.  dp_bounds(x [, epsilon]) returns the
-- estimate itself, with all of its epsilon.

CREATE TYPE dp_agg.bounds AS (lower float8, upper float8);
COMMENT ON TYPE dp_agg.bounds IS
'clamping bounds estimated by dp_bounds: the edges of the lowest and highest bins (powers of two) whose noisy counts pass the threshold';

CREATE FUNCTION dp_agg.bounds_finalfn(internal)
RETURNS dp_agg.bounds AS 'MODULE_PATHNAME', 'dp_bounds_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.bounds_finalfn(internal) IS 'releases bounds estimated from a noisy histogram of the values by power of two';
REVOKE ALL ON FUNCTION dp_agg.bounds_finalfn(internal) FROM PUBLIC;

DO $$
DECLARE
    t text;
    stat text;
    tail text;
    finalfn text;
    sfunc text;
    what text;
BEGIN
    FOREACH t IN ARRAY ARRAY['int2', 'int4', 'int8', 'float4', 'float8', 'numeric'] LOOP
        -- transition functions of one value (the C code of the bounded ones,
        -- which keeps the rows by bin when the bounds are estimated)
        FOREACH stat IN ARRAY ARRAY['sum', 'avg', 'var', 'bounds'] LOOP
            FOREACH tail IN ARRAY CASE WHEN stat = 'bounds' THEN ARRAY['', ', float8'] ELSE ARRAY[''] END LOOP
                EXECUTE pg_catalog.format(
                    'CREATE FUNCTION dp_agg.%I(internal, %s%s) RETURNS internal AS %L, %L '
                    'LANGUAGE C PARALLEL SAFE', stat || '_transfn', t, tail, 'MODULE_PATHNAME',
                    'dp_sum_' || t || '_trans');
                EXECUTE pg_catalog.format(
                    'COMMENT ON FUNCTION dp_agg.%I(internal, %s%s) IS %L', stat || '_transfn', t, tail,
                    'transition function of dp_' || stat || '(' || pg_catalog.format_type(t::regtype, NULL) ||
                    ') without bounds: the rows by power of two, with their exact sums');
                EXECUTE pg_catalog.format(
                    'REVOKE ALL ON FUNCTION dp_agg.%I(internal, %s%s) FROM PUBLIC', stat || '_transfn', t, tail);
            END LOOP;
        END LOOP;
        FOREACH stat IN ARRAY ARRAY['sum', 'avg', 'var', 'stddev'] LOOP
            finalfn := CASE stat
                WHEN 'sum' THEN CASE t WHEN 'numeric' THEN 'dp_agg.sum_numeric_finalfn'
                                       WHEN 'float4' THEN 'dp_agg.sum_float_finalfn'
                                       WHEN 'float8' THEN 'dp_agg.sum_float_finalfn'
                                       ELSE 'dp_agg.sum_int_finalfn' END
                ELSE pg_catalog.format('dp_agg.%s_%s_finalfn', stat,
                                       CASE WHEN t = 'numeric' THEN 'numeric' ELSE 'float' END) END;
            sfunc := CASE stat WHEN 'stddev' THEN 'var' ELSE stat END || '_transfn';
            what := CASE stat WHEN 'sum' THEN 'sum' WHEN 'avg' THEN 'average'
                              WHEN 'var' THEN 'population variance' ELSE 'population standard deviation' END;
            EXECUTE pg_catalog.format(
                'CREATE AGGREGATE @extschema@.%I(%s) (SFUNC = dp_agg.%I, STYPE = internal, SSPACE = 9300, '
                'FINALFUNC = %s, COMBINEFUNC = dp_agg.combinefn, SERIALFUNC = dp_agg.serialfn, '
                'DESERIALFUNC = dp_agg.deserialfn, FINALFUNC_MODIFY = READ_WRITE, PARALLEL = SAFE)',
                'dp_' || stat, t, sfunc, finalfn);
            EXECUTE pg_catalog.format(
                'COMMENT ON AGGREGATE @extschema@.%I(%s) IS %L', 'dp_' || stat, t,
                'differentially private ' || what || ' with bounds estimated from the data: a quarter of epsilon '
                'on a noisy histogram of the values by power of two, the rest on the release (NULL when too few rows); '
                'epsilon and delta from the settings (NULL bounds in the other forms estimate them too)');
        END LOOP;
        FOREACH tail IN ARRAY ARRAY['', ', float8'] LOOP
            EXECUTE pg_catalog.format(
                'CREATE AGGREGATE @extschema@.dp_bounds(%s%s) (SFUNC = dp_agg.bounds_transfn, STYPE = internal, '
                'SSPACE = 9300, FINALFUNC = dp_agg.bounds_finalfn, COMBINEFUNC = dp_agg.combinefn, '
                'SERIALFUNC = dp_agg.serialfn, DESERIALFUNC = dp_agg.deserialfn, '
                'FINALFUNC_MODIFY = READ_WRITE, PARALLEL = SAFE)', t, tail);
            EXECUTE pg_catalog.format(
                'COMMENT ON AGGREGATE @extschema@.dp_bounds(%s%s) IS %L', t, tail,
                'differentially private clamping bounds of a column, (lower, upper): the edges of the lowest and highest '
                'powers of two whose noisy counts pass a threshold (NULL when too few rows); epsilon-DP, ' ||
                CASE tail WHEN '' THEN 'epsilon from dp_agg.epsilon' ELSE 'with the given epsilon' END);
        END LOOP;
    END LOOP;
END
$$;


--------------------------------------------------------------------------
-- The charger bounded and fair: the PLD certificate of the views
--
-- A 'pld' role's releases are composed by the backends of its statements,
-- never by the charger, and the role's frontier (budget.pld_frontier)
-- records a composition that meets the limits with its certificate
-- (fit_epsilon).  The views report the certificate admission uses: the
-- history's composition within the calculators' work limit, or the
-- frontier's certificate when it covers the history and is smaller, else
-- none (NULL: the other certificates answer).  They never raise an error
-- for a history too wide to compose.
-- my_budget gains the column pld_frontier (appended).
--------------------------------------------------------------------------

CREATE FUNCTION dp_agg.pld_budget_epsilon(pld jsonb, pld_frontier jsonb, delta float8)
RETURNS float8 AS 'MODULE_PATHNAME', 'dp_pld_budget_epsilon_sql'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.pld_budget_epsilon(jsonb, jsonb, float8) IS
'the PLD certificate at delta of a budget''s releases by kind (its column pld), as admission uses it: their composition within the calculators'' work limit, or the certificate of the frontier (column pld_frontier) if it covers them at this delta and is smaller; NULL if untracked or neither is available';

CREATE OR REPLACE VIEW dp_agg.my_budget WITH (security_barrier) AS
SELECT b.role,
       b.accounting,
       b.epsilon_limit,
       b.delta_limit,
       b.epsilon_spent,
       b.delta_spent,
       CASE WHEN b.accounting = 'pld' THEN LEAST(c.composed_epsilon, p.pld_epsilon)
            ELSE c.composed_epsilon END AS composed_epsilon,
       GREATEST(b.epsilon_limit - CASE WHEN b.accounting = 'rdp'
                                       THEN LEAST(b.epsilon_spent, coalesce(c.composed_epsilon, b.epsilon_spent))
                                       WHEN b.accounting = 'pld'
                                       THEN LEAST(b.epsilon_spent, coalesce(c.composed_epsilon, b.epsilon_spent),
                                                  coalesce(p.pld_epsilon, b.epsilon_spent))
                                       ELSE b.epsilon_spent END, 0::float8) AS epsilon_remaining,
       GREATEST(b.delta_limit - b.delta_spent, 0::float8) AS delta_remaining,
       b.rdp,
       b.created_at,
       b.updated_at,
       p.pld_epsilon,
       b.pld,
       b.selection_epsilon,
       b.selection_delta,
       b.pld_frontier
FROM dp_agg.budget b,
     LATERAL (SELECT CASE WHEN b.delta_limit > 0
                          THEN dp_agg.hybrid_epsilon(b.rdp, b.selection_epsilon, b.selection_delta,
                                                     b.delta_limit) END AS composed_epsilon) c,
     LATERAL (SELECT CASE WHEN b.delta_limit > 0
                               AND (b.pld IS NOT NULL OR (b.epsilon_spent = 0 AND b.delta_spent = 0))
                          THEN dp_agg.pld_budget_epsilon(coalesce(b.pld, '[]'::jsonb), b.pld_frontier,
                                                         b.delta_limit) END AS pld_epsilon) p
WHERE b.role OPERATOR(pg_catalog.=)
      (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER)::pg_catalog.regrole;
COMMENT ON VIEW dp_agg.my_budget IS 'the privacy budget of the current role, with what remains (for rdp and pld accounting: of the limit, by the best of the certificates), the composed epsilon at delta_limit (the Renyi DP curve beside the sums of the private selections; for pld accounting the better of that and pld), the pld epsilon (the certificate admission uses; NULL when there is none), the sums of the private selections and the pld frontier';
GRANT SELECT ON dp_agg.my_budget TO PUBLIC;

CREATE OR REPLACE FUNCTION dp_agg.spent_epsilon(role regrole, delta float8)
RETURNS float8
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    curve float8[];
    releases jsonb;
    frontier jsonb;
    spent float8;
    acct text;
    sel_epsilon float8;
    sel_delta float8;
BEGIN
    IF spent_epsilon.delta IS NULL OR NOT (spent_epsilon.delta > 0 AND spent_epsilon.delta < 1) THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'delta must be greater than 0 and less than 1',
            DETAIL = format('delta is %s.', coalesce(spent_epsilon.delta::text, 'NULL'));
    END IF;
    -- one's own budget through the view; another role's needs the right to
    -- read dp_agg.budget (superusers, or a DBA granted SELECT on it)
    IF spent_epsilon.role::oid = (SELECT r.oid FROM pg_roles r WHERE r.rolname = current_user) THEN
        SELECT b.rdp, b.pld, b.pld_frontier, b.epsilon_spent + b.delta_spent, b.accounting,
               b.selection_epsilon, b.selection_delta
        INTO curve, releases, frontier, spent, acct, sel_epsilon, sel_delta FROM dp_agg.my_budget b;
    ELSE
        SELECT b.rdp, b.pld, b.pld_frontier, b.epsilon_spent + b.delta_spent, b.accounting,
               b.selection_epsilon, b.selection_delta
        INTO curve, releases, frontier, spent, acct, sel_epsilon, sel_delta
        FROM dp_agg.budget b WHERE b.role = spent_epsilon.role;
    END IF;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'PB002',
            MESSAGE = format('role %s has no privacy budget', spent_epsilon.role);
    END IF;
    RETURN LEAST(dp_agg.hybrid_epsilon(curve, sel_epsilon, sel_delta, spent_epsilon.delta),
                 CASE WHEN acct = 'pld' AND (releases IS NOT NULL OR spent = 0)
                      THEN dp_agg.pld_budget_epsilon(coalesce(releases, '[]'::jsonb), frontier,
                                                     spent_epsilon.delta) END);
END
$$;
COMMENT ON FUNCTION dp_agg.spent_epsilon(regrole, float8) IS
'the epsilon, at the given delta, of everything a role has released since its last reset: the Renyi DP composition of its releases beside the basic composition of its private selections (for pld accounting: the better of that and the PLD certificate admission uses, dp_agg.pld_budget_epsilon)';


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

-- On a plain heap table whose unit has a fixed length, the rewrite also
-- reads the relation through the TABLESAMPLE method dp_agg.unit_scan
-- (percent, unit column), which offers the executor only the rows of the
-- units unit_sampled keeps, by the same decision: the condition stays, the
-- method only skips the rows it drops without handing them over
-- (src/unit_sample.c).  PARALLEL RESTRICTED: a sample scan is never
-- partial, and this one runs in the process that holds the rewrite's mark.
CREATE FUNCTION dp_agg.unit_scan(internal)
RETURNS tsm_handler
AS 'MODULE_PATHNAME', 'dp_unit_scan_handler'
LANGUAGE C STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION dp_agg.unit_scan(internal) IS
'internal (privacy units): TABLESAMPLE method that reads only the rows of the units in the sample of the execution; only in statements rewritten by dp_agg';


--------------------------------------------------------------------------
-- Citus: protected tables and privacy units on distributed tables
--
-- A DP statement on a Citus table whose rows have a privacy unit groups its
-- inner statement by the unit too; dp_agg.dist_run then bounds each unit's
-- contribution, once, on the coordinator, and keeps at most
-- max_groups_contributed of its groups (README, "Citus").  Protected Citus
-- tables need no new object: dp_agg.protect labels them (security label of
-- provider dp_agg) so that Citus carries the protection to the workers.
--------------------------------------------------------------------------

CREATE FUNCTION dp_agg.dist_run(text, integer) RETURNS SETOF record
AS 'MODULE_PATHNAME', 'dp_dist_run' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dp_agg.dist_run(text, integer) IS
'runs the distributed part of a priced and charged DP statement on a Citus table with a privacy unit, bounding each unit to the given number of groups (made by the planner, never called by hand)';


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


--------------------------------------------------------------------------
-- Budget policies: shared budgets (group roles, protected relations),
-- renewing windows with an optional lifetime limit, caps per statement and
-- per call, and views a person can read (README, "Budgets").
--
-- A budget is one row of dp_agg.budget, now identified by id, of one of
-- three kinds: a role's own (role set, members false), a group's, shared
-- by the role and every role that is a member of it, directly or through
-- other roles, whatever the INHERIT of the memberships (members true), or
-- a protected relation's, shared by every statement that reads it
-- (relation set).  A statement is charged to every budget that applies, in
-- one durable step of the charger, and refused, with nothing charged
-- anywhere, if any of them cannot pay; it needs a budget of its role or
-- of a group (a relation's budget alone never lets a role release).  Each
-- budget keeps its own accounting and composition.  A budget with a window
-- renews: its amounts spent and its composition hold the charges of the
-- window it was charged in (window_start), and start from nothing in the
-- next; lifetime_* are the basic sums of every charge since the last reset,
-- checked against the optional lifetime limits.  The ledger records, for
-- each charge, the relations the statement read and every budget charged
-- with the start of the window it was charged in.  Caps (dp_agg.cap) bound
-- what one statement, and one DP aggregate call, may spend; the caps of a
-- role and of every group it is a member of apply.
--------------------------------------------------------------------------

ALTER TABLE dp_agg.budget ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY;
ALTER TABLE dp_agg.budget DROP CONSTRAINT budget_pkey;
ALTER TABLE dp_agg.budget ADD CONSTRAINT budget_pkey PRIMARY KEY (id);
ALTER TABLE dp_agg.budget ALTER COLUMN role DROP NOT NULL;
ALTER TABLE dp_agg.budget ADD CONSTRAINT budget_role_key UNIQUE (role);
ALTER TABLE dp_agg.budget
    ADD COLUMN relation regclass CONSTRAINT budget_relation_key UNIQUE,
    ADD COLUMN members boolean NOT NULL DEFAULT false,
    ADD COLUMN window_length interval,
    ADD COLUMN window_time_zone text,
    ADD COLUMN window_start timestamptz,
    ADD COLUMN lifetime_epsilon_limit float8
        CONSTRAINT budget_lifetime_epsilon_limit_check
        CHECK (lifetime_epsilon_limit >= 0 AND lifetime_epsilon_limit < 'infinity'),
    ADD COLUMN lifetime_delta_limit float8
        CONSTRAINT budget_lifetime_delta_limit_check
        CHECK (lifetime_delta_limit >= 0 AND lifetime_delta_limit < 1),
    ADD COLUMN lifetime_epsilon_spent float8 NOT NULL DEFAULT 0
        CONSTRAINT budget_lifetime_epsilon_spent_check
        CHECK (lifetime_epsilon_spent >= 0 AND lifetime_epsilon_spent < 'infinity'),
    ADD COLUMN lifetime_delta_spent float8 NOT NULL DEFAULT 0
        CONSTRAINT budget_lifetime_delta_spent_check
        CHECK (lifetime_delta_spent >= 0 AND lifetime_delta_spent < 'infinity'),
    ADD CONSTRAINT budget_subject CHECK ((role IS NULL) <> (relation IS NULL) AND NOT (members AND role IS NULL)),
    ADD CONSTRAINT budget_window_shape CHECK (
        (window_length IS NULL) = (window_time_zone IS NULL)
        AND (window_start IS NULL OR window_length IS NOT NULL)
        AND (window_length IS NULL OR window_length > '0'::pg_catalog.interval)
        AND pg_catalog.octet_length(window_time_zone) <= 64),
    ADD CONSTRAINT budget_lifetime_shape CHECK (
        (lifetime_epsilon_limit IS NULL) = (lifetime_delta_limit IS NULL));
-- every charge so far belongs to the lifetime of its budget
UPDATE dp_agg.budget SET lifetime_epsilon_spent = epsilon_spent, lifetime_delta_spent = delta_spent;
SELECT pg_catalog.pg_extension_config_dump('dp_agg.budget_id_seq', '');
COMMENT ON SEQUENCE dp_agg.budget_id_seq IS 'identity of dp_agg.budget';

COMMENT ON TABLE dp_agg.budget IS 'privacy budgets: of a role, of a group role (shared by its members) or of a protected relation (shared by every statement that reads it); limits, amounts spent in the current window and since the last reset';
COMMENT ON COLUMN dp_agg.budget.id IS 'identity of the budget (dp_agg.ledger.budgets names the budgets a statement was charged to)';
COMMENT ON COLUMN dp_agg.budget.role IS 'the role of a role''s or a group''s budget (NULL for a relation''s)';
COMMENT ON COLUMN dp_agg.budget.relation IS 'the protected relation of a relation''s budget, charged for every statement that reads it or one of its partitions or inheritance children (NULL for a role''s)';
COMMENT ON COLUMN dp_agg.budget.members IS 'true: a group''s budget, charged for the statements of the role and of every role that is a member of it, directly or through other roles, whatever the INHERIT of the memberships';
COMMENT ON COLUMN dp_agg.budget.epsilon_spent IS 'sum of the epsilons charged in the window of window_start (without a window: since the last reset), rounded up';
COMMENT ON COLUMN dp_agg.budget.delta_spent IS 'sum of the deltas charged in the window of window_start (without a window: since the last reset), rounded up';
COMMENT ON COLUMN dp_agg.budget.window_length IS 'the budget renews after each window of this length (whole months, whole days, or a part of a day that divides it), aligned to local midnights of window_time_zone; NULL: it never renews';
COMMENT ON COLUMN dp_agg.budget.window_time_zone IS 'the time zone whose wall clock the windows are aligned to';
COMMENT ON COLUMN dp_agg.budget.window_start IS 'the start of the window whose charges the amounts spent, the curve and the releases by kind hold (an earlier window than the current one: nothing spent in the current one yet)';
COMMENT ON COLUMN dp_agg.budget.lifetime_epsilon_limit IS 'the most the sum of the epsilons charged since the last reset, over every window, may reach (NULL: no lifetime limit)';
COMMENT ON COLUMN dp_agg.budget.lifetime_delta_limit IS 'the most the sum of the deltas charged since the last reset, over every window, may reach (NULL: no lifetime limit)';
COMMENT ON COLUMN dp_agg.budget.lifetime_epsilon_spent IS 'sum of the epsilons charged since the last reset, over every window, rounded up';
COMMENT ON COLUMN dp_agg.budget.lifetime_delta_spent IS 'sum of the deltas charged since the last reset, over every window, rounded up';

ALTER TABLE dp_agg.ledger ALTER COLUMN role DROP NOT NULL;
ALTER TABLE dp_agg.ledger
    ADD COLUMN relations regclass[],
    ADD COLUMN budgets bigint[],
    ADD COLUMN windows timestamptz[],
    ADD CONSTRAINT ledger_charge_role CHECK (kind <> 'charge' OR role IS NOT NULL),
    ADD CONSTRAINT ledger_windows_shape CHECK (
        pg_catalog.cardinality(budgets) = pg_catalog.cardinality(windows));
COMMENT ON COLUMN dp_agg.ledger.role IS 'the role charged (current_user of the statement), or whose budget was reset (NULL for a relation''s)';
COMMENT ON COLUMN dp_agg.ledger.relations IS 'charge: the relations the statement read (tables, partitions, materialized and foreign tables)';
COMMENT ON COLUMN dp_agg.ledger.budgets IS 'the budgets (dp_agg.budget.id) charged, or reset';
COMMENT ON COLUMN dp_agg.ledger.windows IS 'for each of budgets, the start of the window it was charged in (NULL: the budget has no window)';
ALTER TABLE dp_agg.ledger
    ADD COLUMN statements integer NOT NULL DEFAULT 1,
    ADD CONSTRAINT ledger_statements_valid CHECK (statements >= 1 AND (kind = 'charge' OR statements = 1));
COMMENT ON COLUMN dp_agg.ledger.statements IS 'charge: the statements it paid for: 1, or with dp_agg.prepay the statement and as many identical ones prepaid for its session (epsilon, delta and rdp are then their sums; query and detail are one statement''s)';

CREATE TABLE dp_agg.cap (
    role regrole PRIMARY KEY,
    statement_epsilon float8 CHECK (statement_epsilon > 0 AND statement_epsilon < 'infinity'),
    statement_delta float8 CHECK (statement_delta >= 0 AND statement_delta < 1),
    call_epsilon float8 CHECK (call_epsilon > 0 AND call_epsilon < 'infinity'),
    call_delta float8 CHECK (call_delta >= 0 AND call_delta < 1),
    set_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE dp_agg.cap IS 'the most one statement, and one DP aggregate call, of a role and of every role that is a member of it may spend';
COMMENT ON COLUMN dp_agg.cap.role IS 'the role whose caps these are; they apply to its statements and to those of every role that is a member of it';
COMMENT ON COLUMN dp_agg.cap.statement_epsilon IS 'largest epsilon of one statement (NULL: no cap)';
COMMENT ON COLUMN dp_agg.cap.statement_delta IS 'largest delta of one statement (NULL: no cap)';
COMMENT ON COLUMN dp_agg.cap.call_epsilon IS 'largest epsilon of one DP aggregate call, or of the private selection of a statement''s groups (NULL: no cap)';
COMMENT ON COLUMN dp_agg.cap.call_delta IS 'largest delta of one DP aggregate call, or of the private selection of a statement''s groups (NULL: no cap)';
COMMENT ON COLUMN dp_agg.cap.set_at IS 'when the caps were last set';
SELECT pg_catalog.pg_extension_config_dump('dp_agg.cap', '');
REVOKE ALL ON dp_agg.cap FROM PUBLIC;

CREATE FUNCTION dp_agg.window_start(window_length interval, time_zone text, at timestamptz)
RETURNS timestamptz AS 'MODULE_PATHNAME', 'dp_window_start_sql'
LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.window_start(interval, text, timestamptz) IS
'the start of the budget window of this length, aligned to local midnights of the time zone, that the instant falls in';

CREATE FUNCTION dp_agg.window_end(window_length interval, time_zone text, at timestamptz)
RETURNS timestamptz AS 'MODULE_PATHNAME', 'dp_window_end_sql'
LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.window_end(interval, text, timestamptz) IS
'the end (the start of the next) of the budget window of this length, aligned to local midnights of the time zone, that the instant falls in';

CREATE FUNCTION dp_agg.role_charged(role regrole, budget_role regrole, members boolean)
RETURNS boolean AS 'MODULE_PATHNAME', 'dp_role_charged_sql'
LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.role_charged(regrole, regrole, boolean) IS
'does the budget of budget_role (shared by its members if members) pay for the statements of role? the role itself, or with members a role that is a member of it directly or through other roles, whatever INHERIT (superuser status does not count)';

CREATE FUNCTION dp_agg.round_display(value float8)
RETURNS float8 AS 'MODULE_PATHNAME', 'dp_round_display_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.round_display(float8) IS
'value rounded to 12 significant digits, for display (the views of budgets); what is stored and charged is not rounded';

-- the limits every budget function checks, with the messages of set_budget
CREATE FUNCTION dp_agg.check_budget_limits(epsilon float8, delta float8, accounting text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF epsilon IS NULL OR NOT (epsilon >= 0 AND epsilon < 'infinity') THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'epsilon limit must be a finite number at least 0',
            DETAIL = format('epsilon is %s.', coalesce(epsilon::text, 'NULL')),
            HINT = 'The limit is the total epsilon the role may spend, for example 1 or 10.';
    END IF;
    IF delta IS NULL OR NOT (delta >= 0 AND delta < 1) THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'delta limit must be at least 0 and less than 1',
            DETAIL = format('delta is %s.', coalesce(delta::text, 'NULL')),
            HINT = 'Use 0 for Laplace releases only, or a small delta such as 1e-6 for Gaussian releases.';
    END IF;
    IF accounting IS NULL OR accounting NOT IN ('basic', 'rdp', 'pld') THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'accounting must be ''basic'', ''rdp'' or ''pld''',
            DETAIL = format('accounting is %s.', coalesce(quote_literal(accounting), 'NULL')),
            HINT = 'rdp and pld charge by the composition of all releases, which buys more releases; pld is the tightest.';
    END IF;
END
$$;
COMMENT ON FUNCTION dp_agg.check_budget_limits(float8, float8, text) IS
'internal: raises the error of set_budget for a bad epsilon limit, delta limit or accounting';
REVOKE ALL ON FUNCTION dp_agg.check_budget_limits(float8, float8, text) FROM PUBLIC;

-- a role's own budget; a group's is changed with set_group_budget
CREATE OR REPLACE FUNCTION dp_agg.set_budget(role regrole, epsilon float8, delta float8 DEFAULT 0,
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
    PERFORM dp_agg_internal.check_budget_limits(set_budget.epsilon, set_budget.delta, set_budget.accounting);
    INSERT INTO dp_agg.budget AS b (role, epsilon_limit, delta_limit, accounting)
    VALUES (set_budget.role, set_budget.epsilon, set_budget.delta, set_budget.accounting)
    ON CONFLICT ON CONSTRAINT budget_role_key DO UPDATE
        SET epsilon_limit = excluded.epsilon_limit,
            delta_limit = excluded.delta_limit,
            accounting = excluded.accounting,
            updated_at = now()
        WHERE NOT b.members;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
            MESSAGE = format('role %s has a group budget', set_budget.role),
            DETAIL = 'A role has one budget: its own, or one its members share.',
            HINT = format('Change its limits with dp_agg.set_group_budget(%L, ...), or drop it with dp_agg.drop_budget(%L) first.',
                          set_budget.role::text, set_budget.role::text);
    END IF;
END
$$;
COMMENT ON FUNCTION dp_agg.set_budget(regrole, float8, float8, text) IS
'creates or changes the limits and accounting (basic, rdp or pld) of a role''s own budget (never the amounts spent)';

CREATE FUNCTION dp_agg.set_group_budget(role regrole, epsilon float8, delta float8 DEFAULT 0,
                                        accounting text DEFAULT 'basic')
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    own boolean;
BEGIN
    IF set_group_budget.role IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'role must not be NULL';
    END IF;
    PERFORM dp_agg_internal.check_budget_limits(set_group_budget.epsilon, set_group_budget.delta,
                                       set_group_budget.accounting);
    SELECT NOT b.members INTO own FROM dp_agg.budget b WHERE b.role = set_group_budget.role FOR UPDATE;
    INSERT INTO dp_agg.budget AS b (role, members, epsilon_limit, delta_limit, accounting)
    VALUES (set_group_budget.role, true, set_group_budget.epsilon, set_group_budget.delta,
            set_group_budget.accounting)
    ON CONFLICT ON CONSTRAINT budget_role_key DO UPDATE
        SET members = true,
            epsilon_limit = excluded.epsilon_limit,
            delta_limit = excluded.delta_limit,
            accounting = excluded.accounting,
            updated_at = now();
    IF own THEN
        RAISE NOTICE 'the budget of role % is now shared by its members', set_group_budget.role
            USING DETAIL = 'What it has spent counts for them too.';
    END IF;
END
$$;
COMMENT ON FUNCTION dp_agg.set_group_budget(regrole, float8, float8, text) IS
'creates or changes a group''s budget, shared by the role and every role that is a member of it (directly or through other roles, whatever INHERIT): its limits and accounting (a role''s own budget becomes shared, with what it has spent)';
REVOKE ALL ON FUNCTION dp_agg.set_group_budget(regrole, float8, float8, text) FROM PUBLIC;

CREATE FUNCTION dp_agg.set_relation_budget(relation regclass, epsilon float8, delta float8 DEFAULT 0,
                                           accounting text DEFAULT 'basic')
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF set_relation_budget.relation IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'relation must not be NULL';
    END IF;
    PERFORM dp_agg_internal.check_budget_limits(set_relation_budget.epsilon, set_relation_budget.delta,
                                       set_relation_budget.accounting);
    IF NOT EXISTS (SELECT FROM dp_agg.protected p
                   WHERE p.relation = set_relation_budget.relation
                      OR p.relation IN (SELECT a.relid FROM pg_partition_ancestors(set_relation_budget.relation) a)) THEN
        RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
            MESSAGE = format('relation %s is not protected', set_relation_budget.relation),
            DETAIL = 'A budget bounds what is released about the people in a relation only if DP statements are the only access to it.',
            HINT = format('Protect it first with dp_agg.protect(%L).', set_relation_budget.relation::text);
    END IF;
    INSERT INTO dp_agg.budget AS b (relation, epsilon_limit, delta_limit, accounting)
    VALUES (set_relation_budget.relation, set_relation_budget.epsilon, set_relation_budget.delta,
            set_relation_budget.accounting)
    ON CONFLICT ON CONSTRAINT budget_relation_key DO UPDATE
        SET epsilon_limit = excluded.epsilon_limit,
            delta_limit = excluded.delta_limit,
            accounting = excluded.accounting,
            updated_at = now();
END
$$;
COMMENT ON FUNCTION dp_agg.set_relation_budget(regclass, float8, float8, text) IS
'creates or changes the budget of a protected relation, charged for every statement of any role that reads it or one of its partitions or inheritance children: its limits and accounting (never the amounts spent)';
REVOKE ALL ON FUNCTION dp_agg.set_relation_budget(regclass, float8, float8, text) FROM PUBLIC;

-- the budget of a role (its own or its group's) or of a relation, locked; PB002 if none
CREATE FUNCTION dp_agg.budget_of(role regrole, relation regclass)
RETURNS dp_agg.budget
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    b dp_agg.budget;
BEGIN
    IF budget_of.relation IS NOT NULL THEN
        SELECT * INTO b FROM dp_agg.budget x WHERE x.relation = budget_of.relation FOR UPDATE;
        IF NOT FOUND THEN
            RAISE EXCEPTION USING ERRCODE = 'PB002',
                MESSAGE = format('relation %s has no privacy budget', budget_of.relation),
                HINT = 'A relation''s budget is given with dp_agg.set_relation_budget(relation, epsilon, delta).';
        END IF;
    ELSIF budget_of.role IS NOT NULL THEN
        SELECT * INTO b FROM dp_agg.budget x WHERE x.role = budget_of.role FOR UPDATE;
        IF NOT FOUND THEN
            RAISE EXCEPTION USING ERRCODE = 'PB002',
                MESSAGE = format('role %s has no privacy budget', budget_of.role),
                HINT = 'A privacy budget is given with dp_agg.set_budget(role, epsilon, delta).';
        END IF;
    ELSE
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'role or relation must not be NULL';
    END IF;
    RETURN b;
END
$$;
COMMENT ON FUNCTION dp_agg.budget_of(regrole, regclass) IS
'internal: the budget of a role (its own or its group''s) or of a relation, locked; PB002 if there is none';
REVOKE ALL ON FUNCTION dp_agg.budget_of(regrole, regclass) FROM PUBLIC;

CREATE FUNCTION dp_agg.set_window(id bigint, window_length interval, time_zone text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    b dp_agg.budget;
    now_start timestamptz;
BEGIN
    SELECT * INTO STRICT b FROM dp_agg.budget x WHERE x.id = set_window.id FOR UPDATE;
    IF set_window.window_length IS NULL THEN
        UPDATE dp_agg.budget x SET window_length = NULL, window_time_zone = NULL, window_start = NULL,
                                   updated_at = now()
        WHERE x.id = set_window.id;
        RETURN;
    END IF;
    IF set_window.time_zone IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'time zone must not be NULL',
            HINT = 'Windows are aligned to local midnights of a time zone, such as ''UTC'' or ''Europe/Paris''.';
    END IF;
    -- the window of the new length that holds now or, if the row holds a
    -- later window (the charger's clock is ahead of this transaction's
    -- start, or went back), that window's start: a window never moves back,
    -- or what was spent in the row's window would be renewed
    now_start := dp_agg_internal.window_start(set_window.window_length, set_window.time_zone,
                                              greatest(now(), b.window_start));
    -- what was spent in an earlier window (the charger had not renewed it
    -- yet) does not count in this one
    IF b.window_length IS NOT NULL
       AND b.window_start < dp_agg_internal.window_start(b.window_length, b.window_time_zone, now()) THEN
        UPDATE dp_agg.budget x SET epsilon_spent = 0, delta_spent = 0, rdp = NULL, pld = NULL,
                                   selection_epsilon = 0, selection_delta = 0
        WHERE x.id = set_window.id;
    END IF;
    -- what was spent so far counts in the current window
    UPDATE dp_agg.budget x SET window_length = set_window.window_length,
                               window_time_zone = set_window.time_zone,
                               window_start = now_start, updated_at = now()
    WHERE x.id = set_window.id;
END
$$;
COMMENT ON FUNCTION dp_agg.set_window(bigint, interval, text) IS
'internal: gives budget id windows of this length in this time zone (NULL: none); what it spent so far counts in the current window';
REVOKE ALL ON FUNCTION dp_agg.set_window(bigint, interval, text) FROM PUBLIC;

CREATE FUNCTION dp_agg.set_budget_window(role regrole, window_length interval, time_zone text DEFAULT 'UTC')
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM dp_agg_internal.set_window((dp_agg_internal.budget_of(set_budget_window.role, NULL)).id,
                              set_budget_window.window_length, set_budget_window.time_zone);
END
$$;
COMMENT ON FUNCTION dp_agg.set_budget_window(regrole, interval, text) IS
'makes the budget of a role (its own or its group''s) renew after each window of this length (whole months, whole days, or a part of a day that divides it), aligned to local midnights of the time zone; NULL: it never renews. What it spent so far counts in the current window';
REVOKE ALL ON FUNCTION dp_agg.set_budget_window(regrole, interval, text) FROM PUBLIC;

CREATE FUNCTION dp_agg.set_relation_budget_window(relation regclass, window_length interval,
                                                  time_zone text DEFAULT 'UTC')
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM dp_agg_internal.set_window((dp_agg_internal.budget_of(NULL, set_relation_budget_window.relation)).id,
                              set_relation_budget_window.window_length,
                              set_relation_budget_window.time_zone);
END
$$;
COMMENT ON FUNCTION dp_agg.set_relation_budget_window(regclass, interval, text) IS
'makes the budget of a relation renew after each window of this length, aligned to local midnights of the time zone; NULL: it never renews';
REVOKE ALL ON FUNCTION dp_agg.set_relation_budget_window(regclass, interval, text) FROM PUBLIC;

CREATE FUNCTION dp_agg.set_lifetime(id bigint, epsilon float8, delta float8)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    b dp_agg.budget;
BEGIN
    SELECT * INTO STRICT b FROM dp_agg.budget x WHERE x.id = set_lifetime.id FOR UPDATE;
    IF set_lifetime.epsilon IS NOT NULL THEN
        IF NOT (set_lifetime.epsilon >= 0 AND set_lifetime.epsilon < 'infinity') THEN
            RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
                MESSAGE = 'lifetime epsilon limit must be a finite number at least 0',
                DETAIL = format('epsilon is %s.', set_lifetime.epsilon);
        END IF;
        IF set_lifetime.delta IS NULL OR NOT (set_lifetime.delta >= 0 AND set_lifetime.delta < 1) THEN
            RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
                MESSAGE = 'lifetime delta limit must be at least 0 and less than 1',
                DETAIL = format('delta is %s.', coalesce(set_lifetime.delta::text, 'NULL'));
        END IF;
        IF b.window_length IS NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
                MESSAGE = 'a lifetime limit needs a budget that renews',
                DETAIL = 'Without a window, the limits of the budget are its lifetime limits.',
                HINT = 'Give the budget a window first (dp_agg.set_budget_window).';
        END IF;
        IF set_lifetime.epsilon < b.epsilon_limit OR set_lifetime.delta < b.delta_limit THEN
            RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
                MESSAGE = 'a lifetime limit must be at least the limit of each window',
                DETAIL = format('The window''s limits are epsilon %s and delta %s; the lifetime''s would be epsilon %s and delta %s.',
                                b.epsilon_limit, b.delta_limit, set_lifetime.epsilon, set_lifetime.delta),
                HINT = 'Lower the window''s limits with the function that set them.';
        END IF;
    END IF;
    UPDATE dp_agg.budget x SET lifetime_epsilon_limit = set_lifetime.epsilon,
                               lifetime_delta_limit = CASE WHEN set_lifetime.epsilon IS NOT NULL
                                                           THEN set_lifetime.delta END,
                               updated_at = now()
    WHERE x.id = set_lifetime.id;
END
$$;
COMMENT ON FUNCTION dp_agg.set_lifetime(bigint, float8, float8) IS
'internal: sets the lifetime limits of budget id (NULL epsilon: none)';
REVOKE ALL ON FUNCTION dp_agg.set_lifetime(bigint, float8, float8) FROM PUBLIC;

CREATE FUNCTION dp_agg.set_lifetime_limit(role regrole, epsilon float8, delta float8 DEFAULT 0)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM dp_agg_internal.set_lifetime((dp_agg_internal.budget_of(set_lifetime_limit.role, NULL)).id,
                                set_lifetime_limit.epsilon, set_lifetime_limit.delta);
END
$$;
COMMENT ON FUNCTION dp_agg.set_lifetime_limit(regrole, float8, float8) IS
'bounds the sums of the epsilons and deltas a renewing budget of a role (its own or its group''s) may spend over all its windows, since its last reset (NULL epsilon: no lifetime limit)';
REVOKE ALL ON FUNCTION dp_agg.set_lifetime_limit(regrole, float8, float8) FROM PUBLIC;

CREATE FUNCTION dp_agg.set_relation_lifetime_limit(relation regclass, epsilon float8, delta float8 DEFAULT 0)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM dp_agg_internal.set_lifetime((dp_agg_internal.budget_of(NULL, set_relation_lifetime_limit.relation)).id,
                                set_relation_lifetime_limit.epsilon, set_relation_lifetime_limit.delta);
END
$$;
COMMENT ON FUNCTION dp_agg.set_relation_lifetime_limit(regclass, float8, float8) IS
'bounds the sums of the epsilons and deltas the renewing budget of a relation may spend over all its windows, since its last reset (NULL epsilon: no lifetime limit)';
REVOKE ALL ON FUNCTION dp_agg.set_relation_lifetime_limit(regclass, float8, float8) FROM PUBLIC;

CREATE FUNCTION dp_agg.reset(id bigint)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    b dp_agg.budget;
BEGIN
    -- the charges decided on leases until now belong to the period that ends
    PERFORM dp_agg_internal.fold_journal();
    SELECT * INTO STRICT b FROM dp_agg.budget x WHERE x.id = reset.id FOR UPDATE;
    UPDATE dp_agg.budget x SET epsilon_spent = 0, delta_spent = 0, rdp = NULL, pld = NULL,
                               selection_epsilon = 0, selection_delta = 0,
                               lifetime_epsilon_spent = 0, lifetime_delta_spent = 0,
                               window_start = CASE WHEN x.window_length IS NOT NULL
                                                   THEN dp_agg_internal.window_start(x.window_length, x.window_time_zone, now())
                                              END,
                               updated_at = now()
    WHERE x.id = reset.id;
    INSERT INTO dp_agg.ledger (role, kind, epsilon, delta, query, detail, budgets, windows)
    VALUES (b.role, 'reset', 0, 0, current_query(),
            jsonb_build_object('epsilon_spent_before', b.epsilon_spent,
                               'delta_spent_before', b.delta_spent,
                               'lifetime_epsilon_spent_before', b.lifetime_epsilon_spent,
                               'lifetime_delta_spent_before', b.lifetime_delta_spent,
                               'window_start_before', b.window_start,
                               'reset_by', session_user)
            || CASE WHEN b.relation IS NOT NULL
                    THEN jsonb_build_object('relation', b.relation::text) ELSE '{}' END,
            ARRAY[b.id],
            ARRAY[CASE WHEN b.window_length IS NOT NULL
                       THEN dp_agg_internal.window_start(b.window_length, b.window_time_zone, now()) END]);
END
$$;
COMMENT ON FUNCTION dp_agg.reset(bigint) IS
'internal: sets what budget id has spent, in its window and over its lifetime, back to 0, and records it in the ledger';
REVOKE ALL ON FUNCTION dp_agg.reset(bigint) FROM PUBLIC;

CREATE OR REPLACE FUNCTION dp_agg.reset_budget(role regrole)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM dp_agg_internal.reset((dp_agg_internal.budget_of(reset_budget.role, NULL)).id);
END
$$;
COMMENT ON FUNCTION dp_agg.reset_budget(regrole) IS
'sets what the budget of a role (its own or its group''s) has spent, in its window and over its lifetime (its Renyi DP curve, releases by kind and the sums of its private selections), back to 0, and records it in the ledger';

CREATE FUNCTION dp_agg.reset_relation_budget(relation regclass)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM dp_agg_internal.reset((dp_agg_internal.budget_of(NULL, reset_relation_budget.relation)).id);
END
$$;
COMMENT ON FUNCTION dp_agg.reset_relation_budget(regclass) IS
'sets what the budget of a relation has spent, in its window and over its lifetime, back to 0, and records it in the ledger';
REVOKE ALL ON FUNCTION dp_agg.reset_relation_budget(regclass) FROM PUBLIC;

CREATE FUNCTION dp_agg.drop_budget(role regrole)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    DELETE FROM dp_agg.budget b WHERE b.role = drop_budget.role;
    RETURN FOUND;
END
$$;
COMMENT ON FUNCTION dp_agg.drop_budget(regrole) IS
'removes the budget of a role (its own or its group''s; the ledger keeps its charges); false if it had none';
REVOKE ALL ON FUNCTION dp_agg.drop_budget(regrole) FROM PUBLIC;

CREATE FUNCTION dp_agg.drop_relation_budget(relation regclass)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    DELETE FROM dp_agg.budget b WHERE b.relation = drop_relation_budget.relation;
    RETURN FOUND;
END
$$;
COMMENT ON FUNCTION dp_agg.drop_relation_budget(regclass) IS
'removes the budget of a relation (the ledger keeps its charges); false if it had none';
REVOKE ALL ON FUNCTION dp_agg.drop_relation_budget(regclass) FROM PUBLIC;

CREATE FUNCTION dp_agg.set_cap(role regrole, statement_epsilon float8 DEFAULT NULL,
                               statement_delta float8 DEFAULT NULL, call_epsilon float8 DEFAULT NULL,
                               call_delta float8 DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    b dp_agg.budget;
BEGIN
    IF set_cap.role IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'role must not be NULL';
    END IF;
    IF NOT (coalesce(set_cap.statement_epsilon, 1) > 0 AND coalesce(set_cap.statement_epsilon, 1) < 'infinity'
            AND coalesce(set_cap.call_epsilon, 1) > 0 AND coalesce(set_cap.call_epsilon, 1) < 'infinity') THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'an epsilon cap must be a finite number greater than 0',
            DETAIL = format('statement_epsilon is %s, call_epsilon %s.',
                            coalesce(set_cap.statement_epsilon::text, 'NULL'),
                            coalesce(set_cap.call_epsilon::text, 'NULL')),
            HINT = 'NULL leaves a cap out.';
    END IF;
    IF NOT (coalesce(set_cap.statement_delta, 0) >= 0 AND coalesce(set_cap.statement_delta, 0) < 1
            AND coalesce(set_cap.call_delta, 0) >= 0 AND coalesce(set_cap.call_delta, 0) < 1) THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'a delta cap must be at least 0 and less than 1',
            DETAIL = format('statement_delta is %s, call_delta %s.',
                            coalesce(set_cap.statement_delta::text, 'NULL'),
                            coalesce(set_cap.call_delta::text, 'NULL')),
            HINT = 'NULL leaves a cap out.';
    END IF;
    IF set_cap.call_epsilon > set_cap.statement_epsilon OR set_cap.call_delta > set_cap.statement_delta THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'a cap per call must not exceed the cap per statement',
            DETAIL = format('Per statement: epsilon %s, delta %s; per call: epsilon %s, delta %s.',
                            coalesce(set_cap.statement_epsilon::text, 'NULL'),
                            coalesce(set_cap.statement_delta::text, 'NULL'),
                            coalesce(set_cap.call_epsilon::text, 'NULL'),
                            coalesce(set_cap.call_delta::text, 'NULL'));
    END IF;
    SELECT * INTO b FROM dp_agg.budget x WHERE x.role = set_cap.role;
    IF FOUND AND (greatest(set_cap.statement_epsilon, set_cap.call_epsilon) > b.epsilon_limit
                  OR greatest(set_cap.statement_delta, set_cap.call_delta) > b.delta_limit) THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('a cap of role %s exceeds the limit of its budget', set_cap.role),
            DETAIL = format('The budget''s limits are epsilon %s and delta %s.', b.epsilon_limit, b.delta_limit),
            HINT = 'A cap bounds one statement or call within a budget: give a smaller one, or raise the budget''s limits first.';
    END IF;
    IF set_cap.statement_epsilon IS NULL AND set_cap.statement_delta IS NULL
       AND set_cap.call_epsilon IS NULL AND set_cap.call_delta IS NULL THEN
        DELETE FROM dp_agg.cap c WHERE c.role = set_cap.role;
        RETURN;
    END IF;
    INSERT INTO dp_agg.cap AS c (role, statement_epsilon, statement_delta, call_epsilon, call_delta)
    VALUES (set_cap.role, set_cap.statement_epsilon, set_cap.statement_delta, set_cap.call_epsilon,
            set_cap.call_delta)
    ON CONFLICT ON CONSTRAINT cap_pkey DO UPDATE
        SET statement_epsilon = excluded.statement_epsilon,
            statement_delta = excluded.statement_delta,
            call_epsilon = excluded.call_epsilon,
            call_delta = excluded.call_delta,
            set_at = now();
END
$$;
COMMENT ON FUNCTION dp_agg.set_cap(regrole, float8, float8, float8, float8) IS
'sets the most one statement, and one DP aggregate call, of the role and of every role that is a member of it may spend (NULL: no cap; all NULL removes the caps); a larger statement is refused before anything is charged';
REVOKE ALL ON FUNCTION dp_agg.set_cap(regrole, float8, float8, float8, float8) FROM PUBLIC;

-- a dropped relation's budget goes with it (its OID could be reused)
CREATE FUNCTION dp_agg.budget_forget_dropped()
RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    DELETE FROM dp_agg.budget b
    USING pg_event_trigger_dropped_objects() d
    WHERE d.classid = 'pg_class'::regclass AND d.objsubid = 0 AND d.objid = b.relation::oid;
END
$$;
COMMENT ON FUNCTION dp_agg.budget_forget_dropped() IS
'event trigger: removes the budgets of dropped relations from dp_agg.budget';
REVOKE ALL ON FUNCTION dp_agg.budget_forget_dropped() FROM PUBLIC;

CREATE EVENT TRIGGER dp_agg_budget_forget_dropped ON sql_drop
EXECUTE FUNCTION dp_agg.budget_forget_dropped();
COMMENT ON EVENT TRIGGER dp_agg_budget_forget_dropped IS
'removes the budgets of dropped relations from dp_agg.budget';

-- Every budget as of now: the amounts of its current window (nothing if
-- the row still holds an earlier one), the certificates of its
-- accounting, and the one that governs (the smallest valid epsilon).
CREATE VIEW dp_agg.budget_state AS
SELECT b.id AS budget,
       CASE WHEN b.relation IS NOT NULL THEN 'relation' WHEN b.members THEN 'group' ELSE 'role' END AS kind,
       b.role,
       b.relation,
       b.accounting,
       b.epsilon_limit,
       b.delta_limit,
       s.epsilon_spent,
       s.delta_spent,
       coalesce(g.epsilon, s.epsilon_spent) AS epsilon_governing,
       coalesce(g.governed_by, 'basic composition') AS governed_by,
       c.composed_epsilon,
       p.pld_epsilon,
       s.rdp,
       s.pld,
       b.pld_frontier,
       s.selection_epsilon,
       s.selection_delta,
       b.window_length,
       b.window_time_zone,
       w.window_start,
       w.window_end,
       b.lifetime_epsilon_limit,
       b.lifetime_delta_limit,
       b.lifetime_epsilon_spent,
       b.lifetime_delta_spent,
       b.created_at,
       b.updated_at
FROM dp_agg.budget b,
     LATERAL (SELECT dp_agg.window_start(b.window_length, b.window_time_zone, now()) AS window_start,
                     dp_agg.window_end(b.window_length, b.window_time_zone, now()) AS window_end) w,
     LATERAL (SELECT w.window_start IS NOT NULL
                     AND (b.window_start IS NULL OR b.window_start < w.window_start) AS stale) st,
     LATERAL (SELECT CASE WHEN st.stale THEN 0 ELSE b.epsilon_spent END AS epsilon_spent,
                     CASE WHEN st.stale THEN 0 ELSE b.delta_spent END AS delta_spent,
                     CASE WHEN st.stale THEN NULL ELSE b.rdp END AS rdp,
                     CASE WHEN st.stale THEN NULL ELSE b.pld END AS pld,
                     CASE WHEN st.stale THEN 0 ELSE b.selection_epsilon END AS selection_epsilon,
                     CASE WHEN st.stale THEN 0 ELSE b.selection_delta END AS selection_delta) s,
     LATERAL (SELECT CASE WHEN b.delta_limit > 0
                          THEN dp_agg.hybrid_epsilon(s.rdp, s.selection_epsilon, s.selection_delta,
                                                     b.delta_limit) END AS composed_epsilon) c,
     LATERAL (SELECT CASE WHEN b.delta_limit > 0
                               AND (s.pld IS NOT NULL OR (s.epsilon_spent = 0 AND s.delta_spent = 0))
                          THEN dp_agg.pld_budget_epsilon(coalesce(s.pld, '[]'::jsonb), b.pld_frontier,
                                                         b.delta_limit) END AS pld_epsilon) p,
     LATERAL (SELECT CASE WHEN b.accounting = 'basic' OR s.delta_spent <= b.delta_limit
                          THEN s.epsilon_spent END AS basic,
                     CASE WHEN b.accounting IN ('rdp', 'pld') THEN c.composed_epsilon END AS renyi,
                     CASE WHEN b.accounting = 'pld' THEN p.pld_epsilon END AS pld) x,
     LATERAL (SELECT LEAST(x.basic, x.renyi, x.pld) AS epsilon) e,
     LATERAL (SELECT e.epsilon,
                     CASE WHEN e.epsilon = x.basic THEN 'basic composition'
                          WHEN e.epsilon = x.renyi THEN 'Renyi composition'
                          WHEN e.epsilon = x.pld THEN 'privacy loss distribution' END AS governed_by) g;
COMMENT ON VIEW dp_agg.budget_state IS
'internal: every budget as of now, unrounded: the amounts spent in its current window (0 when it has not been charged in it yet), its certificates, the epsilon that governs (the smallest valid one) and by which composition';
REVOKE ALL ON dp_agg.budget_state FROM PUBLIC;

-- does a budget pay for the current role's statements (for a relation's:
-- may the role read the relation)?
CREATE FUNCTION dp_agg.budget_visible(kind text, role regrole, relation regclass)
RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
SELECT CASE WHEN kind = 'relation'
            THEN coalesce(has_table_privilege(relation::oid, 'SELECT'), false)
                 OR EXISTS (SELECT FROM dp_agg.my_access a WHERE a.relation = budget_visible.relation)
            ELSE dp_agg.role_charged((SELECT r.oid FROM pg_roles r WHERE r.rolname = current_user)::regrole,
                                     budget_visible.role, kind = 'group')
       END
$$;
COMMENT ON FUNCTION dp_agg.budget_visible(text, regrole, regclass) IS
'internal: does a budget (of this kind, role or relation) pay for the current role''s statements (a role''s or a group''s), or may the current role read its relation (a relation''s)?';

-- what a person reads: one row per budget, rounded for display
DROP VIEW dp_agg.my_budget;
CREATE VIEW dp_agg.my_budget WITH (security_barrier) AS
SELECT s.role,
       s.accounting,
       s.epsilon_limit,
       s.delta_limit,
       dp_agg.round_display(s.epsilon_governing) AS epsilon_spent,
       dp_agg.round_display(s.delta_spent) AS delta_spent,
       dp_agg.round_display(GREATEST(s.epsilon_limit - s.epsilon_governing, 0::float8)) AS epsilon_remaining,
       dp_agg.round_display(GREATEST(s.delta_limit - s.delta_spent, 0::float8)) AS delta_remaining,
       s.governed_by,
       s.kind,
       s.relation,
       s.window_length,
       s.window_time_zone,
       s.window_start,
       s.window_end,
       s.lifetime_epsilon_limit,
       s.lifetime_delta_limit,
       dp_agg.round_display(s.lifetime_epsilon_spent) AS lifetime_epsilon_spent,
       dp_agg.round_display(s.lifetime_delta_spent) AS lifetime_delta_spent,
       s.budget,
       s.created_at,
       s.updated_at
FROM dp_agg.budget_state s
WHERE dp_agg.budget_visible(s.kind, s.role, s.relation);
COMMENT ON VIEW dp_agg.my_budget IS 'the budgets that pay for the current role''s statements (its own, its groups'', and those of the relations it may read), as of now: limits, what is spent in the current window by the composition that governs under the accounting, what remains, the window and the lifetime; amounts rounded to 12 significant digits (the curves: dp_agg.my_budget_curves)';
GRANT SELECT ON dp_agg.my_budget TO PUBLIC;

CREATE VIEW dp_agg.my_budget_curves WITH (security_barrier) AS
SELECT s.role,
       s.accounting,
       s.epsilon_limit,
       s.delta_limit,
       s.epsilon_spent,
       s.delta_spent,
       CASE WHEN s.accounting = 'pld' THEN LEAST(s.composed_epsilon, s.pld_epsilon)
            ELSE s.composed_epsilon END AS composed_epsilon,
       GREATEST(s.epsilon_limit - s.epsilon_governing, 0::float8) AS epsilon_remaining,
       GREATEST(s.delta_limit - s.delta_spent, 0::float8) AS delta_remaining,
       s.rdp,
       s.pld_epsilon,
       s.pld,
       s.selection_epsilon,
       s.selection_delta,
       s.pld_frontier,
       s.kind,
       s.relation,
       s.window_start,
       s.budget
FROM dp_agg.budget_state s
WHERE dp_agg.budget_visible(s.kind, s.role, s.relation);
COMMENT ON VIEW dp_agg.my_budget_curves IS 'the budgets of dp_agg.my_budget, unrounded, with their certificates: the amounts spent in the current window (basic sums), composed_epsilon (the Renyi DP curve beside the sums of the private selections, at delta_limit; for pld accounting the better of that and pld_epsilon), pld_epsilon (the certificate pld admission uses), the curve rdp, the releases by kind pld, the sums of the private selections and the pld frontier';
GRANT SELECT ON dp_agg.my_budget_curves TO PUBLIC;

CREATE VIEW dp_agg.budgets AS
SELECT s.budget,
       s.kind,
       s.role,
       s.relation,
       s.accounting,
       s.epsilon_limit,
       s.delta_limit,
       dp_agg.round_display(s.epsilon_governing) AS epsilon_spent,
       dp_agg.round_display(s.delta_spent) AS delta_spent,
       dp_agg.round_display(GREATEST(s.epsilon_limit - s.epsilon_governing, 0::float8)) AS epsilon_remaining,
       dp_agg.round_display(GREATEST(s.delta_limit - s.delta_spent, 0::float8)) AS delta_remaining,
       s.governed_by,
       s.window_length,
       s.window_time_zone,
       s.window_start,
       s.window_end,
       s.lifetime_epsilon_limit,
       s.lifetime_delta_limit,
       dp_agg.round_display(s.lifetime_epsilon_spent) AS lifetime_epsilon_spent,
       dp_agg.round_display(s.lifetime_delta_spent) AS lifetime_delta_spent,
       s.created_at,
       s.updated_at
FROM dp_agg.budget_state s;
COMMENT ON VIEW dp_agg.budgets IS 'every budget as of now (for DBAs): limits, what is spent in the current window by the composition that governs, what remains, the window and the lifetime, rounded to 12 significant digits';
REVOKE ALL ON dp_agg.budgets FROM PUBLIC;

CREATE VIEW dp_agg.budget_spending AS
SELECT c.budget,
       CASE WHEN b.id IS NULL THEN NULL WHEN b.relation IS NOT NULL THEN 'relation'
            WHEN b.members THEN 'group' ELSE 'role' END AS kind,
       b.role AS budget_role,
       b.relation AS budget_relation,
       c.window_start,
       l.role,
       r.relation,
       sum(l.statements) AS statements,
       dp_agg.round_display(sum(l.epsilon)) AS epsilon,
       dp_agg.round_display(sum(l.delta)) AS delta,
       min(l.at) AS first_at,
       max(l.at) AS last_at
FROM dp_agg.ledger l
CROSS JOIN LATERAL unnest(l.budgets, l.windows) AS c(budget, window_start)
LEFT JOIN LATERAL pg_catalog.unnest(l.relations) AS r(relation) ON true
LEFT JOIN dp_agg.budget b ON b.id OPERATOR(pg_catalog.=) c.budget
WHERE l.kind = 'charge'
GROUP BY c.budget, b.id, b.relation, b.members, b.role, c.window_start, l.role, r.relation;
COMMENT ON VIEW dp_agg.budget_spending IS 'what each budget was charged (for DBAs), from the ledger: per window (NULL: the budget has no window), per role and per relation read, the statements and the sums of their basic prices (a statement that read several relations counts under each)';
REVOKE ALL ON dp_agg.budget_spending FROM PUBLIC;

CREATE VIEW dp_agg.my_caps WITH (security_barrier) AS
SELECT c.role, c.statement_epsilon, c.statement_delta, c.call_epsilon, c.call_delta, c.set_at
FROM dp_agg.cap c
WHERE dp_agg.role_charged((SELECT r.oid FROM pg_catalog.pg_roles r
                           WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER)::pg_catalog.regrole,
                          c.role, true);
COMMENT ON VIEW dp_agg.my_caps IS 'the caps that bound the current role''s statements: its own and those of every role it is a member of (the smallest of each applies)';
GRANT SELECT ON dp_agg.my_caps TO PUBLIC;

CREATE OR REPLACE VIEW dp_agg.my_ledger WITH (security_barrier) AS
SELECT l.id, l.at, l.kind, l.epsilon, l.delta, l.query, l.detail, l.rdp, l.relations, l.budgets, l.windows,
       l.statements
FROM dp_agg.ledger l
WHERE l.role OPERATOR(pg_catalog.=)
      (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER)::pg_catalog.regrole;
COMMENT ON VIEW dp_agg.my_ledger IS 'the ledger entries of the current role: its charges, with the relations each statement read and the budgets it was charged to (and the start of the window of each), and the resets of its own budget';

CREATE OR REPLACE FUNCTION dp_agg.spent_epsilon(role regrole, delta float8)
RETURNS float8
LANGUAGE plpgsql VOLATILE  -- its queries take a snapshot after the journal is folded (budget.c, fold on read)
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    curve float8[];
    releases jsonb;
    frontier jsonb;
    spent float8;
    acct text;
    sel_epsilon float8;
    sel_delta float8;
BEGIN
    IF spent_epsilon.delta IS NULL OR NOT (spent_epsilon.delta > 0 AND spent_epsilon.delta < 1) THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'delta must be greater than 0 and less than 1',
            DETAIL = format('delta is %s.', coalesce(spent_epsilon.delta::text, 'NULL'));
    END IF;
    -- a budget one pays from through the view; any other needs the right
    -- to read dp_agg.budget (superusers, or a DBA granted SELECT on it)
    SELECT b.rdp, b.pld, b.pld_frontier, b.epsilon_spent + b.delta_spent, b.accounting,
           b.selection_epsilon, b.selection_delta
    INTO curve, releases, frontier, spent, acct, sel_epsilon, sel_delta
    FROM dp_agg.my_budget_curves b WHERE b.role = spent_epsilon.role;
    IF NOT FOUND THEN
        SELECT CASE WHEN NOT w.stale THEN b.rdp END, CASE WHEN NOT w.stale THEN b.pld END, b.pld_frontier,
               CASE WHEN NOT w.stale THEN b.epsilon_spent + b.delta_spent ELSE 0 END, b.accounting,
               CASE WHEN NOT w.stale THEN b.selection_epsilon ELSE 0 END,
               CASE WHEN NOT w.stale THEN b.selection_delta ELSE 0 END
        INTO curve, releases, frontier, spent, acct, sel_epsilon, sel_delta
        FROM dp_agg.budget b,
             LATERAL (SELECT coalesce(b.window_start < dp_agg_internal.window_start(b.window_length, b.window_time_zone, now()),
                                      b.window_length IS NOT NULL) AS stale) w
        WHERE b.role = spent_epsilon.role;
    END IF;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'PB002',
            MESSAGE = format('role %s has no privacy budget', spent_epsilon.role);
    END IF;
    RETURN LEAST(dp_agg.hybrid_epsilon(curve, sel_epsilon, sel_delta, spent_epsilon.delta),
                 CASE WHEN acct = 'pld' AND (releases IS NOT NULL OR spent = 0)
                      THEN dp_agg.pld_budget_epsilon(coalesce(releases, '[]'::jsonb), frontier,
                                                     spent_epsilon.delta) END);
END
$$;
COMMENT ON FUNCTION dp_agg.spent_epsilon(regrole, float8) IS
'the epsilon, at the given delta, of everything the budget of a role (its own or its group''s) has paid for in its current window (without a window: since its last reset): the Renyi DP composition of the releases beside the basic composition of the private selections (for pld accounting: the better of that and the PLD certificate admission uses, dp_agg.pld_budget_epsilon)';



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
    -- an entry may name it in another spelling (written by hand, or
    -- restored from a dump of version 0.3, which printed no schema)
    IF EXISTS (SELECT FROM dp_agg.allowed_function a
               WHERE dp_agg.resolve_allowed_function(a.function) = f.oid) THEN
        RETURN false;
    END IF;
    INSERT INTO dp_agg.allowed_function (function)
    VALUES ((pg_identify_object('pg_proc'::regclass, f.oid, 0)).identity)
    ON CONFLICT DO NOTHING;
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



--------------------------------------------------------------------------
-- Internal functions in a schema of their own: dp_agg holds what users and
-- DBAs call, dp_agg_internal the plumbing (doc/sql-reference.md,
-- "Internal functions").
--
-- Until 0.3 schema dp_agg held, beside the calculators and the functions
-- that administer budgets, protected relations, privacy units and public
-- domains, some 180 internal functions and aggregates (about 770 with
-- their overloads): the support functions of the aggregates, the
-- aggregates and functions that the rewrites of privacy units, private and
-- public group keys, top-k, protected relations and Citus put into
-- statements, the input and output of internal types, the triggers and
-- event triggers that keep the catalogs consistent, and the helpers of the
-- budget functions and views.  They move, by name (every overload of a
-- name is internal or none is), with their comments and privileges.
--
-- Privileges.  Moving keeps each function's ACL, so nothing becomes
-- executable that was not.  PUBLIC gets USAGE on the schema, as on
-- dp_agg: a Citus worker parses the fragments the coordinator sends it,
-- which name dp_agg_internal.sum schema-qualified, as the role that runs
-- the DP statement; everything else reaches these functions by OID (the
-- aggregates' support functions, checked by PostgreSQL against the
-- aggregate's owner; the rewritten statements' calls, checked against the
-- role that runs them, which the guard refuses when it names them
-- itself; the views' calls; the triggers).  The functions the rewritten
-- statements and the views call keep EXECUTE for PUBLIC.  The support
-- functions of dp_select, dp_public and dp_top_k lose it, as those of the
-- other aggregates never had it: PostgreSQL checks them for the owner of
-- the aggregate, and on Citus tables these aggregates never reach a
-- worker (dist_run computes the selection from a partial dp_agg_internal.sum).
-- So do the input and output functions of type dp_agg.estimate, which
-- PostgreSQL calls without a privilege check, as those of
-- dp_agg.dist_state.  The types and every table and view stay in dp_agg
-- (the C code and pg_extension_config_dump read the tables there).
--
-- The plpgsql functions of the sections above already name the moved
-- functions by their new schema: PL/pgSQL resolves the names of a body
-- when it runs, so a body may name dp_agg_internal before this section
-- creates it.

CREATE SCHEMA dp_agg_internal;
COMMENT ON SCHEMA dp_agg_internal IS
'dp_agg: internal functions and aggregates (support functions of the aggregates, calls made by its rewrites, triggers); not an interface: their names and signatures change between versions';
GRANT USAGE ON SCHEMA dp_agg_internal TO PUBLIC;
COMMENT ON SCHEMA dp_agg IS
'dp_agg: what users and DBAs call: calculators, preview, administration of budgets, protected relations, privacy units and public domains, with their catalogs and views (internal functions: schema dp_agg_internal)';

DO $$
DECLARE
    internal text[] := ARRAY[
        -- support functions of the DP aggregates (transition, combine,
        -- serialize, deserialize, final)
        'count_star_transfn', 'count_transfn', 'count_finalfn',
        'sum_transfn', 'sum_int_finalfn', 'sum_float_finalfn', 'sum_numeric_finalfn',
        'avg_transfn', 'avg_float_finalfn', 'avg_numeric_finalfn',
        'var_transfn', 'var_float_finalfn', 'var_numeric_finalfn',
        'stddev_float_finalfn', 'stddev_numeric_finalfn',
        'percentile_transfn', 'percentile_float_finalfn', 'percentile_numeric_finalfn',
        'percentile_float_array_finalfn', 'percentile_numeric_array_finalfn',
        'median_transfn', 'median_float_finalfn', 'median_numeric_finalfn',
        'bounds_transfn', 'bounds_finalfn',
        'combinefn', 'serialfn', 'deserialfn',
        'tree_combinefn', 'tree_serialfn', 'tree_deserialfn',
        -- privacy units: the aggregates of the rewrite and their support
        'unit_bound_dp_count', 'unit_bound_dp_sum', 'unit_bound_dp_avg', 'unit_bound_dp_var',
        'unit_bound_dp_stddev', 'unit_bound_dp_percentile', 'unit_bound_dp_median',
        'unit_pick_bound_dp_count', 'unit_pick_bound_dp_sum', 'unit_pick_bound_dp_avg',
        'unit_pick_bound_dp_var', 'unit_pick_bound_dp_stddev', 'unit_pick_bound_dp_percentile',
        'unit_pick_bound_dp_median',
        'unit_release_dp_count', 'unit_release_dp_sum', 'unit_release_dp_avg', 'unit_release_dp_var',
        'unit_release_dp_stddev', 'unit_release_dp_percentile', 'unit_release_dp_median',
        'unit_bound_count_finalfn', 'unit_bound_sum_finalfn', 'unit_bound_avg_finalfn',
        'unit_bound_var_finalfn', 'unit_bound_stddev_finalfn', 'unit_bound_percentile_finalfn',
        'unit_bound_median_finalfn',
        'unit_collect_transfn', 'unit_collect_tree_transfn',
        'unit_pick_transfn', 'unit_pick_tree_transfn', 'unit_pick_var_transfn',
        'unit_pick', 'unit_pick_key_transfn', 'unit_pick_key_combinefn', 'unit_pick_key_serialfn',
        'unit_pick_key_deserialfn', 'unit_pick_key_finalfn',
        'unit_keep', 'unit_priority', 'unit_sampled', 'unit_scan',
        -- private and public group keys, top-k
        'dp_select', 'select_transfn', 'select_finalfn',
        'dp_public', 'public_transfn', 'public_finalfn', 'domain_index', 'domain_key',
        'dp_top_k', 'top_k_transfn', 'top_k_finalfn', 'top_k_rank',
        -- error bars of sub-query columns (type dp_agg.estimate)
        'estimate_in', 'estimate_out', 'estimate_part', 'estimate_scale',
        -- Citus: the partial aggregate, its support, the coordinator's calls
        'sum', 'dist_transfn', 'dist_combinefn', 'dist_finalfn', 'dist_state_in', 'dist_state_out',
        'dist_run', 'dist_release',
        -- protected relations: the row path and the statistics
        'row_call', 'row_eval',
        'row_int2pl', 'row_int2mi', 'row_int2mul', 'row_int2div', 'row_int2mod', 'row_int2um', 'row_int2abs',
        'row_int4pl', 'row_int4mi', 'row_int4mul', 'row_int4div', 'row_int4mod', 'row_int4um', 'row_int4abs',
        'row_int8pl', 'row_int8mi', 'row_int8mul', 'row_int8div', 'row_int8mod', 'row_int8um', 'row_int8abs',
        'row_int24pl', 'row_int24mi', 'row_int24mul', 'row_int24div',
        'row_int42pl', 'row_int42mi', 'row_int42mul', 'row_int42div',
        'row_int28pl', 'row_int28mi', 'row_int28mul', 'row_int28div',
        'row_int82pl', 'row_int82mi', 'row_int82mul', 'row_int82div',
        'row_int48pl', 'row_int48mi', 'row_int48mul', 'row_int48div',
        'row_int84pl', 'row_int84mi', 'row_int84mul', 'row_int84div',
        'row_float4pl', 'row_float4mi', 'row_float4mul', 'row_float4div',
        'row_float8pl', 'row_float8mi', 'row_float8mul', 'row_float8div',
        'row_float48pl', 'row_float48mi', 'row_float48mul', 'row_float48div',
        'row_float84pl', 'row_float84mi', 'row_float84mul', 'row_float84div',
        'relation_statistic', 'relation_statistic_volatile', 'statistics_visible',
        -- triggers and event triggers of the catalogs
        'protect_changed', 'protect_forget_dropped',
        'privacy_unit_changed', 'privacy_unit_attnum', 'privacy_unit_forget_dropped',
        'privacy_unit_renamed',
        'public_domain_changed', 'public_domain_forget_dropped',
        'budget_forget_dropped',
        -- helpers of the budget functions and views
        'check_budget_limits', 'budget_of', 'set_window', 'set_lifetime', 'reset',
        'window_start', 'window_end', 'round_display', 'budget_visible'];
    missing text[];
    f record;
BEGIN
    -- a name that matches nothing is a mistake in this list
    SELECT array_agg(n ORDER BY n) INTO missing
    FROM unnest(internal) n
    WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_proc p
                      WHERE p.pronamespace = 'dp_agg'::regnamespace AND p.proname = n);
    IF missing IS NOT NULL THEN
        RAISE EXCEPTION 'dp_agg: no function % in schema dp_agg to move', missing;
    END IF;
    FOR f IN
        SELECT p.oid::regprocedure AS signature
        FROM pg_catalog.pg_proc p
             JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_proc'::regclass
                                         AND d.objid = p.oid AND d.deptype = 'e'
             JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'dp_agg'
        WHERE p.pronamespace = 'dp_agg'::regnamespace AND p.proname = ANY (internal)
        ORDER BY p.proname, p.oid
    LOOP
        -- a routine: a function, a window function or an aggregate (also
        -- one of no argument, whose signature is "()" rather than "(*)")
        EXECUTE pg_catalog.format('ALTER ROUTINE %s SET SCHEMA dp_agg_internal', f.signature);
    END LOOP;
END
$$;

REVOKE ALL ON FUNCTION dp_agg_internal.select_transfn(internal, internal, integer),
                       dp_agg_internal.select_finalfn(internal),
                       dp_agg_internal.public_transfn(internal, internal, boolean, bigint),
                       dp_agg_internal.public_finalfn(internal),
                       dp_agg_internal.top_k_transfn(internal, internal, integer, float8),
                       dp_agg_internal.top_k_finalfn(internal),
                       dp_agg_internal.estimate_in(cstring),
                       dp_agg_internal.estimate_out(dp_agg.estimate)
FROM PUBLIC;

--------------------------------------------------------------------------
-- The shape of a stored Renyi DP curve in one pass (doc/performance.md,
-- "The charge, a third time").  The checks budget_rdp_shape and
-- ledger_rdp_shape of 0.2 went over the 156 orders four times, each
-- comparison a function call: 13% of the charger's instructions per
-- charge, as the charger writes a budget row and a ledger row each time.
-- The same conditions, in one pass, by the check the decoders of budget
-- rows make (budget_row.c).  EXECUTE stays with PUBLIC: PostgreSQL checks
-- it for whoever writes the rows (the charger, and a DBA's UPDATE).
--------------------------------------------------------------------------

CREATE FUNCTION dp_agg_internal.rdp_curve_valid(curve float8[])
RETURNS boolean
AS 'MODULE_PATHNAME', 'dp_rdp_curve_valid_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg_internal.rdp_curve_valid(float8[]) IS
'true if the Renyi DP curve has one dimension, one value per order of dp_agg.rdp_orders(), and no NULL, NaN or negative value: the check constraints of dp_agg.budget and dp_agg.ledger';

ALTER TABLE dp_agg.budget
    DROP CONSTRAINT budget_rdp_shape,
    ADD CONSTRAINT budget_rdp_shape CHECK (rdp IS NULL OR dp_agg_internal.rdp_curve_valid(rdp));
ALTER TABLE dp_agg.ledger
    DROP CONSTRAINT ledger_rdp_shape,
    ADD CONSTRAINT ledger_rdp_shape CHECK (rdp IS NULL OR dp_agg_internal.rdp_curve_valid(rdp));

--------------------------------------------------------------------------
-- The journal of charges decided in the backends (doc/charging-design.md):
-- rows appended through generic WAL, outside the transaction that appends
-- them (src/accounting/journal.c), read back and deleted by the charger.
-- A heap table without indexes, whose pages the heap, VACUUM and amcheck
-- read as usual; only dp_agg writes it.
--------------------------------------------------------------------------

CREATE TABLE dp_agg.journal (
    seq bigint NOT NULL,
    at timestamptz NOT NULL,
    role regrole NOT NULL,
    shape bigint NOT NULL,
    epsilon float8 NOT NULL,
    delta float8 NOT NULL,
    selection_epsilon float8 NOT NULL,
    selection_delta float8 NOT NULL,
    budgets bigint[] NOT NULL,
    releases bytea
);
REVOKE ALL ON dp_agg.journal FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('dp_agg.journal', '');
COMMENT ON TABLE dp_agg.journal IS 'charges decided in the backends on leased budgets (dp_agg.lease_time) and not yet folded into dp_agg.budget and dp_agg.ledger: each row is durable before its statement reads data, whatever becomes of the statement''s transaction (written by dp_agg only; no index)';
COMMENT ON COLUMN dp_agg.journal.seq IS 'the order the charges were decided in (the charger folds them in this order)';
COMMENT ON COLUMN dp_agg.journal.at IS 'when the charge was decided';
COMMENT ON COLUMN dp_agg.journal.role IS 'the role charged';
COMMENT ON COLUMN dp_agg.journal.shape IS 'the dp_agg.ledger entry of the identical statement that the charger charged and whose budgets it leased: the statement''s text, detail and Renyi DP curve';
COMMENT ON COLUMN dp_agg.journal.epsilon IS 'epsilon charged';
COMMENT ON COLUMN dp_agg.journal.delta IS 'delta charged';
COMMENT ON COLUMN dp_agg.journal.selection_epsilon IS 'of epsilon, the part its private selections of GROUP BY keys cost';
COMMENT ON COLUMN dp_agg.journal.selection_delta IS 'of delta, the part its private selections of GROUP BY keys cost';
COMMENT ON COLUMN dp_agg.journal.budgets IS 'the budgets (dp_agg.budget.id) charged';
COMMENT ON COLUMN dp_agg.journal.releases IS 'its releases by kind, for privacy loss distribution accounting (NULL: more kinds than are kept)';

-- A DBA's change of budgets or caps ends the leases of the database
-- (src/accounting/lease.c): the next statements are decided on the rows as
-- changed.  The charger's own writes do not fire it.
CREATE FUNCTION dp_agg_internal.recall_leases()
RETURNS trigger
AS 'MODULE_PATHNAME', 'dp_recall_leases_trigger'
LANGUAGE C;
REVOKE ALL ON FUNCTION dp_agg_internal.recall_leases() FROM PUBLIC;
COMMENT ON FUNCTION dp_agg_internal.recall_leases() IS
'trigger: a change of dp_agg.budget or dp_agg.cap ends every lease of budgets of the database (dp_agg.lease_time)';
CREATE TRIGGER dp_agg_recall_leases
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON dp_agg.budget
    FOR EACH STATEMENT EXECUTE FUNCTION dp_agg_internal.recall_leases();
CREATE TRIGGER dp_agg_recall_leases
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON dp_agg.cap
    FOR EACH STATEMENT EXECUTE FUNCTION dp_agg_internal.recall_leases();

CREATE FUNCTION dp_agg_internal.fold_journal()
RETURNS boolean
AS 'MODULE_PATHNAME', 'dp_fold_journal_sql'
LANGUAGE C VOLATILE;
REVOKE ALL ON FUNCTION dp_agg_internal.fold_journal() FROM PUBLIC;
COMMENT ON FUNCTION dp_agg_internal.fold_journal() IS
'has the charger fold the charges decided on leases into dp_agg.budget and dp_agg.ledger now; false if this transaction holds locks the fold would wait for (reset_budget calls it before it resets)';

CREATE FUNCTION dp_agg_internal.journal_append(role regrole, epsilon float8, delta float8)
RETURNS void
AS 'MODULE_PATHNAME', 'dp_journal_append_sql'
LANGUAGE C VOLATILE;
REVOKE ALL ON FUNCTION dp_agg_internal.journal_append(regrole, float8, float8) FROM PUBLIC;
COMMENT ON FUNCTION dp_agg_internal.journal_append(regrole, float8, float8) IS
'appends a row to dp_agg.journal outside the current transaction (a ROLLBACK keeps it) and waits until it is durable; superuser only, for the tests of the journal';
