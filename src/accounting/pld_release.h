/*-------------------------------------------------------------------------
 *
 * pld_release.h
 *	  The privacy loss distribution of one kind of release: its delta curve
 *	  and its discretization.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_PLD_RELEASE_H
#define DP_AGG_PLD_RELEASE_H

#include "c.h"

typedef enum DpPldMechanism
{
	DP_PLD_LAPLACE,				/* discrete Laplace, P[X = x] ~ exp(-|x| / scale) */
	DP_PLD_GAUSSIAN,			/* discrete Gaussian, P[X = x] ~ exp(-x^2 / (2 scale^2)) */
	DP_PLD_RR					/* randomized response at epsilon = scale, sens 1:
								 * dominates every scale-DP mechanism (top_k.c) */
} DpPldMechanism;

/*
 * One kind of noisy release, in grid units: the noise parameter, the
 * sensitivity (a positive integer) and the Poisson sampling rate (1: the
 * table is read whole).  Releases of the same kind have the same privacy
 * loss distribution.
 */
typedef struct DpPldKind
{
	DpPldMechanism mechanism;
	double		scale;
	double		sens;
	double		rate;
} DpPldKind;

/* largest vector (bins); beyond, the certificate is not available */
#define PLD_MAX_BINS (1 << 19)

extern bool dp_pld_kind_omega(const DpPldKind *k, double h, int dir, double **omega_out,
							  int *J_out, double *inf);
extern double dp_pld_omega_variance(const double *omega, int J, double h);

#endif							/* DP_AGG_PLD_RELEASE_H */
