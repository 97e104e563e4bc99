/*-------------------------------------------------------------------------
 *
 * side_reads.h
 *	  A DP statement reads the rows of its input only through its DP
 *	  aggregates.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_SIDE_READS_H
#define DP_AGG_SIDE_READS_H

#include "executor/execdesc.h"
#include "nodes/parsenodes.h"

extern void dp_side_reads_check_query(Query *query);
extern void *dp_side_reads_plan_begin(Query *query);
extern void dp_side_reads_plan_end(void *token);
extern void dp_side_reads_register(QueryDesc *queryDesc);
extern void *dp_side_reads_enter(QueryDesc *queryDesc);
extern void dp_side_reads_leave(void *token);
extern void dp_side_reads_check_rtable(List *rtable);

#endif							/* DP_AGG_SIDE_READS_H */
