/*-------------------------------------------------------------------------
 *
 * rdp_laplace.h
 *	  Exact Renyi DP of the Poisson-subsampled discrete Laplace mechanism.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_RDP_LAPLACE_H
#define DP_AGG_RDP_LAPLACE_H

#include "c.h"

extern double dp_rdp_sampled_discrete_laplace(double q, double lambda, double d,
											  double alpha);

#endif							/* DP_AGG_RDP_LAPLACE_H */
