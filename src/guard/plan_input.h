/*-------------------------------------------------------------------------
 *
 * plan_input.h
 *	  The input of a DP aggregation node in a plan: one table, row by row.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_PLAN_INPUT_H
#define DP_AGG_PLAN_INPUT_H

#include "nodes/plannodes.h"

#include "sampling.h"

/* the walk of a plan by the guard's plan check (plan_guard.c) */
typedef struct PlanWalk
{
	PlannedStmt *stmt;
	bool		validate;
	List	   *calls;			/* DpPlanCall * */
	Bitmapset  *cte_plans;		/* plan_ids of CTE subplans */
	int			unit_groups;	/* k of the privacy unit being visited, or 0 */
	Oid			unit_relid;		/* its relation */
	int			unit_filters;	/* filters of samples of units in their place */
} PlanWalk;

/* the input of one DP aggregation node */
typedef struct InputWalk
{
	List	   *scans;			/* Scan *: the relation the DP aggregates read */
	List	   *lookups;		/* Scan *: the lookup tables joined to it */
	bool		inheritance;	/* under an Append of one partitioned table */
	List	   *partial_aggrefs;	/* DP Aggrefs of partial Agg nodes */
	List	   *domains;		/* the public domain's rows (public_domain.c) */
} InputWalk;

extern List *dp_guard_node_aggrefs(Plan *plan);
extern Plan *dp_guard_domain_rows(PlanWalk *w, Plan *plan);
extern void dp_guard_check_input(PlanWalk *w, Plan *input, InputWalk *in, DpSampling *sampling);
extern void dp_guard_check_lookups(PlanWalk *w, InputWalk *in);

#endif							/* DP_AGG_PLAN_INPUT_H */
