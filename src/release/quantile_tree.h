/*-------------------------------------------------------------------------
 *
 * quantile_tree.h
 *	  The quantile tree of dp_percentile and dp_median.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_QUANTILE_TREE_H
#define DP_AGG_QUANTILE_TREE_H

#include "noise.h"
#include "utils/memutils.h"

#define DP_TREE_BRANCHING 16
#define DP_TREE_HEIGHT 3
#define DP_TREE_LEAVES 4096		/* 16^3 */
#define DP_TREE_NODES (16 + 256 + 4096)
/* leaf numbers a state keeps before it keeps counters */
#define DP_TREE_SPARSE_MAX 128
/* noises in the canonical prefix of a leaf boundary: 15 per level, at most */
#define DP_TREE_PREFIX_TERMS (DP_TREE_HEIGHT * (DP_TREE_BRANCHING - 1))

/* where the leaves are */
typedef struct DpTreeDomain
{
	bool		log_linear;		/* no bounds: log-linear over +-2^64 */
	double		lower;
	double		upper;
	double		scale;			/* leaves per unit of value (bounded) */
} DpTreeDomain;

/* the counts of a state: leaf numbers, or counters when there are many */
typedef struct DpTree
{
	int			nsparse;		/* entries of sparse[], -1 when dense */
	uint16		sparse[DP_TREE_SPARSE_MAX];
	uint32	   *leaves;			/* DP_TREE_LEAVES counters, saturating */
} DpTree;

/* a tree being released: its prefixes, the noise of its nodes */
typedef struct DpTreeRelease
{
	DpLaplaceParam param;
	int64		prefix[DP_TREE_LEAVES + 1];
	int64		noise[DP_TREE_NODES];
	bool		drawn[DP_TREE_NODES];
	double		total;			/* the noisy number of rows */
} DpTreeRelease;

extern void dp_tree_domain_bounded(DpTreeDomain *d, double lower, double upper);
extern void dp_tree_domain_log(DpTreeDomain *d);
extern int	dp_tree_leaf(const DpTreeDomain *d, double x);
extern double dp_tree_edge(const DpTreeDomain *d, int j);

extern void dp_tree_init(DpTree *t);
extern void dp_tree_add(DpTree *t, int leaf, MemoryContext cxt);
extern void dp_tree_merge(DpTree *dst, const DpTree *src, MemoryContext cxt);
extern void dp_tree_reset(DpTree *t);
extern void dp_tree_prefix(const DpTree *t, int64 *prefix);
extern Size dp_tree_serial_size(const DpTree *t);
extern void dp_tree_serialize(const DpTree *t, char *p);
extern bool dp_tree_deserialize(DpTree *t, const char *p, Size len, MemoryContext cxt);
extern int64 dp_tree_rows(const DpTree *t);
extern int	dp_tree_sample(const DpTree *t, int k, uint16 *out);

extern void dp_tree_release_start(DpTreeRelease *tr, const DpTree *t, DpLaplaceParam param);
extern double dp_tree_quantile(DpTreeRelease *tr, const DpTreeDomain *d, double p,
							   double tau, double tau_total, double *low, double *high);
extern double dp_tree_tail(double b, int m, double alpha);

#endif							/* DP_AGG_QUANTILE_TREE_H */
