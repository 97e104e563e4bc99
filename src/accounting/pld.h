/*-------------------------------------------------------------------------
 *
 * pld.h
 *	  Privacy loss distributions: pessimistic discretization, composition by
 *	  FFT, and the epsilon of a composition at a delta.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_PLD_H
#define DP_AGG_PLD_H

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

/* count releases of one kind */
typedef struct DpPldTerm
{
	DpPldKind	kind;
	double		count;			/* a non-negative integer below 2^53 */
} DpPldTerm;

/* most kinds composed at once (a role's history and a statement) */
#define DP_PLD_MAX_KINDS 32
/* most releases of one kind composed at once */
#define DP_PLD_MAX_COUNT ((double) (INT64CONST(1) << 40))

extern bool dp_pld_kind_equal(const DpPldKind *a, const DpPldKind *b);
extern int	dp_pld_add_term(DpPldTerm *terms, int n, const DpPldKind *kind, double count);
extern bool dp_pld_epsilon(const DpPldTerm *terms, int n, double delta, double *epsilon);
extern bool dp_pld_max_repeats(const DpPldTerm *history, int nh, const DpPldTerm *stmt,
							   int ns, double epsilon, double delta, int64 cap,
							   int64 *repeats);

#endif							/* DP_AGG_PLD_H */
