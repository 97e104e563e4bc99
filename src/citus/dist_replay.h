/*-------------------------------------------------------------------------
 *
 * dist_replay.h
 *	  Single use of fragment signatures, per node and shard.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_DIST_REPLAY_H
#define DP_AGG_DIST_REPLAY_H

#include "datatype/timestamp.h"

#include "dist_token.h"

extern void dp_replay_init(void);
extern void dp_replay_claim(const uint8 *nonce, Oid relid, TimestampTz signed_at,
							TimestampTz expiry);

#endif							/* DP_AGG_DIST_REPLAY_H */
