/*-------------------------------------------------------------------------
 *
 * dist_plan.h
 *	  DP statements on Citus tables: the coordinator's rewrite.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_DIST_PLAN_H
#define DP_AGG_DIST_PLAN_H

#include "nodes/parsenodes.h"

/* the name of the privacy unit column of an inner statement (first) */
#define DP_DIST_UNIT_COLUMN "dp_unit"

extern Oid	dp_dist_func(const char *name, int nargs, const Oid *argtypes);
extern Oid	dp_dist_state_type(void);
extern bool dp_is_dist_function(Oid funcid, const char *name);
extern bool dp_is_partial_sum(Aggref *aggref);
extern void dp_dist_set_inner(bool running);
extern Query *dp_dist_rewrite(Query *query, Oid *citus_relid);

#endif							/* DP_AGG_DIST_PLAN_H */
