/*-------------------------------------------------------------------------
 *
 * release_noise.c
 *	  The noise of one release: its mechanism and exact sampler
 *	  parameters, calibrated to its price.
 *
 * release.c decides what a DP call releases (its bounds, grid and
 * sensitivity in units) and asks here for the noise of each of its noisy
 * releases: Laplace for pure DP, the discrete Gaussian otherwise, at the
 * call's epsilon and delta, amplified by sampling where a sample was read
 * (calibrate.c has the mathematics).  Calibrations of the Gaussian are
 * cached per backend: the same few parameters come back statement after
 * statement.  Every rounding is directed so that the noise is never
 * smaller than its price requires.  The draw of a noise (dp_noise_draw, in
 * the final functions) and the name of its mechanism are here too.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "calibrate.h"
#include "noise_param.h"
#include "release_noise.h"

static double
u64_to_double_up(uint64 x)
{
	double		d = (double) x;

	if (d < 18446744073709551616.0 && (uint64) d < x)
		d = nextafter(d, INFINITY);
	return d;
}

/*
 * A small cache of calibrations, which take from microseconds (analytic)
 * to tens of milliseconds (the Renyi DP of the sampled Gaussian): the same
 * few parameters come back statement after statement.
 */
typedef enum CalibrationKind
{
	CAL_DISCRETE_SIGMA,			/* dp_discrete_gaussian_sigma(a, b, c) */
	CAL_RDP_MULTIPLIER			/* dp_rdp_sampled_gaussian_sigma(a, b, c) */
} CalibrationKind;

typedef struct CalibrationEntry
{
	CalibrationKind kind;
	double		a,
				b,
				c;
	double		value;
} CalibrationEntry;

#define CALIBRATION_CACHE_SIZE 32
static CalibrationEntry calibration_cache[CALIBRATION_CACHE_SIZE];
static int	calibration_cache_used = 0;
static int	calibration_cache_next = 0;

static double
calibration_cached(CalibrationKind kind, double a, double b, double c)
{
	CalibrationEntry *e;
	double		value;

	for (int i = 0; i < calibration_cache_used; i++)
	{
		e = &calibration_cache[i];
		if (e->kind == kind && e->a == a && e->b == b && e->c == c)
			return e->value;
	}
	/* computed before the entry is touched: an error leaves no stale pair */
	value = kind == CAL_DISCRETE_SIGMA
		? dp_discrete_gaussian_sigma(a, b, c)
		: dp_rdp_sampled_gaussian_sigma(a, b, c);
	e = &calibration_cache[calibration_cache_next];
	e->kind = kind;
	e->a = a;
	e->b = b;
	e->c = c;
	e->value = value;
	calibration_cache_next = (calibration_cache_next + 1) % CALIBRATION_CACHE_SIZE;
	if (calibration_cache_used < CALIBRATION_CACHE_SIZE)
		calibration_cache_used++;
	return e->value;
}

static double
discrete_sigma_cached(double epsilon, double delta, uint64 sens_units)
{
	return calibration_cached(CAL_DISCRETE_SIGMA, epsilon, delta, (double) sens_units);
}

static double
rdp_multiplier_cached(double epsilon, double delta, double rate)
{
	return calibration_cached(CAL_RDP_MULTIPLIER, epsilon, delta, rate);
}

/* noise per unit of sensitivity, roughly, to choose grids */
double
dp_release_noise_multiplier(double epsilon, double delta, const DpSampling *sampling)
{
	double		m;

	if (delta == 0)
		return 1.0 / dp_sampling_base_epsilon(epsilon, sampling);
	if (!sampling->amplified)
		return dp_gaussian_sigma(epsilon, delta, 1.0);
	m = rdp_multiplier_cached(epsilon, delta, sampling->rate);
	if (delta / sampling->rate < 1)
		m = Min(m, dp_gaussian_sigma(dp_base_epsilon(epsilon, sampling->rate),
									 delta / sampling->rate, 1.0));
	return m;
}

/*
 * The discrete Gaussian sigma of a release, in units, and the base
 * guarantee it has before subsampling.  Without amplification: the exact
 * discrete calibration at (epsilon, delta).  With it: the better of
 *  (i) the discrete calibration at the base (epsilon0, delta/q) that
 *      amplification turns into (epsilon, delta) (Steinke 2022, Theorem 29);
 *  (ii) the Renyi DP of the Poisson-subsampled Gaussian (Mironov, Talwar &
 *      Zhang 2019) converted to (epsilon, delta) (Balle et al. 2020,
 *      Theorem 21).  That analysis is for the continuous Gaussian; our noise
 *      is the discrete Gaussian on a lattice at least 2^30 times finer than
 *      sigma, whose sums over the lattice equal the corresponding integrals
 *      to within a relative exp(-2 pi^2 sigma_units^2) (Poisson summation),
 *      far below any rounding.
 */
static double
gaussian_sigma_units(DpNoiseSpec *ns, uint64 sens_units, const DpSampling *sampling)
{
	double		su = (double) sens_units;
	double		q = sampling->rate;
	double		s1 = INFINITY,
				s2;

	if (!sampling->amplified)
		return discrete_sigma_cached(ns->epsilon, ns->delta, sens_units);
	if (ns->delta / q < 1)
	{
		ns->base_epsilon = dp_base_epsilon(ns->epsilon, q);
		ns->base_delta = ns->delta / q;
		s1 = discrete_sigma_cached(ns->base_epsilon, ns->base_delta, sens_units);
	}
	s2 = dp_mul_up(rdp_multiplier_cached(ns->epsilon, ns->delta, q), su);
	if (s1 <= s2)
	{
		ns->calibration = "amplified";
		return s1;
	}
	ns->calibration = "renyi";
	ns->base_delta = ns->delta;
	ns->base_epsilon = dp_discrete_gaussian_epsilon(s2, ns->delta, su);
	return s2;
}

/*
 * Fill in one noisy release: mechanism and exact sampler parameters for a
 * query of sens_units sensitivity on a grid of 2^grid_exp.
 */
void
dp_release_plan_noise(DpNoiseSpec *ns, const char *fname, double epsilon, double delta,
					  uint64 sens_units, int grid_exp, const DpSampling *sampling)
{
	ns->epsilon = epsilon;
	ns->delta = delta;
	ns->base_epsilon = epsilon;
	ns->base_delta = delta;
	ns->sigma_units = 0;
	ns->calibration = NULL;
	ns->joint_mu = 0;
	ns->repeats = 1;
	ns->grid_exp = grid_exp;
	ns->sens_units = sens_units;
	ns->sensitivity = ldexp((double) sens_units, grid_exp);

	if (sens_units == 0)
	{
		ns->mechanism = DP_MECH_NONE;
		ns->noise_scale = 0;
		return;
	}
	if (delta == 0)
	{
		double		b;

		ns->base_epsilon = dp_sampling_base_epsilon(epsilon, sampling);
		if (sampling->amplified)
			ns->calibration = "amplified";
		b = dp_div_up(u64_to_double_up(sens_units), ns->base_epsilon);
		if (!(b <= DP_MAX_LAPLACE_SCALE))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("epsilon %g is too small for %s", epsilon, fname),
					 errdetail("The Laplace noise would have a scale of %g grid units; "
							   "the sampler accepts at most 2^62.", b)));
		ns->mechanism = DP_MECH_LAPLACE;
		ns->laplace = dp_laplace_param(b);
		ns->noise_scale = ldexp((double) ns->laplace.t / (double) ns->laplace.s, grid_exp);
	}
	else
	{
		double		sigma = gaussian_sigma_units(ns, sens_units, sampling);

		if (sigma < DP_MIN_GAUSSIAN_SIGMA)
			sigma = DP_MIN_GAUSSIAN_SIGMA;
		if (!(sigma <= DP_MAX_GAUSSIAN_SIGMA))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("epsilon %g and delta %g are too small for %s", epsilon, delta, fname),
					 errdetail("The Gaussian noise would have a standard deviation of %g grid units; "
							   "the sampler accepts at most 2^48.", sigma)));
		ns->mechanism = DP_MECH_GAUSSIAN;
		ns->gaussian = dp_gaussian_param(dp_mul_up(sigma, sigma));
		ns->sigma_units = sigma;
		ns->noise_scale = ldexp(sigma, grid_exp);
	}
}

const char *
dp_mechanism_name(DpMechanism mech)
{
	switch (mech)
	{
		case DP_MECH_NONE:
			return "none";
		case DP_MECH_LAPLACE:
			return "laplace";
		case DP_MECH_GAUSSIAN:
			return "gaussian";
	}
	return "?";
}

/* one draw of the noise of a release, in its grid units */
int128
dp_noise_draw(const DpNoiseSpec *spec)
{
	switch (spec->mechanism)
	{
		case DP_MECH_NONE:
			return 0;
		case DP_MECH_LAPLACE:
			return dp_sample_discrete_laplace(spec->laplace);
		case DP_MECH_GAUSSIAN:
			return dp_sample_discrete_gaussian(spec->gaussian);
	}
	return 0;
}
