/*-------------------------------------------------------------------------
 *
 * plan_guard.h
 *	  The guard's check of a plan, and the DP calls it evaluates.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_PLAN_GUARD_H
#define DP_AGG_PLAN_GUARD_H

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

extern List *dp_guard_plan(PlannedStmt *stmt, bool validate);

#endif							/* DP_AGG_PLAN_GUARD_H */
