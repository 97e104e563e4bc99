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
 * over every true mean allowed by the bounds (doc/sql-reference.md,
 * "Aggregates").
 *
 * Price.  Each release keeps (epsilon_i, delta_i) as its share of the
 * statement's price (for the ledger and basic accounting); its Renyi DP
 * curve, alpha D_i^2 / (2 sigma_i^2), depends on its own multiplier only
 * and stays correct (release_rdp.c).
 *
 * What is sampled is the discrete Gaussian on a lattice of 2^k (release.c),
 * not the continuous one, so each release is given a slightly larger mu
 * than its continuous counterpart, and the composition is taken in the
 * Gaussian DP framework, where it is exact for any mechanisms of the given
 * mu_i (Dong, Roth & Su 2019, Theorem 3.2 and Corollary 3.3: a mechanism
 * whose trade-off curve lies above G_mu_i composes like G_mu_i).  A
 * discrete Gaussian release of sensitivity D and sigma (lattice units) is
 * mu'-GDP with mu' = (D / sigma)(1 + kappa), kappa <= 2 / sigma^2, at
 * every epsilon with epsilon / mu below 2^9 (ours, from the exact delta
 * of Canonne, Kamath & Steinke 2020, Theorem 7, and the Euler-Maclaurin
 * bound of calibrate.c): with m the first lattice point above
 * u = epsilon sigma^2 / D - D / 2 and z = u / sigma = epsilon / mu - mu / 2,
 *  - the integral term, from m rather than from u, is at most the
 *    continuous delta(epsilon; mu), as the hockey-stick integrand is
 *    positive above u;
 *  - the correction terms are each at most a constant times
 *    phi(z) mu / sigma^2 (the integrand vanishes at u, its value and its
 *    derivatives at m are of order D / sigma^2 times f(u) / N = phi(z) /
 *    sigma; the remainder, of order sigma^-6 z^5 phi(z), is smaller still),
 *    their sum at most phi(z) mu / sigma^2;
 *  - d delta(epsilon; mu) / d mu = phi(epsilon / mu - mu / 2) (Balle &
 *    Wang 2018, Theorem 8, differentiated), so raising mu by mu kappa
 *    raises the continuous delta by at least that much.
 * Beyond epsilon / mu = 2^9 both deltas are below e^-100000, so what the
 * tails of the trade-off curves could add to the composed delta is far
 * below the rounding of any delta.  This derivation is ours, not a theorem
 * of the papers: a reviewer should check it.
 * Releases take part only when every sigma is at least JOINT_MIN_SIGMA_UNITS
 * lattice steps (kappa below 2^-39), and every mu_i is raised by the
 * relative JOINT_MU_MARGIN = 2^-20 (a million times kappa) before they are
 * composed; every rounding is upwards (the sum of squares, the multipliers,
 * sigma).  Releases with coarser lattices keep their own exact discrete
 * calibration (Canonne, Kamath & Steinke 2020, Theorem 7), as does a lone
 * release.
 *
 * Under TABLESAMPLE.  Releases computed from one Poisson sample are not
 * independent mechanisms of the table: they share the sample, and
 * amplifying each one separately, then adding the prices, understates
 * their cost (dp_avg at epsilon 1 on BERNOULLI (1), each half amplified from
 * base epsilon 4.19, is really ln(1 + 0.01 (e^8.38 - 1)) = 3.8-DP, not
 * 1-DP).  So when the priced releases of a statement include two or more
 * noisy releases from amplified samples, they are calibrated as one
 * mechanism on the sample (calibrate_shared_sample): its base guarantee
 * (epsilon0, delta0) = (ln(1 + (e^E - 1)/q), Delta/q) is what
 * amplification turns into the statement's (E, Delta) (Steinke 2022,
 * Theorem 29), and it is split between the releases by basic composition on
 * the sample (Dwork & Roth 2014, Theorem 3.16; the noises are independent
 * given the sample): each Laplace release gets the share epsilon_i / E of
 * epsilon0, and the Gaussian ones together the rest with all of delta0,
 * calibrated jointly as above with their mu* (or, when the group holds
 * Gaussian releases only, by the Renyi DP of the sampled Gaussian if that
 * needs less noise: shared_gaussian_sigma).  Renyi accounting charges the
 * exact Renyi DP of the whole group on the sample (rdp_laplace.c,
 * release_rdp.c).  The rate must be one for all: a statement with samples
 * of different rates is refused.  A single amplified release keeps its own
 * calibration ("amplified" or "renyi", release_noise.c); unamplified
 * samples are priced as if read whole and their Gaussian releases join the
 * unsampled group.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "calibrate.h"
#include "joint.h"
#include "noise.h"
#include "noise_param.h"

/* relative margin on each release's mu for the discreteness (above) */
#define JOINT_MU_MARGIN (1.0 / 1048576.0)	/* 2^-20 */
/* the coarsest lattice joint calibration accepts: sigma in steps */
#define JOINT_MIN_SIGMA_UNITS 1048576.0	/* 2^20 */

/* the noisy releases of a call that may join the group */
static int
joinable_specs(DpRelease *r, DpNoiseSpec **specs)
{
	const DpNoiseSpec *all[DP_MAX_NOISES];
	int			n = 0;
	int			m = dp_release_noises(r, all, NULL);

	if (r->sampling.amplified)
		return 0;
	for (int i = 0; i < m; i++)
	{
		if (all[i]->mechanism == DP_MECH_GAUSSIAN)
			specs[n++] = (DpNoiseSpec *) all[i];
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

/* the noisy releases of a call whose sample is amplified */
static int
amplified_specs(DpRelease *r, DpNoiseSpec **specs)
{
	if (!r->sampling.amplified)
		return 0;
	return dp_release_noisy(r, (const DpNoiseSpec **) specs);
}

/* x part / total rounded toward zero, all positive */
static double
share_down(double x, double part, double total)
{
	double		p = dp_mul_down(x, part);
	double		q = p / total;

	if (fma(q, total, -p) > 0)
		q = nextafter(q, 0.0);
	return q;
}

/* the sums over the amplified releases of the priced calls */
typedef struct SharedSample
{
	int			count;			/* noisy releases */
	int			laplace;		/* of which Laplace */
	double		rate;
	double		epsilon;		/* E, Delta: their prices */
	double		delta;
	double		gauss_epsilon;	/* the prices of the Gaussian ones */
	double		gauss_sum_sq;	/* sum of their stand-alone mu_i^2, up */
} SharedSample;

static void
shared_sample_sums(List *priced, SharedSample *g)
{
	ListCell   *lc;

	memset(g, 0, sizeof(*g));
	foreach(lc, priced)
	{
		DpRelease  *r = lfirst(lc);
		DpNoiseSpec *specs[DP_MAX_NOISES];
		int			n = amplified_specs(r, specs);

		if (n > 0 && g->count > 0 && r->sampling.rate != g->rate)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("DP aggregates on samples of different rates cannot share a statement"),
					 errdetail("Releases computed from samples are priced together, from one rate; "
							   "this statement has rates %g and %g.", g->rate, r->sampling.rate),
					 errhint("Make the releases of each sample in a statement of their own.")));
		for (int i = 0; i < n; i++)
		{
			g->rate = r->sampling.rate;
			g->epsilon = dp_add_up(g->epsilon, specs[i]->epsilon);
			g->delta = dp_add_up(g->delta, specs[i]->delta);
			if (specs[i]->mechanism == DP_MECH_GAUSSIAN)
				g->gauss_epsilon = dp_add_up(g->gauss_epsilon, specs[i]->epsilon);
			else
				g->laplace++;
			g->count++;
		}
	}
}

/*
 * sum of the stand-alone mu_i^2 of the Gaussian releases among specs_of
 * the priced calls, rounded up (a bisection each: only for groups)
 */
static double
gaussian_sum_sq(List *priced, int (*specs_of) (DpRelease *r, DpNoiseSpec **specs))
{
	double		sum_sq = 0;
	ListCell   *lc;

	foreach(lc, priced)
	{
		DpNoiseSpec *specs[DP_MAX_NOISES];
		int			n = specs_of(lfirst(lc), specs);

		for (int i = 0; i < n; i++)
		{
			double		mu_i;

			if (specs[i]->mechanism != DP_MECH_GAUSSIAN)
				continue;
			mu_i = dp_div_up(1.0, alone_multiplier(specs[i]));
			sum_sq = dp_add_up(sum_sq, dp_mul_up(mu_i, mu_i));
		}
	}
	return sum_sq;
}

/* a Laplace release of the group: its share of epsilon0 */
static void
set_shared_laplace(DpNoiseSpec *ns, const SharedSample *g, double epsilon0)
{
	double		e0 = share_down(epsilon0, ns->epsilon, g->epsilon);
	/* a release of r repeats, each of sensitivity D: L1 sensitivity r D */
	double		b = dp_div_up(dp_mul_up((double) ns->sens_units, (double) ns->repeats), e0);

	if (!(b <= DP_MAX_LAPLACE_SCALE))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("epsilon %g is too small for the releases of this sample", ns->epsilon),
				 errdetail("The Laplace noise would have a scale of %g grid units; "
						   "the sampler accepts at most 2^62.", b)));
	ns->laplace = dp_laplace_param(b);
	ns->noise_scale = ldexp((double) ns->laplace.t / (double) ns->laplace.s, ns->grid_exp);
	ns->base_epsilon = e0;
	ns->calibration = "shared";
}

/*
 * The standard deviation, at sensitivity 1, of the one Gaussian the
 * group's Gaussian releases form on the sample: the better of
 *  (i) the analytic Gaussian at the base (gauss_epsilon0, delta0) left to
 *      them by the Laplace releases (Steinke 2022, Theorem 29);
 *  (ii) when the group holds Gaussian releases only, the smallest multiplier
 *      whose Poisson-subsampled Gaussian meets the statement's (E, Delta) by
 *      its Renyi DP (Mironov, Talwar & Zhang 2019; Balle et al. 2020,
 *      Theorem 21): Gaussians of composed mu on one sample are, by the
 *      rotation invariance of the Gaussian, the sampled Gaussian of
 *      multiplier 1/mu (on the lattices, within the Poisson summation error
 *      that release_noise.c's "renyi" calibration already accepts).
 * *how names the one chosen ("shared" or "shared-renyi").
 */
static double
shared_gaussian_sigma(const SharedSample *g, double epsilon0, double *gauss_epsilon0,
					  double *delta0, const char **how)
{
	double		s1 = INFINITY,
				s2 = INFINITY;

	*delta0 = dp_div_up(g->delta, g->rate);
	*gauss_epsilon0 = share_down(epsilon0, g->gauss_epsilon, g->epsilon);
	if (*delta0 < 1)
		s1 = dp_gaussian_sigma(*gauss_epsilon0, *delta0, 1.0);
	if (g->laplace == 0)
		s2 = dp_rdp_sampled_gaussian_sigma(g->epsilon, g->delta, g->rate);
	if (!isfinite(Min(s1, s2)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("epsilon %g and delta %g are too small for the releases of a sample of rate %g",
						g->epsilon, g->delta, g->rate),
				 errdetail("Releases from one sample are calibrated together, to delta / rate "
						   "on the sample (which must be below 1) or by the Renyi DP of the "
						   "sampled Gaussian."),
				 errhint("Use a larger epsilon or sampling rate.")));
	*how = s1 <= s2 ? "shared" : "shared-renyi";
	return Min(s1, s2);
}

/*
 * Releases from one amplified sample, calibrated as one mechanism on the
 * sample (see the head comment).
 */
static void
calibrate_shared_sample(List *priced, List *releases)
{
	SharedSample g;
	double		epsilon0,
				delta0 = 0,
				gauss_epsilon0 = 0,
				joint_sigma = 0,
				factor = 0;
	const char *how = "shared";
	ListCell   *lc;

	shared_sample_sums(priced, &g);
	if (g.count < 2)
		return;
	g.gauss_sum_sq = gaussian_sum_sq(priced, amplified_specs);
	epsilon0 = dp_base_epsilon(g.epsilon, g.rate);
	if (g.gauss_sum_sq > 0)
	{
		joint_sigma = shared_gaussian_sigma(&g, epsilon0, &gauss_epsilon0, &delta0, &how);
		factor = dp_mul_up(dp_mul_up(joint_sigma, nextafter(sqrt(g.gauss_sum_sq), INFINITY)),
						   1.0 + JOINT_MU_MARGIN);
	}

	foreach(lc, releases)
	{
		DpRelease  *r = lfirst(lc);
		DpNoiseSpec *specs[DP_MAX_NOISES];
		int			n = amplified_specs(r, specs);

		for (int i = 0; i < n; i++)
		{
			DpNoiseSpec *ns = specs[i];

			if (ns->mechanism == DP_MECH_LAPLACE)
			{
				set_shared_laplace(ns, &g, epsilon0);
				if (ns == &r->tree)
					dp_release_tree_tails(r);	/* its scale changed */
				continue;
			}
			if (ns->sigma_units < JOINT_MIN_SIGMA_UNITS)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("the Gaussian noise of a sampled release is too fine for its grid"),
						 errdetail("Its standard deviation is %g grid units; releases from one sample "
								   "are calibrated together only above 2^20.", ns->sigma_units)));
			set_joint_sigma(ns, factor, 1.0 / joint_sigma);
			/* a base guarantee on the sample only for the amplified route */
			ns->base_epsilon = strcmp(how, "shared") == 0 ? gauss_epsilon0 : NAN;
			ns->base_delta = strcmp(how, "shared") == 0 ? delta0 : NAN;
			ns->calibration = how;
		}
		if (n > 0)
			r->shared_sample = true;
	}
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

	calibrate_shared_sample(priced, releases);
	foreach(lc, priced)
	{
		DpNoiseSpec *specs[DP_MAX_NOISES];
		int			n = joinable_specs(lfirst(lc), specs);

		for (int i = 0; i < n; i++)
		{
			if (specs[i]->sigma_units < JOINT_MIN_SIGMA_UNITS)
				return;
			epsilon = dp_add_up(epsilon, specs[i]->epsilon);
			delta = dp_add_up(delta, specs[i]->delta);
			count++;
		}
	}
	if (count < 2)
		return;
	sum_sq = gaussian_sum_sq(priced, joinable_specs);

	/*
	 * The continuous Gaussian of standard deviation joint_sigma and
	 * sensitivity 1 meets (epsilon, delta), so mu* = 1 / joint_sigma; release
	 * i gets the multiplier joint_sigma M s_i (1 + margin), M >=
	 * sqrt(sum_sq), so that the mu_i (1 + margin) of the releases compose to
	 * at most mu*.  (epsilon and delta were summed rounding up, as the
	 * charge is: the same values.)
	 */
	joint_sigma = dp_gaussian_sigma(epsilon, delta, 1.0);
	factor = dp_mul_up(dp_mul_up(joint_sigma, nextafter(sqrt(sum_sq), INFINITY)),
					   1.0 + JOINT_MU_MARGIN);
	if (!(factor < 1.0))
		return;					/* cannot happen: basic composition is looser */

	foreach(lc, releases)
	{
		DpNoiseSpec *specs[DP_MAX_NOISES];
		int			n = joinable_specs(lfirst(lc), specs);

		for (int i = 0; i < n; i++)
			set_joint_sigma(specs[i], factor, 1.0 / joint_sigma);
	}
}
