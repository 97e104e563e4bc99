/*-------------------------------------------------------------------------
 *
 * protect_stats.h
 *	  No row counts of protected relations from statistics.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_PROTECT_STATS_H
#define DP_AGG_PROTECT_STATS_H

#include "nodes/plannodes.h"

extern bool dp_stats_function(Oid fn_oid);
extern bool dp_stats_rewrite_query(Query *parse);
extern bool dp_stats_finish_plan(PlannedStmt *stmt);
extern void dp_stats_check_start(PlannedStmt *stmt);
extern void dp_stats_check_function(Oid fn_oid);
extern void dp_stats_planner_init(void);

#endif							/* DP_AGG_PROTECT_STATS_H */
