/*-------------------------------------------------------------------------
 *
 * calibrate.c
 *	  Noise calibration: how much noise buys (epsilon, delta).
 *
 * Pure functions of doubles, no PostgreSQL state, so that every number the
 * aggregates use can be recomputed by the SQL functions of the same names
 * (dp_noise_halfwidth's memo of its last results changes no result).
 * The one exception is bounded work: every step of a loop whose length
 * depends on its input or on convergence goes through dp_work_step, which
 * calls CHECK_FOR_INTERRUPTS (miscadmin.h: it reads a flag and can only
 * throw the cancel or terminate error) and, inside a calculator call that
 * set a limit (dp_work_limit), counts the step against it.  It runs in
 * backends and in the charger alike, and no state is left half-written.
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

#include <float.h>

#include "miscadmin.h"

#include "calibrate.h"

#define LOG_SQRT_2PI 0.91893853320467274178

/* ---------- bounded work ---------- */

/* steps left to the calculator call under way; unlimited when not limited */
static bool work_limited = false;
static int64 work_left = 0;

/*
 * Limit the steps of what follows to max_steps (0: no limit, only
 * cancellation).  The SQL calculators set it at every call, the pricing of
 * a statement clears it, so a limit never outlives the call that set it by
 * more than the next of those.
 */
void
dp_work_limit(int64 max_steps)
{
	work_limited = max_steps > 0;
	work_left = max_steps;
}

/* one step of a loop of input- or convergence-dependent length */
void
dp_work_step(void)
{
	CHECK_FOR_INTERRUPTS();
	if (work_limited && --work_left < 0)
	{
		work_limited = false;
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the computation exceeds the work limit of one call"),
				 errdetail("One call may take at most %lld steps of series, integrals and searches.",
						   (long long) DP_CALCULATOR_MAX_STEPS),
				 errhint("Ask for less in one call: fewer Renyi orders, or parameters closer to "
						 "those the aggregates use.")));
	}
}

/* ---------- root finding ---------- */

/*
 * The most halvings a bisection can make before its bracket holds two
 * adjacent doubles: a linear bisection of a bracket as wide as the doubles
 * (2^1024) reaches their smallest spacing (2^-1074) after 1024 + 1074
 * halvings; a logarithmic one halves the logarithm of hi/lo, at most
 * 2 * 745 (the range of the natural log of positive doubles), until the
 * ratio is 1 + 2^-52: about 64 halvings, then a few linear ones.
 */
#define DP_BISECT_MAX_STEPS (1024 + 1074 + 2)

static double
bisect_midpoint(double lo, double hi, DpBisectMidpoint midpoint)
{
	double		mid;

	switch (midpoint)
	{
		case DP_BISECT_LOG:
			mid = sqrt(lo) * sqrt(hi);
			if (mid > lo && mid < hi)
				return mid;
			return lo + (hi - lo) / 2;
		case DP_BISECT_INTEGER:
			return floor(lo + (hi - lo) / 2);
		case DP_BISECT_LINEAR:
			break;
	}
	return lo + (hi - lo) / 2;
}

/*
 * The smallest x in (lo, hi] where the monotone predicate holds, to the
 * precision asked: holds(hi) must be true, and lo a point where it is
 * false (or a lower limit of the search).  Returns the upper end of the
 * final bracket, so that the predicate was checked true at the value
 * returned (or hi is returned untouched).
 *
 * Stopping rule: the bisection stops as soon as
 *  - the midpoint is not strictly between lo and hi: the bracket holds
 *    adjacent doubles (for DP_BISECT_INTEGER adjacent integers, or above
 *    2^53 adjacent doubles) and cannot narrow any more;
 *  - hi - lo <= rel_tol hi (rel_tol = 0: never);
 *  - or after max_steps halvings (0: DP_BISECT_MAX_STEPS, which the first
 *    rule never reaches).
 * Each step checks for interrupts.
 */
double
dp_bisect(DpPredicate holds, const void *arg, double lo, double hi,
		  DpBisectMidpoint midpoint, double rel_tol, int max_steps)
{
	if (max_steps <= 0 || max_steps > DP_BISECT_MAX_STEPS)
		max_steps = DP_BISECT_MAX_STEPS;
	for (int i = 0; i < max_steps && hi - lo > rel_tol * hi; i++)
	{
		double		mid = bisect_midpoint(lo, hi, midpoint);

		if (!(mid > lo && mid < hi))
			break;
		dp_work_step();
		if (holds(mid, arg))
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

/*
 * Widen a bracket upwards until the predicate holds at *hi: *lo takes the
 * last point where it failed, *hi is multiplied by factor > 1.  False when
 * *hi would exceed limit (the answer, if any, lies beyond).  At most
 * log(limit / *hi) / log(factor) steps, each checking for interrupts.
 */
bool
dp_bracket_up(DpPredicate holds, const void *arg, double *lo, double *hi,
			  double factor, double limit)
{
	while (!holds(*hi, arg))
	{
		dp_work_step();
		*lo = *hi;
		*hi *= factor;
		if (!(*hi <= limit))
			return false;
	}
	return true;
}

/*
 * Widen a bracket downwards while the predicate still holds at *lo: *hi
 * takes the last point where it held, *lo is divided by divisor > 1.  False
 * when *lo falls below floor_ (then *hi is the smallest point checked).
 */
static bool
bracket_down(DpPredicate holds, const void *arg, double *lo, double *hi,
			 double divisor, double floor_)
{
	while (holds(*lo, arg))
	{
		dp_work_step();
		*hi = *lo;
		*lo /= divisor;
		if (!(*lo >= floor_))
			return false;
	}
	return true;
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
 * (Dwork & Roth 2014, "The Algorithmic Foundations of Differential
 * Privacy", Theorem 3.6).
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

/* a privacy target (epsilon, delta) and an integer sensitivity, for predicates */
typedef struct DpTarget
{
	double		epsilon;
	double		delta;
	double		sens;
	double		q;				/* sampling rate (Renyi DP search) */
	double		sigma;			/* a fixed sigma (epsilon search) */
} DpTarget;

/* the Gaussian of standard deviation sigma, sensitivity 1, meets the target */
static bool
gaussian_meets(double sigma, const void *arg)
{
	const DpTarget *t = arg;

	return dp_gaussian_delta(sigma, t->epsilon, 1.0) <= t->delta;
}

/*
 * Smallest sigma whose exact delta(epsilon) is at most delta: the analytic
 * Gaussian mechanism (Balle & Wang 2018, Theorem 8 and Algorithm 1).  delta
 * is decreasing in sigma, so bisection on log(sigma) finds it; we iterate to
 * the resolution of a double (adjacent doubles, dp_bisect) and return the
 * upper end of the bracket, whose delta was checked to be at most the
 * target.  Since delta depends on sigma/S only, we solve for S = 1 and
 * scale (rounding up).
 */
double
dp_gaussian_sigma(double epsilon, double delta, double sensitivity)
{
	DpTarget	t = {.epsilon = epsilon, .delta = delta, .sens = 1.0};
	double		lo,
				hi;

	if (sensitivity == 0)
		return 0.0;

	/*
	 * The classical calibration sqrt(2 ln(1.25/delta)) / epsilon (Dwork &
	 * Roth 2014, Theorem A.1) as a starting point.
	 */
	hi = sqrt(2.0 * log(1.25 / delta)) / epsilon;
	if (!(hi > 0) || !isfinite(hi))
		hi = 1.0;
	lo = hi;
	if (!dp_bracket_up(gaussian_meets, &t, &lo, &hi, 2.0, DBL_MAX))
		return INFINITY;
	if (lo == hi && !bracket_down(gaussian_meets, &t, &lo, &hi, 2.0, DBL_TRUE_MIN))
		return dp_mul_up(hi, sensitivity);
	hi = dp_bisect(gaussian_meets, &t, lo, hi, DP_BISECT_LOG, 0, 0);
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
/* -log of the relative size of the last term summed: 48.6 > 70 ln 2 */
#define TAIL_SUM_LOG_CUTOFF 48.6

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

	/*
	 * The terms exp(-((m+j)^2 - m^2)/(2 sigma^2)) decrease; stop below
	 * 2^-70: at most sqrt(2 TAIL_SUM_LOG_CUTOFF) sigma <= 631 terms, as
	 * sigma <= DISCRETE_EXACT_MAX_SIGMA here.
	 */
	while ((2.0 * m * jmax + (double) jmax * jmax) / two_s2 < TAIL_SUM_LOG_CUTOFF)
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
 * Relative margin on the target delta of the discrete calibration: it
 * absorbs the rounding errors of evaluating delta (a few hundred ulps at
 * most), so that the delta of the sigma returned is at most the one asked.
 */
#define DISCRETE_DELTA_MARGIN 1e-9
/* relative precision of the discrete sigma: far below that margin */
#define DISCRETE_SIGMA_REL_TOL 1e-12
/*
 * The discrete sigma is within a few percent of the analytic one it starts
 * from (Canonne, Kamath & Steinke 2020, section 2.1: their deltas differ
 * by the discretisation only), so the bracket grows in steps of 1/16.
 */
#define DISCRETE_SIGMA_STEP 1.0625
/* smallest sigma tried: below it the noise is far below one unit anyway */
#define DISCRETE_SIGMA_START 1e-3
#define DISCRETE_SIGMA_FLOOR 1e-6
/* halvings of the epsilon bracket: absolute precision 2^-60 of its width */
#define DISCRETE_EPSILON_STEPS 60

/* the discrete Gaussian of sigma meets (epsilon, delta) */
static bool
discrete_sigma_meets(double sigma, const void *arg)
{
	const DpTarget *t = arg;

	return dp_discrete_gaussian_delta(sigma, t->epsilon, t->sens) <= t->delta;
}

/* the discrete Gaussian of the fixed sigma is (epsilon, delta)-DP */
static bool
discrete_epsilon_meets(double epsilon, const void *arg)
{
	const DpTarget *t = arg;

	return dp_discrete_gaussian_delta(t->sigma, epsilon, t->sens) <= t->delta;
}

/*
 * The sigma of the discrete Gaussian used by the aggregates: the smallest
 * sigma (to DISCRETE_SIGMA_REL_TOL) whose delta, evaluated as above, is at
 * most delta (1 - DISCRETE_DELTA_MARGIN).
 */
double
dp_discrete_gaussian_sigma(double epsilon, double delta, double sens_units)
{
	DpTarget	t = {.epsilon = epsilon, .delta = delta * (1.0 - DISCRETE_DELTA_MARGIN),
		.sens = sens_units};
	double		lo,
				hi;

	if (sens_units == 0)
		return 0.0;
	hi = dp_gaussian_sigma(epsilon, delta, sens_units);
	if (!isfinite(hi))
		return hi;
	if (hi < DISCRETE_SIGMA_START)
		hi = DISCRETE_SIGMA_START;
	lo = hi;
	if (!dp_bracket_up(discrete_sigma_meets, &t, &lo, &hi, DISCRETE_SIGMA_STEP, DBL_MAX))
		return INFINITY;
	if (lo == hi &&
		!bracket_down(discrete_sigma_meets, &t, &lo, &hi, DISCRETE_SIGMA_STEP,
					  DISCRETE_SIGMA_FLOOR))
		return hi;
	return dp_bisect(discrete_sigma_meets, &t, lo, hi, DP_BISECT_LINEAR,
					 DISCRETE_SIGMA_REL_TOL, 0);
}

/* The smallest epsilon at which the discrete Gaussian with sigma is delta-DP */
double
dp_discrete_gaussian_epsilon(double sigma, double delta, double sens_units)
{
	DpTarget	t = {.sigma = sigma, .delta = delta, .sens = sens_units};
	double		lo = 0,
				hi = 1;

	if (!dp_bracket_up(discrete_epsilon_meets, &t, &lo, &hi, 2.0, DBL_MAX))
		return INFINITY;
	return dp_bisect(discrete_epsilon_meets, &t, lo, hi, DP_BISECT_LINEAR, 0,
					 DISCRETE_EPSILON_STEPS);
}

/* ---------- amplification by subsampling ---------- */

/*
 * Poisson subsampling with rate q turns an epsilon0-DP mechanism into an
 * epsilon-DP one with epsilon = ln(1 + q (e^epsilon0 - 1)) for add/remove
 * neighbours (Steinke 2022, "Composition of Differential Privacy & Privacy
 * Amplification by Subsampling", Theorem 29 and section 6.2; Balle, Barthe
 * & Gaboardi 2018); for (epsilon0, delta0)-DP the
 * delta becomes q delta0.  Computed with expm1/log1p, stable for small
 * values.
 */
double
dp_amplified_epsilon(double epsilon0, double q)
{
	return log1p(q * expm1(epsilon0));
}

/*
 * From this epsilon on the inverse is computed in logs: e^epsilon / q
 * overflows from about epsilon = 709 + ln q, and already at 30 the two
 * forms agree to rounding (e^-30 < 1e-13), so the switch costs nothing.
 */
#define BASE_EPSILON_LOG_FORM 30

/*
 * The inverse: the largest epsilon0 that subsampling at rate q amplifies to
 * at most epsilon, ln(1 + (e^epsilon - 1)/q), rounded down by a relative
 * 2^-50 to cover the few ulps of error of expm1, the division and log1p
 * (for large epsilon, where e^epsilon overflows, the identity
 * ln(e^eps - 1 + q) - ln q = eps - ln q + ln(1 + (q - 1) e^-eps)).
 */
double
dp_base_epsilon(double epsilon, double q)
{
	double		e0;

	if (q >= 1)
		return epsilon;
	if (epsilon < BASE_EPSILON_LOG_FORM)
		e0 = log1p(expm1(epsilon) / q);
	else
		e0 = epsilon - log(q) + log1p((q - 1) * exp(-epsilon));
	return dp_mul_down(e0, 1.0 - ldexp(1.0, -50));
}

/* ---------- Renyi DP of the Poisson-subsampled Gaussian ---------- */

/* log(e^a + e^b), without overflow */
double
dp_log_add(double a, double b)
{
	double		hi = Max(a, b),
				lo = Min(a, b);

	if (hi == -INFINITY)
		return -INFINITY;
	return hi + log1p(exp(lo - hi));
}

/* log(e^a - e^b), a >= b (0 if rounding made b exceed a) */
static double
log_sub(double a, double b)
{
	if (b == -INFINITY)
		return a;
	if (b >= a)
		return -INFINITY;
	return a + log1p(-exp(b - a));
}

/* log erfc(x) for any x */
static double
log_erfc(double x)
{
	return dp_log_norm_sf(x * M_SQRT2) + M_LN2;
}

/*
 * log A_alpha for integer alpha (Mironov, Talwar & Zhang 2019, section 3.3):
 *   A_alpha = sum_i C(alpha, i) (1-q)^(alpha-i) q^i exp((i^2 - i) / (2 sigma^2))
 */
static double
log_a_int(double q, double sigma, int alpha)
{
	double		log_a = -INFINITY;
	double		lgam_alpha = lgamma(alpha + 1.0);

	for (int i = 0; i <= alpha; i++)
	{
		double		log_coef = lgam_alpha - lgamma(i + 1.0) - lgamma(alpha - i + 1.0);
		double		term = log_coef + i * log(q) + (alpha - i) * log1p(-q) +
			((double) i * i - i) / (2 * sigma * sigma);

		dp_work_step();
		log_a = dp_log_add(log_a, term);
	}
	return log_a;
}

/*
 * The largest order the calculators accept (besides infinity), and the
 * terms the fractional series may take: it stops once past alpha and below
 * e^-30, which twice the largest order leaves room for.
 */
#define LOG_A_FRAC_MAX_TERMS (2 * DP_RDP_MAX_ORDER)

/*
 * log A_alpha for fractional alpha: the series of Mironov, Talwar & Zhang
 * 2019 (section 3.3, the computation used by TensorFlow Privacy and Opacus),
 * with signed binomial coefficients, summed in log space until its terms
 * fall below e^-30 relative.
 */
static double
log_a_frac(double q, double sigma, double alpha)
{
	double		log_a0 = -INFINITY,
				log_a1 = -INFINITY;
	double		z0 = sigma * sigma * log(1 / q - 1) + 0.5;
	double		log_coef = 0;	/* log |C(alpha, i)| */
	int			sign = 1;		/* sign of C(alpha, i) */

	for (int i = 0; i < LOG_A_FRAC_MAX_TERMS; i++)
	{
		double		j = alpha - i;
		double		log_t0 = log_coef + i * log(q) + j * log1p(-q);
		double		log_t1 = log_coef + j * log(q) + i * log1p(-q);
		double		log_e0 = log(0.5) + log_erfc((i - z0) / (M_SQRT2 * sigma));
		double		log_e1 = log(0.5) + log_erfc((z0 - j) / (M_SQRT2 * sigma));
		double		log_s0 = log_t0 + ((double) i * i - i) / (2 * sigma * sigma) + log_e0;
		double		log_s1 = log_t1 + (j * j - j) / (2 * sigma * sigma) + log_e1;

		dp_work_step();
		if (sign > 0)
		{
			log_a0 = dp_log_add(log_a0, log_s0);
			log_a1 = dp_log_add(log_a1, log_s1);
		}
		else
		{
			log_a0 = log_sub(log_a0, log_s0);
			log_a1 = log_sub(log_a1, log_s1);
		}
		if (Max(log_s0, log_s1) < -30 && i > alpha)
			break;
		/* C(alpha, i+1) = C(alpha, i) (alpha - i) / (i + 1) */
		if (alpha - i == 0)
			break;
		log_coef += log(fabs(alpha - i)) - log(i + 1.0);
		if (alpha - i < 0)
			sign = -sign;
	}
	return dp_log_add(log_a0, log_a1);
}

/*
 * log A_alpha when A_alpha is close to 1 (tiny rates, large noise).  Both
 * expansions above then lose the relative precision of A_alpha - 1, which
 * is of order q^2 and far below the rounding error of their leading terms.
 * We integrate it instead:
 *   A_alpha - 1 = E[(1 + q Y)^alpha - 1 - alpha q Y],
 *   Y = exp((2z - 1) / (2 sigma^2)) - 1,  z ~ N(0, sigma^2),
 * (E[Y] = 0), computing the integrand with expm1/log1p so that it keeps its
 * relative precision, by the trapezoidal rule with step sigma/16 over
 * [-38 sigma, alpha + 38 sigma]: the integrand is smooth and decays like the
 * Gaussian, so the rule converges geometrically (error of order
 * exp(-2 pi^2 16^2)) and the range holds all but exp(-722) of the mass.
 * Returns NaN when A_alpha is not close to 1 after all.
 */
/*
 * Points of the rule at most (the span over the step: (alpha + 76 sigma)
 * 16 / sigma, so orders up to about 6e5 sigma); beyond, the expansions are
 * kept.  A few hundred milliseconds of exp() at most.
 */
#define NEAR_ONE_MAX_POINTS 10000000

static double
log_a_near_one(double q, double sigma, double alpha)
{
	double		h = sigma / 16;	/* error of the rule about exp(-2 pi^2 16^2) */
	double		lo = -38 * sigma;
	double		hi = alpha + 38 * sigma;
	long		n = (long) ((hi - lo) / h) + 1;
	double		sum = 0;

	if (n > NEAR_ONE_MAX_POINTS)
		return NAN;
	for (long k = 0; k < n; k++)
	{
		double		z = lo + k * h;
		double		u = q * expm1((2 * z - 1) / (2 * sigma * sigma));
		double		g = expm1(alpha * log1p(u)) - alpha * u;

		dp_work_step();
		sum += g * exp(-z * z / (2 * sigma * sigma));
	}
	sum *= h / (sigma * sqrt(2 * M_PI));
	if (!isfinite(sum) || sum > 1e-3)
		return NAN;
	return log1p(sum);
}

/*
 * Renyi DP of order alpha of one release of the Poisson-subsampled Gaussian
 * mechanism with rate q and noise multiplier sigma (standard deviation over
 * L2 sensitivity), add/remove neighbours: log(A_alpha) / (alpha - 1), where
 * A_alpha bounds the divergence in both directions (Mironov, Talwar & Zhang
 * 2019, Theorem 5); without sampling it is alpha / (2 sigma^2).
 */
/* absolute slack on log A in the bound used for charging (see below) */
#define RDP_FAST_SLACK 1e-12

static double
rdp_sampled_gaussian(double q, double sigma, double alpha, bool precise)
{
	double		log_a;

	if (q == 0)
		return 0.0;
	if (isinf(alpha))
		return INFINITY;
	if (sigma == 0)
		return INFINITY;
	if (q == 1)
		return alpha / (2 * sigma * sigma);
	if (alpha == floor(alpha) && alpha <= DP_RDP_MAX_ORDER)
		log_a = log_a_int(q, sigma, (int) alpha);
	else
		log_a = log_a_frac(q, sigma, alpha);

	/*
	 * For a bound on what is charged.  The fractional series stops at terms
	 * below e^-30 (about 9.4e-14) and its tail alternates with decreasing
	 * terms, so it understates A, and log A (A >= 1), by less than that; the
	 * log-sums of both expansions lose about 1e-16 absolute per term where
	 * log A is small (relative errors where it is large are covered by the
	 * caller's relative margin).  Measured against test/reference/rdp.py
	 * over the grid: at most 9.4e-14 below.  Add ten times that.
	 */
	if (!precise)
		log_a += RDP_FAST_SLACK;
	/*
	 * Near 1 the expansions keep log A to an absolute 1e-15 or so, plenty
	 * for an epsilon, but not its relative precision: the calculator asks
	 * for it.
	 */
	if (precise && !(log_a > 1e-6))
	{
		double		near = log_a_near_one(q, sigma, alpha);

		if (!isnan(near))
			log_a = near;
	}
	return log_a / (alpha - 1);
}

/* the Renyi DP of one release to full relative precision (calculator) */
double
dp_rdp_sampled_gaussian(double q, double sigma, double alpha)
{
	return rdp_sampled_gaussian(q, sigma, alpha, true);
}

/*
 * An upper bound on the same, for charging: to an absolute precision of
 * about 1e-15 in log A (relative where log A is large), never below the
 * value except by rounding (covered by the caller's relative margin).
 */
double
dp_rdp_sampled_gaussian_fast(double q, double sigma, double alpha)
{
	return rdp_sampled_gaussian(q, sigma, alpha, false);
}

/*
 * From Renyi DP to (epsilon, delta): the smallest, over the orders above
 * 1.01, of rdp + ln(1 - 1/alpha) - (ln delta + ln alpha) / (alpha - 1)
 * (Balle et al. 2020, Theorem 21; Canonne, Kamath & Steinke 2020), and at
 * least 0.
 */
/* the orders the conversion uses: finite and above 1.01 */
static bool
convertible_order(double a)
{
	return a > 1.01 && !isinf(a);
}

/* epsilon at delta of a release with Renyi DP rdp at order a */
static double
order_epsilon(double rdp, double a, double delta)
{
	return rdp + log1p(-1 / a) - (log(delta) + log(a)) / (a - 1);
}

double
dp_rdp_to_epsilon(const double *orders, const double *rdp, int n, double delta)
{
	double		best = INFINITY;

	for (int i = 0; i < n; i++)
	{
		double		e;

		dp_work_step();
		if (!convertible_order(orders[i]) || isnan(rdp[i]))
			continue;
		e = order_epsilon(rdp[i], orders[i], delta);
		if (e < best)
			best = e;
	}
	return Max(best, 0.0);
}

/*
 * The order grid of Google's dp_accounting RDP accountant: 1 + x/10 for
 * x = 1..99, then 11..63, then 128, 256, 512, 1024.
 */
const double *
dp_rdp_orders(int *n)
{
	static double orders[DP_RDP_ORDERS];
	static bool done = false;

	if (!done)
	{
		int			k = 0;

		for (int x = 1; x <= 99; x++)
			orders[k++] = 1 + x / 10.0;
		for (int x = 11; x <= 63; x++)
			orders[k++] = x;
		orders[k++] = 128;
		orders[k++] = 256;
		orders[k++] = 512;
		orders[k++] = 1024;
		done = true;
	}
	*n = DP_RDP_ORDERS;
	return orders;
}

/*
 * epsilon at delta after steps releases of the sampled Gaussian, composed
 * in Renyi DP (each order adds up: Mironov 2017, "Renyi Differential
 * Privacy", Proposition 1) on the dp_accounting grid and converted as above.
 */
double
dp_sampled_gaussian_epsilon(double q, double sigma, double steps, double delta)
{
	int			n;
	const double *orders = dp_rdp_orders(&n);
	double		rdp[DP_RDP_ORDERS];

	for (int i = 0; i < n; i++)
		rdp[i] = steps * dp_rdp_sampled_gaussian_fast(q, sigma, orders[i]);
	return dp_rdp_to_epsilon(orders, rdp, n, delta);
}

/*
 * The Renyi DP search: noise multipliers from RDP_SIGMA_MIN (far less noise
 * than any delta < 1 allows with sampling) to RDP_SIGMA_MAX (beyond it the
 * answer is reported as infinite: the sampler's largest sigma, 2^48 units,
 * is reached long before at any sensitivity of 2^4 units or more), to a
 * relative precision far below the margins of the charges.
 */
#define RDP_SIGMA_MIN 1e-3
#define RDP_SIGMA_MAX 1e12
#define RDP_SIGMA_REL_TOL 1e-12

/*
 * The sampled Gaussian of noise multiplier sigma meets (epsilon, delta):
 * dp_sampled_gaussian_epsilon(q, sigma, 1, delta) <= epsilon, decided order
 * by order, which gives the same answer for less work.  The minimum over
 * the orders is at most epsilon exactly when some order's epsilon is, so
 * the first such order ends the search.  An order whose epsilon exceeds
 * epsilon at Renyi DP 0 cannot meet it (Renyi DP is at least 0, and the
 * rounded sum is monotone in it) and is skipped without computing its
 * Renyi DP: for a small epsilon that is every order of the grid, and the
 * search for sigma ends at once.
 */
static bool
rdp_sigma_meets(double sigma, const void *arg)
{
	const DpTarget *t = arg;
	int			n;
	const double *orders = dp_rdp_orders(&n);

	for (int i = 0; i < n; i++)
	{
		double		a = orders[i];
		double		rdp;

		dp_work_step();
		if (!convertible_order(a) || !(order_epsilon(0, a, t->delta) <= t->epsilon))
			continue;
		rdp = dp_rdp_sampled_gaussian_fast(t->q, sigma, a);
		if (!isnan(rdp) && order_epsilon(rdp, a, t->delta) <= t->epsilon)
			return true;
	}
	return false;
}

/*
 * The smallest noise multiplier whose sampled Gaussian is (epsilon, delta)-DP
 * by the Renyi DP route (one release), by bisection on log sigma.
 */
double
dp_rdp_sampled_gaussian_sigma(double epsilon, double delta, double q)
{
	DpTarget	t = {.epsilon = epsilon, .delta = delta, .q = q};
	double		lo = RDP_SIGMA_MIN,
				hi = 1.0;

	if (!dp_bracket_up(rdp_sigma_meets, &t, &lo, &hi, 2.0, RDP_SIGMA_MAX))
		return INFINITY;
	return dp_bisect(rdp_sigma_meets, &t, lo, hi, DP_BISECT_LOG, RDP_SIGMA_REL_TOL, 0);
}

/*
 * sigma of a Gaussian release whose input is Poisson-subsampled at rate q,
 * so that the release is (epsilon, delta)-DP: the better of
 *  (i) the analytic Gaussian at the base (epsilon0, delta/q) that
 *      amplification turns into (epsilon, delta) (Steinke 2022, Theorem 29),
 *  (ii) the Renyi DP of the sampled Gaussian converted to (epsilon, delta).
 * *method tells which (1 or 2).
 */
double
dp_sampled_gaussian_sigma(double epsilon, double delta, double q, double sens, int *method)
{
	double		s1 = INFINITY,
				s2;

	if (q >= 1)
	{
		*method = 1;
		return dp_gaussian_sigma(epsilon, delta, sens);
	}
	if (delta / q < 1)
		s1 = dp_gaussian_sigma(dp_base_epsilon(epsilon, q), delta / q, 1.0);
	s2 = dp_rdp_sampled_gaussian_sigma(epsilon, delta, q);
	*method = s1 <= s2 ? 1 : 2;
	return dp_mul_up(Min(s1, s2), sens);
}

/* ---------- intervals of the noise ---------- */

/* P[X >= m], X discrete Laplace of scale b on the integers, m >= 1:
 * P[X = x] = (1 - p)/(1 + p) p^|x| with p = e^(-1/b), so P[X >= m] = p^m/(1 + p) */
static double
discrete_laplace_upper(double b, double m)
{
	return exp(-m / b) / (1 + exp(-1 / b));
}

/* P[X >= m], X ~ N_Z(0, sigma^2), integer m >= 1 (Euler-Maclaurin beyond
 * the exact range, without the remainder bound: for reporting) */
static double
discrete_gaussian_upper(double sigma, double m)
{
	if (sigma <= DISCRETE_EXACT_MAX_SIGMA)
		return exp(log_discrete_upper_exact(sigma, m));
	{
		double		z = m / sigma;
		double		sf = exp(dp_log_norm_sf(z));
		double		h0 = hermite_phi(0, z, 0) / sigma;
		double		h1 = -hermite_phi(1, z, 0) / (sigma * sigma);
		double		h3 = -hermite_phi(3, z, 0) / pow(sigma, 4);

		return sf + h0 / 2 - h1 / 12 + h3 / 720;
	}
}

static double
noise_upper(bool laplace, double scale, double m)
{
	return laplace ? discrete_laplace_upper(scale, m) : discrete_gaussian_upper(scale, m);
}

typedef struct HalfwidthTarget
{
	bool		laplace;
	double		scale;
	double		unit;			/* 2^shift */
	int			shift;
	double		confidence;
} HalfwidthTarget;

/* P[|released noise| > k] <= 1 - confidence */
static bool
halfwidth_covers(double k, const void *arg)
{
	const HalfwidthTarget *t = arg;
	double		outside;

	if (t->shift == 0)
		outside = 2 * noise_upper(t->laplace, t->scale, k + 1);
	else
	{
		double		m = (k + 0.5) * t->unit;

		outside = 2 * noise_upper(t->laplace, t->scale, m)
			- (noise_upper(t->laplace, t->scale, m) - noise_upper(t->laplace, t->scale, m + 1));
	}
	return outside <= 1 - t->confidence;
}

/*
 * Beyond this the half-width is reported as infinite: no noise the
 * samplers accept comes near it (their scales are at most 2^62).
 */
#define HALFWIDTH_MAX 1e300

/*
 * The half-width of the central interval of the noise X (discrete Laplace
 * of scale `scale`, or discrete Gaussian of standard deviation `scale`, on
 * the integers) at the given confidence: the smallest integer K with
 * P[|X| <= K] >= confidence.  Above 2^53, where not every integer is a
 * double, the smallest double K that satisfies it (dp_bisect stops at
 * adjacent doubles).
 *
 * With `shift` > 0 the value released is X / 2^shift rounded to the nearest
 * integer (half up): the smallest integer K with P[|round(X/2^shift)| <= K]
 * >= confidence, in released units.  Then, with M = (K + 1/2) 2^shift,
 * P[|round| <= K] = P[-M <= X < M] = 1 - 2 P[X >= M] + P[X = M].
 */
static double
noise_halfwidth(bool laplace, double scale, double confidence, int shift)
{
	HalfwidthTarget t = {laplace, scale, ldexp(1.0, shift), shift, confidence};
	double		lo = 0,
				hi = 1;

	if (scale == 0 || confidence <= 0)
		return 0;
	if (!dp_bracket_up(halfwidth_covers, &t, &lo, &hi, 2.0, HALFWIDTH_MAX))
		return INFINITY;
	if (halfwidth_covers(0, &t))
		return 0;
	return dp_bisect(halfwidth_covers, &t, lo, hi, DP_BISECT_INTEGER, 0, 0);
}

/*
 * The same, remembered: a statement asks for the half-widths of its
 * releases when it is priced, described for the ledger and released, the
 * final functions of a GROUP BY ask for the same one at every group, and
 * the next statement of the same shape asks for the same ones; the search
 * costs thousands of instructions, more than a group's rows.  A pure
 * function of its arguments: the key is every argument, compared bit for
 * bit, so the memo returns what the search would.
 */
#define HALFWIDTH_MEMO_SIZE 8

typedef struct HalfwidthMemo
{
	double		scale;
	double		confidence;
	int			shift;
	bool		laplace;
	double		halfwidth;
} HalfwidthMemo;

double
dp_noise_halfwidth(bool laplace, double scale, double confidence, int shift)
{
	static HalfwidthMemo memo[HALFWIDTH_MEMO_SIZE];
	static int	used = 0,
				next = 0;
	HalfwidthMemo key;

	memset(&key, 0, sizeof(key));
	key.scale = scale;
	key.confidence = confidence;
	key.shift = shift;
	key.laplace = laplace;
	for (int i = 0; i < used; i++)
	{
		if (memcmp(&memo[i], &key, offsetof(HalfwidthMemo, halfwidth)) == 0)
			return memo[i].halfwidth;
	}
	/* computed before the entry is filled: an error leaves no entry behind */
	key.halfwidth = noise_halfwidth(laplace, scale, confidence, shift);
	memo[next] = key;
	next = (next + 1) % HALFWIDTH_MEMO_SIZE;
	if (used < HALFWIDTH_MEMO_SIZE)
		used++;
	return key.halfwidth;
}

/* ---------- Renyi DP of single releases ---------- */

/*
 * Exact Renyi DP of order alpha of the discrete Laplace mechanism with
 * P[x] proportional to exp(-lambda |x|) on the integers and an integer
 * shift d (the sensitivity in units): D_alpha = log(S) / (alpha - 1) with
 *   S = c sum_x exp(-lambda (alpha |x| + (1 - alpha) |x - d|)),
 *   c = (1 - a)/(1 + a), a = e^-lambda,
 * summed in closed form over x <= 0, 0 < x < d and x >= d (three geometric
 * series).  It is the discrete counterpart of Mironov 2017, Proposition 6
 * (and Table II), to which it tends as lambda d stays fixed and
 * lambda goes to 0; the divergence is symmetric in the two directions.
 */
double
dp_rdp_discrete_laplace(double lambda, double d, double alpha)
{
	double		one_minus_a = -expm1(-lambda);
	double		one_plus_a = 1 + exp(-lambda);
	double		eps = lambda * d;
	double		t1,
				t2,
				t3 = 0;

	/* x <= 0: e^(lambda (alpha-1) d) / (1 - a); x >= d: e^(-lambda alpha d) / (1 - a) */
	t1 = exp(eps * (alpha - 1)) / one_plus_a;
	t2 = exp(-eps * alpha) / one_plus_a;
	/* 0 < x < d: e^(lambda (alpha-1) d) r (1 - r^(d-1)) / (1 - r), r = e^(-lambda (2 alpha - 1)) */
	if (d > 1)
	{
		double		mu = lambda * (2 * alpha - 1);

		t3 = exp(eps * (alpha - 1) - mu) * (-expm1(-mu * (d - 1))) / (-expm1(-mu)) *
			one_minus_a / one_plus_a;
	}
	return log(t1 + t2 + t3) / (alpha - 1);
}

/* Renyi DP of the Gaussian mechanism: alpha / (2 (sigma/sensitivity)^2) */
double
dp_rdp_gaussian(double noise_multiplier, double alpha)
{
	return alpha / (2 * noise_multiplier * noise_multiplier);
}
