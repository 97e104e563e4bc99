/*-------------------------------------------------------------------------
 *
 * admission.h
 *	  Budget admission: whether a role's budget admits a statement's price.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_ADMISSION_H
#define DP_AGG_ADMISSION_H

#include "calibrate.h"

/* a role's budget, as dp_budget_row_decode reads it (budget_row.c) */
typedef struct DpBudget
{
	double		epsilon_limit;
	double		delta_limit;
	double		epsilon_spent;
	double		delta_spent;
	bool		renyi;			/* accounting 'rdp' or 'pld' */
	double		rdp[DP_RDP_ORDERS];	/* composed Renyi DP curve */
	/* the private selections of GROUP BY keys, composed beside the curve */
	double		selection_epsilon;	/* sum of their epsilons */
	double		selection_delta;	/* sum of their deltas */
} DpBudget;

extern bool dp_budget_admits(const DpBudget *b, double epsilon, double delta,
							 const double *curve, double selection_epsilon,
							 double selection_delta, double *composed);

#endif							/* DP_AGG_ADMISSION_H */
