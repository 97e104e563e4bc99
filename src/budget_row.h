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
 * dp_agg.budget or from the view dp_agg.my_budget; with the SQL objects of
 * versions before 0.3, which have no sums of the private selections, the
 * first six columns only (their sums are 0: no selection was charged).
 */
#define DP_BUDGET_ROW_COLUMNS_0_2 \
	"epsilon_limit, delta_limit, epsilon_spent, delta_spent, accounting = 'rdp', rdp"
#define DP_BUDGET_ROW_COLUMNS \
	DP_BUDGET_ROW_COLUMNS_0_2 ", selection_epsilon, selection_delta"

extern bool dp_budget_has_selection_sums(void);

extern void dp_budget_row_decode(HeapTuple tup, TupleDesc desc, DpBudget *b);

#endif							/* DP_AGG_BUDGET_ROW_H */
