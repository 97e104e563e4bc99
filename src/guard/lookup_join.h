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

extern void dp_lookup_check_query(Query *query);

#endif							/* DP_AGG_LOOKUP_JOIN_H */
