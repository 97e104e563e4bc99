/*-------------------------------------------------------------------------
 *
 * row_seal.h
 *	  Plans whose row expressions cannot fail or report: the rewrite that
 *	  traps them, and the checks before the first row.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_ROW_SEAL_H
#define DP_AGG_ROW_SEAL_H

#include "nodes/params.h"
#include "nodes/plannodes.h"

extern void dp_row_seal_init(void);
extern void dp_row_seal_plan(PlannedStmt *stmt, Oid relid);
extern void dp_row_refuse_failing(Query *inner, Oid relid);
extern void dp_row_check_plan(PlannedStmt *stmt, ParamListInfo params, Oid relid);

#endif							/* DP_AGG_ROW_SEAL_H */
