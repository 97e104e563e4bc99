/*-------------------------------------------------------------------------
 *
 * plan_units.h
 *	  Privacy units in the guard's plan check.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_PLAN_UNITS_H
#define DP_AGG_PLAN_UNITS_H

#include "nodes/plannodes.h"

#include "catalog.h"
#include "plan_input.h"
#include "sampling.h"

/* the calls of a privacy unit rewrite, met below its level-3 node */
typedef struct UnitInput
{
	int			groups;			/* k, from level 2; 0 if there is none */
	bool		picked;			/* level 1 is the fused path of k = 1 */
	Agg		   *bound_agg;		/* level 1 */
	List	   *bound;			/* its Aggrefs */
	List	   *partial;		/* partial level-3 Aggrefs (parallel plans) */
} UnitInput;

extern DpUnitLevel dp_guard_unit_level(PlanWalk *w, List *aggrefs);
extern void dp_guard_unit_input(PlanWalk *w, Plan *plan, UnitInput *ui);
extern void dp_guard_scan_units(PlanWalk *w, InputWalk *in, bool units);
extern bool dp_guard_below_unit_rewrite(Plan *plan);
extern int	dp_guard_count_sampled(Plan *plan);
extern void dp_guard_unit_sample(PlanWalk *w, InputWalk *in, const DpSampling *sampling,
								 bool units);

#endif							/* DP_AGG_PLAN_UNITS_H */
