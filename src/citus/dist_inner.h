/*-------------------------------------------------------------------------
 *
 * dist_inner.h
 *	  DP statements on Citus tables: the inner statement of a dist_run scan.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_DIST_INNER_H
#define DP_AGG_DIST_INNER_H

#include "nodes/parsenodes.h"
#include "nodes/plannodes.h"

#include "compat.h"

extern FuncExpr *dp_dist_run_of_scan(Plan *plan);
extern void dp_dist_collect_runs(Plan *plan, List **runs);
DP_NORETURN extern void dp_dist_bad_inner(void);
extern Query *dp_dist_inner_query(FuncExpr *run, int *unit_groups);
extern Query *dp_dist_inner_of(FuncExpr *run, int *unit_groups);

#endif							/* DP_AGG_DIST_INNER_H */
