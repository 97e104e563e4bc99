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
extern bool dp_pld_state_admits(Oid role, double epsilon, double delta,
								const DpPldState *history, const DpPldState *stmt);
extern void dp_pld_state_note(Oid role, double epsilon, double delta,
							  const DpPldState *history, const DpPldState *stmt);

#endif							/* DP_AGG_PLD_STATE_H */
