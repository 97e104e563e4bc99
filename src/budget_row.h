/*-------------------------------------------------------------------------
 *
 * budget_row.h
 *	  Decoding one row of dp_agg.budget into a DpBudget.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_BUDGET_ROW_H
#define DP_AGG_BUDGET_ROW_H

#include "access/htup.h"
#include "access/tupdesc.h"

#include "calibrate.h"

/*
 * The select list that dp_budget_row_decode reads, in this order, from
 * dp_agg.budget or from the view dp_agg.my_budget.
 */
#define DP_BUDGET_ROW_COLUMNS \
	"epsilon_limit, delta_limit, epsilon_spent, delta_spent, accounting = 'rdp', rdp, " \
	"selection_epsilon, selection_delta"

extern void dp_budget_row_decode(HeapTuple tup, TupleDesc desc, DpBudget *b);

#endif							/* DP_AGG_BUDGET_ROW_H */
