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
#include "catalog/pg_aggregate.h"
#include "catalog/pg_depend.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
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
static Oid	unit_keep_oid = InvalidOid;	/* dp_agg.unit_keep(integer) */
static Oid	unit_pick_oid = InvalidOid;	/* dp_agg.unit_pick(anyelement, bigint) */
static Oid	unit_priority_oid = InvalidOid;	/* dp_agg.unit_priority(VARIADIC "any") */
static Oid	row_call_oid = InvalidOid;	/* dp_agg.row_call(internal), row_trap.c */
static Oid	row_eval_oid = InvalidOid;	/* dp_agg.row_eval(internal), row_trap.c */
static HTAB *row_functions = NULL;	/* dp_agg.row_*: name -> oid, row_trap.c */
static bool dp_calls_valid = false;
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
		if (transsym != NULL && strcmp(transsym, "dp_unit_pick_trans") == 0)
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
		/* the value's type; at level 3 that of the bounds */
		info->valtype = info->unit == DP_UNIT_RELEASE ? argtypes[1] : argtypes[0];
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
	else if (strcmp(sym, "dp_select_final") == 0)
	{
		/* dp_agg.dp_select(internal, integer): no SQL expression has type internal */
		info->kind = DP_SELECT;
		info->vclass = DP_VALUE_NONE;
		info->valtype = InvalidOid;
		info->k_arg = 1;
		if (info->nargs != 2 || argtypes[0] != INTERNALOID || argtypes[1] != INT4OID)
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
			if (get_func_prokind(d->objid) == PROKIND_FUNCTION &&
				strcmp(get_func_name(d->objid), "unit_priority") == 0)
				unit_priority_oid = d->objid;
			if (get_func_prokind(d->objid) == PROKIND_FUNCTION &&
				strcmp(get_func_name(d->objid), "row_call") == 0)
				row_call_oid = d->objid;
			if (get_func_prokind(d->objid) == PROKIND_FUNCTION &&
				strcmp(get_func_name(d->objid), "row_eval") == 0)
				row_eval_oid = d->objid;
			if (get_func_prokind(d->objid) == PROKIND_FUNCTION &&
				strncmp(get_func_name(d->objid), "row_", 4) == 0)
			{
				char		name[NAMEDATALEN] = {0};

				strlcpy(name, get_func_name(d->objid), NAMEDATALEN);
				((DpNamedFunction *) hash_search(row_functions, name, HASH_ENTER, &found))->oid =
					d->objid;
			}
			if (get_func_prokind(d->objid) != PROKIND_AGGREGATE)
				continue;
			/* the keys of the fused path of privacy units release nothing */
			if (strcmp(get_func_name(d->objid), "unit_pick") == 0)
			{
				unit_pick_oid = d->objid;
				continue;
			}
			/* the partial states of Citus fragments release nothing (dist_exec.c) */
			if (strcmp(get_func_name(d->objid), "sum") == 0)
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

/* The aggregate dp_agg.dp_select, InvalidOid before version 0.3. */
Oid
dp_select_aggregate(void)
{
	HASH_SEQ_STATUS seq;
	DpCallInfo *info;
	Oid			result = InvalidOid;

	if (!dp_calls_valid)
		build_calls();
	hash_seq_init(&seq, dp_calls);
	while ((info = hash_seq_search(&seq)) != NULL)
	{
		if (info->kind == DP_SELECT)
			result = info->aggfnoid;
	}
	return result;
}

/* dp_agg.unit_keep, the window function of privacy units; InvalidOid before 0.3 */
Oid
dp_unit_keep_oid(void)
{
	if (!dp_calls_valid)
		build_calls();
	return unit_keep_oid;
}

/* dp_agg.unit_pick, the keys of the fused path (unit_pick.c); InvalidOid before 0.3 */
Oid
dp_unit_pick_oid(void)
{
	if (!dp_calls_valid)
		build_calls();
	return unit_pick_oid;
}

/* dp_agg.unit_priority (unit_pick.c); InvalidOid before 0.3 */
Oid
dp_unit_priority_oid(void)
{
	if (!dp_calls_valid)
		build_calls();
	return unit_priority_oid;
}

/* dp_agg.row_call, the trap of a function call (row_trap.c); InvalidOid before 0.4 */
Oid
dp_row_call_oid(void)
{
	if (!dp_calls_valid)
		build_calls();
	return row_call_oid;
}

/* dp_agg.row_eval, the trap of an expression (row_trap.c); InvalidOid before 0.4 */
Oid
dp_row_eval_oid(void)
{
	if (!dp_calls_valid)
		build_calls();
	return row_eval_oid;
}

/*
 * A function of the schema dp_agg whose name starts with row_ (the soft
 * arithmetic of row_trap.c, dp_agg.row_int4pl); InvalidOid if there is none.
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
	}
	return "?";
}

/* the name of argument argno of a DP aggregate call, for messages */
const char *
dp_arg_name(const DpCallInfo *info, int argno)
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
