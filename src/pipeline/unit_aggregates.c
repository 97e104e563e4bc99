/*-------------------------------------------------------------------------
 *
 * unit_aggregates.c
 *	  The pieces of the rewrite of privacy units made of the DP
 *	  aggregates' state: each unit's bounded contribution to a group
 *	  (level 1), their sum per group (level 3), and the fused path's
 *	  accumulation of the rows of smallest priority (k = 1).
 *
 * privacy_unit.c writes the calls (doc/units-and-groups.md, "Privacy units"):
 * level 1 accumulates a unit's rows in one group with the DP aggregate's own
 * transition function (aggregates.h) and its bounding final function
 * returns the contribution, bounded; level 3 adds the contributions of the
 * units of a group into a state, which the DP aggregate's final function
 * releases.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"

#include "aggregates.h"
#include "grid.h"
#include "registry.h"

PG_FUNCTION_INFO_V1(dp_unit_bound_count_final);
PG_FUNCTION_INFO_V1(dp_unit_bound_sum_final);
PG_FUNCTION_INFO_V1(dp_unit_bound_avg_final);
PG_FUNCTION_INFO_V1(dp_unit_bound_var_final);
PG_FUNCTION_INFO_V1(dp_unit_bound_stddev_final);
PG_FUNCTION_INFO_V1(dp_unit_collect_trans);
PG_FUNCTION_INFO_V1(dp_unit_pick_trans);

/*
 * One unit's bounded contribution to one group, passed from level 1 to
 * level 3 of the rewrite: the fingerprint of the accumulation units, the
 * bounded count, the bounded total and the bounded sum of centred squares
 * (dp_var, dp_stddev) in units.
 */
#define DP_UNIT_CONTRIBUTION_SIZE (8 + 8 + 16 + 16)

static bytea *
unit_contribution(uint64 fingerprint, int64 count, int128 sum, int128 sumsq)
{
	bytea	   *result = (bytea *) palloc(VARHDRSZ + DP_UNIT_CONTRIBUTION_SIZE);
	char	   *p = VARDATA(result);

	SET_VARSIZE(result, VARHDRSZ + DP_UNIT_CONTRIBUTION_SIZE);
	put_bytes(&p, &fingerprint, 8);
	put_bytes(&p, &count, 8);
	put_bytes(&p, &sum, 16);
	put_bytes(&p, &sumsq, 16);
	return result;
}

/*
 * The state of level 1 (a unit's rows in one group, accumulated by the DP
 * aggregate's own transition function) and its ticket; NULL state when no
 * row passed (FILTER): an empty contribution.  *rows is the unit's number
 * of rows, *count that number bounded by max_rows_contributed.
 */
static void
unit_state(FunctionCallInfo fcinfo, const DpRelease **rp, int64 *rows, int64 *count,
		   int128 *sum, int128 *sumsq)
{
	const DpRelease *r = dp_release_for_call(fcinfo, "DP aggregate");
	DpAggState *st = PG_ARGISNULL(0) ? NULL : (DpAggState *) PG_GETARG_POINTER(0);

	if ((r->call.unit != DP_UNIT_BOUND && r->call.unit != DP_UNIT_PICK) || r->unit_rows < 1)
		elog(ERROR, "dp_agg: bounding function of a call that is not level 1 of a privacy unit");
	if (st != NULL && state_picked(st) != (r->call.unit == DP_UNIT_PICK))
		elog(ERROR, "dp_agg: bounding function of a state of another level");
	*rp = r;
	*rows = st ? st->count : 0;
	*count = Min(*rows, (int64) r->unit_rows);
	*sum = st ? st->sum : 0;
	*sumsq = st ? state_sumsq(st) : 0;
}

/* level 1 of dp_count: at most max_rows_contributed rows */
Datum
dp_unit_bound_count_final(PG_FUNCTION_ARGS)
{
	const DpRelease *r;
	int64		rows,
				count;
	int128		sum,
				sumsq;

	unit_state(fcinfo, &r, &rows, &count, &sum, &sumsq);
	PG_RETURN_BYTEA_P(unit_contribution(r->fingerprint, count, 0, 0));
}

/* level 1 of dp_sum: the unit's total clamped to [lower, upper] */
Datum
dp_unit_bound_sum_final(PG_FUNCTION_ARGS)
{
	const DpRelease *r;
	int64		rows,
				count;
	int128		sum,
				sumsq;

	unit_state(fcinfo, &r, &rows, &count, &sum, &sumsq);
	sum = Max(sum, (int128) r->lo_units);
	sum = Min(sum, (int128) r->hi_units);
	PG_RETURN_BYTEA_P(unit_contribution(r->fingerprint, count, sum, 0));
}

/*
 * level 1 of dp_avg, dp_var and dp_stddev: the unit's clamped rows
 * weighted by c / m, c = min(m, max_rows_contributed) of its m rows: c rows'
 * worth at the unit's own mean, so count c and total round(c S / m) (and
 * sum of centred squares round(c Q / m)).  The total lies within
 * [c lower, c upper] (the mean of clamped rows does, and c lower, c upper
 * are integers in units: rounding stays inside), so its centred value
 * 2 total - c (lower + upper) lies within c (upper - lower) half units, and
 * the squares within c times their bound: the sensitivity of R rows.  A
 * unit of at most R rows contributes its rows exactly; a heavier one no
 * longer pulls the average toward a bound (doc/units-and-groups.md, "Privacy
 * units").
 */
Datum
dp_unit_bound_avg_final(PG_FUNCTION_ARGS)
{
	const DpRelease *r;
	int64		rows,
				count;
	int128		sum,
				sumsq;

	unit_state(fcinfo, &r, &rows, &count, &sum, &sumsq);
	if (rows > count)
	{
		sum = dp_scale_total(sum, count, rows);
		sumsq = dp_scale_total(sumsq, count, rows);
	}
	PG_RETURN_BYTEA_P(unit_contribution(r->fingerprint, count, sum, sumsq));
}

/* dp_var, dp_stddev: as dp_avg, under the names the catalog reads */
Datum
dp_unit_bound_var_final(PG_FUNCTION_ARGS)
{
	return dp_unit_bound_avg_final(fcinfo);
}

Datum
dp_unit_bound_stddev_final(PG_FUNCTION_ARGS)
{
	return dp_unit_bound_avg_final(fcinfo);
}

/* level 3: add one unit's bounded contribution to its group */
Datum
dp_unit_collect_trans(PG_FUNCTION_ARGS)
{
	DpAggState *st = GET_STATE();
	const DpRelease *r;
	bytea	   *b;
	const char *p;
	uint64		fingerprint;
	int64		count;
	int128		sum,
				sumsq;

	if (PG_ARGISNULL(1))
		PG_RETURN_POINTER(st);
	b = PG_GETARG_BYTEA_PP(1);
	if (VARSIZE_ANY_EXHDR(b) != DP_UNIT_CONTRIBUTION_SIZE)
		elog(ERROR, "dp_agg: invalid contribution of a privacy unit");
	p = VARDATA_ANY(b);
	get_bytes(&p, &fingerprint, 8);
	get_bytes(&p, &count, 8);
	get_bytes(&p, &sum, 16);
	get_bytes(&p, &sumsq, 16);
	r = call_release(fcinfo);
	if (fingerprint != state_fingerprint(st, r))
		elog(ERROR, "dp_agg: contribution of a privacy unit accumulated with other parameters");
	st->count += count;
	st->sum += sum;
	if (sumsq != 0)
		state_more(st, r)->sumsq += sumsq;
	PG_RETURN_POINTER(st);
}

/*
 * The transition function of f's transition function for one row of the
 * unit's priority p (the last argument; f's own arguments keep their
 * positions)
 */
static PGFunction
pick_inner_transition(const DpRelease *r)
{
	switch (r->call.kind)
	{
		case DP_COUNT_STAR:
			return dp_count_star_trans;
		case DP_COUNT:
			return dp_count_trans;
		case DP_SUM:
		case DP_AVG:
		case DP_VAR:
		case DP_STDDEV:
			switch (r->call.valtype)
			{
				case INT2OID:
					return dp_sum_int2_trans;
				case INT4OID:
					return dp_sum_int4_trans;
				case INT8OID:
					return dp_sum_int8_trans;
				case FLOAT4OID:
					return dp_sum_float4_trans;
				case FLOAT8OID:
					return dp_sum_float8_trans;
				case NUMERICOID:
					return dp_sum_numeric_trans;
			}
			break;
		case DP_PERCENTILE:
		case DP_MEDIAN:
		case DP_BOUNDS:
		case DP_SELECT:
		case DP_PUBLIC:
		case DP_TOP_K:
			break;
	}
	elog(ERROR, "dp_agg: no transition function to pick for a call of kind %d", (int) r->call.kind);
	return NULL;
}

/*
 * dp_agg.unit_pick_bound_f(args of f..., p bigint), level 1 of the fused
 * path of privacy units (k = 1, privacy_unit.c, unit_pick.c): the state of
 * the unit's rows of smallest priority p, accumulated by f's own
 * transition function.  A smaller p starts the state again, a larger one
 * is skipped.  Rows of equal p (two groups of the unit with the same
 * priority, probability about 2^-64) are accumulated together and released
 * in the one group dp_agg_internal.unit_pick names: each unit is one row of level 1,
 * so it never contributes to more than one group, and the bounding final
 * function bounds what it contributes there.
 */
Datum
dp_unit_pick_trans(PG_FUNCTION_ARGS)
{
	int			parg = PG_NARGS() - 1;
	DpAggState *st = PG_ARGISNULL(0) ? NULL : (DpAggState *) PG_GETARG_POINTER(0);
	DpAggMore  *m;
	int64		p;

	if (parg < 1 || PG_ARGISNULL(parg))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("dp_agg_internal.unit_pick_bound aggregates need a priority"),
				 errdetail("The priority is dp_agg_internal.unit_priority of the unit and the group keys, never NULL."),
				 errhint("The rewrite of privacy units makes their calls (see \"Privacy units\" in dp_agg's doc/units-and-groups.md).")));
	p = PG_GETARG_INT64(parg);
	if (st == NULL)
	{
		st = dp_agg_new_state(fcinfo);	/* with its second part */
		m = st->more;
		m->picked = true;
		m->pick = p;
	}
	else if (!state_picked(st))
		elog(ERROR, "dp_agg: priority of a state of another level");
	else if (p > (m = st->more)->pick)
		PG_RETURN_POINTER(st);
	else if (p < m->pick)
	{
		m->pick = p;
		st->count = 0;
		st->sum = 0;
		m->sumsq = 0;
	}
	fcinfo->args[0].value = PointerGetDatum(st);
	fcinfo->args[0].isnull = false;
	return pick_inner_transition(call_release(fcinfo)) (fcinfo);
}
