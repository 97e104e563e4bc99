/*-------------------------------------------------------------------------
 *
 * grid.h
 *	  The grid of a release and the rounding of rows to it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_GRID_H
#define DP_AGG_GRID_H

#include <math.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "utils/numeric.h"

/*
 * Rows are at most 2^DP_GRID_ROW_LOG2 units (the grid is chosen so); after
 * rounding a bound may exceed that by the rounding, so bounds are checked
 * against twice as much, DP_GRID_MAX_UNITS.  A row then adds at most 2^61
 * units to a sum, or 2^62 half units to dp_avg's centred sum, so 128-bit
 * sums of fewer than 2^65 rows (far more than a table holds) cannot
 * overflow.
 */
#define DP_GRID_ROW_LOG2 60
#define DP_GRID_MAX_UNITS ((int64) 1 << (DP_GRID_ROW_LOG2 + 1))

/*
 * The smallest grid exponent: below the smallest positive double (2^-1074),
 * so that it never makes a grid coarser than a double bound needs; it keeps
 * 2^-k within the range of numerics.
 */
#define DP_GRID_MIN_EXP (-1100)

/*
 * Doubles are scaled by a multiplication by 2^-k where that is a normal
 * double (|k| < 1022, with margin), else by ldexp.
 */
#define DP_GRID_MULT_MAX_EXP 1000

/*
 * Rounding of one clamped value to a row grid, in units of 2^k: a monotone
 * function, applied identically to the bounds.  Integers round half up (a
 * negative exponent, used with Gaussian noise, scales them exactly);
 * doubles half to even (llrint in the default rounding mode); numerics half
 * away from zero (numeric_round).  Inline: they run for every row.
 */
static inline int64
dp_round_int(int64 v, int k)
{
	if (k == 0)
		return v;
	if (k < 0)
		return v * ((int64) 1 << (-k));	/* exact: |v| 2^-k <= DP_GRID_MAX_UNITS */
	return (int64) (((int128) v + ((int128) 1 << (k - 1))) >> k);
}

/*
 * llrint(x), inline: on x86-64, glibc's llrint is the one instruction
 * cvtsd2si (rounding in the current mode, to nearest, ties to even; the
 * integer indefinite, INT64_MIN, for NaN and out of range), which the
 * intrinsic emits in place of a call per row.  Elsewhere, llrint.
 */
static inline int64
dp_llrint(double x)
{
#if defined(__x86_64__)
	return _mm_cvtsd_si64(_mm_set_sd(x));
#else
	return llrint(x);
#endif
}

/* mult is 2^-k, or 0 when that is not a normal double */
static inline int64
dp_round_float(double v, double mult, int k)
{
	if (mult != 0)
		return dp_llrint(v * mult);
	return dp_llrint(ldexp(v, -k));
}

/* mult is 2^-k as a numeric */
extern int64 dp_round_numeric(Numeric v, Numeric mult);
extern Numeric dp_int128_numeric(int128 v);
extern Numeric dp_numeric_pow2(int e);
extern int	dp_choose_row_grid(double log2_span, double log2_max, double mult, int min_exp);
extern int128 dp_scale_total(int128 total, int64 c, int64 m);

#endif							/* DP_AGG_GRID_H */
