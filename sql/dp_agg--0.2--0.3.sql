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
-- Issue 12: Gaussian thresholding
--
-- For units in several groups the private selection chooses between the
-- optimal mechanism split k ways and Gaussian thresholding
-- (src/selection_mechanism.c); this calculator says which, and with what
-- parameters, from public parameters only.
--------------------------------------------------------------------------

CREATE FUNCTION dp_agg.selection_mechanism(epsilon float8, delta float8,
                                           max_groups_contributed integer DEFAULT 1,
                                           OUT mechanism text, OUT half bigint,
                                           OUT threshold bigint, OUT sigma float8,
                                           OUT tau bigint, OUT delta_noise float8,
                                           OUT delta_threshold float8)
RETURNS record AS 'MODULE_PATHNAME', 'dp_selection_mechanism_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.selection_mechanism(float8, float8, integer) IS
'the private selection at (epsilon, delta) for units in at most max_groups_contributed groups: the mechanism chosen (optimal or gaussian), the smallest n released with probability 1/2 (half), and its parameters (threshold of the optimal mechanism; sigma, tau and the split of delta of Gaussian thresholding)';
