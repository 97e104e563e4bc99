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
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/numeric.h"

#include "calibrate.h"
#include "grid.h"
#include "guc.h"
#include "noise_param.h"
#include "params.h"
#include "release.h"

const char *
dp_mechanism_name(DpMechanism mech)
{
	switch (mech)
	{
		case DP_MECH_NONE:
			return "none";
		case DP_MECH_LAPLACE:
			return "laplace";
		case DP_MECH_GAUSSIAN:
			return "gaussian";
	}
	return "?";
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

static double
u64_to_double_up(uint64 x)
{
	double		d = (double) x;

	if (d < 18446744073709551616.0 && (uint64) d < x)
		d = nextafter(d, INFINITY);
	return d;
}

/*
 * A small cache of calibrations, which take from microseconds (analytic)
 * to tens of milliseconds (the Renyi DP of the sampled Gaussian): the same
 * few parameters come back statement after statement.
 */
typedef enum CalibrationKind
{
	CAL_DISCRETE_SIGMA,			/* dp_discrete_gaussian_sigma(a, b, c) */
	CAL_RDP_MULTIPLIER			/* dp_rdp_sampled_gaussian_sigma(a, b, c) */
} CalibrationKind;

typedef struct CalibrationEntry
{
	CalibrationKind kind;
	double		a,
				b,
				c;
	double		value;
} CalibrationEntry;

#define CALIBRATION_CACHE_SIZE 32
static CalibrationEntry calibration_cache[CALIBRATION_CACHE_SIZE];
static int	calibration_cache_used = 0;
static int	calibration_cache_next = 0;

static double
calibration_cached(CalibrationKind kind, double a, double b, double c)
{
	CalibrationEntry *e;
	double		value;

	for (int i = 0; i < calibration_cache_used; i++)
	{
		e = &calibration_cache[i];
		if (e->kind == kind && e->a == a && e->b == b && e->c == c)
			return e->value;
	}
	/* computed before the entry is touched: an error leaves no stale pair */
	value = kind == CAL_DISCRETE_SIGMA
		? dp_discrete_gaussian_sigma(a, b, c)
		: dp_rdp_sampled_gaussian_sigma(a, b, c);
	e = &calibration_cache[calibration_cache_next];
	e->kind = kind;
	e->a = a;
	e->b = b;
	e->c = c;
	e->value = value;
	calibration_cache_next = (calibration_cache_next + 1) % CALIBRATION_CACHE_SIZE;
	if (calibration_cache_used < CALIBRATION_CACHE_SIZE)
		calibration_cache_used++;
	return e->value;
}

static double
discrete_sigma_cached(double epsilon, double delta, uint64 sens_units)
{
	return calibration_cached(CAL_DISCRETE_SIGMA, epsilon, delta, (double) sens_units);
}

static double
rdp_multiplier_cached(double epsilon, double delta, double rate)
{
	return calibration_cached(CAL_RDP_MULTIPLIER, epsilon, delta, rate);
}

/* noise per unit of sensitivity, roughly, to choose grids */
static double
noise_multiplier(double epsilon, double delta, const DpSampling *sampling)
{
	double		m;

	if (delta == 0)
		return 1.0 / dp_sampling_base_epsilon(epsilon, sampling);
	if (!sampling->amplified)
		return dp_gaussian_sigma(epsilon, delta, 1.0);
	m = rdp_multiplier_cached(epsilon, delta, sampling->rate);
	if (delta / sampling->rate < 1)
		m = Min(m, dp_gaussian_sigma(dp_base_epsilon(epsilon, sampling->rate),
									 delta / sampling->rate, 1.0));
	return m;
}

/*
 * The discrete Gaussian sigma of a release, in units, and the base
 * guarantee it has before subsampling.  Without amplification: the exact
 * discrete calibration at (epsilon, delta).  With it: the better of
 *  (i) the discrete calibration at the base (epsilon0, delta/q) that
 *      amplification turns into (epsilon, delta) (Steinke 2022, Theorem 29);
 *  (ii) the Renyi DP of the Poisson-subsampled Gaussian (Mironov, Talwar &
 *      Zhang 2019) converted to (epsilon, delta) (Balle et al. 2020,
 *      Theorem 21).  That analysis is for the continuous Gaussian; our noise
 *      is the discrete Gaussian on a lattice at least 2^30 times finer than
 *      sigma, whose sums over the lattice equal the corresponding integrals
 *      to within a relative exp(-2 pi^2 sigma_units^2) (Poisson summation),
 *      far below any rounding.
 */
static double
gaussian_sigma_units(DpNoiseSpec *ns, uint64 sens_units, const DpSampling *sampling)
{
	double		su = (double) sens_units;
	double		q = sampling->rate;
	double		s1 = INFINITY,
				s2;

	if (!sampling->amplified)
		return discrete_sigma_cached(ns->epsilon, ns->delta, sens_units);
	if (ns->delta / q < 1)
	{
		ns->base_epsilon = dp_base_epsilon(ns->epsilon, q);
		ns->base_delta = ns->delta / q;
		s1 = discrete_sigma_cached(ns->base_epsilon, ns->base_delta, sens_units);
	}
	s2 = dp_mul_up(rdp_multiplier_cached(ns->epsilon, ns->delta, q), su);
	if (s1 <= s2)
	{
		ns->calibration = "amplified";
		return s1;
	}
	ns->calibration = "renyi";
	ns->base_delta = ns->delta;
	ns->base_epsilon = dp_discrete_gaussian_epsilon(s2, ns->delta, su);
	return s2;
}

/*
 * Fill in one noisy release: mechanism and exact sampler parameters for a
 * query of sens_units sensitivity on a grid of 2^grid_exp.
 */
static void
plan_noise(DpNoiseSpec *ns, const char *fname, double epsilon, double delta,
		   uint64 sens_units, int grid_exp, const DpSampling *sampling)
{
	ns->epsilon = epsilon;
	ns->delta = delta;
	ns->base_epsilon = epsilon;
	ns->base_delta = delta;
	ns->sigma_units = 0;
	ns->calibration = NULL;
	ns->joint_mu = 0;
	ns->grid_exp = grid_exp;
	ns->sens_units = sens_units;
	ns->sensitivity = ldexp((double) sens_units, grid_exp);

	if (sens_units == 0)
	{
		ns->mechanism = DP_MECH_NONE;
		ns->noise_scale = 0;
		return;
	}
	if (delta == 0)
	{
		double		b;

		ns->base_epsilon = dp_sampling_base_epsilon(epsilon, sampling);
		if (sampling->amplified)
			ns->calibration = "amplified";
		b = dp_div_up(u64_to_double_up(sens_units), ns->base_epsilon);
		if (!(b <= DP_MAX_LAPLACE_SCALE))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("epsilon %g is too small for %s", epsilon, fname),
					 errdetail("The Laplace noise would have a scale of %g grid units; "
							   "the sampler accepts at most 2^62.", b)));
		ns->mechanism = DP_MECH_LAPLACE;
		ns->laplace = dp_laplace_param(b);
		ns->noise_scale = ldexp((double) ns->laplace.t / (double) ns->laplace.s, grid_exp);
	}
	else
	{
		double		sigma = gaussian_sigma_units(ns, sens_units, sampling);

		if (sigma < DP_MIN_GAUSSIAN_SIGMA)
			sigma = DP_MIN_GAUSSIAN_SIGMA;
		if (!(sigma <= DP_MAX_GAUSSIAN_SIGMA))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("epsilon %g and delta %g are too small for %s", epsilon, delta, fname),
					 errdetail("The Gaussian noise would have a standard deviation of %g grid units; "
							   "the sampler accepts at most 2^48.", sigma)));
		ns->mechanism = DP_MECH_GAUSSIAN;
		ns->gaussian = dp_gaussian_param(dp_mul_up(sigma, sigma));
		ns->sigma_units = sigma;
		ns->noise_scale = ldexp(sigma, grid_exp);
	}
}

/*
 * Privacy units (README, "Privacy units"; Wilson et al. 2020, "Differentially
 * Private SQL with Bounded User Contribution", PoPETs 2020(2), section 3,
 * contribution bounding; the proof is in the README): removing one unit
 * changes at most k = unit_groups groups, each by at most its bounded
 * contribution c (unit_rows rows for a count; the clamped total for a sum;
 * unit_rows rows and their centred total for an average).  The vector of a
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
							noise_multiplier(epsilon, delta, sampling),
							DP_GRID_MIN_EXP);
	plan_noise(ns, dp_kind_name(r->call.kind), epsilon, delta,
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

static void
bad_bounds(const char *fname, const char *msg, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("bounds of %s %s", fname, msg),
			 detail ? errdetail("%s", detail) : 0,
			 errhint("Clamping bounds must be finite constants with lower <= upper; "
					 "they set the sensitivity, so choose them from what you know "
					 "about the column, not from the data.")));
}

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
		bad_bounds(fname, "are reversed",
				   psprintf("lower is " INT64_FORMAT ", upper is " INT64_FORMAT ".", l, u));
	if (info->kind == DP_SUM && m > int_type_max(info->valtype))
		bad_bounds(fname, "have a sensitivity that overflows the type",
				   psprintf("max(|lower|, |upper|) = max(|" INT64_FORMAT "|, |" INT64_FORMAT "|) "
							"does not fit in %s.", l, u, format_type_be(info->valtype)));
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
		bad_bounds(fname, "must not be NaN", NULL);
	if (isinf(l) || isinf(u))
		bad_bounds(fname, "must be finite", NULL);
	if (l > u)
		bad_bounds(fname, "are reversed",
				   psprintf("lower is %g, upper is %g.", l, u));
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
		bad_bounds(fname, "must not be NaN", NULL);
	if (numeric_is_inf(l) || numeric_is_inf(u))
		bad_bounds(fname, "must be finite", NULL);
	if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, ld, ud)) > 0)
		bad_bounds(fname, "are reversed",
				   psprintf("lower is %s, upper is %s.",
							numeric_normalize(l), numeric_normalize(u)));
	lf = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, ld));
	uf = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, ud));
	span = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow,
											  NumericGetDatum(numeric_sub_opt_error(u, l, NULL))));
	if (!isfinite(lf) || !isfinite(uf) || !isfinite(span))
		bad_bounds(fname, "are too large",
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

/*
 * The noise of dp_sum (one release) or dp_avg (a count and a centred sum,
 * each at half the price): bounds, grid, sensitivity in units.
 */
static void
plan_sum_noise(DpRelease *r, Aggref *aggref, ParamListInfo params)
{
	const DpCallInfo *info = &r->call;
	const char *fname = dp_kind_name(info->kind);
	const DpSampling *sampling = &r->sampling;
	double		epsilon = info->kind == DP_SUM ? r->epsilon : r->epsilon / 2;
	double		delta = info->kind == DP_SUM ? r->delta : r->delta / 2;
	double		log2_span = 0,
				log2_max = 0,
				log2_noise,
				log2_size;
	int			k;

	resolve_bounds(r, aggref, params, &log2_span, &log2_max);
	/* privacy units: the grid is chosen for the bounded contributions */
	log2_noise = unit_grid_log2(r, info->kind != DP_SUM, &log2_size);
	k = dp_choose_row_grid(log2_span + log2_noise, log2_max + log2_size,
						   noise_multiplier(epsilon, delta, sampling),
						   (info->vclass == DP_VALUE_INT && r->delta == 0) ? 0 : DP_GRID_MIN_EXP);
	set_row_grid(r, k);
	if (info->kind == DP_SUM)
	{
		uint64		sens = (uint64) Max(-r->lo_units, r->hi_units);	/* lo <= hi */

		plan_noise(&r->sum, fname, epsilon, delta,
				   unit_sensitivity(r, sens, false, delta > 0), k, sampling);
	}
	else
	{
		/* centred values 2 r(x) - (r(l) + r(u)) in half units */
		plan_count_noise(&r->count, r, epsilon, delta);
		plan_noise(&r->sum, fname, epsilon, delta,
				   unit_sensitivity(r, (uint64) (r->hi_units - r->lo_units), true, delta > 0),
				   k - 1, sampling);
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
	plan_noise(&r->count, "dp_agg.top_k", epsilon / r->top_k, 0, 1, 0, &dp_no_sampling);
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
	int64		fp[6] = {r->call.kind == DP_COUNT_STAR ? DP_COUNT : r->call.kind,
		r->call.vclass, r->row_grid_exp, r->lo_units, r->hi_units, r->unit_rows};

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
	else
		plan_sum_noise(r, args_from, params);

	r->fingerprint = units_fingerprint(r);
	return r;
}

/*
 * The ticket of a call in a signed fragment of a DP statement on a Citus
 * table (dist_exec.c): the accumulation units the coordinator chose, from
 * the bounds (as datums of the value type) and the row grid 2^k.  It is
 * never finalized: workers accumulate, the coordinator releases.
 */
DpRelease *
dp_release_for_fragment(const DpCallInfo *info, Datum lower, Datum upper, int k)
{
	DpRelease  *r = palloc0(sizeof(DpRelease));
	double		log2_span,
				log2_max;

	r->call = *info;
	r->sampling = dp_no_sampling;
	if (info->kind == DP_SUM || info->kind == DP_AVG)
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
	}
	r->fingerprint = units_fingerprint(r);
	return r;
}

/* one draw of the noise of a release, in its grid units */
int128
dp_noise_draw(const DpNoiseSpec *spec)
{
	switch (spec->mechanism)
	{
		case DP_MECH_NONE:
			return 0;
		case DP_MECH_LAPLACE:
			return dp_sample_discrete_laplace(spec->laplace);
		case DP_MECH_GAUSSIAN:
			return dp_sample_discrete_gaussian(spec->gaussian);
	}
	return 0;
}
