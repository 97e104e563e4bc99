/* dp_agg: update from 0.2 to 0.3 (ALTER EXTENSION dp_agg UPDATE) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION dp_agg UPDATE TO '0.3'" to load this file. \quit

-- Version 0.3 is installed as 0.1 plus 0.1--0.2 plus this script.


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
