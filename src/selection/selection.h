/*-------------------------------------------------------------------------
 *
 * selection.h
 *	  Private selection of GROUP BY keys: the rewrite of a DP statement.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_SELECTION_H
#define DP_AGG_SELECTION_H

#include "nodes/parsenodes.h"
#include "nodes/plannodes.h"
#include "nodes/primnodes.h"

extern void dp_selection_rewrite(Query *query, int max_groups_contributed);
extern Aggref *dp_selection_call(int max_groups_contributed);
extern void dp_selection_fuse(PlannedStmt *stmt);
extern bool dp_selection_fused(const Aggref *select);
extern Aggref *dp_selection_host(List *aggrefs, const Aggref *select);

#endif							/* DP_AGG_SELECTION_H */
