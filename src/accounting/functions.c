/*-------------------------------------------------------------------------
 *
 * functions.c
 *	  SQL-callable calculators: every noise scale the aggregates use can be
 *	  recomputed by users and auditors from these.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/trigger.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/table.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "tcop/utility.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "budget_row.h"
#include "calibrate.h"
#include "numeric_units.h"
#include "rdp_laplace.h"
#include "compat.h"
#include "budget.h"
#include "journal.h"
#include "lease.h"
#include "noise.h"
#include "noise_param.h"
#include "selection_mechanism.h"

PG_FUNCTION_INFO_V1(dp_laplace_scale_sql);
PG_FUNCTION_INFO_V1(dp_numeric_units_sql);
PG_FUNCTION_INFO_V1(dp_gaussian_sigma_sql);
PG_FUNCTION_INFO_V1(dp_gaussian_delta_sql);
PG_FUNCTION_INFO_V1(dp_discrete_gaussian_sigma_sql);
PG_FUNCTION_INFO_V1(dp_discrete_gaussian_delta_sql);
PG_FUNCTION_INFO_V1(dp_noise_sample);
PG_FUNCTION_INFO_V1(dp_noise_interval_sql);
PG_FUNCTION_INFO_V1(dp_selection_probability_sql);
PG_FUNCTION_INFO_V1(dp_selection_threshold_sql);
PG_FUNCTION_INFO_V1(dp_selection_sample_sql);
PG_FUNCTION_INFO_V1(dp_selection_mechanism_sql);

/*
 * An argument out of its range.  Macros, so that each message is one
 * literal format string where it is raised: the argument's name and what
 * it must be are pasted; check_arg_max prints the limit from its constant.
 */
#define check_arg(ok, name, must, v) \
	do { \
		if (!(ok)) \
			ereport(ERROR, \
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE), \
					 errmsg(name " must be " must), \
					 errdetail(name " is %g.", (double) (v)))); \
	} while (0)
#define check_arg_max(ok, name, must, max, v) \
	do { \
		if (!(ok)) \
			ereport(ERROR, \
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE), \
					 errmsg(name " must be " must, (max)), \
					 errdetail(name " is %g.", (double) (v)))); \
	} while (0)

/*
 * The result of a calculator, computed under the work limit of one call
 * (calibrate.c), which ends with it.  An error ends the call with the limit
 * still set, until the next calculator call or the next pricing sets it
 * anew; no other computation runs in between.
 */
#define CALCULATE(expr) (dp_work_limit(DP_CALCULATOR_MAX_STEPS), calculated(expr))

static inline double
calculated(double value)
{
	dp_work_limit(0);
	return value;
}

#define CHECK_EPSILON(e) check_arg((e) > 0 && isfinite(e), "epsilon", "a positive finite number", (e))
#define CHECK_DELTA_POS(d) check_arg((d) > 0 && (d) < 1, "delta", "greater than 0 and less than 1", (d))
#define CHECK_SENS(s) check_arg((s) >= 0 && isfinite(s), "sensitivity", "a finite number at least 0", (s))
#define CHECK_SIGMA(s) check_arg((s) > 0 && isfinite(s), "sigma", "a positive finite number", (s))

/* dp_agg.laplace_scale(epsilon, sensitivity): sensitivity / epsilon, rounded up */
Datum
dp_laplace_scale_sql(PG_FUNCTION_ARGS)
{
	double		epsilon = PG_GETARG_FLOAT8(0);
	double		sens = PG_GETARG_FLOAT8(1);

	CHECK_EPSILON(epsilon);
	CHECK_SENS(sens);
	PG_RETURN_FLOAT8(CALCULATE(dp_laplace_scale(epsilon, sens)));
}

/* dp_agg.gaussian_sigma(epsilon, delta, sensitivity): analytic Gaussian */
Datum
dp_gaussian_sigma_sql(PG_FUNCTION_ARGS)
{
	double		epsilon = PG_GETARG_FLOAT8(0);
	double		delta = PG_GETARG_FLOAT8(1);
	double		sens = PG_GETARG_FLOAT8(2);

	CHECK_EPSILON(epsilon);
	CHECK_DELTA_POS(delta);
	CHECK_SENS(sens);
	PG_RETURN_FLOAT8(CALCULATE(dp_gaussian_sigma(epsilon, delta, sens)));
}

/* dp_agg.gaussian_delta(sigma, epsilon, sensitivity): exact delta(epsilon) */
Datum
dp_gaussian_delta_sql(PG_FUNCTION_ARGS)
{
	double		sigma = PG_GETARG_FLOAT8(0);
	double		epsilon = PG_GETARG_FLOAT8(1);
	double		sens = PG_GETARG_FLOAT8(2);

	CHECK_SIGMA(sigma);
	check_arg(epsilon >= 0 && isfinite(epsilon), "epsilon", "a finite number at least 0", epsilon);
	CHECK_SENS(sens);
	PG_RETURN_FLOAT8(CALCULATE(dp_gaussian_delta(sigma, epsilon, sens)));
}

/* dp_agg.discrete_gaussian_sigma(epsilon, delta, sensitivity): what the aggregates use */
Datum
dp_discrete_gaussian_sigma_sql(PG_FUNCTION_ARGS)
{
	double		epsilon = PG_GETARG_FLOAT8(0);
	double		delta = PG_GETARG_FLOAT8(1);
	double		sens = PG_GETARG_FLOAT8(2);

	CHECK_EPSILON(epsilon);
	CHECK_DELTA_POS(delta);
	check_arg(sens >= 0 && sens <= 4611686018427387904.0 && sens == floor(sens),
			  "sensitivity", "an integer between 0 and 2^62", sens);
	PG_RETURN_FLOAT8(CALCULATE(dp_discrete_gaussian_sigma(epsilon, delta, sens)));
}

/* dp_agg.discrete_gaussian_delta(sigma, epsilon, sensitivity) */
Datum
dp_discrete_gaussian_delta_sql(PG_FUNCTION_ARGS)
{
	double		sigma = PG_GETARG_FLOAT8(0);
	double		epsilon = PG_GETARG_FLOAT8(1);
	double		sens = PG_GETARG_FLOAT8(2);

	CHECK_SIGMA(sigma);
	check_arg(epsilon >= 0 && isfinite(epsilon), "epsilon", "a finite number at least 0", epsilon);
	check_arg(sens >= 0 && sens <= 4611686018427387904.0 && sens == floor(sens),
			  "sensitivity", "an integer between 0 and 2^62", sens);
	PG_RETURN_FLOAT8(CALCULATE(dp_discrete_gaussian_delta(sigma, epsilon, sens)));
}

/* "laplace" or "gaussian": true for Laplace */
static bool
parse_mechanism(text *t)
{
	char	   *mech = text_to_cstring(t);

	if (strcmp(mech, "laplace") == 0)
		return true;
	if (strcmp(mech, "gaussian") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("mechanism must be \"laplace\" or \"gaussian\""),
				 errdetail("mechanism is \"%s\".", mech)));
	return false;
}

/*
 * Smallest Laplace scale noise_sample accepts: 2^-40, far below any the
 * aggregates use (their grids make the noise about 2^40 units).
 */
#define NOISE_SAMPLE_MIN_LAPLACE_SCALE (1.0 / 1099511627776.0)

/*
 * Most draws one call of noise_sample returns: a million draws take well
 * under a second (about 0.3 us each for the discrete Laplace, 0.6 us for
 * the discrete Gaussian), so a call never runs for minutes; larger samples
 * are drawn by several calls.
 */
#define NOISE_SAMPLE_MAX_DRAWS 1000000

/*
 * dp_agg.noise_sample(mechanism, scale, n): n draws of the samplers the
 * aggregates use, for statistical tests and audits, with the parameters
 * the aggregates would use (noise_param.c).  Laplace: the scale t/s is the
 * smallest dyadic rational at least the scale given (the scale itself when
 * its binary exponent is at least -63); Gaussian: sigma, with sigma^2
 * rounded up.
 */
Datum
dp_noise_sample(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		laplace = parse_mechanism(PG_GETARG_TEXT_PP(0));
	double		scale = PG_GETARG_FLOAT8(1);
	int32		n = PG_GETARG_INT32(2);
	DpLaplaceParam lp = {0, 0};
	DpGaussianParam gp = {0, 0};

	check_arg(scale >= (laplace ? NOISE_SAMPLE_MIN_LAPLACE_SCALE : DP_MIN_GAUSSIAN_SIGMA) &&
			  scale <= (laplace ? DP_MAX_LAPLACE_SCALE : DP_MAX_GAUSSIAN_SIGMA),
			  "scale", "within the range of the sampler", scale);
	check_arg_max(n >= 0 && n <= NOISE_SAMPLE_MAX_DRAWS, "n", "between 0 and %d", NOISE_SAMPLE_MAX_DRAWS, n);

	if (laplace)
		lp = dp_laplace_param(scale);
	else
		gp = dp_gaussian_param(dp_mul_up(scale, scale));

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	for (int i = 0; i < n; i++)
	{
		int128		x = laplace ? dp_sample_discrete_laplace(lp) : dp_sample_discrete_gaussian(gp);
		Datum		value;
		bool		isnull = false;

		CHECK_FOR_INTERRUPTS();
		value = Int64GetDatum((int64) Max(Min(x, (int128) PG_INT64_MAX), (int128) PG_INT64_MIN));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
	}
	return (Datum) 0;
}

/* ---------- amplification and Renyi DP calculators ---------- */

PG_FUNCTION_INFO_V1(dp_amplified_epsilon_sql);
PG_FUNCTION_INFO_V1(dp_base_epsilon_sql);
PG_FUNCTION_INFO_V1(dp_rdp_sampled_gaussian_sql);
PG_FUNCTION_INFO_V1(dp_rdp_to_epsilon_sql);
PG_FUNCTION_INFO_V1(dp_sampled_gaussian_epsilon_sql);
PG_FUNCTION_INFO_V1(dp_sampled_gaussian_sigma_sql);

#define CHECK_RATE(q) check_arg((q) > 0 && (q) <= 1, "rate", "greater than 0 and at most 1", (q))
#define CHECK_RATE0(q) check_arg((q) >= 0 && (q) <= 1, "rate", "between 0 and 1", (q))

/*
 * Rates of the Renyi DP calculators: 0, or from the smallest positive rate
 * TABLESAMPLE BERNOULLI applies (its cutoff is a 32-bit integer, so rates
 * are multiples of 2^-32) to 1.  Below it the series overflow (1/q).
 */
#define MIN_RENYI_RATE (1.0 / 4294967296.0)
#define CHECK_RENYI_RATE(q) check_arg((q) == 0 || ((q) >= MIN_RENYI_RATE && (q) <= 1), "rate", \
									  "0, or from 2^-32 to 1", (q))
/*
 * The smallest noise multiplier the Renyi calculators accept: below any the
 * aggregates use (their sigma is at least 1/256 unit and their sensitivity
 * at most 2^62 units, so at least 2^-70), and large enough that
 * 1 / (2 sigma^2) is finite (at most 2^159): smaller ones made it 0/0.
 */
#define MIN_NOISE_MULTIPLIER (1.0 / 1208925819614629174706176.0)	/* 2^-80 */

#define CHECK_NM(m) check_arg((m) >= MIN_NOISE_MULTIPLIER && isfinite(m), "noise_multiplier", \
							  "a finite number at least 2^-80", (m))

/*
 * A Renyi order: above 1, and at most DP_RDP_MAX_ORDER (the series of the
 * sampled Gaussian are summed exactly up to there) or infinite.  Checked
 * for the whole array before any is computed.
 */
static void
check_order(double a)
{
	check_arg(a > 1, "order", "greater than 1", a);
	if (!(a <= DP_RDP_MAX_ORDER || a == INFINITY))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("order must be at most %d, or infinite", DP_RDP_MAX_ORDER),
				 errdetail("order is %g; the Renyi DP of the sampled Gaussian is computed "
						   "exactly for orders in (1, %d] and at infinity.",
						   a, DP_RDP_MAX_ORDER)));
}

/* the float8 elements of a one-dimensional array without NULLs */
static double *
float8_array(ArrayType *a, const char *name, int *n)
{
	Datum	   *elems;
	bool	   *nulls;
	double	   *result;

	if (ARR_NDIM(a) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s must be a one-dimensional array", name)));
	deconstruct_array(a, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &elems, &nulls, n);
	result = palloc(sizeof(double) * Max(*n, 1));
	for (int i = 0; i < *n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not contain NULLs", name)));
		result[i] = DatumGetFloat8(elems[i]);
	}
	return result;
}

/* dp_agg.amplified_epsilon(epsilon, rate): ln(1 + rate (e^epsilon - 1)) */
Datum
dp_amplified_epsilon_sql(PG_FUNCTION_ARGS)
{
	double		epsilon = PG_GETARG_FLOAT8(0);
	double		rate = PG_GETARG_FLOAT8(1);

	check_arg(epsilon >= 0 && isfinite(epsilon), "epsilon", "a finite number at least 0", epsilon);
	CHECK_RATE0(rate);
	PG_RETURN_FLOAT8(CALCULATE(dp_amplified_epsilon(epsilon, rate)));
}

/* dp_agg.base_epsilon(epsilon, rate): its inverse, rounded down */
Datum
dp_base_epsilon_sql(PG_FUNCTION_ARGS)
{
	double		epsilon = PG_GETARG_FLOAT8(0);
	double		rate = PG_GETARG_FLOAT8(1);

	check_arg(epsilon >= 0 && isfinite(epsilon), "epsilon", "a finite number at least 0", epsilon);
	CHECK_RATE(rate);
	PG_RETURN_FLOAT8(CALCULATE(dp_base_epsilon(epsilon, rate)));
}

/* dp_agg.rdp_sampled_gaussian(rate, noise_multiplier, orders) */
Datum
dp_rdp_sampled_gaussian_sql(PG_FUNCTION_ARGS)
{
	double		rate = PG_GETARG_FLOAT8(0);
	double		nm = PG_GETARG_FLOAT8(1);
	int			n;
	double	   *orders = float8_array(PG_GETARG_ARRAYTYPE_P(2), "orders", &n);
	Datum	   *out = palloc(sizeof(Datum) * Max(n, 1));

	CHECK_RENYI_RATE(rate);
	CHECK_NM(nm);
	for (int i = 0; i < n; i++)
		check_order(orders[i]);
	/* one limit for the whole call */
	dp_work_limit(DP_CALCULATOR_MAX_STEPS);
	for (int i = 0; i < n; i++)
		out[i] = Float8GetDatum(dp_rdp_sampled_gaussian(rate, nm, orders[i]));
	dp_work_limit(0);
	PG_RETURN_ARRAYTYPE_P(construct_array(out, n, FLOAT8OID, sizeof(float8),
										  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* dp_agg.rdp_to_epsilon(orders, rdp, delta) */
Datum
dp_rdp_to_epsilon_sql(PG_FUNCTION_ARGS)
{
	int			n,
				m;
	double	   *orders = float8_array(PG_GETARG_ARRAYTYPE_P(0), "orders", &n);
	double	   *rdp = float8_array(PG_GETARG_ARRAYTYPE_P(1), "rdp", &m);
	double		delta = PG_GETARG_FLOAT8(2);

	if (n != m)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("orders and rdp must have the same length"),
				 errdetail("orders has %d elements, rdp %d.", n, m)));
	CHECK_DELTA_POS(delta);
	for (int i = 0; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		check_arg(orders[i] > 1, "order", "greater than 1", orders[i]);
		check_arg(rdp[i] >= 0, "rdp", "at least 0", rdp[i]);
	}
	PG_RETURN_FLOAT8(CALCULATE(dp_rdp_to_epsilon(orders, rdp, n, delta)));
}

/* dp_agg.sampled_gaussian_epsilon(rate, noise_multiplier, steps, delta) */
Datum
dp_sampled_gaussian_epsilon_sql(PG_FUNCTION_ARGS)
{
	double		rate = PG_GETARG_FLOAT8(0);
	double		nm = PG_GETARG_FLOAT8(1);
	int32		steps = PG_GETARG_INT32(2);
	double		delta = PG_GETARG_FLOAT8(3);

	CHECK_RENYI_RATE(rate);
	CHECK_NM(nm);
	check_arg(steps >= 0, "steps", "at least 0", steps);
	CHECK_DELTA_POS(delta);
	PG_RETURN_FLOAT8(CALCULATE(dp_sampled_gaussian_epsilon(rate, nm, steps, delta)));
}

/* dp_agg.sampled_gaussian_sigma(epsilon, delta, rate, sensitivity) */
Datum
dp_sampled_gaussian_sigma_sql(PG_FUNCTION_ARGS)
{
	double		epsilon = PG_GETARG_FLOAT8(0);
	double		delta = PG_GETARG_FLOAT8(1);
	double		rate = PG_GETARG_FLOAT8(2);
	double		sens = PG_GETARG_FLOAT8(3);
	int			method;

	CHECK_EPSILON(epsilon);
	CHECK_DELTA_POS(delta);
	check_arg(rate >= MIN_RENYI_RATE && rate <= 1, "rate", "from 2^-32 to 1", rate);
	CHECK_SENS(sens);
	PG_RETURN_FLOAT8(CALCULATE(dp_sampled_gaussian_sigma(epsilon, delta, rate, sens, &method)));
}

PG_FUNCTION_INFO_V1(dp_rdp_orders_sql);

/* dp_agg.rdp_orders(): the order grid of the Renyi DP accountant */
Datum
dp_rdp_orders_sql(PG_FUNCTION_ARGS)
{
	int			n;
	const double *orders = dp_rdp_orders(&n);
	Datum	   *d = palloc(sizeof(Datum) * n);

	for (int i = 0; i < n; i++)
		d[i] = Float8GetDatum(orders[i]);
	PG_RETURN_ARRAYTYPE_P(construct_array(d, n, FLOAT8OID, sizeof(float8),
										  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

PG_FUNCTION_INFO_V1(dp_rdp_curve_valid_sql);
PG_FUNCTION_INFO_V1(dp_journal_append_sql);
PG_FUNCTION_INFO_V1(dp_recall_leases_trigger);
PG_FUNCTION_INFO_V1(dp_fold_journal_sql);

/*
 * dp_agg_internal.rdp_curve_valid(curve): the check constraints
 * budget_rdp_shape and ledger_rdp_shape, the shape the decoders of budget
 * rows ask (budget_row.c)
 */
Datum
dp_rdp_curve_valid_sql(PG_FUNCTION_ARGS)
{
	int			where;

	PG_RETURN_BOOL(dp_rdp_curve_check(PG_GETARG_ARRAYTYPE_P(0), NULL, &where) == DP_CURVE_OK);
}

/*
 * dp_agg.noise_interval(mechanism, noise_scale, confidence): the half-width
 * of the central interval of the discrete Laplace (scale) or discrete
 * Gaussian (sigma) noise on the integers at that confidence, for the scales
 * the samplers accept; exact below 2^53, above it the smallest double that
 * covers (dp_noise_halfwidth).
 */
Datum
dp_noise_interval_sql(PG_FUNCTION_ARGS)
{
	bool		laplace = parse_mechanism(PG_GETARG_TEXT_PP(0));
	double		scale = PG_GETARG_FLOAT8(1);
	double		confidence = PG_GETARG_FLOAT8(2);

	if (laplace)
		check_arg(scale >= 0 && scale <= DP_MAX_LAPLACE_SCALE, "noise_scale",
				  "between 0 and 2^62 for laplace (the range of the sampler)", scale);
	else
		check_arg(scale >= 0 && scale <= DP_MAX_GAUSSIAN_SIGMA, "noise_scale",
				  "between 0 and 2^48 for gaussian (the range of the sampler)", scale);
	check_arg(confidence > 0 && confidence < 1, "confidence", "greater than 0 and less than 1",
			  confidence);
	PG_RETURN_FLOAT8(CALCULATE(dp_noise_halfwidth(laplace, scale, confidence, 0)));
}

/* the largest |k| of units of 2^k */
#define NUMERIC_UNITS_MAX_K 2000

/*
 * dp_agg.numeric_units(value, k): the in-place rounding of a numeric row to
 * units of 2^k (numeric_units.c), so that it can be checked against
 * round(value * 2^-k); NULL where it declines.
 */
Datum
dp_numeric_units_sql(PG_FUNCTION_ARGS)
{
	int32		k = PG_GETARG_INT32(1);
	int64		units;

	if (k < -NUMERIC_UNITS_MAX_K || k > NUMERIC_UNITS_MAX_K)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("k must lie between %d and %d", -NUMERIC_UNITS_MAX_K, NUMERIC_UNITS_MAX_K),
				 errdetail("k is %d.", k),
				 errhint("Grids of the DP aggregates lie far inside that range.")));
	if (!dp_numeric_units(PG_GETARG_DATUM(0), k, &units))
		PG_RETURN_NULL();
	PG_RETURN_INT64(units);
}

/* ---------- private selection of groups (selection_mechanism.c) ---------- */

/*
 * Largest max_groups_contributed of the selection calculators: far above
 * any bound on a unit's groups that leaves a group a chance to be released.
 */
#define SELECTION_MAX_GROUPS 1000000

/* the selection at (epsilon, delta, max_groups_contributed), arguments checked */
static void
selection_spec(FunctionCallInfo fcinfo, int epsilon_arg, int delta_arg, int k_arg,
			   DpSelectionSpec *spec)
{
	double		epsilon = PG_GETARG_FLOAT8(epsilon_arg);
	double		delta = PG_GETARG_FLOAT8(delta_arg);
	int32		k = PG_GETARG_INT32(k_arg);

	CHECK_EPSILON(epsilon);
	CHECK_DELTA_POS(delta);
	check_arg_max(k >= 1 && k <= SELECTION_MAX_GROUPS, "max_groups_contributed",
				  "between 1 and %d", SELECTION_MAX_GROUPS, k);
	dp_selection_plan(spec, epsilon, delta, k);
}

/*
 * dp_agg.selection_probability(epsilon, delta, n, max_groups_contributed):
 * the probability that a group of n units is released
 */
Datum
dp_selection_probability_sql(PG_FUNCTION_ARGS)
{
	DpSelectionSpec spec;
	int64		n = PG_GETARG_INT64(2);

	check_arg(n >= 0, "n", "at least 0", (double) n);
	selection_spec(fcinfo, 0, 1, 3, &spec);
	PG_RETURN_FLOAT8(dp_selection_probability(&spec, n));
}

/*
 * dp_agg.selection_threshold(epsilon, delta, max_groups_contributed): the
 * smallest n released with certainty; NULL under Gaussian thresholding,
 * which releases no group with certainty
 */
Datum
dp_selection_threshold_sql(PG_FUNCTION_ARGS)
{
	DpSelectionSpec spec;

	selection_spec(fcinfo, 0, 1, 2, &spec);
	if (spec.kind == DP_SELECTION_GAUSSIAN)
		PG_RETURN_NULL();
	PG_RETURN_INT64(spec.threshold);
}

#define SELECTION_MECHANISM_COLUMNS 7

/*
 * dp_agg.selection_mechanism(epsilon, delta, max_groups_contributed): the
 * mechanism chosen and its parameters: (mechanism, half, threshold, sigma,
 * tau, delta_noise, delta_threshold), NULL where they do not apply
 */
Datum
dp_selection_mechanism_sql(PG_FUNCTION_ARGS)
{
	DpSelectionSpec spec;
	TupleDesc	desc;
	Datum		values[SELECTION_MECHANISM_COLUMNS] = {0};
	bool		nulls[SELECTION_MECHANISM_COLUMNS] = {0};
	bool		gaussian;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "dp_agg: selection_mechanism must return a row");
	selection_spec(fcinfo, 0, 1, 2, &spec);
	gaussian = spec.kind == DP_SELECTION_GAUSSIAN;
	values[0] = CStringGetTextDatum(dp_selection_mechanism_name(&spec));
	values[1] = Int64GetDatum(spec.half);
	values[2] = Int64GetDatum(spec.threshold);
	nulls[2] = gaussian;
	values[3] = Float8GetDatum(spec.gauss.sigma);
	values[4] = Int64GetDatum(spec.gauss.tau);
	values[5] = Float8GetDatum(spec.gauss.delta_noise);
	values[6] = Float8GetDatum(spec.gauss.delta_threshold);
	nulls[3] = nulls[4] = nulls[5] = nulls[6] = !gaussian;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}

/*
 * dp_agg.selection_sample(epsilon, delta, n, draws, max_groups_contributed):
 * how many of draws independent selections of a group of n units release it
 */
Datum
dp_selection_sample_sql(PG_FUNCTION_ARGS)
{
	DpSelectionSpec spec;
	int64		n = PG_GETARG_INT64(2);
	int32		draws = PG_GETARG_INT32(3);
	int64		released = 0;

	check_arg(n >= 0, "n", "at least 0", (double) n);
	check_arg_max(draws >= 0 && draws <= NOISE_SAMPLE_MAX_DRAWS, "draws", "between 0 and %d", NOISE_SAMPLE_MAX_DRAWS, draws);
	selection_spec(fcinfo, 0, 1, 4, &spec);
	for (int i = 0; i < draws; i++)
	{
		CHECK_FOR_INTERRUPTS();
		if (dp_selection_draw(&spec, n))
			released++;
	}
	PG_RETURN_INT64(released);
}

/* ---------- tight accounting: joint Gaussian releases, sampled discrete Laplace ---------- */

PG_FUNCTION_INFO_V1(dp_gaussian_mu_sql);
PG_FUNCTION_INFO_V1(dp_rdp_sampled_laplace_sql);

/*
 * dp_agg.gaussian_mu(sigmas, sensitivities): the mu of Gaussian releases
 * composed exactly, sqrt(sum (sensitivity_i / sigma_i)^2) (Dong, Roth & Su
 * 2019, Corollary 3.3), rounded up; joint.c calibrates a statement's
 * Gaussian releases to it.
 */
Datum
dp_gaussian_mu_sql(PG_FUNCTION_ARGS)
{
	int			n,
				m;
	double	   *sigmas = float8_array(PG_GETARG_ARRAYTYPE_P(0), "sigmas", &n);
	double	   *sens = float8_array(PG_GETARG_ARRAYTYPE_P(1), "sensitivities", &m);
	double		sum_sq = 0;

	if (n != m)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("sigmas and sensitivities must have the same length"),
				 errdetail("sigmas has %d elements, sensitivities %d.", n, m)));
	for (int i = 0; i < n; i++)
	{
		double		r;

		CHECK_FOR_INTERRUPTS();
		CHECK_SIGMA(sigmas[i]);
		CHECK_SENS(sens[i]);
		r = dp_div_up(sens[i], sigmas[i]);
		sum_sq = dp_add_up(sum_sq, dp_mul_up(r, r));
	}
	PG_RETURN_FLOAT8(sum_sq == 0 ? 0 : nextafter(sqrt(sum_sq), INFINITY));
}

/*
 * The largest integer sensitivity and scale the calculator accepts: those
 * of the sampler (2^62 units).
 */
#define MAX_LAPLACE_UNITS 4611686018427387904.0	/* 2^62 */

/*
 * dp_agg.rdp_sampled_laplace(rate, noise_scale, sensitivity, orders): the
 * Renyi DP of one release of the discrete Laplace of scale noise_scale
 * (P[x] proportional to exp(-|x| / noise_scale)) with integer sensitivity,
 * on a Poisson sample (rdp_laplace.c), at finite orders.
 */
Datum
dp_rdp_sampled_laplace_sql(PG_FUNCTION_ARGS)
{
	double		rate = PG_GETARG_FLOAT8(0);
	double		scale = PG_GETARG_FLOAT8(1);
	double		sens = PG_GETARG_FLOAT8(2);
	int			n;
	double	   *orders = float8_array(PG_GETARG_ARRAYTYPE_P(3), "orders", &n);
	Datum	   *out = palloc(sizeof(Datum) * Max(n, 1));

	CHECK_RATE0(rate);
	check_arg(scale > 0 && scale <= MAX_LAPLACE_UNITS, "noise_scale",
			  "greater than 0 and at most 2^62", scale);
	check_arg(sens >= 1 && sens <= MAX_LAPLACE_UNITS && sens == floor(sens), "sensitivity",
			  "an integer from 1 to 2^62", sens);
	for (int i = 0; i < n; i++)
		check_arg_max(orders[i] > 1 && orders[i] <= DP_RDP_MAX_ORDER, "order",
					  "greater than 1 and at most %d", DP_RDP_MAX_ORDER, orders[i]);
	dp_work_limit(DP_CALCULATOR_MAX_STEPS);
	for (int i = 0; i < n; i++)
		out[i] = Float8GetDatum(dp_rdp_sampled_discrete_laplace(rate, 1.0 / scale, sens,
																orders[i]));
	dp_work_limit(0);
	PG_RETURN_ARRAYTYPE_P(construct_array(out, n, FLOAT8OID, sizeof(float8),
										  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/*
 * dp_agg_internal.journal_append(role, epsilon, delta): append a row to
 * dp_agg.journal, outside the transaction, and flush the WAL to it
 * (journal.c).  Superuser only: the charges decided in the backends will
 * call the same append; this entry lets the tests exercise it alone.
 */
Datum
dp_journal_append_sql(PG_FUNCTION_ARGS)
{
	Oid			relid = dp_journal_relid();
	Relation	rel;
	DpJournalEntry e;

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation \"dp_agg.journal\" does not exist"),
				 errhint("Update the extension: ALTER EXTENSION dp_agg UPDATE.")));
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("only a superuser may append to the dp_agg journal"),
				 errhint("It is for the tests of the journal; charges are journaled by dp_agg itself.")));
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("role, epsilon and delta must not be NULL")));
	PreventCommandDuringRecovery("dp_agg_internal.journal_append()");
	rel = table_open(relid, RowExclusiveLock);
	/* no budgets: the charger never folds it */
	memset(&e, 0, sizeof(e));
	e.at = GetCurrentTimestamp();
	e.role = PG_GETARG_OID(0);
	e.epsilon = PG_GETARG_FLOAT8(1);
	e.delta = PG_GETARG_FLOAT8(2);
	e.releases_len = -1;
	XLogFlush(dp_journal_append_entry(rel, &e));
	table_close(rel, NoLock);
	PG_RETURN_VOID();
}

/*
 * dp_agg_internal.recall_leases(): the statement trigger dp_agg_recall_leases
 * on dp_agg.budget and dp_agg.cap.  Any change of them (set_budget, a DBA's
 * UPDATE, TRUNCATE) ends every lease of the database, now and when the
 * transaction commits (lease.c, dp_lease_recall_all): the next statements
 * are decided by the charger, on the rows as changed.
 */
Datum
dp_recall_leases_trigger(PG_FUNCTION_ARGS)
{
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("dp_agg_internal.recall_leases() must be called as a trigger")));
	dp_lease_budgets_changed();
	return PointerGetDatum(NULL);
}

/*
 * dp_agg_internal.fold_journal(): have the charger fold the charges decided
 * on leases into dp_agg.budget and dp_agg.ledger now (budget.c,
 * dp_fold_journal); false if this transaction could not wait for it.
 * reset_budget calls it before it resets.
 */
Datum
dp_fold_journal_sql(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(dp_fold_journal());
}
