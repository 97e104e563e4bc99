/*-------------------------------------------------------------------------
 *
 * price.h
 *	  The tickets and the price of a statement.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_PRICE_H
#define DP_AGG_PRICE_H

#include "nodes/params.h"
#include "nodes/plannodes.h"

#include "release.h"

extern int	dp_price_unit_rows(Oid relid);
extern List *dp_price_plan(PlannedStmt *stmt, ParamListInfo params, bool validate);
extern List *dp_priced_releases(List *releases, double *epsilon, double *delta);
extern void dp_price_selection_shares(List *releases);

#endif							/* DP_AGG_PRICE_H */
