/*-------------------------------------------------------------------------
 *
 * rdp_laplace.c
 *	  Exact Renyi DP of the Poisson-subsampled discrete Laplace mechanism,
 *	  for the 'rdp' accounting of Laplace releases under TABLESAMPLE, and of
 *	  several releases computed from one sample.
 *
 * The discrete Laplace of parameter lambda, P[x] = c a^|x| on the integers
 * (a = e^-lambda, c = (1 - a)/(1 + a)), added to a query of integer
 * sensitivity d, is read on a Poisson sample of rate q.  For add/remove
 * neighbours the two distributions of the output are mu_0 (without the
 * person) and the mixture (1 - q) mu_0 + q mu_s (with), s the shift of the
 * query, |s| <= d.
 *
 * Remove direction, integer order k >= 2: by the binomial expansion
 * (Mironov, Talwar & Zhang 2019, section 3.3; Steinke 2022, "Composition of
 * Differential Privacy & Privacy Amplification by Subsampling", Theorem 34)
 *   exp((k - 1) D_k(mixture || mu_0))
 *     = sum_{j=0..k} C(k, j) (1 - q)^(k-j) q^j exp(M(j)),
 *   M(j) = log sum_x mu_s(x)^j mu_0(x)^(1-j) = (j - 1) D_j(mu_s || mu_0),
 * with M(0) = M(1) = 0.  This is the divergence itself, not a bound, for
 * the pair (0, s).  The add direction, D_k(mu_0 || mixture), is never
 * larger (Steinke 2022, Theorem 35), so the remove direction is the worse
 * of the two and is what we return.  The worst shift is s = d: D_j(mu_s ||
 * mu_0) grows with |s| (checked by test/reference/rdp_laplace.py over all
 * shifts of small sensitivities), and each term above grows with it.
 *
 * M(j) has a closed form (three geometric series, as in
 * dp_rdp_discrete_laplace, whose log it is, computed here in log space so
 * that large orders do not overflow):
 *   M(j) = eps0 (j - 1) - log(1 + a)
 *          + log(1 + e^(-eps0 (2j - 1)) + (1 - a) e^-m (1 - e^(-m (d-1))) / (1 - e^-m)),
 *   eps0 = lambda d, m = lambda (2j - 1).
 * So the divergence at order k is a sum of k - 1 positive terms (j = 2..k,
 * as A - 1 with expm1(M(j))): no series is truncated, the work is k steps
 * (bounded and interruptible through dp_work_step), and the only error is
 * rounding, which is bounded and added (LOG_SLACK_*).
 *
 * Several releases computed from one sample (dp_avg's count and sum, or
 * several calls of one statement on the sampled table) are one mechanism on
 * the sample, whose noises are independent: its M(j) is the sum of theirs
 * (Renyi divergences of product distributions add up), the same expansion
 * applies to it (Theorem 34 takes any mechanism on the sample), and a
 * Gaussian part of noise multipliers s_i adds at most
 * (j - 1) j sum_i 1/(2 s_i^2) (its Renyi DP, which the discrete Gaussian
 * does not exceed: Canonne, Kamath & Steinke 2020, Theorem 4).
 *
 * Fractional orders take the value at the next integer: Renyi divergences
 * do not decrease with the order (Steinke 2022, Lemma 33, part 3), so it is
 * an upper bound.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "calibrate.h"
#include "rdp_laplace.h"

/*
 * Rounding of the sum of log terms: every term is a few operations of
 * lgamma, log, log1p, exp and expm1 (glibc: errors of a few ulps of their
 * results) on values of magnitude at most `size`, and the sum of at most
 * k + 1 terms by dp_log_add adds a relative 2^-52 per term.  An absolute
 * 2^-40 size plus 1e-9 is thousands of times those errors for every order
 * the calculators accept (k <= 10^5).
 */
#define LOG_SLACK_ABS 1e-9
#define LOG_SLACK_REL (1.0 / 1099511627776.0)	/* 2^-40 */

/* log of the j-th moment of the likelihood ratio mu_d / mu_0, j >= 2 */
static double
log_moment(double lambda, double d, int j)
{
	double		eps0 = lambda * d;
	double		m = lambda * (2.0 * j - 1);
	double		inner = 0;

	if (d > 1)
		inner = -expm1(-lambda) * exp(-m) * (-expm1(-m * (d - 1))) / (-expm1(-m));
	return eps0 * (j - 1) - log1p(exp(-lambda)) +
		log1p(exp(-eps0 * (2.0 * j - 1)) + inner);
}

/* log(e^x - 1), x > 0 */
static double
log_expm1(double x)
{
	return x + log(-expm1(-x));
}

/*
 * Renyi DP of order alpha (> 1, finite) of n discrete Laplace releases of
 * parameters lambda[i] and integer sensitivities d[i] >= 1, and Gaussian
 * releases with sum of 1 / s_i^2 equal to gauss_mu2 (0 if none), all
 * computed from one Poisson sample of rate q in (0, 1): the worse of the
 * add and remove directions, rounded up.
 */
double
dp_rdp_sampled_releases(double q, int n, const double *lambda, const double *d,
						double gauss_mu2, double alpha)
{
	int			k = (int) ceil(alpha);
	double		lse = -INFINITY;
	double		size = 0;
	double		log_q = log(q);
	double		log_1q = log1p(-q);

	for (int j = 2; j <= k; j++)
	{
		double		log_coef = lgamma(k + 1.0) - lgamma(j + 1.0) - lgamma(k - j + 1.0);
		double		mj = (j - 1.0) * j * gauss_mu2 / 2;
		double		term;

		for (int i = 0; i < n; i++)
			mj += log_moment(lambda[i], d[i], j);
		term = log_coef + j * log_q + (k - j) * log_1q + log_expm1(mj);
		dp_work_step();
		size = Max(size, Max(fabs(log_coef) + fabs(mj), fabs(j * log_q) + fabs((k - j) * log_1q)));
		lse = dp_log_add(lse, term);
	}
	lse += LOG_SLACK_ABS + size * LOG_SLACK_REL;
	/* log A = log(1 + (A - 1)) */
	if (lse > 0)
		return (lse + log1p(exp(-lse))) / (k - 1);
	return log1p(exp(lse)) / (k - 1);
}

/*
 * Renyi DP of order alpha (> 1, finite) of the discrete Laplace of
 * parameter lambda, integer sensitivity d >= 1, on a Poisson sample of
 * rate q in [0, 1]: the worse of the add and remove directions, rounded up.
 */
double
dp_rdp_sampled_discrete_laplace(double q, double lambda, double d, double alpha)
{
	if (q <= 0)
		return 0;
	if (q >= 1)
		return dp_rdp_discrete_laplace(lambda, d, alpha);
	return dp_rdp_sampled_releases(q, 1, &lambda, &d, 0, alpha);
}
