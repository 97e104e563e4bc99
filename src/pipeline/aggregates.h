/*-------------------------------------------------------------------------
 *
 * aggregates.h
 *	  The transition state of the DP aggregates, and the accumulation of
 *	  one row into it, shared by the aggregates of local statements
 *	  (aggregates.c), of Citus statements (dist_aggregates.c) and of
 *	  privacy units (unit_aggregates.c).
 *
 * The accumulation functions are inline: they run for every row.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_AGGREGATES_H
#define DP_AGG_AGGREGATES_H

#include <math.h>

#include "fmgr.h"
#include "nodes/execnodes.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "auto_bounds.h"
#include "grid.h"
#include "numeric_units.h"
#include "registry.h"
#include "release.h"

/* the bounds a final function estimated for a call without bounds (auto_bounds.c) */
typedef struct DpAggBounds
{
	bool		found;
	double		lower;
	double		upper;
	int			lo_bin;
	int			hi_bin;
} DpAggBounds;

/*
 * What the final function found and drew for a state, once: its noisy
 * sums and, for bounds left out, the bounds found.  Made when the state is
 * released, so that the per-row part (DpAggMore) stays small; 64 bytes, so
 * that with a DpAggMore it is one chunk of 128 (state_drawn: every group
 * of a GROUP BY has one).
 */
typedef struct DpAggDrawn
{
	int128		noisy_count;
	int128		noisy_sum;
	int128		noisy_sumsq;
	DpAggBounds *bounds;		/* estimated bounds: made with the draw */
} DpAggDrawn;

/*
 * What a state needs beyond its rows and sum: allocated with the state for
 * the calls that need it at every row (sums of squares, bins, priority),
 * else when the state is deserialized or released.  64 bytes, the fields
 * a row reads first: with its DpAggState, in one chunk for the states of
 * level 1 of the fused path of privacy units (dp_agg_new_more_state), it
 * is one allocation of 128 bytes per unit.
 */
typedef struct DpAggMore
{
	uint64		fingerprint;	/* the accumulation units it was built in */
	/* dp_agg_internal.unit_pick_bound_* (privacy units, k = 1): rows of priority pick only */
	int64		pick;
	bool		picked;
	bool		released;		/* noise drawn: *drawn is final (none in
								 * dp_agg_released_in_place: the value is in
								 * the state's sum) */
	int64		skipped;		/* rows not counted (NULL, NaN): with count, the
								 * group's rows, for a fused selection */
	int128		sumsq;			/* dp_var, dp_stddev: sum of centred squares */
	DpBins	   *bins;			/* bounds left out: the rows by bin */
	DpAggDrawn *drawn;			/* made by the final function (state_drawn) */
} DpAggMore;

/*
 * Transition state: 32 bytes.  Its ticket is the call's (fn_extra of the
 * function called, registry.c), not a field.  more == NULL means: units of
 * the call that made it, no squares, no priority, no bins, not released;
 * more == &dp_agg_released_in_place: the same, released, sum holding the
 * noisy value of a count or a sum.
 */
typedef struct DpAggState
{
	int128		sum;			/* sum of clamped, rounded values, in units */
	int64		count;			/* rows counted (non-NULL, non-NaN) */
	DpAggMore  *more;
} DpAggState;

/* a state with its second part in one chunk (dp_agg_new_more_state) */
typedef struct DpAggStateMore
{
	DpAggState	st;
	DpAggMore	more;
} DpAggStateMore;

/* a second part with its third, made together when a state is released */
typedef struct DpAggMoreDrawn
{
	DpAggMore	more;
	DpAggDrawn	drawn;
} DpAggMoreDrawn;

/* a state for an empty input (the final function's NULL state) */
typedef struct DpAggEmpty
{
	DpAggState	st;
	DpAggMore	more;
	DpAggDrawn	drawn;
	DpAggBounds bounds;
} DpAggEmpty;

/* the ticket of the call whose support function runs (registry.c) */
static inline const DpRelease *
call_release(FunctionCallInfo fcinfo)
{
	if (likely(fcinfo->flinfo->fn_extra != NULL))
		return (const DpRelease *) fcinfo->flinfo->fn_extra;
	return dp_release_for_call(fcinfo, "DP aggregate");
}

/*
 * The second part of every state released in place: a count or a sum whose
 * state had no second part keeps its noisy value in its sum field
 * (dp_agg_draw_noise), so that releasing the groups of a GROUP BY
 * allocates nothing.  Read-only: such a state takes no more rows.
 */
extern const DpAggMore dp_agg_released_in_place;

static inline bool
state_in_place(const DpAggState *st)
{
	return st->more == &dp_agg_released_in_place;
}

/* a state's second part, made on first need, in the state's context */
static inline DpAggMore *
state_more(DpAggState *st, const DpRelease *r)
{
	if (unlikely(state_in_place(st)))
		elog(ERROR, "dp_agg: a released state cannot take rows");
	if (st->more == NULL)
	{
		st->more = MemoryContextAllocZero(GetMemoryChunkContext(st), sizeof(DpAggMore));
		st->more->fingerprint = r->fingerprint;
	}
	return st->more;
}

/*
 * What the final function draws for a state, made on first need in the
 * state's context (st is the chunk: a DpAggMore may be inside it)
 */
static inline DpAggDrawn *
state_drawn(DpAggState *st, const DpRelease *r)
{
	DpAggMore  *m;

	if (unlikely(state_in_place(st)))
		elog(ERROR, "dp_agg: a state released in place has no draws");
	StaticAssertStmt(sizeof(DpAggMoreDrawn) <= 128,
					 "a second part with its draw fits a chunk of 128 bytes");
	if (st->more == NULL)
	{
		/* a state that had no second part: both parts in one allocation */
		DpAggMoreDrawn *md = MemoryContextAllocZero(GetMemoryChunkContext(st),
													sizeof(DpAggMoreDrawn));

		md->more.fingerprint = r->fingerprint;
		md->more.drawn = &md->drawn;
		st->more = &md->more;
	}
	m = st->more;
	if (m->drawn == NULL)
		m->drawn = MemoryContextAllocZero(GetMemoryChunkContext(st), sizeof(DpAggDrawn));
	return m->drawn;
}

/* the units a state was accumulated in: its own, or those of its call's */
static inline uint64
state_fingerprint(const DpAggState *st, const DpRelease *r)
{
	return st->more && !state_in_place(st) ? st->more->fingerprint : r->fingerprint;
}

static inline int128
state_sumsq(const DpAggState *st)
{
	return st->more ? st->more->sumsq : 0;
}

static inline int64
state_skipped(const DpAggState *st)
{
	return st->more ? st->more->skipped : 0;
}

/* a row the call does not count (NULL, NaN): the cold path (aggregates.c) */
extern void dp_agg_skip_row(DpAggState *st, const DpRelease *r);

static inline bool
state_picked(const DpAggState *st)
{
	return st->more != NULL && st->more->picked;
}

static inline int64
state_pick(const DpAggState *st)
{
	return st->more ? st->more->pick : 0;
}

static inline DpBins *
state_bins(const DpAggState *st)
{
	return st->more ? st->more->bins : NULL;
}

/*
 * Are this node's states sent to another process (a parallel worker's
 * partial aggregation)?  Such a state carries its units (DpAggMore): the
 * serial function, for which PostgreSQL names no current call, writes them
 * from the state.
 */
static inline bool
sends_states(FunctionCallInfo fcinfo)
{
	return fcinfo->context != NULL && IsA(fcinfo->context, AggState) &&
		DO_AGGSPLIT_SERIALIZE(((AggState *) fcinfo->context)->aggsplit);
}

extern DpAggState *dp_agg_new_state(FunctionCallInfo fcinfo);
extern DpAggState *dp_agg_new_more_state(MemoryContext cxt, const DpRelease *r);

/* the state of a transition: a new one, or one not released */
static inline DpAggState *
transition_state(FunctionCallInfo fcinfo)
{
	DpAggState *st;

	if (PG_ARGISNULL(0))
		return dp_agg_new_state(fcinfo);
	st = (DpAggState *) PG_GETARG_POINTER(0);
	Assert(!state_in_place(st));
	return st;
}

#define GET_STATE() transition_state(fcinfo)

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

/* add one clamped row of u units, for a call without squares */
static inline void
accumulate_plain(DpAggState *st, int64 u)
{
	st->sum += u;
	st->count++;
}

/* add one clamped row of u units */
static inline void
accumulate_units(DpAggState *st, const DpRelease *r, int64 u)
{
	accumulate_plain(st, u);
	if (unlikely(r->squares))
		st->more->sumsq += centred_square(r, u);
}

/* an integer row clamped to the bounds, in units of the row grid */
static inline int64
clamp_round_int(const DpRelease *r, int64 v)
{
	if (v < r->lower_int)
		v = r->lower_int;
	else if (v > r->upper_int)
		v = r->upper_int;
	return dp_round_int(v, r->row_grid_exp);
}

/* a double row (not NaN) clamped to the bounds, in units of the row grid */
static inline int64
clamp_round_float(const DpRelease *r, double v)
{
	if (v < r->lower_float)
		v = r->lower_float;
	else if (v > r->upper_float)
		v = r->upper_float;		/* also clamps +-Infinity */
	return dp_round_float(v, r->row_mult, r->row_grid_exp);
}

static inline void
accumulate_int(DpAggState *st, const DpRelease *r, int64 v)
{
	if (unlikely(r->auto_bounds))
	{
		dp_bins_add(st->more->bins, (double) v);
		return;
	}
	accumulate_units(st, r, clamp_round_int(r, v));
}

static inline void
accumulate_float(DpAggState *st, const DpRelease *r, double v)
{
	if (isnan(v))
	{
		dp_agg_skip_row(st, r);		/* not counted by dp_avg */
		return;
	}
	if (unlikely(r->auto_bounds))
	{
		dp_bins_add(st->more->bins, v);
		return;
	}
	accumulate_units(st, r, clamp_round_float(r, v));
}

/*
 * The ticket of a row that takes the plain path of the typed transition
 * functions (aggregates.c), or NULL: the state is made already, the value
 * (argument 1) is not NULL, the ticket is cached, and the call keeps no
 * squares and no bins.  That path makes no call, so it saves no registers;
 * every other row takes the general one, which accumulates it the same way.
 */
static inline const DpRelease *
plain_row(FunctionCallInfo fcinfo)
{
	const DpRelease *r = (const DpRelease *) fcinfo->flinfo->fn_extra;

	if (likely(r != NULL && !PG_ARGISNULL(0) && !PG_ARGISNULL(1) &&
			   !r->auto_bounds && !r->squares))
		return r;
	return NULL;
}

/* the general path of the typed transitions (aggregates.c) */
extern Datum dp_sum_int_general(FunctionCallInfo fcinfo, int64 v);
extern Datum dp_sum_float_general(FunctionCallInfo fcinfo, double v);

/* a row of dp_sum or dp_avg: the plain path (plain_row) or the general one */
static inline Datum
sum_int_row(FunctionCallInfo fcinfo, int64 v)
{
	const DpRelease *r = plain_row(fcinfo);

	if (r != NULL)
	{
		DpAggState *st = (DpAggState *) PG_GETARG_POINTER(0);

		accumulate_plain(st, clamp_round_int(r, v));
		PG_RETURN_POINTER(st);
	}
	return dp_sum_int_general(fcinfo, v);
}

static inline Datum
sum_float_row(FunctionCallInfo fcinfo, double v)
{
	const DpRelease *r = plain_row(fcinfo);

	/* (a grid of a multiplication: without the call to ldexp of the others) */
	if (r != NULL && likely(!isnan(v) && r->row_mult != 0))
	{
		DpAggState *st = (DpAggState *) PG_GETARG_POINTER(0);

		accumulate_plain(st, clamp_round_float(r, v));
		PG_RETURN_POINTER(st);
	}
	return dp_sum_float_general(fcinfo, v);
}

static inline void
accumulate_numeric(DpAggState *st, const DpRelease *r, Datum d)
{
	Numeric		v;
	int64		units;

	if (unlikely(r->auto_bounds))
	{
		/* as a double: a monotone conversion (NaN skipped, infinities clamped) */
		v = DatumGetNumeric(d);
		if (numeric_is_nan(v))
			dp_agg_skip_row(st, r);
		else
			dp_bins_add(st->more->bins, DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, d)));
		return;
	}
	/* the common case, read in place (see numeric_units.c) */
	if (dp_numeric_units(d, r->row_grid_exp, &units))
	{
		accumulate_units(st, r, Min(Max(units, r->lo_units), r->hi_units));
		return;
	}

	/* the rest with numeric arithmetic (NaN is skipped, infinities clamped) */
	v = DatumGetNumeric(d);
	if (numeric_is_nan(v))
	{
		dp_agg_skip_row(st, r);
		return;
	}
	if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, NumericGetDatum(v),
										  NumericGetDatum(r->lower_num))) < 0)
		v = r->lower_num;
	else if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, NumericGetDatum(v),
											   NumericGetDatum(r->upper_num))) > 0)
		v = r->upper_num;
	accumulate_units(st, r, dp_round_numeric(v, r->row_mult_num));
}

static inline void
put_bytes(char **p, const void *v, size_t n)
{
	memcpy(*p, v, n);
	*p += n;
}

static inline void
get_bytes(const char **p, void *v, size_t n)
{
	memcpy(v, *p, n);
	*p += n;
}

/* aggregates.c: the noise of a state, its release, the type of the value */
extern void dp_agg_draw_noise(DpAggState *st, const DpRelease *r);
extern Datum dp_agg_release_datum(const DpAggState *st, const DpRelease *r, bool want_estimate);
extern Oid	dp_agg_value_type(const DpRelease *r);

/* the transition functions of the DP aggregates (aggregates.c) */
extern Datum dp_count_star_trans(PG_FUNCTION_ARGS);
extern Datum dp_count_trans(PG_FUNCTION_ARGS);
extern Datum dp_sum_int2_trans(PG_FUNCTION_ARGS);
extern Datum dp_sum_int4_trans(PG_FUNCTION_ARGS);
extern Datum dp_sum_int8_trans(PG_FUNCTION_ARGS);
extern Datum dp_sum_float4_trans(PG_FUNCTION_ARGS);
extern Datum dp_sum_float8_trans(PG_FUNCTION_ARGS);
extern Datum dp_sum_numeric_trans(PG_FUNCTION_ARGS);

#endif							/* DP_AGG_AGGREGATES_H */
