/*-------------------------------------------------------------------------
 *
 * rewrite_nodes.h
 *	  The query nodes dp_agg's rewrites build: a SELECT, a sub-query in
 *	  a range table.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_REWRITE_NODES_H
#define DP_AGG_REWRITE_NODES_H

#include "nodes/parsenodes.h"

extern Query *dp_new_select(void);
extern RangeTblEntry *dp_subquery_rte(Query *sub, const char *name, bool in_from);

#endif							/* DP_AGG_REWRITE_NODES_H */
