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
#include "utils/array.h"

#include "admission.h"

/*
 * The select list that dp_budget_row_decode reads, in this order, from
 * dp_agg.budget or from the view dp_agg.my_budget (more columns may follow).
 * The Renyi certificate serves 'rdp' and 'pld' roles alike.  The SQL
 * objects of versions before 0.3 have no sums of the private selections:
 * with them, DP_BUDGET_ROW_COLUMNS_0_2 reads those sums as 0 (no selection
 * was charged).
 */
#define DP_BUDGET_ROW_COLUMNS_COMMON \
	"epsilon_limit, delta_limit, epsilon_spent, delta_spent, accounting IN ('rdp', 'pld'), rdp"
#define DP_BUDGET_ROW_COLUMNS \
	DP_BUDGET_ROW_COLUMNS_COMMON ", selection_epsilon, selection_delta"
#define DP_BUDGET_ROW_COLUMNS_0_2 \
	DP_BUDGET_ROW_COLUMNS_COMMON ", 0::pg_catalog.float8, 0::pg_catalog.float8"

/* the number of columns dp_budget_row_decode reads */
#define DP_BUDGET_ROW_NCOLUMNS 8

/* what is wrong with a stored Renyi DP curve (dp_rdp_curve_check) */
typedef enum DpCurveFault
{
	DP_CURVE_OK,
	DP_CURVE_SHAPE,				/* not one dimension of float8 */
	DP_CURVE_LENGTH,			/* not one value per order */
	DP_CURVE_VALUE				/* a NULL, NaN or negative value */
} DpCurveFault;

extern DpCurveFault dp_rdp_curve_check(ArrayType *a, double *curve, int *where);

extern bool dp_budget_has_selection_sums(void);

extern void dp_budget_values_decode(const Datum *values, const bool *isnull, DpBudget *b);
extern void dp_budget_row_decode(HeapTuple tup, TupleDesc desc, DpBudget *b);

#endif							/* DP_AGG_BUDGET_ROW_H */
