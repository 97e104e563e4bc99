/*-------------------------------------------------------------------------
 *
 * dist_aggregates.c
 *	  The aggregates of DP statements on Citus tables: the partial sums of
 *	  a signed fragment on a worker, their sum on the coordinator, and
 *	  the release of one call for one group.
 *
 * dist_plan.c writes them into the inner statement and the outer one,
 * dist_exec.c runs the inner statement and keeps the release of each call
 * and group in a slot (dp_dist_slot), so that it is drawn once.  A worker
 * accumulates rows into a dp_agg.dist_state (dist_state.c) exactly as a
 * local aggregate does (aggregates.h); the coordinator adds the states of
 * a group and releases them as the call's final function would.  None of
 * them runs outside the statements dp_agg makes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"

#include "aggregates.h"
#include "dist_exec.h"
#include "dist_state.h"
#include "estimate.h"
#include "registry.h"

PG_FUNCTION_INFO_V1(dp_dist_trans);
PG_FUNCTION_INFO_V1(dp_dist_final);
PG_FUNCTION_INFO_V1(dp_dist_combine);
PG_FUNCTION_INFO_V1(dp_dist_release);

static void
not_in_aggregate(const char *fname)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s may only run inside the DP statements dp_agg makes for Citus tables", fname),
			 errdetail("It accumulates or releases the partial states of a signed fragment.")));
}

/*
 * Final function of dp_agg_internal.sum(spec [, value]) on a worker: the state, or,
 * when no row reached the aggregate (none passed WHERE or FILTER), an
 * empty state of the call, sealed like any other when it is sent; a NULL
 * state would tell whoever reads the fragment's result whether any row
 * passed.
 */
Datum
dp_dist_final(PG_FUNCTION_ARGS)
{
	const DpRelease *r;
	DpDistState *ds;

	if (!AggCheckCallContext(fcinfo, NULL))
		not_in_aggregate("dp_agg_internal.dist_finalfn");
	if (!PG_ARGISNULL(0))
		PG_RETURN_POINTER(PG_GETARG_POINTER(0));
	r = dp_release_for_call(fcinfo, "dp_agg_internal.sum");
	if (r->dist_nonce == NULL)
		not_in_aggregate("dp_agg_internal.dist_finalfn");
	ds = dp_dist_state_new(CurrentMemoryContext, r->call.kind, r->dist_nonce, r->fingerprint);
	PG_RETURN_POINTER(ds);
}

/*
 * dp_agg_internal.sum(spec [, value]) on a worker: the rows and the clamped
 * sum of a signed fragment, in the units its ticket gives (a ticket exists
 * only for a verified signature); the state is modified in place.
 */
Datum
dp_dist_trans(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	DpDistState *ds;
	DpAggState	st;
	DpAggMore	more;
	const DpRelease *r;

	/*
	 * A state with a ticket was made below, in this aggregate: a state read
	 * by the type's input function, or copied, has none.  So the aggregate
	 * context is checked once, when the state is made.
	 */
	if (PG_ARGISNULL(0))
	{
		if (!AggCheckCallContext(fcinfo, &aggcontext))
			not_in_aggregate("dp_agg_internal.dist_transfn");
		r = dp_release_for_call(fcinfo, "dp_agg_internal.sum");
		if (r->dist_nonce == NULL)
			not_in_aggregate("dp_agg_internal.dist_transfn");
		ds = dp_dist_state_new(aggcontext, r->call.kind, r->dist_nonce, r->fingerprint);
		ds->release = r;
	}
	else
	{
		ds = (DpDistState *) PG_GETARG_POINTER(0);
		r = ds->release;
		if (r == NULL)
			not_in_aggregate("dp_agg_internal.dist_transfn");
	}

	/* every row of the group that reaches the call (the private selection's count) */
	ds->rows++;
	if (r->call.kind == DP_COUNT_STAR)
		ds->count++;
	else if (PG_NARGS() < 3 || PG_ARGISNULL(2))
		PG_RETURN_POINTER(ds);
	else if (r->call.kind == DP_COUNT)
	{
		if (PG_GETARG_BOOL(2))
			ds->count++;
	}
	else
	{
		memset(&st, 0, sizeof(st));
		memset(&more, 0, sizeof(more));
		st.more = &more;
		st.count = ds->count;
		st.sum = ds->sum;
		more.sumsq = ds->sumsq;
		switch (r->call.valtype)
		{
			case INT2OID:
				accumulate_int(&st, r, PG_GETARG_INT16(2));
				break;
			case INT4OID:
				accumulate_int(&st, r, PG_GETARG_INT32(2));
				break;
			case INT8OID:
				accumulate_int(&st, r, PG_GETARG_INT64(2));
				break;
			case FLOAT4OID:
				accumulate_float(&st, r, PG_GETARG_FLOAT4(2));
				break;
			case FLOAT8OID:
				accumulate_float(&st, r, PG_GETARG_FLOAT8(2));
				break;
			default:
				accumulate_numeric(&st, r, PG_GETARG_DATUM(2));
				break;
		}
		ds->count = st.count;
		ds->sum = st.sum;
		ds->sumsq = more.sumsq;
	}
	PG_RETURN_POINTER(ds);
}

static void
check_same_run(const DpDistState *a, const DpDistState *b)
{
	if (a->kind != b->kind || a->fingerprint != b->fingerprint ||
		memcmp(a->nonce, b->nonce, DP_NONCE_LEN) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("partial states of DP aggregates of different statements cannot be combined"),
				 errdetail("The states have different nonces or units.")));
}

/*
 * dp_agg_internal.sum(dp_agg.dist_state) on the coordinator: the sum of the states
 * of the same statement and units
 */
Datum
dp_dist_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	DpDistState *s1;
	DpDistState *s2;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		not_in_aggregate("dp_agg_internal.dist_combinefn");
	if (PG_ARGISNULL(1))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	}
	s2 = (DpDistState *) PG_DETOAST_DATUM(PG_GETARG_DATUM(1));
	if (PG_ARGISNULL(0))
	{
		s1 = MemoryContextAlloc(aggcontext, sizeof(DpDistState));
		memcpy(s1, s2, sizeof(DpDistState));
		s1->release = NULL;
		PG_RETURN_POINTER(s1);
	}
	s1 = (DpDistState *) PG_GETARG_POINTER(0);
	check_same_run(s1, s2);
	s1->count += s2->count;
	s1->sum += s2->sum;
	s1->sumsq += s2->sumsq;
	s1->rows += s2->rows;
	PG_RETURN_POINTER(s1);
}

/*
 * dp_agg_internal.dist_release(state, call, NULL::type) on the coordinator: the
 * noisy release of one call for one group, drawn once (dp_dist_slot keeps
 * it), converted as the call's final function converts it.
 */
Datum
dp_dist_release(PG_FUNCTION_ARGS)
{
	DpDistState *ds;
	DpDistSlot *slot;
	MemoryContext cxt;
	MemoryContext oldcxt;
	const DpRelease *r;
	DpAggState	st;
	DpAggMore	more;
	DpAggDrawn	drawn;
	Datum		v;
	int16		typlen;
	bool		typbyval;
	Oid			restype;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		not_in_aggregate("dp_agg_internal.dist_release");
	ds = (DpDistState *) PG_DETOAST_DATUM(PG_GETARG_DATUM(0));
	r = dp_dist_slot(ds, PG_GETARG_INT32(1), &slot, &cxt);
	if (slot->done)
		PG_RETURN_DATUM(slot->value);

	memset(&st, 0, sizeof(st));
	memset(&more, 0, sizeof(more));
	memset(&drawn, 0, sizeof(drawn));
	st.more = &more;
	more.drawn = &drawn;
	more.fingerprint = ds->fingerprint;
	st.count = ds->count;
	st.sum = ds->sum;
	more.sumsq = ds->sumsq;
	restype = get_fn_expr_rettype(fcinfo->flinfo);
	if (restype != dp_agg_value_type(r) && restype != dp_estimate_type())
		not_in_aggregate("dp_agg_internal.dist_release");
	dp_agg_draw_noise(&st, r);
	v = dp_agg_release_datum(&st, r, restype == dp_estimate_type());
	get_typlenbyval(restype, &typlen, &typbyval);
	oldcxt = MemoryContextSwitchTo(cxt);
	slot->value = datumCopy(v, typbyval, typlen);
	MemoryContextSwitchTo(oldcxt);
	slot->done = true;
	PG_RETURN_DATUM(slot->value);
}
