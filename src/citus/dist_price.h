/*-------------------------------------------------------------------------
 *
 * dist_price.h
 *	  DP statements on Citus tables: the coordinator's price.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_DIST_PRICE_H
#define DP_AGG_DIST_PRICE_H

#include "nodes/params.h"
#include "nodes/plannodes.h"

extern List *dp_dist_price(PlannedStmt *stmt, ParamListInfo params);

#endif							/* DP_AGG_DIST_PRICE_H */
