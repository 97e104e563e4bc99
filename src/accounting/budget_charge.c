/*-------------------------------------------------------------------------
 *
 * budget_charge.c
 *	  What one statement's charge does to one budget row, in memory.
 *
 * The charger decides each request against the rows it read (charger.c,
 * admits and charge_budget); a backend deciding a charge itself, against a
 * row leased to shared memory (doc/charging-design.md), must reach the same
 * verdict and the same sums, rounded the same way.  Both call these.  The
 * certificates of 'pld' budgets are not here: only the charger checks
 * them, against the history it holds.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "admission.h"
#include "budget_charge.h"
#include "calibrate.h"

/* within the lifetime limits, if the row has them? */
bool
dp_budget_lifetime_admits(const DpBudgetRow *row, const DpChargeAmounts *a)
{
	return !row->has_lifetime ||
		(dp_add_up(row->lifetime_epsilon_spent, a->epsilon) <= row->lifetime_epsilon_limit &&
		 dp_add_up(row->lifetime_delta_spent, a->delta) <= row->lifetime_delta_limit);
}

/* within the limits of the window, by the sums or the Renyi certificate? */
bool
dp_budget_row_admits(const DpBudget *b, const DpChargeAmounts *a, const double *curve,
					 double *composed)
{
	return dp_budget_admits(b, a->epsilon, a->delta, curve, a->selection_epsilon,
							a->selection_delta, composed);
}

/* add the charge to the row: its releases by kind, the sums (rounded up), the curve */
void
dp_budget_row_add(DpBudgetRow *row, const DpChargeAmounts *a, const double *curve,
				  const DpPldState *stmt)
{
	DpBudget   *b = &row->b;

	dp_pld_state_merge(&row->pld, stmt);
	b->epsilon_spent = dp_add_up(b->epsilon_spent, a->epsilon);
	b->delta_spent = dp_add_up(b->delta_spent, a->delta);
	for (int i = 0; i < DP_RDP_ORDERS; i++)
		b->rdp[i] = dp_add_up(b->rdp[i], curve[i]);
	b->selection_epsilon = dp_add_up(b->selection_epsilon, a->selection_epsilon);
	b->selection_delta = dp_add_up(b->selection_delta, a->selection_delta);
	row->lifetime_epsilon_spent = dp_add_up(row->lifetime_epsilon_spent, a->epsilon);
	row->lifetime_delta_spent = dp_add_up(row->lifetime_delta_spent, a->delta);
}
