/*-------------------------------------------------------------------------
 *
 * release_noise.h
 *	  The noise of one release: its mechanism and exact sampler
 *	  parameters, calibrated to its price.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_RELEASE_NOISE_H
#define DP_AGG_RELEASE_NOISE_H

#include "noise.h"
#include "sampling.h"

typedef enum DpMechanism
{
	DP_MECH_NONE,				/* sensitivity 0: nothing to hide */
	DP_MECH_LAPLACE,
	DP_MECH_GAUSSIAN
} DpMechanism;

/* One noisy release (a count, or a sum): exact sampler parameters. */
typedef struct DpNoiseSpec
{
	DpMechanism mechanism;
	double		epsilon;		/* what it costs */
	double		delta;
	double		base_epsilon;	/* what the noise is calibrated to */
	double		base_delta;
	int			grid_exp;		/* released value = units * 2^grid_exp */
	uint64		sens_units;		/* sensitivity in units */
	double		sensitivity;	/* sens_units * 2^grid_exp */
	double		noise_scale;	/* Laplace scale or sigma, value units */
	double		sigma_units;	/* Gaussian: sigma in grid units */
	const char *calibration;	/* under sampling: "amplified" or "renyi" */
	double		joint_mu;		/* Gaussian calibrated jointly (joint.c): the
								 * statement's mu, else 0 */
	int			repeats;		/* independent releases of this noise per
								 * group (a quantile tree's levels), >= 1 */
	DpLaplaceParam laplace;
	DpGaussianParam gaussian;
} DpNoiseSpec;

extern double dp_release_noise_multiplier(double epsilon, double delta,
										  const DpSampling *sampling);
extern void dp_release_plan_noise(DpNoiseSpec *ns, const char *fname, double epsilon,
								  double delta, uint64 sens_units, int grid_exp,
								  const DpSampling *sampling);
extern const char *dp_mechanism_name(DpMechanism mech);
extern int128 dp_noise_draw(const DpNoiseSpec *spec);

#endif							/* DP_AGG_RELEASE_NOISE_H */
