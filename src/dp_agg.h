/*-------------------------------------------------------------------------
 *
 * dp_agg.h
 *	  Declarations shared across dp_agg's modules.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_H
#define DP_AGG_H

#include <math.h>

#include "utils/numeric.h"

#include "release.h"

/* true when loaded from shared_preload_libraries (dp_agg.c) */
extern bool dp_preloaded;

/* hooks.c */
extern void dp_hooks_init(void);

/*
 * Rounding of one clamped value to a ticket's row grid, in units of
 * 2^row_grid_exp: a monotone function, applied identically to the bounds.
 * Integers round half up (a negative exponent, used with Gaussian noise,
 * scales them exactly); doubles half to even (llrint in the default
 * rounding mode); numerics half away from zero (numeric_round).
 */
static inline int64
dp_round_int(int64 v, const DpRelease *r)
{
	int			k = r->row_grid_exp;

	if (k == 0)
		return v;
	if (k < 0)
		return v * ((int64) 1 << (-k));	/* exact: |v| 2^-k <= 2^60 */
	return (int64) (((int128) v + ((int128) 1 << (k - 1))) >> k);
}

static inline int64
dp_round_float(double v, const DpRelease *r)
{
	if (r->row_mult != 0)
		return llrint(v * r->row_mult);
	return llrint(ldexp(v, -r->row_grid_exp));
}

extern int64 dp_round_numeric(Numeric v, const DpRelease *r);
extern Numeric dp_numeric_pow2(int e);

#endif							/* DP_AGG_H */
