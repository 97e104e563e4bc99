/*-------------------------------------------------------------------------
 *
 * aggregate_serial.c
 *	  The partial states of dp_count, dp_sum, dp_avg, dp_var and dp_stddev
 *	  between processes: serialize and validated deserialize.
 *
 * A parallel worker sends its partial state to the leader as bytea; the
 * leader reads it back and checks its form before combining it
 * (aggregates.c, dp_agg_combine, which checks it against the call).  Both
 * functions run only where the aggregate is split for that purpose
 * (check_split): called from SQL, on a value an analyst made, they refuse.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "nodes/execnodes.h"

#include "aggregates.h"
#include "auto_bounds.h"

PG_FUNCTION_INFO_V1(dp_agg_serialize);
PG_FUNCTION_INFO_V1(dp_agg_deserialize);

/*
 * Serialized form (between the processes of one server only): version,
 * flags (bit 0: picked; bit 1: bins follow, with squares if bit 2),
 * fingerprint, count, rows skipped, sum, sum of squares, priority, then
 * the bins.  The
 * kind of the call is in its fingerprint (release.c), which combining
 * checks.
 */
#define DP_STATE_SERIAL_VERSION 4
#define DP_STATE_SERIAL_SIZE (1 + 1 + 8 + 8 + 8 + 16 + 16 + 8)
#define DP_STATE_FLAG_PICKED 1
#define DP_STATE_FLAG_BINS 2
#define DP_STATE_FLAG_SQUARES 4

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


Datum
dp_agg_serialize(PG_FUNCTION_ARGS)
{
	DpAggState *st;
	DpBins	   *bins;
	bytea	   *result;
	char	   *p;
	uint8		version = DP_STATE_SERIAL_VERSION;
	uint8		flags;
	Size		size;
	uint64		fingerprint;
	int128		sumsq;
	int64		pick;
	int64		skipped;

	check_split(fcinfo, true, "dp_agg_internal.serialfn");
	st = (DpAggState *) PG_GETARG_POINTER(0);
	bins = state_bins(st);
	flags = (state_picked(st) ? DP_STATE_FLAG_PICKED : 0) |
		(bins ? DP_STATE_FLAG_BINS : 0) |
		(bins && bins->squares ? DP_STATE_FLAG_SQUARES : 0);
	size = DP_STATE_SERIAL_SIZE + (bins ? dp_bins_serial_size(bins->squares) : 0);
	/* a state to be sent was made with its units (sends_states) */
	if (st->more == NULL || state_in_place(st))
		elog(ERROR, "dp_agg: a partial state without its units cannot be sent");
	fingerprint = st->more->fingerprint;
	sumsq = state_sumsq(st);
	pick = state_pick(st);
	skipped = state_skipped(st);

	result = (bytea *) palloc(VARHDRSZ + size);
	SET_VARSIZE(result, VARHDRSZ + size);
	p = VARDATA(result);
	put_bytes(&p, &version, 1);
	put_bytes(&p, &flags, 1);
	put_bytes(&p, &fingerprint, 8);
	put_bytes(&p, &st->count, 8);
	put_bytes(&p, &skipped, 8);
	put_bytes(&p, &st->sum, 16);
	put_bytes(&p, &sumsq, 16);
	put_bytes(&p, &pick, 8);
	if (bins)
		dp_bins_serialize(bins, p);
	PG_RETURN_BYTEA_P(result);
}

/*
 * A partial state from another process, validated: its form and a count of
 * at least 0.  Combining then checks its units against the call's
 * (check_units: they include its kind), its sum of squares (only for the
 * kinds that have one) and its level (a priority only for the aggregates
 * that pick a unit's group).
 */
Datum
dp_agg_deserialize(PG_FUNCTION_ARGS)
{
	bytea	   *b;
	const char *p;
	uint8		version,
				flags;
	DpAggStateMore *sm;
	DpAggState *st;
	DpAggMore  *m;

	check_split(fcinfo, false, "dp_agg_internal.deserialfn");
	b = PG_GETARG_BYTEA_PP(0);
	p = VARDATA_ANY(b);
	if (VARSIZE_ANY_EXHDR(b) < DP_STATE_SERIAL_SIZE)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid serialized dp_agg state")));
	sm = palloc0(sizeof(DpAggStateMore));
	st = &sm->st;
	m = st->more = &sm->more;
	get_bytes(&p, &version, 1);
	get_bytes(&p, &flags, 1);
	get_bytes(&p, &m->fingerprint, 8);
	get_bytes(&p, &st->count, 8);
	get_bytes(&p, &m->skipped, 8);
	get_bytes(&p, &st->sum, 16);
	get_bytes(&p, &m->sumsq, 16);
	get_bytes(&p, &m->pick, 8);
	m->picked = (flags & DP_STATE_FLAG_PICKED) != 0;
	if (flags & DP_STATE_FLAG_BINS)
	{
		bool		squares = (flags & DP_STATE_FLAG_SQUARES) != 0;

		m->bins = dp_bins_new(CurrentMemoryContext, squares);
		if (VARSIZE_ANY_EXHDR(b) != DP_STATE_SERIAL_SIZE + dp_bins_serial_size(squares) ||
			!dp_bins_deserialize(m->bins, p))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("invalid serialized dp_agg state")));
	}
	else if (VARSIZE_ANY_EXHDR(b) != DP_STATE_SERIAL_SIZE ||
			 (flags & DP_STATE_FLAG_SQUARES))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid serialized dp_agg state")));
	if (version != DP_STATE_SERIAL_VERSION ||
		(flags & ~(DP_STATE_FLAG_PICKED | DP_STATE_FLAG_BINS | DP_STATE_FLAG_SQUARES)) != 0 ||
		st->count < 0 || m->skipped < 0 || (!m->picked && m->pick != 0))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid serialized dp_agg state")));
	PG_RETURN_POINTER(st);
}
