/*-------------------------------------------------------------------------
 *
 * pld_state.h
 *	  The per-role state of 'pld' accounting and the admission by it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_PLD_STATE_H
#define DP_AGG_PLD_STATE_H

#include "pld.h"
#include "release.h"

/* releases by kind since the last reset (dp_agg.budget.pld) */
typedef struct DpPldState
{
	bool		saturated;		/* untracked: no certificate until the next reset */
	int			n;
	DpPldTerm	terms[DP_PLD_MAX_KINDS];
} DpPldState;

extern void dp_release_add_pld(const DpRelease *r, DpPldState *state);
extern void dp_pld_state_add(DpPldState *state, const DpPldKind *kind, double count);
extern void dp_pld_state_merge(DpPldState *state, const DpPldState *other);
extern void dp_pld_state_decode(Datum d, bool isnull, DpPldState *state);
extern char *dp_pld_state_encode(const DpPldState *state);
/* compositions known to meet (fit) and not to meet (unfit) the limits */
typedef struct DpPldFrontier
{
	double		epsilon;		/* the limits they were computed at */
	double		delta;
	bool		has_fit;
	bool		has_unfit;
	DpPldState	fit;
	DpPldState	unfit;
} DpPldFrontier;

extern bool dp_pld_state_admits(double epsilon, double delta, const DpPldState *history,
								const DpPldState *stmt, DpPldFrontier *frontier,
								bool *changed);
extern void dp_pld_frontier_decode(Datum d, bool isnull, DpPldFrontier *f);
extern char *dp_pld_frontier_encode(const DpPldFrontier *f);

#endif							/* DP_AGG_PLD_STATE_H */
