/*-------------------------------------------------------------------------
 *
 * aggregates.c
 *	  dp_count, dp_sum and dp_avg: transition, combine, serialize,
 *	  deserialize and final functions.
 *
 * The transition state (DpAggState) holds exact integers only: the number of
 * rows and the sum of clamped values in units of the ticket's row grid, as a
 * 128-bit integer.  So the result does not depend on row order or on the
 * parallel plan, and no sum can overflow (rows are at most 2^60 units).
 * It is 32 bytes, what a row needs and no more: a GROUP BY into a million
 * groups keeps a million of them, and their size is the aggregation's
 * memory traffic (the built-in sum(bigint) keeps 48 bytes, avg(float8) an
 * array of 48).  What only some calls need (the sum of squares of dp_var,
 * the bins of estimated bounds, the priority of a privacy unit, the units
 * of a state from another process) are in a second part (DpAggMore, 64
 * bytes), made in the state's own chunk for the calls that need it at
 * every row (dp_agg_new_more_state: the fused path of privacy units keeps
 * a million of these), else on first need.  The noise drawn by the final
 * function: for a count or a sum of a state without a second part (the
 * groups of a plain GROUP BY), in place, its noisy value in the sum field
 * (dp_agg_released_in_place); else in a third part (DpAggDrawn), made
 * when the state is released (with a second part made then, one chunk of
 * 128 bytes; the bounds that calls without bounds estimate, apart).
 *
 * Transition functions read nothing but the value: bounds, grid and noise
 * come from the ticket (release.c), looked up once per call site in the
 * registry (registry.c) and cached in fn_extra.  Noise is drawn only in the final functions, only in the
 * process that ran ExecutorStart, and only once per state: a final function
 * called again on the same state returns the same release.
 *
 * The final functions never raise an error that depends on the data: the
 * result is saturated to the range of its type.
 *
 * The state and the accumulation of a row are in aggregates.h, shared with
 * the aggregates of Citus statements (dist_aggregates.c) and the pieces of
 * the rewrite of privacy units (unit_aggregates.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "access/htup_details.h"
#include "access/parallel.h"
#include "fmgr.h"
#include "funcapi.h"
#include "nodes/execnodes.h"
#include "utils/builtins.h"
#include "utils/numeric.h"

#include "catalog/pg_type.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"

#include "aggregates.h"
#include "auto_bounds.h"
#include "calibrate.h"
#include "compat.h"
#include "describe.h"
#include "estimate.h"
#include "estimators.h"
#include "grid.h"
#include "numeric_units.h"
#include "registry.h"
#include "top_k.h"

PG_FUNCTION_INFO_V1(dp_count_star_trans);
PG_FUNCTION_INFO_V1(dp_count_trans);
PG_FUNCTION_INFO_V1(dp_sum_int2_trans);
PG_FUNCTION_INFO_V1(dp_sum_int4_trans);
PG_FUNCTION_INFO_V1(dp_sum_int8_trans);
PG_FUNCTION_INFO_V1(dp_sum_float4_trans);
PG_FUNCTION_INFO_V1(dp_sum_float8_trans);
PG_FUNCTION_INFO_V1(dp_sum_numeric_trans);
PG_FUNCTION_INFO_V1(dp_agg_combine);
PG_FUNCTION_INFO_V1(dp_count_final);
PG_FUNCTION_INFO_V1(dp_sum_int_final);
PG_FUNCTION_INFO_V1(dp_sum_float_final);
PG_FUNCTION_INFO_V1(dp_sum_numeric_final);
PG_FUNCTION_INFO_V1(dp_avg_float_final);
PG_FUNCTION_INFO_V1(dp_avg_numeric_final);
PG_FUNCTION_INFO_V1(dp_var_float_final);
PG_FUNCTION_INFO_V1(dp_var_numeric_final);
PG_FUNCTION_INFO_V1(dp_stddev_float_final);
PG_FUNCTION_INFO_V1(dp_bounds_final);
PG_FUNCTION_INFO_V1(dp_stddev_numeric_final);
PG_FUNCTION_INFO_V1(dp_select_trans);
PG_FUNCTION_INFO_V1(dp_select_final);
PG_FUNCTION_INFO_V1(dp_public_trans);
PG_FUNCTION_INFO_V1(dp_public_final);
PG_FUNCTION_INFO_V1(dp_top_k_final);

const DpAggMore dp_agg_released_in_place = {.released = true};

/* a row the call does not count (NULL, NaN): the cold path */
pg_noinline void
dp_agg_skip_row(DpAggState *st, const DpRelease *r)
{
	state_more(st, r)->skipped++;
}

/*
 * A state with its second part, in one chunk of cxt: one allocation, and
 * the fields a row reads next to each other
 */
DpAggState *
dp_agg_new_more_state(MemoryContext cxt, const DpRelease *r)
{
	DpAggStateMore *sm;

	StaticAssertStmt(sizeof(DpAggStateMore) <= 128,
					 "a state with its second part fits a chunk of 128 bytes");
	sm = MemoryContextAllocZero(cxt, sizeof(DpAggStateMore));
	sm->st.more = &sm->more;
	sm->more.fingerprint = r->fingerprint;
	return &sm->st;
}

DpAggState *
dp_agg_new_state(FunctionCallInfo fcinfo)
{
	const DpRelease *r = dp_release_for_call(fcinfo, "DP aggregate");
	MemoryContext aggcontext;
	DpAggState *st;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "dp_agg transition function called in non-aggregate context");
	/*
	 * What every row of these calls needs, made now, in the state's chunk:
	 * the squares, the bins, the priority of level 1 of the fused path of
	 * privacy units (unit_aggregates.c); and a state sent
	 */
	if (DP_KIND_SQUARES(r->call.kind) || r->auto_bounds || r->call.unit == DP_UNIT_PICK ||
		sends_states(fcinfo))
		st = dp_agg_new_more_state(aggcontext, r);
	else
	{
		/* (three stores: cheaper than the zeroing loop of AllocZero) */
		st = MemoryContextAlloc(aggcontext, sizeof(DpAggState));
		*st = (DpAggState) {0};
	}
	if (r->auto_bounds)
		st->more->bins = dp_bins_new(aggcontext, DP_KIND_SQUARES(r->call.kind));
	return st;
}

/* ---------- transition functions ---------- */

/* dp_count(value): the first row of a group, and NULL rows */
static pg_noinline Datum
dp_count_general(FunctionCallInfo fcinfo)
{
	DpAggState *st = GET_STATE();

	if (!PG_ARGISNULL(1))
		st->count++;
	else
		dp_agg_skip_row(st, call_release(fcinfo));
	PG_RETURN_POINTER(st);
}

/* dp_count(*) */
Datum
dp_count_star_trans(PG_FUNCTION_ARGS)
{
	DpAggState *st = GET_STATE();

	st->count++;
	PG_RETURN_POINTER(st);
}

/* dp_count(value [, epsilon [, delta]]): rows where value is not NULL */
Datum
dp_count_trans(PG_FUNCTION_ARGS)
{
	DpAggState *st;

	/* a row of a group begun, not NULL: no call, so no registers saved */
	if (likely(!PG_ARGISNULL(0) && !PG_ARGISNULL(1)))
	{
		st = (DpAggState *) PG_GETARG_POINTER(0);
		Assert(!state_in_place(st));
		st->count++;
		PG_RETURN_POINTER(st);
	}
	return dp_count_general(fcinfo);
}

/*
 * dp_sum and dp_avg for each value type; bounds come from the ticket.  A
 * row takes the plain path (plain_row) or the general one, the same
 * clamping and rounding.
 */
pg_noinline Datum
dp_sum_int_general(FunctionCallInfo fcinfo, int64 v)
{
	DpAggState *st = GET_STATE();

	if (!PG_ARGISNULL(1))
		accumulate_int(st, call_release(fcinfo), v);
	else
		dp_agg_skip_row(st, call_release(fcinfo));
	PG_RETURN_POINTER(st);
}

pg_noinline Datum
dp_sum_float_general(FunctionCallInfo fcinfo, double v)
{
	DpAggState *st = GET_STATE();

	if (!PG_ARGISNULL(1))
		accumulate_float(st, call_release(fcinfo), v);
	else
		dp_agg_skip_row(st, call_release(fcinfo));
	PG_RETURN_POINTER(st);
}

/* (the value of a NULL argument is read, not used: these types are by value) */
Datum
dp_sum_int2_trans(PG_FUNCTION_ARGS)
{
	return sum_int_row(fcinfo, PG_GETARG_INT16(1));
}

Datum
dp_sum_int4_trans(PG_FUNCTION_ARGS)
{
	return sum_int_row(fcinfo, PG_GETARG_INT32(1));
}

Datum
dp_sum_int8_trans(PG_FUNCTION_ARGS)
{
	return sum_int_row(fcinfo, PG_GETARG_INT64(1));
}

Datum
dp_sum_float4_trans(PG_FUNCTION_ARGS)
{
	return sum_float_row(fcinfo, PG_GETARG_FLOAT4(1));
}

Datum
dp_sum_float8_trans(PG_FUNCTION_ARGS)
{
	return sum_float_row(fcinfo, PG_GETARG_FLOAT8(1));
}

Datum
dp_sum_numeric_trans(PG_FUNCTION_ARGS)
{
	DpAggState *st = GET_STATE();

	if (!PG_ARGISNULL(1))
		accumulate_numeric(st, call_release(fcinfo), PG_GETARG_DATUM(1));
	else
		dp_agg_skip_row(st, call_release(fcinfo));
	PG_RETURN_POINTER(st);
}

/*
 * dp_agg_internal.dp_select(internal, integer): every input row of the group is one
 * unit (selection.c)
 */
Datum
dp_select_trans(PG_FUNCTION_ARGS)
{
	DpAggState *st = GET_STATE();

	st->count++;
	PG_RETURN_POINTER(st);
}

/*
 * dp_agg_internal.dp_public(internal, boolean, bigint): counts the group's rows of
 * its public domain, those whose second argument is true (public_domain.c);
 * the statement's other rows are skipped, NULL or false
 */
Datum
dp_public_trans(PG_FUNCTION_ARGS)
{
	DpAggState *st = GET_STATE();

	if (!PG_ARGISNULL(2) && PG_GETARG_BOOL(2))
		st->count++;
	PG_RETURN_POINTER(st);
}

/* ---------- parallel and partial aggregation ---------- */

static void
check_units(const DpAggState *st, const DpRelease *r)
{
	if (state_fingerprint(st, r) != r->fingerprint)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("partial results of %s were accumulated with different parameters",
						dp_kind_name(r->call.kind)),
				 errdetail("A parallel worker priced the call differently from the leader."),
				 errhint("Do not change dp_agg settings while a statement is running.")));
}

/* ERROR for a partial state that does not fit its call; detail: a literal */
#define invalid_partial_state(r, detail) \
	ereport(ERROR, \
			(errcode(ERRCODE_DATA_CORRUPTED), \
			 errmsg("invalid partial state of %s", dp_kind_name((r)->call.kind)), \
			 errdetail(detail)))

Datum
dp_agg_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	const DpRelease *r;
	DpAggState *s1;
	DpAggState *s2;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "dp_agg_combine called in non-aggregate context");
	r = dp_release_for_call(fcinfo, "DP aggregate");
	s1 = PG_ARGISNULL(0) ? NULL : (DpAggState *) PG_GETARG_POINTER(0);
	s2 = PG_ARGISNULL(1) ? NULL : (DpAggState *) PG_GETARG_POINTER(1);

	if (s2 == NULL)
	{
		if (s1 == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(s1);
	}
	check_units(s2, r);
	if (s1 == NULL)
	{
		if (sends_states(fcinfo) || state_picked(s2))
			s1 = dp_agg_new_more_state(aggcontext, r);
		else
			s1 = MemoryContextAllocZero(aggcontext, sizeof(DpAggState));
		if (state_picked(s2))
		{
			DpAggMore  *m = state_more(s1, r);

			m->picked = true;
			m->pick = s2->more->pick;
		}
	}
	check_units(s1, r);
	if (state_picked(s1) != state_picked(s2) || state_picked(s1) != (r->call.unit == DP_UNIT_PICK))
		invalid_partial_state(r, "Only the aggregates that choose the group of a privacy unit have a priority.");
	if (state_sumsq(s2) != 0 && !DP_KIND_SQUARES(r->call.kind))
		invalid_partial_state(r, "Only dp_var and dp_stddev have a sum of squares.");
	if (state_picked(s1) && state_pick(s2) != state_pick(s1))
	{
		/* keep the rows of the smaller priority (unit_pick.c) */
		if (state_pick(s2) > state_pick(s1))
			PG_RETURN_POINTER(s1);
		s1->more->pick = s2->more->pick;
		s1->count = 0;
		s1->sum = 0;
		s1->more->sumsq = 0;
		s1->more->skipped = 0;
	}
	if ((state_bins(s1) != NULL || state_bins(s2) != NULL) != r->auto_bounds)
		invalid_partial_state(r, "Only aggregates whose bounds are estimated keep their rows by bin.");
	if (state_bins(s2) != NULL)
	{
		DpAggMore  *m = state_more(s1, r);

		if (m->bins == NULL)
			m->bins = dp_bins_new(aggcontext, s2->more->bins->squares);
		dp_bins_merge(m->bins, s2->more->bins);
	}
	s1->count += s2->count;
	s1->sum += s2->sum;
	if (state_sumsq(s2) != 0)
		state_more(s1, r)->sumsq += s2->more->sumsq;
	if (state_skipped(s2) != 0)
		state_more(s1, r)->skipped += s2->more->skipped;
	PG_RETURN_POINTER(s1);
}

/* ---------- final functions: the only place noise is drawn ---------- */

/* the number of rows in units of the count's grid 2^k, k <= 0 */
static inline int128
count_units(const DpAggState *st, const DpRelease *r)
{
	return (int128) st->count << (-r->count.grid_exp);
}

/* draw the noise of a state's releases, once */
void
dp_agg_draw_noise(DpAggState *st, const DpRelease *r)
{
	DpAggDrawn *d;
	DpAggMore  *m;

	if (st->more != NULL && st->more->released)
		return;
	/*
	 * One draw and no second part (a count, or a sum, of a group without
	 * skipped rows): in place, its noisy value replaces the sum (no
	 * allocation per group; the rows counted are kept for a fused
	 * selection, feed_rows)
	 */
	if (st->more == NULL &&
		(r->call.kind == DP_COUNT_STAR || r->call.kind == DP_COUNT || r->call.kind == DP_SUM))
	{
		if (r->call.kind == DP_SUM)
			st->sum += dp_noise_draw(&r->sum);
		else
			st->sum = count_units(st, r) + dp_noise_draw(&r->count);
		st->more = unconstify(DpAggMore *, &dp_agg_released_in_place);
		return;
	}
	d = state_drawn(st, r);		/* with the second part, if it is new */
	m = st->more;
	switch (r->call.kind)
	{
		case DP_COUNT_STAR:
		case DP_COUNT:
			d->noisy_count = count_units(st, r) + dp_noise_draw(&r->count);
			break;
		case DP_SUM:
			d->noisy_sum = st->sum + dp_noise_draw(&r->sum);
			break;
		case DP_AVG:
			/* both draws always happen: the work is the same for any data */
			d->noisy_count = count_units(st, r) + dp_noise_draw(&r->count);
			d->noisy_sum = 2 * st->sum -
				(int128) st->count * ((int128) r->lo_units + r->hi_units) +
				dp_noise_draw(&r->sum);
			break;
		case DP_VAR:
		case DP_STDDEV:
			/* the three draws always happen */
			d->noisy_count = count_units(st, r) + dp_noise_draw(&r->count);
			d->noisy_sum = 2 * st->sum -
				(int128) st->count * ((int128) r->lo_units + r->hi_units) +
				dp_noise_draw(&r->sum);
			d->noisy_sumsq = m->sumsq + dp_noise_draw(&r->sumsq);
			break;
		case DP_SELECT:
			d->noisy_count = dp_selection_draw(&r->selection, st->count) ? 1 : 0;
			break;
		case DP_PERCENTILE:
		case DP_MEDIAN:
		case DP_BOUNDS:
			elog(ERROR, "dp_agg: %s has no sums to release", dp_kind_name(r->call.kind));
			break;
		case DP_PUBLIC:
			/* a group of the domain has its own row: no draw, nothing to hide */
			d->noisy_count = st->count > 0 ? 1 : 0;
			break;
		case DP_TOP_K:
			/* the count goes to the store of top-k, which ranks all groups at once */
			d->noisy_count = dp_top_k_handle(r, st->count);
			break;
	}
	m->released = true;
}

/*
 * A fused selection (selection.c): its own state counted no row (FILTER
 * (WHERE false)); the rows of its group are those the host's final
 * function gave, just before, for the same group: exactly one host release
 * since the selection's last one.  Drawn once: a state released already
 * keeps its draw.
 */
static void
fed_rows(DpAggState *st, const DpRelease *r)
{
	DpSelectionFeed *f = r->feed;

	if (st->count != 0 || state_skipped(st) != 0)
		elog(ERROR, "dp_agg: a fused private selection counted rows of its own");
	if (st->more != NULL && st->more->released)
		return;
	if (f->finals != f->selects + 1)
		elog(ERROR, "dp_agg: a private selection without the rows of its group");
	f->selects++;
	st->count = f->rows;
}

static const DpBins *released_bins(const DpAggMore *m);

/*
 * A host's rows of the group it releases, for the fused selection next:
 * those it counted and skipped, or, for a call whose bounds are estimated
 * (whose count is made only from the rows within them), those in its bins
 * and skipped.  Every host feeds, whatever its kind: a host that did not
 * would leave the selection without its rows, an error at the first group
 * that only an input with rows reaches.
 */
static void
feed_rows(const DpAggState *st, const DpRelease *r)
{
	int64		rows = state_skipped(st);

	if (r->feed == NULL)
		return;
	if (r->auto_bounds)
	{
		const DpBins *b = st->more != NULL ? released_bins(st->more) : NULL;

		for (int i = 0; b != NULL && i < DP_BINS; i++)
			rows += b->count[i];
	}
	else
		rows += st->count;
	r->feed->rows = rows;
	r->feed->finals++;
}

/*
 * The state to release, with its noise drawn (once).  An empty input gives
 * a NULL state: the release is then the noise alone.
 */
static DpAggState *
released_state(FunctionCallInfo fcinfo, DpAggEmpty *empty, const DpRelease **rp)
{
	const DpRelease *r;
	DpAggState *st;

	r = dp_release_for_call(fcinfo, "DP aggregate");
	if (!r->finalize)
		elog(ERROR, "dp_agg: final function of a call that was not priced");
	if (IsParallelWorker())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s cannot be finalized in a parallel worker",
						dp_kind_name(r->call.kind)),
				 errhint("Set %s to off.", DP_DEBUG_PARALLEL_SETTING)));
	if (PG_ARGISNULL(0))
	{
		memset(empty, 0, sizeof(*empty));
		empty->more.fingerprint = r->fingerprint;
		empty->st.more = &empty->more;
		empty->more.drawn = &empty->drawn;
		empty->drawn.bounds = &empty->bounds;
		st = &empty->st;
	}
	else
		st = (DpAggState *) PG_GETARG_POINTER(0);
	check_units(st, r);
	if (r->call.kind == DP_SELECT && r->feed != NULL)
		fed_rows(st, r);
	/* with estimated bounds, the noise follows the bounds (auto_release) */
	if (!r->auto_bounds)
		dp_agg_draw_noise(st, r);
	*rp = r;
	return st;
}

static int64
saturate_int64(int128 v)
{
	if (v > PG_INT64_MAX)
		return PG_INT64_MAX;
	if (v < PG_INT64_MIN)
		return PG_INT64_MIN;
	return (int64) v;
}

/* units * 2^k as a double, saturated to the finite range */
static double
units_to_double(int128 units, int k)
{
	double		d = dp_ldexp((double) units, k);

	if (d > DBL_MAX)
		return DBL_MAX;
	if (d < -DBL_MAX)
		return -DBL_MAX;
	return d;
}

/* units * 2^k as an exact numeric */
static Numeric
units_to_numeric(int128 units, int k)
{
	return numeric_mul_opt_error(dp_int128_numeric(units), dp_numeric_pow2(k), NULL);
}

/*
 * units * 2^k as a bigint: rounded to the nearest integer (half up) when
 * k < 0, saturated to the range of bigint.
 */
static int64
units_to_int64(int128 units, int k)
{
	if (k < 0)
		return saturate_int64((units + ((int128) 1 << (-k - 1))) >> (-k));
	if (k > 0)
	{
		int128		limit = ((int128) PG_INT64_MAX) >> k;

		if (units > limit)
			return PG_INT64_MAX;
		if (units < -limit - 1)
			return PG_INT64_MIN;
		units *= (int128) 1 << k;
	}
	return saturate_int64(units);
}

/*
 * A numeric release rounded to the precision of its noise
 * (doc/sql-reference.md, "Aggregates"): to a multiple of 10^e, e =
 * floor(log10(w)) - 1, w the half-width of its 95% interval, so that its
 * digits stop one place below the first digit of its error bar.  Exact when it
 * has no noise.
 */
static int
noise_scale_digits(double w)
{
	int			scale = 1 - (int) floor(log10(w));

	return Max(Min(scale, 1000), -1000);
}

static Numeric
round_to_noise(Numeric v, double w)
{
	int			scale;

	if (!(w > 0) || !isfinite(w) || numeric_is_nan(v) || numeric_is_inf(v))
		return v;
	scale = noise_scale_digits(w);
	/* a value with fewer decimals is on that grid already: no zeros added */
	if (scale >= DatumGetInt32(DirectFunctionCall1(numeric_scale, NumericGetDatum(v))))
		return v;
	return DatumGetNumeric(DirectFunctionCall2(numeric_round, NumericGetDatum(v),
											   Int32GetDatum(scale)));
}

static Numeric
numeric_of(double v)
{
	return DatumGetNumeric(DirectFunctionCall1(float8_numeric, Float8GetDatum(v)));
}

/*
 * The end of an interval at the precision of its value's noise
 * (round_to_noise), rounded outward (down for the low end): the interval
 * only widens.
 */
static Numeric
round_outward(Numeric n, double w, bool up)
{
	Numeric		p10;
	int			scale;

	if (!(w > 0) || !isfinite(w))
		return n;
	scale = noise_scale_digits(w);
	p10 = DatumGetNumeric(DirectFunctionCall3(numeric_in, CStringGetDatum(psprintf("1e%d", scale)),
											  ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1)));
	n = numeric_mul_opt_error(n, p10, NULL);
	n = DatumGetNumeric(DirectFunctionCall1(up ? numeric_ceil : numeric_floor, NumericGetDatum(n)));
	n = numeric_div_opt_error(n, p10, NULL);
	return round_to_noise(n, w);
}

/*
 * ... of an end computed in double precision, first moved outward by a
 * relative 1e-14, above the error of its conversion (15 significant digits)
 */
static Numeric
interval_end(double x, double w, bool up)
{
	x += (up ? 1 : -1) * fabs(x) * 1e-14;
	return round_outward(numeric_of(x), w, up);
}

/* the noisy count, centred sum and sum of centred squares in value units */
static void
noisy_moments(const DpAggState *st, const DpRelease *r, double *n, double *c, double *q)
{
	Assert(!state_in_place(st));	/* two draws or three: never in place */
	*n = dp_ldexp((double) st->more->drawn->noisy_count, r->count.grid_exp);
	*c = dp_ldexp((double) st->more->drawn->noisy_sum, r->sum.grid_exp);
	*q = DP_KIND_SQUARES(r->call.kind) ? dp_ldexp((double) st->more->drawn->noisy_sumsq, r->sumsq.grid_exp) : 0;
}

static int
cmp_num(Numeric a, Numeric b)
{
	return DatumGetInt32(DirectFunctionCall2(numeric_cmp, NumericGetDatum(a), NumericGetDatum(b)));
}

/*
 * dp_avg of numerics, in numeric arithmetic: midpoint + (noisy centred
 * sum) / (noisy count), clamped to [lower, upper]; the midpoint when the
 * noisy count is below 1 (as estimators.c computes it in doubles).
 */
static Numeric
avg_numeric(const DpAggState *st, const DpRelease *r)
{
	Numeric		half = DatumGetNumeric(DirectFunctionCall3(numeric_in, CStringGetDatum("0.5"),
														   ObjectIdGetDatum(InvalidOid),
														   Int32GetDatum(-1)));
	Numeric		est;

	if (ldexp((double) st->more->drawn->noisy_count, r->count.grid_exp) < 1)
		return numeric_mul_opt_error(numeric_add_opt_error(r->lower_num, r->upper_num, NULL),
									 half, NULL);
	est = numeric_add_opt_error(units_to_numeric((int128) r->lo_units + r->hi_units, r->sum.grid_exp),
								numeric_div_opt_error(units_to_numeric(st->more->drawn->noisy_sum, r->sum.grid_exp),
													  units_to_numeric(st->more->drawn->noisy_count,
																	   r->count.grid_exp),
													  NULL),
								NULL);
	if (cmp_num(est, r->lower_num) < 0)
		est = r->lower_num;
	if (cmp_num(est, r->upper_num) > 0)
		est = r->upper_num;
	return est;
}

/* the type of a call's released value */
Oid
dp_agg_value_type(const DpRelease *r)
{
	switch (r->call.kind)
	{
		case DP_COUNT_STAR:
		case DP_COUNT:
			return INT8OID;
		case DP_SUM:
			return r->call.vclass == DP_VALUE_NUMERIC ? NUMERICOID :
				r->call.vclass == DP_VALUE_INT ? INT8OID : FLOAT8OID;
		default:
			return r->call.vclass == DP_VALUE_NUMERIC ? NUMERICOID : FLOAT8OID;
	}
}

static int64
int64_plus(int64 v, double d)
{
	double		x = (double) v + d;

	if (x >= 9223372036854775807.0)
		return PG_INT64_MAX;
	if (x <= -9223372036854775808.0)
		return PG_INT64_MIN;
	return saturate_int64((int128) v + (int128) d);
}

/* the noisy units of a count or a sum released (dp_agg_draw_noise) */
static inline int128
released_units(const DpAggState *st, bool sum)
{
	if (state_in_place(st))
		return st->sum;
	return sum ? st->more->drawn->noisy_sum : st->more->drawn->noisy_count;
}

/*
 * The release of a state whose noise is drawn: its value, or, when the
 * statement asked for its error bar (error_bars.c), an estimate holding the
 * value, its 95% interval, the noise scale and the bounds (estimators.c).
 */
Datum
dp_agg_release_datum(const DpAggState *st, const DpRelease *r, bool want_estimate)
{
	DpEstimate	e;
	DpInterval	iv = {0, 0, 0};
	Oid			type = dp_agg_value_type(r);
	double		w;
	double		v = 0;

	memset(&e, 0, sizeof(e));
	e.typid = type;
	switch (r->call.kind)
	{
		case DP_COUNT_STAR:
		case DP_COUNT:
		case DP_SUM:
			{
				const DpNoiseSpec *ns = r->call.kind == DP_SUM ? &r->sum : &r->count;
				int128		units = released_units(st, r->call.kind == DP_SUM);

				/*
				 * the half-width only where it is used: a bigint or double
				 * value without its error bar (a final function per group)
				 * does without
				 */
				if (type == INT8OID)
				{
					int64		x = units_to_int64(units, ns->grid_exp);

					e.datum[DP_ESTIMATE_VALUE] = Int64GetDatum(x);
					if (want_estimate)
					{
						w = dp_release_halfwidth(r, ns, DP_CI_CONFIDENCE);
						e.datum[DP_ESTIMATE_LOW] = Int64GetDatum(int64_plus(x, -w));
						e.datum[DP_ESTIMATE_HIGH] = Int64GetDatum(int64_plus(x, w));
					}
				}
				else if (type == FLOAT8OID)
				{
					v = units_to_double(units, ns->grid_exp);
					e.datum[DP_ESTIMATE_VALUE] = Float8GetDatum(v);
					if (want_estimate)
					{
						w = dp_release_halfwidth(r, ns, DP_CI_CONFIDENCE);
						e.datum[DP_ESTIMATE_LOW] = Float8GetDatum(v - w);
						e.datum[DP_ESTIMATE_HIGH] = Float8GetDatum(v + w);
					}
				}
				else
				{
					Numeric		x = units_to_numeric(units, ns->grid_exp);

					w = dp_release_halfwidth(r, ns, DP_CI_CONFIDENCE);
					e.datum[DP_ESTIMATE_VALUE] = NumericGetDatum(round_to_noise(x, w));
					if (want_estimate)
					{
						/* the ends in numeric arithmetic, w moved up by 1e-14 */
						Numeric		wn = numeric_of(w * (1 + 1e-14));

						e.datum[DP_ESTIMATE_LOW] =
							NumericGetDatum(round_outward(numeric_sub_opt_error(x, wn, NULL), w, false));
						e.datum[DP_ESTIMATE_HIGH] =
							NumericGetDatum(round_outward(numeric_add_opt_error(x, wn, NULL), w, true));
					}
				}
				iv.scale = ns->noise_scale;
				break;
			}
		case DP_AVG:
		case DP_VAR:
		case DP_STDDEV:
			{
				double		n,
							c,
							q;

				/*
				 * the interval where it is used: a double value without its
				 * error bar (a final function per group) does without
				 */
				DpInterval *ivp = type == FLOAT8OID && !want_estimate ? NULL : &iv;

				noisy_moments(st, r, &n, &c, &q);
				if (r->call.kind == DP_AVG)
					v = dp_avg_estimate(r, n, c,
										dp_ldexp((double) ((int128) r->lo_units + r->hi_units),
												 r->sum.grid_exp), ivp);
				else if (r->call.kind == DP_VAR)
					v = dp_var_estimate(r, n, c, q, ivp);
				else
					v = dp_stddev_estimate(r, n, c, q, ivp);
				w = (iv.high - iv.low) / 2;
				if (type == FLOAT8OID)
				{
					e.datum[DP_ESTIMATE_VALUE] = Float8GetDatum(v);
					e.datum[DP_ESTIMATE_LOW] = Float8GetDatum(iv.low);
					e.datum[DP_ESTIMATE_HIGH] = Float8GetDatum(iv.high);
				}
				else
				{
					Numeric		x = r->call.kind == DP_AVG ? avg_numeric(st, r) : numeric_of(v);

					e.datum[DP_ESTIMATE_VALUE] = NumericGetDatum(round_to_noise(x, w));
					if (want_estimate)
					{
						e.datum[DP_ESTIMATE_LOW] = NumericGetDatum(interval_end(iv.low, w, false));
						e.datum[DP_ESTIMATE_HIGH] = NumericGetDatum(interval_end(iv.high, w, true));
					}
				}
				break;
			}
		default:
			elog(ERROR, "dp_agg: %s has no release of sums", dp_kind_name(r->call.kind));
	}
	if (!want_estimate)
		return e.datum[DP_ESTIMATE_VALUE];

	/* the bounds used, in the value's type; a count has none */
	e.scale = iv.scale;
	if (r->call.kind == DP_COUNT || r->call.kind == DP_COUNT_STAR)
		e.isnull[DP_ESTIMATE_LOWER] = e.isnull[DP_ESTIMATE_UPPER] = true;
	else if (type == NUMERICOID)
	{
		e.datum[DP_ESTIMATE_LOWER] = NumericGetDatum(r->lower_num);
		e.datum[DP_ESTIMATE_UPPER] = NumericGetDatum(r->upper_num);
	}
	else if (type == INT8OID)
	{
		e.datum[DP_ESTIMATE_LOWER] = Int64GetDatum(r->lower_int);
		e.datum[DP_ESTIMATE_UPPER] = Int64GetDatum(r->upper_int);
	}
	else
	{
		double		lower,
					upper;

		dp_bounds_double(r, &lower, &upper);
		e.datum[DP_ESTIMATE_LOWER] = Float8GetDatum(lower);
		e.datum[DP_ESTIMATE_UPPER] = Float8GetDatum(upper);
	}
	return dp_estimate_make(&e);
}

/*
 * does the final function return an estimate (error_bars.c)?  Its result
 * type is its call's (read from the Aggref: no lookup per group)
 */
static bool
wants_estimate(FunctionCallInfo fcinfo, const DpRelease *r)
{
	Oid			rettype = r->aggref != NULL ? r->aggref->aggtype :
		get_fn_expr_rettype(fcinfo->flinfo);

	return OidIsValid(rettype) && rettype == dp_estimate_type();
}

/* the bins a state releases from; those of no rows for an empty input */
static const DpBins *
released_bins(const DpAggMore *m)
{
	static DpBins no_rows;

	return m->bins ? m->bins : &no_rows;
}

/*
 * The bounds of a state's draw, estimated from its bins once (the draw's
 * first part, made in the state's context: states of an empty input carry
 * their own)
 */
static DpAggBounds *
drawn_bounds(DpAggState *st, DpAggDrawn *d, const DpRelease *r)
{
	DpAggMore  *m = st->more;

	if (!m->released)
	{
		if (d->bounds == NULL)
			d->bounds = MemoryContextAllocZero(GetMemoryChunkContext(st), sizeof(DpAggBounds));
		d->bounds->found = dp_bins_bounds(released_bins(m), r->histogram.laplace,
										  &d->bounds->lower, &d->bounds->upper,
										  &d->bounds->lo_bin, &d->bounds->hi_bin);
	}
	else if (d->bounds == NULL)
		elog(ERROR, "dp_agg: a state released without the bounds of its call");
	return d->bounds;
}

/*
 * The release of a call whose bounds are estimated (auto_bounds.c): the
 * bounds from the noisy histogram of its bins, then its sums clamped to
 * them, exactly, on the grid they give (release.c), and their noise, drawn
 * once.  NULL when too few rows gave bounds.  The ticket of the group (its
 * bounds and grid) is made again from the bounds kept in the state.
 */
static Datum
auto_release(FunctionCallInfo fcinfo, DpAggState *st, const DpRelease *r)
{
	DpAggDrawn *d = state_drawn(st, r);
	DpAggMore  *m = st->more;
	const DpAggBounds *b = drawn_bounds(st, d, r);
	DpRelease	lr;

	if (!m->released)
	{
		if (b->found)
		{
			int64		count;
			int128		sum,
						centred,
						squares;

			if (!dp_release_auto_grid(r, b->lower, b->upper, &lr))
				elog(ERROR, "dp_agg: the grid of estimated bounds exceeds their sensitivity");
			dp_bins_moments(released_bins(m), b->lo_bin, b->hi_bin, lr.lo_units, lr.hi_units,
							lr.row_grid_exp, lr.sq_shift, &count, &sum, &centred, &squares);
			st->count = count;
			if (r->call.kind != DP_SUM)
				d->noisy_count = count_units(st, r) + dp_noise_draw(&r->count);
			d->noisy_sum = (r->call.kind == DP_SUM ? sum : centred) + dp_noise_draw(&r->sum);
			if (DP_KIND_SQUARES(r->call.kind))
				d->noisy_sumsq = squares + dp_noise_draw(&r->sumsq);
		}
		m->released = true;
	}
	if (!b->found)
	{
		fcinfo->isnull = true;
		return (Datum) 0;
	}
	(void) dp_release_auto_grid(r, b->lower, b->upper, &lr);
	dp_plan_halfwidths(&lr);
	return dp_agg_release_datum(st, &lr, wants_estimate(fcinfo, r));
}

/* the final functions of dp_count, dp_sum, dp_avg, dp_var, dp_stddev */
static Datum
final_release(FunctionCallInfo fcinfo)
{
	DpAggEmpty	empty;
	const DpRelease *r;
	DpAggState *st = released_state(fcinfo, &empty, &r);

	feed_rows(st, r);
	if (r->auto_bounds)
		return auto_release(fcinfo, st, r);
	return dp_agg_release_datum(st, r, wants_estimate(fcinfo, r));
}

/*
 * dp_bounds(x [, epsilon]): the bounds the histogram of bins gives, as
 * (lower, upper) (integers for integer types), NULL when too few rows.
 */
Datum
dp_bounds_final(PG_FUNCTION_ARGS)
{
	DpAggEmpty	empty;
	const DpRelease *r;
	DpAggState *st = released_state(fcinfo, &empty, &r);
	const DpAggBounds *b = drawn_bounds(st, state_drawn(st, r), r);
	TupleDesc	desc;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	st->more->released = true;
	if (!b->found)
		PG_RETURN_NULL();
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "dp_agg: dp_bounds must return a composite type");
	desc = BlessTupleDesc(desc);
	values[0] = Float8GetDatum(r->call.vclass == DP_VALUE_INT ? floor(b->lower) : b->lower);
	values[1] = Float8GetDatum(r->call.vclass == DP_VALUE_INT ? ceil(b->upper) : b->upper);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

Datum
dp_count_final(PG_FUNCTION_ARGS)
{
	return final_release(fcinfo);
}

Datum
dp_sum_int_final(PG_FUNCTION_ARGS)
{
	return final_release(fcinfo);
}

Datum
dp_sum_float_final(PG_FUNCTION_ARGS)
{
	return final_release(fcinfo);
}

Datum
dp_sum_numeric_final(PG_FUNCTION_ARGS)
{
	return final_release(fcinfo);
}

Datum
dp_avg_float_final(PG_FUNCTION_ARGS)
{
	return final_release(fcinfo);
}

Datum
dp_avg_numeric_final(PG_FUNCTION_ARGS)
{
	return final_release(fcinfo);
}

Datum
dp_var_float_final(PG_FUNCTION_ARGS)
{
	return final_release(fcinfo);
}

Datum
dp_var_numeric_final(PG_FUNCTION_ARGS)
{
	return final_release(fcinfo);
}

/* dp_stddev: the same functions, under the names the catalog reads */
Datum
dp_stddev_float_final(PG_FUNCTION_ARGS)
{
	return dp_var_float_final(fcinfo);
}

Datum
dp_stddev_numeric_final(PG_FUNCTION_ARGS)
{
	return dp_var_numeric_final(fcinfo);
}

/* true to release the group (one draw per group, selection_mechanism.c) */
Datum
dp_select_final(PG_FUNCTION_ARGS)
{
	DpAggEmpty	empty;
	const DpRelease *r;
	DpAggState *st = released_state(fcinfo, &empty, &r);

	PG_RETURN_BOOL(st->more->drawn->noisy_count != 0);
}

/*
 * true to release the group: it is a key of the statement's public domain,
 * whatever its rows (public_domain.c)
 */
Datum
dp_public_final(PG_FUNCTION_ARGS)
{
	DpAggEmpty	empty;
	const DpRelease *r;
	DpAggState *st = released_state(fcinfo, &empty, &r);

	PG_RETURN_BOOL(st->more->drawn->noisy_count != 0);
}

/*
 * dp_agg_internal.dp_top_k(internal, integer, float8): the handle of the group's
 * count in the store of top-k (top_k.c), which tells nothing about it
 */
Datum
dp_top_k_final(PG_FUNCTION_ARGS)
{
	DpAggEmpty	empty;
	const DpRelease *r;
	DpAggState *st = released_state(fcinfo, &empty, &r);

	PG_RETURN_INT64((int64) st->more->drawn->noisy_count);
}
