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
