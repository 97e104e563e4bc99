/*-------------------------------------------------------------------------
 *
 * noise.c
 *	  Exact samplers for the discrete Laplace and the discrete Gaussian.
 *
 * The algorithms are those of Canonne, Kamath & Steinke 2020, "The Discrete
 * Gaussian for Differential Privacy": Algorithm 1 (Bernoulli(exp(-gamma))),
 * Algorithm 2 (discrete Laplace) and Algorithm 3 (discrete Gaussian).  They
 * consume only uniform random integers (random.c) and do exact integer and
 * rational arithmetic: no floating-point number touches a sample, so the
 * attacks on floating-point noise (Mironov 2012) have nothing to work on.
 *
 * Parameters are exact rationals: the Laplace scale t/s with 64-bit integers
 * and the Gaussian variance sigma^2 = p/q with 128-bit integers.  The
 * Gaussian's acceptance test needs products of up to about 380 bits, done in
 * a small fixed-width unsigned integer type (Big) that refuses to overflow.
 *
 * Timing.  The work of a sampler depends on the parameters (public) and on
 * the noise it draws, never on the value the noise is added to: the true
 * count or sum is not an input of any function here.  The number of loop
 * iterations, and the length of the Gaussian's big-integer products, grow
 * with the magnitude of the noise drawn, so the time of a release carries a
 * little information about |noise|.  It is a few hundred nanoseconds against
 * the milliseconds of the statement around it; see doc/guarantees.md
 * ("Timing").
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"

#include "noise.h"
#include "random.h"

/* ---------- a small fixed-width unsigned integer ---------- */

#define BIG_LIMBS 8				/* 512 bits; the largest product needs ~380 */

typedef struct Big
{
	int			n;				/* number of significant limbs, 0 for zero */
	uint64		w[BIG_LIMBS];	/* little-endian limbs */
} Big;

static inline void
big_norm(Big *a)
{
	while (a->n > 0 && a->w[a->n - 1] == 0)
		a->n--;
}

static inline void
big_set_u128(Big *a, uint128 v)
{
	a->w[0] = (uint64) v;
	a->w[1] = (uint64) (v >> 64);
	a->n = 2;
	big_norm(a);
}

static int
big_cmp(const Big *a, const Big *b)
{
	if (a->n != b->n)
		return a->n < b->n ? -1 : 1;
	for (int i = a->n - 1; i >= 0; i--)
	{
		if (a->w[i] != b->w[i])
			return a->w[i] < b->w[i] ? -1 : 1;
	}
	return 0;
}

/* a -= b, requires a >= b */
static void
big_sub(Big *a, const Big *b)
{
	uint64		borrow = 0;

	Assert(big_cmp(a, b) >= 0);
	for (int i = 0; i < a->n; i++)
	{
		uint64		bi = i < b->n ? b->w[i] : 0;
		uint128		d = (uint128) a->w[i] - bi - borrow;

		a->w[i] = (uint64) d;
		borrow = (d >> 64) != 0;
	}
	big_norm(a);
}

/* out = a * b (out may alias neither) */
static void
big_mul(const Big *a, const Big *b, Big *out)
{
	uint64		r[2 * BIG_LIMBS] = {0};
	int			n = a->n + b->n;

	for (int i = 0; i < a->n; i++)
	{
		uint64		carry = 0;

		for (int j = 0; j < b->n; j++)
		{
			uint128		t = (uint128) a->w[i] * b->w[j] + r[i + j] + carry;

			r[i + j] = (uint64) t;
			carry = (uint64) (t >> 64);
		}
		r[i + b->n] = carry;
	}
	while (n > 0 && r[n - 1] == 0)
		n--;
	if (n > BIG_LIMBS)
		elog(ERROR, "dp_agg: sampler arithmetic overflow");
	memcpy(out->w, r, sizeof(out->w));
	out->n = n;
}

static int
big_bitlen(const Big *a)
{
	if (a->n == 0)
		return 0;
	return 64 * (a->n - 1) + (64 - __builtin_clzll(a->w[a->n - 1]));
}

/* uniform integer in [0, n), n > 0, by rejection */
static void
big_random_below(const Big *n, Big *out)
{
	int			bits = big_bitlen(n);
	int			limbs = (bits + 63) / 64;
	int			topbits = bits - 64 * (limbs - 1);
	uint64		topmask = topbits == 64 ? ~UINT64CONST(0) : ((UINT64CONST(1) << topbits) - 1);

	Assert(bits > 0);
	do
	{
		CHECK_FOR_INTERRUPTS();
		dp_random_fill(out->w, limbs * sizeof(uint64));
		out->w[limbs - 1] &= topmask;
		out->n = limbs;
		big_norm(out);
	} while (big_cmp(out, n) >= 0);
}

/* ---------- Bernoulli trials (CKS 2020, Algorithm 1) ---------- */

/* Bernoulli(1/k), k >= 1 */
static inline bool
bernoulli_recip(uint64 k)
{
	return dp_random_below(k) == 0;
}

/*
 * Bernoulli(num/den), 0 <= num < den: a uniform real in [0, 1), drawn one
 * bit at a time, against the binary expansion of num/den, computed one
 * digit at a time by long division.  The first bit where they differ
 * decides: the uniform real is below num/den exactly when that bit of
 * num/den is 1.  They differ at each digit with probability 1/2, so two
 * bits are drawn on average, where an integer below den would take
 * log2(den) bits (den is 2^40 or more for the noise of a fine grid).
 */
static inline bool
bernoulli_ratio(uint64 num, uint64 den)
{
	uint128		rem = num;

	Assert(num < den);
	for (;;)
	{
		bool		digit;

		rem <<= 1;
		digit = rem >= den;
		if (digit)
			rem -= den;
		if ((dp_random_bits(1) != 0) != digit)
			return digit;
	}
}

/*
 * Bernoulli(exp(-1)): Algorithm 1 with gamma = 1.  K counts the successes of
 * Bernoulli(1/K); P[K odd] = exp(-1).
 */
static bool
bernoulli_exp_minus_one(void)
{
	uint64		k = 1;

	while (bernoulli_recip(k))
		k++;
	return (k & 1) == 1;
}

/*
 * Bernoulli(exp(-num/den)) for 64-bit num, den (den > 0).  The integer part
 * of gamma is consumed one exp(-1) trial at a time (CKS 2020, Algorithm 1,
 * case gamma > 1); the fraction by the alternating series of Algorithm 1,
 * drawing Bernoulli(gamma/K) as Bernoulli(1/K) and Bernoulli(num/den).
 */
bool
dp_bernoulli_exp_u64(uint64 num, uint64 den)
{
	uint64		k;

	Assert(den > 0);
	while (num >= den)
	{
		if (!bernoulli_exp_minus_one())
			return false;
		num -= den;
	}
	if (num == 0)
		return true;
	for (k = 1;; k++)
	{
		if (!(bernoulli_recip(k) && bernoulli_ratio(num, den)))
			break;
	}
	return (k & 1) == 1;
}

/* the same for big num, den (den > 0); num is consumed */
static bool
bernoulli_exp_big(Big *num, const Big *den)
{
	uint64		k;
	Big			u;

	while (big_cmp(num, den) >= 0)
	{
		CHECK_FOR_INTERRUPTS();
		if (!bernoulli_exp_minus_one())
			return false;
		big_sub(num, den);
	}
	if (num->n == 0)
		return true;
	for (k = 1;; k++)
	{
		if (!bernoulli_recip(k))
			break;
		big_random_below(den, &u);
		if (big_cmp(&u, num) >= 0)
			break;
	}
	return (k & 1) == 1;
}

/* ---------- discrete Laplace (CKS 2020, Algorithm 2) ---------- */

/*
 * One sample of the discrete Laplace with scale t/s:
 * P[X = x] = (e^(s/t) - 1)/(e^(s/t) + 1) * exp(-|x| s/t).
 */
int128
dp_sample_discrete_laplace(DpLaplaceParam param)
{
	uint64		t = param.t;
	uint64		s = param.s;

	if (t == 0 || s == 0 || t > (UINT64CONST(1) << 63) || s > (UINT64CONST(1) << 63))
		elog(ERROR, "dp_agg: invalid discrete Laplace parameter %llu/%llu",
			 (unsigned long long) t, (unsigned long long) s);

	for (;;)
	{
		uint64		u = dp_random_below(t);
		uint64		v = 0;
		uint128		x;
		uint128		y;
		bool		negative;

		/* rejection: a geometric number of rounds, unbounded in principle */
		CHECK_FOR_INTERRUPTS();
		/* (u = 0, every draw when t = 1: exp(0) = 1, which draws no bit) */
		if (u != 0 && !dp_bernoulli_exp_u64(u, t))
			continue;
		while (bernoulli_exp_minus_one())
		{
			if (++v == PG_UINT64_MAX)
				elog(ERROR, "dp_agg: discrete Laplace sampler did not terminate");
		}
		x = (uint128) u + (uint128) t * v;
		/* s is a power of 2 (dp_laplace_param): a shift, not a division */
		y = (s & (s - 1)) == 0 ? x >> pg_rightmost_one_pos64(s) : x / s;
		negative = dp_random_bits(1) != 0;
		if (negative && y == 0)
			continue;
		return negative ? -(int128) y : (int128) y;
	}
}

/* ---------- discrete Gaussian (CKS 2020, Algorithm 3) ---------- */

static uint64
isqrt_u128(uint128 x)
{
	uint64		r = (uint64) sqrt((double) x);

	/* correct the floating-point estimate; x is far below 2^126 here */
	while ((uint128) r * r > x)
		r--;
	while ((uint128) (r + 1) * (r + 1) <= x)
		r++;
	return r;
}

/*
 * One sample of the discrete Gaussian N_Z(0, sigma^2), sigma^2 = p/q:
 * P[X = x] proportional to exp(-x^2 / (2 sigma^2)).
 *
 * Proposal Y from the discrete Laplace with integer scale t = floor(sigma)+1,
 * accepted with probability exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2)).  With
 * sigma^2 = p/q that exponent is the exact rational
 *     (|Y| q t - p)^2 / (2 p q t^2).
 */
int128
dp_sample_discrete_gaussian(DpGaussianParam param)
{
	uint128		p = param.p;
	uint128		q = param.q;
	uint64		t;
	DpLaplaceParam lap;
	Big			bp,
				bq,
				bt,
				den,
				tmp;

	if (p == 0 || q == 0 || p / q > ((uint128) 1 << 100))
		elog(ERROR, "dp_agg: invalid discrete Gaussian parameter");

	t = isqrt_u128(p / q) + 1;
	lap.t = t;
	lap.s = 1;

	big_set_u128(&bp, p);
	big_set_u128(&bq, q);
	big_set_u128(&bt, t);
	/* den = 2 p q t^2 */
	big_mul(&bp, &bq, &tmp);
	big_mul(&tmp, &bt, &den);
	big_mul(&den, &bt, &tmp);
	{
		Big			two;

		big_set_u128(&two, 2);
		big_mul(&tmp, &two, &den);
	}

	for (;;)
	{
		int128		y = dp_sample_discrete_laplace(lap);
		uint128		absy = y < 0 ? -(uint128) y : (uint128) y;
		Big			a,
					b,
					d,
					num;

		CHECK_FOR_INTERRUPTS();
		/* d = | |Y| q t - p | */
		big_set_u128(&b, absy);
		big_mul(&b, &bq, &tmp);
		big_mul(&tmp, &bt, &a);
		if (big_cmp(&a, &bp) >= 0)
		{
			d = a;
			big_sub(&d, &bp);
		}
		else
		{
			d = bp;
			big_sub(&d, &a);
		}
		big_mul(&d, &d, &num);
		if (bernoulli_exp_big(&num, &den))
			return y;
	}
}
