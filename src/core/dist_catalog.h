/*-------------------------------------------------------------------------
 *
 * dist_catalog.h
 *	  Citus's catalogs, as dp_agg reads them: its tables, their shards and
 *	  placements, the node's group, and the names Citus gives shards.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_DIST_CATALOG_H
#define DP_AGG_DIST_CATALOG_H

#include "access/attnum.h"

/* how a Citus table is split (pg_dist_partition) */
typedef struct DpCitusTable
{
	char		method;			/* 'h' hash, 'n' none (reference, single shard), ... */
	AttrNumber	distcol;		/* the distribution column, 0 if none */
	int			nshards;
} DpCitusTable;

extern bool dp_citus_present(void);
extern bool dp_is_citus_table(Oid relid);
extern bool dp_citus_table(Oid relid, DpCitusTable *table);
extern char *dp_citus_placements(Oid relid);
extern int	dp_citus_local_group(void);
extern char *dp_citus_shard_name(const char *base, int64 shardid);
extern bool dp_citus_shard_name_of(const char *relname, const char *base, int64 *shardid);
extern Oid	dp_citus_shard_table(Oid relid);
extern bool dp_citus_shard_like(Oid relid);

#endif							/* DP_AGG_DIST_CATALOG_H */
