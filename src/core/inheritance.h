/*-------------------------------------------------------------------------
 *
 * inheritance.h
 *	  A relation's ancestors and its inheritance tree (pg_inherits).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_INHERITANCE_H
#define DP_AGG_INHERITANCE_H

#include "nodes/pg_list.h"

extern void dp_inheritance_init(void);
extern List *dp_relation_ancestors(Oid relid, bool partitions_only);
extern List *dp_relation_roots(Oid relid);
extern List *dp_relation_read_set(Oid relid, bool only);

#endif							/* DP_AGG_INHERITANCE_H */
