/*-------------------------------------------------------------------------
 *
 * release.c
 *	  Release tickets: what each DP aggregate call will release, and how.
 *
 * Before a statement runs (hooks.c), every DP aggregate call in its plan gets
 * a ticket (DpRelease): the epsilon and delta it costs, its clamping bounds,
 * the grid its values are rounded to, the mechanism, and the exact sampler
 * parameters of its noise.  Tickets are computed from the plan, the values of
 * the statement's parameters and the settings at that moment, and nothing
 * else; they are then charged (budget.c) and registered for the executor
 * state of that execution (registry.c).  The aggregate support functions (aggregates.c)
 * look their ticket up and never read a setting: what runs is what was paid.
 * A support function that finds no ticket refuses to run, so any path to a
 * release that bypasses pricing fails closed.
 *
 * Grids.  Every release is an integer number of units of 2^k.  Counts use
 * k = 0.  For sums, each clamped value is rounded to the nearest multiple of
 * 2^k, with k chosen from the bounds and the noise scale (grid.c) so that
 * the noise is about 2^40 units (rounding errors far below the noise), no
 * row exceeds 2^60 units (128-bit sums cannot overflow), and the
 * sensitivity is at least 4 units; integer types never use k < 0 with
 * Laplace noise.  The sensitivity in units is then
 * computed exactly from the rounded bounds.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/numeric.h"

#include "calibrate.h"
#include "auto_bounds.h"
#include "grid.h"
#include "guc.h"
#include "noise_param.h"
#include "params.h"
#include "release.h"

/*
 * The noisy releases of a call and their names (the ledger's "release"),
 * in a fixed order; a private selection has none (selection_mechanism.c).
 */
int
dp_release_noises(const DpRelease *r, const DpNoiseSpec **specs, const char **names)
{
	int			n = 0;

#define ADD(spec, name) do { specs[n] = (spec); if (names) names[n] = (name); n++; } while (0)
	if (r->auto_bounds && r->call.kind != DP_BOUNDS)
		ADD(&r->histogram, "histogram");
	switch (r->call.kind)
	{
		case DP_COUNT_STAR:
		case DP_COUNT:
			ADD(&r->count, "count");
			break;
		case DP_SUM:
			ADD(&r->sum, "sum");
			break;
		case DP_AVG:
			ADD(&r->count, "count");
			ADD(&r->sum, "centred_sum");
			break;
		case DP_VAR:
		case DP_STDDEV:
			ADD(&r->count, "count");
			ADD(&r->sum, "centred_sum");
			ADD(&r->sumsq, "centred_sum_of_squares");
			break;
		case DP_PERCENTILE:
		case DP_MEDIAN:
			ADD(&r->tree, "tree");
			break;
		case DP_BOUNDS:
			ADD(&r->histogram, "histogram");
			break;
		case DP_SELECT:
		case DP_PUBLIC:
		case DP_TOP_K:
			break;				/* no noise of a value (top_k: its rounds, top_k.c) */
	}
#undef ADD
	return n;
}

/* The releases of dp_release_noises that add noise (a mechanism). */
int
dp_release_noisy(const DpRelease *r, const DpNoiseSpec **specs)
{
	const DpNoiseSpec *all[DP_MAX_NOISES];
	int			n = 0;
	int			m = dp_release_noises(r, all, NULL);

	for (int i = 0; i < m; i++)
	{
		if (all[i]->mechanism != DP_MECH_NONE)
			specs[n++] = all[i];
	}
	return n;
}

static Node *
call_arg(Aggref *aggref, int argno)
{
	TargetEntry *tle = list_nth_node(TargetEntry, aggref->args, argno);

	return (Node *) tle->expr;
}

/* the value of argument argno, ERROR if it is NULL */
static Datum
resolve_arg(Aggref *aggref, const DpCallInfo *info, int argno, ParamListInfo params)
{
	Node	   *expr = call_arg(aggref, argno);
	Datum		value;
	bool		isnull;

	dp_check_parameter_expr(expr, info, argno);
	dp_eval_parameter(expr, params, &value, &isnull);
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s of %s must not be NULL",
						dp_arg_name(info, argno), dp_kind_name(info->kind))));
	return value;
}

/*
 * Privacy units (doc/units-and-groups.md, "Privacy units"; Wilson et al. 2020,
 * "Differentially Private SQL with Bounded User Contribution", PoPETs 2020(2),
 * section 3, contribution bounding; the proof is in doc/units-and-groups.md,
 * "Sensitivity (the proof)"): removing one unit changes at most k =
 * unit_groups groups, each by at most its bounded contribution c (unit_rows
 * rows for a count; the clamped total for a sum; unit_rows rows and their
 * centred total for an average).  The vector of a
 * call's releases over the groups then has L1 sensitivity k c (Laplace:
 * Dwork & Roth 2014, Theorem 3.6) and L2 sensitivity sqrt(k) c (Gaussian:
 * the k changes are in distinct coordinates).
 *
 * The grid must be the same for the bounding level (which parallel workers
 * also run, without knowing k) and the release level, so it depends on the
 * row bound only: its noise rule sees the sensitivity R c0 (the noise is
 * then about 2^40 units times k or sqrt(k): finer, never coarser), and its
 * size rule the largest sensitivity any k allows, DP_MAX_UNIT_BOUND R c0,
 * so that k c stays below 2^62 units.  Returns log2 of the factor of the
 * noise rule; *log2_size gets that of the size rule.
 */
static double
unit_grid_log2(const DpRelease *r, bool rows, double *log2_size)
{
	double		l;

	if (r->unit_rows == 0)
	{
		*log2_size = 0;
		return 0;
	}
	l = rows ? log2((double) r->unit_rows) : 0;
	*log2_size = l + log2((double) DP_MAX_UNIT_BOUND);
	return l;
}

/*
 * The sensitivity in grid units of a release whose per-row sensitivity is
 * base units, under privacy units: exact for L1; for L2 the smallest
 * integer s with s^2 >= k (R base)^2 (exactly, while it fits 128 bits; else
 * rounded up by a relative 2^-50 and one unit).
 */
static uint64
unit_sensitivity(const DpRelease *r, uint64 base, bool rows, bool l2)
{
	uint128		c;
	uint128		k = (uint128) r->unit_groups;
	double		s;
	uint128		si;

	if (r->unit_groups == 0)
		return base;
	c = (uint128) base * (rows ? (uint128) r->unit_rows : 1);
	if (!l2)
		c *= k;
	else if (c < ((uint128) 1 << 56))
	{
		/* k <= 2^16 and c < 2^56: k c^2 < 2^128 */
		si = (uint128) ceil(sqrt((double) r->unit_groups) * (double) c);
		while (si * si < k * c * c)
			si++;
		while (si > 0 && (si - 1) * (si - 1) >= k * c * c)
			si--;
		c = si;
	}
	else
	{
		s = ceil(sqrt((double) r->unit_groups) * (double) c * (1 + ldexp(1.0, -50))) + 1;
		c = s < ldexp(1.0, 64) ? (uint128) s : (uint128) PG_UINT64_MAX + 1;
	}
	if (c > PG_UINT64_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the bounds of the privacy unit are too large for %s", dp_kind_name(r->call.kind)),
				 errdetail("The sensitivity would exceed 2^64 grid units.")));
	return (uint64) c;
}

/*
 * The noise of a count.  Laplace noise goes on the integers: the discrete
 * Laplace of scale 1/epsilon is exactly epsilon-DP.  Gaussian noise goes on
 * the lattice 2^k Z with k <= 0 chosen so that sigma is about 2^40 units:
 * there the discrete Gaussian needs no more noise than the continuous one
 * (on the integers it needs up to about 2% more when sigma is small), and the
 * released count is rounded to an integer afterwards (post-processing).
 */
static void
plan_count_noise(DpNoiseSpec *ns, const DpRelease *r, double epsilon, double delta)
{
	const DpSampling *sampling = &r->sampling;
	double		log2_size;
	double		log2_noise = unit_grid_log2(r, true, &log2_size);
	int			k = 0;

	if (delta > 0)
		k = dp_choose_row_grid(log2_noise, log2_size,
							dp_release_noise_multiplier(epsilon, delta, sampling),
							DP_GRID_MIN_EXP);
	dp_release_plan_noise(ns, dp_kind_name(r->call.kind), epsilon, delta,
			   unit_sensitivity(r, UINT64CONST(1) << (-k), true, delta > 0), k, sampling);
}

static int64
int_datum(Datum d, Oid type)
{
	switch (type)
	{
		case INT2OID:
			return DatumGetInt16(d);
		case INT4OID:
			return DatumGetInt32(d);
		default:
			return DatumGetInt64(d);
	}
}

static int64
int_type_max(Oid type)
{
	switch (type)
	{
		case INT2OID:
			return PG_INT16_MAX;
		case INT4OID:
			return PG_INT32_MAX;
		default:
			return PG_INT64_MAX;
	}
}

/*
 * Macros, so that each message is a literal format string where it is
 * raised: the function's name, what is wrong with its bounds, and the
 * detail's format and arguments.
 */
#define BOUNDS_HINT "Clamping bounds must be finite constants with lower <= upper; " \
	"they set the sensitivity, so choose them from what you know " \
	"about the column, not from the data."
#define bad_bounds(fname, msg) \
	ereport(ERROR, \
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE), \
			 errmsg("bounds of %s " msg, fname), \
			 errhint(BOUNDS_HINT)))
#define bad_bounds_detail(fname, msg, ...) \
	ereport(ERROR, \
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE), \
			 errmsg("bounds of %s " msg, fname), \
			 errdetail(__VA_ARGS__), \
			 errhint(BOUNDS_HINT)))

/* integer bounds; *log2_span and *log2_max as for resolve_bounds */
static void
resolve_int_bounds(DpRelease *r, Datum ld, Datum ud, double *log2_span, double *log2_max)
{
	const DpCallInfo *info = &r->call;
	const char *fname = dp_kind_name(info->kind);
	int64		l = int_datum(ld, info->valtype);
	int64		u = int_datum(ud, info->valtype);
	int128		m = Max(-(int128) l, (int128) u);

	if (l > u)
		bad_bounds_detail(fname, "are reversed",
						  "lower is " INT64_FORMAT ", upper is " INT64_FORMAT ".", l, u);
	if (info->kind == DP_SUM && m > int_type_max(info->valtype))
		bad_bounds_detail(fname, "have a sensitivity that overflows the type",
						  "max(|lower|, |upper|) = max(|" INT64_FORMAT "|, |" INT64_FORMAT "|) "
						  "does not fit in %s.", l, u, format_type_be(info->valtype));
	r->lower_int = l;
	r->upper_int = u;
	*log2_max = log2((double) m);	/* m = max(|l|, |u|) as l <= u */
	*log2_span = info->kind == DP_SUM ? *log2_max : log2((double) ((int128) u - l));
}

/* real and double precision bounds */
static void
resolve_float_bounds(DpRelease *r, Datum ld, Datum ud, double *log2_span, double *log2_max)
{
	const DpCallInfo *info = &r->call;
	const char *fname = dp_kind_name(info->kind);
	double		l = info->valtype == FLOAT4OID ? DatumGetFloat4(ld) : DatumGetFloat8(ld);
	double		u = info->valtype == FLOAT4OID ? DatumGetFloat4(ud) : DatumGetFloat8(ud);

	if (isnan(l) || isnan(u))
		bad_bounds(fname, "must not be NaN");
	if (isinf(l) || isinf(u))
		bad_bounds(fname, "must be finite");
	if (l > u)
		bad_bounds_detail(fname, "are reversed",
						  "lower is %g, upper is %g.", l, u);
	r->lower_float = l;
	r->upper_float = u;
	*log2_max = log2(Max(fabs(l), fabs(u)));
	*log2_span = info->kind == DP_SUM ? *log2_max : log2(u / 2 - l / 2) + 1;
}

/* numeric bounds, which must lie within the range of double precision */
static void
resolve_numeric_bounds(DpRelease *r, Datum ld, Datum ud, double *log2_span, double *log2_max)
{
	const DpCallInfo *info = &r->call;
	const char *fname = dp_kind_name(info->kind);
	Numeric		l = DatumGetNumeric(ld);
	Numeric		u = DatumGetNumeric(ud);
	double		lf,
				uf,
				span;

	if (numeric_is_nan(l) || numeric_is_nan(u))
		bad_bounds(fname, "must not be NaN");
	if (numeric_is_inf(l) || numeric_is_inf(u))
		bad_bounds(fname, "must be finite");
	if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, ld, ud)) > 0)
		bad_bounds_detail(fname, "are reversed",
						  "lower is %s, upper is %s.",
						  numeric_normalize(l), numeric_normalize(u));
	lf = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, ld));
	uf = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, ud));
	span = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow,
											  NumericGetDatum(numeric_sub_opt_error(u, l, NULL))));
	if (!isfinite(lf) || !isfinite(uf) || !isfinite(span))
		bad_bounds_detail(fname, "are too large",
						  "Numeric bounds must lie within the range of double precision.");
	r->lower_num = DatumGetNumeric(datumCopy(ld, false, -1));
	r->upper_num = DatumGetNumeric(datumCopy(ud, false, -1));
	*log2_max = log2(Max(fabs(lf), fabs(uf)));
	*log2_span = info->kind == DP_SUM ? *log2_max : log2(span);
}

/*
 * Resolve and check the clamping bounds of dp_sum/dp_avg; return the log2
 * of the spread the noise must hide and of the largest magnitude.
 */
static void
resolve_bounds(DpRelease *r, Aggref *aggref, ParamListInfo params,
			   double *log2_span, double *log2_max)
{
	const DpCallInfo *info = &r->call;
	Datum		ld = resolve_arg(aggref, info, info->lower_arg, params);
	Datum		ud = resolve_arg(aggref, info, info->upper_arg, params);

	switch (info->vclass)
	{
		case DP_VALUE_INT:
			resolve_int_bounds(r, ld, ud, log2_span, log2_max);
			break;
		case DP_VALUE_FLOAT:
			resolve_float_bounds(r, ld, ud, log2_span, log2_max);
			break;
		case DP_VALUE_NUMERIC:
			resolve_numeric_bounds(r, ld, ud, log2_span, log2_max);
			break;
		case DP_VALUE_NONE:
			elog(ERROR, "dp_agg: bounds on a count");
	}
}

/* epsilon of a call: its argument, else the setting; ERROR unless positive */
static double
resolve_epsilon(Aggref *aggref, const DpCallInfo *info, ParamListInfo params)
{
	const char *fname = dp_kind_name(info->kind);
	double		epsilon;

	if (info->epsilon_arg >= 0)
		epsilon = DatumGetFloat8(resolve_arg(aggref, info, info->epsilon_arg, params));
	else if (!dp_guc_epsilon(&epsilon))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("dp_agg.epsilon is not set"),
				 errdetail("%s was called without an epsilon argument.", fname),
				 errhint("SET dp_agg.epsilon to the privacy loss each release may cost, "
						 "or pass epsilon as an argument.")));
	if (!(epsilon > 0) || !isfinite(epsilon))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("epsilon of %s must be a positive finite number", fname),
				 errdetail("epsilon is %g.", epsilon),
				 errhint("Smaller epsilon means more privacy and more noise; values "
						 "between 0.1 and 1 are typical.")));
	return epsilon;
}

/* delta of a call: its argument, else the setting; ERROR unless in [0, 1) */
static double
resolve_delta(Aggref *aggref, const DpCallInfo *info, ParamListInfo params)
{
	double		delta;

	if (info->delta_arg >= 0)
		delta = DatumGetFloat8(resolve_arg(aggref, info, info->delta_arg, params));
	else
		delta = dp_guc_delta;
	if (!(delta >= 0 && delta < 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("delta of %s must be at least 0 and less than 1", dp_kind_name(info->kind)),
				 errdetail("delta is %g.", delta),
				 errhint("delta = 0 selects the Laplace mechanism (pure epsilon-DP); a small "
						 "positive delta, well below 1/n, the Gaussian mechanism.")));
	return delta;
}

/* set the row grid 2^k of a sum or average and round its bounds to it */
static void
set_row_grid(DpRelease *r, int k)
{
	r->row_grid_exp = k;
	switch (r->call.vclass)
	{
		case DP_VALUE_INT:
			r->lo_units = dp_round_int(r->lower_int, k);
			r->hi_units = dp_round_int(r->upper_int, k);
			break;
		case DP_VALUE_FLOAT:
			r->row_mult = (k > -DP_GRID_MULT_MAX_EXP && k < DP_GRID_MULT_MAX_EXP) ? ldexp(1.0, -k) : 0;
			r->lo_units = dp_round_float(r->lower_float, r->row_mult, k);
			r->hi_units = dp_round_float(r->upper_float, r->row_mult, k);
			break;
		default:
			r->row_mult_num = dp_numeric_pow2(-k);
			r->lo_units = dp_round_numeric(r->lower_num, r->row_mult_num);
			r->hi_units = dp_round_numeric(r->upper_num, r->row_mult_num);
			break;
	}
	if (r->lo_units < -DP_GRID_MAX_UNITS || r->hi_units > DP_GRID_MAX_UNITS)
		elog(ERROR, "dp_agg: grid exponent %d leaves bounds too large", k);
}

static bool bound_arg(Aggref *aggref, const DpCallInfo *info, int argno,
					  ParamListInfo params, Datum *d);
static double share_of(double x, double w);

/*
 * Are the clamping bounds of a call given?  False when the call has none
 * (dp_sum(x)) or both are NULL: they are then estimated (auto_bounds.c);
 * ERROR when one is NULL and not the other.
 */
static bool
bounds_given(const DpRelease *r, Aggref *aggref, ParamListInfo params)
{
	const DpCallInfo *info = &r->call;
	Datum		d;
	bool		lower,
				upper;

	if (info->lower_arg < 0)
		return false;
	lower = bound_arg(aggref, info, info->lower_arg, params, &d);
	upper = bound_arg(aggref, info, info->upper_arg, params, &d);
	if (lower != upper)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bounds of %s must both be given or both be NULL", dp_kind_name(info->kind)),
				 errdetail("NULL bounds are estimated from the data, with a share of epsilon."),
				 errhint("Give both bounds, or neither.")));
	return lower;
}

/*
 * A call whose bounds are estimated (auto_bounds.c): DP_BOUNDS_SHARE of
 * epsilon goes to the histogram of bins (Laplace, sensitivity 1), the rest
 * to the releases, split as with bounds (w); their noise is calibrated in
 * grid units to DP_AUTO_SENSITIVITY, the grid itself chosen from the
 * bounds when they are known (dp_release_auto_grid).  delta goes to the
 * releases.
 */
static void
plan_auto_sums(DpRelease *r, const double *w)
{
	const char *fname = dp_kind_name(r->call.kind);
	const DpSampling *sampling = &r->sampling;
	double		eps_b = share_of(r->epsilon, DP_BOUNDS_SHARE);
	double		eps_m = share_of(r->epsilon, 1 - DP_BOUNDS_SHARE);

	r->auto_bounds = true;
	dp_release_plan_noise(&r->histogram, fname, eps_b, 0, 1, 0, sampling);
	if (r->call.kind == DP_SUM)
	{
		dp_release_plan_noise(&r->sum, fname, eps_m, r->delta, DP_AUTO_SENSITIVITY, 0, sampling);
		return;
	}
	plan_count_noise(&r->count, r, share_of(eps_m, w[0]), share_of(r->delta, w[0]));
	dp_release_plan_noise(&r->sum, fname, share_of(eps_m, w[1]), share_of(r->delta, w[1]),
			   DP_AUTO_SENSITIVITY, 0, sampling);
	if (DP_KIND_SQUARES(r->call.kind))
		dp_release_plan_noise(&r->sumsq, fname, share_of(eps_m, w[2]), share_of(r->delta, w[2]),
				   DP_AUTO_SENSITIVITY, 0, sampling);
}

/*
 * dp_bounds(x [, epsilon]): all of epsilon on the histogram of bins
 * (auto_bounds.c), Laplace noise of sensitivity 1; delta is 0.
 */
static void
plan_bounds(DpRelease *r)
{
	r->delta = 0;
	r->auto_bounds = true;
	dp_release_plan_noise(&r->histogram, dp_kind_name(r->call.kind), r->epsilon, 0, 1, 0, &r->sampling);
}

/*
 * The ticket of one group of a call whose bounds were estimated as
 * [lower, upper] (bin edges): the grid 2^k, k the smallest with the span
 * within 2^DP_AUTO_SPAN_LOG2 units (for a sum, the largest magnitude), the
 * bounds rounded outward to it (integers for integer types), the shift of
 * the squares, the releases' grids and noise scales in value units.  Every
 * sum then moves by at most DP_AUTO_SENSITIVITY units when a row is added
 * (auto_bounds.c), the sensitivity its noise was calibrated to.
 */
bool
dp_release_auto_grid(const DpRelease *r, double lower, double upper, DpRelease *out)
{
	double		span;
	int			k;

	*out = *r;
	if (r->call.vclass == DP_VALUE_INT)
	{
		lower = floor(lower);
		upper = ceil(upper);
	}
	for (int pass = 0; pass < 2; pass++)
	{
		span = r->call.kind == DP_SUM ? Max(fabs(lower), fabs(upper)) : upper - lower;
		if (span > 0)
			k = (int) ceil(log2(span)) - DP_AUTO_SPAN_LOG2;
		else
			k = (int) floor(log2(Max(Max(fabs(lower), fabs(upper)), 1.0))) - DP_AUTO_SPAN_LOG2;
		/* the bounds on the grid, outward */
		lower = ldexp(floor(ldexp(lower, -k)), k);
		upper = ldexp(ceil(ldexp(upper, -k)), k);
	}
	out->row_grid_exp = k;
	out->lo_units = (int64) ldexp(lower, -k);
	out->hi_units = (int64) ldexp(upper, -k);
	switch (r->call.vclass)
	{
		case DP_VALUE_INT:
			/* 2^63, the edge of the top bin, saturates */
			out->lower_int = lower <= -9223372036854775808.0 ? PG_INT64_MIN : (int64) lower;
			out->upper_int = upper >= 9223372036854775807.0 ? PG_INT64_MAX : (int64) upper;
			break;
		case DP_VALUE_FLOAT:
			out->lower_float = lower;
			out->upper_float = upper;
			break;
		default:
			/* exact dyadic rationals, without trailing zeros */
			out->lower_num = DatumGetNumeric(DirectFunctionCall1(numeric_trim_scale, NumericGetDatum(
									numeric_mul_opt_error(int64_to_numeric(out->lo_units),
														  dp_numeric_pow2(k), NULL))));
			out->upper_num = DatumGetNumeric(DirectFunctionCall1(numeric_trim_scale, NumericGetDatum(
									numeric_mul_opt_error(int64_to_numeric(out->hi_units),
														  dp_numeric_pow2(k), NULL))));
			break;
	}
	out->sum.grid_exp = r->call.kind == DP_SUM ? k : k - 1;
	out->sum.noise_scale = ldexp(r->sum.noise_scale, out->sum.grid_exp);
	out->sum.sensitivity = ldexp((double) r->sum.sens_units, out->sum.grid_exp);
	if (DP_KIND_SQUARES(r->call.kind))
	{
		double		d = (double) (out->hi_units - out->lo_units);
		int128		cap = ((int128) 1 << DP_AUTO_SPAN_LOG2) + 2;

		out->squares = true;
		out->sq_mid = out->lo_units + out->hi_units;
		out->sq_d2 = (int128) (out->hi_units - out->lo_units) * (out->hi_units - out->lo_units);
		/* the smallest shift with D^2 2^-s <= 2^40 + 2 */
		out->sq_shift = d > 0 ? Max((int) ceil(2 * log2(d)) - DP_AUTO_SPAN_LOG2, 0) : 0;
		while (out->sq_d2 > cap * ((int128) 1 << out->sq_shift))
			out->sq_shift++;
		while (out->sq_shift > 0 && out->sq_d2 <= cap * ((int128) 1 << (out->sq_shift - 1)))
			out->sq_shift--;
		out->sumsq.grid_exp = 2 * k - 3 + out->sq_shift;
		out->sumsq.noise_scale = ldexp(r->sumsq.noise_scale, out->sumsq.grid_exp);
		out->sumsq.sensitivity = ldexp((double) r->sumsq.sens_units, out->sumsq.grid_exp);
	}
	if (r->call.kind == DP_SUM)
		return Max(-out->lo_units, out->hi_units) <= ((int64) 1 << DP_AUTO_SPAN_LOG2) + 2;
	return out->hi_units - out->lo_units <= ((int64) 1 << DP_AUTO_SPAN_LOG2) + 2;
}

/*
 * The split of a variance's price between its three releases
 * (doc/statistics.md, "Variance and standard deviation"): the count N, the
 * centred sum S1 (sensitivity h) and the sum of centred squares S2
 * (sensitivity h^2 / 2), h = (upper - lower) / 2.
 * To first order the error of S2/N + h^2/2 - (S1/N)^2 is
 * (e2 - 2 t e1 - (s - h^2/2 - 2 t^2) eN) / N for the mean t and the mean
 * square s of the centred values; over every t^2 <= s <= h^2 its variance
 * is largest at t^2 = s = h^2, where it is h^4 (9/4 VN + 4 V1 + 1/4 V2)
 * for noise variances V proportional to 1/epsilon_i^2 (sensitivities 1,
 * h, h^2/2).  The split that minimises that worst case under
 * epsilon_N + epsilon_1 + epsilon_2 = epsilon gives each release the share
 * w_i proportional to the cube root of its weight (9/4, 4, 1/4) (Lagrange:
 * W_i / epsilon_i^3 equal).  It depends on nothing but the price, as for
 * dp_avg; the same shares of delta for Gaussian noise, whose joint
 * calibration (joint.c) then shares one mu among the three.
 */
static void
variance_shares(double *w)
{
	double		c0 = cbrt(9.0 / 4.0),
				c1 = cbrt(4.0),
				c2 = cbrt(1.0 / 4.0),
				total = c0 + c1 + c2;

	w[0] = c0 / total;
	w[1] = c1 / total;
	/* the rest, rounded down, so that the three shares add up to at most 1 */
	w[2] = nextafter(1.0 - w[0] - w[1], 0.0);
}

/* x w, rounded down: the shares of a price never add up to more than it */
static double
share_of(double x, double w)
{
	return w >= 1.0 ? x : dp_mul_down(x, w);
}

/*
 * The shift s of the centred squares of dp_var: a row's
 * 2 z^2 - D^2 (z = 2 r(x) - (r(l) + r(u)) in half units, D = r(u) - r(l))
 * lies in [-D^2, D^2] units of 2^(2k - 3); it is summed rounded to units of
 * 2^(2k - 3 + s), with s >= 0 chosen as a grid is: noise of about 2^40
 * units, rows of at most 2^60 units.
 */
static int
squares_shift(const DpRelease *r, double epsilon, double delta)
{
	double		d = (double) (r->hi_units - r->lo_units);
	double		log2_sq = 2 * log2(d);
	double		log2_size,
				log2_noise = unit_grid_log2(r, true, &log2_size);

	if (d == 0)
		return 0;
	return dp_choose_row_grid(log2_sq + log2_noise, log2_sq + log2_size,
							  dp_release_noise_multiplier(epsilon, delta, &r->sampling), 0);
}

/* the largest |row| of the centred squares: round(D^2 2^-s), half up */
static uint64
squares_sensitivity(const DpRelease *r)
{
	uint128		d = (uint128) (r->hi_units - r->lo_units);
	uint128		top = d * d;

	if (r->sq_shift > 0)
		top = (top + ((uint128) 1 << (r->sq_shift - 1))) >> r->sq_shift;
	if (top > PG_UINT64_MAX)
		elog(ERROR, "dp_agg: sensitivity of the squares out of range");
	return (uint64) top;
}

/*
 * The noise of dp_sum (one release), dp_avg (a count and a centred sum,
 * each at half the price) or dp_var and dp_stddev (a count, a centred sum
 * and a sum of centred squares, variance_shares): bounds, grid,
 * sensitivity in units.
 */
static void
plan_sum_noise(DpRelease *r, Aggref *aggref, ParamListInfo params)
{
	const DpCallInfo *info = &r->call;
	const char *fname = dp_kind_name(info->kind);
	const DpSampling *sampling = &r->sampling;
	double		w[3] = {0.5, 0.5, 0};
	double		log2_span = 0,
				log2_max = 0,
				log2_noise,
				log2_size;
	int			k;

	if (info->kind == DP_SUM)
		w[0] = w[1] = 1.0;
	else if (DP_KIND_SQUARES(info->kind))
		variance_shares(w);

	if (!bounds_given(r, aggref, params))
	{
		if (r->call.unit != DP_UNIT_NONE)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("DP aggregates without bounds are not supported with privacy units"),
					 errdetail("Give the clamping bounds (NULL bounds of dp_percentile and dp_median are supported)."),
					 errhint("See \"Privacy units\" in dp_agg's doc/units-and-groups.md.")));
		plan_auto_sums(r, w);
		return;
	}
	resolve_bounds(r, aggref, params, &log2_span, &log2_max);
	/* privacy units: the grid is chosen for the bounded contributions */
	log2_noise = unit_grid_log2(r, info->kind != DP_SUM, &log2_size);
	k = dp_choose_row_grid(log2_span + log2_noise, log2_max + log2_size,
						   dp_release_noise_multiplier(share_of(r->epsilon, w[1]),
											share_of(r->delta, w[1]), sampling),
						   (info->vclass == DP_VALUE_INT && r->delta == 0) ? 0 : DP_GRID_MIN_EXP);
	set_row_grid(r, k);
	if (info->kind == DP_SUM)
	{
		uint64		sens = (uint64) Max(-r->lo_units, r->hi_units);	/* lo <= hi */

		dp_release_plan_noise(&r->sum, fname, r->epsilon, r->delta,
				   unit_sensitivity(r, sens, false, r->delta > 0), k, sampling);
		return;
	}
	/* centred values 2 r(x) - (r(l) + r(u)) in half units */
	plan_count_noise(&r->count, r, share_of(r->epsilon, w[0]), share_of(r->delta, w[0]));
	dp_release_plan_noise(&r->sum, fname, share_of(r->epsilon, w[1]), share_of(r->delta, w[1]),
			   unit_sensitivity(r, (uint64) (r->hi_units - r->lo_units), true, r->delta > 0),
			   k - 1, sampling);
	if (DP_KIND_SQUARES(info->kind))
	{
		double		e2 = share_of(r->epsilon, w[2]),
					d2 = share_of(r->delta, w[2]);

		r->squares = true;
		r->sq_mid = r->lo_units + r->hi_units;
		r->sq_d2 = (int128) (r->hi_units - r->lo_units) * (r->hi_units - r->lo_units);
		r->sq_shift = squares_shift(r, e2, d2);
		dp_release_plan_noise(&r->sumsq, fname, e2, d2,
				   unit_sensitivity(r, squares_sensitivity(r), true, r->delta > 0),
				   2 * k - 3 + r->sq_shift, sampling);
	}
}

/*
 * The ticket of the private selection of a statement's groups (dp_select,
 * put there by selection.c): its delta is dp_agg.selection_delta (1e-7
 * unless set), its epsilon dp_agg.selection_epsilon, or while that is unset
 * a share of the price of the node's releases, decided once every ticket of
 * the statement is made (price.c, dp_release_plan_selection);
 * max_groups_contributed is its constant argument.  It reads the rows as
 * they come: a sampled table gives the selection no amplification.
 */
static void
plan_selection(DpRelease *r, Aggref *args_from)
{
	Node	   *karg = call_arg(args_from, r->call.k_arg);
	double		epsilon;

	if (!IsA(karg, Const) || ((Const *) karg)->constisnull)
		elog(ERROR, "dp_agg: dp_select without a constant max_groups_contributed");
	if (!dp_guc_selection_delta(&r->delta))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("dp_agg.selection_delta is not set"),
				 errdetail("The keys of a GROUP BY without a public domain are released by a private selection, which needs a delta: the probability that a group of one unit is released."),
				 errhint("SET dp_agg.selection_delta = %s (its default), or RESET it.",
						 DP_DEFAULT_SELECTION_DELTA)));
	r->sampling = dp_no_sampling;
	r->selection.max_groups = DatumGetInt32(((Const *) karg)->constvalue);
	r->selection.delta = r->delta;
	r->selection_share = !dp_guc_selection_epsilon(&epsilon);
	if (!r->selection_share)
		dp_release_plan_selection(r, epsilon);
}

/*
 * Decide the mechanism of a private selection whose epsilon is known now
 * (plan_selection, or price.c for a share of the statement's price).
 */
void
dp_release_plan_selection(DpRelease *r, double epsilon)
{
	r->epsilon = epsilon;
	dp_selection_plan(&r->selection, r->epsilon, r->delta, r->selection.max_groups);
}

/*
 * The ticket of top-k (dp_top_k, put there by top_k.c): k and epsilon are
 * its constant arguments; epsilon NULL is dp_agg.selection_epsilon, or
 * while that is unset a share of the price of the node's releases, as for
 * the private selection (price.c).  Each of the k rounds of report noisy
 * max adds discrete Laplace noise of scale k / epsilon to counts of
 * sensitivity 1 (top_k.c).
 */
static void
plan_top_k(DpRelease *r, Aggref *args_from)
{
	Node	   *karg = call_arg(args_from, r->call.k_arg);
	Node	   *earg = call_arg(args_from, r->call.epsilon_arg);
	double		epsilon;

	if (!IsA(karg, Const) || ((Const *) karg)->constisnull || !IsA(earg, Const))
		elog(ERROR, "dp_agg: dp_top_k without a constant k and epsilon");
	r->top_k = DatumGetInt32(((Const *) karg)->constvalue);
	r->sampling = dp_no_sampling;
	r->delta = 0;
	if (!((Const *) earg)->constisnull)
	{
		dp_release_plan_top_k(r, DatumGetFloat8(((Const *) earg)->constvalue));
		return;
	}
	r->selection_share = !dp_guc_selection_epsilon(&epsilon);
	if (!r->selection_share)
		dp_release_plan_top_k(r, epsilon);
}

/* the noise of top-k whose epsilon is known now (plan_top_k, price.c) */
void
dp_release_plan_top_k(DpRelease *r, double epsilon)
{
	if (!(epsilon > 0) || !isfinite(epsilon))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("epsilon of dp_agg.top_k must be a positive finite number"),
				 errdetail("epsilon is %g.", epsilon)));
	r->epsilon = epsilon;
	dp_release_plan_noise(&r->count, "dp_agg.top_k", epsilon / r->top_k, 0, 1, 0, &dp_no_sampling);
}

/*
 * The bounds of the noise of the tree's prefixes (quantile_tree.c), from
 * the sampler's scale: one noisy prefix (at most 45 node noises) within
 * tau except with probability 0.04 / 4095, the noisy total (16) within
 * tau_total except with probability 0.01.  Again when joint.c gives the
 * tree another scale under TABLESAMPLE.
 */
void
dp_release_tree_tails(DpRelease *r)
{
	double		b = (double) r->tree.laplace.t / (double) r->tree.laplace.s;

	r->tree_tau = dp_tree_tail(b, DP_TREE_PREFIX_TERMS, 0.04 / (DP_TREE_LEAVES - 1));
	r->tree_tau_total = dp_tree_tail(b, DP_TREE_BRANCHING, 0.01);
}

/* most percentiles one call may ask for */
#define DP_MAX_PERCENTILES 1000

#define PERCENTILE_HINT "Give a fraction from 0 to 1 (0.5 is the median), or an array of them: ARRAY[0.25, 0.5, 0.75]."
#define bad_percentile(msg) \
	ereport(ERROR, \
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE), \
			 errmsg("percentiles of dp_percentile " msg), \
			 errhint(PERCENTILE_HINT)))
#define bad_percentile_detail(msg, ...) \
	ereport(ERROR, \
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE), \
			 errmsg("percentiles of dp_percentile " msg), \
			 errdetail(__VA_ARGS__), \
			 errhint(PERCENTILE_HINT)))

/* the percentile argument: a double, or an array of them, each in [0, 1] */
static void
resolve_percentiles(DpRelease *r, Aggref *aggref, ParamListInfo params)
{
	const DpCallInfo *info = &r->call;

	if (info->kind == DP_MEDIAN)
	{
		r->npercentiles = 1;
		r->percentiles = palloc(sizeof(double));
		r->percentiles[0] = 0.5;
		return;
	}
	if (!info->p_array)
	{
		double		p = DatumGetFloat8(resolve_arg(aggref, info, info->p_arg, params));

		if (!(p >= 0 && p <= 1))
			bad_percentile_detail("must lie in [0, 1]", "The percentile is %g.", p);
		r->npercentiles = 1;
		r->percentiles = palloc(sizeof(double));
		r->percentiles[0] = p;
	}
	else
	{
		ArrayType  *a = DatumGetArrayTypeP(resolve_arg(aggref, info, info->p_arg, params));
		Datum	   *elems;
		bool	   *nulls;
		int			n;

		if (ARR_NDIM(a) > 1)
			bad_percentile("must be a one-dimensional array");
		deconstruct_array(a, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
						  &elems, &nulls, &n);
		if (n < 1 || n > DP_MAX_PERCENTILES)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("percentiles of dp_percentile must be from 1 to %d", DP_MAX_PERCENTILES),
					 errdetail("The array has %d elements.", n),
					 errhint(PERCENTILE_HINT)));
		r->npercentiles = n;
		r->percentiles = palloc(sizeof(double) * n);
		for (int i = 0; i < n; i++)
		{
			double		p = nulls[i] ? NAN : DatumGetFloat8(elems[i]);

			if (nulls[i])
				bad_percentile_detail("must not be NULL", "Element %d is NULL.", i + 1);
			if (!(p >= 0 && p <= 1))
				bad_percentile_detail("must lie in [0, 1]",
									  "Element %d is %g.", i + 1, p);
			r->percentiles[i] = p;
		}
	}
}

/* a bound argument as a datum, or false when it is NULL */
static bool
bound_arg(Aggref *aggref, const DpCallInfo *info, int argno, ParamListInfo params, Datum *d)
{
	bool		isnull;

	dp_check_parameter_expr(call_arg(aggref, argno), info, argno);
	dp_eval_parameter(call_arg(aggref, argno), params, d, &isnull);
	return !isnull;
}

static double
bound_double(const DpRelease *r, bool upper)
{
	switch (r->call.vclass)
	{
		case DP_VALUE_INT:
			return (double) (upper ? r->upper_int : r->lower_int);
		case DP_VALUE_FLOAT:
			return upper ? r->upper_float : r->lower_float;
		default:
			return DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow,
													  NumericGetDatum(upper ? r->upper_num : r->lower_num)));
	}
}

/*
 * dp_percentile and dp_median (quantile_tree.c): the tree's leaves (over
 * the bounds, or log-linear over every value when both bounds are left
 * out or NULL), the percentiles asked, and the noise of its node counts:
 * discrete Laplace of scale H c / epsilon, c the bounded rows of a unit
 * in its k groups (1 without a privacy unit), on every node; the ledger
 * records it as H repeats of a release of sensitivity c (each level is
 * one).  Quantiles are epsilon-DP: delta is 0 whatever dp_agg.delta says.
 */
static void
plan_tree(DpRelease *r, Aggref *aggref, ParamListInfo params)
{
	const DpCallInfo *info = &r->call;
	const char *fname = dp_kind_name(info->kind);
	DpNoiseSpec *ns = &r->tree;
	Datum		ld = 0,
				ud = 0;
	bool		has_lower = false,
				has_upper = false;
	uint64		sens;
	double		b;

	r->delta = 0;
	resolve_percentiles(r, aggref, params);
	if (info->lower_arg >= 0)
	{
		has_lower = bound_arg(aggref, info, info->lower_arg, params, &ld);
		has_upper = bound_arg(aggref, info, info->upper_arg, params, &ud);
	}
	if (has_lower != has_upper)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bounds of %s must both be given or both be NULL", fname),
				 errdetail("Without bounds the quantile tree covers every value, on log-linear leaves."),
				 errhint("Give both bounds, or neither.")));
	if (has_lower)
	{
		double		log2_span,
					log2_max;

		switch (info->vclass)
		{
			case DP_VALUE_INT:
				resolve_int_bounds(r, ld, ud, &log2_span, &log2_max);
				break;
			case DP_VALUE_FLOAT:
				resolve_float_bounds(r, ld, ud, &log2_span, &log2_max);
				break;
			default:
				resolve_numeric_bounds(r, ld, ud, &log2_span, &log2_max);
				break;
		}
		dp_tree_domain_bounded(&r->tree_domain, bound_double(r, false), bound_double(r, true));
	}
	else
		dp_tree_domain_log(&r->tree_domain);

	/* privacy units: k groups of at most R rows each */
	sens = r->unit_groups > 0 ? (uint64) r->unit_groups * (uint64) r->unit_rows : 1;
	ns->mechanism = DP_MECH_LAPLACE;
	ns->epsilon = r->epsilon;
	ns->delta = 0;
	ns->base_delta = 0;
	ns->base_epsilon = dp_sampling_base_epsilon(r->epsilon, &r->sampling);
	ns->calibration = r->sampling.amplified ? "amplified" : NULL;
	ns->joint_mu = 0;
	ns->grid_exp = 0;
	ns->sens_units = sens;
	ns->sensitivity = (double) sens;
	ns->sigma_units = 0;
	ns->repeats = DP_TREE_HEIGHT;
	b = dp_div_up(dp_mul_up((double) sens, DP_TREE_HEIGHT), ns->base_epsilon);
	if (!(b <= DP_MAX_LAPLACE_SCALE))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("epsilon %g is too small for %s", r->epsilon, fname),
				 errdetail("The Laplace noise would have a scale of %g; the sampler accepts at most 2^62.", b)));
	ns->laplace = dp_laplace_param(b);
	ns->noise_scale = (double) ns->laplace.t / (double) ns->laplace.s;
	dp_release_tree_tails(r);
}

/* seed of the fingerprint hash: "dpag" in ASCII */
#define FINGERPRINT_SEED 0x64706167

/*
 * identifies the units a state is accumulated in; the levels of a privacy
 * unit rewrite share it (dp_count(*) is a count there)
 */
static uint64
units_fingerprint(const DpRelease *r)
{
	int64		fp[8] = {r->call.kind == DP_COUNT_STAR ? DP_COUNT : r->call.kind,
		r->call.vclass, r->row_grid_exp, r->lo_units, r->hi_units, r->unit_rows,
	r->sq_shift, r->auto_bounds};

	if (DP_KIND_QUANTILE(r->call.kind))
	{
		/* the leaves: their domain */
		double		tfp[5] = {DP_PERCENTILE, r->tree_domain.log_linear, r->tree_domain.lower,
		r->tree_domain.upper, r->unit_rows};

		return hash_bytes_extended((const unsigned char *) tfp, sizeof(tfp), FINGERPRINT_SEED);
	}
	return hash_bytes_extended((const unsigned char *) fp, sizeof(fp), FINGERPRINT_SEED);
}

/*
 * The ticket of one DP aggregate call: aggref is the call the executor
 * evaluates, args_from the Aggref holding its arguments (itself, or for a
 * combining node its partial Aggref).
 */
DpRelease *
dp_release_create(Aggref *aggref, Aggref *args_from, const DpCallInfo *info,
				  bool finalize, const DpSampling *sampling, ParamListInfo params,
				  int unit_groups, int unit_rows)
{
	DpRelease  *r = palloc0(sizeof(DpRelease));

	r->call = *info;
	/* a worker's plan fragment has no level 2: k is not known, nor needed */
	r->unit_groups = info->unit != DP_UNIT_NONE ? Max(unit_groups, 1) : 0;
	r->unit_rows = info->unit != DP_UNIT_NONE ? unit_rows : 0;
	r->aggref = aggref;
	r->finalize = finalize;
	if (info->kind == DP_PUBLIC)
	{
		/* the groups of a public domain (public_domain.c): no noise, no price */
		Node	   *n = call_arg(args_from, 2);
		int64		fp[2];

		if (!IsA(n, Const) || ((Const *) n)->constisnull)
			elog(ERROR, "dp_agg: dp_public without a constant number of keys");
		r->public_keys = DatumGetInt64(((Const *) n)->constvalue);
		r->sampling = dp_no_sampling;
		fp[0] = info->kind;
		fp[1] = r->public_keys;
		r->fingerprint = hash_bytes_extended((const unsigned char *) fp, sizeof(fp),
											 FINGERPRINT_SEED);
		return r;
	}
	if (info->kind == DP_TOP_K)
	{
		int64		fp[2];

		plan_top_k(r, args_from);
		fp[0] = info->kind;
		fp[1] = r->top_k;
		r->fingerprint = hash_bytes_extended((const unsigned char *) fp, sizeof(fp),
											 FINGERPRINT_SEED);
		return r;
	}
	if (info->kind == DP_SELECT)
	{
		int64		fp[2];

		plan_selection(r, args_from);
		fp[0] = info->kind;
		fp[1] = r->selection.max_groups;
		r->fingerprint = hash_bytes_extended((const unsigned char *) fp, sizeof(fp),
											 FINGERPRINT_SEED);
		return r;
	}
	r->sampling = *sampling;
	dp_sampling_resolve(&r->sampling, params);
	r->epsilon = resolve_epsilon(args_from, info, params);
	r->delta = resolve_delta(args_from, info, params);

	if (info->kind == DP_COUNT_STAR || info->kind == DP_COUNT)
	{
		r->row_grid_exp = 0;
		plan_count_noise(&r->count, r, r->epsilon, r->delta);
	}
	else if (DP_KIND_QUANTILE(info->kind))
		plan_tree(r, args_from, params);
	else if (info->kind == DP_BOUNDS)
		plan_bounds(r);
	else
		plan_sum_noise(r, args_from, params);

	r->fingerprint = units_fingerprint(r);
	return r;
}

/*
 * The ticket of a call in a signed fragment of a DP statement on a Citus
 * table (dist_exec.c, dist_worker.c): the accumulation units the coordinator chose, from
 * the bounds (as datums of the value type) and the row grid 2^k.  It is
 * never finalized: workers accumulate, the coordinator releases.
 */
DpRelease *
dp_release_for_fragment(const DpCallInfo *info, Datum lower, Datum upper, int k, int sq_shift)
{
	DpRelease  *r = palloc0(sizeof(DpRelease));
	double		log2_span,
				log2_max;

	r->call = *info;
	r->sampling = dp_no_sampling;
	if (DP_KIND_SUMS(info->kind))
	{
		switch (info->vclass)
		{
			case DP_VALUE_INT:
				resolve_int_bounds(r, lower, upper, &log2_span, &log2_max);
				break;
			case DP_VALUE_FLOAT:
				resolve_float_bounds(r, lower, upper, &log2_span, &log2_max);
				break;
			case DP_VALUE_NUMERIC:
				resolve_numeric_bounds(r, lower, upper, &log2_span, &log2_max);
				break;
			case DP_VALUE_NONE:
				elog(ERROR, "dp_agg: bounds on a count");
		}
		set_row_grid(r, k);
		if (DP_KIND_SQUARES(info->kind))
		{
			r->squares = true;
			r->sq_shift = sq_shift;
			r->sq_mid = r->lo_units + r->hi_units;
			r->sq_d2 = (int128) (r->hi_units - r->lo_units) * (r->hi_units - r->lo_units);
		}
	}
	r->fingerprint = units_fingerprint(r);
	return r;
}
