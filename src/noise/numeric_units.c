/*-------------------------------------------------------------------------
 *
 * numeric_units.c
 *	  Round a numeric datum to a power-of-two grid without allocating.
 *
 * dp_sum and dp_avg over numeric round each clamped value v to units of
 * 2^k: round(v 2^-k), half away from zero (as numeric_round does).  Doing
 * that with numeric arithmetic allocates several values per row; this file
 * reads the datum in place instead, in PostgreSQL's on-disk numeric format
 * (stable across major versions, as pg_upgrade requires): a sign, a weight
 * and base-10000 digits, so that
 *		|v| = sum_i digit_i * 10000^(weight - i).
 * It writes |v| as D / 10000^f with D an integer, then rounds
 * D 2^-k / 10000^f exactly in 128-bit integers.  When anything does not fit
 * (too many digits, a grid exponent too far from 0), or the datum is a
 * special value (NaN, +-Infinity) or compressed or stored out of line, it
 * declines, and the caller takes the general path with numeric arithmetic.
 *
 * Rounding after clamping equals clamping after rounding (the rounding is
 * monotone and the bounds are rounded by the same rule), so the caller may
 * clamp the units; a magnitude beyond 2^62 units is reported as 2^62, which
 * any clamp to bounds of at most 2^61 units maps to the same result.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "compat.h"
#include "numeric_units.h"

/* the header bits of the on-disk format (utils/adt/numeric.c) */
#define NUM_SIGN_MASK			0xC000
#define NUM_NEG					0x4000
#define NUM_SHORT				0x8000
#define NUM_SPECIAL				0xC000
#define NUM_SHORT_SIGN_MASK		0x2000
#define NUM_SHORT_WEIGHT_SIGN	0x0040
#define NUM_SHORT_WEIGHT_MASK	0x003F
#define NUM_NBASE				10000

/* magnitudes stay below this, so that doubling a remainder cannot overflow */
#define UNITS_LIMIT		(((uint128) 1) << 126)
#define UNITS_SATURATED	(((int64) 1) << 62)

/* *x *= m unless that reaches UNITS_LIMIT; false then */
static inline bool
mul_bounded(uint128 *x, uint64 m)
{
	if (*x != 0 && *x >= UNITS_LIMIT / m)
		return false;
	*x *= m;
	return true;
}

/* *x *= 2^s unless that reaches UNITS_LIMIT; false then */
static inline bool
shift_bounded(uint128 *x, int s)
{
	if (*x != 0 && (s >= 126 || *x >= (UNITS_LIMIT >> s)))
		return false;
	*x <<= s;
	return true;
}

bool
dp_numeric_units(Datum d, int k, int64 *units)
{
	struct varlena *p = (struct varlena *) DatumGetPointer(d);
	const char *data;
	Size		len;
	uint16		header;
	bool		negative;
	int			weight;
	const char *digits;
	int			ndigits;
	int			frac;
	uint128		num = 0;
	uint128		den = 1;
	uint128		q,
				r;

	/* in line and uncompressed only */
	if (VARATT_IS_EXTERNAL(p) || VARATT_IS_COMPRESSED(p))
		return false;
	data = VARDATA_ANY(p);
	len = VARSIZE_ANY_EXHDR(p);
	if (len < sizeof(uint16))
		return false;
	memcpy(&header, data, sizeof(uint16));

	if ((header & NUM_SIGN_MASK) == NUM_SPECIAL)
		return false;
	if ((header & NUM_SIGN_MASK) == NUM_SHORT)
	{
		negative = (header & NUM_SHORT_SIGN_MASK) != 0;
		weight = (header & NUM_SHORT_WEIGHT_MASK);
		if (header & NUM_SHORT_WEIGHT_SIGN)
			weight -= NUM_SHORT_WEIGHT_MASK + 1;
		digits = data + sizeof(uint16);
		len -= sizeof(uint16);
	}
	else
	{
		int16		w;

		if (len < 2 * sizeof(uint16))
			return false;
		negative = (header & NUM_SIGN_MASK) == NUM_NEG;
		memcpy(&w, data + sizeof(uint16), sizeof(int16));
		weight = w;
		digits = data + 2 * sizeof(uint16);
		len -= 2 * sizeof(uint16);
	}
	if (len % sizeof(int16) != 0)
		return false;
	ndigits = len / sizeof(int16);

	/* D: the digits as an integer */
	for (int i = 0; i < ndigits; i++)
	{
		int16		digit;

		memcpy(&digit, digits + i * sizeof(int16), sizeof(int16));
		if (digit < 0 || digit >= NUM_NBASE || !mul_bounded(&num, NUM_NBASE))
			return false;
		num += (uint128) digit;
	}
	if (num == 0)
	{
		*units = 0;
		return true;
	}

	/* |v| = D 10000^-frac; frac < 0 means trailing zero digits */
	frac = ndigits - 1 - weight;
	for (; frac < 0; frac++)
		if (!mul_bounded(&num, NUM_NBASE))
			return false;
	for (; frac > 0; frac--)
		if (!mul_bounded(&den, NUM_NBASE))
			return false;

	/* |v| 2^-k = num / den */
	if (!(k < 0 ? shift_bounded(&num, -k) : shift_bounded(&den, k)))
		return false;

	/* round half away from zero: on the magnitude, half up */
	q = num / den;
	r = num % den;
	if (2 * r >= den)
		q++;
	if (q > (uint128) UNITS_SATURATED)
		q = UNITS_SATURATED;
	*units = negative ? -(int64) q : (int64) q;
	return true;
}
