/*-------------------------------------------------------------------------
 *
 * guard.h
 *	  Which statements may compute DP aggregates: the check of the query.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_GUARD_H
#define DP_AGG_GUARD_H

#include "nodes/parsenodes.h"

extern bool dp_query_has_dp(Query *query);
extern void dp_guard_query(Query *query);
extern RangeTblRef *dp_guard_fact(Query *q);

#endif							/* DP_AGG_GUARD_H */
