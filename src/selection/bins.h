/*-------------------------------------------------------------------------
 *
 * bins.h
 *	  Derived bin domains: the keys a GROUP BY expression can take, given
 *	  the constants of its statement.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_BINS_H
#define DP_AGG_BINS_H

#include "nodes/pg_list.h"
#include "nodes/primnodes.h"

extern Node *dp_bins_simplify(Node *node);
extern bool dp_bins_domain(Node *key, List *quals, int max_keys, List **keys,
						   const char **source);
extern bool dp_bins_never_null(Node *expr, List *quals, Oid relid, Index varno);

#endif							/* DP_AGG_BINS_H */
