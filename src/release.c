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
 * state of that execution.  The aggregate support functions (aggregates.c)
 * look their ticket up and never read a setting: what runs is what was paid.
 * A support function that finds no ticket refuses to run, so any path to a
 * release that bypasses pricing fails closed.
 *
 * Grids.  Every release is an integer number of units of 2^k.  Counts use
 * k = 0.  For sums, each clamped value is rounded to the nearest multiple of
 * 2^k, with k chosen from the bounds and the noise scale so that the noise is
 * about 2^40 units (rounding errors far below the noise), no row exceeds
 * 2^60 units (128-bit sums cannot overflow), and the sensitivity is at least
 * 4 units; integer types never use k < 0.  The sensitivity in units is then
 * computed exactly from the rounded bounds.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_depend.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "common/hashfn.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/json.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "calibrate.h"
#include "dp_agg.h"
#include "guc.h"
#include "release.h"
#include "sampling.h"

/* ---------- which aggregates are ours ---------- */

static HTAB *dp_calls = NULL;	/* aggfnoid -> DpCallInfo */
static bool dp_calls_valid = false;
static MemoryContext dp_cache_cxt = NULL;

static void
invalidate_calls(Datum arg, int cacheid, uint32 hashvalue)
{
	dp_calls_valid = false;
}

void
dp_release_init(void)
{
	CacheRegisterSyscacheCallback(PROCOID, invalidate_calls, (Datum) 0);
}

static const char *
final_symbol(Oid aggfnoid, Oid *finalfn)
{
	HeapTuple	tup;
	Datum		src;
	bool		isnull;
	char	   *result;

	tup = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggfnoid));
	if (!HeapTupleIsValid(tup))
		return NULL;
	*finalfn = ((Form_pg_aggregate) GETSTRUCT(tup))->aggfinalfn;
	ReleaseSysCache(tup);
	if (!OidIsValid(*finalfn))
		return NULL;
	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(*finalfn));
	if (!HeapTupleIsValid(tup))
		return NULL;
	if (((Form_pg_proc) GETSTRUCT(tup))->prolang != ClanguageId)
	{
		ReleaseSysCache(tup);
		return NULL;
	}
	src = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosrc, &isnull);
	result = isnull ? NULL : TextDatumGetCString(src);
	ReleaseSysCache(tup);
	return result;
}

static DpValueClass
value_class(Oid type)
{
	switch (type)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
			return DP_VALUE_INT;
		case FLOAT4OID:
		case FLOAT8OID:
			return DP_VALUE_FLOAT;
		case NUMERICOID:
			return DP_VALUE_NUMERIC;
		default:
			return DP_VALUE_NONE;
	}
}

/*
 * Describe one member aggregate of the extension from its final function's
 * C symbol and its argument types.  Anything unexpected is a broken install.
 */
static void
describe_aggregate(Oid aggfnoid, DpCallInfo *info)
{
	HeapTuple	tup;
	Form_pg_proc proc;
	Oid			finalfn;
	const char *sym = final_symbol(aggfnoid, &finalfn);
	Oid		   *argtypes;

	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(aggfnoid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for function %u", aggfnoid);
	proc = (Form_pg_proc) GETSTRUCT(tup);

	memset(info, 0, sizeof(*info));
	info->aggfnoid = aggfnoid;
	info->nargs = proc->pronargs;
	argtypes = proc->proargtypes.values;
	info->lower_arg = info->upper_arg = info->epsilon_arg = info->delta_arg = -1;

	if (sym == NULL)
		elog(ERROR, "dp_agg: aggregate %u has no C final function", aggfnoid);
	if (strcmp(sym, "dp_count_final") == 0)
	{
		info->kind = info->nargs == 0 ? DP_COUNT_STAR : DP_COUNT;
		info->vclass = DP_VALUE_NONE;
		info->valtype = InvalidOid;
		if (info->nargs >= 2)
			info->epsilon_arg = 1;
		if (info->nargs >= 3)
			info->delta_arg = 2;
	}
	else if (strncmp(sym, "dp_sum_", 7) == 0 || strncmp(sym, "dp_avg_", 7) == 0)
	{
		info->kind = sym[3] == 's' ? DP_SUM : DP_AVG;
		if (info->nargs < 3)
			elog(ERROR, "dp_agg: aggregate %u has too few arguments", aggfnoid);
		info->valtype = argtypes[0];
		info->vclass = value_class(info->valtype);
		info->lower_arg = 1;
		info->upper_arg = 2;
		if (info->nargs >= 4)
			info->epsilon_arg = 3;
		if (info->nargs >= 5)
			info->delta_arg = 4;
		if (info->vclass == DP_VALUE_NONE ||
			argtypes[1] != info->valtype || argtypes[2] != info->valtype)
			elog(ERROR, "dp_agg: aggregate %u has unexpected argument types", aggfnoid);
	}
	else
		elog(ERROR, "dp_agg: aggregate %u has unknown final function %s", aggfnoid, sym);

	if ((info->epsilon_arg >= 0 && argtypes[info->epsilon_arg] != FLOAT8OID) ||
		(info->delta_arg >= 0 && argtypes[info->delta_arg] != FLOAT8OID) ||
		info->nargs > 5)
		elog(ERROR, "dp_agg: aggregate %u has unexpected argument types", aggfnoid);
	ReleaseSysCache(tup);
}

/*
 * (Re)build the set of DP aggregates: the aggregates that are members of
 * the extension dp_agg in this database.
 */
static void
build_calls(void)
{
	HASHCTL		ctl;
	Oid			extoid;
	Relation	dep;
	ScanKeyData key[2];
	SysScanDesc scan;
	HeapTuple	tup;

	if (dp_cache_cxt == NULL)
		dp_cache_cxt = AllocSetContextCreate(TopMemoryContext, "dp_agg cache",
											 ALLOCSET_SMALL_SIZES);
	if (dp_calls)
		hash_destroy(dp_calls);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(DpCallInfo);
	ctl.hcxt = dp_cache_cxt;
	dp_calls = hash_create("dp_agg aggregates", 64, &ctl,
						   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

	extoid = get_extension_oid("dp_agg", true);
	if (OidIsValid(extoid))
	{
		dep = table_open(DependRelationId, AccessShareLock);
		ScanKeyInit(&key[0], Anum_pg_depend_refclassid, BTEqualStrategyNumber,
					F_OIDEQ, ObjectIdGetDatum(ExtensionRelationId));
		ScanKeyInit(&key[1], Anum_pg_depend_refobjid, BTEqualStrategyNumber,
					F_OIDEQ, ObjectIdGetDatum(extoid));
		scan = systable_beginscan(dep, DependReferenceIndexId, true, NULL, 2, key);
		while (HeapTupleIsValid(tup = systable_getnext(scan)))
		{
			Form_pg_depend d = (Form_pg_depend) GETSTRUCT(tup);
			DpCallInfo	info;
			bool		found;

			if (d->classid != ProcedureRelationId || d->deptype != DEPENDENCY_EXTENSION)
				continue;
			if (get_func_prokind(d->objid) != PROKIND_AGGREGATE)
				continue;
			describe_aggregate(d->objid, &info);
			*(DpCallInfo *) hash_search(dp_calls, &d->objid, HASH_ENTER, &found) = info;
		}
		systable_endscan(scan);
		table_close(dep, AccessShareLock);
	}
	dp_calls_valid = true;
}

/* The DpCallInfo of a DP aggregate, NULL for any other function. */
const DpCallInfo *
dp_lookup_call(Oid aggfnoid)
{
	if (!dp_calls_valid)
		build_calls();
	return (const DpCallInfo *) hash_search(dp_calls, &aggfnoid, HASH_FIND, NULL);
}

bool
dp_extension_present(void)
{
	if (!dp_calls_valid)
		build_calls();
	return hash_get_num_entries(dp_calls) > 0;
}

const char *
dp_kind_name(DpAggKind kind)
{
	switch (kind)
	{
		case DP_COUNT_STAR:
		case DP_COUNT:
			return "dp_count";
		case DP_SUM:
			return "dp_sum";
		case DP_AVG:
			return "dp_avg";
	}
	return "?";
}

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

/* ---------- parameters: constants or statement parameters only ---------- */

static const char *
arg_name(const DpCallInfo *info, int argno)
{
	if (argno == info->epsilon_arg)
		return "epsilon";
	if (argno == info->delta_arg)
		return "delta";
	if (argno == info->lower_arg)
		return "lower bound";
	if (argno == info->upper_arg)
		return "upper bound";
	return "argument";
}

/*
 * Is expr a constant, a parameter of the statement, or a built-in immutable
 * function or operator of such?  Those are decided before execution and
 * cannot depend on the data.
 */
bool
dp_is_parameter_form(Node *expr)
{
	if (expr == NULL)
		return false;
	switch (nodeTag(expr))
	{
		case T_Const:
			return true;
		case T_Param:
			return ((Param *) expr)->paramkind == PARAM_EXTERN;
		case T_RelabelType:
			return dp_is_parameter_form((Node *) ((RelabelType *) expr)->arg);
		case T_FuncExpr:
			{
				FuncExpr   *f = (FuncExpr *) expr;
				ListCell   *lc;

				if (f->funcretset || f->funcid >= FirstGenbkiObjectId ||
					func_volatile(f->funcid) != PROVOLATILE_IMMUTABLE)
					return false;
				foreach(lc, f->args)
					if (!dp_is_parameter_form(lfirst(lc)))
						return false;
				return true;
			}
		case T_OpExpr:
			{
				OpExpr	   *o = (OpExpr *) expr;
				ListCell   *lc;

				set_opfuncid(o);
				if (o->opretset || o->opfuncid >= FirstGenbkiObjectId ||
					func_volatile(o->opfuncid) != PROVOLATILE_IMMUTABLE)
					return false;
				foreach(lc, o->args)
					if (!dp_is_parameter_form(lfirst(lc)))
						return false;
				return true;
			}
		default:
			return false;
	}
}

static Node *
call_arg(Aggref *aggref, int argno)
{
	TargetEntry *tle = list_nth_node(TargetEntry, aggref->args, argno);

	return (Node *) tle->expr;
}

/*
 * ERROR unless argument argno of a DP aggregate call is of parameter form.
 */
void
dp_check_parameter_expr(Node *expr, const DpCallInfo *info, int argno)
{
	if (!dp_is_parameter_form(expr))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s of %s must be a constant or a parameter",
						arg_name(info, argno), dp_kind_name(info->kind)),
				 errdetail("Columns, sub-queries and volatile expressions would make "
						   "the noise depend on the data."),
				 errhint("Write a literal, or a $n parameter of a prepared statement.")));
}

static void
eval_parameter(Node *expr, ParamListInfo params, Datum *value, bool *isnull)
{
	switch (nodeTag(expr))
	{
		case T_Const:
			*value = ((Const *) expr)->constvalue;
			*isnull = ((Const *) expr)->constisnull;
			return;
		case T_Param:
			{
				Param	   *p = (Param *) expr;
				ParamExternData *prm;
				ParamExternData prmdata;

				if (params == NULL || p->paramid <= 0 || p->paramid > params->numParams)
					ereport(ERROR,
							(errcode(ERRCODE_UNDEFINED_PARAMETER),
							 errmsg("there is no value for parameter $%d", p->paramid)));
				if (params->paramFetch != NULL)
					prm = params->paramFetch(params, p->paramid, false, &prmdata);
				else
					prm = &params->params[p->paramid - 1];
				if (prm->ptype != p->paramtype)
					ereport(ERROR,
							(errcode(ERRCODE_DATATYPE_MISMATCH),
							 errmsg("type of parameter %d (%s) does not match that when preparing the plan (%s)",
									p->paramid, format_type_be(prm->ptype),
									format_type_be(p->paramtype))));
				*value = prm->value;
				*isnull = prm->isnull;
				return;
			}
		case T_RelabelType:
			eval_parameter((Node *) ((RelabelType *) expr)->arg, params, value, isnull);
			return;
		case T_FuncExpr:
		case T_OpExpr:
			{
				Oid			fn;
				List	   *args;
				Oid			collation;
				ListCell   *lc;
				int			i = 0;
				FmgrInfo	flinfo;
				LOCAL_FCINFO(fcinfo, FUNC_MAX_ARGS);

				if (IsA(expr, FuncExpr))
				{
					fn = ((FuncExpr *) expr)->funcid;
					args = ((FuncExpr *) expr)->args;
					collation = ((FuncExpr *) expr)->inputcollid;
				}
				else
				{
					set_opfuncid((OpExpr *) expr);
					fn = ((OpExpr *) expr)->opfuncid;
					args = ((OpExpr *) expr)->args;
					collation = ((OpExpr *) expr)->inputcollid;
				}
				fmgr_info(fn, &flinfo);
				InitFunctionCallInfoData(*fcinfo, &flinfo, list_length(args),
										 collation, NULL, NULL);
				foreach(lc, args)
				{
					eval_parameter(lfirst(lc), params,
								   &fcinfo->args[i].value, &fcinfo->args[i].isnull);
					if (fcinfo->args[i].isnull && flinfo.fn_strict)
					{
						*value = (Datum) 0;
						*isnull = true;
						return;
					}
					i++;
				}
				*value = FunctionCallInvoke(fcinfo);
				*isnull = fcinfo->isnull;
				return;
			}
		default:
			elog(ERROR, "dp_agg: unexpected parameter expression %d", (int) nodeTag(expr));
	}
}

/* the value of argument argno, ERROR if it is NULL */
static Datum
resolve_arg(Aggref *aggref, const DpCallInfo *info, int argno, ParamListInfo params)
{
	Node	   *expr = call_arg(aggref, argno);
	Datum		value;
	bool		isnull;

	dp_check_parameter_expr(expr, info, argno);
	eval_parameter(expr, params, &value, &isnull);
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s of %s must not be NULL",
						arg_name(info, argno), dp_kind_name(info->kind))));
	return value;
}

/* ---------- noise parameters ---------- */

static double
u64_to_double_up(uint64 x)
{
	double		d = (double) x;

	if (d < 18446744073709551616.0 && (uint64) d < x)
		d = nextafter(d, INFINITY);
	return d;
}

/* v = m 2^e with m odd, v > 0 finite */
static void
dyadic(double v, uint64 *m, int *e)
{
	int			ex;
	double		f;

	if (!(v > 0) || !isfinite(v))
		elog(ERROR, "dp_agg: noise parameter %g is not a positive finite number", v);
	f = frexp(v, &ex);

	*m = (uint64) ldexp(f, 53);
	*e = ex - 53;
	while ((*m & 1) == 0)
	{
		*m >>= 1;
		(*e)++;
	}
}

/* the discrete Laplace parameter t/s >= b */
static DpLaplaceParam
laplace_param(double b)
{
	DpLaplaceParam p;
	uint64		m;
	int			e;

	dyadic(b, &m, &e);
	if (e >= 0)
	{
		p.t = m << e;
		p.s = 1;
	}
	else if (e >= -63)
	{
		p.t = m;
		p.s = UINT64CONST(1) << (-e);
	}
	else
	{
		int			sh = -e - 63;

		p.t = sh >= 64 ? 1 : (m >> sh) + ((m & ((UINT64CONST(1) << sh) - 1)) != 0);
		if (p.t == 0)
			p.t = 1;
		p.s = UINT64CONST(1) << 63;
	}
	return p;
}

/* the discrete Gaussian parameter p/q = v exactly */
static DpGaussianParam
gaussian_param(double v)
{
	DpGaussianParam p;
	uint64		m;
	int			e;

	dyadic(v, &m, &e);
	if (e >= 0)
	{
		p.p = (uint128) m << e;
		p.q = 1;
	}
	else
	{
		p.p = m;
		p.q = (uint128) 1 << (-e);
	}
	return p;
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

	for (int i = 0; i < calibration_cache_used; i++)
	{
		e = &calibration_cache[i];
		if (e->kind == kind && e->a == a && e->b == b && e->c == c)
			return e->value;
	}
	e = &calibration_cache[calibration_cache_next];
	e->kind = kind;
	e->a = a;
	e->b = b;
	e->c = c;
	e->value = kind == CAL_DISCRETE_SIGMA
		? dp_discrete_gaussian_sigma(a, b, c)
		: dp_rdp_sampled_gaussian_sigma(a, b, c);
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
 *      amplification turns into (epsilon, delta) (reference 001, Theorem 29);
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
		ns->laplace = laplace_param(b);
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
		ns->gaussian = gaussian_param(dp_mul_up(sigma, sigma));
		ns->sigma_units = sigma;
		ns->noise_scale = ldexp(sigma, grid_exp);
	}
}

/*
 * Exponent of the row grid: noise of about 2^40 units, |rows| <= 2^60
 * units, sensitivity >= 4 units where possible, and k >= min_exp.
 * log2_span is log2 of the spread the noise hides (max(|l|,|u|) for a sum,
 * u - l for an average), log2_max that of max(|l|,|u|).
 */
static int
choose_row_grid(double log2_span, double log2_max, double mult, int min_exp)
{
	double		k = floor(log2_span + log2(mult)) - 40;
	double		hi = floor(log2_span) - 2;
	double		lo = ceil(log2_max) - 60;

	if (k > hi)
		k = hi;
	if (k < lo)
		k = lo;
	if (k < min_exp)
		k = min_exp;
	if (!isfinite(k))
		k = min_exp;
	return (int) k;
}

/*
 * The noise of a count.  Laplace noise goes on the integers: the discrete
 * Laplace of scale 1/epsilon is exactly epsilon-DP.  Gaussian noise goes on
 * the lattice 2^k Z with k <= 0 chosen so that sigma is about 2^40 units:
 * there the discrete Gaussian needs no more noise than the continuous one
 * (on the integers it needs up to 1.5% more when sigma is near 1), and the
 * released count is rounded to an integer afterwards (post-processing).
 */
static void
plan_count_noise(DpNoiseSpec *ns, const char *fname, double epsilon, double delta,
				 const DpSampling *sampling)
{
	int			k = 0;

	if (delta > 0)
		k = choose_row_grid(0.0, 0.0,
							noise_multiplier(epsilon, delta, sampling),
							-1100);
	plan_noise(ns, fname, epsilon, delta, UINT64CONST(1) << (-k), k, sampling);
}

/* ---------- rounding of rows and bounds to the grid ---------- */

int64
dp_round_numeric(Numeric v, const DpRelease *r)
{
	Datum		scaled;

	scaled = NumericGetDatum(numeric_mul_opt_error(v, r->row_mult_num, NULL));
	scaled = DirectFunctionCall2(numeric_round, scaled, Int32GetDatum(0));
	return DatumGetInt64(DirectFunctionCall1(numeric_int8, scaled));
}

/* 2^e as an exact numeric: powers of 2 (or of 5 shifted by 10^-n) */
Numeric
dp_numeric_pow2(int e)
{
	int			n = (e < 0) ? -e : e;
	Numeric		base = int64_to_numeric(e >= 0 ? 2 : 5);
	Numeric		result = int64_to_numeric(1);

	/* exponentiation by squaring; integer products are exact */
	while (n > 0)
	{
		if (n & 1)
			result = numeric_mul_opt_error(result, base, NULL);
		n >>= 1;
		if (n > 0)
			base = numeric_mul_opt_error(base, base, NULL);
	}
	if (e < 0)
	{
		char		buf[32];

		snprintf(buf, sizeof(buf), "1e%d", e);
		result = numeric_mul_opt_error(result,
									   DatumGetNumeric(DirectFunctionCall3(numeric_in,
																		   CStringGetDatum(buf),
																		   ObjectIdGetDatum(InvalidOid),
																		   Int32GetDatum(-1))),
									   NULL);
	}
	return result;
}

/* ---------- the ticket of one call ---------- */

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

/*
 * Resolve and check the clamping bounds of dp_sum/dp_avg; return the log2
 * of the spread the noise must hide and of the largest magnitude.
 */
static void
resolve_bounds(DpRelease *r, Aggref *aggref, ParamListInfo params,
			   double *log2_span, double *log2_max)
{
	const DpCallInfo *info = &r->call;
	const char *fname = dp_kind_name(info->kind);
	Datum		ld = resolve_arg(aggref, info, info->lower_arg, params);
	Datum		ud = resolve_arg(aggref, info, info->upper_arg, params);

	switch (info->vclass)
	{
		case DP_VALUE_INT:
			{
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
				break;
			}
		case DP_VALUE_FLOAT:
			{
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
				break;
			}
		case DP_VALUE_NUMERIC:
			{
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
				break;
			}
		case DP_VALUE_NONE:
			elog(ERROR, "dp_agg: bounds on a count");
	}
}

DpRelease *
dp_release_create(Aggref *aggref, Aggref *args_from, const DpCallInfo *info,
				  bool finalize, const DpSampling *sampling, ParamListInfo params)
{
	DpRelease  *r = palloc0(sizeof(DpRelease));
	const char *fname = dp_kind_name(info->kind);
	double		epsilon,
				delta;

	r->call = *info;
	r->aggref = aggref;
	r->finalize = finalize;
	r->sampling = *sampling;
	dp_sampling_resolve(&r->sampling, params);
	sampling = &r->sampling;
	aggref = args_from;

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

	if (info->delta_arg >= 0)
		delta = DatumGetFloat8(resolve_arg(aggref, info, info->delta_arg, params));
	else
		delta = dp_guc_delta;
	if (!(delta >= 0 && delta < 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("delta of %s must be at least 0 and less than 1", fname),
				 errdetail("delta is %g.", delta),
				 errhint("delta = 0 selects the Laplace mechanism (pure epsilon-DP); a small "
						 "positive delta, well below 1/n, the Gaussian mechanism.")));
	r->epsilon = epsilon;
	r->delta = delta;

	if (info->kind == DP_COUNT_STAR || info->kind == DP_COUNT)
	{
		r->row_grid_exp = 0;
		plan_count_noise(&r->count, fname, epsilon, delta, sampling);
	}
	else
	{
		double		log2_span = 0,
					log2_max = 0;
		double		sum_epsilon = info->kind == DP_SUM ? epsilon : epsilon / 2;
		double		sum_delta = info->kind == DP_SUM ? delta : delta / 2;
		int			k;
		uint64		sens;

		resolve_bounds(r, aggref, params, &log2_span, &log2_max);
		k = choose_row_grid(log2_span, log2_max,
							noise_multiplier(sum_epsilon, sum_delta, &r->sampling),
							(info->vclass == DP_VALUE_INT && delta == 0) ? 0 : -1100);
		r->row_grid_exp = k;
		switch (info->vclass)
		{
			case DP_VALUE_INT:
				r->lo_units = dp_round_int(r->lower_int, r);
				r->hi_units = dp_round_int(r->upper_int, r);
				break;
			case DP_VALUE_FLOAT:
				r->row_mult = (k > -1000 && k < 1000) ? ldexp(1.0, -k) : 0;
				r->lo_units = dp_round_float(r->lower_float, r);
				r->hi_units = dp_round_float(r->upper_float, r);
				break;
			default:
				r->row_mult_num = dp_numeric_pow2(-k);
				r->lo_units = dp_round_numeric(r->lower_num, r);
				r->hi_units = dp_round_numeric(r->upper_num, r);
				break;
		}
		if (r->lo_units < -(INT64CONST(1) << 61) || r->hi_units > (INT64CONST(1) << 61))
			elog(ERROR, "dp_agg: grid exponent %d leaves bounds too large", k);

		if (info->kind == DP_SUM)
		{
			sens = (uint64) Max(-r->lo_units, r->hi_units);	/* lo <= hi */
			plan_noise(&r->sum, fname, epsilon, delta, sens, k, sampling);
		}
		else
		{
			/* centred values 2 r(x) - (r(l) + r(u)) in half units */
			plan_count_noise(&r->count, fname, epsilon / 2, delta / 2, sampling);
			plan_noise(&r->sum, fname, epsilon / 2, delta / 2,
					   (uint64) (r->hi_units - r->lo_units), k - 1, sampling);
		}
	}

	{
		int64		fp[5] = {info->kind, info->vclass, r->row_grid_exp, r->lo_units, r->hi_units};

		r->fingerprint = hash_bytes_extended((const unsigned char *) fp, sizeof(fp), 0x64706167);
	}
	return r;
}

/* ---------- the registry the support functions look tickets up in ---------- */

typedef struct DpExecution
{
	EState	   *estate;
	List	   *releases;
	struct DpExecution *next;
	MemoryContextCallback callback;
} DpExecution;

static DpExecution *executions = NULL;

static void
unregister_execution(void *arg)
{
	DpExecution **p;

	for (p = &executions; *p != NULL; p = &(*p)->next)
	{
		if (*p == arg)
		{
			*p = (*p)->next;
			return;
		}
	}
}

/*
 * Register the tickets of one execution; they vanish with its executor
 * state (normal end or error).
 */
void
dp_register_releases(EState *estate, List *releases)
{
	DpExecution *ex = MemoryContextAllocZero(estate->es_query_cxt, sizeof(DpExecution));

	ex->estate = estate;
	ex->releases = releases;
	ex->callback.func = unregister_execution;
	ex->callback.arg = ex;
	MemoryContextRegisterResetCallback(estate->es_query_cxt, &ex->callback);
	ex->next = executions;
	executions = ex;
}

/*
 * The ticket of the DP aggregate call that fcinfo belongs to, cached in
 * fn_extra.  ERROR (fail closed) if there is none.
 */
const DpRelease *
dp_release_for_call(FunctionCallInfo fcinfo, const char *fname)
{
	int			ctx;
	AggState   *aggstate;
	Aggref	   *aggref;

	if (fcinfo->flinfo->fn_extra != NULL)
		return (const DpRelease *) fcinfo->flinfo->fn_extra;

	ctx = AggCheckCallContext(fcinfo, NULL);
	if (ctx == AGG_CONTEXT_WINDOW)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s cannot be used as a window function", fname),
				 errdetail("A window function would release one noisy value per row.")));
	if (ctx != AGG_CONTEXT_AGGREGATE || !IsA(fcinfo->context, AggState))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s called in non-aggregate context", fname)));

	aggstate = (AggState *) fcinfo->context;
	aggref = AggGetAggref(fcinfo);
	for (DpExecution *ex = executions; ex != NULL; ex = ex->next)
	{
		ListCell   *lc;

		if (ex->estate != aggstate->ss.ps.state)
			continue;
		foreach(lc, ex->releases)
		{
			DpRelease  *r = lfirst(lc);

			if (r->aggref == aggref)
			{
				fcinfo->flinfo->fn_extra = r;
				return r;
			}
		}
	}

	if (!dp_preloaded)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("dp_agg must be loaded via shared_preload_libraries"),
				 errdetail("Without it no release can be priced and charged, so none is made."),
				 errhint("Add dp_agg to shared_preload_libraries in postgresql.conf and restart the server.")));
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s support functions may only run inside the DP aggregates of dp_agg", fname),
			 errdetail("This call was not priced before the statement started.")));
	return NULL;				/* keep compiler quiet */
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

/* ---------- Renyi DP of a release ---------- */

/* relative margin for the rounding of each Renyi DP term (never understated) */
#define RDP_MARGIN (1.0 + 1.0 / 1099511627776.0)	/* 1 + 2^-40 */

/*
 * The Renyi DP curve of one noisy release (on the grid of dp_rdp_orders),
 * before the margin:
 *  - discrete Gaussian: alpha D^2 / (2 sigma^2), as for the continuous one
 *    (Canonne, Kamath & Steinke 2020, Theorem 4: the same concentrated DP);
 *    under Poisson subsampling the Renyi DP of the sampled Gaussian
 *    (Mironov, Talwar & Zhang 2019; see gaussian_sigma_units on lattices);
 *  - discrete Laplace: its exact Renyi DP (dp_rdp_discrete_laplace, the
 *    discrete form of Mironov 2017, Proposition 6), at most epsilon;
 *    amplified by subsampling: an epsilon-DP release is min(epsilon,
 *    alpha epsilon^2 / 2)-RDP at every order (Bun & Steinke 2016).
 * The noise actually used is at least what is assumed here (sigma^2 is
 * rounded up, the Laplace scale is the sampler's), and add_noise_rdp rounds
 * each term up by a relative 2^-40.
 */
static void
noise_rdp_curve(const DpNoiseSpec *ns, const DpSampling *sampling, double *out)
{
	int			n;
	const double *orders = dp_rdp_orders(&n);

	for (int i = 0; i < n; i++)
	{
		double		a = orders[i];

		switch (ns->mechanism)
		{
			case DP_MECH_NONE:
				out[i] = 0;
				break;
			case DP_MECH_LAPLACE:
				if (sampling->amplified)
					out[i] = Min(ns->epsilon, a * ns->epsilon * ns->epsilon / 2);
				else
					out[i] = Min(dp_rdp_discrete_laplace((double) ns->laplace.s / (double) ns->laplace.t,
														 (double) ns->sens_units, a),
								 ns->epsilon);
				break;
			case DP_MECH_GAUSSIAN:
				{
					double		nm = ns->sigma_units / (double) ns->sens_units;

					out[i] = sampling->amplified
						? dp_rdp_sampled_gaussian_fast(sampling->rate, nm, a)
						: dp_rdp_gaussian(nm, a);
					break;
				}
		}
	}
}

/*
 * The last few curves computed: statements repeat their releases, and a
 * curve costs hundreds of exp() and log() (or, sampled, much more).
 */
typedef struct CurveCacheEntry
{
	DpMechanism mechanism;
	bool		amplified;
	double		rate;
	double		epsilon;
	uint64		sens_units;
	uint64		t,
				s;				/* Laplace */
	double		sigma_units;	/* Gaussian */
	double		curve[DP_RDP_ORDERS];
} CurveCacheEntry;

#define CURVE_CACHE_SIZE 8
static CurveCacheEntry curve_cache[CURVE_CACHE_SIZE];
static int	curve_cache_used = 0;
static int	curve_cache_next = 0;

static const double *
noise_rdp_curve_cached(const DpNoiseSpec *ns, const DpSampling *sampling)
{
	CurveCacheEntry key;
	CurveCacheEntry *e;

	memset(&key, 0, offsetof(CurveCacheEntry, curve));
	key.mechanism = ns->mechanism;
	key.amplified = sampling->amplified;
	key.rate = sampling->amplified ? sampling->rate : 1;
	key.epsilon = ns->epsilon;
	key.sens_units = ns->sens_units;
	if (ns->mechanism == DP_MECH_LAPLACE)
	{
		key.t = ns->laplace.t;
		key.s = ns->laplace.s;
	}
	else if (ns->mechanism == DP_MECH_GAUSSIAN)
		key.sigma_units = ns->sigma_units;

	for (int i = 0; i < curve_cache_used; i++)
	{
		if (memcmp(&curve_cache[i], &key, offsetof(CurveCacheEntry, curve)) == 0)
			return curve_cache[i].curve;
	}
	/* computed before the entry is filled, so that an error leaves no stale entry */
	noise_rdp_curve(ns, sampling, key.curve);
	e = &curve_cache[curve_cache_next];
	memcpy(e, &key, sizeof(key));
	curve_cache_next = (curve_cache_next + 1) % CURVE_CACHE_SIZE;
	if (curve_cache_used < CURVE_CACHE_SIZE)
		curve_cache_used++;
	return e->curve;
}

/* add the curve of one noisy release to curve[], each term rounded up */
static void
add_noise_rdp(const DpNoiseSpec *ns, const DpSampling *sampling, double *curve)
{
	const double *c = noise_rdp_curve_cached(ns, sampling);

	for (int i = 0; i < DP_RDP_ORDERS; i++)
	{
		if (c[i] > 0)
			curve[i] = dp_add_up(curve[i], dp_mul_up(c[i], RDP_MARGIN));
	}
}

/* the Renyi DP curve of a priced call: one or two noisy releases */
void
dp_release_add_rdp(const DpRelease *r, double *curve)
{
	if (r->call.kind != DP_SUM)
		add_noise_rdp(&r->count, &r->sampling, curve);
	if (r->call.kind == DP_SUM || r->call.kind == DP_AVG)
		add_noise_rdp(&r->sum, &r->sampling, curve);
}

/* ---------- price and description ---------- */

/*
 * The releases a statement pays for: the finalized calls, one per distinct
 * call of each Agg node (the executor evaluates equal calls once), and
 * their total price, rounded up.
 */
List *
dp_priced_releases(List *releases, double *epsilon, double *delta)
{
	List	   *priced = NIL;
	ListCell   *lc;

	*epsilon = 0;
	*delta = 0;
	foreach(lc, releases)
	{
		DpRelease  *r = lfirst(lc);
		ListCell   *lc2;
		bool		dup = false;

		if (!r->finalize)
			continue;
		foreach(lc2, priced)
		{
			DpRelease  *p = lfirst(lc2);

			if (p->agg_node == r->agg_node && equal(p->aggref, r->aggref))
			{
				dup = true;
				break;
			}
		}
		if (dup)
			continue;
		priced = lappend(priced, r);
		*epsilon = dp_add_up(*epsilon, r->epsilon);
		*delta = dp_add_up(*delta, r->delta);
	}
	return priced;
}

static void
json_number(StringInfo buf, const char *key, double v)
{
	if (isfinite(v))
		appendStringInfo(buf, "\"%s\": %.17g", key, v);
	else
		appendStringInfo(buf, "\"%s\": null", key);
}

/* is the release of this noise rounded to an integer (bigint results)? */
static bool
integer_result(const DpRelease *r, const DpNoiseSpec *ns)
{
	if (ns == &r->count)
		return r->call.kind != DP_AVG;
	return r->call.kind == DP_SUM && r->call.vclass == DP_VALUE_INT;
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

static void
describe_noise(StringInfo buf, const char *part, const DpRelease *r, const DpNoiseSpec *ns)
{
	appendStringInfo(buf, "{\"release\": \"%s\", \"mechanism\": \"%s\", ",
					 part, dp_mechanism_name(ns->mechanism));
	json_number(buf, "epsilon", ns->epsilon);
	appendStringInfoString(buf, ", ");
	json_number(buf, "delta", ns->delta);
	appendStringInfoString(buf, ", ");
	json_number(buf, "sensitivity", ns->sensitivity);
	appendStringInfoString(buf, ", ");
	json_number(buf, "noise_scale", ns->noise_scale);
	appendStringInfoString(buf, ", ");
	json_number(buf, "grid", ldexp(1.0, ns->grid_exp));
	appendStringInfoString(buf, ", ");
	json_number(buf, "ci95", dp_release_halfwidth(r, ns, 0.95));
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
 * A JSON object describing one priced call, for the ledger: the call's
 * price, and for its main release (the count, or the (centred) sum) the
 * mechanism, sensitivity and noise scale in the units of the released value;
 * "releases" lists every noisy release of the call (dp_avg has two).
 */
void
dp_release_describe(StringInfo buf, const DpRelease *r)
{
	const DpNoiseSpec *main = (r->call.kind == DP_COUNT || r->call.kind == DP_COUNT_STAR)
		? &r->count : &r->sum;

	appendStringInfo(buf, "{\"aggregate\": \"%s\", ", dp_kind_name(r->call.kind));
	if (OidIsValid(r->call.valtype))
	{
		appendStringInfoString(buf, "\"type\": ");
		escape_json(buf, format_type_be(r->call.valtype));
		appendStringInfoString(buf, ", ");
	}
	appendStringInfo(buf, "\"mechanism\": \"%s\", ", dp_mechanism_name(main->mechanism));
	json_number(buf, "epsilon", r->epsilon);
	appendStringInfoString(buf, ", ");
	json_number(buf, "delta", r->delta);
	appendStringInfoString(buf, ", ");
	json_number(buf, "sensitivity", main->sensitivity);
	appendStringInfoString(buf, ", ");
	json_number(buf, "noise_scale", main->noise_scale);
	appendStringInfoString(buf, ", ");
	json_number(buf, "ci95", dp_release_halfwidth(r, main, 0.95));
	if (r->call.kind == DP_SUM || r->call.kind == DP_AVG)
	{
		appendStringInfoString(buf, ", \"lower\": ");
		if (r->call.vclass == DP_VALUE_INT)
			appendStringInfo(buf, INT64_FORMAT ", \"upper\": " INT64_FORMAT,
							 r->lower_int, r->upper_int);
		else if (r->call.vclass == DP_VALUE_FLOAT)
			appendStringInfo(buf, "%.17g, \"upper\": %.17g", r->lower_float, r->upper_float);
		else
			appendStringInfo(buf, "%s, \"upper\": %s",
							 numeric_normalize(r->lower_num), numeric_normalize(r->upper_num));
	}
	appendStringInfoString(buf, ", \"sampling\": ");
	dp_sampling_describe(buf, r, main);
	appendStringInfoString(buf, ", \"releases\": [");
	switch (r->call.kind)
	{
		case DP_COUNT_STAR:
		case DP_COUNT:
			describe_noise(buf, "count", r, &r->count);
			break;
		case DP_SUM:
			describe_noise(buf, "sum", r, &r->sum);
			break;
		case DP_AVG:
			describe_noise(buf, "count", r, &r->count);
			appendStringInfoString(buf, ", ");
			describe_noise(buf, "centred_sum", r, &r->sum);
			break;
	}
	appendStringInfoString(buf, "]}");
}
