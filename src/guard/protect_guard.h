/*-------------------------------------------------------------------------
 *
 * protect_guard.h
 *	  The stricter guard for untrusted roles over protected relations.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_PROTECT_GUARD_H
#define DP_AGG_PROTECT_GUARD_H

#include "nodes/parsenodes.h"

extern bool dp_protect_guard_query(Query *query, Oid *untrusted);

#endif							/* DP_AGG_PROTECT_GUARD_H */
