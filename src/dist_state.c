/*-------------------------------------------------------------------------
 *
 * dist_state.c
 *	  dp_agg.dist_state: the partial state of a DP aggregate call that a
 *	  Citus worker sends to the coordinator.
 *
 * Citus distributes dp_agg.sum(spec, value) as it distributes sum: each
 * worker sends its result, the state, as text (the type's output
 * function), and the coordinator reads it back (the input function) and
 * adds the states with dp_agg.sum(dp_agg.dist_state).  The state holds
 * exact integers only, as DpAggState does (aggregates.c): the rows counted
 * and their clamped sum in units of the row grid, with the fingerprint of
 * those units and the nonce of the statement it belongs to, both checked
 * when states are combined and released.  The input function checks the
 * form of every field, so a damaged state is refused, never combined.
 *
 * Text form: version:kind:nonce:fingerprint:serial:count:sum, integers in
 * hexadecimal (the sum as a signed 128-bit number).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <inttypes.h>

#include "utils/builtins.h"

#include "compat.h"
#include "dist_state.h"

PG_FUNCTION_INFO_V1(dp_dist_state_in);
PG_FUNCTION_INFO_V1(dp_dist_state_out);

#define DP_DIST_STATE_VERSION 1
#define DP_DIST_KIND_MAX 3		/* DP_AVG */

DpDistState *
dp_dist_state_new(MemoryContext cxt, int kind, const uint8 *nonce, uint64 fingerprint)
{
	DpDistState *st = MemoryContextAllocZero(cxt, sizeof(DpDistState));

	SET_VARSIZE(st, sizeof(DpDistState));
	st->version = DP_DIST_STATE_VERSION;
	st->kind = (uint8) kind;
	memcpy(st->nonce, nonce, DP_NONCE_LEN);
	st->fingerprint = fingerprint;
	return st;
}

DpDistState *
dp_dist_state_copy(const DpDistState *st)
{
	DpDistState *c = palloc(sizeof(DpDistState));

	memcpy(c, st, sizeof(DpDistState));
	c->release = NULL;
	return c;
}

static void
bad_state(const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("invalid partial state of a DP aggregate"),
			 errdetail("%s", detail)));
}

Datum
dp_dist_state_in(PG_FUNCTION_ARGS)
{
	const char *text = PG_GETARG_CSTRING(0);
	unsigned int version,
				kind;
	char		nonce[2 * DP_NONCE_LEN + 1];
	uint64		fp,
				serial,
				count,
				sum_hi,
				sum_lo;
	int			used = 0;
	DpDistState *st;

	if (sscanf(text, "%x:%x:%32[0-9a-f]:%" SCNx64 ":%" SCNx64 ":%" SCNx64 ":%" SCNx64 ".%" SCNx64 "%n",
			   &version, &kind, nonce, &fp, &serial, &count, &sum_hi, &sum_lo, &used) != 8 ||
		text[used] != '\0')
		bad_state("The text is malformed.");
	if (version != DP_DIST_STATE_VERSION || kind > DP_DIST_KIND_MAX ||
		strlen(nonce) != 2 * DP_NONCE_LEN || (int64) count < 0)
		bad_state("A field is out of range.");

	st = palloc0(sizeof(DpDistState));
	SET_VARSIZE(st, sizeof(DpDistState));
	st->version = (uint8) version;
	st->kind = (uint8) kind;
	hex_decode(nonce, 2 * DP_NONCE_LEN, (char *) st->nonce);
	st->fingerprint = fp;
	st->serial = serial;
	st->count = (int64) count;
	st->sum = (int128) (((uint128) sum_hi << 64) | sum_lo);
	PG_RETURN_POINTER(st);
}

Datum
dp_dist_state_out(PG_FUNCTION_ARGS)
{
	DpDistState *st = (DpDistState *) PG_GETARG_POINTER(0);
	char		nonce[2 * DP_NONCE_LEN + 1];
	uint128		sum = (uint128) st->sum;

	if (VARSIZE(st) != sizeof(DpDistState))
		bad_state("The value has the wrong size.");
	hex_encode((const char *) st->nonce, DP_NONCE_LEN, nonce);
	nonce[2 * DP_NONCE_LEN] = '\0';
	PG_RETURN_CSTRING(psprintf("%x:%x:%s:%" PRIx64 ":%" PRIx64 ":%" PRIx64 ":%" PRIx64 ".%" PRIx64,
							   st->version, st->kind, nonce, st->fingerprint, st->serial,
							   (uint64) st->count, (uint64) (sum >> 64), (uint64) sum));
}
