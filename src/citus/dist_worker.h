/*-------------------------------------------------------------------------
 *
 * dist_worker.h
 *	  DP statements on Citus tables: the signed fragments on a worker.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_DIST_WORKER_H
#define DP_AGG_DIST_WORKER_H

#include "nodes/params.h"
#include "nodes/plannodes.h"

extern List *dp_dist_fragment_releases(PlannedStmt *stmt, int instrument_options);
extern List *dp_dist_check_fragment_query(Query *q, ParamListInfo params);
extern void dp_dist_check_fragment_plan(PlannedStmt *stmt, List *checked);

#endif							/* DP_AGG_DIST_WORKER_H */
