/*-------------------------------------------------------------------------
 *
 * selection_mechanism.c
 *	  Private partition selection: the probability that a group of n units
 *	  is released, and the draw of that decision.
 *
 * A DP statement with GROUP BY releases a group only through this
 * mechanism (selection.c puts it in the statement).  Neighbouring databases
 * differ by one unit (without a privacy unit: one row), which is in at most
 * k groups and adds at most one to the number of units of each.
 *
 * The mechanism.  Desfontaines, Voss, Gipson & Mandayam 2022, "Differentially
 * private partition selection" (PoPETs 2022(1)), Theorem 1: when each unit
 * is in one group (k = 1), the (epsilon, delta)-DP mechanism that releases a
 * group of n units with the largest probability, for every n, releases it
 * with probability pi(n), where pi(0) = 0 and for n >= 1
 *
 *	 pi(n) = min(e^eps pi(n-1) + delta, 1 - e^-eps (1 - pi(n-1) - delta), 1).
 *
 * The two terms are the two (epsilon, delta)-DP constraints between n-1 and
 * n units that can bind for a non-decreasing pi; the other two hold because
 * pi does not decrease.  Groups are decided independently, so a unit
 * changes the decisions of its own groups only.  When a unit is in up to
 * k > 1 groups, each group is decided by the same mechanism at (epsilon/k,
 * delta/k), and the k decisions a unit can change compose to (epsilon,
 * delta) by basic composition (Dwork & Roth 2014, Theorem 3.16; the
 * paper's section 4.1 for k > 1).  Laplace thresholding (Wilson et al. 2020,
 * "Differentially Private SQL with Bounded User Contribution", section 3.4;
 * Google's LaplacePartitionSelection) adds Laplace noise of scale k/epsilon
 * to each group's count and so is, per group, one of the (epsilon/k,
 * delta/k)-DP mechanisms over which pi is optimal: it never releases a group
 * with a higher probability, and is not offered.  Gaussian thresholding
 * (selection_gaussian.c: L2 sensitivity sqrt(k)) needs a number of units
 * that grows like sqrt(k) rather than k.
 *
 * The choice, from (epsilon, delta, k) only: for k > 1, the mechanism
 * whose release probability reaches 1/2 at the smaller n (the optimal one
 * on a tie, and whenever Gaussian thresholding would need a sigma above
 * DP_SELECTION_GAUSSIAN_MAX_SIGMA); for k = 1 always pi, which is optimal.
 *
 * Floating point.  pi is computed by the recursion above with every
 * operation rounded toward the private side: e^eps rounded down, e^-eps
 * up, each sum and product rounded down in the first term, and 1 - pi - delta
 * rounded up inside the second.  Each computed value pit(n) is therefore at
 * most both terms evaluated exactly at pit(n-1), and taking the maximum with
 * pit(n-1) keeps the sequence non-decreasing (pit(n-1) satisfies both
 * constraints against itself).  So the computed sequence satisfies the four
 * constraints of Theorem 1's proof exactly: it is itself an (epsilon,
 * delta)-DP selection, only slightly less likely to release than the exact
 * pi.  The recursion stops where pit reaches 1 or stops growing (rounding
 * below 1 when delta < 2^-53); larger n keep the last value.
 *
 * Drawing.  The decision is Bernoulli(pit(n)), drawn exactly: pit(n) is a
 * double, a dyadic rational, and is compared with a uniform number in [0, 1)
 * whose binary digits are drawn from the CSPRNG (random.c) 64 at a time,
 * until they differ from those of pit(n).  No floating-point operation
 * touches the draw.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"

#include "calibrate.h"
#include "random.h"
#include "selection_mechanism.h"

/* the mechanism's name, in the ledger and preview */
const char *
dp_selection_mechanism_name(const DpSelectionSpec *spec)
{
	return spec->kind == DP_SELECTION_GAUSSIAN ? "gaussian" : "optimal";
}

/* directed rounding of one operation (calibrate.c gives the others) */
static double
add_down(double a, double b)
{
	return -dp_add_up(-a, -b);
}

static double
div_down(double a, double b)
{
	double		q = a / b;

	if (isfinite(q) && fma(-q, b, a) < 0)
		q = nextafter(q, 0.0);
	return q;
}

/*
 * e^x rounded down and up: exp() is accurate to within one ulp (glibc);
 * two ulps leave a margin.
 */
static double
exp_down(double x)
{
	return nextafter(nextafter(exp(x), 0.0), 0.0);
}

static double
exp_up(double x)
{
	return nextafter(nextafter(exp(x), INFINITY), INFINITY);
}

/* pit(n) from pit(n-1), rounded toward the private side (file comment) */
static double
next_pi(double prev, double e_down, double e_neg_up, double delta)
{
	double		grow = add_down(dp_mul_down(e_down, prev), delta);
	double		rest = dp_add_up(dp_add_up(1.0, -prev), -delta);	/* >= 1 - prev - delta */
	double		close = rest <= 0 ? 1.0 : add_down(1.0, -dp_mul_up(e_neg_up, rest));
	double		pi = Min(Min(grow, close), 1.0);

	return Max(pi, prev);
}

static void
too_small(double epsilon, double delta, int max_groups)
{
	if (max_groups == 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("selection epsilon %g and delta %g are too small", epsilon, delta),
				 errdetail("The probability of releasing a group would need more than %lld steps to reach 1.",
						   (long long) DP_SELECTION_MAX_STEPS),
				 errhint("Raise dp_agg.selection_epsilon or dp_agg.selection_delta.")));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("selection epsilon %g and delta %g are too small for units in %d groups",
					epsilon, delta, max_groups),
			 errdetail("The probability of releasing a group would need more than %lld steps to reach 1, and no Gaussian thresholding with a sigma up to %g meets them.",
					   (long long) DP_SELECTION_MAX_STEPS, DP_SELECTION_GAUSSIAN_MAX_SIGMA),
			 errhint("Raise dp_agg.selection_epsilon or dp_agg.selection_delta.")));
}

/*
 * The optimal mechanism at (epsilon/k, delta/k): the table of release
 * probabilities.  False when it would need more than DP_SELECTION_MAX_STEPS
 * steps (or epsilon/k or delta/k vanishes).
 */
static bool
plan_optimal(DpSelectionSpec *spec)
{
	double		e_down,
				e_neg_up;
	int64		cap = 64;

	spec->unit_epsilon = div_down(spec->epsilon, (double) spec->max_groups);
	spec->unit_delta = div_down(spec->delta, (double) spec->max_groups);
	if (!(spec->unit_epsilon > 0 && spec->unit_delta > 0))
		return false;
	e_down = exp_down(spec->unit_epsilon);
	e_neg_up = exp_up(-spec->unit_epsilon);

	spec->pi = palloc(sizeof(double) * cap);
	spec->pi[0] = 0;
	spec->steps = 0;
	spec->half = PG_INT64_MAX;
	for (;;)
	{
		double		p = spec->pi[spec->steps];
		double		next;

		if (p >= 0.5 && spec->half == PG_INT64_MAX)
			spec->half = spec->steps;
		if (p >= 1.0)
			break;
		next = next_pi(p, e_down, e_neg_up, spec->unit_delta);
		if (next == p)
			break;				/* the plateau below 1 (file comment) */
		if (spec->steps + 1 >= DP_SELECTION_MAX_STEPS)
		{
			pfree(spec->pi);
			spec->pi = NULL;
			return false;
		}
		if (spec->steps + 1 >= cap)
		{
			cap *= 2;
			spec->pi = repalloc(spec->pi, sizeof(double) * cap);
		}
		spec->pi[++spec->steps] = next;
		if ((spec->steps & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	spec->threshold = spec->steps;
	return true;
}

/*
 * The selection of a statement: cost (epsilon, delta), units in at most
 * max_groups groups.  Chooses the mechanism (file comment) and computes
 * its parameters.
 */
void
dp_selection_plan(DpSelectionSpec *spec, double epsilon, double delta, int max_groups)
{
	bool		optimal,
				gaussian = false;

	if (max_groups < 1)
		elog(ERROR, "dp_agg: selection with max_groups_contributed %d", max_groups);
	memset(spec, 0, sizeof(DpSelectionSpec));
	spec->epsilon = epsilon;
	spec->delta = delta;
	spec->max_groups = max_groups;
	optimal = plan_optimal(spec);
	if (max_groups > 1)
		gaussian = dp_selection_gaussian_plan(&spec->gauss, epsilon, delta, max_groups);
	if (!optimal && !gaussian)
		too_small(epsilon, delta, max_groups);
	if (gaussian && (!optimal || spec->gauss.tau < spec->half))
	{
		spec->kind = DP_SELECTION_GAUSSIAN;
		spec->half = spec->gauss.tau;	/* P[Z >= 0] > 1/2 > P[Z >= 1] */
	}
	else
		spec->kind = DP_SELECTION_OPTIMAL;
}

/* the probability that a group of n units is released */
double
dp_selection_probability(const DpSelectionSpec *spec, int64 n)
{
	if (spec->kind == DP_SELECTION_GAUSSIAN)
		return dp_selection_gaussian_probability(&spec->gauss, n);
	if (n <= 0)
		return 0;
	return spec->pi[Min(n, spec->steps)];
}

/*
 * Bernoulli(p) for a double p, exactly: U < p for U uniform in [0, 1),
 * compared 64 binary digits at a time.  p = m 2^(e - 53) with m an integer
 * below 2^53; its digits 64c + 1 .. 64c + 64 are floor(m 2^s) mod 2^64 with
 * s = e - 53 + 64 (c + 1), and there are none after the chunk where s >= 0.
 */
static bool
bernoulli_exact(double p)
{
	int			e;
	uint64		m;

	if (!(p > 0))
		return false;
	if (p >= 1)
		return true;
	m = (uint64) ldexp(frexp(p, &e), 53);
	for (int c = 0;; c++)
	{
		int			s = e - 53 + 64 * (c + 1);
		uint64		digits = s <= -64 ? 0 : s < 0 ? m >> -s : s < 64 ? m << s : 0;
		uint64		u = dp_random_u64();

		if (u != digits)
			return u < digits;
		if (s >= 0)
			return false;		/* U's digits so far equal all of p's: U >= p */
	}
}

/* the decision for one group of n units: true to release it */
bool
dp_selection_draw(const DpSelectionSpec *spec, int64 n)
{
	if (spec->kind == DP_SELECTION_GAUSSIAN)
		return dp_selection_gaussian_draw(&spec->gauss, n);
	return bernoulli_exact(dp_selection_probability(spec, n));
}
