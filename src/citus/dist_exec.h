/*-------------------------------------------------------------------------
 *
 * dist_exec.h
 *	  DP statements on Citus tables: the coordinator's run.
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

extern const DpRelease *dp_dist_slot(const DpDistState *st, int call, DpDistSlot **slot,
									 MemoryContext *cxt);

#endif							/* DP_AGG_DIST_EXEC_H */
