/*-------------------------------------------------------------------------
 *
 * privacy_unit.h
 *	  Privacy units: bounding each unit's contribution by rewriting the
 *	  statement into three aggregation levels.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_PRIVACY_UNIT_H
#define DP_AGG_PRIVACY_UNIT_H

#include "nodes/parsenodes.h"

extern bool dp_privacy_unit_rewrite(Query *query);

#endif							/* DP_AGG_PRIVACY_UNIT_H */
