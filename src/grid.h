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

#include "utils/numeric.h"

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
		return v * ((int64) 1 << (-k));	/* exact: |v| 2^-k <= 2^61 */
	return (int64) (((int128) v + ((int128) 1 << (k - 1))) >> k);
}

/* mult is 2^-k, or 0 when that is not a normal double */
static inline int64
dp_round_float(double v, double mult, int k)
{
	if (mult != 0)
		return llrint(v * mult);
	return llrint(ldexp(v, -k));
}

/* mult is 2^-k as a numeric */
extern int64 dp_round_numeric(Numeric v, Numeric mult);
extern Numeric dp_numeric_pow2(int e);
extern int	dp_choose_row_grid(double log2_span, double log2_max, double mult, int min_exp);

#endif							/* DP_AGG_GRID_H */
