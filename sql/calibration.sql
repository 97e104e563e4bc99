--
-- calibration: the calculator functions against independently derived
-- values, and the properties that make each noise scale correct.
--
-- Reference values: test/reference/gaussian.py computes them with Python's
-- decimal module at 120 digits (erf by its Maclaurin series, bisection),
-- sharing no code with dp_agg.  Run it to reproduce the tables below.
--

-- Laplace: sensitivity / epsilon, rounded up (never below the exact ratio)
SELECT dp_agg.laplace_scale(1, 1) AS s1, dp_agg.laplace_scale(0.5, 3) AS s2,
       dp_agg.laplace_scale(0.1, 1) AS s3, dp_agg.laplace_scale(2, 0) AS s0;
-- it is the quotient rounded to a neighbouring double, never the one below
SELECT bool_and(dp_agg.laplace_scale(e, s) >= s / e AND
                dp_agg.laplace_scale(e, s) - s / e <= s / e * 2.0^(-51)) AS rounded_up
FROM (VALUES (0.1, 1), (0.3, 7), (0.7, 0.1), (1e-5, 3), (3, 1e10), (0.9, 100)) v(e0, s0),
     LATERAL (SELECT e0::float8 AS e, s0::float8 AS s) c;

-- analytic Gaussian (Balle & Wang 2018): sigma for (epsilon, delta),
-- sensitivity 1, within relative 1e-9 of the reference
SELECT e, d, abs(dp_agg.gaussian_sigma(e, d, 1) / ref - 1) < 1e-9 AS matches_reference
FROM (VALUES (1, 1e-5, 3.73063163481594183e+0),
             (0.5, 1e-6, 8.05761848072504426e+0),
             (0.1, 1e-6, 3.63046904261957849e+1),
             (2, 1e-9, 2.84454707349574498e+0),
             (5, 1e-3, 6.89842327000357569e-1),
             (0.01, 1e-5, 2.43785437675678029e+2)) v(e, d, ref);
-- exact delta(epsilon), accurate also when tiny (erfc, not 1 - Phi)
SELECT s, e, abs(dp_agg.gaussian_delta(s, e, 1) / ref - 1) < 1e-9 AS matches_reference
FROM (VALUES (1, 1, 1.26936737506643946e-1),
             (3, 0.5, 1.24182493994260474e-2),
             (10, 0.1, 8.75176814580959398e-3),
             (0.7, 3, 3.38222475466723761e-2),
             (5, 2, 4.04370356676489713e-25)) v(s, e, ref);
-- sigma scales with the sensitivity; the sigma returned is the smallest
-- one to relative 1e-9: delta(sigma) <= delta < delta(sigma (1 - 1e-9))
SELECT dp_agg.gaussian_sigma(1, 1e-5, 7) / dp_agg.gaussian_sigma(1, 1e-5, 1) AS ratio_7;
SELECT e, d,
       dp_agg.gaussian_delta(dp_agg.gaussian_sigma(e, d, 1), e, 1) <= d AS private,
       dp_agg.gaussian_delta(dp_agg.gaussian_sigma(e, d, 1) * (1 - 1e-9), e, 1) > d AS smallest
FROM (VALUES (0.05, 1e-7), (0.3, 1e-6), (1, 1e-10), (4, 1e-5), (10, 1e-3), (1, 0.2)) v(e, d);
-- tighter than the classical sqrt(2 ln(1.25/delta)) / epsilon (valid for
-- epsilon < 1; reference 003)
SELECT e, d, dp_agg.gaussian_sigma(e, d, 1) < sqrt(2 * ln(1.25 / d)) / e AS tighter_than_classical
FROM (VALUES (0.1, 1e-5), (0.5, 1e-6), (0.9, 1e-9)) v(e, d);

-- The discrete Gaussian on the integers (Canonne, Kamath & Steinke 2020,
-- Theorem 7), for an integer sensitivity D: delta at the sigma chosen is at
-- most the target.  For small sigma its exact delta can need up to about
-- 2% more sigma than the continuous Gaussian (e.g. epsilon 2, delta 1e-3,
-- D = 1, or epsilon 20), so the aggregates put Gaussian noise on a fine lattice: D = 2^40
-- units per unit of sensitivity or more, where it needs no more than the
-- continuous sigma to within 0.01%.
WITH grid AS (
  SELECT e, d, s,
         dp_agg.discrete_gaussian_sigma(e, d, s) AS ds,
         dp_agg.gaussian_sigma(e, d, s) AS cs
  FROM unnest(ARRAY[0.05, 0.2, 0.5, 1, 2, 5, 20]) e,
       unnest(ARRAY[1e-3, 1e-6, 1e-9, 1e-12]) d,
       unnest(ARRAY[1, 2, 3, 10, 1000, 2^40, 2^52]) s
)
SELECT count(*) AS cases,
       bool_and(dp_agg.discrete_gaussian_delta(ds, e, s) <= d) AS all_private,
       max(ds / cs) FILTER (WHERE s < 2^40) < 1.03 AS integers_within_3_percent,
       max(ds / cs) FILTER (WHERE s >= 2^40) < 1.0001 AS lattice_within_0_01_percent
FROM grid;
-- the exact delta on the integers, against the continuous one, for the
-- example above: the discrete mechanism needs more sigma there
SELECT dp_agg.discrete_gaussian_delta(1.4452391609297832, 2, 1) > 1e-3 AS integers_need_more,
       abs(dp_agg.gaussian_delta(1.4452391609297832, 2, 1) / 1e-3 - 1) < 1e-9 AS continuous_exact;
-- for small sigma the discrete delta is computed exactly; it is close to
-- the continuous one (within 5% here)
SELECT s, e, abs(dp_agg.discrete_gaussian_delta(s, e, 1) / dp_agg.gaussian_delta(s, e, 1) - 1) < 0.05 AS close
FROM (VALUES (3, 0.5), (5, 0.3), (20, 0.05)) v(s, e);

-- bad arguments
SELECT dp_agg.laplace_scale(0, 1);
SELECT dp_agg.laplace_scale(1, -1);
SELECT dp_agg.gaussian_sigma(1, 0, 1);
SELECT dp_agg.gaussian_sigma(1, 1, 1);
SELECT dp_agg.gaussian_sigma('NaN', 1e-5, 1);
SELECT dp_agg.gaussian_delta(0, 1, 1);
SELECT dp_agg.discrete_gaussian_sigma(1, 1e-5, 1.5);
SELECT dp_agg.laplace_scale(NULL, 1) IS NULL AS strict;
