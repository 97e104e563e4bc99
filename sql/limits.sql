--
-- limits: inputs at the edges of what the calculators and the aggregates
-- accept end within milliseconds, with a result or a clear error, and long
-- computations can be cancelled.  Every statement runs under a
-- statement_timeout, so that a loop that cannot end fails the test instead
-- of hanging it.  All outputs are deterministic.
--
SET statement_timeout = '5s';
CREATE TABLE lim_t (i int);
INSERT INTO lim_t SELECT k FROM generate_series(1, 10) k;
CREATE OR REPLACE FUNCTION try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN EXECUTE q; RETURN 'no error';
EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE || ': ' || SQLERRM; END $$;

-- The central interval of discrete Laplace noise of a huge scale b: its
-- bisection ends where doubles are no longer integers.  2 P[X >= K + 1]
-- = 2 p^(K+1) / (1 + p) <= 0.05, p = e^(-1/b), gives K = b ln 20 to a
-- relative 1/b.
SELECT b, abs(dp_agg.noise_interval('laplace', b, 0.95) / (b * ln(20)) - 1) < 1e-9 AS b_ln_20
FROM unnest(ARRAY[1e16, 1e17, 2^62]) b;
SELECT abs(dp_agg.noise_interval('gaussian', 2^48, 0.95) / (2^48 * 1.959963984540054) - 1) < 1e-9
       AS normal_quantile;
-- beyond the samplers' ranges: an error naming the range
SELECT q, try(q) FROM (VALUES
  ('SELECT dp_agg.noise_interval(''laplace'', 1e19, 0.95)'),
  ('SELECT dp_agg.noise_interval(''gaussian'', 1e15, 0.95)')) v(q);

-- a DP aggregate at an epsilon of 1e-18: the interval of its noise (scale
-- 1e18) is computed when it is priced; preview prices without charging
SELECT noise_scale, abs(ci95 / (1e18 * ln(20)) - 1) < 1e-9 AS b_ln_20
FROM dp_agg.preview('SELECT dp_count(i, 1e-18, 0) FROM lim_t');

-- Renyi orders: exact up to 100000 and at infinity, refused beyond; noise
-- multipliers below 2^-80 (where 1 / (2 sigma^2) overflowed) are refused
SELECT q, try(q) FROM (VALUES
  ('SELECT dp_agg.rdp_sampled_gaussian(0.5, 1, ARRAY[1e6])'),
  ('SELECT dp_agg.rdp_sampled_gaussian(0.5, 1, ARRAY[2, 100000.5])'),
  ('SELECT dp_agg.rdp_sampled_gaussian(0.5, 1e-300, ARRAY[2])'),
  ('SELECT dp_agg.sampled_gaussian_epsilon(0.5, 1e-30, 1, 1e-5)')) v(q);
SELECT (dp_agg.rdp_sampled_gaussian(0.5, 1, ARRAY[2, 'Infinity'::float8]))[2] AS at_infinity;

-- a long computation is cancelled by statement_timeout: a thousand orders
-- near the largest (each sums a series of 2 10^5 terms) would reach the
-- work limit below only after about 220 ms on an idle 2-core machine, ten
-- times the timeout
SET statement_timeout = '20ms';
SELECT dp_agg.rdp_sampled_gaussian(0.5, 1, array_fill(99999.5::float8, ARRAY[1000]));
SET statement_timeout = '5s';

-- the work of one calculator call is bounded (2 10^6 steps): a hundred
-- thousand orders near 1, each an integral of about 1,200 points, fail at
-- once with an error instead of running for seconds
SELECT try('SELECT dp_agg.rdp_sampled_gaussian(0.5, 1, array_fill(1.0000001::float8, ARRAY[100000]))');
-- the Renyi calculators take rates of 0 or from 2^-32 (BERNOULLI's
-- smallest) to 1: below, 1/q overflows the series
SELECT q, try(q) FROM (VALUES
  ('SELECT dp_agg.sampled_gaussian_epsilon(5e-324, 1e-6, 1, 0.5)'),
  ('SELECT dp_agg.rdp_sampled_gaussian(1e-10, 1, ARRAY[2])'),
  ('SELECT dp_agg.sampled_gaussian_sigma(1, 1e-6, 1e-10, 1)'),
  ('SELECT dp_agg.sampled_gaussian_epsilon(0, 1, 1, 1e-5)')) v(q);
-- the Renyi search for sigma skips the orders whose conversion alone
-- exceeds epsilon: at epsilon 1e-18 every order of the grid, so it ends at
-- once and the amplified analytic Gaussian (Steinke 2022, Theorem 29) is
-- the answer
SELECT abs(dp_agg.sampled_gaussian_sigma(1e-18, 1e-6, 0.5, 1)
           / dp_agg.gaussian_sigma(dp_agg.base_epsilon(1e-18, 0.5), 2e-6, 1) - 1) < 1e-12
       AS theorem_29;
-- dp_avg with equal bounds and an epsilon so small its noise is infinite:
-- a clear error, not an internal one (the grid of a zero span is set by
-- the size of the bounds alone)
SELECT try('SELECT * FROM dp_agg.preview(''SELECT dp_avg(i::real, 1e-45::real, 1e-45::real, 5e-324) FROM lim_t'')');
SELECT release, mechanism, sensitivity
FROM dp_agg.preview('SELECT dp_avg(i::real, 1e-45::real, 1e-45::real, 1) FROM lim_t');
-- noise_sample draws at most a million values a call
SELECT try('SELECT count(*) FROM dp_agg.noise_sample(''laplace'', 1, 2147483647)');

-- noise_sample at scales below 2^-10 uses the aggregates' conversion:
-- P[X != 0] = 2 p / (1 + p), p = e^(-1/b), is below 1e-400 for b <= 2^-10,
-- so every draw is 0
SELECT b, bool_and(noise = 0) AS all_zero, count(*)
FROM unnest(ARRAY[2^(-11), 2^(-30), 2^(-40), 3 * 2^(-39)]) b, dp_agg.noise_sample('laplace', b, 1000)
GROUP BY b ORDER BY b;

RESET statement_timeout;
