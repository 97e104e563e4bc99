/*-------------------------------------------------------------------------
 *
 * auto_bounds.h
 *	  Automatic clamping bounds, and the partial sums by bin.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_AUTO_BOUNDS_H
#define DP_AGG_AUTO_BOUNDS_H

#include "noise.h"
#include "utils/memutils.h"

/* bins by sign and power of two (auto_bounds.c) */
#define DP_BINS 191
/* the probability that an empty bin passes the threshold, all bins together */
#define DP_BOUNDS_FALSE_BIN 1e-6
/* the share of epsilon an aggregate without bounds spends on them */
#define DP_BOUNDS_SHARE 0.25

typedef struct DpBins
{
	bool		squares;		/* also sums of squares (dp_var, dp_stddev) */
	int64		count[DP_BINS];
	int128		sum[DP_BINS];	/* in units of the bin: 2^(e - 52) */
	uint64		sq_lo[DP_BINS]; /* sums of squares, 192 bits: lo, hi, top */
	uint64		sq_hi[DP_BINS];
	uint64		sq_top[DP_BINS];
} DpBins;

extern DpBins *dp_bins_new(MemoryContext cxt, bool squares);
extern void dp_bins_add(DpBins *b, double x);
extern void dp_bins_merge(DpBins *dst, const DpBins *src);
extern int64 dp_bins_threshold(DpLaplaceParam param);
extern bool dp_bins_bounds(const DpBins *b, DpLaplaceParam param, double *lower, double *upper,
						   int *lo_bin, int *hi_bin);
extern void dp_bins_moments(const DpBins *b, int lo_bin, int hi_bin, int64 lo_units,
							int64 hi_units, int k, int shift, int64 *count, int128 *sum,
							int128 *centred, int128 *squares);
extern Size dp_bins_serial_size(bool squares);
extern void dp_bins_serialize(const DpBins *b, char *p);
extern bool dp_bins_deserialize(DpBins *b, const char *p);

#endif							/* DP_AGG_AUTO_BOUNDS_H */
