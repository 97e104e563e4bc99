/*-------------------------------------------------------------------------
 *
 * rdp_laplace.h
 *	  Exact Renyi DP of Poisson-subsampled discrete Laplace releases.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_RDP_LAPLACE_H
#define DP_AGG_RDP_LAPLACE_H

#include "c.h"

extern double dp_rdp_sampled_discrete_laplace(double q, double lambda, double d,
											  double alpha);
extern double dp_rdp_sampled_releases(double q, int n, const double *lambda, const double *d,
									  double gauss_mu2, double alpha);

#endif							/* DP_AGG_RDP_LAPLACE_H */
