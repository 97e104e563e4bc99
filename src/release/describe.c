/*-------------------------------------------------------------------------
 *
 * describe.c
 *	  JSON descriptions of priced calls for the ledger and for preview, and
 *	  the half-width of the central interval of their noise.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "common/shortest_dec.h"
#include "utils/builtins.h"
#include "utils/json.h"

#include "calibrate.h"
#include "describe.h"

/*
 * A JSON number: the shortest decimal that reads back as the same double
 * (PostgreSQL's float8out, Ryu), which is also several times faster than
 * printf's %.17g; a description is built for every statement charged.
 */
static void
append_number(StringInfo buf, double v)
{
	char		digits[DOUBLE_SHORTEST_DECIMAL_LEN];

	appendBinaryStringInfo(buf, digits, double_to_shortest_decimal_buf(v, digits));
}

static void
json_number(StringInfo buf, const char *key, double v)
{
	appendStringInfoChar(buf, '"');
	appendStringInfoString(buf, key);
	appendStringInfoString(buf, "\": ");
	if (isfinite(v))
		append_number(buf, v);
	else
		appendStringInfoString(buf, "null");
}

/* is the release of this noise rounded to an integer (bigint results)? */
static bool
integer_result(const DpRelease *r, const DpNoiseSpec *ns)
{
	if (ns == &r->count)
		return r->call.kind == DP_COUNT || r->call.kind == DP_COUNT_STAR;
	return ns == &r->sum && r->call.kind == DP_SUM && r->call.vclass == DP_VALUE_INT;
}

/*
 * Half-width of the central interval of a release's noise at a confidence,
 * exact for the discrete distribution used (and for its rounding to an
 * integer where the result is a bigint), in units of the released value.
 */
double
dp_release_halfwidth(const DpRelease *r, const DpNoiseSpec *ns, double confidence)
{
	bool		laplace = ns->mechanism == DP_MECH_LAPLACE;
	double		scale_units;

	if (ns->mechanism == DP_MECH_NONE)
		return 0;
	scale_units = laplace ? (double) ns->laplace.t / (double) ns->laplace.s
		: ldexp(ns->noise_scale, -ns->grid_exp);
	if (integer_result(r, ns) && ns->grid_exp < 0)
		return dp_noise_halfwidth(laplace, scale_units, confidence, -ns->grid_exp);
	return ldexp(dp_noise_halfwidth(laplace, scale_units, confidence, 0), ns->grid_exp);
}

/*
 * Half-widths of the releases of a call at the confidence of its error
 * bar (estimators.c), computed once per ticket when it is priced, after
 * joint calibration: for a statistic of m releases (an average, a
 * variance), each at 1 - 0.05 / m, so that all hold together with
 * probability at least 0.95 (the union bound).  The histogram of estimated
 * bounds is not one of them: it chooses the bounds, and the statistic is
 * estimated from the others, in their order (count, sum, sum of squares),
 * which is where estimators.c reads them.
 */
void
dp_plan_halfwidths(DpRelease *r)
{
	const DpNoiseSpec *specs[DP_MAX_NOISES];
	int			n = dp_release_noises(r, specs, NULL);
	int			m = 0;
	double		confidence;

	for (int i = 0; i < n; i++)
		if (specs[i] != &r->histogram)
			specs[m++] = specs[i];
	confidence = m > 1 ? 1 - (1 - DP_CI_CONFIDENCE) / m : DP_CI_CONFIDENCE;
	for (int i = 0; i < m; i++)
		r->halfwidth[i] = dp_release_halfwidth(r, specs[i], confidence);
}

/* the price and the noise of a release: four fields, without braces */
static void
describe_price(StringInfo buf, double epsilon, double delta, const DpNoiseSpec *ns)
{
	json_number(buf, "epsilon", epsilon);
	appendStringInfoString(buf, ", ");
	json_number(buf, "delta", delta);
	appendStringInfoString(buf, ", ");
	json_number(buf, "sensitivity", ns->sensitivity);
	appendStringInfoString(buf, ", ");
	json_number(buf, "noise_scale", ns->noise_scale);
}

/*
 * a release whose grid follows bounds estimated at release time: its
 * sensitivity and noise scale are in units of that grid (release.c)
 */
bool
dp_grid_at_release(const DpRelease *r, const DpNoiseSpec *ns)
{
	return r->auto_bounds && ns != &r->count && ns != &r->histogram;
}

static void
describe_noise(StringInfo buf, const char *part, const DpRelease *r, const DpNoiseSpec *ns)
{
	appendStringInfo(buf, "{\"release\": \"%s\", \"mechanism\": \"%s\", ",
					 part, dp_mechanism_name(ns->mechanism));
	describe_price(buf, ns->epsilon, ns->delta, ns);
	if (dp_grid_at_release(r, ns))
	{
		/* in units of the grid the estimated bounds give each group */
		appendStringInfoString(buf, ", \"grid\": null, \"units\": \"grid\"");
		if (ns->joint_mu > 0)
		{
			appendStringInfoString(buf, ", \"calibration\": \"joint\", ");
			json_number(buf, "joint_mu", ns->joint_mu);
		}
		appendStringInfoString(buf, "}");
		return;
	}
	appendStringInfoString(buf, ", ");
	json_number(buf, "grid", ldexp(1.0, ns->grid_exp));
	appendStringInfoString(buf, ", ");
	json_number(buf, "ci95", dp_release_halfwidth(r, ns, DP_CI_CONFIDENCE));
	if (ns->joint_mu > 0)
	{
		appendStringInfoString(buf, ", \"calibration\": \"joint\", ");
		json_number(buf, "joint_mu", ns->joint_mu);
	}
	if (ns->repeats > 1)
		appendStringInfo(buf, ", \"repeats\": %d", ns->repeats);
	appendStringInfoString(buf, "}");
}

void
dp_sampling_describe(StringInfo buf, const DpRelease *r, const DpNoiseSpec *ns)
{
	const DpSampling *s = &r->sampling;

	if (!s->sampled)
	{
		appendStringInfoString(buf, "null");
		return;
	}
	appendStringInfo(buf, "{\"method\": \"%s\", ", s->method ? s->method : "unknown");
	if (s->units)
		appendStringInfoString(buf, "\"units\": true, ");
	json_number(buf, "rate", s->rate);
	appendStringInfo(buf, ", \"amplified\": %s, ", s->amplified ? "true" : "false");
	json_number(buf, "base_epsilon", ns->base_epsilon);
	if (ns->mechanism == DP_MECH_GAUSSIAN)
	{
		appendStringInfoString(buf, ", ");
		json_number(buf, "base_delta", ns->base_delta);
	}
	if (ns->calibration)
		appendStringInfo(buf, ", \"calibration\": \"%s\"", ns->calibration);
	if (!s->amplified && s->why_not)
	{
		appendStringInfoString(buf, ", \"why_not\": ");
		escape_json(buf, s->why_not);
	}
	appendStringInfoString(buf, "}");
}

/*
 * The private selection of a statement's groups, for the ledger and
 * preview: {"selection": {mechanism, epsilon, delta, ...,
 * max_groups_contributed}}.  The optimal mechanism gives its threshold, the
 * smallest number of units with which a group is released with certainty;
 * Gaussian thresholding its sigma, tau (a group of n units is released when
 * n plus the noise reaches tau) and the split of delta between the noise
 * and the groups of one unit (selection_mechanism.c, selection_gaussian.c).
 */
void
dp_selection_describe(StringInfo buf, const DpRelease *r)
{
	const DpSelectionSpec *s = &r->selection;

	appendStringInfo(buf, "{\"selection\": {\"mechanism\": \"%s\", ",
					 dp_selection_mechanism_name(s));
	json_number(buf, "epsilon", s->epsilon);
	appendStringInfoString(buf, ", ");
	json_number(buf, "delta", s->delta);
	if (s->kind == DP_SELECTION_GAUSSIAN)
	{
		appendStringInfoString(buf, ", ");
		json_number(buf, "sigma", s->gauss.sigma);
		appendStringInfo(buf, ", \"tau\": " INT64_FORMAT ", ", s->gauss.tau);
		json_number(buf, "delta_noise", s->gauss.delta_noise);
		appendStringInfoString(buf, ", ");
		json_number(buf, "delta_threshold", s->gauss.delta_threshold);
	}
	else
		appendStringInfo(buf, ", \"threshold\": " INT64_FORMAT, s->threshold);
	appendStringInfo(buf, ", \"max_groups_contributed\": %d}}", s->max_groups);
}

/*
 * A JSON object describing one priced call, for the ledger: the call's
 * price, and for its main release (the count, or the (centred) sum) the
 * mechanism, sensitivity and noise scale in the units of the released value;
 * "releases" lists every noisy release of the call (dp_avg has two).
 */
void
dp_release_describe(StringInfo buf, const DpRelease *r)
{
	const DpNoiseSpec *main = (r->call.kind == DP_COUNT || r->call.kind == DP_COUNT_STAR)
		? &r->count : DP_KIND_QUANTILE(r->call.kind) ? &r->tree
		: r->call.kind == DP_BOUNDS ? &r->histogram : &r->sum;

	if (r->call.kind == DP_SELECT)
	{
		dp_selection_describe(buf, r);
		return;
	}
	if (r->call.kind == DP_TOP_K)
	{
		/* top-k: k rounds of report noisy max (top_k.c) */
		appendStringInfo(buf, "{\"top_k\": {\"mechanism\": \"report_noisy_max\", \"k\": %d, ", r->top_k);
		json_number(buf, "epsilon", r->epsilon);
		appendStringInfoString(buf, ", ");
		json_number(buf, "noise_scale", r->count.noise_scale);
		appendStringInfoString(buf, ", \"noise\": \"laplace\"}}");
		return;
	}
	if (r->call.kind == DP_PUBLIC)
	{
		/* the groups of a public domain: every key, no selection, no price */
		appendStringInfo(buf, "{\"public_domain\": {\"keys\": " INT64_FORMAT "}}", r->public_keys);
		return;
	}
	appendStringInfo(buf, "{\"aggregate\": \"%s\", ", dp_kind_name(r->call.kind));
	if (OidIsValid(r->call.valtype))
	{
		appendStringInfoString(buf, "\"type\": ");
		escape_json(buf, format_type_be(r->call.valtype));
		appendStringInfoString(buf, ", ");
	}
	appendStringInfo(buf, "\"mechanism\": \"%s\", ", dp_mechanism_name(main->mechanism));
	describe_price(buf, r->epsilon, r->delta, main);
	appendStringInfoString(buf, ", ");
	json_number(buf, "ci95", dp_grid_at_release(r, main) ? NAN
				: dp_release_halfwidth(r, main, DP_CI_CONFIDENCE));
	if (r->auto_bounds && r->call.kind != DP_BOUNDS)
	{
		appendStringInfoString(buf, ", \"bounds\": \"estimated\", ");
		json_number(buf, "bounds_epsilon", r->histogram.epsilon);
	}
	else if (DP_KIND_SUMS(r->call.kind) ||
			 (DP_KIND_QUANTILE(r->call.kind) && !r->tree_domain.log_linear))
	{
		appendStringInfoString(buf, ", \"lower\": ");
		if (r->call.vclass == DP_VALUE_INT)
			appendStringInfo(buf, INT64_FORMAT ", \"upper\": " INT64_FORMAT,
							 r->lower_int, r->upper_int);
		else if (r->call.vclass == DP_VALUE_FLOAT)
		{
			append_number(buf, r->lower_float);
			appendStringInfoString(buf, ", \"upper\": ");
			append_number(buf, r->upper_float);
		}
		else
			appendStringInfo(buf, "%s, \"upper\": %s",
							 numeric_normalize(r->lower_num), numeric_normalize(r->upper_num));
	}
	if (DP_KIND_QUANTILE(r->call.kind))
	{
		appendStringInfoString(buf, ", \"percentiles\": [");
		for (int i = 0; i < r->npercentiles; i++)
		{
			if (i > 0)
				appendStringInfoString(buf, ", ");
			append_number(buf, r->percentiles[i]);
		}
		appendStringInfo(buf, "], \"tree\": {\"branching\": %d, \"height\": %d, \"leaves\": \"%s\"}",
						 DP_TREE_BRANCHING, DP_TREE_HEIGHT,
						 r->tree_domain.log_linear ? "log-linear" : "linear");
		if (r->tree_domain.log_linear)
		{
			appendStringInfoString(buf, ", ");
			json_number(buf, "lower", r->tree_domain.lower);
			appendStringInfoString(buf, ", ");
			json_number(buf, "upper", r->tree_domain.upper);
		}
	}
	appendStringInfoString(buf, ", \"sampling\": ");
	dp_sampling_describe(buf, r, main);
	/* privacy units: the bounds the sensitivity was multiplied by */
	if (r->unit_groups > 0)
		appendStringInfo(buf, ", \"privacy_unit\": {\"max_groups_contributed\": %d, "
						 "\"max_rows_contributed\": %d}", r->unit_groups, r->unit_rows);
	appendStringInfoString(buf, ", \"releases\": [");
	{
		const DpNoiseSpec *specs[DP_MAX_NOISES];
		const char *names[DP_MAX_NOISES];
		int			n = dp_release_noises(r, specs, names);

		for (int i = 0; i < n; i++)
		{
			if (i > 0)
				appendStringInfoString(buf, ", ");
			describe_noise(buf, names[i], r, specs[i]);
		}
	}
	appendStringInfoString(buf, "]}");
}
