/*-------------------------------------------------------------------------
 *
 * release_rdp.c
 *	  The Renyi DP curve of a statement's priced calls, on the order grid of the
 *	  accountant (calibrate.c), with a cache of recent curves.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "calibrate.h"
#include "rdp_laplace.h"
#include "release_rdp.h"

/* relative margin for the rounding of each Renyi DP term (never understated) */
#define RDP_MARGIN (1.0 + 1.0 / 1099511627776.0)	/* 1 + 2^-40 */

/*
 * The Renyi DP curve of one noisy release (on the grid of dp_rdp_orders),
 * before the margin:
 *  - discrete Gaussian: alpha D^2 / (2 sigma^2), as for the continuous one
 *    (Canonne, Kamath & Steinke 2020, Theorem 4: the same concentrated DP);
 *    under Poisson subsampling the Renyi DP of the sampled Gaussian
 *    (Mironov, Talwar & Zhang 2019; see gaussian_sigma_units on lattices);
 *  - discrete Laplace: its exact Renyi DP (dp_rdp_discrete_laplace, the
 *    discrete form of Mironov 2017, Proposition 6), at most epsilon;
 *    amplified by subsampling: the exact Renyi DP of the Poisson-subsampled
 *    discrete Laplace (rdp_laplace.c: Steinke 2022, Theorems 34 and 35),
 *    and never more than what any epsilon-DP release has, min(epsilon,
 *    alpha epsilon^2 / 2) (Bun & Steinke 2016, Proposition 3.3).
 * The noise actually used is at least what is assumed here (sigma^2 is
 * rounded up, the Laplace scale is the sampler's), and add_noise_rdp rounds
 * each term up by a relative 2^-40.
 */
static void
noise_rdp_curve(const DpNoiseSpec *ns, const DpSampling *sampling, double *out)
{
	int			n;
	const double *orders = dp_rdp_orders(&n);

	for (int i = 0; i < n; i++)
	{
		double		a = orders[i];

		switch (ns->mechanism)
		{
			case DP_MECH_NONE:
				out[i] = 0;
				break;
			case DP_MECH_LAPLACE:
				{
					double		lambda = (double) ns->laplace.s / (double) ns->laplace.t;
					double		d = (double) ns->sens_units;

					if (sampling->amplified)
						out[i] = Min(Min(ns->epsilon, a * ns->epsilon * ns->epsilon / 2),
									 dp_rdp_sampled_discrete_laplace(sampling->rate, lambda, d, a));
					else
						out[i] = Min(dp_rdp_discrete_laplace(lambda, d, a), ns->epsilon);
					break;
				}
			case DP_MECH_GAUSSIAN:
				{
					double		nm = ns->sigma_units / (double) ns->sens_units;

					out[i] = sampling->amplified
						? dp_rdp_sampled_gaussian_fast(sampling->rate, nm, a)
						: dp_rdp_gaussian(nm, a);
					break;
				}
		}
	}
}

/*
 * The last few curves computed: statements repeat their releases, and a
 * curve costs hundreds of exp() and log() (or, sampled, much more).
 */
typedef struct CurveCacheEntry
{
	DpMechanism mechanism;
	bool		amplified;
	double		rate;
	double		epsilon;
	uint64		sens_units;
	uint64		t,
				s;				/* Laplace */
	double		sigma_units;	/* Gaussian */
	double		curve[DP_RDP_ORDERS];
	/* the curve of scaled_repeats releases with its margin (add_noise_rdp) */
	int			scaled_repeats;
	double		scaled[DP_RDP_ORDERS];
} CurveCacheEntry;

#define CURVE_CACHE_SIZE 8
static CurveCacheEntry curve_cache[CURVE_CACHE_SIZE];
static int	curve_cache_used = 0;
static int	curve_cache_next = 0;

static CurveCacheEntry *
noise_rdp_curve_cached(const DpNoiseSpec *ns, const DpSampling *sampling)
{
	CurveCacheEntry key;
	CurveCacheEntry *e;

	memset(&key, 0, offsetof(CurveCacheEntry, curve));
	key.mechanism = ns->mechanism;
	key.amplified = sampling->amplified;
	key.rate = sampling->amplified ? sampling->rate : 1;
	key.epsilon = ns->epsilon;
	key.sens_units = ns->sens_units;
	if (ns->mechanism == DP_MECH_LAPLACE)
	{
		key.t = ns->laplace.t;
		key.s = ns->laplace.s;
	}
	else if (ns->mechanism == DP_MECH_GAUSSIAN)
		key.sigma_units = ns->sigma_units;

	for (int i = 0; i < curve_cache_used; i++)
	{
		if (memcmp(&curve_cache[i], &key, offsetof(CurveCacheEntry, curve)) == 0)
			return &curve_cache[i];
	}
	/* computed before the entry is filled, so that an error leaves no stale entry */
	noise_rdp_curve(ns, sampling, key.curve);
	key.scaled_repeats = -1;	/* none yet */
	e = &curve_cache[curve_cache_next];
	memcpy(e, &key, sizeof(key));
	curve_cache_next = (curve_cache_next + 1) % CURVE_CACHE_SIZE;
	if (curve_cache_used < CURVE_CACHE_SIZE)
		curve_cache_used++;
	return e;
}

/*
 * add the curve of one noisy release to curve[], each term rounded up; a
 * release of r repeats is r independent releases (Renyi DP composes by
 * addition, Mironov 2017, Proposition 1)
 */
static void
add_noise_rdp(const DpNoiseSpec *ns, const DpSampling *sampling, double *curve)
{
	CurveCacheEntry *e = noise_rdp_curve_cached(ns, sampling);

	/* the terms of these repeats, kept with the curve for the next statement */
	if (e->scaled_repeats != ns->repeats)
	{
		for (int i = 0; i < DP_RDP_ORDERS; i++)
			e->scaled[i] = e->curve[i] > 0
				? dp_mul_up(dp_mul_up(e->curve[i], (double) ns->repeats), RDP_MARGIN) : 0;
		e->scaled_repeats = ns->repeats;
	}
	for (int i = 0; i < DP_RDP_ORDERS; i++)
	{
		if (e->scaled[i] > 0)
			curve[i] = dp_add_up(curve[i], e->scaled[i]);
	}
}

/*
 * The Renyi DP curve of a priced call: its noisy releases.  A private
 * selection of groups adds nothing: it is (epsilon, delta)-DP with
 * delta > 0, which no Renyi DP curve bounds (a Renyi divergence of finite
 * order is infinite where one distribution has mass the other lacks), and
 * is composed beside the curve instead (dp_release_add_selection; the
 * hybrid certificate of calibrate.c, doc/budgets.md, "Renyi accounting").
 */
static void
release_add_rdp(const DpRelease *r, double *curve)
{
	const DpNoiseSpec *specs[DP_MAX_NOISES];
	int			n;

	if (r->call.kind == DP_TOP_K)
	{
		/*
		 * k rounds of report noisy max, each e0-DP with e0 = 1/b for the
		 * Laplace scale b the sampler uses (top_k.c): each is at most
		 * min(e0, alpha e0^2 / 2) (Bun & Steinke 2016, Proposition 3.3)
		 */
		int			norders;
		const double *orders = dp_rdp_orders(&norders);
		double		e0 = dp_div_up((double) r->count.laplace.s, (double) r->count.laplace.t);

		for (int i = 0; i < norders; i++)
		{
			double		v = Min(e0, dp_mul_up(dp_mul_up(orders[i], e0), e0) / 2);

			curve[i] = dp_add_up(curve[i], dp_mul_up(dp_mul_up(v, (double) r->top_k), RDP_MARGIN));
		}
		return;
	}
	n = dp_release_noises(r, specs, NULL);
	for (int i = 0; i < n; i++)
		add_noise_rdp(specs[i], &r->sampling, curve);
}

/* the noisy releases of a call calibrated with its sample's others */
static int
shared_specs(const DpRelease *r, const DpNoiseSpec **specs)
{
	return r->shared_sample ? dp_release_noisy(r, specs) : 0;
}

/*
 * The Renyi DP curve of a statement's priced calls: each call's own curve,
 * except for the releases computed from one amplified sample (joint.c),
 * which are one mechanism on the sample: the exact Renyi DP of the group
 * (dp_rdp_sampled_releases: Steinke 2022, Theorems 34 and 35, the Laplace
 * releases exactly, the Gaussian ones by their Renyi DP alpha / (2 s^2)),
 * and, when it holds only Laplace releases, at most what any E-DP
 * mechanism has, min(E, alpha E^2 / 2) (Bun & Steinke 2016, Proposition
 * 3.3), E the sum of their prices.
 */
void
dp_statement_add_rdp(List *priced, double *curve)
{
	int			n = 0,
				nmax = 0;
	double	   *lambda;
	double	   *d;
	double		mu2 = 0,
				epsilon = 0,
				rate = 1;
	bool		group = false;
	ListCell   *lc;
	int			norders;
	const double *orders = dp_rdp_orders(&norders);

	/* room for every Laplace release of the sample, repeats counted */
	foreach(lc, priced)
	{
		const DpNoiseSpec *specs[DP_MAX_NOISES];
		int			m = shared_specs(lfirst(lc), specs);

		for (int i = 0; i < m; i++)
			nmax += specs[i]->repeats;
	}
	lambda = palloc(sizeof(double) * Max(nmax, 1));
	d = palloc(sizeof(double) * Max(nmax, 1));

	foreach(lc, priced)
	{
		const DpRelease *r = lfirst(lc);
		const DpNoiseSpec *specs[DP_MAX_NOISES];
		int			m = shared_specs(r, specs);

		if (!r->shared_sample)
		{
			release_add_rdp(r, curve);
			continue;
		}
		group = true;
		rate = r->sampling.rate;
		for (int i = 0; i < m; i++)
		{
			const DpNoiseSpec *ns = specs[i];

			epsilon = dp_add_up(epsilon, ns->epsilon);
			if (ns->mechanism == DP_MECH_LAPLACE)
			{
				/* the sampler's lambda (rounding covered by the margins) */
				for (int j = 0; j < ns->repeats; j++)
				{
					lambda[n] = (double) ns->laplace.s / (double) ns->laplace.t;
					d[n++] = (double) ns->sens_units;
				}
			}
			else
			{
				double		inv = dp_div_up((double) ns->sens_units, ns->sigma_units);

				mu2 = dp_add_up(mu2, dp_mul_up(dp_mul_up(inv, inv), (double) ns->repeats));
			}
		}
	}
	if (!group)
		return;
	for (int i = 0; i < norders; i++)
	{
		double		a = orders[i];
		double		v = dp_rdp_sampled_releases(rate, n, lambda, d, mu2, a);

		if (mu2 == 0)
			v = Min(v, Min(epsilon, a * epsilon * epsilon / 2));
		curve[i] = dp_add_up(curve[i], dp_mul_up(v, RDP_MARGIN));
	}
}

/*
 * The private selection of a priced call, added to (epsilon, delta): what
 * the role's budget composes beside its Renyi DP curve (sums rounded up).
 */
void
dp_release_add_selection(const DpRelease *r, double *epsilon, double *delta)
{
	if (r->call.kind != DP_SELECT)
		return;
	*epsilon = dp_add_up(*epsilon, r->selection.epsilon);
	*delta = dp_add_up(*delta, r->selection.delta);
}
