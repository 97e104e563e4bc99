/*-------------------------------------------------------------------------
 *
 * selection_gaussian.h
 *	  Gaussian thresholding: private partition selection for units in
 *	  several groups.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_SELECTION_GAUSSIAN_H
#define DP_AGG_SELECTION_GAUSSIAN_H

#include "noise.h"

/*
 * Largest sigma considered: beyond, the tail sums of the release
 * probability would take too many terms, and the split mechanism is used.
 */
#define DP_SELECTION_GAUSSIAN_MAX_SIGMA 4096.0

/*
 * A group of n units is released when n + Z >= tau, Z discrete Gaussian of
 * variance parameter `variance` (exactly the sampler's p/q).
 */
typedef struct DpSelectionGaussian
{
	double		variance;		/* sigma^2, a multiple of 2^-20 */
	double		sigma;			/* sqrt(variance), rounded up */
	double		delta_noise;	/* delta_1: the noisy counts */
	double		delta_threshold;	/* delta_2: the groups of one unit */
	int64		tau;
	DpGaussianParam param;
} DpSelectionGaussian;

extern bool dp_selection_gaussian_plan(DpSelectionGaussian *g, double epsilon,
									   double delta, int max_groups);
extern double dp_selection_gaussian_probability(const DpSelectionGaussian *g, int64 n);
extern bool dp_selection_gaussian_draw(const DpSelectionGaussian *g, int64 n);

#endif							/* DP_AGG_SELECTION_GAUSSIAN_H */
