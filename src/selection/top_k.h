/*-------------------------------------------------------------------------
 *
 * top_k.h
 *	  Top-k: the k groups of a DP statement with the most units, chosen by
 *	  peeling report noisy max.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_TOP_K_H
#define DP_AGG_TOP_K_H

#include "nodes/parsenodes.h"

#include "noise.h"
#include "release.h"

/* most groups one statement's top-k chooses */
#define DP_TOP_K_MAX 10000

extern void *dp_top_k_begin(void);
extern void dp_top_k_end(void *saved);
extern void dp_top_k_prepare(Query *query);
extern void dp_top_k_rewrite(Query *query);
extern bool dp_top_k_requested(void);
extern int64 dp_top_k_handle(const DpRelease *r, int64 count);
extern void dp_top_k_rank_groups(const int64 *counts, int n, int k, DpLaplaceParam param,
								 int32 *ranks);

#endif							/* DP_AGG_TOP_K_H */
