/*-------------------------------------------------------------------------
 *
 * dist_state.h
 *	  dp_agg.dist_state: the partial state of a DP aggregate call that a
 *	  Citus worker sends to the coordinator.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_DIST_STATE_H
#define DP_AGG_DIST_STATE_H

#include "fmgr.h"

#include "dist_token.h"

/*
 * A varlena of fixed size.  release is meaningful only in the process that
 * set it (the worker's transition function caches its ticket there); it is
 * never sent.
 */
typedef struct DpDistState
{
	int32		vl_len_;
	uint8		version;
	uint8		kind;			/* DpAggKind */
	uint8		nonce[DP_NONCE_LEN];	/* the statement's */
	uint64		fingerprint;	/* the accumulation units */
	uint64		serial;			/* set by the coordinator: one per group */
	int64		count;
	int128		sum;			/* in units */
	int128		sumsq;			/* dp_var, dp_stddev: centred squares, in units */
	int64		rows;			/* rows of the group that reached the call */
	const void *release;		/* this process's ticket, or NULL */
} DpDistState;

#define DatumGetDpDistState(d) ((DpDistState *) DatumGetPointer(d))

extern DpDistState *dp_dist_state_new(MemoryContext cxt, int kind, const uint8 *nonce,
									  uint64 fingerprint);
extern DpDistState *dp_dist_state_copy(const DpDistState *st);

#endif							/* DP_AGG_DIST_STATE_H */
