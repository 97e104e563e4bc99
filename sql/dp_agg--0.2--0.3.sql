/* dp_agg: update from 0.2 to 0.3 (ALTER EXTENSION dp_agg UPDATE) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION dp_agg UPDATE TO '0.3'" to load this file. \quit

-- Version 0.3 is installed as 0.1 plus the update scripts (there is no
-- dp_agg--0.3.sql): a new install and an updated one run the same SQL.


--------------------------------------------------------------------------
-- Issue 14: Scale out on Citus
--
-- A DP statement on a Citus table is rewritten on the coordinator (README,
-- "Citus"): the workers compute exact partial states with dp_agg.sum,
-- only for fragments that carry a token signed with the key the nodes
-- share; dp_agg.dist_run runs that inner statement on the
-- coordinator and dp_agg.dist_release draws the noise there.  Analysts never
-- call these objects: the guard refuses statements that name them, and the
-- state type never reaches a client.
--------------------------------------------------------------------------

CREATE TYPE dp_agg.dist_state;

CREATE FUNCTION dp_agg.dist_state_in(cstring) RETURNS dp_agg.dist_state
AS 'MODULE_PATHNAME', 'dp_dist_state_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.dist_state_in(cstring) IS
'input of dp_agg.dist_state: a partial state sent by a Citus worker, checked';

CREATE FUNCTION dp_agg.dist_state_out(dp_agg.dist_state) RETURNS cstring
AS 'MODULE_PATHNAME', 'dp_dist_state_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.dist_state_out(dp_agg.dist_state) IS
'output of dp_agg.dist_state: how a Citus worker sends a partial state';

CREATE TYPE dp_agg.dist_state (
    INPUT = dp_agg.dist_state_in,
    OUTPUT = dp_agg.dist_state_out,
    INTERNALLENGTH = VARIABLE,
    ALIGNMENT = double,
    STORAGE = plain
);
COMMENT ON TYPE dp_agg.dist_state IS
'exact partial state of a DP aggregate on a Citus table: fingerprint, statement nonce, count, sum';

CREATE FUNCTION dp_agg.dist_transfn(dp_agg.dist_state, text) RETURNS dp_agg.dist_state
AS 'MODULE_PATHNAME', 'dp_dist_trans' LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.dist_transfn(dp_agg.dist_state, text) IS
'transition function of dp_agg.sum(text): rows of dp_count(*)';

CREATE FUNCTION dp_agg.dist_transfn(dp_agg.dist_state, text, anyelement) RETURNS dp_agg.dist_state
AS 'MODULE_PATHNAME', 'dp_dist_trans' LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.dist_transfn(dp_agg.dist_state, text, anyelement) IS
'transition function of dp_agg.sum(text, value): rows and clamped sum of a fragment';

CREATE FUNCTION dp_agg.dist_combinefn(dp_agg.dist_state, dp_agg.dist_state) RETURNS dp_agg.dist_state
AS 'MODULE_PATHNAME', 'dp_dist_combine' LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.dist_combinefn(dp_agg.dist_state, dp_agg.dist_state) IS
'transition function of dp_agg.sum(dp_agg.dist_state): adds states of the same statement and units only';

-- The partial aggregates are named sum, without a combine function, so that
-- Citus distributes them as it distributes sum: the aggregate itself on the
-- shards (no per-row ROW() as for custom aggregates), and on the
-- coordinator the aggregate named sum of the same name whose input is the
-- workers' result type, dp_agg.sum(dp_agg.dist_state).
CREATE AGGREGATE dp_agg.sum(dp_agg.dist_state) (
    SFUNC = dp_agg.dist_combinefn,
    STYPE = dp_agg.dist_state
);
COMMENT ON AGGREGATE dp_agg.sum(dp_agg.dist_state) IS
'the sum of the partial states of one DP call that the workers of a Citus table send, on the coordinator';

CREATE AGGREGATE dp_agg.sum(text) (
    SFUNC = dp_agg.dist_transfn,
    STYPE = dp_agg.dist_state
);
COMMENT ON AGGREGATE dp_agg.sum(text) IS
'partial state of dp_count(*) in a signed fragment of a DP statement on a Citus table';

CREATE AGGREGATE dp_agg.sum(text, boolean) (
    SFUNC = dp_agg.dist_transfn,
    STYPE = dp_agg.dist_state
);
COMMENT ON AGGREGATE dp_agg.sum(text, boolean) IS
'partial state of dp_count(value): whether the value is not NULL in a signed fragment of a DP statement on a Citus table';

CREATE AGGREGATE dp_agg.sum(text, smallint) (
    SFUNC = dp_agg.dist_transfn,
    STYPE = dp_agg.dist_state
);
COMMENT ON AGGREGATE dp_agg.sum(text, smallint) IS
'partial state of dp_sum or dp_avg of smallint in a signed fragment of a DP statement on a Citus table';

CREATE AGGREGATE dp_agg.sum(text, integer) (
    SFUNC = dp_agg.dist_transfn,
    STYPE = dp_agg.dist_state
);
COMMENT ON AGGREGATE dp_agg.sum(text, integer) IS
'partial state of dp_sum or dp_avg of integer in a signed fragment of a DP statement on a Citus table';

CREATE AGGREGATE dp_agg.sum(text, bigint) (
    SFUNC = dp_agg.dist_transfn,
    STYPE = dp_agg.dist_state
);
COMMENT ON AGGREGATE dp_agg.sum(text, bigint) IS
'partial state of dp_sum or dp_avg of bigint in a signed fragment of a DP statement on a Citus table';

CREATE AGGREGATE dp_agg.sum(text, real) (
    SFUNC = dp_agg.dist_transfn,
    STYPE = dp_agg.dist_state
);
COMMENT ON AGGREGATE dp_agg.sum(text, real) IS
'partial state of dp_sum or dp_avg of real in a signed fragment of a DP statement on a Citus table';

CREATE AGGREGATE dp_agg.sum(text, double precision) (
    SFUNC = dp_agg.dist_transfn,
    STYPE = dp_agg.dist_state
);
COMMENT ON AGGREGATE dp_agg.sum(text, double precision) IS
'partial state of dp_sum or dp_avg of double precision in a signed fragment of a DP statement on a Citus table';

CREATE AGGREGATE dp_agg.sum(text, numeric) (
    SFUNC = dp_agg.dist_transfn,
    STYPE = dp_agg.dist_state
);
COMMENT ON AGGREGATE dp_agg.sum(text, numeric) IS
'partial state of dp_sum or dp_avg of numeric in a signed fragment of a DP statement on a Citus table';

CREATE FUNCTION dp_agg.dist_run(text) RETURNS SETOF record
AS 'MODULE_PATHNAME', 'dp_dist_run' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dp_agg.dist_run(text) IS
'runs the distributed part of a priced and charged DP statement on a Citus table (made by the planner, never called by hand)';

CREATE FUNCTION dp_agg.dist_release(dp_agg.dist_state, integer, bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_dist_release' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_agg.dist_release(dp_agg.dist_state, integer, bigint) IS
'noisy release of a bigint DP aggregate on a Citus table, on the coordinator (made by the planner)';

CREATE FUNCTION dp_agg.dist_release(dp_agg.dist_state, integer, float8) RETURNS float8
AS 'MODULE_PATHNAME', 'dp_dist_release' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_agg.dist_release(dp_agg.dist_state, integer, float8) IS
'noisy release of a double precision DP aggregate on a Citus table, on the coordinator (made by the planner)';

CREATE FUNCTION dp_agg.dist_release(dp_agg.dist_state, integer, numeric) RETURNS numeric
AS 'MODULE_PATHNAME', 'dp_dist_release' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_agg.dist_release(dp_agg.dist_state, integer, numeric) IS
'noisy release of a numeric DP aggregate on a Citus table, on the coordinator (made by the planner)';

-- Support functions are not executable by PUBLIC.  dist_run and
-- dist_release are: the outer statement the planner makes runs as the
-- analyst; the guard refuses statements that name them, and they release
-- only states of the statement being run.
REVOKE EXECUTE ON FUNCTION dp_agg.dist_state_in(cstring), dp_agg.dist_state_out(dp_agg.dist_state),
    dp_agg.dist_transfn(dp_agg.dist_state, text), dp_agg.dist_transfn(dp_agg.dist_state, text, anyelement),
    dp_agg.dist_combinefn(dp_agg.dist_state, dp_agg.dist_state) FROM PUBLIC;
