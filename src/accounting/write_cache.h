/*-------------------------------------------------------------------------
 *
 * write_cache.h
 *	  The executor state of a table dp_agg writes without SPI, kept from
 *	  batch to batch with its compiled CHECK constraints.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_WRITE_CACHE_H
#define DP_AGG_WRITE_CACHE_H

#include "nodes/execnodes.h"
#include "utils/relcache.h"

/* one table's cache; name (of its memory context) set where it is defined */
typedef struct DpWriteCache
{
	const char *name;			/* a string constant */
	MemoryContext cxt;			/* holds all below; NULL when dropped */
	EState	   *estate;
	ResultRelInfo *rri;
	int			ncheck;			/* the constraints compiled: their number */
	char	  **ccbin;			/* ... their text */
	bool	   *enforced;		/* ... whether each is enforced */
	uint64		functions;		/* ... and the functions they may inline */
} DpWriteCache;

extern bool dp_write_direct_possible(Relation rel);
extern void dp_write_cache_forget(DpWriteCache *c);
extern void dp_write_cache_open(DpWriteCache *c, Relation rel, EState **estate,
								ResultRelInfo **rri);
extern EState *dp_write_open_indexes(ResultRelInfo *rri);
extern void dp_write_close_indexes(ResultRelInfo *rri, EState *index_estate);
extern Datum dp_write_float8_array(const double *v, int n);

/* dp_agg's trigger on dp_agg.budget and dp_agg.cap that recalls leases (lease.c) */
#define DP_RECALL_TRIGGER "dp_agg_recall_leases"

#endif							/* DP_AGG_WRITE_CACHE_H */
