--
-- noise: the noise the samplers draw and the releases carry, against the
-- exact laws of the scales the ledger records.
--
-- Each assertion compares the fraction of N independent draws falling in a
-- set with its exact probability p, and accepts a difference below
-- t = sqrt(ln(2 / 1e-6) / (2 N)) (Hoeffding's inequality: a correct
-- sampler fails each assertion with probability at most 1e-6); t is 0.0191
-- for N = 20000 and 0.0427 for N = 4000.  The probabilities are computed
-- here from the definitions, independently of the samplers:
--   - discrete Laplace of scale b: P[X = x] = (1 - r)/(1 + r) r^|x|,
--     r = e^(-1/b), so P[X = 0] = (1 - r)/(1 + r), P[X < 0] = r/(1 + r);
--   - discrete Gaussian on the integers: P[X = x] proportional to
--     exp(-x^2 / (2 sigma^2)), normalised over |x| <= 100 (the rest is
--     below e^-300 here);
--   - a Gaussian count: the discrete Gaussian on a lattice of 2^-40 or
--     finer, rounded to an integer, is within a relative exp(-2 pi^2
--     sigma_units^2) of the continuous one (Poisson summation), so
--     P[|noise| <= m] = P[|Y| < m + 1/2], Y ~ N(0, sigma^2), which is
--     gaussian_delta(sigma, 0, 2m + 1) (the analytic Gaussian's delta at
--     epsilon 0 is P[|Y| <= sensitivity / 2]).
-- The samplers' signs are checked directly (a sampler whose sign bit is
-- fixed releases every value biased upwards), and the releases of the
-- aggregates carry the noise the ledger records (a sampler given the wrong
-- parameter would release values almost exact).
--
SELECT dp_agg.set_budget(current_user::regrole, 1e15, 0.5, 'basic');
CREATE FUNCTION hoeffding(n int) RETURNS float8 LANGUAGE sql IMMUTABLE
AS $$ SELECT sqrt(ln(2 / 1e-6) / (2 * n)) $$;

-- 1. the samplers (dp_agg.noise_sample), 20000 draws each
CREATE TEMP TABLE nz_laplace AS SELECT noise FROM dp_agg.noise_sample('laplace', 4, 20000);
SELECT abs(avg((noise < 0)::int) - r / (1 + r)) < hoeffding(20000) AS laplace_negative,
       abs(avg((noise > 0)::int) - r / (1 + r)) < hoeffding(20000) AS laplace_positive,
       abs(avg((noise = 0)::int) - (1 - r) / (1 + r)) < hoeffding(20000) AS laplace_zero
FROM nz_laplace, (SELECT exp(-1 / 4.0::float8) AS r) c GROUP BY r;
CREATE TEMP TABLE nz_gaussian AS SELECT noise FROM dp_agg.noise_sample('gaussian', 4, 20000);
SELECT abs(avg((noise < 0)::int) - (1 - p0) / 2) < hoeffding(20000) AS gaussian_negative,
       abs(avg((noise > 0)::int) - (1 - p0) / 2) < hoeffding(20000) AS gaussian_positive,
       abs(avg((noise = 0)::int) - p0) < hoeffding(20000) AS gaussian_zero,
       abs(avg((abs(noise) <= 4)::int) - p4) < hoeffding(20000) AS gaussian_within_sigma
FROM nz_gaussian,
     (SELECT 1 / sum(w) AS p0, sum(w) FILTER (WHERE abs(x) <= 4) / sum(w) AS p4
      FROM (SELECT x, exp(-x * x / 32.0::float8) AS w FROM generate_series(-100, 100) x) s) c
GROUP BY p0, p4;

-- 2. the releases: 4000 groups of 10 rows, public keys (no selection), so
-- one statement makes 4000 independent releases, noise = release - 10
CREATE TABLE nz_t AS SELECT g, k FROM generate_series(1, 4000) g, generate_series(1, 10) k;
SET dp_agg.group_keys = 'public';
CREATE VIEW nz_last AS
SELECT l.detail -> 0 AS call FROM dp_agg.ledger l WHERE l.id = (SELECT max(id) FROM dp_agg.ledger);
-- Laplace at epsilon 1: the scale the ledger records is the calculator's,
-- and the noise has its law
CREATE TEMP TABLE nz_count_laplace AS SELECT dp_count(k, 1) - 10 AS noise FROM nz_t GROUP BY g;
SELECT (call ->> 'noise_scale')::float8 = dp_agg.laplace_scale(1, 1) AS ledger_scale
FROM nz_last;
SELECT count(*) AS releases,
       abs(avg((noise < 0)::int) - r / (1 + r)) < hoeffding(4000) AS negative,
       abs(avg((noise > 0)::int) - r / (1 + r)) < hoeffding(4000) AS positive,
       abs(avg((noise = 0)::int) - (1 - r) / (1 + r)) < hoeffding(4000) AS zero
FROM nz_count_laplace, (SELECT exp(-1::float8) AS r) c GROUP BY r;
-- Gaussian at (1, 1e-6): sigma as the ledger records it, within 0.01% of
-- the analytic Gaussian's (README, "Guarantees"), and the noise has it
CREATE TEMP TABLE nz_count_gaussian AS SELECT dp_count(k, 1, 1e-6) - 10 AS noise FROM nz_t GROUP BY g;
CREATE TEMP TABLE nz_sigma AS SELECT (call ->> 'noise_scale')::float8 AS sigma FROM nz_last;
SELECT abs(sigma / dp_agg.gaussian_sigma(1, 1e-6, 1) - 1) < 1e-4 AS ledger_sigma FROM nz_sigma;
SELECT count(*) AS releases,
       abs(avg((noise = 0)::int) - dp_agg.gaussian_delta(sigma, 0, 1)) < hoeffding(4000) AS zero,
       abs(avg((abs(noise) <= floor(sigma))::int)
           - dp_agg.gaussian_delta(sigma, 0, 2 * floor(sigma) + 1)) < hoeffding(4000) AS within_sigma,
       abs(avg((abs(noise) <= 2 * floor(sigma))::int)
           - dp_agg.gaussian_delta(sigma, 0, 4 * floor(sigma) + 1)) < hoeffding(4000) AS within_two_sigma,
       abs(avg((noise < 0)::int) - (1 - dp_agg.gaussian_delta(sigma, 0, 1)) / 2) < hoeffding(4000) AS negative
FROM nz_count_gaussian, nz_sigma GROUP BY sigma;
RESET dp_agg.group_keys;

-- 3. the sampler's parameter is never below the scale the epsilon needs:
-- the discrete Laplace's t / s is the scale rounded up (src/noise/noise_param.c),
-- equal to it where its 53 binary digits fit the sampler's 64-bit
-- integers, above it where they do not (t then keeps the first 63 + log2(b)
-- of them: at least 24 for the smallest scale here, 1/3e11 = 2^-38.3)
CREATE TEMP TABLE nz_scales (epsilon float8, noise_scale float8);
CREATE FUNCTION nz_scale(e float8) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM dp_count(k, e) FROM nz_t;
    INSERT INTO nz_scales SELECT e, (call ->> 'noise_scale')::float8 FROM nz_last;
END $$;
SELECT nz_scale(e) FROM unnest(ARRAY[1e-3, 0.3, 1, 1e4, 1e9, 3e11]) e;
SELECT epsilon, noise_scale >= dp_agg.laplace_scale(epsilon, 1) AS not_below,
       noise_scale <= dp_agg.laplace_scale(epsilon, 1) * (1 + 2 ^ -23) AS rounded_up_only,
       noise_scale = dp_agg.laplace_scale(epsilon, 1) AS exact
FROM nz_scales ORDER BY epsilon;

DROP FUNCTION nz_scale(float8);
DROP VIEW nz_last;
DROP TABLE nz_t;
DROP FUNCTION hoeffding(int);
