/*-------------------------------------------------------------------------
 *
 * dist_exec.h
 *	  DP statements on Citus tables: price, distributed run, fragments.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_DIST_EXEC_H
#define DP_AGG_DIST_EXEC_H

#include "nodes/params.h"
#include "nodes/plannodes.h"

#include "dist_state.h"
#include "release.h"

/* the release of one DP call for one group, drawn once */
typedef struct DpDistSlot
{
	uint64		serial;			/* key: the group */
	int32		call;			/* key: the call */
	int32		pad;
	bool		done;
	Datum		value;
} DpDistSlot;

extern Oid	dp_dist_protect_start(PlannedStmt *stmt, ParamListInfo params, int eflags,
								  int instrument_options);
extern List *dp_dist_price(PlannedStmt *stmt, ParamListInfo params);
extern List *dp_dist_fragment_releases(PlannedStmt *stmt, int instrument_options);
extern List *dp_dist_check_fragment_query(Query *q, ParamListInfo params);
extern void dp_dist_check_fragment_plan(PlannedStmt *stmt, List *checked);
extern const DpRelease *dp_dist_slot(const DpDistState *st, int call, DpDistSlot **slot,
									 MemoryContext *cxt);

#endif							/* DP_AGG_DIST_EXEC_H */
