/*-------------------------------------------------------------------------
 *
 * charger_shmem.c
 *	  The shared memory of the charger: one request slot per backend and
 *	  one charger slot per database with a charger, and what both sides do
 *	  to them.
 *
 * The protocol of the slots (their states, who owns what in each, the
 * lock and spinlocks) is in charger.c's head comment.  The request slots
 * are indexed like PGPROCs; dp_agg.max_databases bounds the charger slots.
 * The backend's side is charge_request.c, the charger's charger.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"

#include "charger_shmem.h"
#include "guc.h"

DpChargerShared *dp_charger_shared = NULL;
ChargerSlot *dp_charger_slots = NULL;
RequestSlot *dp_request_slots = NULL;

static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;

static int
request_slots(void)
{
	return MaxBackends;
}

static Size
shmem_size(void)
{
	Size		size = MAXALIGN(sizeof(DpChargerShared));

	size = add_size(size, mul_size(dp_guc_max_databases, sizeof(ChargerSlot)));
	size = add_size(size, mul_size(request_slots(), sizeof(RequestSlot)));
	return size;
}

static void
charger_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(shmem_size());
	RequestNamedLWLockTranche("dp_agg", 1);
}

static void
charger_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	dp_charger_shared = ShmemInitStruct("dp_agg charger", shmem_size(), &found);
	dp_charger_slots = (ChargerSlot *) ((char *) dp_charger_shared + MAXALIGN(sizeof(DpChargerShared)));
	dp_request_slots = (RequestSlot *) (dp_charger_slots + dp_guc_max_databases);
	if (!found)
	{
		memset(dp_charger_shared, 0, shmem_size());
		dp_charger_shared->lock = &(GetNamedLWLockTranche("dp_agg"))->lock;
		dp_charger_shared->next_generation = 1;
		dp_charger_shared->n_chargers = dp_guc_max_databases;
		dp_charger_shared->n_requests = request_slots();
		for (int i = 0; i < dp_charger_shared->n_requests; i++)
		{
			SpinLockInit(&dp_request_slots[i].mutex);
			ConditionVariableInit(&dp_request_slots[i].cv);
		}
	}
	LWLockRelease(AddinShmemInitLock);
}

/* called from _PG_init */
void
dp_charger_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = charger_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = charger_shmem_startup;
}

/* ---------- both sides ---------- */

/*
 * Wake the backends whose requests wait in PENDING for a charger of dboid:
 * called when that database's charger goes away or fails to start, so they
 * launch another.
 */
void
dp_charger_wake_pending(Oid dboid)
{
	for (int i = 0; i < dp_charger_shared->n_requests; i++)
	{
		RequestSlot *s = &dp_request_slots[i];
		bool		wake;

		SpinLockAcquire(&s->mutex);
		wake = s->state == REQ_PENDING && s->dboid == dboid;
		SpinLockRelease(&s->mutex);
		if (wake)
			ConditionVariableBroadcast(&s->cv);
	}
}

/* is the charger of this generation registered and running? */
bool
dp_charger_running(uint64 generation)
{
	bool		running = false;

	LWLockAcquire(dp_charger_shared->lock, LW_SHARED);
	for (int i = 0; i < dp_charger_shared->n_chargers; i++)
	{
		if (dp_charger_slots[i].generation == generation && dp_charger_slots[i].state == CHARGER_RUNNING)
			running = true;
	}
	LWLockRelease(dp_charger_shared->lock);
	return running;
}

/*
 * Free charger slot i if it still holds this generation (and, with
 * only_starting, its charger has not registered yet); true if it did.
 */
bool
dp_charger_release_slot(int i, uint64 generation, bool only_starting)
{
	ChargerSlot *c = &dp_charger_slots[i];
	bool		released = false;

	LWLockAcquire(dp_charger_shared->lock, LW_EXCLUSIVE);
	if (c->generation == generation && c->state != CHARGER_FREE &&
		(!only_starting || c->state == CHARGER_STARTING))
	{
		c->state = CHARGER_FREE;
		c->latch = NULL;
		c->starter = NULL;
		released = true;
	}
	LWLockRelease(dp_charger_shared->lock);
	return released;
}
