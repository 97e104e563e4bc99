/*-------------------------------------------------------------------------
 *
 * plan_nodes.h
 *	  The children and expressions of a plan node, and whether it reads rows.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_PLAN_NODES_H
#define DP_AGG_PLAN_NODES_H

#include "nodes/plannodes.h"

extern bool dp_plan_reads_relation(Plan *plan);
extern List *dp_plan_children(Plan *plan);
extern List *dp_plan_expressions(Plan *plan);

#endif							/* DP_AGG_PLAN_NODES_H */
