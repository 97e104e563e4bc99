/*-------------------------------------------------------------------------
 *
 * budget.h
 *	  Privacy budgets: the price of a statement and its durable charge.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_BUDGET_H
#define DP_AGG_BUDGET_H

#include "executor/execdesc.h"

/* SQLSTATEs of budget errors (class PB: privacy budget) */
#define ERRCODE_DP_BUDGET_EXHAUSTED	MAKE_SQLSTATE('P','B','0','0','1')
#define ERRCODE_DP_NO_BUDGET		MAKE_SQLSTATE('P','B','0','0','2')
#define ERRCODE_DP_CHARGE_FAILED	MAKE_SQLSTATE('P','B','0','0','3')
#define ERRCODE_DP_CAP_EXCEEDED		MAKE_SQLSTATE('P','B','0','0','4')

extern void dp_charge(QueryDesc *queryDesc, List *releases);
extern void dp_statement_relations(PlannedStmt *stmt, List **read, List **ancestors);
extern void dp_budget_init(void);
extern void dp_fold_for_readers(PlannedStmt *stmt);
extern bool dp_fold_journal(void);

#endif							/* DP_AGG_BUDGET_H */
