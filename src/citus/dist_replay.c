/*-------------------------------------------------------------------------
 *
 * dist_replay.c
 *	  Single use of fragment signatures, per node and shard.
 *
 * A signed fragment (dist_token.c) is valid until its expiry; within that
 * time whoever saw its text (a role can read its own statements in
 * pg_stat_activity on a worker) could send it again (unchanged: its
 * signature binds what it computes, dist_fingerprint.c) and obtain partial
 * states (sealed, dist_state.c, but uncharged).  So
 * each node remembers, in shared memory, the (nonce, shard) pairs it has
 * accepted until they expire, and refuses a pair it has seen: one
 * statement reads each shard once (a shard it did not read is left open;
 * the states are sealed for that reason).  The
 * table is a fixed array searched by hashing: a pair's window is the
 * DP_REPLAY_WINDOW entries from the position its hash gives, and it is
 * stored in a free or expired entry of its window, where a later claim of
 * the same pair looks for it (a pair is never stored elsewhere, so it is
 * found if it is live).  When every entry of its window holds a live pair
 * the fragment is refused (fail closed: the statement fails, nothing is
 * released) with a hint to lower dp_agg.fragment_ttl.
 *
 * The memory lives in shared memory, which a restart of the node (or of
 * its shared memory after a crash) empties: so the node also remembers
 * when its memory began, and refuses every fragment signed before then
 * (the signature covers when it was signed, dist_token.c).  A fragment
 * therefore cannot outlive a restart, whatever its expiry; this relies on
 * the clocks of the nodes agreeing, as the expiry does.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "dist_replay.h"

/* live pairs a node remembers: 16384 * 32 bytes = 512 kB */
#define DP_REPLAY_ENTRIES 16384
/* the entries a pair may occupy, from the position of its hash */
#define DP_REPLAY_WINDOW 256

typedef struct ReplayEntry
{
	uint8		nonce[DP_NONCE_LEN];
	Oid			relid;
	TimestampTz expiry;			/* 0: free */
} ReplayEntry;

typedef struct ReplayShared
{
	LWLock	   *lock;
	TimestampTz since;			/* when this memory began */
	ReplayEntry entries[DP_REPLAY_ENTRIES];
} ReplayShared;

static ReplayShared *replay = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
replay_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(sizeof(ReplayShared));
	RequestNamedLWLockTranche("dp_agg_replay", 1);
}

static void
replay_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	replay = ShmemInitStruct("dp_agg fragment replay", sizeof(ReplayShared), &found);
	if (!found)
	{
		memset(replay, 0, sizeof(ReplayShared));
		replay->lock = &(GetNamedLWLockTranche("dp_agg_replay"))->lock;
		replay->since = GetCurrentTimestamp();
	}
	LWLockRelease(AddinShmemInitLock);
}

/* called from _PG_init while preloading */
void
dp_replay_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = replay_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = replay_shmem_startup;
}

/*
 * Accept the pair (nonce, relid) once until expiry; ERROR if it was
 * accepted before, if it was signed before this node's memory began, or if
 * the table is full.
 */
void
dp_replay_claim(const uint8 *nonce, Oid relid, TimestampTz signed_at, TimestampTz expiry)
{
	TimestampTz now = GetCurrentTimestamp();
	ReplayEntry *free_entry = NULL;
	bool		seen = false;
	uint32		start;
	uint8		key[DP_NONCE_LEN + sizeof(Oid)];

	memcpy(key, nonce, DP_NONCE_LEN);
	memcpy(key + DP_NONCE_LEN, &relid, sizeof(Oid));
	start = DatumGetUInt32(hash_any(key, sizeof(key))) % DP_REPLAY_ENTRIES;

	if (replay == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("dp_agg must be loaded via shared_preload_libraries"),
				 errdetail("Signed fragments are checked against replay in shared memory.")));
	if (signed_at < replay->since)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("a signed fragment of a DP statement was signed before this node started"),
				 errdetail("This node remembers the fragments it ran since %s only.",
						   timestamptz_to_str(replay->since)),
				 errhint("Only the coordinator of the Citus cluster sends fragments with DP aggregates; run the statement again.")));
	LWLockAcquire(replay->lock, LW_EXCLUSIVE);
	for (int j = 0; j < DP_REPLAY_WINDOW; j++)
	{
		ReplayEntry *e = &replay->entries[(start + j) % DP_REPLAY_ENTRIES];

		if (e->expiry < now)
		{
			if (free_entry == NULL)
				free_entry = e;
			continue;
		}
		if (e->relid == relid && memcmp(e->nonce, nonce, DP_NONCE_LEN) == 0)
		{
			seen = true;
			break;
		}
	}
	if (!seen && free_entry != NULL)
	{
		memcpy(free_entry->nonce, nonce, DP_NONCE_LEN);
		free_entry->relid = relid;
		free_entry->expiry = expiry;
	}
	LWLockRelease(replay->lock);
	if (seen)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("a signed fragment of a DP statement was sent again"),
				 errdetail("Each statement reads each shard once; this signature was used on this shard before."),
				 errhint("Only the coordinator of the Citus cluster sends fragments with DP aggregates.")));
	if (free_entry == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many signed fragments of DP statements in flight on this node"),
				 errdetail("This node remembers %d fragments until their signatures expire, at most %d of them in one region of its memory.",
						   DP_REPLAY_ENTRIES, DP_REPLAY_WINDOW),
				 errhint("Lower dp_agg.fragment_ttl.")));
}
