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

#include "auto_bounds.h"
#include "compat.h"
#include "dist_exec.h"
#include "dist_state.h"
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
PG_FUNCTION_INFO_V1(dp_agg_serialize);
PG_FUNCTION_INFO_V1(dp_agg_deserialize);
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
PG_FUNCTION_INFO_V1(dp_unit_bound_var_final);
PG_FUNCTION_INFO_V1(dp_unit_bound_stddev_final);
PG_FUNCTION_INFO_V1(dp_select_trans);
PG_FUNCTION_INFO_V1(dp_select_final);
PG_FUNCTION_INFO_V1(dp_public_trans);
PG_FUNCTION_INFO_V1(dp_public_final);
PG_FUNCTION_INFO_V1(dp_top_k_final);
PG_FUNCTION_INFO_V1(dp_dist_trans);
PG_FUNCTION_INFO_V1(dp_dist_final);
PG_FUNCTION_INFO_V1(dp_dist_combine);
PG_FUNCTION_INFO_V1(dp_dist_release);
PG_FUNCTION_INFO_V1(dp_unit_bound_count_final);
PG_FUNCTION_INFO_V1(dp_unit_bound_sum_final);
PG_FUNCTION_INFO_V1(dp_unit_bound_avg_final);
PG_FUNCTION_INFO_V1(dp_unit_collect_trans);
PG_FUNCTION_INFO_V1(dp_unit_pick_trans);

/*
 * Transition state.  New fields (per-unit contribution bounds, say) go at
 * the end, with a new serialization version.
 */
typedef struct DpAggState
{
	const DpRelease *release;	/* ticket; NULL in a deserialized state */
	uint64		fingerprint;	/* the accumulation units it was built in */
	int64		count;			/* rows counted (non-NULL, non-NaN) */
	int128		sum;			/* sum of clamped, rounded values, in units */
	int128		sumsq;			/* dp_var, dp_stddev: sum of centred squares */
	bool		released;		/* noise drawn: the fields below are final */
	int128		noisy_count;
	int128		noisy_sum;
	int128		noisy_sumsq;
	/* dp_agg.unit_pick_bound_* (privacy units, k = 1): rows of priority pick only */
	bool		picked;
	int64		pick;
	/* bounds left out (auto_bounds.c): the rows by bin, and what was found */
	DpBins	   *bins;
	bool		auto_found;
	double		auto_lower;
	double		auto_upper;
	int			auto_lo_bin;
	int			auto_hi_bin;
} DpAggState;

/*
 * Serialized form (between the processes of one server only): version,
 * kind, flags (bit 0: picked; bit 1: bins follow, with squares if bit 2),
 * fingerprint, count, sum, sum of squares, priority, then the bins.
 */
#define DP_STATE_SERIAL_VERSION 3
#define DP_STATE_SERIAL_SIZE (1 + 1 + 1 + 8 + 8 + 16 + 16 + 8)
#define DP_STATE_FLAG_PICKED 1
#define DP_STATE_FLAG_BINS 2
#define DP_STATE_FLAG_SQUARES 4

static DpAggState *
new_state(FunctionCallInfo fcinfo)
{
	const DpRelease *r = dp_release_for_call(fcinfo, "DP aggregate");
	MemoryContext aggcontext;
	DpAggState *st;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "dp_agg transition function called in non-aggregate context");
	st = MemoryContextAllocZero(aggcontext, sizeof(DpAggState));
	st->release = r;
	st->fingerprint = r->fingerprint;
	if (r->auto_bounds)
		st->bins = dp_bins_new(aggcontext, DP_KIND_SQUARES(r->call.kind));
	return st;
}

#define GET_STATE() \
	(PG_ARGISNULL(0) ? new_state(fcinfo) : (DpAggState *) PG_GETARG_POINTER(0))

/* ---------- transition functions ---------- */

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
	DpAggState *st = GET_STATE();

	if (!PG_ARGISNULL(1))
		st->count++;
	PG_RETURN_POINTER(st);
}

/*
 * dp_var, dp_stddev: the centred square of a row of u units, 2 z^2 - D^2
 * with z = 2 u - (r(l) + r(u)) in half units (|z| <= D <= 2^62, so
 * 2 z^2 < 2^125), rounded to units of 2^sq_shift, half up (release.c)
 */
static inline int128
centred_square(const DpRelease *r, int64 u)
{
	int64		z = 2 * u - r->sq_mid;
	int128		q = 2 * ((int128) z * z) - r->sq_d2;

	if (r->sq_shift > 0)
		q = (q + ((int128) 1 << (r->sq_shift - 1))) >> r->sq_shift;
	return q;
}

/* add one clamped row of u units */
static inline void
accumulate_units(DpAggState *st, int64 u)
{
	st->sum += u;
	st->count++;
	if (unlikely(st->release->squares))
		st->sumsq += centred_square(st->release, u);
}

static inline void
accumulate_int(DpAggState *st, int64 v)
{
	const DpRelease *r = st->release;

	if (unlikely(r->auto_bounds))
	{
		dp_bins_add(st->bins, (double) v);
		return;
	}
	if (v < r->lower_int)
		v = r->lower_int;
	else if (v > r->upper_int)
		v = r->upper_int;
	accumulate_units(st, dp_round_int(v, r->row_grid_exp));
}

static inline void
accumulate_float(DpAggState *st, double v)
{
	const DpRelease *r = st->release;

	if (isnan(v))
		return;					/* skipped, and not counted by dp_avg */
	if (unlikely(r->auto_bounds))
	{
		dp_bins_add(st->bins, v);
		return;
	}
	if (v < r->lower_float)
		v = r->lower_float;
	else if (v > r->upper_float)
		v = r->upper_float;		/* also clamps +-Infinity */
	accumulate_units(st, dp_round_float(v, r->row_mult, r->row_grid_exp));
}

/* dp_sum and dp_avg for each value type; bounds come from the ticket */
Datum
dp_sum_int2_trans(PG_FUNCTION_ARGS)
{
	DpAggState *st = GET_STATE();

	if (!PG_ARGISNULL(1))
		accumulate_int(st, PG_GETARG_INT16(1));
	PG_RETURN_POINTER(st);
}

Datum
dp_sum_int4_trans(PG_FUNCTION_ARGS)
{
	DpAggState *st = GET_STATE();

	if (!PG_ARGISNULL(1))
		accumulate_int(st, PG_GETARG_INT32(1));
	PG_RETURN_POINTER(st);
}

Datum
dp_sum_int8_trans(PG_FUNCTION_ARGS)
{
	DpAggState *st = GET_STATE();

	if (!PG_ARGISNULL(1))
		accumulate_int(st, PG_GETARG_INT64(1));
	PG_RETURN_POINTER(st);
}

Datum
dp_sum_float4_trans(PG_FUNCTION_ARGS)
{
	DpAggState *st = GET_STATE();

	if (!PG_ARGISNULL(1))
		accumulate_float(st, PG_GETARG_FLOAT4(1));
	PG_RETURN_POINTER(st);
}

Datum
dp_sum_float8_trans(PG_FUNCTION_ARGS)
{
	DpAggState *st = GET_STATE();

	if (!PG_ARGISNULL(1))
		accumulate_float(st, PG_GETARG_FLOAT8(1));
	PG_RETURN_POINTER(st);
}

static void
accumulate_numeric(DpAggState *st, Datum d)
{
	const DpRelease *r = st->release;
	Numeric		v;
	int64		units;

	if (unlikely(r->auto_bounds))
	{
		/* as a double: a monotone conversion (NaN skipped, infinities clamped) */
		v = DatumGetNumeric(d);
		if (!numeric_is_nan(v))
			dp_bins_add(st->bins, DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, d)));
		return;
	}
	/* the common case, read in place (see numeric_units.c) */
	if (dp_numeric_units(d, r->row_grid_exp, &units))
	{
		accumulate_units(st, Min(Max(units, r->lo_units), r->hi_units));
		return;
	}

	/* the rest with numeric arithmetic (NaN is skipped, infinities clamped) */
	v = DatumGetNumeric(d);
	if (numeric_is_nan(v))
		return;
	if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, NumericGetDatum(v),
										  NumericGetDatum(r->lower_num))) < 0)
		v = r->lower_num;
	else if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, NumericGetDatum(v),
											   NumericGetDatum(r->upper_num))) > 0)
		v = r->upper_num;
	accumulate_units(st, dp_round_numeric(v, r->row_mult_num));
}

Datum
dp_sum_numeric_trans(PG_FUNCTION_ARGS)
{
	DpAggState *st = GET_STATE();

	if (!PG_ARGISNULL(1))
		accumulate_numeric(st, PG_GETARG_DATUM(1));
	PG_RETURN_POINTER(st);
}

/*
 * dp_agg.dp_select(internal, integer): every input row of the group is one
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
 * dp_agg.dp_public(internal, boolean, bigint): counts the group's rows of
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
	if (st->fingerprint != r->fingerprint)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("partial results of %s were accumulated with different parameters",
						dp_kind_name(r->call.kind)),
				 errdetail("A parallel worker priced the call differently from the leader."),
				 errhint("Do not change dp_agg settings while a statement is running.")));
}

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
		s1 = MemoryContextAllocZero(aggcontext, sizeof(DpAggState));
		s1->release = r;
		s1->fingerprint = r->fingerprint;
		s1->picked = s2->picked;
		s1->pick = s2->pick;
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
		s1->count = 0;
		s1->sum = 0;
		s1->sumsq = 0;
	}
	if ((s1->bins != NULL || s2->bins != NULL) != r->auto_bounds)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid partial state of %s", dp_kind_name(r->call.kind)),
				 errdetail("Only aggregates whose bounds are estimated keep their rows by bin.")));
	if (s2->bins != NULL)
	{
		if (s1->bins == NULL)
			s1->bins = dp_bins_new(aggcontext, s2->bins->squares);
		dp_bins_merge(s1->bins, s2->bins);
	}
	s1->count += s2->count;
	s1->sum += s2->sum;
	s1->sumsq += s2->sumsq;
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

static void
put_bytes(char **p, const void *v, size_t n)
{
	memcpy(*p, v, n);
	*p += n;
}

static void
get_bytes(const char **p, void *v, size_t n)
{
	memcpy(v, *p, n);
	*p += n;
}

Datum
dp_agg_serialize(PG_FUNCTION_ARGS)
{
	DpAggState *st;
	bytea	   *result;
	char	   *p;
	uint8		version = DP_STATE_SERIAL_VERSION;
	uint8		kind;
	uint8		flags;
	Size		size;

	check_split(fcinfo, true, "dp_agg.serialfn");
	st = (DpAggState *) PG_GETARG_POINTER(0);
	kind = st->release ? (uint8) st->release->call.kind : 0xff;
	flags = (st->picked ? DP_STATE_FLAG_PICKED : 0) |
		(st->bins ? DP_STATE_FLAG_BINS : 0) |
		(st->bins && st->bins->squares ? DP_STATE_FLAG_SQUARES : 0);
	size = DP_STATE_SERIAL_SIZE + (st->bins ? dp_bins_serial_size(st->bins->squares) : 0);

	result = (bytea *) palloc(VARHDRSZ + size);
	SET_VARSIZE(result, VARHDRSZ + size);
	p = VARDATA(result);
	put_bytes(&p, &version, 1);
	put_bytes(&p, &kind, 1);
	put_bytes(&p, &flags, 1);
	put_bytes(&p, &st->fingerprint, 8);
	put_bytes(&p, &st->count, 8);
	put_bytes(&p, &st->sum, 16);
	put_bytes(&p, &st->sumsq, 16);
	put_bytes(&p, &st->pick, 8);
	if (st->bins)
		dp_bins_serialize(st->bins, p);
	PG_RETURN_BYTEA_P(result);
}

/*
 * A partial state from another process, validated: its form, its kind,
 * a count of at least 0, no sum of squares but for kinds that have one.
 * Combining then checks its units against the call's (check_units) and its
 * level (a priority only for the aggregates that pick a unit's group).
 */
Datum
dp_agg_deserialize(PG_FUNCTION_ARGS)
{
	bytea	   *b;
	const char *p;
	uint8		version,
				kind,
				flags;
	DpAggState *st;

	check_split(fcinfo, false, "dp_agg.deserialfn");
	b = PG_GETARG_BYTEA_PP(0);
	p = VARDATA_ANY(b);
	if (VARSIZE_ANY_EXHDR(b) < DP_STATE_SERIAL_SIZE)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid serialized dp_agg state")));
	st = palloc0(sizeof(DpAggState));
	get_bytes(&p, &version, 1);
	get_bytes(&p, &kind, 1);
	get_bytes(&p, &flags, 1);
	get_bytes(&p, &st->fingerprint, 8);
	get_bytes(&p, &st->count, 8);
	get_bytes(&p, &st->sum, 16);
	get_bytes(&p, &st->sumsq, 16);
	get_bytes(&p, &st->pick, 8);
	st->picked = (flags & DP_STATE_FLAG_PICKED) != 0;
	if (flags & DP_STATE_FLAG_BINS)
	{
		bool		squares = (flags & DP_STATE_FLAG_SQUARES) != 0;

		st->bins = dp_bins_new(CurrentMemoryContext, squares);
		if (VARSIZE_ANY_EXHDR(b) != DP_STATE_SERIAL_SIZE + dp_bins_serial_size(squares) ||
			!dp_bins_deserialize(st->bins, p))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("invalid serialized dp_agg state")));
	}
	else if (VARSIZE_ANY_EXHDR(b) != DP_STATE_SERIAL_SIZE ||
			 (flags & DP_STATE_FLAG_SQUARES))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid serialized dp_agg state")));
	if (version != DP_STATE_SERIAL_VERSION || kind > DP_KIND_MAX ||
		(flags & ~(DP_STATE_FLAG_PICKED | DP_STATE_FLAG_BINS | DP_STATE_FLAG_SQUARES)) != 0 ||
		st->count < 0 ||
		(st->sumsq != 0 && !DP_KIND_SQUARES(kind)) || (!st->picked && st->pick != 0))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid serialized dp_agg state")));
	PG_RETURN_POINTER(st);
}

/* ---------- final functions: the only place noise is drawn ---------- */

/* the number of rows in units of the count's grid 2^k, k <= 0 */
static inline int128
count_units(const DpAggState *st, const DpRelease *r)
{
	return (int128) st->count << (-r->count.grid_exp);
}

/* draw the noise of a state's releases, once */
static void
draw_noise(DpAggState *st, const DpRelease *r)
{
	if (st->released)
		return;
	switch (r->call.kind)
	{
		case DP_COUNT_STAR:
		case DP_COUNT:
			st->noisy_count = count_units(st, r) + dp_noise_draw(&r->count);
			break;
		case DP_SUM:
			st->noisy_sum = st->sum + dp_noise_draw(&r->sum);
			break;
		case DP_AVG:
			/* both draws always happen: the work is the same for any data */
			st->noisy_count = count_units(st, r) + dp_noise_draw(&r->count);
			st->noisy_sum = 2 * st->sum -
				(int128) st->count * ((int128) r->lo_units + r->hi_units) +
				dp_noise_draw(&r->sum);
			break;
		case DP_VAR:
		case DP_STDDEV:
			/* the three draws always happen */
			st->noisy_count = count_units(st, r) + dp_noise_draw(&r->count);
			st->noisy_sum = 2 * st->sum -
				(int128) st->count * ((int128) r->lo_units + r->hi_units) +
				dp_noise_draw(&r->sum);
			st->noisy_sumsq = st->sumsq + dp_noise_draw(&r->sumsq);
			break;
		case DP_SELECT:
			st->noisy_count = dp_selection_draw(&r->selection, st->count) ? 1 : 0;
			break;
		case DP_PERCENTILE:
		case DP_MEDIAN:
		case DP_BOUNDS:
			elog(ERROR, "dp_agg: %s has no sums to release", dp_kind_name(r->call.kind));
			break;
		case DP_PUBLIC:
			/* a group of the domain has its own row: no draw, nothing to hide */
			st->noisy_count = st->count > 0 ? 1 : 0;
			break;
		case DP_TOP_K:
			/* the count goes to the store of top-k, which ranks all groups at once */
			st->noisy_count = dp_top_k_handle(r, st->count);
			break;
	}
	st->released = true;
}

/*
 * The state to release, with its noise drawn (once).  An empty input gives
 * a NULL state: the release is then the noise alone.
 */
static DpAggState *
released_state(FunctionCallInfo fcinfo, DpAggState *empty, const DpRelease **rp)
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
		empty->fingerprint = r->fingerprint;
		st = empty;
	}
	else
		st = (DpAggState *) PG_GETARG_POINTER(0);
	check_units(st, r);
	/* with estimated bounds, the noise follows the bounds (auto_release) */
	if (!r->auto_bounds)
		draw_noise(st, r);
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
	double		d = ldexp((double) units, k);

	if (d > DBL_MAX)
		return DBL_MAX;
	if (d < -DBL_MAX)
		return -DBL_MAX;
	return d;
}

static Numeric
int128_to_numeric(int128 v)
{
	char		buf[48];
	char	   *p = buf + sizeof(buf);
	uint128		u = v < 0 ? -(uint128) v : (uint128) v;

	*--p = '\0';
	do
	{
		*--p = (char) ('0' + (int) (u % 10));
		u /= 10;
	} while (u != 0);
	if (v < 0)
		*--p = '-';
	return DatumGetNumeric(DirectFunctionCall3(numeric_in, CStringGetDatum(p),
											   ObjectIdGetDatum(InvalidOid),
											   Int32GetDatum(-1)));
}

/* units * 2^k as an exact numeric */
static Numeric
units_to_numeric(int128 units, int k)
{
	return numeric_mul_opt_error(int128_to_numeric(units), dp_numeric_pow2(k), NULL);
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
	*n = ldexp((double) st->noisy_count, r->count.grid_exp);
	*c = ldexp((double) st->noisy_sum, r->sum.grid_exp);
	*q = DP_KIND_SQUARES(r->call.kind) ? ldexp((double) st->noisy_sumsq, r->sumsq.grid_exp) : 0;
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

	if (ldexp((double) st->noisy_count, r->count.grid_exp) < 1)
		return numeric_mul_opt_error(numeric_add_opt_error(r->lower_num, r->upper_num, NULL),
									 half, NULL);
	est = numeric_add_opt_error(units_to_numeric((int128) r->lo_units + r->hi_units, r->sum.grid_exp),
								numeric_div_opt_error(units_to_numeric(st->noisy_sum, r->sum.grid_exp),
													  units_to_numeric(st->noisy_count,
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
static Oid
value_type(const DpRelease *r)
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

/*
 * The release of a state whose noise is drawn: its value, or, when the
 * statement asked for its error bar (error_bars.c), an estimate holding the
 * value, its 95% interval, the noise scale and the bounds (estimators.c).
 */
static Datum
release_datum(const DpAggState *st, const DpRelease *r, bool want_estimate)
{
	DpEstimate	e;
	DpInterval	iv = {0, 0, 0};
	Oid			type = value_type(r);
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
				int128		units = r->call.kind == DP_SUM ? st->noisy_sum : st->noisy_count;

				w = dp_release_halfwidth(r, ns, DP_CI_CONFIDENCE);
				if (type == INT8OID)
				{
					int64		x = units_to_int64(units, ns->grid_exp);

					e.datum[DP_ESTIMATE_VALUE] = Int64GetDatum(x);
					e.datum[DP_ESTIMATE_LOW] = Int64GetDatum(int64_plus(x, -w));
					e.datum[DP_ESTIMATE_HIGH] = Int64GetDatum(int64_plus(x, w));
				}
				else if (type == FLOAT8OID)
				{
					v = units_to_double(units, ns->grid_exp);
					e.datum[DP_ESTIMATE_VALUE] = Float8GetDatum(v);
					e.datum[DP_ESTIMATE_LOW] = Float8GetDatum(v - w);
					e.datum[DP_ESTIMATE_HIGH] = Float8GetDatum(v + w);
				}
				else
				{
					Numeric		x = units_to_numeric(units, ns->grid_exp);

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

				noisy_moments(st, r, &n, &c, &q);
				if (r->call.kind == DP_AVG)
					v = dp_avg_estimate(r, n, c,
										ldexp((double) ((int128) r->lo_units + r->hi_units),
											  r->sum.grid_exp), &iv);
				else if (r->call.kind == DP_VAR)
					v = dp_var_estimate(r, n, c, q, &iv);
				else
					v = dp_stddev_estimate(r, n, c, q, &iv);
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

/* does the final function return an estimate (error_bars.c)? */
static bool
wants_estimate(FunctionCallInfo fcinfo)
{
	Oid			rettype = get_fn_expr_rettype(fcinfo->flinfo);

	return OidIsValid(rettype) && rettype == dp_estimate_type();
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
	static DpBins no_rows;		/* an empty input: no bins */
	const DpBins *bins = st->bins ? st->bins : &no_rows;
	DpRelease	lr;

	if (!st->released)
	{
		st->auto_found = dp_bins_bounds(bins, r->histogram.laplace, &st->auto_lower,
										&st->auto_upper, &st->auto_lo_bin, &st->auto_hi_bin);
		if (st->auto_found)
		{
			int64		count;
			int128		sum,
						centred,
						squares;

			if (!dp_release_auto_grid(r, st->auto_lower, st->auto_upper, &lr))
				elog(ERROR, "dp_agg: the grid of estimated bounds exceeds their sensitivity");
			dp_bins_moments(bins, st->auto_lo_bin, st->auto_hi_bin, lr.lo_units, lr.hi_units,
							lr.row_grid_exp, lr.sq_shift, &count, &sum, &centred, &squares);
			st->count = count;
			if (r->call.kind != DP_SUM)
				st->noisy_count = count_units(st, r) + dp_noise_draw(&r->count);
			st->noisy_sum = (r->call.kind == DP_SUM ? sum : centred) + dp_noise_draw(&r->sum);
			if (DP_KIND_SQUARES(r->call.kind))
				st->noisy_sumsq = squares + dp_noise_draw(&r->sumsq);
		}
		st->released = true;
	}
	if (!st->auto_found)
	{
		fcinfo->isnull = true;
		return (Datum) 0;
	}
	(void) dp_release_auto_grid(r, st->auto_lower, st->auto_upper, &lr);
	dp_plan_halfwidths(&lr);
	return release_datum(st, &lr, wants_estimate(fcinfo));
}

/* the final functions of dp_count, dp_sum, dp_avg, dp_var, dp_stddev */
static Datum
final_release(FunctionCallInfo fcinfo)
{
	DpAggState	empty;
	const DpRelease *r;
	DpAggState *st = released_state(fcinfo, &empty, &r);

	if (r->auto_bounds)
		return auto_release(fcinfo, st, r);
	return release_datum(st, r, wants_estimate(fcinfo));
}

/*
 * dp_bounds(x [, epsilon]): the bounds the histogram of bins gives, as
 * (lower, upper) (integers for integer types), NULL when too few rows.
 */
Datum
dp_bounds_final(PG_FUNCTION_ARGS)
{
	static DpBins no_rows;
	DpAggState	empty;
	const DpRelease *r;
	DpAggState *st = released_state(fcinfo, &empty, &r);
	TupleDesc	desc;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	if (!st->released)
	{
		st->auto_found = dp_bins_bounds(st->bins ? st->bins : &no_rows, r->histogram.laplace,
										&st->auto_lower, &st->auto_upper,
										&st->auto_lo_bin, &st->auto_hi_bin);
		st->released = true;
	}
	if (!st->auto_found)
		PG_RETURN_NULL();
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "dp_agg: dp_bounds must return a composite type");
	desc = BlessTupleDesc(desc);
	values[0] = Float8GetDatum(r->call.vclass == DP_VALUE_INT ? floor(st->auto_lower) : st->auto_lower);
	values[1] = Float8GetDatum(r->call.vclass == DP_VALUE_INT ? ceil(st->auto_upper) : st->auto_upper);
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

/* ---------- DP statements on Citus tables (dist_plan.c, dist_exec.c) ---------- */

static void
not_in_aggregate(const char *fname)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s may only run inside the DP statements dp_agg makes for Citus tables", fname),
			 errdetail("It accumulates or releases the partial states of a signed fragment.")));
}

/*
 * Final function of dp_agg.sum(spec [, value]) on a worker: the state, or,
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
		not_in_aggregate("dp_agg.dist_finalfn");
	if (!PG_ARGISNULL(0))
		PG_RETURN_POINTER(PG_GETARG_POINTER(0));
	r = dp_release_for_call(fcinfo, "dp_agg.sum");
	if (r->dist_nonce == NULL)
		not_in_aggregate("dp_agg.dist_finalfn");
	ds = dp_dist_state_new(CurrentMemoryContext, r->call.kind, r->dist_nonce, r->fingerprint);
	PG_RETURN_POINTER(ds);
}

/*
 * dp_agg.sum(spec [, value]) on a worker: the rows and the clamped
 * sum of a signed fragment, in the units its ticket gives (a ticket exists
 * only for a verified signature); the state is modified in place.
 */
Datum
dp_dist_trans(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	DpDistState *ds;
	DpAggState	st;
	const DpRelease *r;

	/*
	 * A state with a ticket was made below, in this aggregate: a state read
	 * by the type's input function, or copied, has none.  So the aggregate
	 * context is checked once, when the state is made.
	 */
	if (PG_ARGISNULL(0))
	{
		if (!AggCheckCallContext(fcinfo, &aggcontext))
			not_in_aggregate("dp_agg.dist_transfn");
		r = dp_release_for_call(fcinfo, "dp_agg.sum");
		if (r->dist_nonce == NULL)
			not_in_aggregate("dp_agg.dist_transfn");
		ds = dp_dist_state_new(aggcontext, r->call.kind, r->dist_nonce, r->fingerprint);
		ds->release = r;
	}
	else
	{
		ds = (DpDistState *) PG_GETARG_POINTER(0);
		r = ds->release;
		if (r == NULL)
			not_in_aggregate("dp_agg.dist_transfn");
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
		st.release = r;
		st.count = ds->count;
		st.sum = ds->sum;
		st.sumsq = ds->sumsq;
		switch (r->call.valtype)
		{
			case INT2OID:
				accumulate_int(&st, PG_GETARG_INT16(2));
				break;
			case INT4OID:
				accumulate_int(&st, PG_GETARG_INT32(2));
				break;
			case INT8OID:
				accumulate_int(&st, PG_GETARG_INT64(2));
				break;
			case FLOAT4OID:
				accumulate_float(&st, PG_GETARG_FLOAT4(2));
				break;
			case FLOAT8OID:
				accumulate_float(&st, PG_GETARG_FLOAT8(2));
				break;
			default:
				accumulate_numeric(&st, PG_GETARG_DATUM(2));
				break;
		}
		ds->count = st.count;
		ds->sum = st.sum;
		ds->sumsq = st.sumsq;
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
 * dp_agg.sum(dp_agg.dist_state) on the coordinator: the sum of the states
 * of the same statement and units
 */
Datum
dp_dist_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	DpDistState *s1;
	DpDistState *s2;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		not_in_aggregate("dp_agg.dist_combinefn");
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
 * dp_agg.dist_release(state, call, NULL::type) on the coordinator: the
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
	Datum		v;
	int16		typlen;
	bool		typbyval;
	Oid			restype;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		not_in_aggregate("dp_agg.dist_release");
	ds = (DpDistState *) PG_DETOAST_DATUM(PG_GETARG_DATUM(0));
	r = dp_dist_slot(ds, PG_GETARG_INT32(1), &slot, &cxt);
	if (slot->done)
		PG_RETURN_DATUM(slot->value);

	memset(&st, 0, sizeof(st));
	st.release = r;
	st.fingerprint = ds->fingerprint;
	st.count = ds->count;
	st.sum = ds->sum;
	st.sumsq = ds->sumsq;
	restype = get_fn_expr_rettype(fcinfo->flinfo);
	if (restype != value_type(r) && restype != dp_estimate_type())
		not_in_aggregate("dp_agg.dist_release");
	draw_noise(&st, r);
	v = release_datum(&st, r, restype == dp_estimate_type());
	get_typlenbyval(restype, &typlen, &typbyval);
	oldcxt = MemoryContextSwitchTo(cxt);
	slot->value = datumCopy(v, typbyval, typlen);
	MemoryContextSwitchTo(oldcxt);
	slot->done = true;
	PG_RETURN_DATUM(slot->value);
}

/* true to release the group (one draw per group, selection_mechanism.c) */
Datum
dp_select_final(PG_FUNCTION_ARGS)
{
	DpAggState	empty;
	const DpRelease *r;
	DpAggState *st = released_state(fcinfo, &empty, &r);

	PG_RETURN_BOOL(st->noisy_count != 0);
}

/*
 * true to release the group: it is a key of the statement's public domain,
 * whatever its rows (public_domain.c)
 */
Datum
dp_public_final(PG_FUNCTION_ARGS)
{
	DpAggState	empty;
	const DpRelease *r;
	DpAggState *st = released_state(fcinfo, &empty, &r);

	PG_RETURN_BOOL(st->noisy_count != 0);
}

/*
 * dp_agg.dp_top_k(internal, integer, float8): the handle of the group's
 * count in the store of top-k (top_k.c), which tells nothing about it
 */
Datum
dp_top_k_final(PG_FUNCTION_ARGS)
{
	DpAggState	empty;
	const DpRelease *r;
	DpAggState *st = released_state(fcinfo, &empty, &r);

	PG_RETURN_INT64((int64) st->noisy_count);
}

/* ---------- privacy units (privacy_unit.c) ---------- */

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
	if (st != NULL && st->picked != (r->call.unit == DP_UNIT_PICK))
		elog(ERROR, "dp_agg: bounding function of a state of another level");
	*rp = r;
	*rows = st ? st->count : 0;
	*count = Min(*rows, (int64) r->unit_rows);
	*sum = st ? st->sum : 0;
	*sumsq = st ? st->sumsq : 0;
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
	if (fingerprint != st->fingerprint)
		elog(ERROR, "dp_agg: contribution of a privacy unit accumulated with other parameters");
	st->count += count;
	st->sum += sum;
	st->sumsq += sumsq;
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
 * in the one group dp_agg.unit_pick names: each unit is one row of level 1,
 * so it never contributes to more than one group, and the bounding final
 * function bounds what it contributes there.
 */
Datum
dp_unit_pick_trans(PG_FUNCTION_ARGS)
{
	int			parg = PG_NARGS() - 1;
	DpAggState *st = PG_ARGISNULL(0) ? NULL : (DpAggState *) PG_GETARG_POINTER(0);
	int64		p;

	if (parg < 1 || PG_ARGISNULL(parg))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("dp_agg.unit_pick_bound aggregates need a priority"),
				 errdetail("The priority is dp_agg.unit_priority of the unit and the group keys, never NULL."),
				 errhint("The rewrite of privacy units makes their calls (see \"Privacy units\" in the dp_agg README).")));
	p = PG_GETARG_INT64(parg);
	if (st == NULL)
	{
		st = new_state(fcinfo);
		st->picked = true;
		st->pick = p;
	}
	else if (p > st->pick)
		PG_RETURN_POINTER(st);
	else if (p < st->pick)
	{
		st->pick = p;
		st->count = 0;
		st->sum = 0;
		st->sumsq = 0;
	}
	fcinfo->args[0].value = PointerGetDatum(st);
	fcinfo->args[0].isnull = false;
	return pick_inner_transition(st->release) (fcinfo);
}
