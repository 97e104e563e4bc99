/* dp_agg: update from 0.2 to 0.3 (ALTER EXTENSION dp_agg UPDATE) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION dp_agg UPDATE TO '0.3'" to load this file. \quit


--------------------------------------------------------------------------
-- Issue 12: private GROUP BY keys
--
-- A DP statement with GROUP BY releases a group only if the private
-- selection dp_agg.dp_select says so (src/selection.c puts it in the
-- statement's HAVING).  Its first argument has type internal, which no SQL
-- expression has: analysts cannot call it, only the rewrite does, and the
-- guard prices it with the statement.  Its support functions refuse to run
-- outside a priced statement, like those of the other DP aggregates.
--------------------------------------------------------------------------

CREATE FUNCTION dp_agg.select_transfn(internal, internal, integer)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_select_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.select_transfn(internal, internal, integer) IS
'transition function of dp_agg.dp_select: counts the rows of a group';

CREATE FUNCTION dp_agg.select_finalfn(internal)
RETURNS boolean AS 'MODULE_PATHNAME', 'dp_select_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.select_finalfn(internal) IS
'draws the private selection of a group: true to release it';

CREATE AGGREGATE dp_agg.dp_select(internal, integer) (
    SFUNC = dp_agg.select_transfn,
    FINALFUNC = dp_agg.select_finalfn,
    STYPE = internal,
    SSPACE = 96,
    COMBINEFUNC = dp_agg.combinefn,
    SERIALFUNC = dp_agg.serialfn,
    DESERIALFUNC = dp_agg.deserialfn,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE dp_agg.dp_select(internal, integer) IS
'private selection of a GROUP BY group (internal: put in DP statements by dp_agg, never called directly); the second argument is max_groups_contributed';

CREATE FUNCTION dp_agg.selection_probability(epsilon float8, delta float8, n bigint,
                                             max_groups_contributed integer DEFAULT 1)
RETURNS float8 AS 'MODULE_PATHNAME', 'dp_selection_probability_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.selection_probability(float8, float8, bigint, integer) IS
'the probability that the private selection at (epsilon, delta) releases a group of n units, each unit in at most max_groups_contributed groups (Desfontaines et al. 2022, Theorem 1)';

CREATE FUNCTION dp_agg.selection_threshold(epsilon float8, delta float8,
                                           max_groups_contributed integer DEFAULT 1)
RETURNS bigint AS 'MODULE_PATHNAME', 'dp_selection_threshold_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.selection_threshold(float8, float8, integer) IS
'the smallest number of units with which the private selection at (epsilon, delta) releases a group with certainty';

CREATE FUNCTION dp_agg.selection_sample(epsilon float8, delta float8, n bigint, draws integer,
                                        max_groups_contributed integer DEFAULT 1)
RETURNS bigint AS 'MODULE_PATHNAME', 'dp_selection_sample_sql'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.selection_sample(float8, float8, bigint, integer, integer) IS
'how many of draws independent private selections of a group of n units release it, for tests and audits';
REVOKE ALL ON FUNCTION dp_agg.selection_sample(float8, float8, bigint, integer, integer) FROM PUBLIC;

--------------------------------------------------------------------------
-- Issue 13: tight accounting (joint calibration; the Renyi DP of the
-- Poisson-subsampled discrete Laplace)
--------------------------------------------------------------------------

CREATE FUNCTION dp_agg.gaussian_mu(sigmas float8[], sensitivities float8[])
RETURNS float8 AS 'MODULE_PATHNAME', 'dp_gaussian_mu_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.gaussian_mu(float8[], float8[]) IS
'mu of Gaussian releases composed exactly: sqrt(sum (sensitivity/sigma)^2) (Dong, Roth and Su 2019, Corollary 3.3); their (epsilon, delta) curve is gaussian_delta(1, epsilon, mu)';

CREATE FUNCTION dp_agg.rdp_sampled_laplace(rate float8, noise_scale float8, sensitivity float8,
                                           orders float8[])
RETURNS float8[] AS 'MODULE_PATHNAME', 'dp_rdp_sampled_laplace_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.rdp_sampled_laplace(float8, float8, float8, float8[]) IS
'Renyi DP at each order of one release of the Poisson-subsampled discrete Laplace mechanism (integer scale units and sensitivity), add and remove neighbours, exact at integer orders (Steinke 2022, Theorems 34 and 35), the next integer order above a fractional one';

--------------------------------------------------------------------------
-- Issue 12: privacy units
--
-- README, "Privacy units".  A relation's privacy unit is a column (a
-- patient, a customer): neighbouring databases differ by all rows of one
-- unit.  DP statements over the relation are rewritten at planning
-- (src/privacy_unit.c) into three levels:
--   1. per (unit, group): the unit's bounded contribution, computed by the
--      internal aggregates dp_agg.unit_bound_* (the DP aggregates'
--      transition functions, a final function that bounds the state);
--   2. per unit: at most max_groups_contributed of its groups, chosen at
--      random (the window function dp_agg.unit_keep);
--   3. per group: the noisy release, by the internal aggregates
--      dp_agg.unit_release_* (the DP aggregates' final functions, with
--      noise calibrated to the bounded contributions).
-- The internal functions are refused in statements analysts write (the
-- guard, src/guard.c), and are accepted only in the shape the rewrite
-- makes.  Only the extension writes dp_agg.privacy_unit.
--------------------------------------------------------------------------

CREATE TABLE dp_agg.privacy_unit (
    relation regclass PRIMARY KEY,
    unit_column name NOT NULL,
    max_groups_contributed integer NOT NULL DEFAULT 1
        CHECK (max_groups_contributed BETWEEN 1 AND 65536),
    set_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE dp_agg.privacy_unit IS
'the privacy unit of each relation: the column whose value identifies whose row it is, and how many groups of a statement a unit may contribute to';
SELECT pg_catalog.pg_extension_config_dump('dp_agg.privacy_unit', '');
REVOKE ALL ON dp_agg.privacy_unit FROM PUBLIC;
GRANT SELECT ON dp_agg.privacy_unit TO PUBLIC;

CREATE FUNCTION dp_agg.privacy_unit_changed()
RETURNS trigger
AS 'MODULE_PATHNAME', 'dp_privacy_unit_changed'
LANGUAGE C;
COMMENT ON FUNCTION dp_agg.privacy_unit_changed() IS
'trigger: tells every backend that dp_agg.privacy_unit changed, so that plans made under the old units are made again';
REVOKE ALL ON FUNCTION dp_agg.privacy_unit_changed() FROM PUBLIC;

CREATE TRIGGER privacy_unit_changed
AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON dp_agg.privacy_unit
FOR EACH STATEMENT EXECUTE FUNCTION dp_agg.privacy_unit_changed();

CREATE FUNCTION dp_agg.set_privacy_unit(relation regclass, unit_column name,
                                        max_groups_contributed integer DEFAULT 1)
RETURNS void
AS 'MODULE_PATHNAME', 'dp_set_privacy_unit'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_agg.set_privacy_unit(regclass, name, integer) IS
'sets the privacy unit of a relation (superusers and roles with the privileges of its owner): DP statements bound each unit''s contribution to at most max_groups_contributed groups';
REVOKE ALL ON FUNCTION dp_agg.set_privacy_unit(regclass, name, integer) FROM PUBLIC;

CREATE FUNCTION dp_agg.clear_privacy_unit(relation regclass)
RETURNS boolean
AS 'MODULE_PATHNAME', 'dp_clear_privacy_unit'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_agg.clear_privacy_unit(regclass) IS
'removes the privacy unit of a relation: its rows are units again; false if it had none';
REVOKE ALL ON FUNCTION dp_agg.clear_privacy_unit(regclass) FROM PUBLIC;

-- A dropped relation leaves no row behind (its OID could be reused).  A
-- dropped or renamed unit column leaves its row: DP statements over the
-- relation then fail until the unit is set again (fail closed).
CREATE FUNCTION dp_agg.privacy_unit_forget_dropped()
RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    DELETE FROM dp_agg.privacy_unit p
    WHERE p.relation::oid IN (SELECT d.objid FROM pg_event_trigger_dropped_objects() d
                              WHERE d.classid = 'pg_class'::regclass AND d.objsubid = 0);
END
$$;
COMMENT ON FUNCTION dp_agg.privacy_unit_forget_dropped() IS
'event trigger: removes dropped relations from dp_agg.privacy_unit';
REVOKE ALL ON FUNCTION dp_agg.privacy_unit_forget_dropped() FROM PUBLIC;

CREATE EVENT TRIGGER dp_agg_privacy_unit_forget_dropped ON sql_drop
EXECUTE FUNCTION dp_agg.privacy_unit_forget_dropped();
COMMENT ON EVENT TRIGGER dp_agg_privacy_unit_forget_dropped IS
'removes dropped relations from dp_agg.privacy_unit';

-- level 2: true for at most k rows of each partition, chosen uniformly at
-- random with the extension's CSPRNG
CREATE FUNCTION dp_agg.unit_keep(max_groups integer)
RETURNS boolean
AS 'MODULE_PATHNAME', 'dp_unit_keep'
LANGUAGE C WINDOW VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION dp_agg.unit_keep(integer) IS
'internal (privacy units): true for at most max_groups rows of each window partition, chosen at random; only in statements rewritten by dp_agg';

-- level 1: the bounded contribution of one unit to one group
CREATE FUNCTION dp_agg.unit_bound_count_finalfn(internal)
RETURNS bytea AS 'MODULE_PATHNAME', 'dp_unit_bound_count_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.unit_bound_count_finalfn(internal) IS
'internal (privacy units): one unit''s count in a group, at most dp_agg.max_rows_contributed';
CREATE FUNCTION dp_agg.unit_bound_sum_finalfn(internal)
RETURNS bytea AS 'MODULE_PATHNAME', 'dp_unit_bound_sum_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.unit_bound_sum_finalfn(internal) IS
'internal (privacy units): one unit''s total in a group, clamped to the bounds';
CREATE FUNCTION dp_agg.unit_bound_avg_finalfn(internal)
RETURNS bytea AS 'MODULE_PATHNAME', 'dp_unit_bound_avg_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.unit_bound_avg_finalfn(internal) IS
'internal (privacy units): one unit''s count and total in a group, the count at most dp_agg.max_rows_contributed and the total within count times the bounds';
REVOKE ALL ON FUNCTION dp_agg.unit_bound_count_finalfn(internal), dp_agg.unit_bound_sum_finalfn(internal),
    dp_agg.unit_bound_avg_finalfn(internal) FROM PUBLIC;

-- For each DP aggregate f(args) of the extension: the level-1 aggregate
-- dp_agg.unit_bound_f(args) (f's transition function, a bounding final
-- function) and the level-3 aggregate dp_agg.unit_release_f(bytea, the
-- arguments of f after the value) (a transition function that adds bounded
-- contributions, f's final, combine, serialize and deserialize functions).
DO $$
DECLARE
    a record;
    rest text;
    kind text;
BEGIN
    FOR a IN
        SELECT p.proname, p.pronargs, g.aggtransfn::regproc AS transfn,
               g.aggfinalfn::regproc AS finalfn,
               pg_catalog.oidvectortypes(p.proargtypes) AS args,
               (SELECT pg_catalog.string_agg(pg_catalog.format_type(t, NULL), ', ' ORDER BY o)
                FROM pg_catalog.unnest(p.proargtypes) WITH ORDINALITY AS u(t, o)
                WHERE o > 1) AS tail
        FROM pg_catalog.pg_proc p
        JOIN pg_catalog.pg_aggregate g ON g.aggfnoid = p.oid
        JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_proc'::regclass
             AND d.objid = p.oid AND d.deptype = 'e'
             AND d.refobjid = (SELECT e.oid FROM pg_catalog.pg_extension e WHERE e.extname = 'dp_agg')
        WHERE p.proname IN ('dp_count', 'dp_sum', 'dp_avg')
        ORDER BY p.proname, p.pronargs, args
    LOOP
        kind := pg_catalog.substr(a.proname, 4);
        EXECUTE pg_catalog.format(
            'CREATE AGGREGATE dp_agg.%I(%s) (SFUNC = %s, STYPE = internal, SSPACE = 96, '
            'FINALFUNC = dp_agg.unit_bound_%s_finalfn, COMBINEFUNC = dp_agg.combinefn, '
            'SERIALFUNC = dp_agg.serialfn, DESERIALFUNC = dp_agg.deserialfn, PARALLEL = SAFE)',
            'unit_bound_' || a.proname,
            CASE WHEN a.pronargs = 0 THEN '*' ELSE a.args END,
            a.transfn, kind);
        EXECUTE pg_catalog.format(
            'COMMENT ON AGGREGATE dp_agg.%I(%s) IS %L',
            'unit_bound_' || a.proname,
            CASE WHEN a.pronargs = 0 THEN '*' ELSE a.args END,
            'internal (privacy units): one unit''s bounded contribution to ' || a.proname ||
            ' in one group; only in statements rewritten by dp_agg');
        rest := CASE WHEN a.tail IS NULL THEN '' ELSE ', ' || a.tail END;
        IF pg_catalog.to_regprocedure(pg_catalog.format('dp_agg.unit_collect_transfn(internal, bytea%s)', rest)) IS NULL THEN
            EXECUTE pg_catalog.format(
                'CREATE FUNCTION dp_agg.unit_collect_transfn(internal, bytea%s) RETURNS internal '
                'AS %L, %L LANGUAGE C PARALLEL SAFE', rest, 'MODULE_PATHNAME', 'dp_unit_collect_trans');
            EXECUTE pg_catalog.format(
                'COMMENT ON FUNCTION dp_agg.unit_collect_transfn(internal, bytea%s) IS %L', rest,
                'internal (privacy units): adds one unit''s bounded contribution to a group');
            EXECUTE pg_catalog.format(
                'REVOKE ALL ON FUNCTION dp_agg.unit_collect_transfn(internal, bytea%s) FROM PUBLIC', rest);
        END IF;
        IF pg_catalog.to_regprocedure(pg_catalog.format('dp_agg.%I(bytea%s)', 'unit_release_' || a.proname, rest)) IS NULL THEN
            EXECUTE pg_catalog.format(
                'CREATE AGGREGATE dp_agg.%I(bytea%s) (SFUNC = dp_agg.unit_collect_transfn, '
                'STYPE = internal, SSPACE = 96, FINALFUNC = %s, FINALFUNC_MODIFY = READ_WRITE, '
                'COMBINEFUNC = dp_agg.combinefn, SERIALFUNC = dp_agg.serialfn, '
                'DESERIALFUNC = dp_agg.deserialfn, PARALLEL = SAFE)',
                'unit_release_' || a.proname, rest, a.finalfn);
            EXECUTE pg_catalog.format(
                'COMMENT ON AGGREGATE dp_agg.%I(bytea%s) IS %L',
                'unit_release_' || a.proname, rest,
                'internal (privacy units): ' || a.proname ||
                ' over the bounded contributions of units; only in statements rewritten by dp_agg');
        END IF;
    END LOOP;
END
$$;
