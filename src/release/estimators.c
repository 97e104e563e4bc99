/*-------------------------------------------------------------------------
 *
 * estimators.c
 *	  The statistics dp_avg, dp_var and dp_stddev compute from their noisy
 *	  releases, and the error bars of every released value: a 95% interval
 *	  derived from the noise actually drawn, and the scale of that noise.
 *
 * All of it is post-processing of the noisy releases (count N, centred sum
 * C, sum of centred squares Q, in the units of the value), so it costs
 * nothing (Dwork & Roth 2014, Proposition 2.1).  The intervals are the
 * statistic's own, with a coverage of at least 95% for every input:
 *
 *  - a count or a sum: the released value +- the half-width of the central
 *    95% interval of its noise, exact for the discrete noise drawn
 *    (describe.c), so that the exact answer lies within it with
 *    probability at least 0.95;
 *  - an average, a variance, a standard deviation: each of its m releases
 *    lies within the central 1 - 0.05/m interval of its noise, all of them
 *    with probability at least 0.95 (the union bound); the interval is the
 *    range of the statistic over every (N, C, Q) those intervals allow,
 *    intersected with what the bounds allow.  The exact statistic of the
 *    clamped rows lies in it whenever the m intervals hold.
 *
 * The noise scale reported for a derived statistic is the first-order
 * (delta method) standard deviation of its error, evaluated at the
 * released values.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "utils/builtins.h"

#include "describe.h"
#include "estimators.h"

/* the variance of a release's noise, in squared units of the value */
double
dp_noise_variance(const DpNoiseSpec *ns)
{
	double		v;

	switch (ns->mechanism)
	{
		case DP_MECH_LAPLACE:
			{
				/* discrete Laplace, P[x] ~ q^|x|: 2q / (1 - q)^2 */
				double		b = (double) ns->laplace.t / (double) ns->laplace.s;
				double		q = exp(-1.0 / b);
				double		one_minus_q = -expm1(-1.0 / b);

				v = 2 * q / (one_minus_q * one_minus_q);
				break;
			}
		case DP_MECH_GAUSSIAN:
			/* the discrete Gaussian's variance is below sigma^2, and within
			 * a relative e^(-2 pi^2 sigma^2) of it on our lattices */
			v = ns->sigma_units * ns->sigma_units;
			break;
		default:
			return 0;
	}
	return ldexp(v, 2 * ns->grid_exp);
}

/* the bounds of a call's values as doubles */
void
dp_bounds_double(const DpRelease *r, double *lower, double *upper)
{
	switch (r->call.vclass)
	{
		case DP_VALUE_INT:
			*lower = (double) r->lower_int;
			*upper = (double) r->upper_int;
			break;
		case DP_VALUE_FLOAT:
			*lower = r->lower_float;
			*upper = r->upper_float;
			break;
		default:
			*lower = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow,
														NumericGetDatum(r->lower_num)));
			*upper = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow,
														NumericGetDatum(r->upper_num)));
			break;
	}
}

/*
 * Half a unit of a call's row grid: how far the rounding of a row moves
 * it; none for integers on a grid of 1 or finer (they are on it), unless
 * units weight their rows (their totals are rounded too, privacy units)
 */
static double
row_rounding(const DpRelease *r)
{
	if (r->call.vclass == DP_VALUE_INT && r->row_grid_exp <= 0 && r->unit_rows == 0)
		return 0;
	return ldexp(1.0, r->row_grid_exp - 1);
}

static double
clampd(double x, double lo, double hi)
{
	if (!(x >= lo))				/* also NaN */
		return lo;
	return x > hi ? hi : x;
}

/* the smallest and largest c / n over c in [c0, c1], n in [n0, n1], n0 > 0 */
static void
ratio_range(double c0, double c1, double n0, double n1, double *lo, double *hi)
{
	*lo = c0 >= 0 ? c0 / n1 : c0 / n0;
	*hi = c1 >= 0 ? c1 / n0 : c1 / n1;
}

/*
 * dp_avg: midpoint + C / N, clamped to the bounds; the midpoint when
 * N < 1.  m is the midpoint of the rounded bounds (the centre of C), in
 * value units.
 */
double
dp_avg_estimate(const DpRelease *r, double n, double c, double m, DpInterval *iv)
{
	double		lower,
				upper,
				est;

	dp_bounds_double(r, &lower, &upper);
	est = n < 1 ? lower / 2 + upper / 2 : clampd(m + c / n, lower, upper);
	if (iv != NULL)
	{
		double		hn = r->halfwidth[0],
					hc = r->halfwidth[1];

		iv->low = lower;
		iv->high = upper;
		if (n - hn >= 1)
		{
			double		lo,
						hi;

			/* and half a unit of the rows' grid, their rounding */
			double		margin = row_rounding(r);

			ratio_range(c - hc, c + hc, n - hn, n + hn, &lo, &hi);
			iv->low = clampd(m + lo - margin, lower, upper);
			iv->high = clampd(m + hi + margin, lower, upper);
		}
		if (n >= 1)
		{
			double		t = c / n;

			iv->scale = sqrt(dp_noise_variance(&r->sum) +
							 t * t * dp_noise_variance(&r->count)) / n;
		}
		else
			iv->scale = upper / 2 - lower / 2;
	}
	return est;
}

/* s2 / n - (s1 / n)^2 + v1 / n^2, the variance of centred values */
static double
centred_variance(double n, double s1, double s2, double v1)
{
	double		t = s1 / n;

	return s2 / n - t * t + v1 / (n * n);
}

/*
 * The smallest and largest centred variance s2 / n - (s1 / n)^2 over the
 * box of (n, s1, s2) with n >= n0 > 0: increasing in s2; decreasing in
 * |s1|; in n, g(n) = s2 / n - s1^2 / n^2 has g'(n) = (2 s1^2 - s2 n) / n^3,
 * whose only zero n* = 2 s1^2 / s2 (for s2 > 0) is a maximum: the minimum
 * over [n0, n1] is at an end, the maximum at an end or at n*.
 */
static void
variance_range(double n0, double n1, double a0, double a1, double q0, double q1,
			   double *lo, double *hi)
{
	double		amax = Max(fabs(a0), fabs(a1));
	double		amin = (a0 <= 0 && a1 >= 0) ? 0 : Min(fabs(a0), fabs(a1));
	double		best;

	*lo = Min(centred_variance(n0, amax, q0, 0), centred_variance(n1, amax, q0, 0));
	best = Max(centred_variance(n0, amin, q1, 0), centred_variance(n1, amin, q1, 0));
	if (q1 > 0)
	{
		double		nstar = 2 * amin * amin / q1;

		if (nstar > n0 && nstar < n1)
			best = Max(best, centred_variance(nstar, amin, q1, 0));
	}
	*hi = best;
}

/*
 * dp_var: from N, C and Q (Q the sum of centred squares minus N h^2 / 2,
 * as released), the population variance
 *   Q / N + h^2 / 2 - (C / N)^2 + V_C / N^2,
 * clamped to [0, h^2] (h = (upper - lower) / 2, the largest variance the
 * bounds allow); 0 when N < 1.  The term V_C / N^2, V_C the variance of
 * C's noise, removes the bias the noise of C gives (C / N)^2 (E[C^2] =
 * C_exact^2 + V_C): the estimate is unbiased to first order in the noise
 * of N.
 */
double
dp_var_estimate(const DpRelease *r, double n, double c, double q, DpInterval *iv)
{
	double		lower,
				upper,
				h,
				h2,
				est;

	dp_bounds_double(r, &lower, &upper);
	h = upper / 2 - lower / 2;
	h2 = h * h;
	est = n < 1 ? 0 : clampd(centred_variance(n, c, q, dp_noise_variance(&r->sum)) + h2 / 2,
							 0, h2);
	if (iv != NULL)
	{
		double		hn = r->halfwidth[0],
					hc = r->halfwidth[1],
					hq = r->halfwidth[2];

		iv->low = 0;
		iv->high = h2;
		if (n - hn >= 1)
		{
			double		lo,
						hi;

			/*
			 * and the rounding of the rows (half a unit d of their grid,
			 * which moves a variance of values within h by at most
			 * 2 h d + d^2) and of their squares (half a unit of theirs)
			 */
			double		d = row_rounding(r);
			double		margin = 2 * h * d + d * d +
				(d == 0 && r->sq_shift == 0 ? 0 : ldexp(1.0, r->sumsq.grid_exp - 1));

			variance_range(n - hn, n + hn, c - hc, c + hc, q - hq, q + hq, &lo, &hi);
			iv->low = clampd(lo + h2 / 2 - margin, 0, h2);
			iv->high = clampd(hi + h2 / 2 + margin, 0, h2);
		}
		if (n >= 1)
		{
			double		t = c / n;
			double		w = q / n - 2 * t * t;

			iv->scale = sqrt(dp_noise_variance(&r->sumsq) +
							 4 * t * t * dp_noise_variance(&r->sum) +
							 w * w * dp_noise_variance(&r->count)) / n;
		}
		else
			iv->scale = h2;
	}
	return est;
}

/* dp_stddev: the square root of dp_var, its interval's ends too */
double
dp_stddev_estimate(const DpRelease *r, double n, double c, double q, DpInterval *iv)
{
	double		v = dp_var_estimate(r, n, c, q, iv);
	double		sd = sqrt(v);

	if (iv != NULL)
	{
		iv->low = sqrt(iv->low);
		iv->high = sqrt(iv->high);
		/* d sqrt(v) = dv / (2 sqrt(v)); at v = 0, the scale of sqrt */
		iv->scale = sd > 0 ? iv->scale / (2 * sd) : sqrt(iv->scale);
	}
	return sd;
}

/*
 * The interval of a count or a sum: the value +- the 95% half-width of its
 * noise, and the noise scale of the ledger (Laplace scale or sigma).
 */
void
dp_noise_interval(const DpRelease *r, const DpNoiseSpec *ns, double value, DpInterval *iv)
{
	double		w = dp_release_halfwidth(r, ns, DP_CI_CONFIDENCE);

	iv->low = value - w;
	iv->high = value + w;
	iv->scale = ns->noise_scale;
}
