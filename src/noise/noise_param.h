/*-------------------------------------------------------------------------
 *
 * noise_param.h
 *	  Exact sampler parameters of a noise scale given as a double.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_NOISE_PARAM_H
#define DP_AGG_NOISE_PARAM_H

#include "noise.h"

/* the discrete Laplace parameter t/s: the smallest dyadic t/s >= b */
extern DpLaplaceParam dp_laplace_param(double b);

/* the discrete Gaussian parameter p/q = v exactly */
extern DpGaussianParam dp_gaussian_param(double v);

#endif							/* DP_AGG_NOISE_PARAM_H */
