/*-------------------------------------------------------------------------
 *
 * joint.c
 *	  Joint calibration: the Gaussian releases of one statement calibrated
 *	  together, so that the statement as a whole is exactly the (epsilon,
 *	  delta) it is charged.
 *
 * Each release is first planned alone (release.c): release i, of price
 * (epsilon_i, delta_i), would get the noise multiplier s_i = sigma_i / D_i
 * of the analytic Gaussian at (epsilon_i, delta_i) (Balle & Wang 2018,
 * Theorem 8), and the statement is charged the sums (E, Delta) (basic
 * composition, Dwork & Roth 2014, Theorem 3.16).  But Gaussian releases
 * compose exactly: Gaussian releases of sensitivities D_i and standard
 * deviations sigma_i, computed on the same data, together are one Gaussian
 * mechanism with
 *   mu = sqrt(sum_i (D_i / sigma_i)^2)
 * (Dong, Roth & Su 2019, "Gaussian Differential Privacy", Corollary 3.3:
 * G_mu1 (x) ... (x) G_mun = G_mu), whose exact (epsilon, delta) curve is
 * that of the analytic Gaussian of sensitivity mu and standard deviation 1
 * (Balle & Wang 2018, Theorem 8; Dong, Roth & Su 2019, Corollary 2.13).
 * So the statement can afford the mu* whose curve passes through (E,
 * Delta), which is at least sqrt(sum_i 1/s_i^2) (basic composition is a
 * valid, looser, bound on the same releases), and its releases share it.
 *
 * The sharing rule is public: it depends on the prices and the bounds
 * only.  Release i keeps its share of mu^2 from the stand-alone plan,
 * w_i = (1/s_i^2) / sum_j (1/s_j^2), so every multiplier is divided by the
 * same factor mu* / sqrt(sum_j 1/s_j^2) >= 1.  For dp_avg, whose count and
 * centred sum each carry half of the price, that is an equal split of mu^2,
 * which is the split that minimises the largest variance of the average
 * over every true mean allowed by the bounds (README, "dp_avg").
 *
 * Price.  Each release keeps (epsilon_i, delta_i) as its share of the
 * statement's price (for the ledger and basic accounting); its Renyi DP
 * curve, alpha D_i^2 / (2 sigma_i^2), depends on its own multiplier only
 * and stays correct (release_rdp.c).
 *
 * What is sampled is the discrete Gaussian on a lattice of 2^k (release.c),
 * not the continuous one.  The releases take part only when every sigma is
 * at least JOINT_MIN_SIGMA_UNITS lattice steps; then the discrete
 * Gaussians' sums over their lattices equal the continuous integrals up to
 * a relative error of order sigma^-2 (Poisson summation: the Fourier
 * transform of the Gaussian at the nonzero frequencies of the lattice is
 * exp(-2 pi^2 sigma^2 k^2), and the one kink of the hockey-stick integrand
 * (e^L - e^eps)_+ adds a term of order sigma^-2 (Euler-Maclaurin), as in the
 * comparison of Canonne, Kamath & Steinke 2020, section 2.1), about 2^-40
 * at 2^20 steps.  We calibrate pessimistically: mu* is the mu of the
 * continuous curve at (E, Delta (1 - JOINT_DELTA_MARGIN)), a margin of 2^-20
 * that covers that error a million times, and every rounding is upwards
 * (the sum of squares, the multipliers, sigma).  Releases with coarser
 * lattices are left with their own exact discrete calibration
 * (Canonne, Kamath & Steinke 2020, Theorem 7), as is a lone release.
 *
 * Under TABLESAMPLE.  An amplified release is a subsampled Gaussian, a
 * mixture whose composition is not a Gaussian of any mu: amplified releases
 * keep their own calibration ("amplified" or "renyi", release.c) and never
 * join the group.  A sampled relation that earns no amplification is priced
 * as if read whole, and its Gaussian releases join the group like any
 * other.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "calibrate.h"
#include "joint.h"
#include "noise.h"
#include "noise_param.h"

/* relative margin on the statement's delta for the discreteness (above) */
#define JOINT_DELTA_MARGIN (1.0 / 1048576.0)	/* 2^-20 */
/* the coarsest lattice joint calibration accepts: sigma in steps */
#define JOINT_MIN_SIGMA_UNITS 1048576.0	/* 2^20 */

/* the noisy releases of a call that may join the group */
static int
joinable_specs(DpRelease *r, DpNoiseSpec **specs)
{
	int			n = 0;

	if (r->sampling.amplified)
		return 0;
	if (r->call.kind != DP_SUM)
		specs[n++] = &r->count;
	if (r->call.kind == DP_SUM || r->call.kind == DP_AVG)
		specs[n++] = &r->sum;
	for (int i = 0; i < n; i++)
	{
		if (specs[i]->mechanism != DP_MECH_GAUSSIAN)
		{
			specs[i] = specs[n - 1];
			n--;
			i--;
		}
	}
	return n;
}

/* the stand-alone noise multiplier of a release: analytic Gaussian */
static double
alone_multiplier(const DpNoiseSpec *ns)
{
	return dp_gaussian_sigma(ns->epsilon, ns->delta, 1.0);
}

/*
 * Give a release its joint sigma: multiplier factor * s_i (rounded up),
 * times its sensitivity in units.
 */
static void
set_joint_sigma(DpNoiseSpec *ns, double factor, double joint_mu)
{
	double		sigma = dp_mul_up(dp_mul_up(factor, alone_multiplier(ns)),
								  (double) ns->sens_units);

	if (sigma < DP_MIN_GAUSSIAN_SIGMA)
		sigma = DP_MIN_GAUSSIAN_SIGMA;
	/* smaller than the stand-alone sigma, which the sampler accepted */
	if (!(sigma <= DP_MAX_GAUSSIAN_SIGMA))
		elog(ERROR, "dp_agg: joint sigma %g out of range", sigma);
	ns->gaussian = dp_gaussian_param(dp_mul_up(sigma, sigma));
	ns->sigma_units = sigma;
	ns->noise_scale = ldexp(sigma, ns->grid_exp);
	ns->joint_mu = joint_mu;
}

/*
 * Calibrate the Gaussian releases of the priced calls together (see the
 * head comment); `releases` holds every ticket of the statement, the priced
 * ones and their duplicates, which get the same noise.
 */
void
dp_joint_calibrate(List *priced, List *releases)
{
	double		epsilon = 0,
				delta = 0,
				sum_sq = 0;
	int			count = 0;
	double		joint_sigma,
				factor;
	ListCell   *lc;

	foreach(lc, priced)
	{
		DpNoiseSpec *specs[2];
		int			n = joinable_specs(lfirst(lc), specs);

		for (int i = 0; i < n; i++)
		{
			double		mu_i = dp_div_up(1.0, alone_multiplier(specs[i]));

			if (specs[i]->sigma_units < JOINT_MIN_SIGMA_UNITS)
				return;
			epsilon = dp_add_up(epsilon, specs[i]->epsilon);
			delta = dp_add_up(delta, specs[i]->delta);
			sum_sq = dp_add_up(sum_sq, dp_mul_up(mu_i, mu_i));
			count++;
		}
	}
	if (count < 2)
		return;

	/*
	 * The priced epsilon and delta were summed rounding up above; the
	 * continuous Gaussian of standard deviation joint_sigma and sensitivity
	 * 1 meets (epsilon, delta (1 - margin)), so mu* = 1 / joint_sigma, and
	 * release i gets the multiplier joint_sigma M s_i, M >= sqrt(sum_sq).
	 */
	joint_sigma = dp_gaussian_sigma(epsilon, delta * (1.0 - JOINT_DELTA_MARGIN), 1.0);
	factor = dp_mul_up(joint_sigma, nextafter(sqrt(sum_sq), INFINITY));
	if (!(factor < 1.0))
		return;					/* cannot happen: basic composition is looser */

	foreach(lc, releases)
	{
		DpNoiseSpec *specs[2];
		int			n = joinable_specs(lfirst(lc), specs);

		for (int i = 0; i < n; i++)
			set_joint_sigma(specs[i], factor, 1.0 / joint_sigma);
	}
}
