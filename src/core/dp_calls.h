/*-------------------------------------------------------------------------
 *
 * dp_calls.h
 *	  The DP aggregate calls of a query level, and of a plan node: the one
 *	  definition every module uses.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_DP_CALLS_H
#define DP_AGG_DP_CALLS_H

#include "nodes/parsenodes.h"
#include "nodes/plannodes.h"

extern List *dp_level_calls(Query *q);
extern bool dp_level_has_calls(Query *q);
extern bool dp_level_has_window_calls(Query *q);
extern bool dp_level_has_other_aggregates(Query *q, bool outer_too);
extern bool dp_tree_has_calls(Query *q, bool windows);
extern bool dp_expr_has_calls(Node *expr);
extern List *dp_plan_node_calls(Plan *plan, bool *window);
extern bool dp_is_call(Node *node);

#endif							/* DP_AGG_DP_CALLS_H */
