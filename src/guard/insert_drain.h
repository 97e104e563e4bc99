/*-------------------------------------------------------------------------
 *
 * insert_drain.h
 *	  INSERT ... SELECT over a protected relation: the target receives its
 *	  first row only after every row has been read.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_INSERT_DRAIN_H
#define DP_AGG_INSERT_DRAIN_H

#include "nodes/plannodes.h"

extern void dp_insert_drain_init(void);
extern void dp_insert_drain_plan(PlannedStmt *stmt);
extern void dp_insert_drain_check(PlannedStmt *stmt, Oid relid);
extern bool dp_insert_drain_node(const Plan *plan);

#endif							/* DP_AGG_INSERT_DRAIN_H */
