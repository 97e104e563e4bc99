/*-------------------------------------------------------------------------
 *
 * auto_bounds.c
 *	  Automatic clamping bounds: the approximate bounds of Google's
 *	  differential privacy library ("ApproxBounds"), and the partial sums by
 *	  bin that let a sum, an average or a variance be computed once the
 *	  bounds are known, in one pass.
 *
 * Bins.  Values are binned by sign and power of two: 0 alone, and
 * [2^e, 2^(e+1)) for e = -32 .. 62 for positive values (the lowest also
 * holding (0, 2^-32), the highest 2^63), and their mirror images for
 * negative ones: 191 bins in the order of the values (values beyond 2^63
 * in magnitude count as 2^63).  A row adds 1 to the count of
 * one bin: the histogram has L1 sensitivity 1, and discrete Laplace noise
 * of scale 1 / epsilon_b on every bin makes it epsilon_b-DP (Dwork & Roth
 * 2014, Theorem 3.6).  The threshold is the smallest count that an empty
 * bin's noise reaches with probability at most 1e-6 / 191 (so that no
 * empty bin passes, with probability 1 - 1e-6); the lower bound is the
 * lower edge of the lowest bin whose noisy count reaches it, the upper
 * bound the upper edge of the highest.  When no bin reaches it there are
 * too few rows for bounds: the release is NULL.  All of it is
 * post-processing of the noisy histogram.
 *
 * Partial sums.  Each bin also keeps its rows' exact sum (and sum of
 * squares) in units of 2^(e - 52), its values' own precision (a double
 * in [2^e, 2^(e+1)) is an integer number of 2^(e - 52)); values below
 * 2^-32 round to 2^-84.  Once the bounds [L, U] are known, bins inside
 * them add their sums, bins below count their rows at L, above at U: the
 * clamped sum and sum of squares, exactly, in numeric arithmetic (every
 * term is a dyadic rational).  The release is then the rounded value in
 * units of a grid chosen from L and U; adding a row changes it by its
 * clamped value plus at most 1 unit of rounding, which the calibration
 * covers (release.c, canonical sensitivity).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "utils/builtins.h"
#include "utils/numeric.h"

#include "auto_bounds.h"
#include "grid.h"
#include "noise.h"

#define MIN_EXP (-32)
#define MAX_EXP 62
#define OCTAVES (MAX_EXP - MIN_EXP + 1)	/* 95 bins per sign */
#define ZERO_BIN OCTAVES		/* the middle one: 0 (and -0) */
#define SMALL_UNIT_EXP (MIN_EXP - 52)	/* -84 */

/*
 * The bin of a value (not NaN), and the value in the bin's units: 0 alone
 * in the middle; for e = -32 .. 62, [2^e, 2^(e+1)) on each side, the
 * lowest also holding (0, 2^-32) (rounded to its units, 2^-84) and the
 * highest 2^63 and beyond (counted as 2^63).
 */
static int
bin_of(double x, int64 *m)
{
	bool		neg = x < 0;
	double		a = fabs(x);
	int			e;
	int			idx;

	if (a == 0)
	{
		*m = 0;
		return ZERO_BIN;
	}
	if (a >= ldexp(1.0, MAX_EXP + 1))
		a = ldexp(1.0, MAX_EXP + 1);
	if (a < ldexp(1.0, MIN_EXP))
	{
		*m = (int64) llrint(ldexp(a, -SMALL_UNIT_EXP));
		idx = 0;
	}
	else
	{
		(void) frexp(a, &e);
		e -= 1;					/* a in [2^e, 2^(e+1)) */
		if (e > MAX_EXP)
			e = MAX_EXP;		/* a = 2^63: the top edge of the top bin */
		*m = (int64) ldexp(a, 52 - e);	/* exact */
		idx = e - MIN_EXP;
	}
	if (neg)
	{
		*m = -*m;
		return ZERO_BIN - 1 - idx;
	}
	return ZERO_BIN + 1 + idx;
}

/* the unit exponent of a bin's sums */
static int
bin_unit(int bin)
{
	int			idx = bin > ZERO_BIN ? bin - ZERO_BIN - 1 : ZERO_BIN - 1 - bin;

	return bin == ZERO_BIN ? 0 : idx + MIN_EXP - 52;
}

/* the edges of a bin */
static void
bin_edges(int bin, double *lo, double *hi)
{
	int			idx = bin > ZERO_BIN ? bin - ZERO_BIN - 1 : ZERO_BIN - 1 - bin;
	double		inner = idx == 0 ? 0 : ldexp(1.0, idx + MIN_EXP);
	double		outer = ldexp(1.0, idx + 1 + MIN_EXP);

	if (bin == ZERO_BIN)
		*lo = *hi = 0;
	else if (bin > ZERO_BIN)
	{
		*lo = inner;
		*hi = outer;
	}
	else
	{
		*lo = -outer;
		*hi = -inner;
	}
}

DpBins *
dp_bins_new(MemoryContext cxt, bool squares)
{
	DpBins	   *b = MemoryContextAllocZero(cxt, sizeof(DpBins));

	b->squares = squares;
	return b;
}

/* add a value (NaN is skipped by the caller) */
void
dp_bins_add(DpBins *b, double x)
{
	int64		m;
	int			i = bin_of(x, &m);

	b->count[i]++;
	b->sum[i] += m;
	if (b->squares)
	{
		uint128		sq = (uint128) ((int128) m * m);
		uint128		lo = ((uint128) b->sq_hi[i] << 64) | b->sq_lo[i];

		/* a 192-bit accumulator: 64 bits above the 128 */
		lo += sq;
		if (lo < sq)
			b->sq_top[i]++;
		b->sq_hi[i] = (uint64) (lo >> 64);
		b->sq_lo[i] = (uint64) lo;
	}
}

void
dp_bins_merge(DpBins *dst, const DpBins *src)
{
	for (int i = 0; i < DP_BINS; i++)
	{
		uint128		a = ((uint128) dst->sq_hi[i] << 64) | dst->sq_lo[i];
		uint128		b = ((uint128) src->sq_hi[i] << 64) | src->sq_lo[i];

		dst->count[i] += src->count[i];
		dst->sum[i] += src->sum[i];
		dst->sq_top[i] += src->sq_top[i];
		a += b;
		if (a < b)
			dst->sq_top[i]++;
		dst->sq_hi[i] = (uint64) (a >> 64);
		dst->sq_lo[i] = (uint64) a;
	}
}

/*
 * The threshold of the noisy counts: the smallest integer t with
 * DP_BINS P(X >= t) <= DP_BOUNDS_FALSE_BIN for X discrete Laplace of the
 * sampler's scale b, P(X >= t) = q^t / (1 + q), q = e^(-1/b) (t >= 1).
 */
int64
dp_bins_threshold(DpLaplaceParam param)
{
	double		b = (double) param.t / (double) param.s;
	double		lq = -1.0 / b;	/* log q */
	double		target = log(DP_BOUNDS_FALSE_BIN / DP_BINS);
	double		t;

	/* t log q - log(1 + q) <= target */
	t = ceil((target + log1p(exp(lq))) / lq * (1 + 1e-12));
	if (!(t >= 1))
		t = 1;
	if (t > 1e18)
		t = 1e18;
	return (int64) t;
}

/*
 * The bounds from the noisy histogram (191 draws, always): false when no
 * bin passes the threshold.  *lo_bin and *hi_bin are the bins whose outer
 * edges they are.
 */
bool
dp_bins_bounds(const DpBins *b, DpLaplaceParam param, double *lower, double *upper,
			   int *lo_bin, int *hi_bin)
{
	int64		t = dp_bins_threshold(param);
	int			first = -1,
				last = -1;
	double		unused;

	for (int i = 0; i < DP_BINS; i++)
	{
		int128		noisy = (int128) b->count[i] + dp_sample_discrete_laplace(param);

		if (noisy >= t)
		{
			if (first < 0)
				first = i;
			last = i;
		}
	}
	if (first < 0)
		return false;
	bin_edges(first, lower, &unused);
	bin_edges(last, &unused, upper);
	*lo_bin = first;
	*hi_bin = last;
	return true;
}

/* x 2^e exactly */
static Numeric
scaled(Numeric x, int e)
{
	return numeric_mul_opt_error(x, dp_numeric_pow2(e), NULL);
}

static Numeric
add(Numeric a, Numeric b)
{
	return numeric_add_opt_error(a, b, NULL);
}

static Numeric
mul(Numeric a, Numeric b)
{
	return numeric_mul_opt_error(a, b, NULL);
}

/* round(x) as an int128 (half away from zero); x within +-2^126 */
static int128
round_int128(Numeric x)
{
	Numeric		r = DatumGetNumeric(DirectFunctionCall2(numeric_round, NumericGetDatum(x),
														Int32GetDatum(0)));
	char	   *s = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(r)));
	bool		neg = *s == '-';
	uint128		u = 0;

	for (char *p = neg ? s + 1 : s; *p >= '0' && *p <= '9'; p++)
		u = u * 10 + (uint128) (*p - '0');
	return neg ? -(int128) u : (int128) u;
}

/* a bin's exact sum of squares as a numeric, in its squared units */
static Numeric
bin_squares(const DpBins *b, int i)
{
	Numeric		top = dp_int128_numeric((int128) b->sq_top[i]);
	Numeric		lo128 = add(mul(dp_int128_numeric((int128) b->sq_hi[i]),
								dp_int128_numeric((int128) 1 << 64)),
							dp_int128_numeric((int128) b->sq_lo[i]));

	return add(mul(top, scaled(dp_int128_numeric(1), 128)), lo128);
}

/*
 * The clamped moments of the rows for bounds [lower, upper] that the grid
 * 2^k holds (lo_units, hi_units their units): N rows, and in grid units
 * rounded once each:
 *   *sum  = round(S / 2^k), S the sum of the rows clamped to the bounds;
 *   *centred = round((2 S - N (L + U)) / 2^k), half units;
 *   *squares = round((2 sum z^2 - N D^2) / 2^shift), z the centred rows in
 *   half units, D = (U - L) / 2^k (only with squares).
 * Bins inside [lo_bin, hi_bin] add their sums; those below count at L,
 * above at U.
 */
void
dp_bins_moments(const DpBins *b, int lo_bin, int hi_bin, int64 lo_units, int64 hi_units,
				int k, int shift, int64 *count, int128 *sum, int128 *centred, int128 *squares)
{
	Numeric		zero = dp_int128_numeric(0);
	Numeric		s = zero;		/* the clamped sum, in value units */
	Numeric		s2 = zero;		/* ... of squares */
	Numeric		lower = scaled(dp_int128_numeric(lo_units), k);
	Numeric		upper = scaled(dp_int128_numeric(hi_units), k);
	Numeric		nn,
				mid,
				t;
	int64		n = 0;

	for (int i = 0; i < DP_BINS; i++)
	{
		Numeric		c;

		if (b->count[i] == 0)
			continue;
		n += b->count[i];
		c = dp_int128_numeric(b->count[i]);
		if (i < lo_bin)
		{
			s = add(s, mul(c, lower));
			if (b->squares)
				s2 = add(s2, mul(c, mul(lower, lower)));
		}
		else if (i > hi_bin)
		{
			s = add(s, mul(c, upper));
			if (b->squares)
				s2 = add(s2, mul(c, mul(upper, upper)));
		}
		else
		{
			s = add(s, scaled(dp_int128_numeric(b->sum[i]), bin_unit(i)));
			if (b->squares)
				s2 = add(s2, scaled(bin_squares(b, i), 2 * bin_unit(i)));
		}
	}
	*count = n;
	nn = dp_int128_numeric(n);
	*sum = round_int128(scaled(s, -k));
	/* 2 S - N (L + U) */
	mid = add(lower, upper);
	t = numeric_sub_opt_error(mul(dp_int128_numeric(2), s), mul(nn, mid), NULL);
	*centred = round_int128(scaled(t, -k));
	if (b->squares)
	{
		/*
		 * sum z^2 = (4 S2 - 4 (L + U) S + N (L + U)^2) / 2^(2k), and
		 * 2 sum z^2 - N D^2
		 */
		int64		d = hi_units - lo_units;
		Numeric		z2 = add(numeric_sub_opt_error(mul(dp_int128_numeric(4), s2),
												   mul(dp_int128_numeric(4), mul(mid, s)), NULL),
							 mul(nn, mul(mid, mid)));
		Numeric		q = numeric_sub_opt_error(scaled(mul(dp_int128_numeric(2), z2), -2 * k),
											  mul(nn, dp_int128_numeric((int128) d * d)), NULL);

		*squares = round_int128(scaled(q, -shift));
	}
	else
		*squares = 0;
}

/*
 * Serialized form: the 192 counts and sums, then (with squares) the
 * 192-bit sums of squares: a fixed size for each.
 */
Size
dp_bins_serial_size(bool squares)
{
	return DP_BINS * (sizeof(int64) + sizeof(int128)) +
		(squares ? DP_BINS * 3 * sizeof(uint64) : 0);
}

void
dp_bins_serialize(const DpBins *b, char *p)
{
	memcpy(p, b->count, sizeof(b->count));
	p += sizeof(b->count);
	memcpy(p, b->sum, sizeof(b->sum));
	p += sizeof(b->sum);
	if (b->squares)
	{
		memcpy(p, b->sq_lo, sizeof(b->sq_lo));
		p += sizeof(b->sq_lo);
		memcpy(p, b->sq_hi, sizeof(b->sq_hi));
		p += sizeof(b->sq_hi);
		memcpy(p, b->sq_top, sizeof(b->sq_top));
	}
}

/* false unless the counts are at least 0 and the sums fit their bins */
bool
dp_bins_deserialize(DpBins *b, const char *p)
{
	memcpy(b->count, p, sizeof(b->count));
	p += sizeof(b->count);
	memcpy(b->sum, p, sizeof(b->sum));
	p += sizeof(b->sum);
	if (b->squares)
	{
		memcpy(b->sq_lo, p, sizeof(b->sq_lo));
		p += sizeof(b->sq_lo);
		memcpy(b->sq_hi, p, sizeof(b->sq_hi));
		p += sizeof(b->sq_hi);
		memcpy(b->sq_top, p, sizeof(b->sq_top));
	}
	for (int i = 0; i < DP_BINS; i++)
	{
		/* a row adds at most 2^53 units to its bin's sum, in magnitude */
		int128		limit = (int128) b->count[i] << 53;

		if (b->count[i] < 0 || b->sum[i] > limit || b->sum[i] < -limit ||
			(b->sum[i] != 0 && ((i > ZERO_BIN) != (b->sum[i] > 0))))
			return false;
	}
	return true;
}
