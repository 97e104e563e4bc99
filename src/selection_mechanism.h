/*-------------------------------------------------------------------------
 *
 * selection_mechanism.h
 *	  The private partition selection mechanism: which groups are released.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_SELECTION_MECHANISM_H
#define DP_AGG_SELECTION_MECHANISM_H

#include "c.h"

/*
 * Largest number of steps of the release probability's recursion, with
 * their table (8 bytes each): beyond, epsilon is too small to use.
 */
#define DP_SELECTION_MAX_STEPS ((int64) 1 << 20)

/*
 * How a group of n units is released: with probability pi[min(n, steps)],
 * the optimal mechanism at (unit_epsilon, unit_delta).
 */
typedef struct DpSelectionSpec
{
	double		epsilon;		/* what the selection costs */
	double		delta;
	int			max_groups;		/* k: groups one unit contributes to */
	double		unit_epsilon;	/* epsilon/k and delta/k, rounded down */
	double		unit_delta;
	int64		threshold;		/* smallest n released with certainty, or
								 * where pi stops growing */
	int64		steps;			/* pi[0..steps] */
	double	   *pi;
} DpSelectionSpec;

extern const char *const dp_selection_mechanism_name;

extern void dp_selection_plan(DpSelectionSpec *spec, double epsilon, double delta,
							  int max_groups);
extern double dp_selection_probability(const DpSelectionSpec *spec, int64 n);
extern bool dp_selection_draw(const DpSelectionSpec *spec, int64 n);

#endif							/* DP_AGG_SELECTION_MECHANISM_H */
