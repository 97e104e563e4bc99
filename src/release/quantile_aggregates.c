/*-------------------------------------------------------------------------
 *
 * quantile_aggregates.c
 *	  dp_percentile and dp_median: transition, combine, serialize,
 *	  deserialize and final functions, and those of their privacy units.
 *
 * The state is a quantile tree's counts (quantile_tree.c): up to 128 leaf
 * numbers, then 4096 counters, whatever the number of rows; it combines
 * by addition, so parallel workers aggregate without sorting.  As in
 * aggregates.c, support functions find their ticket (registry.c), noise is
 * drawn only by the final function of the process that started the
 * statement, once per state (a second call returns the same release), and
 * nothing the rows hold can make a final function fail.
 *
 * Privacy units (privacy_unit.c): level 1 keeps a unit's rows in a group
 * (its own tree, small), and its bounding final function passes on
 * max_rows_contributed of them chosen uniformly at random (all when it
 * has fewer), as leaf numbers; level 3 adds them to the group's tree.  A
 * unit then counts as at most R rows distributed as its own rows.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "access/parallel.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "nodes/execnodes.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"

#include "compat.h"
#include "estimate.h"
#include "quantile_tree.h"
#include "registry.h"

PG_FUNCTION_INFO_V1(dp_tree_int2_trans);
PG_FUNCTION_INFO_V1(dp_tree_int4_trans);
PG_FUNCTION_INFO_V1(dp_tree_int8_trans);
PG_FUNCTION_INFO_V1(dp_tree_float4_trans);
PG_FUNCTION_INFO_V1(dp_tree_float8_trans);
PG_FUNCTION_INFO_V1(dp_tree_numeric_trans);
PG_FUNCTION_INFO_V1(dp_tree_combine);
PG_FUNCTION_INFO_V1(dp_tree_serialize_sql);
PG_FUNCTION_INFO_V1(dp_tree_deserialize_sql);
PG_FUNCTION_INFO_V1(dp_percentile_float_final);
PG_FUNCTION_INFO_V1(dp_percentile_numeric_final);
PG_FUNCTION_INFO_V1(dp_percentile_float_array_final);
PG_FUNCTION_INFO_V1(dp_percentile_numeric_array_final);
PG_FUNCTION_INFO_V1(dp_median_float_final);
PG_FUNCTION_INFO_V1(dp_median_numeric_final);
PG_FUNCTION_INFO_V1(dp_unit_bound_percentile_final);
PG_FUNCTION_INFO_V1(dp_unit_bound_median_final);
PG_FUNCTION_INFO_V1(dp_unit_collect_tree_trans);
PG_FUNCTION_INFO_V1(dp_unit_pick_tree_trans);

typedef struct DpTreeState
{
	const DpRelease *release;	/* ticket; NULL in a deserialized state */
	uint64		fingerprint;	/* the leaves it was built on */
	bool		picked;			/* unit_pick_bound_* (k = 1): rows of priority pick */
	int64		pick;
	bool		released;		/* the values below are final */
	double	   *values;			/* per percentile */
	double	   *lows;
	double	   *highs;
	DpTree		tree;
} DpTreeState;

static DpTreeState *
new_state(FunctionCallInfo fcinfo, MemoryContext *cxt)
{
	const DpRelease *r = dp_release_for_call(fcinfo, "DP aggregate");
	DpTreeState *st;

	if (!AggCheckCallContext(fcinfo, cxt))
		elog(ERROR, "dp_agg transition function called in non-aggregate context");
	st = MemoryContextAllocZero(*cxt, sizeof(DpTreeState));
	st->release = r;
	st->fingerprint = r->fingerprint;
	dp_tree_init(&st->tree);
	return st;
}

static DpTreeState *
get_state(FunctionCallInfo fcinfo, MemoryContext *cxt)
{
	if (PG_ARGISNULL(0))
		return new_state(fcinfo, cxt);
	if (!AggCheckCallContext(fcinfo, cxt))
		elog(ERROR, "dp_agg transition function called in non-aggregate context");
	return (DpTreeState *) PG_GETARG_POINTER(0);
}

static inline void
add_value(DpTreeState *st, double x, MemoryContext cxt)
{
	if (isnan(x))
		return;					/* skipped, as by dp_avg */
	dp_tree_add(&st->tree, dp_tree_leaf(&st->release->tree_domain, x), cxt);
}

#define TREE_TRANS(name, getter) \
Datum \
name(PG_FUNCTION_ARGS) \
{ \
	MemoryContext cxt; \
	DpTreeState *st = get_state(fcinfo, &cxt); \
 \
	if (!PG_ARGISNULL(1)) \
		add_value(st, (double) getter(1), cxt); \
	PG_RETURN_POINTER(st); \
}

TREE_TRANS(dp_tree_int2_trans, PG_GETARG_INT16)
TREE_TRANS(dp_tree_int4_trans, PG_GETARG_INT32)
TREE_TRANS(dp_tree_int8_trans, PG_GETARG_INT64)
TREE_TRANS(dp_tree_float4_trans, PG_GETARG_FLOAT4)
TREE_TRANS(dp_tree_float8_trans, PG_GETARG_FLOAT8)

/* numerics as doubles: a monotone conversion (NaN skipped, infinities clamped) */
Datum
dp_tree_numeric_trans(PG_FUNCTION_ARGS)
{
	MemoryContext cxt;
	DpTreeState *st = get_state(fcinfo, &cxt);

	if (!PG_ARGISNULL(1))
	{
		Numeric		n = PG_GETARG_NUMERIC(1);

		if (!numeric_is_nan(n))
			add_value(st, DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow,
															 NumericGetDatum(n))), cxt);
	}
	PG_RETURN_POINTER(st);
}

/* ---------- parallel and partial aggregation ---------- */

static void
check_units(const DpTreeState *st, const DpRelease *r)
{
	if (st->fingerprint != r->fingerprint)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("partial results of %s were accumulated with different parameters",
						dp_kind_name(r->call.kind)),
				 errdetail("A parallel worker priced the call differently from the leader."),
				 errhint("Do not change dp_agg settings while a statement is running.")));
}

Datum
dp_tree_combine(PG_FUNCTION_ARGS)
{
	MemoryContext cxt;
	const DpRelease *r;
	DpTreeState *s1;
	DpTreeState *s2;

	if (!AggCheckCallContext(fcinfo, &cxt))
		elog(ERROR, "dp_agg tree combine function called in non-aggregate context");
	r = dp_release_for_call(fcinfo, "DP aggregate");
	s1 = PG_ARGISNULL(0) ? NULL : (DpTreeState *) PG_GETARG_POINTER(0);
	s2 = PG_ARGISNULL(1) ? NULL : (DpTreeState *) PG_GETARG_POINTER(1);
	if (s2 == NULL)
	{
		if (s1 == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(s1);
	}
	check_units(s2, r);
	if (s1 == NULL)
	{
		s1 = MemoryContextAllocZero(cxt, sizeof(DpTreeState));
		s1->release = r;
		s1->fingerprint = r->fingerprint;
		s1->picked = s2->picked;
		s1->pick = s2->pick;
		dp_tree_init(&s1->tree);
	}
	check_units(s1, r);
	if (s1->picked != s2->picked || s1->picked != (r->call.unit == DP_UNIT_PICK))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid partial state of %s", dp_kind_name(r->call.kind)),
				 errdetail("Only the aggregates that choose the group of a privacy unit have a priority.")));
	if (s1->picked && s2->pick != s1->pick)
	{
		/* keep the rows of the smaller priority (unit_pick.c) */
		if (s2->pick > s1->pick)
			PG_RETURN_POINTER(s1);
		s1->pick = s2->pick;
		dp_tree_reset(&s1->tree);
	}
	dp_tree_merge(&s1->tree, &s2->tree, cxt);
	PG_RETURN_POINTER(s1);
}

static void
check_split(FunctionCallInfo fcinfo, bool serialize, const char *fname)
{
	AggState   *aggstate;

	if (!AggCheckCallContext(fcinfo, NULL) || !IsA(fcinfo->context, AggState))
		elog(ERROR, "%s called in non-aggregate context", fname);
	aggstate = (AggState *) fcinfo->context;
	if (serialize ? !DO_AGGSPLIT_SERIALIZE(aggstate->aggsplit)
		: !DO_AGGSPLIT_DESERIALIZE(aggstate->aggsplit))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s may only be used to pass partial aggregates between processes",
						fname)));
}

/*
 * Serialized form (between the processes of one server): version, flags
 * (bit 0: picked), fingerprint, priority, then the tree.
 */
#define TREE_SERIAL_VERSION 1
#define TREE_SERIAL_HEADER (1 + 1 + 8 + 8)

Datum
dp_tree_serialize_sql(PG_FUNCTION_ARGS)
{
	DpTreeState *st;
	bytea	   *result;
	char	   *p;
	uint8		version = TREE_SERIAL_VERSION;
	uint8		flags;
	Size		size;

	check_split(fcinfo, true, "dp_agg_internal.tree_serialfn");
	st = (DpTreeState *) PG_GETARG_POINTER(0);
	flags = st->picked ? 1 : 0;
	size = TREE_SERIAL_HEADER + dp_tree_serial_size(&st->tree);
	result = (bytea *) palloc(VARHDRSZ + size);
	SET_VARSIZE(result, VARHDRSZ + size);
	p = VARDATA(result);
	memcpy(p, &version, 1);
	memcpy(p + 1, &flags, 1);
	memcpy(p + 2, &st->fingerprint, 8);
	memcpy(p + 10, &st->pick, 8);
	dp_tree_serialize(&st->tree, p + TREE_SERIAL_HEADER);
	PG_RETURN_BYTEA_P(result);
}

Datum
dp_tree_deserialize_sql(PG_FUNCTION_ARGS)
{
	bytea	   *b;
	const char *p;
	Size		len;
	DpTreeState *st;
	uint8		version,
				flags;

	check_split(fcinfo, false, "dp_agg_internal.tree_deserialfn");
	b = PG_GETARG_BYTEA_PP(0);
	p = VARDATA_ANY(b);
	len = VARSIZE_ANY_EXHDR(b);
	st = palloc0(sizeof(DpTreeState));
	if (len < TREE_SERIAL_HEADER)
		goto bad;
	memcpy(&version, p, 1);
	memcpy(&flags, p + 1, 1);
	memcpy(&st->fingerprint, p + 2, 8);
	memcpy(&st->pick, p + 10, 8);
	st->picked = (flags & 1) != 0;
	if (version != TREE_SERIAL_VERSION || (flags & ~1) != 0 || (!st->picked && st->pick != 0) ||
		!dp_tree_deserialize(&st->tree, p + TREE_SERIAL_HEADER, len - TREE_SERIAL_HEADER,
							 CurrentMemoryContext))
		goto bad;
	PG_RETURN_POINTER(st);
bad:
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("invalid serialized dp_agg state")));
	PG_RETURN_NULL();
}

/* ---------- final functions ---------- */

/*
 * Release a state, once: the noisy tree and, for each percentile, its
 * value and its interval (quantile_tree.c).  The intervals are computed
 * always, as numeric values are rounded to their precision.
 */
static DpTreeState *
released_tree(FunctionCallInfo fcinfo, DpTreeState *empty, const DpRelease **rp)
{
	const DpRelease *r = dp_release_for_call(fcinfo, "DP aggregate");
	DpTreeState *st;
	DpTreeRelease *tr;
	MemoryContext cxt;

	if (!r->finalize)
		elog(ERROR, "dp_agg: final function of a call that was not priced");
	if (IsParallelWorker())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s cannot be finalized in a parallel worker",
						dp_kind_name(r->call.kind)),
				 errhint("Set %s to off.", DP_DEBUG_PARALLEL_SETTING)));
	if (!AggCheckCallContext(fcinfo, &cxt))
		cxt = CurrentMemoryContext;
	if (PG_ARGISNULL(0))
	{
		memset(empty, 0, sizeof(*empty));
		empty->fingerprint = r->fingerprint;
		dp_tree_init(&empty->tree);
		st = empty;
		cxt = CurrentMemoryContext;
	}
	else
		st = (DpTreeState *) PG_GETARG_POINTER(0);
	check_units(st, r);
	*rp = r;
	if (st->released)
		return st;
	st->values = MemoryContextAlloc(cxt, sizeof(double) * r->npercentiles);
	st->lows = MemoryContextAlloc(cxt, sizeof(double) * r->npercentiles);
	st->highs = MemoryContextAlloc(cxt, sizeof(double) * r->npercentiles);
	tr = palloc(sizeof(DpTreeRelease));
	dp_tree_release_start(tr, &st->tree, r->tree.laplace);
	for (int i = 0; i < r->npercentiles; i++)
		st->values[i] = dp_tree_quantile(tr, &r->tree_domain, r->percentiles[i],
										 r->tree_tau, r->tree_tau_total,
										 &st->lows[i], &st->highs[i]);
	pfree(tr);
	st->released = true;
	return st;
}

/* one percentile as a numeric rounded to its precision, or its interval's end */
static Datum
numeric_value(double v, double low, double high, int which)
{
	double		w = (high - low) / 2;
	double		x = which == DP_ESTIMATE_LOW ? low : which == DP_ESTIMATE_HIGH ? high : v;
	Numeric		n;
	int			scale;

	if (!isfinite(x))
		x = x > 0 ? DBL_MAX : -DBL_MAX;
	n = DatumGetNumeric(DirectFunctionCall1(float8_numeric, Float8GetDatum(x)));
	if (!(w > 0) || !isfinite(w))
		return NumericGetDatum(n);
	scale = Max(Min(1 - (int) floor(log10(w)), 1000), -1000);
	if (which == DP_ESTIMATE_VALUE)
	{
		/* a value with fewer decimals is on that grid already: no zeros added */
		if (scale >= DatumGetInt32(DirectFunctionCall1(numeric_scale, NumericGetDatum(n))))
			return NumericGetDatum(n);
		return DirectFunctionCall2(numeric_round, NumericGetDatum(n), Int32GetDatum(scale));
	}
	{
		/* the ends outward, at the value's precision */
		Numeric		p10 = DatumGetNumeric(DirectFunctionCall3(numeric_in,
															  CStringGetDatum(psprintf("1e%d", scale)),
															  ObjectIdGetDatum(InvalidOid),
															  Int32GetDatum(-1)));

		n = numeric_mul_opt_error(n, p10, NULL);
		n = DatumGetNumeric(DirectFunctionCall1(which == DP_ESTIMATE_HIGH ? numeric_ceil : numeric_floor,
												NumericGetDatum(n)));
		return DirectFunctionCall2(numeric_round,
								   NumericGetDatum(numeric_div_opt_error(n, p10, NULL)),
								   Int32GetDatum(Max(scale, 0)));
	}
}

/* part `which` of percentile i, of the value type */
static Datum
part_datum(const DpTreeState *st, const DpRelease *r, int i, int which)
{
	double		x;

	if (r->call.vclass == DP_VALUE_NUMERIC)
	{
		if (which == DP_ESTIMATE_LOWER || which == DP_ESTIMATE_UPPER)
		{
			if (!r->tree_domain.log_linear)
				return NumericGetDatum(which == DP_ESTIMATE_LOWER ? r->lower_num : r->upper_num);
			return DirectFunctionCall1(float8_numeric,
									   Float8GetDatum(which == DP_ESTIMATE_LOWER ? r->tree_domain.lower
													  : r->tree_domain.upper));
		}
		return numeric_value(st->values[i], st->lows[i], st->highs[i], which);
	}
	switch (which)
	{
		case DP_ESTIMATE_LOW:
			x = st->lows[i];
			break;
		case DP_ESTIMATE_HIGH:
			x = st->highs[i];
			break;
		case DP_ESTIMATE_LOWER:
			x = r->tree_domain.lower;
			break;
		case DP_ESTIMATE_UPPER:
			x = r->tree_domain.upper;
			break;
		default:
			x = st->values[i];
			break;
	}
	return Float8GetDatum(x);
}

/* a part of every percentile, as an array */
static Datum
part_array(const DpTreeState *st, const DpRelease *r, int which)
{
	int			n = r->npercentiles;
	Datum	   *elems = palloc(sizeof(Datum) * n);
	bool		numeric = r->call.vclass == DP_VALUE_NUMERIC;

	for (int i = 0; i < n; i++)
		elems[i] = part_datum(st, r, i, which);
	return PointerGetDatum(numeric
						   ? construct_array(elems, n, NUMERICOID, -1, false, TYPALIGN_INT)
						   : construct_array(elems, n, FLOAT8OID, sizeof(float8),
											 FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* the release: the value(s), or the estimate the statement asked for */
static Datum
tree_final(FunctionCallInfo fcinfo)
{
	DpTreeState empty;
	const DpRelease *r;
	DpTreeState *st = released_tree(fcinfo, &empty, &r);
	bool		array = r->call.p_array;
	Oid			rettype = get_fn_expr_rettype(fcinfo->flinfo);
	DpEstimate	e;

	if (!OidIsValid(rettype) || rettype != dp_estimate_type())
		return array ? part_array(st, r, DP_ESTIMATE_VALUE) : part_datum(st, r, 0, DP_ESTIMATE_VALUE);
	memset(&e, 0, sizeof(e));
	e.typid = array ? (r->call.vclass == DP_VALUE_NUMERIC ? NUMERICARRAYOID : FLOAT8ARRAYOID)
		: (r->call.vclass == DP_VALUE_NUMERIC ? NUMERICOID : FLOAT8OID);
	for (int which = 0; which < DP_ESTIMATE_PARTS; which++)
		e.datum[which] = array ? part_array(st, r, which) : part_datum(st, r, 0, which);
	/* the noise scale of the tree's counts, in rows */
	e.scale = r->tree.noise_scale;
	return dp_estimate_make(&e);
}

Datum
dp_percentile_float_final(PG_FUNCTION_ARGS)
{
	return tree_final(fcinfo);
}

Datum
dp_percentile_numeric_final(PG_FUNCTION_ARGS)
{
	return tree_final(fcinfo);
}

Datum
dp_percentile_float_array_final(PG_FUNCTION_ARGS)
{
	return tree_final(fcinfo);
}

Datum
dp_percentile_numeric_array_final(PG_FUNCTION_ARGS)
{
	return tree_final(fcinfo);
}

Datum
dp_median_float_final(PG_FUNCTION_ARGS)
{
	return tree_final(fcinfo);
}

Datum
dp_median_numeric_final(PG_FUNCTION_ARGS)
{
	return tree_final(fcinfo);
}

/* ---------- privacy units ---------- */

/*
 * A unit's bounded contribution to a group: the fingerprint of the
 * leaves, the number c of rows passed on, their leaf numbers.
 */
#define TREE_CONTRIBUTION_HEADER (8 + 4)

/* level 1: R of the unit's rows, chosen at random (quantile_tree.c) */
Datum
dp_unit_bound_percentile_final(PG_FUNCTION_ARGS)
{
	const DpRelease *r = dp_release_for_call(fcinfo, "DP aggregate");
	DpTreeState *st = PG_ARGISNULL(0) ? NULL : (DpTreeState *) PG_GETARG_POINTER(0);
	int64		rows;
	int32		c = 0;
	uint16	   *leaves;
	bytea	   *result;
	char	   *p;

	if ((r->call.unit != DP_UNIT_BOUND && r->call.unit != DP_UNIT_PICK) || r->unit_rows < 1)
		elog(ERROR, "dp_agg: bounding function of a call that is not level 1 of a privacy unit");
	if (st != NULL && st->picked != (r->call.unit == DP_UNIT_PICK))
		elog(ERROR, "dp_agg: bounding function of a state of another level");
	rows = st ? dp_tree_rows(&st->tree) : 0;
	leaves = palloc(sizeof(uint16) * Max(Min(rows, (int64) r->unit_rows), 1));
	if (st != NULL)
		c = dp_tree_sample(&st->tree, r->unit_rows, leaves);
	result = (bytea *) palloc(VARHDRSZ + TREE_CONTRIBUTION_HEADER + sizeof(uint16) * c);
	SET_VARSIZE(result, VARHDRSZ + TREE_CONTRIBUTION_HEADER + sizeof(uint16) * c);
	p = VARDATA(result);
	memcpy(p, &r->fingerprint, 8);
	memcpy(p + 8, &c, 4);
	memcpy(p + TREE_CONTRIBUTION_HEADER, leaves, sizeof(uint16) * c);
	PG_RETURN_BYTEA_P(result);
}

Datum
dp_unit_bound_median_final(PG_FUNCTION_ARGS)
{
	return dp_unit_bound_percentile_final(fcinfo);
}

/* level 3: add a unit's bounded contribution to its group's tree */
Datum
dp_unit_collect_tree_trans(PG_FUNCTION_ARGS)
{
	MemoryContext cxt;
	DpTreeState *st = get_state(fcinfo, &cxt);
	bytea	   *b;
	const char *p;
	uint64		fingerprint;
	int32		c;

	if (PG_ARGISNULL(1))
		PG_RETURN_POINTER(st);
	b = PG_GETARG_BYTEA_PP(1);
	p = VARDATA_ANY(b);
	if (VARSIZE_ANY_EXHDR(b) < TREE_CONTRIBUTION_HEADER)
		elog(ERROR, "dp_agg: invalid contribution of a privacy unit");
	memcpy(&fingerprint, p, 8);
	memcpy(&c, p + 8, 4);
	if (c < 0 || c > st->release->unit_rows ||
		VARSIZE_ANY_EXHDR(b) != TREE_CONTRIBUTION_HEADER + sizeof(uint16) * c)
		elog(ERROR, "dp_agg: invalid contribution of a privacy unit");
	if (fingerprint != st->fingerprint)
		elog(ERROR, "dp_agg: contribution of a privacy unit accumulated with other parameters");
	for (int i = 0; i < c; i++)
	{
		uint16		leaf;

		memcpy(&leaf, p + TREE_CONTRIBUTION_HEADER + sizeof(uint16) * i, sizeof(uint16));
		if (leaf >= DP_TREE_LEAVES)
			elog(ERROR, "dp_agg: invalid contribution of a privacy unit");
		dp_tree_add(&st->tree, leaf, cxt);
	}
	PG_RETURN_POINTER(st);
}

/*
 * The fused level 1 of k = 1 (unit_pick.c): the unit's rows of smallest
 * priority (the last argument) in a tree of their own; a smaller priority
 * starts it again, a larger one is skipped.
 */
Datum
dp_unit_pick_tree_trans(PG_FUNCTION_ARGS)
{
	int			parg = PG_NARGS() - 1;
	MemoryContext cxt;
	DpTreeState *st;
	int64		p;

	if (parg < 1 || PG_ARGISNULL(parg))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("dp_agg_internal.unit_pick_bound aggregates need a priority"),
				 errdetail("The priority is dp_agg_internal.unit_priority of the unit and the group keys, never NULL."),
				 errhint("The rewrite of privacy units makes their calls (see \"Privacy units\" in dp_agg's doc/units-and-groups.md).")));
	p = PG_GETARG_INT64(parg);
	if (PG_ARGISNULL(0))
	{
		st = new_state(fcinfo, &cxt);
		st->picked = true;
		st->pick = p;
	}
	else
	{
		st = get_state(fcinfo, &cxt);
		if (p > st->pick)
			PG_RETURN_POINTER(st);
		if (p < st->pick)
		{
			st->pick = p;
			dp_tree_reset(&st->tree);
		}
	}
	if (!PG_ARGISNULL(1))
	{
		double		x;

		switch (st->release->call.valtype)
		{
			case INT2OID:
				x = PG_GETARG_INT16(1);
				break;
			case INT4OID:
				x = PG_GETARG_INT32(1);
				break;
			case INT8OID:
				x = (double) PG_GETARG_INT64(1);
				break;
			case FLOAT4OID:
				x = PG_GETARG_FLOAT4(1);
				break;
			case FLOAT8OID:
				x = PG_GETARG_FLOAT8(1);
				break;
			default:
				{
					Numeric		n = PG_GETARG_NUMERIC(1);

					if (numeric_is_nan(n))
						PG_RETURN_POINTER(st);
					x = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow,
														   NumericGetDatum(n)));
					break;
				}
		}
		add_value(st, x, cxt);
	}
	PG_RETURN_POINTER(st);
}
