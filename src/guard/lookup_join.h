/*-------------------------------------------------------------------------
 *
 * lookup_join.h
 *	  Joins of the input of DP aggregates to lookup tables, on a key unique
 *	  in the lookup table.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_LOOKUP_JOIN_H
#define DP_AGG_LOOKUP_JOIN_H

#include "nodes/parsenodes.h"
#include "nodes/plannodes.h"
#include "utils/snapshot.h"

extern void dp_lookup_check_query(Query *query);
extern void dp_lookup_check_plan(PlannedStmt *stmt, Snapshot snapshot);

#endif							/* DP_AGG_LOOKUP_JOIN_H */
