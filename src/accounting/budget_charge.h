/*-------------------------------------------------------------------------
 *
 * budget_charge.h
 *	  What one statement's charge does to one budget row, in memory: the
 *	  checks and sums the charger makes, and that a backend deciding a
 *	  charge itself must make alike (doc/charging-design.md).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_BUDGET_CHARGE_H
#define DP_AGG_BUDGET_CHARGE_H

#include "budget_store.h"
#include "pld_state.h"

/* the amounts one statement charges each budget that pays for it */
typedef struct DpChargeAmounts
{
	double		epsilon;
	double		delta;
	double		selection_epsilon;	/* its private selections */
	double		selection_delta;
} DpChargeAmounts;

extern bool dp_budget_lifetime_admits(const DpBudgetRow *row, const DpChargeAmounts *a);
extern bool dp_budget_row_admits(const DpBudget *b, const DpChargeAmounts *a,
								 const double *curve, double *composed);
extern void dp_budget_row_add(DpBudgetRow *row, const DpChargeAmounts *a, const double *curve,
							  const DpPldState *stmt);

#endif							/* DP_AGG_BUDGET_CHARGE_H */
