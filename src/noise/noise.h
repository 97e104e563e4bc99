/*-------------------------------------------------------------------------
 *
 * noise.h
 *	  Exact samplers for the discrete Laplace and discrete Gaussian.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_NOISE_H
#define DP_AGG_NOISE_H

#include "c.h"

#ifndef HAVE_INT128
#error "dp_agg needs a compiler with 128-bit integers"
#endif

/*
 * Largest noise parameters the samplers accept, in grid units.  The
 * calibration chooses grids that keep every release far inside them and
 * reports an error for settings that would not fit (an absurdly small
 * epsilon on a count).
 */
#define DP_MAX_LAPLACE_SCALE	((double) ((uint64) 1 << 62))
#define DP_MAX_GAUSSIAN_SIGMA	((double) ((uint64) 1 << 48))
#define DP_MIN_GAUSSIAN_SIGMA	(1.0 / 256.0)

/* Discrete Laplace with scale t/s: P[X = x] proportional to exp(-|x| s / t) */
typedef struct DpLaplaceParam
{
	uint64		t;
	uint64		s;
} DpLaplaceParam;

/* Discrete Gaussian with variance parameter sigma^2 = p/q */
typedef struct DpGaussianParam
{
	uint128		p;
	uint128		q;
} DpGaussianParam;

extern bool dp_bernoulli_exp_u64(uint64 num, uint64 den);
extern int128 dp_sample_discrete_laplace(DpLaplaceParam param);
extern int128 dp_sample_discrete_gaussian(DpGaussianParam param);

#endif							/* DP_AGG_NOISE_H */
