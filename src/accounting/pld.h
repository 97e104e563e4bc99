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

#include "pld_release.h"

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
