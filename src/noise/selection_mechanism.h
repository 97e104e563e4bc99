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

#include "selection_gaussian.h"

/*
 * Largest number of steps of the release probability's recursion, with
 * their table (8 bytes each): beyond, epsilon is too small to use.
 */
#define DP_SELECTION_MAX_STEPS ((int64) 1 << 20)

/* the mechanisms (selection_mechanism.c chooses one) */
typedef enum DpSelectionKind
{
	DP_SELECTION_OPTIMAL,		/* the optimal mechanism at (eps/k, delta/k) */
	DP_SELECTION_GAUSSIAN		/* Gaussian thresholding (selection_gaussian.c) */
} DpSelectionKind;

/*
 * How a group of n units is released: with probability pi[min(n, steps)],
 * the optimal mechanism at (unit_epsilon, unit_delta), or by Gaussian
 * thresholding.
 */
typedef struct DpSelectionSpec
{
	double		epsilon;		/* what the selection costs */
	double		delta;
	int			max_groups;		/* k: groups one unit contributes to */
	DpSelectionKind kind;
	int64		half;			/* smallest n released with probability >= 1/2 */
	/* DP_SELECTION_OPTIMAL */
	double		unit_epsilon;	/* epsilon/k and delta/k, rounded down */
	double		unit_delta;
	int64		threshold;		/* smallest n released with certainty, or
								 * where pi stops growing */
	int64		steps;			/* pi[0..steps] */
	double	   *pi;
	/* DP_SELECTION_GAUSSIAN */
	DpSelectionGaussian gauss;
} DpSelectionSpec;

extern const char *dp_selection_mechanism_name(const DpSelectionSpec *spec);

extern void dp_selection_plan(DpSelectionSpec *spec, double epsilon, double delta,
							  int max_groups);
extern double dp_selection_probability(const DpSelectionSpec *spec, int64 n);
extern bool dp_selection_draw(const DpSelectionSpec *spec, int64 n);

#endif							/* DP_AGG_SELECTION_MECHANISM_H */
