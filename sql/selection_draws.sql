--
-- selection_draws: the draws of the private selection of groups release a
-- group of n units with the probability its calculator states (README,
-- "Private group keys").  dp_agg.selection_sample draws the decision as
-- the aggregates do (src/noise/selection_mechanism.c, src/noise/selection_gaussian.c);
-- dp_agg.selection_probability computes its probability separately (the
-- recursion of the optimal mechanism; for Gaussian thresholding the exact
-- tail of the discrete Gaussian, P[n + Z >= tau]).  At parameters where
-- the probabilities move far between neighbouring n (a small sigma), a
-- draw that uses another threshold than the calculator shows at once.
--
-- Each of the D = 20000 draws of a given n is an independent Bernoulli:
-- the fraction released differs from the probability by at most
-- t = sqrt(ln(2 / 1e-6) / (2 D)) = 0.0190 except with probability 1e-6
-- (Hoeffding's inequality), for each assertion.
--
CREATE FUNCTION sd_hoeffding(n int) RETURNS float8 LANGUAGE sql IMMUTABLE
AS $$ SELECT sqrt(ln(2 / 1e-6) / (2 * n)) $$;

-- Gaussian thresholding with sigma below 1: at (20, 1e-3) for units in up
-- to 10 groups, tau = 5 and a group of tau - 1 units is released with
-- probability P[Z >= 1], one of tau units with P[Z >= 0]
SELECT mechanism, tau, sigma < 1 AS small_sigma FROM dp_agg.selection_mechanism(20, 1e-3, 10);
SELECT n, round(p::numeric, 4) AS probability,
       abs(dp_agg.selection_sample(20, 1e-3, n, 20000, 10) / 20000.0 - p) < sd_hoeffding(20000)
           AS draws_match
FROM generate_series(1, 7) n, LATERAL (SELECT dp_agg.selection_probability(20, 1e-3, n, 10) AS p) c
ORDER BY n;
-- the optimal mechanism, one group per unit and split over k = 3, where
-- its probability rises over a few units
SELECT n, round(p1::numeric, 4) AS probability_k1,
       abs(dp_agg.selection_sample(2, 0.05, n, 20000) / 20000.0 - p1) < sd_hoeffding(20000) AS draws_match_k1,
       round(p3::numeric, 4) AS probability_k3,
       abs(dp_agg.selection_sample(6, 0.15, n, 20000, 3) / 20000.0 - p3) < sd_hoeffding(20000) AS draws_match_k3
FROM generate_series(1, 6) n,
     LATERAL (SELECT dp_agg.selection_probability(2, 0.05, n) AS p1,
                     dp_agg.selection_probability(6, 0.15, n, 3) AS p3) c
ORDER BY n;

DROP FUNCTION sd_hoeffding(int);
