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
extern Datum dp_pld_state_jsonb(const DpPldState *state);
/*
 * The role's frontier: a composition known to meet the limits it was
 * computed at, with its certificate (the epsilon at delta of
 * dp_pld_epsilon): every history it covers is admitted without composing.
 */
typedef struct DpPldFrontier
{
	double		epsilon;		/* the limits it was computed at */
	double		delta;
	bool		has_fit;
	DpPldState	fit;
	double		fit_epsilon;	/* dp_pld_epsilon of fit at delta (<= epsilon) */
} DpPldFrontier;

/* what a backend's composition found (pld_state.c, dp_pld_certify) */
typedef enum DpPldCertKind
{
	DP_PLD_CERT_NONE = 0,
	DP_PLD_CERT_FIT,			/* state meets the limits: its epsilon <= limit */
	DP_PLD_CERT_REFUSED			/* state (history + statement) does not, or is
								 * not available */
} DpPldCertKind;

typedef struct DpPldCertificate
{
	DpPldCertKind kind;
	double		epsilon_limit;	/* the limits it was computed for */
	double		delta_limit;
	double		epsilon;		/* dp_pld_epsilon of state at delta_limit */
	DpPldState	state;
} DpPldCertificate;

extern DpPldState dp_pld_state_after(const DpPldState *history, const DpPldState *stmt);
extern bool dp_pld_state_equal(const DpPldState *a, const DpPldState *b);
extern bool dp_pld_state_covers(const DpPldState *a, const DpPldState *b);
extern bool dp_pld_frontier_admits(const DpPldFrontier *f, double epsilon, double delta,
								   const DpPldState *after);
extern void dp_pld_frontier_adopt(DpPldFrontier *f, const DpPldCertificate *cert);
extern void dp_pld_certify(double epsilon, double delta, const DpPldState *history,
						   const DpPldState *stmt, DpPldCertificate *cert);
extern bool dp_pld_state_epsilon(const DpPldState *state, double delta, double *epsilon);
extern void dp_pld_frontier_decode(Datum d, bool isnull, DpPldFrontier *f);
extern char *dp_pld_frontier_encode(const DpPldFrontier *f);

#endif							/* DP_AGG_PLD_STATE_H */
