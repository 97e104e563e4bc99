/*-------------------------------------------------------------------------
 *
 * dist_protect.h
 *	  Protected tables on a Citus cluster: what every node knows of them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_DIST_PROTECT_H
#define DP_AGG_DIST_PROTECT_H

#include "nodes/pg_list.h"

#define DP_PROTECT_LABEL_PROVIDER "dp_agg"
#define DP_PROTECT_LABEL "protected"

extern void dp_dist_protect_init(void);
extern void dp_dist_invalidate_labels(void);
extern bool dp_dist_any_protected(void);
extern bool dp_dist_maybe_protected(void);
extern bool dp_dist_labeled(Oid relid);
extern List *dp_dist_labeled_relations(void);
extern Oid	dp_dist_table_of_shard(Oid relid);
extern bool dp_dist_unknown(Oid relid);
extern void dp_dist_set_label(Oid relid, bool protect);

#endif							/* DP_AGG_DIST_PROTECT_H */
