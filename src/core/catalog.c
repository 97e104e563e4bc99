/*-------------------------------------------------------------------------
 *
 * catalog.c
 *	  Which aggregates are dp_agg's, and what each one is: its kind, value
 *	  class and argument layout, read from the catalog of this database and
 *	  cached until pg_proc changes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_depend.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_language.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "parser/parse_func.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "catalog.h"

typedef struct DpNamedFunction
{
	char		name[NAMEDATALEN];
	Oid			oid;
} DpNamedFunction;

static HTAB *dp_calls = NULL;	/* aggfnoid -> DpCallInfo */
static Oid	unit_keep_oid = InvalidOid;	/* dp_agg_internal.unit_keep(integer) */
static Oid	unit_pick_oid = InvalidOid;	/* dp_agg_internal.unit_pick(anyelement, bigint) */
static Oid	unit_priority_oid = InvalidOid;	/* dp_agg_internal.unit_priority(VARIADIC "any") */
static Oid	row_call_oid = InvalidOid;	/* dp_agg_internal.row_call(internal), row_trap.c */
static Oid	row_eval_oid = InvalidOid;	/* dp_agg_internal.row_eval(internal), row_trap.c */
static HTAB *row_functions = NULL;	/* dp_agg_internal.row_*: name -> oid, row_trap.c */
static Oid	relation_statistic_oid[2];	/* dp_agg_internal.relation_statistic, its volatile twin */
static Oid	statistics_visible_oid = InvalidOid;	/* dp_agg_internal.statistics_visible */
/* error bars (error_bars.c, estimate.c); InvalidOid before 0.4 */
static Oid	error_bar_oids[DP_BAR_SCALE + 1];
static Oid	estimate_type_oid = InvalidOid;	/* dp_agg.estimate */
static Oid	estimate_part_oid = InvalidOid;	/* dp_agg_internal.estimate_part(estimate, int, anyelement) */
static Oid	estimate_scale_oid = InvalidOid;	/* dp_agg_internal.estimate_scale(estimate) */
static Oid	unit_sampled_oid = InvalidOid;	/* dp_agg_internal.unit_sampled(anyelement, real, integer) */
static Oid	unit_scan_oid = InvalidOid;	/* dp_agg_internal.unit_scan(internal), a TABLESAMPLE method */
static Oid	domain_index_oid = InvalidOid;	/* dp_agg_internal.domain_index(bytea, VARIADIC "any") */
static Oid	domain_key_oid = InvalidOid;	/* dp_agg_internal.domain_key(bytea, int, int, anyelement) */
static Oid	top_k_rank_oid = InvalidOid;	/* dp_agg_internal.top_k_rank(bigint) */
/* the aggregates of one kind: dp_select, dp_public, dp_top_k */
static Oid	select_oid = InvalidOid;
static Oid	public_oid = InvalidOid;
static Oid	top_k_oid = InvalidOid;
static bool dp_calls_valid = false;

static Oid	get_func_signature_first_arg(Oid funcid);
static MemoryContext dp_cache_cxt = NULL;

static void
invalidate_calls(Datum arg, int cacheid, uint32 hashvalue)
{
	dp_calls_valid = false;
}

void
dp_catalog_init(void)
{
	CacheRegisterSyscacheCallback(PROCOID, invalidate_calls, (Datum) 0);
}

/* the C symbol of the final (or transition) function of an aggregate */
static const char *
support_symbol(Oid aggfnoid, bool final)
{
	HeapTuple	tup;
	Datum		src;
	bool		isnull;
	char	   *result;
	Oid			fn;

	tup = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggfnoid));
	if (!HeapTupleIsValid(tup))
		return NULL;
	fn = final ? ((Form_pg_aggregate) GETSTRUCT(tup))->aggfinalfn
		: ((Form_pg_aggregate) GETSTRUCT(tup))->aggtransfn;
	ReleaseSysCache(tup);
	if (!OidIsValid(fn))
		return NULL;
	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fn));
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
	const char *sym = support_symbol(aggfnoid, true);
	const char *transsym = support_symbol(aggfnoid, false);
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
	info->k_arg = -1;

	if (sym == NULL)
		elog(ERROR, "dp_agg: aggregate %u has no C final function", aggfnoid);
	info->unit = DP_UNIT_NONE;
	if (strncmp(sym, "dp_unit_bound_", 14) == 0)
	{
		/* level 1: the arguments of the DP aggregate it bounds */
		info->unit = DP_UNIT_BOUND;
		sym = psprintf("dp_%s", sym + 14);
		/*
		 * the fused level 1 of k = 1 (unit_pick.c): the priority is the last
		 * argument, after those of the DP aggregate
		 */
		if (transsym != NULL && (strcmp(transsym, "dp_unit_pick_trans") == 0 ||
								 strcmp(transsym, "dp_unit_pick_tree_trans") == 0))
		{
			if (info->nargs < 1 || argtypes[info->nargs - 1] != INT8OID)
				elog(ERROR, "dp_agg: aggregate %u has unexpected argument types", aggfnoid);
			info->unit = DP_UNIT_PICK;
			info->nargs--;
		}
	}
	else if (info->nargs >= 1 && argtypes[0] == BYTEAOID)
	{
		/* level 3: a bounded contribution in place of the value */
		info->unit = DP_UNIT_RELEASE;
	}
	info->p_arg = -1;
	info->p_array = false;
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
	else if (strcmp(sym, "dp_select_final") == 0)
	{
		/* dp_agg_internal.dp_select(internal, integer): no SQL expression has type internal */
		info->kind = DP_SELECT;
		info->vclass = DP_VALUE_NONE;
		info->valtype = InvalidOid;
		info->k_arg = 1;
		if (info->nargs != 2 || argtypes[0] != INTERNALOID || argtypes[1] != INT4OID)
			elog(ERROR, "dp_agg: aggregate %u has unexpected argument types", aggfnoid);
	}
	else if (strncmp(sym, "dp_bounds_", 10) == 0)
	{
		/* dp_bounds(value [, epsilon]): all of epsilon on the bounds */
		info->kind = DP_BOUNDS;
		info->valtype = argtypes[0];
		info->vclass = value_class(info->valtype);
		if (info->nargs >= 2)
			info->epsilon_arg = 1;
		if (info->vclass == DP_VALUE_NONE || info->nargs > 2)
			elog(ERROR, "dp_agg: aggregate %u has unexpected argument types", aggfnoid);
	}
	else if (strcmp(sym, "dp_public_final") == 0)
	{
		/*
		 * dp_agg_internal.dp_public(internal, boolean, bigint): whether a group holds
		 * a key of its public domain; no SQL expression has type internal
		 */
		info->kind = DP_PUBLIC;
		info->vclass = DP_VALUE_NONE;
		info->valtype = InvalidOid;
		if (info->nargs != 3 || argtypes[0] != INTERNALOID || argtypes[1] != BOOLOID ||
			argtypes[2] != INT8OID)
			elog(ERROR, "dp_agg: aggregate %u has unexpected argument types", aggfnoid);
	}
	else if (strcmp(sym, "dp_top_k_final") == 0)
	{
		/*
		 * dp_agg_internal.dp_top_k(internal, integer, float8): the count of a group,
		 * for the top-k mechanism (top_k.c); k, then epsilon (NULL: the
		 * selection's default)
		 */
		info->kind = DP_TOP_K;
		info->vclass = DP_VALUE_NONE;
		info->valtype = InvalidOid;
		info->k_arg = 1;
		info->epsilon_arg = 2;
		if (info->nargs != 3 || argtypes[0] != INTERNALOID || argtypes[1] != INT4OID ||
			argtypes[2] != FLOAT8OID)
			elog(ERROR, "dp_agg: aggregate %u has unexpected argument types", aggfnoid);
	}
	else
	{
		/*
		 * The aggregates of a value and its clamping bounds:
		 *   dp_sum, dp_avg, dp_var, dp_stddev (value, lower, upper [, epsilon [, delta]])
		 *   dp_percentile (value, p, lower, upper [, epsilon])
		 *   dp_median (value, lower, upper [, epsilon])
		 * or, with the bounds estimated (auto_bounds.c), the value (and p)
		 * only.  At level 3 of a privacy unit rewrite the value is a
		 * bounded contribution (bytea): the value's type is the bounds'.
		 */
		int			first_bound = 1;
		int			max_args = 5;

		if (strncmp(sym, "dp_sum_", 7) == 0)
			info->kind = DP_SUM;
		else if (strncmp(sym, "dp_avg_", 7) == 0)
			info->kind = DP_AVG;
		else if (strncmp(sym, "dp_var_", 7) == 0)
			info->kind = DP_VAR;
		else if (strncmp(sym, "dp_stddev_", 10) == 0)
			info->kind = DP_STDDEV;
		else if (strncmp(sym, "dp_percentile_", 14) == 0)
		{
			info->kind = DP_PERCENTILE;
			info->p_arg = 1;
			first_bound = 2;
		}
		else if (strncmp(sym, "dp_median_", 10) == 0)
		{
			info->kind = DP_MEDIAN;
			max_args = 4;
		}
		else
			elog(ERROR, "dp_agg: aggregate %u has unknown final function %s", aggfnoid, sym);
		if (DP_KIND_QUANTILE(info->kind))
			max_args = first_bound + 3;
		if (info->nargs < first_bound || info->nargs > max_args ||
			info->nargs == first_bound + 1)
			elog(ERROR, "dp_agg: aggregate %u has unexpected arguments", aggfnoid);
		if (info->p_arg >= 0)
		{
			if (argtypes[info->p_arg] == FLOAT8ARRAYOID)
				info->p_array = true;
			else if (argtypes[info->p_arg] != FLOAT8OID)
				elog(ERROR, "dp_agg: aggregate %u has unexpected argument types", aggfnoid);
		}
		if (info->nargs > first_bound)
		{
			info->lower_arg = first_bound;
			info->upper_arg = first_bound + 1;
			if (info->nargs >= first_bound + 3)
				info->epsilon_arg = first_bound + 2;
			if (info->nargs >= first_bound + 4)
				info->delta_arg = first_bound + 3;
			/* the value's type; at level 3 that of the bounds */
			info->valtype = info->unit == DP_UNIT_RELEASE ? argtypes[info->lower_arg] : argtypes[0];
			if (argtypes[info->lower_arg] != info->valtype ||
				argtypes[info->upper_arg] != info->valtype)
				elog(ERROR, "dp_agg: aggregate %u has unexpected argument types", aggfnoid);
		}
		else
		{
			/* bounds estimated: no internal aggregates of privacy units */
			if (info->unit != DP_UNIT_NONE)
				elog(ERROR, "dp_agg: aggregate %u has unexpected argument types", aggfnoid);
			info->valtype = argtypes[0];
		}
		info->vclass = value_class(info->valtype);
		if (info->vclass == DP_VALUE_NONE)
			elog(ERROR, "dp_agg: aggregate %u has unexpected argument types", aggfnoid);
	}

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

	unit_keep_oid = InvalidOid;
	unit_pick_oid = InvalidOid;
	unit_priority_oid = InvalidOid;
	row_call_oid = InvalidOid;
	row_eval_oid = InvalidOid;
	if (row_functions)
		hash_destroy(row_functions);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = NAMEDATALEN;
	ctl.entrysize = sizeof(DpNamedFunction);
	ctl.hcxt = dp_cache_cxt;
	row_functions = hash_create("dp_agg functions on rows", 128, &ctl,
								HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	relation_statistic_oid[0] = relation_statistic_oid[1] = InvalidOid;
	statistics_visible_oid = InvalidOid;
	memset(error_bar_oids, 0, sizeof(error_bar_oids));
	estimate_part_oid = InvalidOid;
	estimate_scale_oid = InvalidOid;
	estimate_type_oid = InvalidOid;
	unit_sampled_oid = InvalidOid;
	unit_scan_oid = InvalidOid;
	domain_index_oid = InvalidOid;
	domain_key_oid = InvalidOid;
	top_k_rank_oid = InvalidOid;
	select_oid = public_oid = top_k_oid = InvalidOid;
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
			if (get_func_prokind(d->objid) == PROKIND_WINDOW &&
				strcmp(get_func_name(d->objid), "unit_keep") == 0)
				unit_keep_oid = d->objid;
			if (get_func_prokind(d->objid) == PROKIND_WINDOW &&
				strcmp(get_func_name(d->objid), "top_k_rank") == 0)
				top_k_rank_oid = d->objid;
			if (get_func_prokind(d->objid) == PROKIND_FUNCTION)
			{
				const char *name = get_func_name(d->objid);
				static const char *const bars[] = {NULL, "dp_interval_low", "dp_interval_high",
				"dp_lower_bound", "dp_upper_bound", "dp_noise_scale"};

				if (strcmp(name, "unit_priority") == 0)
					unit_priority_oid = d->objid;
				else if (strcmp(name, "estimate_part") == 0)
				{
					estimate_part_oid = d->objid;
					estimate_type_oid = get_func_signature_first_arg(d->objid);
				}
				else if (strcmp(name, "estimate_scale") == 0)
					estimate_scale_oid = d->objid;
				else if (strcmp(name, "relation_statistic") == 0)
					relation_statistic_oid[0] = d->objid;
				else if (strcmp(name, "relation_statistic_volatile") == 0)
					relation_statistic_oid[1] = d->objid;
				else if (strcmp(name, "statistics_visible") == 0)
					statistics_visible_oid = d->objid;
				else if (strcmp(name, "unit_sampled") == 0)
					unit_sampled_oid = d->objid;
				else if (strcmp(name, "unit_scan") == 0)
					unit_scan_oid = d->objid;
				else if (strcmp(name, "domain_index") == 0)
					domain_index_oid = d->objid;
				else if (strcmp(name, "domain_key") == 0)
					domain_key_oid = d->objid;
				else if (strcmp(name, "row_call") == 0)
					row_call_oid = d->objid;
				else if (strcmp(name, "row_eval") == 0)
					row_eval_oid = d->objid;
				if (strncmp(name, "row_", 4) == 0)
				{
					char		rowname[NAMEDATALEN] = {0};

					strlcpy(rowname, name, NAMEDATALEN);
					((DpNamedFunction *) hash_search(row_functions, rowname, HASH_ENTER, &found))->oid =
						d->objid;
				}
				for (int b = DP_BAR_LOW; b <= DP_BAR_SCALE; b++)
				{
					if (strcmp(name, bars[b]) == 0)
						error_bar_oids[b] = d->objid;
				}
			}
			if (get_func_prokind(d->objid) != PROKIND_AGGREGATE)
				continue;
			/* the keys of the fused path of privacy units release nothing */
			if (strcmp(get_func_name(d->objid), "unit_pick") == 0)
			{
				unit_pick_oid = d->objid;
				continue;
			}
			/* the partial states of Citus fragments release nothing (dist_worker.c) */
			if (strcmp(get_func_name(d->objid), "sum") == 0)
				continue;
			describe_aggregate(d->objid, &info);
			*(DpCallInfo *) hash_search(dp_calls, &d->objid, HASH_ENTER, &found) = info;
			if (info.kind == DP_SELECT)
				select_oid = d->objid;
			else if (info.kind == DP_PUBLIC)
				public_oid = d->objid;
			else if (info.kind == DP_TOP_K)
				top_k_oid = d->objid;
		}
		systable_endscan(scan);
		table_close(dep, AccessShareLock);
	}
	dp_calls_valid = true;
}

/* the type of a function's first argument */
static Oid
get_func_signature_first_arg(Oid funcid)
{
	Oid		   *argtypes;
	int			nargs;
	Oid			result;

	(void) get_func_signature(funcid, &argtypes, &nargs);
	result = nargs > 0 ? argtypes[0] : InvalidOid;
	pfree(argtypes);
	return result;
}

/* The DpCallInfo of a DP aggregate, NULL for any other function. */
const DpCallInfo *
dp_lookup_call(Oid aggfnoid)
{
	if (!dp_calls_valid)
		build_calls();
	return (const DpCallInfo *) hash_search(dp_calls, &aggfnoid, HASH_FIND, NULL);
}

/* The aggregate dp_agg_internal.dp_select, InvalidOid before version 0.3. */
Oid
dp_select_aggregate(void)
{
	if (!dp_calls_valid)
		build_calls();
	return select_oid;
}

/* dp_agg_internal.unit_keep, the window function of privacy units; InvalidOid before 0.3 */
Oid
dp_unit_keep_oid(void)
{
	if (!dp_calls_valid)
		build_calls();
	return unit_keep_oid;
}

/* dp_agg_internal.unit_pick, the keys of the fused path (unit_pick.c); InvalidOid before 0.3 */
Oid
dp_unit_pick_oid(void)
{
	if (!dp_calls_valid)
		build_calls();
	return unit_pick_oid;
}

/* dp_agg_internal.unit_priority (unit_pick.c); InvalidOid before 0.3 */
Oid
dp_unit_priority_oid(void)
{
	if (!dp_calls_valid)
		build_calls();
	return unit_priority_oid;
}

/* dp_agg_internal.row_call, the trap of a function call (row_trap.c); InvalidOid before 0.4 */
Oid
dp_row_call_oid(void)
{
	if (!dp_calls_valid)
		build_calls();
	return row_call_oid;
}

/* dp_agg_internal.row_eval, the trap of an expression (row_trap.c); InvalidOid before 0.4 */
Oid
dp_row_eval_oid(void)
{
	if (!dp_calls_valid)
		build_calls();
	return row_eval_oid;
}

/*
 * A function of the schema dp_agg whose name starts with row_ (the soft
 * arithmetic of row_trap.c, dp_agg_internal.row_int4pl); InvalidOid if there is none.
 */
Oid
dp_row_function_oid(const char *name)
{
	DpNamedFunction *e;

	if (!dp_calls_valid)
		build_calls();
	e = hash_search(row_functions, name, HASH_FIND, NULL);
	return e != NULL ? e->oid : InvalidOid;
}

/* Is the function a member of the extension dp_agg (a calculator, say)? */
bool
dp_extension_member(Oid funcid)
{
	Oid			extoid = get_extension_oid("dp_agg", true);

	return OidIsValid(extoid) && getExtensionOfObject(ProcedureRelationId, funcid) == extoid;
}

/*
 * The internal function (or aggregate) of the extension by name and
 * argument types; InvalidOid if there is none and missing_ok, else ERROR.
 * It is in DP_INTERNAL_SCHEMA, or in DP_SCHEMA while the database has a
 * version before 0.4, which has no DP_INTERNAL_SCHEMA.  Whichever schema
 * and function the names find must be members of the extension: a schema
 * of that name that someone created before the update to 0.4 (which then
 * fails) could otherwise hand a rewrite a function of its own.
 */
Oid
dp_internal_function(const char *name, int nargs, const Oid *argtypes, bool missing_ok)
{
	Oid			extoid = get_extension_oid("dp_agg", true);
	Oid			nsp = get_namespace_oid(DP_INTERNAL_SCHEMA, true);
	const char *schema = DP_SCHEMA;
	Oid			oid = InvalidOid;

	if (OidIsValid(extoid))
	{
		if (OidIsValid(nsp) && getExtensionOfObject(NamespaceRelationId, nsp) == extoid)
			schema = DP_INTERNAL_SCHEMA;
		oid = LookupFuncName(list_make2(makeString(pstrdup(schema)), makeString(pstrdup(name))),
							 nargs, argtypes, true);
		if (OidIsValid(oid) && getExtensionOfObject(ProcedureRelationId, oid) != extoid)
			oid = InvalidOid;
	}
	if (!OidIsValid(oid) && !missing_ok)
		elog(ERROR, "dp_agg: internal function %s.%s is missing", schema, name);
	return oid;
}

/*
 * dp_agg_internal.relation_statistic (volatile: dp_agg_internal.relation_statistic_volatile),
 * which checks a relation before calling its statistics function
 * (protect_stats.c); InvalidOid before 0.4
 */
Oid
dp_relation_statistic_oid(bool is_volatile)
{
	if (!dp_calls_valid)
		build_calls();
	return relation_statistic_oid[is_volatile ? 1 : 0];
}

/* dp_agg_internal.statistics_visible (protect_stats.c); InvalidOid before 0.4 */
Oid
dp_statistics_visible_oid(void)
{
	if (!dp_calls_valid)
		build_calls();
	return statistics_visible_oid;
}

/* which error-bar function funcid is, DP_BAR_NONE for any other */
DpErrorBar
dp_error_bar_function(Oid funcid)
{
	if (!dp_calls_valid)
		build_calls();
	for (int b = DP_BAR_LOW; b <= DP_BAR_SCALE; b++)
	{
		if (OidIsValid(error_bar_oids[b]) && error_bar_oids[b] == funcid)
			return (DpErrorBar) b;
	}
	return DP_BAR_NONE;
}

/* the type dp_agg.estimate, and the functions reading it; InvalidOid before 0.4 */
Oid
dp_estimate_type(void)
{
	if (!dp_calls_valid)
		build_calls();
	return estimate_type_oid;
}

Oid
dp_estimate_part_oid(void)
{
	if (!dp_calls_valid)
		build_calls();
	return estimate_part_oid;
}

Oid
dp_estimate_scale_oid(void)
{
	if (!dp_calls_valid)
		build_calls();
	return estimate_scale_oid;
}

/* dp_agg_internal.unit_sampled (unit_sample.c); InvalidOid before 0.4 */
Oid
dp_unit_sampled_oid(void)
{
	if (!dp_calls_valid)
		build_calls();
	return unit_sampled_oid;
}

/*
 * dp_agg_internal.unit_scan, the TABLESAMPLE method that reads only the
 * rows of a sample of units (unit_sample.c); InvalidOid before it exists
 */
Oid
dp_unit_scan_oid(void)
{
	if (!dp_calls_valid)
		build_calls();
	return unit_scan_oid;
}

/* The aggregate dp_agg_internal.dp_public, InvalidOid before version 0.4. */
Oid
dp_public_aggregate(void)
{
	if (!dp_calls_valid)
		build_calls();
	return public_oid;
}

/* The aggregate dp_agg_internal.dp_top_k, InvalidOid before version 0.4. */
Oid
dp_top_k_aggregate(void)
{
	if (!dp_calls_valid)
		build_calls();
	return top_k_oid;
}

/* dp_agg_internal.top_k_rank, the window function of top-k (top_k.c); InvalidOid before 0.4 */
Oid
dp_top_k_rank_oid(void)
{
	if (!dp_calls_valid)
		build_calls();
	return top_k_rank_oid;
}

/* dp_agg_internal.domain_index (keyset.c); InvalidOid before 0.4 */
Oid
dp_domain_index_oid(void)
{
	if (!dp_calls_valid)
		build_calls();
	return domain_index_oid;
}

/* dp_agg_internal.domain_key (keyset.c); InvalidOid before 0.4 */
Oid
dp_domain_key_oid(void)
{
	if (!dp_calls_valid)
		build_calls();
	return domain_key_oid;
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
		case DP_SELECT:
			return "dp_select";
		case DP_VAR:
			return "dp_var";
		case DP_STDDEV:
			return "dp_stddev";
		case DP_PERCENTILE:
			return "dp_percentile";
		case DP_MEDIAN:
			return "dp_median";
		case DP_BOUNDS:
			return "dp_bounds";
		case DP_PUBLIC:
			return "dp_public";
		case DP_TOP_K:
			return "dp_top_k";
	}
	return "?";
}

/* the name of argument argno of a DP aggregate call, for messages */
const char *
dp_arg_name(const DpCallInfo *info, int argno)
{
	if (argno == info->epsilon_arg)
		return "epsilon";
	if (argno == info->k_arg && info->kind == DP_TOP_K)
		return "k";
	if (argno == info->delta_arg)
		return "delta";
	if (argno == info->lower_arg)
		return "lower bound";
	if (argno == info->upper_arg)
		return "upper bound";
	if (argno == info->p_arg)
		return "percentile";
	return "argument";
}
