/*-------------------------------------------------------------------------
 *
 * admission.c
 *	  Budget admission: whether a role's budget admits a statement of a
 *	  given price, under basic and Renyi accounting.
 *
 * Pure functions of doubles, like calibrate.c, whose mathematics they use:
 * the charger (charger.c) admits charges with them, and dp_agg.preview
 * (preview.c) tells the analyst whether a statement is affordable, both
 * from a DpBudget that budget_row.c decodes.  Sums are rounded up, so that
 * an error of a rounding never admits more than the budget allows.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "admission.h"

/*
 * The hybrid certificate of a history: Renyi-accounted releases
 * of composed curve `curve`, and private selections, which have no finite
 * Renyi DP curve, of total (sel_epsilon, sel_delta).  It is
 * (epsilon_r(delta_limit - sel_delta) + sel_epsilon, delta_limit)-DP,
 * epsilon_r(d) the curve converted at d:
 *
 * an (epsilon_s, delta_s)-DP mechanism is delta_s-approximately Renyi DP
 * with curve epsilon_s at every order (it is delta_s-close to an
 * epsilon_s-DP one, whose Renyi divergences are at most epsilon_s; Bun &
 * Steinke 2016, "Concentrated Differential Privacy", section 8, approximate
 * zCDP), the releases are Renyi DP with their own curves (delta 0), and
 * approximate Renyi DP composes adaptively by adding the curves and the
 * deltas (ibid., section 8, for any order of the mechanisms, each chosen
 * from the outputs before it).  The whole history is then sel_delta-
 * approximately Renyi DP with curve `curve` + sel_epsilon, which converts
 * at delta_limit - sel_delta to epsilon_r + sel_epsilon (the conversion of
 * Balle et al. 2020, Theorem 21, shifts with a constant curve), plus
 * sel_delta: the basic composition of the two groups.  Infinite when the
 * selections spend all of delta_limit; sums rounded up, the difference
 * down.
 */
static double
hybrid_epsilon(const double *curve, double delta_limit, double sel_epsilon, double sel_delta)
{
	int			n;
	const double *orders = dp_rdp_orders(&n);
	double		delta_r = -dp_add_up(sel_delta, -delta_limit);

	if (!(delta_r > 0))
		return INFINITY;
	return dp_add_up(dp_rdp_to_epsilon(orders, curve, n, delta_r), sel_epsilon);
}

/*
 * Is a statement of price (epsilon, delta), Renyi DP curve `curve` and
 * private selections (selection_epsilon, selection_delta) (included in its
 * price, not in its curve) admitted?  Under basic accounting, when the sums
 * of epsilons and deltas stay within the limits (basic composition: Dwork &
 * Roth 2014, Theorem 3.16).  Under Renyi accounting also when the hybrid
 * certificate (hybrid_epsilon: the composed curve, orders adding up by
 * Mironov 2017, Proposition 1, beside the selections' sums) stays within
 * the epsilon limit: both are valid bounds for the same releases, so either
 * suffices.  *composed is the hybrid epsilon after the statement when the
 * basic sums do not admit it and the accounting is Renyi's (NaN otherwise,
 * and when it cannot be computed, delta_limit = 0): converting a curve
 * costs hundreds of logarithms, and the charger decides every charge.
 */
bool
dp_budget_admits(const DpBudget *b, double epsilon, double delta, const double *curve,
				 double selection_epsilon, double selection_delta, double *composed)
{
	int			n;
	bool		basic_ok = dp_add_up(b->epsilon_spent, epsilon) <= b->epsilon_limit &&
		dp_add_up(b->delta_spent, delta) <= b->delta_limit;

	(void) dp_rdp_orders(&n);
	*composed = NAN;
	if (basic_ok)
		return true;
	if (b->renyi && b->delta_limit > 0)
	{
		double		total[DP_RDP_ORDERS] = {0};

		for (int i = 0; i < n; i++)
			total[i] = dp_add_up(b->rdp[i], curve[i]);
		*composed = hybrid_epsilon(total, b->delta_limit,
								   dp_add_up(b->selection_epsilon, selection_epsilon),
								   dp_add_up(b->selection_delta, selection_delta));
	}
	return b->renyi && b->delta_limit > 0 && *composed <= b->epsilon_limit;
}
