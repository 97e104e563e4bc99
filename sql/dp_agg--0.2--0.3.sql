/* dp_agg: update from 0.2 to 0.3 (ALTER EXTENSION dp_agg UPDATE) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION dp_agg UPDATE TO '0.3'" to load this file. \quit

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


--------------------------------------------------------------------------
-- Private GROUP BY keys
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
-- Tight accounting (joint calibration; the Renyi DP of the
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
-- Privacy loss distribution accounting
--
-- A third accounting, 'pld': a role is admitted while any of its
-- certificates holds (basic sums, the Renyi curve, or the composition of
-- the privacy loss distributions of its releases at delta_limit).  Every
-- role keeps its releases by kind in budget.pld, whatever its accounting.
--------------------------------------------------------------------------

ALTER TABLE dp_agg.budget DROP CONSTRAINT budget_accounting_check;
ALTER TABLE dp_agg.budget ADD CONSTRAINT budget_accounting_check
    CHECK (accounting IN ('basic', 'rdp', 'pld'));
COMMENT ON COLUMN dp_agg.budget.accounting IS 'basic: admitted while the sums stay within the limits; rdp: also while the composed Renyi DP curve, converted at delta_limit, stays within epsilon_limit; pld: also while the composed privacy loss distribution does';

ALTER TABLE dp_agg.budget ADD COLUMN pld jsonb;
ALTER TABLE dp_agg.budget ADD CONSTRAINT budget_pld_shape CHECK (
    pld IS NULL OR pg_catalog.jsonb_typeof(pld) = 'array' OR pld = '"untracked"'::jsonb);
COMMENT ON COLUMN dp_agg.budget.pld IS 'releases since the last reset by kind (mechanism, sensitivity and noise_scale in grid units, rate, count), for pld accounting (kept for every role); "untracked" after more than 32 kinds, and (as NULL with amounts spent) for releases charged before version 0.3, until the next reset';
ALTER TABLE dp_agg.budget ADD COLUMN pld_frontier jsonb;
ALTER TABLE dp_agg.budget ADD CONSTRAINT budget_pld_frontier_shape CHECK (
    pld_frontier IS NULL OR pg_catalog.jsonb_typeof(pld_frontier) = 'object');
COMMENT ON COLUMN dp_agg.budget.pld_frontier IS 'for pld accounting, at the limits "epsilon" and "delta": releases by kind whose composition is known to meet them ("fit") and not to ("unfit"), so that the charger does not compose again while a history stays between them';
-- Budgets that spent before this version have releases that were not
-- counted by kind: untracked until their next reset.
UPDATE dp_agg.budget SET pld = '"untracked"' WHERE epsilon_spent > 0 OR delta_spent > 0;

CREATE FUNCTION dp_agg.pld_epsilon(releases jsonb, delta float8)
RETURNS float8 AS 'MODULE_PATHNAME', 'dp_pld_epsilon_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.pld_epsilon(jsonb, float8) IS
'epsilon at delta of the composition of releases described as in the ledger (calls with "releases", or releases with "mechanism", "sensitivity", "noise_scale", "grid", "sampling" or "rate", and "count"), by their privacy loss distributions, discretized pessimistically: never below the exact value';

CREATE FUNCTION dp_agg.pld_state_epsilon(pld jsonb, delta float8)
RETURNS float8 AS 'MODULE_PATHNAME', 'dp_pld_state_epsilon_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.pld_state_epsilon(jsonb, float8) IS
'pld_epsilon of a budget''s pld column (NULL if untracked), without the calculators'' step limit: the column is bounded';

-- set_budget accepts 'pld'
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
    IF set_budget.epsilon IS NULL OR NOT (set_budget.epsilon >= 0 AND set_budget.epsilon < 'infinity') THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'epsilon limit must be a finite number at least 0',
            DETAIL = format('epsilon is %s.', coalesce(set_budget.epsilon::text, 'NULL')),
            HINT = 'The limit is the total epsilon the role may spend, for example 1 or 10.';
    END IF;
    IF set_budget.delta IS NULL OR NOT (set_budget.delta >= 0 AND set_budget.delta < 1) THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'delta limit must be at least 0 and less than 1',
            DETAIL = format('delta is %s.', coalesce(set_budget.delta::text, 'NULL')),
            HINT = 'Use 0 for Laplace releases only, or a small delta such as 1e-6 for Gaussian releases.';
    END IF;
    IF set_budget.accounting IS NULL OR set_budget.accounting NOT IN ('basic', 'rdp', 'pld') THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'accounting must be ''basic'', ''rdp'' or ''pld''',
            DETAIL = format('accounting is %s.', coalesce(quote_literal(set_budget.accounting), 'NULL')),
            HINT = 'rdp and pld charge by the composition of all releases, which buys more releases; pld is the tightest.';
    END IF;
    INSERT INTO dp_agg.budget AS b (role, epsilon_limit, delta_limit, accounting)
    VALUES (set_budget.role, set_budget.epsilon, set_budget.delta, set_budget.accounting)
    ON CONFLICT ON CONSTRAINT budget_pkey DO UPDATE
        SET epsilon_limit = excluded.epsilon_limit,
            delta_limit = excluded.delta_limit,
            accounting = excluded.accounting,
            updated_at = now();
END
$$;
COMMENT ON FUNCTION dp_agg.set_budget(regrole, float8, float8, text) IS
'creates or changes the privacy budget limits and accounting (basic, rdp or pld) of a role (never the amounts spent)';
REVOKE ALL ON FUNCTION dp_agg.set_budget(regrole, float8, float8, text) FROM PUBLIC;

--------------------------------------------------------------------------
-- Gaussian thresholding
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


--------------------------------------------------------------------------
-- Renyi accounting of selections
--
-- A private selection (delta > 0) has no finite Renyi DP curve.  Instead of
-- making a role's curve infinite, the budget sums the selections' epsilons
-- and deltas beside the curve (charged by the charger in the same durable
-- step), and the Renyi certificate is the hybrid
--   epsilon_r(delta_limit - selection_delta) + selection_epsilon
-- (src/calibrate.c, hybrid_epsilon; README "Renyi accounting").
--------------------------------------------------------------------------

ALTER TABLE dp_agg.budget
    ADD COLUMN selection_epsilon float8 NOT NULL DEFAULT 0
        CONSTRAINT budget_selection_epsilon_valid CHECK (selection_epsilon >= 0 AND selection_epsilon <> 'NaN'),
    ADD COLUMN selection_delta float8 NOT NULL DEFAULT 0
        CONSTRAINT budget_selection_delta_valid CHECK (selection_delta >= 0 AND selection_delta <> 'NaN');
COMMENT ON COLUMN dp_agg.budget.selection_epsilon IS
'sum of the epsilons of the private selections of GROUP BY keys charged since the last reset, rounded up (part of epsilon_spent, composed beside the Renyi DP curve)';
COMMENT ON COLUMN dp_agg.budget.selection_delta IS
'sum of the deltas of the private selections of GROUP BY keys charged since the last reset, rounded up (part of delta_spent, composed beside the Renyi DP curve)';

-- the hybrid epsilon of a curve and the selections' sums at delta; Infinity
-- when the selections spend all of delta
CREATE FUNCTION dp_agg.hybrid_epsilon(curve float8[], selection_epsilon float8,
                                      selection_delta float8, delta float8)
RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
SELECT CASE WHEN delta > selection_delta
            THEN dp_agg.rdp_to_epsilon(dp_agg.rdp_orders(),
                                       coalesce(curve, array_fill(0::float8, ARRAY[cardinality(dp_agg.rdp_orders())])),
                                       delta - selection_delta) + selection_epsilon
            ELSE 'Infinity'::float8 END
$$;
COMMENT ON FUNCTION dp_agg.hybrid_epsilon(float8[], float8, float8, float8) IS
'the epsilon at delta of Renyi-accounted releases of composed curve curve and private selections of total (selection_epsilon, selection_delta): the curve converted at delta - selection_delta, plus selection_epsilon';

--------------------------------------------------------------------------
-- Renyi accounting of selections and PLD accounting: the budget functions
-- and view of both
--
-- One definition each of what both replace: reset_budget forgets the
-- releases by kind and the sums of the private selections; composed_epsilon
-- and spent_epsilon are the hybrid Renyi certificate (the curve converted at
-- delta - selection_delta, plus selection_epsilon), and for pld roles the
-- better of it and the pld certificate (a selection makes the releases by
-- kind untracked, src/pld_state.c, so that only the hybrid one remains).
-- The view's new columns are appended: pld_epsilon, pld, selection_epsilon,
-- selection_delta.
--------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION dp_agg.reset_budget(role regrole)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    old_epsilon float8;
    old_delta float8;
BEGIN
    SELECT b.epsilon_spent, b.delta_spent INTO old_epsilon, old_delta
    FROM dp_agg.budget b WHERE b.role = reset_budget.role FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'PB002',
            MESSAGE = format('role %s has no privacy budget', reset_budget.role),
            HINT = 'A privacy budget is given with dp_agg.set_budget(role, epsilon, delta).';
    END IF;
    UPDATE dp_agg.budget b SET epsilon_spent = 0, delta_spent = 0, rdp = NULL, pld = NULL,
                               selection_epsilon = 0, selection_delta = 0, updated_at = now()
    WHERE b.role = reset_budget.role;
    INSERT INTO dp_agg.ledger (role, kind, epsilon, delta, query, detail)
    VALUES (reset_budget.role, 'reset', 0, 0, current_query(),
            jsonb_build_object('epsilon_spent_before', old_epsilon,
                               'delta_spent_before', old_delta,
                               'reset_by', session_user));
END
$$;
COMMENT ON FUNCTION dp_agg.reset_budget(regrole) IS
'sets the amounts a role has spent (its Renyi DP curve, releases by kind and the sums of its private selections) back to 0, and records it in the ledger';
REVOKE ALL ON FUNCTION dp_agg.reset_budget(regrole) FROM PUBLIC;

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
       b.selection_delta
FROM dp_agg.budget b,
     LATERAL (SELECT CASE WHEN b.delta_limit > 0
                          THEN dp_agg.hybrid_epsilon(b.rdp, b.selection_epsilon, b.selection_delta,
                                                     b.delta_limit) END AS composed_epsilon) c,
     LATERAL (SELECT CASE WHEN b.delta_limit > 0
                               AND (b.pld IS NOT NULL OR (b.epsilon_spent = 0 AND b.delta_spent = 0))
                          THEN dp_agg.pld_state_epsilon(coalesce(b.pld, '[]'::jsonb), b.delta_limit) END AS pld_epsilon) p
WHERE b.role OPERATOR(pg_catalog.=)
      (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER)::pg_catalog.regrole;
COMMENT ON VIEW dp_agg.my_budget IS 'the privacy budget of the current role, with what remains (for rdp and pld accounting: of the limit, by the best of the certificates), the composed epsilon at delta_limit (the Renyi DP curve beside the sums of the private selections; for pld accounting the better of that and pld), the pld epsilon and the sums of the private selections';
GRANT SELECT ON dp_agg.my_budget TO PUBLIC;

CREATE OR REPLACE FUNCTION dp_agg.spent_epsilon(role regrole, delta float8)
RETURNS float8
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    curve float8[];
    releases jsonb;
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
        SELECT b.rdp, b.pld, b.epsilon_spent + b.delta_spent, b.accounting,
               b.selection_epsilon, b.selection_delta
        INTO curve, releases, spent, acct, sel_epsilon, sel_delta FROM dp_agg.my_budget b;
    ELSE
        SELECT b.rdp, b.pld, b.epsilon_spent + b.delta_spent, b.accounting,
               b.selection_epsilon, b.selection_delta
        INTO curve, releases, spent, acct, sel_epsilon, sel_delta
        FROM dp_agg.budget b WHERE b.role = spent_epsilon.role;
    END IF;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'PB002',
            MESSAGE = format('role %s has no privacy budget', spent_epsilon.role);
    END IF;
    RETURN LEAST(dp_agg.hybrid_epsilon(curve, sel_epsilon, sel_delta, spent_epsilon.delta),
                 CASE WHEN acct = 'pld' AND (releases IS NOT NULL OR spent = 0)
                      THEN dp_agg.pld_state_epsilon(coalesce(releases, '[]'::jsonb), spent_epsilon.delta) END);
END
$$;
COMMENT ON FUNCTION dp_agg.spent_epsilon(regrole, float8) IS
'the epsilon, at the given delta, of everything a role has released since its last reset: the Renyi DP composition of its releases beside the basic composition of its private selections (for pld accounting: the better of that and privacy loss distribution composition)';

--------------------------------------------------------------------------
-- Scale out on Citus
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

-- A fragment's state is never NULL: a group (or a statement without GROUP
-- BY) in which no row reached the aggregate, through WHERE or FILTER, gets
-- an empty sealed state like any other, so that a state's presence says
-- nothing about the rows.
CREATE FUNCTION dp_agg.dist_finalfn(dp_agg.dist_state, text) RETURNS dp_agg.dist_state
AS 'MODULE_PATHNAME', 'dp_dist_final' LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.dist_finalfn(dp_agg.dist_state, text) IS
'final function of dp_agg.sum(text): the state, or an empty one if no row was counted';

CREATE FUNCTION dp_agg.dist_finalfn(dp_agg.dist_state, text, anyelement) RETURNS dp_agg.dist_state
AS 'MODULE_PATHNAME', 'dp_dist_final' LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.dist_finalfn(dp_agg.dist_state, text, anyelement) IS
'final function of dp_agg.sum(text, value): the state, or an empty one if no row was accumulated';

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
    STYPE = dp_agg.dist_state,
    FINALFUNC = dp_agg.dist_finalfn,
    FINALFUNC_EXTRA
);
COMMENT ON AGGREGATE dp_agg.sum(text) IS
'partial state of dp_count(*) in a signed fragment of a DP statement on a Citus table';

CREATE AGGREGATE dp_agg.sum(text, boolean) (
    SFUNC = dp_agg.dist_transfn,
    STYPE = dp_agg.dist_state,
    FINALFUNC = dp_agg.dist_finalfn,
    FINALFUNC_EXTRA
);
COMMENT ON AGGREGATE dp_agg.sum(text, boolean) IS
'partial state of dp_count(value): whether the value is not NULL in a signed fragment of a DP statement on a Citus table';

CREATE AGGREGATE dp_agg.sum(text, smallint) (
    SFUNC = dp_agg.dist_transfn,
    STYPE = dp_agg.dist_state,
    FINALFUNC = dp_agg.dist_finalfn,
    FINALFUNC_EXTRA
);
COMMENT ON AGGREGATE dp_agg.sum(text, smallint) IS
'partial state of dp_sum or dp_avg of smallint in a signed fragment of a DP statement on a Citus table';

CREATE AGGREGATE dp_agg.sum(text, integer) (
    SFUNC = dp_agg.dist_transfn,
    STYPE = dp_agg.dist_state,
    FINALFUNC = dp_agg.dist_finalfn,
    FINALFUNC_EXTRA
);
COMMENT ON AGGREGATE dp_agg.sum(text, integer) IS
'partial state of dp_sum or dp_avg of integer in a signed fragment of a DP statement on a Citus table';

CREATE AGGREGATE dp_agg.sum(text, bigint) (
    SFUNC = dp_agg.dist_transfn,
    STYPE = dp_agg.dist_state,
    FINALFUNC = dp_agg.dist_finalfn,
    FINALFUNC_EXTRA
);
COMMENT ON AGGREGATE dp_agg.sum(text, bigint) IS
'partial state of dp_sum or dp_avg of bigint in a signed fragment of a DP statement on a Citus table';

CREATE AGGREGATE dp_agg.sum(text, real) (
    SFUNC = dp_agg.dist_transfn,
    STYPE = dp_agg.dist_state,
    FINALFUNC = dp_agg.dist_finalfn,
    FINALFUNC_EXTRA
);
COMMENT ON AGGREGATE dp_agg.sum(text, real) IS
'partial state of dp_sum or dp_avg of real in a signed fragment of a DP statement on a Citus table';

CREATE AGGREGATE dp_agg.sum(text, double precision) (
    SFUNC = dp_agg.dist_transfn,
    STYPE = dp_agg.dist_state,
    FINALFUNC = dp_agg.dist_finalfn,
    FINALFUNC_EXTRA
);
COMMENT ON AGGREGATE dp_agg.sum(text, double precision) IS
'partial state of dp_sum or dp_avg of double precision in a signed fragment of a DP statement on a Citus table';

CREATE AGGREGATE dp_agg.sum(text, numeric) (
    SFUNC = dp_agg.dist_transfn,
    STYPE = dp_agg.dist_state,
    FINALFUNC = dp_agg.dist_finalfn,
    FINALFUNC_EXTRA
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
    dp_agg.dist_combinefn(dp_agg.dist_state, dp_agg.dist_state),
    dp_agg.dist_finalfn(dp_agg.dist_state, text), dp_agg.dist_finalfn(dp_agg.dist_state, text, anyelement)
    FROM PUBLIC;

--------------------------------------------------------------------------
-- Privacy units
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

-- Privacy units, the fused path of k = 1 (src/unit_pick.c).
-- When each unit contributes to one group, levels 1 and 2 are one
-- aggregation by unit: each key is dp_agg.unit_pick(key, p) and each
-- contribution dp_agg.unit_pick_bound_f(args of f, p), where
-- p = dp_agg.unit_priority(unit, keys...) is SipHash-2-4 under a key drawn
-- for each execution: the unit's group is the one of smallest p.  The
-- aggregates are made by the rewrite only (the guard refuses them in
-- statements analysts write); their support functions are not executable
-- by PUBLIC.  dp_agg.unit_priority stays executable: the rewritten
-- statement calls it as the analyst, and what it computes depends on no
-- secret (src/pick_key.c).

CREATE FUNCTION dp_agg.unit_priority(VARIADIC "any")
RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_unit_priority'
LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.unit_priority(VARIADIC "any") IS
'internal (privacy units): the priority of a (unit, group), SipHash-2-4 under the key of the execution; only in statements rewritten by dp_agg';

CREATE FUNCTION dp_agg.unit_pick_key_transfn(internal, anyelement, bigint)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_unit_pick_key_trans'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.unit_pick_key_transfn(internal, anyelement, bigint) IS
'internal (privacy units): keeps the value of smallest priority';
CREATE FUNCTION dp_agg.unit_pick_key_combinefn(internal, internal)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_unit_pick_key_combine'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.unit_pick_key_combinefn(internal, internal) IS
'internal (privacy units): the state of smaller priority';
CREATE FUNCTION dp_agg.unit_pick_key_serialfn(internal)
RETURNS bytea AS 'MODULE_PATHNAME', 'dp_unit_pick_key_serialize'
LANGUAGE C STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.unit_pick_key_serialfn(internal) IS
'internal (privacy units): serializes a dp_agg.unit_pick state';
CREATE FUNCTION dp_agg.unit_pick_key_deserialfn(bytea, internal)
RETURNS internal AS 'MODULE_PATHNAME', 'dp_unit_pick_key_deserialize'
LANGUAGE C STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.unit_pick_key_deserialfn(bytea, internal) IS
'internal (privacy units): deserializes and validates a dp_agg.unit_pick state';
CREATE FUNCTION dp_agg.unit_pick_key_finalfn(internal, anyelement, bigint)
RETURNS anyelement AS 'MODULE_PATHNAME', 'dp_unit_pick_key_final'
LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.unit_pick_key_finalfn(internal, anyelement, bigint) IS
'internal (privacy units): the value of smallest priority';
REVOKE ALL ON FUNCTION dp_agg.unit_pick_key_transfn(internal, anyelement, bigint),
    dp_agg.unit_pick_key_combinefn(internal, internal), dp_agg.unit_pick_key_serialfn(internal),
    dp_agg.unit_pick_key_deserialfn(bytea, internal),
    dp_agg.unit_pick_key_finalfn(internal, anyelement, bigint) FROM PUBLIC;

CREATE AGGREGATE dp_agg.unit_pick(anyelement, bigint) (
    SFUNC = dp_agg.unit_pick_key_transfn, STYPE = internal, SSPACE = 48,
    FINALFUNC = dp_agg.unit_pick_key_finalfn, FINALFUNC_EXTRA,
    COMBINEFUNC = dp_agg.unit_pick_key_combinefn,
    SERIALFUNC = dp_agg.unit_pick_key_serialfn, DESERIALFUNC = dp_agg.unit_pick_key_deserialfn,
    PARALLEL = SAFE);
COMMENT ON AGGREGATE dp_agg.unit_pick(anyelement, bigint) IS
'internal (privacy units): the group key of a unit''s rows of smallest priority; only in statements rewritten by dp_agg';

-- For each DP aggregate f(args): dp_agg.unit_pick_bound_f(args, bigint),
-- f's transition function on the unit's rows of smallest priority (the
-- last argument) and the bounding final function of dp_agg.unit_bound_f.
DO $$
DECLARE
    a record;
    params text;
BEGIN
    FOR a IN
        SELECT p.proname, p.pronargs,
               pg_catalog.oidvectortypes(p.proargtypes) AS args
        FROM pg_catalog.pg_proc p
        JOIN pg_catalog.pg_aggregate g ON g.aggfnoid = p.oid
        JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_proc'::regclass
             AND d.objid = p.oid AND d.deptype = 'e'
             AND d.refobjid = (SELECT e.oid FROM pg_catalog.pg_extension e WHERE e.extname = 'dp_agg')
        WHERE p.proname IN ('dp_count', 'dp_sum', 'dp_avg')
        ORDER BY p.proname, p.pronargs, args
    LOOP
        params := CASE WHEN a.pronargs = 0 THEN 'bigint' ELSE a.args || ', bigint' END;
        IF pg_catalog.to_regprocedure(pg_catalog.format('dp_agg.unit_pick_transfn(internal, %s)', params)) IS NULL THEN
            EXECUTE pg_catalog.format(
                'CREATE FUNCTION dp_agg.unit_pick_transfn(internal, %s) RETURNS internal '
                'AS %L, %L LANGUAGE C PARALLEL SAFE', params, 'MODULE_PATHNAME', 'dp_unit_pick_trans');
            EXECUTE pg_catalog.format(
                'COMMENT ON FUNCTION dp_agg.unit_pick_transfn(internal, %s) IS %L', params,
                'internal (privacy units): accumulates the rows of a unit''s smallest priority');
            EXECUTE pg_catalog.format(
                'REVOKE ALL ON FUNCTION dp_agg.unit_pick_transfn(internal, %s) FROM PUBLIC', params);
        END IF;
        EXECUTE pg_catalog.format(
            'CREATE AGGREGATE dp_agg.%I(%s) (SFUNC = dp_agg.unit_pick_transfn, STYPE = internal, '
            'SSPACE = 112, FINALFUNC = dp_agg.unit_bound_%s_finalfn, COMBINEFUNC = dp_agg.combinefn, '
            'SERIALFUNC = dp_agg.serialfn, DESERIALFUNC = dp_agg.deserialfn, PARALLEL = SAFE)',
            'unit_pick_bound_' || a.proname, params, pg_catalog.substr(a.proname, 4));
        EXECUTE pg_catalog.format(
            'COMMENT ON AGGREGATE dp_agg.%I(%s) IS %L',
            'unit_pick_bound_' || a.proname, params,
            'internal (privacy units): one unit''s bounded contribution to ' || a.proname ||
            ' in its group of smallest priority; only in statements rewritten by dp_agg');
    END LOOP;
END
$$;
