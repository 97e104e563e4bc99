/*-------------------------------------------------------------------------
 *
 * guard.h
 *	  Which statements may compute DP aggregates.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_GUARD_H
#define DP_AGG_GUARD_H

#include "nodes/parsenodes.h"
#include "nodes/plannodes.h"

#include "catalog.h"
#include "sampling.h"

/* A DP aggregate call found in a plan. */
typedef struct DpPlanCall
{
	Aggref	   *aggref;
	Aggref	   *args_from;		/* the Aggref with its arguments: itself, or
								 * for a combining node its partial Aggref */
	const DpCallInfo *info;
	Agg		   *agg;			/* the node that evaluates it */
	bool		finalize;		/* its final function runs here: it is priced */
	DpSampling	sampling;		/* how its input table is read */
	int			unit_groups;	/* privacy units: k, 0 for rows */
	Oid			unit_relid;		/* privacy units: the relation */
} DpPlanCall;

extern bool dp_query_has_dp(Query *query);
extern void dp_guard_query(Query *query);
extern RangeTblRef *dp_guard_fact(Query *q);
extern bool dp_plan_reads_relation(Plan *plan);
extern List *dp_plan_children(Plan *plan);
extern List *dp_plan_expressions(Plan *plan);
extern List *dp_guard_plan(PlannedStmt *stmt, bool validate);

#endif							/* DP_AGG_GUARD_H */
