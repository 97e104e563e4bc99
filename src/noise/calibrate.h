/*-------------------------------------------------------------------------
 *
 * calibrate.h
 *	  Mechanism and accountant mathematics: pure functions of doubles.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_CALIBRATE_H
#define DP_AGG_CALIBRATE_H

#include "c.h"

#include <float.h>
#include <math.h>

/*
 * Root finding on a monotone predicate: holds(x, arg) is false below some
 * point and true at and above it.  See dp_bisect in calibrate.c for the
 * stopping rule.
 */
typedef bool (*DpPredicate) (double x, const void *arg);

typedef enum DpBisectMidpoint
{
	DP_BISECT_LINEAR,			/* (lo + hi) / 2 */
	DP_BISECT_LOG,				/* sqrt(lo) sqrt(hi), for positive brackets */
	DP_BISECT_INTEGER			/* floor((lo + hi) / 2), for integer answers */
} DpBisectMidpoint;

extern double dp_bisect(DpPredicate holds, const void *arg, double lo, double hi,
						DpBisectMidpoint midpoint, double rel_tol, int max_steps);
extern bool dp_bracket_up(DpPredicate holds, const void *arg, double *lo, double *hi,
						  double factor, double limit);

/*
 * Bounded work.  The most steps (terms of a series, points of an integral,
 * steps of a search) one call of a SQL calculator may take: at about 0.1 to
 * 0.3 us a step, well under a second, whatever its arguments.  The 156
 * orders of the dp_accounting grid take a few hundred thousand steps at
 * most for the parameters the aggregates use.
 */
#define DP_CALCULATOR_MAX_STEPS INT64CONST(2000000)

extern void dp_work_limit(int64 max_steps);
extern void dp_work_step(void);

/*
 * Directed rounding of one operation: the result rounded to nearest, moved
 * one step when the exact error (TwoSum for a sum, fma for a product or a
 * quotient) shows it is on the wrong side.  Inline, with the step taken on
 * the bits: pricing a statement and charging it take a few thousand of
 * these (its Renyi DP curve, 156 orders per release), and the calls to libm
 * were most of their cost.  Built with -ffp-contract=off (Makefile), so that
 * the error terms are computed as written.
 */

/* the next double toward +infinity of a finite x (nextafter(x, INFINITY)) */
static inline double
dp_next_up(double x)
{
	uint64		u;

	memcpy(&u, &x, sizeof(u));
	if (x == 0)
		u = 1;					/* +-0: the smallest positive subnormal */
	else if (x > 0)
		u++;
	else
		u--;
	memcpy(&x, &u, sizeof(x));
	return x;
}

/* the next double toward zero of a finite, nonzero x (nextafter(x, 0)) */
static inline double
dp_next_down_abs(double x)
{
	uint64		u;

	memcpy(&u, &x, sizeof(u));
	u--;
	memcpy(&x, &u, sizeof(x));
	return x;
}

/*
 * ldexp(x, k) = x * 2^k, by a product when 2^k is a normal double: a product
 * is correctly rounded, as ldexp's result is (exact unless it falls among
 * the subnormals, +-infinity when it overflows), without the library call
 * (made for every group by the final functions)
 */
static inline double
dp_ldexp(double x, int k)
{
	if (likely(k >= -1022 && k <= 1023))
	{
		uint64		u = (uint64) (k + 1023) << 52;
		double		p;

		memcpy(&p, &u, sizeof(p));
		return x * p;
	}
	return ldexp(x, k);
}

/* a + b rounded toward +infinity (Knuth's TwoSum gives the exact error) */
static inline double
dp_add_up(double a, double b)
{
	double		s = a + b;
	double		bb = s - a;
	double		err = (a - (s - bb)) + (b - bb);

	if (err > 0 && isfinite(s))
		s = dp_next_up(s);
	return s;
}

/*
 * The error of a product computed by fma() is exact when the operands'
 * exponents sum to at least emin + p - 1 = -970 (the exactness condition
 * of 2MultFMA; Muller et al., Handbook of Floating-Point Arithmetic), and
 * so is the remainder a - q b of a quotient when a is that large.  Below
 * DP_EXACT_ERROR_MIN, where the error may underflow to zero (a product of
 * two tiny doubles rounds to 0, and so does its fma error), the result is
 * moved one step without looking: never on the wrong side, at most one
 * step further than needed.
 */
#define DP_EXACT_ERROR_MIN 0x1p-960

/* a * b rounded toward +infinity, a, b >= 0 */
static inline double
dp_mul_up(double a, double b)
{
	double		p = a * b;

	if (!isfinite(p))
		return p;
	if (p < DP_EXACT_ERROR_MIN)
		return a == 0 || b == 0 ? p : dp_next_up(p);
	if (fma(a, b, -p) > 0)
		p = dp_next_up(p);
	return p;
}

/* a * b rounded toward zero, a, b >= 0 */
static inline double
dp_mul_down(double a, double b)
{
	double		p = a * b;

	if (!isfinite(p))
		return isfinite(a) && isfinite(b) ? DBL_MAX : p;	/* overflowed */
	if (p < DP_EXACT_ERROR_MIN)
		return p == 0 ? p : dp_next_down_abs(p);
	/* an error below zero means p > 0 */
	if (fma(a, b, -p) < 0)
		p = dp_next_down_abs(p);
	return p;
}

/* a / b rounded toward +infinity, a >= 0, b > 0 */
static inline double
dp_div_up(double a, double b)
{
	double		q = a / b;

	if (!isfinite(q))
		return q;
	if (a < DP_EXACT_ERROR_MIN || q < DP_EXACT_ERROR_MIN)
		return a == 0 ? q : dp_next_up(q);
	if (fma(-q, b, a) > 0)
		q = dp_next_up(q);
	return q;
}

extern double dp_log_norm_sf(double x);
extern double dp_log_add(double a, double b);

/* continuous mechanisms */
extern double dp_laplace_scale(double epsilon, double sensitivity);
extern double dp_gaussian_delta(double sigma, double epsilon, double sensitivity);
extern double dp_gaussian_sigma(double epsilon, double delta, double sensitivity);

/* the discrete Gaussian on the integers, integer sensitivity */
extern double dp_discrete_gaussian_delta(double sigma, double epsilon, double sens_units);
extern double dp_discrete_gaussian_sigma(double epsilon, double delta, double sens_units);
extern double dp_discrete_gaussian_epsilon(double sigma, double delta, double sens_units);

/* amplification by subsampling and Renyi DP */
extern double dp_amplified_epsilon(double epsilon0, double q);
extern double dp_base_epsilon(double epsilon, double q);
extern double dp_rdp_sampled_gaussian(double q, double sigma, double alpha);
extern double dp_rdp_sampled_gaussian_fast(double q, double sigma, double alpha);
extern double dp_rdp_to_epsilon(const double *orders, const double *rdp, int n, double delta);
extern const double *dp_rdp_orders(int *n);
extern double dp_sampled_gaussian_epsilon(double q, double sigma, double steps, double delta);
extern double dp_rdp_sampled_gaussian_sigma(double epsilon, double delta, double q);
extern double dp_sampled_gaussian_sigma(double epsilon, double delta, double q, double sens,
										int *method);

/* largest finite Renyi order the calculators accept: exact up to there */
#define DP_RDP_MAX_ORDER 100000

/* Renyi DP of releases: the orders of a curve (dp_rdp_orders) */
#define DP_RDP_ORDERS (99 + 53 + 4)

extern double dp_rdp_discrete_laplace(double lambda, double d, double alpha);
extern double dp_rdp_gaussian(double noise_multiplier, double alpha);

/* intervals of the noise */
extern double dp_noise_halfwidth(bool laplace, double scale, double confidence, int shift);

#endif							/* DP_AGG_CALIBRATE_H */
