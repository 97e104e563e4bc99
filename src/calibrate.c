/*-------------------------------------------------------------------------
 *
 * calibrate.c
 *	  Noise calibration: how much noise buys (epsilon, delta).
 *
 * Pure functions of doubles, no PostgreSQL state, so that every number the
 * aggregates use can be recomputed by the SQL functions of the same names.
 *
 * Floating point is used to *choose* noise parameters, never to draw noise.
 * Where an error of a rounding could weaken privacy it is directed: a noise
 * scale is rounded up, a base epsilon down, a charge up (dp_div_up and
 * friends, exact thanks to fma()).  Root finding returns the upper end of its
 * final bracket, so the returned sigma always satisfies the condition that
 * was evaluated.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "calibrate.h"

#define LOG_SQRT_2PI 0.91893853320467274178

/* ---------- directed rounding ---------- */

/* a + b rounded toward +infinity (Knuth's TwoSum gives the exact error) */
double
dp_add_up(double a, double b)
{
	double		s = a + b;
	double		bb = s - a;
	double		err = (a - (s - bb)) + (b - bb);

	if (err > 0 && isfinite(s))
		s = nextafter(s, INFINITY);
	return s;
}

/* a * b rounded toward +infinity, a, b >= 0 */
double
dp_mul_up(double a, double b)
{
	double		p = a * b;

	if (isfinite(p) && fma(a, b, -p) > 0)
		p = nextafter(p, INFINITY);
	return p;
}

/* a * b rounded toward zero, a, b >= 0 */
double
dp_mul_down(double a, double b)
{
	double		p = a * b;

	if (isfinite(p) && fma(a, b, -p) < 0)
		p = nextafter(p, 0.0);
	return p;
}

/* a / b rounded toward +infinity, a >= 0, b > 0 */
double
dp_div_up(double a, double b)
{
	double		q = a / b;

	if (isfinite(q) && fma(-q, b, a) > 0)
		q = nextafter(q, INFINITY);
	return q;
}

/* ---------- the normal tail ---------- */

/*
 * log P[N(0,1) > x], accurate in relative terms for all x: erfc() where it
 * does not underflow, log1p() where the tail is close to 1, and the
 * asymptotic series of the Mills ratio (Abramowitz & Stegun 7.1.23) far out.
 */
double
dp_log_norm_sf(double x)
{
	if (isnan(x))
		return x;
	if (x < -5.0)
		return log1p(-0.5 * erfc(-x / M_SQRT2));
	if (x < 25.0)
		return log(0.5 * erfc(x / M_SQRT2));
	if (isinf(x))
		return -INFINITY;
	{
		double		z2 = 1.0 / (x * x);
		double		term = 1.0;
		double		series = 1.0;

		for (int k = 1; k <= 12; k++)
		{
			term *= -(2 * k - 1) * z2;
			series += term;
		}
		return -0.5 * x * x - log(x) - LOG_SQRT_2PI + log(series);
	}
}

/* exp(la) - exp(lb) for la >= lb, without overflow or cancellation trouble */
static double
exp_diff(double la, double lb)
{
	double		d;

	if (la == -INFINITY)
		return 0.0;
	d = -expm1(lb - la);
	if (!(d > 0))
		return 0.0;
	return exp(la) * d;
}

/* ---------- Laplace ---------- */

/*
 * The Laplace mechanism is epsilon-DP with scale b = sensitivity / epsilon
 * ("A Tail of Two Densities", reference 000, the claim after (1.5)).
 * Rounded up so that the scale used is never below the one required.
 */
double
dp_laplace_scale(double epsilon, double sensitivity)
{
	return dp_div_up(sensitivity, epsilon);
}

/* ---------- continuous Gaussian ---------- */

/*
 * The exact delta(epsilon) of the Gaussian mechanism with standard deviation
 * sigma and L2 sensitivity S (Balle & Wang 2018, Theorem 8):
 *   delta = Phi(S/(2 sigma) - eps sigma/S) - e^eps Phi(-S/(2 sigma) - eps sigma/S)
 * computed in log space from normal tails (erfc, never 1 - Phi), so that it
 * stays accurate for the tiny deltas people use.
 */
double
dp_gaussian_delta(double sigma, double epsilon, double sensitivity)
{
	double		mu;
	double		la,
				lb;

	if (sensitivity == 0)
		return 0.0;
	if (sigma == 0)
		return 1.0;
	mu = sensitivity / sigma;
	la = dp_log_norm_sf(epsilon / mu - mu / 2);
	lb = epsilon + dp_log_norm_sf(epsilon / mu + mu / 2);
	return exp_diff(la, lb);
}

/*
 * Smallest sigma whose exact delta(epsilon) is at most delta: the analytic
 * Gaussian mechanism (Balle & Wang 2018, Theorem 8 and Algorithm 1).  delta
 * is decreasing in sigma, so bisection on log(sigma) finds it; we iterate to
 * the resolution of a double (about 1e-15 relative) and return the upper end
 * of the bracket, whose delta was checked to be at most the target.  Since
 * delta depends on sigma/S only, we solve for S = 1 and scale (rounding up).
 */
double
dp_gaussian_sigma(double epsilon, double delta, double sensitivity)
{
	double		lo,
				hi;

	if (sensitivity == 0)
		return 0.0;

	/* classical calibration (reference 003) as a starting point */
	hi = sqrt(2.0 * log(1.25 / delta)) / epsilon;
	if (!(hi > 0) || !isfinite(hi))
		hi = 1.0;
	lo = hi;
	while (dp_gaussian_delta(hi, epsilon, 1.0) > delta)
	{
		lo = hi;
		hi *= 2.0;
		if (!isfinite(hi))
			return INFINITY;
	}
	if (lo == hi)
	{
		while (dp_gaussian_delta(lo, epsilon, 1.0) <= delta)
		{
			hi = lo;
			lo /= 2.0;
			if (lo == 0)
				return dp_mul_up(hi, sensitivity);
		}
	}
	for (int i = 0; i < 400; i++)
	{
		double		mid = sqrt(lo) * sqrt(hi);

		if (!(mid > lo && mid < hi))
			mid = lo + (hi - lo) / 2;
		if (!(mid > lo && mid < hi))
			break;
		if (dp_gaussian_delta(mid, epsilon, 1.0) <= delta)
			hi = mid;
		else
			lo = mid;
	}
	return dp_mul_up(hi, sensitivity);
}

/* ---------- discrete Gaussian ---------- */

/*
 * The discrete Gaussian N_Z(0, sigma^2) added to an integer-valued query of
 * integer sensitivity D is (epsilon, delta)-DP with
 *   delta = P[Y > u] - e^eps P[Y > u + D],   u = eps sigma^2 / D - D/2
 * (Canonne, Kamath & Steinke 2020, Theorem 7); with f(y) = exp(-y^2/2 sigma^2)
 * and Z = sum_y f(y) that is
 *   delta = (1/Z) sum_{integers y > u} h(y),   h(y) = f(y) - e^eps f(y + D).
 * For small sigma we sum exactly; for larger sigma we use the Euler-Maclaurin
 * formula with an explicit bound on its remainder, so that the value
 * returned is never below the true delta (up to rounding, which the caller
 * covers with a relative margin).
 */
#define DISCRETE_EXACT_MAX_SIGMA 64.0

/*
 * log sum_{x >= m} exp(-x^2 / (2 sigma^2)) for an integer m >= 0, by direct
 * summation (smallest terms first), factoring out the first term.
 */
static double
log_discrete_tail_sum(double sigma, double m)
{
	double		two_s2 = 2.0 * sigma * sigma;
	double		sum = 0.0;
	int			jmax = 0;

	/* terms exp(-((m+j)^2 - m^2)/(2 sigma^2)) decrease; stop below 2^-70 */
	while ((2.0 * m * jmax + (double) jmax * jmax) / two_s2 < 48.6)
		jmax++;
	for (int j = jmax; j >= 0; j--)
		sum += exp(-(2.0 * m * j + (double) j * j) / two_s2);
	return -m * m / two_s2 + log(sum);
}

/* log P[Y >= m], Y ~ N_Z(0, sigma^2), exact up to rounding (small sigma) */
static double
log_discrete_upper_exact(double sigma, double m)
{
	double		logz;

	if (m <= 0)
		return log1p(-exp(log_discrete_upper_exact(sigma, 1.0 - m)));
	/* Z = 1 + 2 sum_{x >= 1} */
	logz = log1p(2.0 * exp(log_discrete_tail_sum(sigma, 1.0)));
	return log_discrete_tail_sum(sigma, m) - logz;
}

/* exp(log_factor) He_n(z) phi(z), for n = 0, 1, 3 (probabilists' Hermite) */
static double
hermite_phi(int n, double z, double log_factor)
{
	double		he = n == 0 ? 1.0 : n == 1 ? z : z * z * z - 3.0 * z;

	return he * exp(log_factor - 0.5 * z * z - LOG_SQRT_2PI);
}

/*
 * log of int_z^inf |He_6(t)| phi(t) dt, bounded above.  Beyond the largest
 * root of He_6 (3.3243...) the integrand is positive and the integral is
 * exactly He_5(z) phi(z), as d/dt [He_5 phi] = -He_6 phi; elsewhere we bound
 * it by the integral over the whole line, at most sqrt(E[He_6^2]) =
 * sqrt(6!) (Cauchy-Schwarz and Hermite orthogonality).
 */
static double
log_he6_tail(double z)
{
	if (z >= 3.3243567)
		return log(z * z * z * z * z - 10.0 * z * z * z + 15.0 * z) - 0.5 * z * z - LOG_SQRT_2PI;
	return 0.5 * log(720.0);
}

/*
 * Euler-Maclaurin, for sigma > DISCRETE_EXACT_MAX_SIGMA.  With m the first
 * integer above u and N = sigma sqrt(2 pi) <= Z (Poisson summation: every
 * term of Z = N sum_k exp(-2 pi^2 sigma^2 k^2) is positive):
 *   sum_{y >= m} h(y) = int_m^inf h + h(m)/2 - h'(m)/12 + h^(3)(m)/720 + R,
 *   |R| <= (2 zeta(6) / (2 pi)^6) int_m^inf |h^(6)|
 * (the remainder of the formula with the periodic Bernoulli function P_6).
 * With f^(n)(y) = (-1/sigma)^n He_n(y/sigma) f(y),
 *   int_m^inf |h^(6)| / N <= sigma^-6 [T(m/sigma) + e^eps T((m + D)/sigma)],
 * T(z) = int_z^inf |He_6| phi (log_he6_tail).  Dividing by N rather than Z
 * can only overstate delta.
 */
static double
discrete_delta_euler_maclaurin(double sigma, double epsilon, double d, double m)
{
	const double log_c6 = log(2.0 * 1.0173430619844491) - 6.0 * log(2.0 * M_PI);
	double		z1 = m / sigma;
	double		z2 = (m + d) / sigma;
	double		integral,
				h0,
				h1,
				h3,
				rem;

	/* int_m^inf h / N = Pbar(z1) - e^eps Pbar(z2) */
	integral = exp_diff(dp_log_norm_sf(z1), epsilon + dp_log_norm_sf(z2));
	/* h^(n)(m) / N = (-1/sigma)^n [He_n(z1) phi(z1) - e^eps He_n(z2) phi(z2)] / sigma */
	h0 = (hermite_phi(0, z1, 0) - hermite_phi(0, z2, epsilon)) / sigma;
	h1 = -(hermite_phi(1, z1, 0) - hermite_phi(1, z2, epsilon)) / (sigma * sigma);
	h3 = -(hermite_phi(3, z1, 0) - hermite_phi(3, z2, epsilon)) / pow(sigma, 4);
	rem = exp(log_c6 + log_he6_tail(z1) - 6.0 * log(sigma)) +
		exp(log_c6 + epsilon + log_he6_tail(z2) - 6.0 * log(sigma));
	return Max(integral + h0 / 2 - h1 / 12 + h3 / 720 + rem, 0.0);
}

/*
 * delta(epsilon) of the discrete Gaussian mechanism, never understated.
 */
double
dp_discrete_gaussian_delta(double sigma, double epsilon, double sens_units)
{
	double		u,
				m;

	if (sens_units == 0)
		return 0.0;
	u = epsilon * sigma * sigma / sens_units - sens_units / 2;
	m = floor(u) + 1;			/* P[Y > u] = P[Y >= m] */
	if (sigma <= DISCRETE_EXACT_MAX_SIGMA)
		return exp_diff(log_discrete_upper_exact(sigma, m),
						epsilon + log_discrete_upper_exact(sigma, m + sens_units));
	return discrete_delta_euler_maclaurin(sigma, epsilon, sens_units, m);
}

/*
 * The sigma of the discrete Gaussian used by the aggregates: the smallest
 * sigma (to about 1e-12 relative) whose delta, evaluated as above, is at most
 * delta (1 - 1e-9); the margin absorbs the rounding errors of the evaluation.
 */
double
dp_discrete_gaussian_sigma(double epsilon, double delta, double sens_units)
{
	double		target = delta * (1.0 - 1e-9);
	double		lo,
				hi;

	if (sens_units == 0)
		return 0.0;
	hi = dp_gaussian_sigma(epsilon, delta, sens_units);
	if (!isfinite(hi))
		return hi;
	if (hi < 1e-3)
		hi = 1e-3;
	lo = hi;
	while (dp_discrete_gaussian_delta(hi, epsilon, sens_units) > target)
	{
		lo = hi;
		hi *= 1.0625;
		if (!isfinite(hi))
			return INFINITY;
	}
	if (lo == hi)
	{
		while (dp_discrete_gaussian_delta(lo, epsilon, sens_units) <= target)
		{
			hi = lo;
			lo /= 1.0625;
			if (lo < 1e-6)
				return hi;
		}
	}
	while (hi - lo > 1e-12 * hi)
	{
		double		mid = lo + (hi - lo) / 2;

		if (dp_discrete_gaussian_delta(mid, epsilon, sens_units) <= target)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}
