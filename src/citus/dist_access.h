/*-------------------------------------------------------------------------
 *
 * dist_access.h
 *	  DP statements on Citus tables: who may run them, and as whom.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_DIST_ACCESS_H
#define DP_AGG_DIST_ACCESS_H

#include "nodes/params.h"
#include "nodes/plannodes.h"

extern Oid	dp_dist_run_as(Oid relid);
extern Oid	dp_dist_protect_start(PlannedStmt *stmt, ParamListInfo params, int eflags,
								  int instrument_options);

#endif							/* DP_AGG_DIST_ACCESS_H */
