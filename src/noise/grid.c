/*-------------------------------------------------------------------------
 *
 * grid.c
 *	  The grid of a release: every released value is an integer number of
 *	  units of 2^k.  The choice of k, and the rounding of numeric rows and
 *	  bounds to it (integers and doubles round inline, grid.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "utils/builtins.h"
#include "utils/numeric.h"

#include "grid.h"

/*
 * The noise is about 2^40 units: the rounding of each row (at most half a
 * unit) is then far below the noise, and the exact samplers' parameters
 * stay far inside their ranges (noise.h).
 */
#define GRID_NOISE_LOG2 40
/* the sensitivity is at least 2^2 units where possible */
#define GRID_MIN_SENS_LOG2 2

/*
 * Exponent of the row grid: noise of about 2^GRID_NOISE_LOG2 units, |rows|
 * <= 2^DP_GRID_ROW_LOG2 units, sensitivity >= 2^GRID_MIN_SENS_LOG2 units
 * where possible, and k >= min_exp.  log2_span is log2 of the spread the
 * noise hides (max(|l|,|u|) for a sum, u - l for an average), log2_max that
 * of max(|l|,|u|), mult the noise per unit of sensitivity.
 */
int
dp_choose_row_grid(double log2_span, double log2_max, double mult, int min_exp)
{
	double		k = floor(log2_span + log2(mult)) - GRID_NOISE_LOG2;
	double		hi = floor(log2_span) - GRID_MIN_SENS_LOG2;
	double		lo = ceil(log2_max) - DP_GRID_ROW_LOG2;

	/*
	 * Written so that NaN falls through to the next rule: k is NaN when the
	 * span is 0 (log2 -inf) and the noise infinite, and then only the size
	 * of the bounds constrains the grid (the sensitivity is 0: no noise).
	 */
	if (!(k <= hi))
		k = hi;
	if (!(k >= lo))
		k = lo;
	if (!(k >= min_exp) || !isfinite(k))
		k = min_exp;
	return (int) k;
}

int64
dp_round_numeric(Numeric v, Numeric mult)
{
	Datum		scaled;

	scaled = NumericGetDatum(numeric_mul_opt_error(v, mult, NULL));
	scaled = DirectFunctionCall2(numeric_round, scaled, Int32GetDatum(0));
	return DatumGetInt64(DirectFunctionCall1(numeric_int8, scaled));
}

/* an int128 as an exact numeric, through its decimal digits */
Numeric
dp_int128_numeric(int128 v)
{
	char		buf[48];
	char	   *p = buf + sizeof(buf);
	uint128		u = v < 0 ? -(uint128) v : (uint128) v;

	*--p = '\0';
	do
	{
		*--p = (char) ('0' + (int) (u % 10));
		u /= 10;
	} while (u != 0);
	if (v < 0)
		*--p = '-';
	return DatumGetNumeric(DirectFunctionCall3(numeric_in, CStringGetDatum(p),
											   ObjectIdGetDatum(InvalidOid),
											   Int32GetDatum(-1)));
}

/* 2^e as an exact numeric: powers of 2 (or of 5 shifted by 10^-n) */
Numeric
dp_numeric_pow2(int e)
{
	int			n = (e < 0) ? -e : e;
	Numeric		base = int64_to_numeric(e >= 0 ? 2 : 5);
	Numeric		result = int64_to_numeric(1);

	/* exponentiation by squaring; integer products are exact */
	while (n > 0)
	{
		if (n & 1)
			result = numeric_mul_opt_error(result, base, NULL);
		n >>= 1;
		if (n > 0)
			base = numeric_mul_opt_error(base, base, NULL);
	}
	if (e < 0)
	{
		char		buf[32];

		snprintf(buf, sizeof(buf), "1e%d", e);
		result = numeric_mul_opt_error(result,
									   DatumGetNumeric(DirectFunctionCall3(numeric_in,
																		   CStringGetDatum(buf),
																		   ObjectIdGetDatum(InvalidOid),
																		   Int32GetDatum(-1))),
									   NULL);
	}
	return result;
}

/*
 * A unit's total of m rows scaled to c of them (privacy units: c rows'
 * worth at the unit's own mean; unit_aggregates.c and dist_units.c):
 * round(c total / m), half up, for 0 <= c <= m, m > 0, |total| < 2^125:
 * total = q m + rem with 0 <= rem < m, so c total / m = c q + c rem / m,
 * c q and 2 c rem + m within 128 bits (c, m < 2^63, |q| < 2^63 here, as
 * total is at most m rows of at most 2^62 units)
 */
int128
dp_scale_total(int128 total, int64 c, int64 m)
{
	int128		q = total / m;
	int128		rem = total % m;

	if (rem < 0)
	{
		q -= 1;
		rem += m;
	}
	return (int128) c * q + ((int128) 2 * c * rem + m) / ((int128) 2 * m);
}
