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
#include "nodes/primnodes.h"

extern void dp_selection_rewrite(Query *query, int max_groups_contributed);
extern Aggref *dp_selection_call(int max_groups_contributed);

#endif							/* DP_AGG_SELECTION_H */
