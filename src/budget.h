/*-------------------------------------------------------------------------
 *
 * budget.h
 *	  Privacy budgets: the catalog and the durable charge.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_BUDGET_H
#define DP_AGG_BUDGET_H

#include "executor/execdesc.h"

extern void dp_charge(QueryDesc *queryDesc, List *releases);
extern void dp_budget_init(void);

/* hooks.c */
extern List *dp_price_plan(PlannedStmt *stmt, ParamListInfo params, bool validate);

#endif							/* DP_AGG_BUDGET_H */
