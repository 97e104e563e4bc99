/* dp_agg: update from 0.3 to 0.4 (ALTER EXTENSION dp_agg UPDATE) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION dp_agg UPDATE TO '0.4'" to load this file. \quit

-- Each section below is one capability of 0.4; a new install runs 0.1 and
-- every update script, so this script is also part of every install.

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
