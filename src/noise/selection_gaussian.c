/*-------------------------------------------------------------------------
 *
 * selection_gaussian.c
 *	  Gaussian thresholding: the private partition selection used when a
 *	  unit can be in k > 1 groups and it releases groups sooner than the
 *	  optimal mechanism split k ways (selection_mechanism.c chooses).
 *
 * The mechanism (Wilson, Zhang, Lam, Desfontaines, Simmons-Marengo &
 * Gipson 2020, "Differentially Private SQL with Bounded User
 * Contribution", section 3 (thresholding of noisy unit counts); Google's
 * differential-privacy library and PipelineDP, GaussianPartitionSelection;
 * Desfontaines, Voss, Gipson & Mandayam 2022, section 4.1, on units in
 * several partitions): each group's number of units n gets independent
 * discrete Gaussian noise Z of variance parameter sigma^2 (the exact
 * sampler of noise.c, Canonne, Kamath & Steinke 2020, Algorithm 3), and the
 * group is released when n + Z >= tau.
 *
 * Privacy.  Neighbours differ by one unit, which is in at most k groups
 * and adds one to the count of each.  Split the groups it touches:
 *  (a) groups present in both neighbours: their count vector changes by at
 *	  most 1 in at most k coordinates, L2 distance at most sqrt(k).  Each
 *	  coordinate's discrete Gaussian has Renyi divergence at most
 *	  alpha d^2 / (2 sigma^2) for an integer shift d (Canonne, Kamath &
 *	  Steinke 2020, Theorem 4: the concentrated DP of the continuous
 *	  Gaussian), and the Renyi divergences of independent coordinates add
 *	  (Mironov 2017, "Renyi Differential Privacy", Proposition 1), so the
 *	  vector has Renyi DP alpha rho at every order, rho = k / (2 sigma^2).
 *	  It is (epsilon, delta_1)-DP when, for some order alpha > 1,
 *	  alpha rho + ln(1 - 1/alpha) - (ln delta_1 + ln alpha) / (alpha - 1)
 *	  <= epsilon (Balle et al. 2020, Theorem 21: the conversion the Renyi
 *	  accounting uses, calibrate.c).  This is the multivariate analogue of the analytic
 *	  calibration of Balle & Wang 2018 (Theorem 8), whose exact
 *	  one-dimensional formula does not cover the discrete Gaussian on a
 *	  vector with a non-integer L2 shift; the conversion costs a few
 *	  percent of sigma.
 *  (b) groups of that unit alone (present in one neighbour only, with
 *	  n = 1): at most k, each released with probability P[Z >= tau - 1];
 *	  the probability p that any is released is at most k P[Z >= tau - 1]
 *	  <= delta_2.  The decisions of (a) and (b) are independent, so for any
 *	  set S of outcomes P[M(D) in S] - e^eps P[M(D') in S] <= (1 - p)
 *	  delta_1 + p <= delta_1 + delta_2 in both directions: (epsilon,
 *	  delta_1 + delta_2)-DP.
 *
 * The tail.  f(x) = exp(-x^2 / (2 sigma^2)) is convex for x >= sigma, so
 * f(x) <= the mean of f over [x - 1/2, x + 1/2] there (Hermite-Hadamard),
 * and for an integer m >= sigma + 1/2 the tail sum is at most
 * int_{m-1/2}^inf f = sigma sqrt(2 pi) Q((m - 1/2) / sigma); the
 * normaliser sum_x f(x) is at least sigma sqrt(2 pi) (Poisson summation:
 * all its Fourier terms are positive).  So P[Z >= m] <= Q((m - 1/2) /
 * sigma), evaluated in logs with a margin for rounding, with sigma the
 * square root of the variance rounded up (the bound grows with sigma).
 *
 * The split of delta (public, from (epsilon, delta, k) only): delta_2 =
 * delta j / 64 for the j = 1..63 that gives the smallest tau, which is the
 * smallest n released with probability at least 1/2 (Z is symmetric: P[Z
 * >= 0] > 1/2 > P[Z >= 1]); ties go to the smallest j.
 *
 * The release probability for the calculators is summed directly from the
 * discrete Gaussian's mass; the decision itself never uses it: it draws Z.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "calibrate.h"
#include "noise.h"
#include "selection_gaussian.h"

/* delta_2 = delta j / SPLIT_STEPS, j = 1 .. SPLIT_STEPS - 1 */
#define SPLIT_STEPS 64

/*
 * The orders alpha of the zCDP conversion: 1 + 2^(i / 8 - 7) for i = 0 ..
 * ALPHA_STEPS, from 1 + 1/128 to 1 + 2^20 (far beyond the best order of any
 * selection whose sigma stays below DP_SELECTION_GAUSSIAN_MAX_SIGMA).
 */
#define ALPHA_STEPS 216
#define ALPHA_STEP_LOG2 0.125
#define ALPHA_FIRST_LOG2 -7.0

/*
 * Relative margin by which the computed rho is lowered and absolute margin
 * added to the log of the tail bound: both absorb the few ulps of rounding
 * of their formulas (as DISCRETE_DELTA_MARGIN in calibrate.c).
 */
#define RHO_MARGIN 1e-9
#define LOG_TAIL_MARGIN 1e-9

/* the variance is a multiple of 2^-VARIANCE_BITS: an exact sampler parameter */
#define VARIANCE_BITS 20

/*
 * The tail sums stop where the terms fall below 2^-66 of the first:
 * (2 m j + j^2) / (2 sigma^2) > TAIL_LOG_CUTOFF.
 */
#define TAIL_LOG_CUTOFF 46.0

/*
 * The largest rho for which the discrete Gaussian of the counts is
 * (epsilon, delta_1)-DP by the zCDP conversion (file comment), over the
 * public orders; 0 when none works.
 */
static double
largest_rho(double epsilon, double delta_1)
{
	double		best = 0;

	for (int i = 0; i <= ALPHA_STEPS; i++)
	{
		double		a = 1 + exp2(ALPHA_FIRST_LOG2 + ALPHA_STEP_LOG2 * i);
		double		rho = (epsilon - log1p(-1 / a) + (log(delta_1) + log(a)) / (a - 1)) / a;

		if (rho > best)
			best = rho;
	}
	return best * (1 - RHO_MARGIN);
}

/* log of the bound on P[Z >= m] (file comment), m >= sigma + 1/2 */
static double
log_tail_bound(double sigma, int64 m)
{
	return dp_log_norm_sf(((double) m - 0.5) / sigma) + LOG_TAIL_MARGIN;
}

/*
 * The smallest tau with k P[Z >= tau - 1] <= delta_2 by the bound:
 * bisection on m = tau - 1 from sigma + 1/2 up.
 */
static int64
smallest_tau(double sigma, double delta_2, int k)
{
	double		target = log(delta_2) - log((double) k);
	int64		lo = (int64) ceil(sigma + 0.5);
	int64		hi = lo;

	while (log_tail_bound(sigma, hi) > target)
		hi = 2 * hi;
	while (lo < hi)
	{
		int64		mid = lo + (hi - lo) / 2;

		if (log_tail_bound(sigma, mid) <= target)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo + 1;
}

/*
 * Gaussian thresholding at (epsilon, delta_noise + delta_threshold) for
 * units in max_groups groups; false when no sigma within
 * DP_SELECTION_GAUSSIAN_MAX_SIGMA works for this split.
 */
static bool
plan_split(DpSelectionGaussian *g, double epsilon, double delta_noise,
		   double delta_threshold, int max_groups)
{
	double		rho = largest_rho(epsilon, delta_noise);
	double		v;

	if (!(rho > 0))
		return false;
	v = dp_div_up((double) max_groups, 2 * rho);
	v = ldexp(ceil(ldexp(v, VARIANCE_BITS)), -VARIANCE_BITS);
	if (!(v <= DP_SELECTION_GAUSSIAN_MAX_SIGMA * DP_SELECTION_GAUSSIAN_MAX_SIGMA))
		return false;
	v = Max(v, DP_MIN_GAUSSIAN_SIGMA * DP_MIN_GAUSSIAN_SIGMA);
	g->variance = v;
	g->sigma = nextafter(sqrt(v), INFINITY);
	g->delta_noise = delta_noise;
	g->delta_threshold = delta_threshold;
	g->tau = smallest_tau(g->sigma, delta_threshold, max_groups);
	g->param.p = (uint128) ldexp(v, VARIANCE_BITS);
	g->param.q = (uint128) 1 << VARIANCE_BITS;
	return true;
}

/*
 * Gaussian thresholding at (epsilon, delta) for units in max_groups
 * groups, with the split of delta that minimises tau (file comment).
 * False when no split gives a sigma within DP_SELECTION_GAUSSIAN_MAX_SIGMA.
 */
bool
dp_selection_gaussian_plan(DpSelectionGaussian *g, double epsilon, double delta,
						   int max_groups)
{
	bool		found = false;

	for (int j = 1; j < SPLIT_STEPS; j++)
	{
		DpSelectionGaussian try;
		double		delta_threshold = dp_mul_down(delta, (double) j / SPLIT_STEPS);
		double		delta_noise = dp_mul_down(delta, (double) (SPLIT_STEPS - j) / SPLIT_STEPS);

		if (!(delta_threshold > 0 && delta_noise > 0))
			continue;
		if (!plan_split(&try, epsilon, delta_noise, delta_threshold, max_groups))
			continue;
		if (!found || try.tau < g->tau)
			*g = try;
		found = true;
	}
	return found;
}

/*
 * sum_{x >= m} exp(-(x^2 - m^2) / (2 v)) for an integer m >= 0, the terms
 * summed smallest first; the factor exp(-m^2 / (2 v)) is left out.
 */
static double
scaled_tail_sum(double v, int64 m)
{
	int64		jmax = 0;
	double		sum = 0;

	while ((2.0 * m * jmax + (double) jmax * jmax) / (2 * v) < TAIL_LOG_CUTOFF)
		jmax++;
	for (int64 j = jmax; j >= 0; j--)
		sum += exp(-(2.0 * m * j + (double) j * j) / (2 * v));
	return sum;
}

/* P[Z >= m] for an integer m >= 1, Z the discrete Gaussian of variance v */
static double
upper_tail(double v, int64 m)
{
	double		norm = 1 + 2 * exp(-1 / (2 * v)) * scaled_tail_sum(v, 1);

	return exp(-(double) m * m / (2 * v)) * scaled_tail_sum(v, m) / norm;
}

/* the probability that a group of n units is released: P[Z >= tau - n] */
double
dp_selection_gaussian_probability(const DpSelectionGaussian *g, int64 n)
{
	int64		m = g->tau - n;

	if (n <= 0)
		return 0;
	if (m >= 1)
		return upper_tail(g->variance, m);
	return 1 - upper_tail(g->variance, 1 - m);	/* Z is symmetric */
}

/* the decision for one group of n units: n + Z >= tau, Z drawn exactly */
bool
dp_selection_gaussian_draw(const DpSelectionGaussian *g, int64 n)
{
	if (n <= 0)
		return false;
	return (int128) n + dp_sample_discrete_gaussian(g->param) >= (int128) g->tau;
}
