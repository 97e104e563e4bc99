/*-------------------------------------------------------------------------
 *
 * dist_fingerprint.h
 *	  The fingerprint of what a fragment of a DP statement on a Citus table
 *	  computes.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_DIST_FINGERPRINT_H
#define DP_AGG_DIST_FINGERPRINT_H

#include "nodes/params.h"
#include "nodes/parsenodes.h"

#include "dist_token.h"

extern char *dp_fragment_fingerprint(Query *q, const char *nspname, const char *relname,
									 ParamListInfo params, bool bind_all, const char **why);

#endif							/* DP_AGG_DIST_FINGERPRINT_H */
