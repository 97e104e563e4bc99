/*-------------------------------------------------------------------------
 *
 * charge_request.c
 *	  The backend's side of a charge: find or launch the database's
 *	  charger, hand it the request through the backend's request slot,
 *	  and wait for its reply.
 *
 * The slots and their protocol are charger.c's head comment and
 * charger_shmem.c; a request that does not fit in its slot travels in a
 * dynamic shared memory segment.  Whatever error or cancel interrupts the
 * wait, the backend withdraws its request or leaves it to the charger
 * that holds it, and releases nothing unless a reply said the charge
 * committed.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/sequence.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "replication/syncrep.h"
#include "storage/condition_variable.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "charge_request.h"
#include "compat.h"
#include "guc.h"

/* the request this backend is writing or waiting for, for the cleanup */
static uint64 my_seq = 0;

/* the claimed charger slot a launch is waiting on, for the cleanup */
static int	launching_slot = -1;
static uint64 launching_generation = 0;

typedef struct ChargerRef
{
	ChargerState state;			/* CHARGER_FREE: this database has none */
	Latch	   *latch;			/* RUNNING: to wake it */
} ChargerRef;

/* the charger of this database, as the charger slots say */
static ChargerRef
my_charger(void)
{
	ChargerRef	ref = {CHARGER_FREE, NULL};

	LWLockAcquire(dp_charger_shared->lock, LW_SHARED);
	for (int i = 0; i < dp_charger_shared->n_chargers; i++)
	{
		if (dp_charger_slots[i].state != CHARGER_FREE && dp_charger_slots[i].dboid == MyDatabaseId)
		{
			ref.state = dp_charger_slots[i].state;
			ref.latch = dp_charger_slots[i].latch;
		}
	}
	LWLockRelease(dp_charger_shared->lock);
	return ref;
}

/*
 * Claim a charger slot for this database; -1 if another backend claimed one
 * first (its charger will take our request).
 */
static int
claim_charger_slot(uint64 *generation)
{
	int			claimed = -1;
	bool		taken = false;
	int			free_slot = -1;

	LWLockAcquire(dp_charger_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < dp_charger_shared->n_chargers; i++)
	{
		if (dp_charger_slots[i].state != CHARGER_FREE && dp_charger_slots[i].dboid == MyDatabaseId)
			taken = true;
		else if (dp_charger_slots[i].state == CHARGER_FREE && free_slot < 0)
			free_slot = i;
	}
	if (!taken && free_slot >= 0)
	{
		ChargerSlot *c = &dp_charger_slots[free_slot];

		c->state = CHARGER_STARTING;
		c->dboid = MyDatabaseId;
		c->generation = dp_charger_shared->next_generation++;
		c->latch = NULL;
		c->starter = MyLatch;
		*generation = c->generation;
		claimed = free_slot;
	}
	LWLockRelease(dp_charger_shared->lock);

	if (!taken && claimed < 0)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many databases are charging privacy budgets at the same time"),
				 errdetail("Nothing was charged or released."),
				 errhint("Raise dp_agg.max_databases (currently %d).", dp_charger_shared->n_chargers)));
	return claimed;
}

/* the state of charger slot i if it still holds this generation, else FREE */
static ChargerState
charger_slot_state(int i, uint64 generation)
{
	ChargerState state = CHARGER_FREE;

	LWLockAcquire(dp_charger_shared->lock, LW_SHARED);
	if (dp_charger_slots[i].generation == generation)
		state = dp_charger_slots[i].state;
	LWLockRelease(dp_charger_shared->lock);
	return state;
}

/*
 * Cleanup of a launch given up: give the claimed slot back, unless the
 * charger registered in the meantime (it runs and owns the slot).
 */
static void
unclaim_charger_slot(int code, Datum arg)
{
	if (launching_slot >= 0 &&
		dp_charger_release_slot(launching_slot, launching_generation, true))
		dp_charger_wake_pending(MyDatabaseId);
	launching_slot = -1;
}

/*
 * The charger we launched stopped or gave its slot back before we saw it
 * run.  It may have taken our request first (and charged it, or exited
 * holding it): then our request slot says so and await_reply reports it,
 * with the outcome it had; only a request still PENDING was never charged.
 */
static void
charger_start_failed(void)
{
	RequestSlot *s = &dp_request_slots[DP_MY_PROC_INDEX()];
	RequestState state;

	SpinLockAcquire(&s->mutex);
	state = s->state;
	SpinLockRelease(&s->mutex);
	if (state != REQ_PENDING)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("could not start the dp_agg charger"),
			 errdetail("Nothing was charged or released."),
			 errhint("See the server log.")));
}

/*
 * Start the charger of claimed slot i and wait until it runs (it sets our
 * latch) or stops (the postmaster sets our latch: bgw_notify_pid).
 */
static pg_noinline void
launch_charger(int i, uint64 generation)
{
	BackgroundWorker bgw;
	BackgroundWorkerHandle *handle;
	ChargerStart start = {i, generation};

	memset(&bgw, 0, sizeof(bgw));
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
	bgw.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(bgw.bgw_library_name, BGW_MAXLEN, "dp_agg");
	snprintf(bgw.bgw_function_name, BGW_MAXLEN, "dp_charger_main");
	snprintf(bgw.bgw_name, BGW_MAXLEN, "dp_agg charger for database %u", MyDatabaseId);
	snprintf(bgw.bgw_type, BGW_MAXLEN, "dp_agg charger");
	bgw.bgw_main_arg = ObjectIdGetDatum(MyDatabaseId);
	StaticAssertStmt(sizeof(ChargerStart) <= BGW_EXTRALEN, "ChargerStart fits in bgw_extra");
	memcpy(bgw.bgw_extra, &start, sizeof(start));
	bgw.bgw_notify_pid = MyProcPid;

	launching_slot = i;
	launching_generation = generation;
	PG_ENSURE_ERROR_CLEANUP(unclaim_charger_slot, (Datum) 0);
	{
		pid_t		pid;

		if (!RegisterDynamicBackgroundWorker(&bgw, &handle))
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("could not start the dp_agg charger"),
					 errdetail("Nothing was charged or released."),
					 errhint("Raise max_worker_processes.")));
		while (charger_slot_state(i, generation) == CHARGER_STARTING)
		{
			if (GetBackgroundWorkerPid(handle, &pid) == BGWH_STOPPED)
				break;
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_EXIT_ON_PM_DEATH, -1L,
							 PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
		if (charger_slot_state(i, generation) != CHARGER_RUNNING)
			charger_start_failed();
	}
	PG_END_ENSURE_ERROR_CLEANUP(unclaim_charger_slot, (Datum) 0);
	/* a slot left STARTING by a charger that never ran is free again */
	unclaim_charger_slot(0, (Datum) 0);
}

/*
 * While our request is PENDING: wake this database's charger, or start one
 * if it has none.  Returns true if it started one (our latch was consumed:
 * the caller must look at the slot again before sleeping).
 */
static pg_noinline bool
prod_charger(void)
{
	ChargerRef	ref = my_charger();
	uint64		generation;
	int			i;

	if (ref.state == CHARGER_RUNNING)
		SetLatch(ref.latch);
	if (ref.state != CHARGER_FREE)
		return false;
	i = claim_charger_slot(&generation);
	if (i < 0)
		return false;
	ConditionVariableCancelSleep();
	launch_charger(i, generation);
	return true;
}

/* cleanup of a request given up: withdraw it unless a charger holds it */
static void
withdraw_request(int code, Datum arg)
{
	RequestSlot *s = &dp_request_slots[DP_MY_PROC_INDEX()];

	ConditionVariableCancelSleep();
	SpinLockAcquire(&s->mutex);
	if (s->seq == my_seq && (s->state == REQ_WRITING || s->state == REQ_PENDING))
		s->state = REQ_IDLE;
	SpinLockRelease(&s->mutex);
}

/*
 * Make the slot ours for a new request: wait while a charger still holds
 * the previous one (given up by this backend, or by a previous owner of
 * this PGPROC).  Returns the new request's sequence number.
 */
static uint64
begin_request(RequestSlot *s)
{
	for (;;)
	{
		RequestState state;
		uint64		holder;
		uint64		seq = 0;

		SpinLockAcquire(&s->mutex);
		state = s->state;
		holder = s->charger;
		SpinLockRelease(&s->mutex);
		if (state == REQ_TAKEN && dp_charger_running(holder))
		{
			ConditionVariableSleep(&s->cv, PG_WAIT_EXTENSION);
			continue;
		}
		SpinLockAcquire(&s->mutex);
		if (s->state == state && s->charger == holder)
		{
			seq = ++s->seq;
			s->state = REQ_WRITING;
			s->dboid = MyDatabaseId;
		}
		SpinLockRelease(&s->mutex);
		if (seq != 0)
		{
			ConditionVariableCancelSleep();
			return seq;
		}
	}
}

/* write the request into the slot we own, or name its segment; publish it */
static void
publish_request(RequestSlot *s, const DpChargeRequest *req, dsm_segment *seg)
{
	if (seg != NULL)
	{
		s->handle = dsm_segment_handle(seg);
		s->inline_size = 0;
	}
	else
	{
		s->handle = DSM_HANDLE_INVALID;
		s->inline_size = req->size;
		memcpy(s->inline_data, req, req->size);
	}
	SpinLockAcquire(&s->mutex);
	s->state = REQ_PENDING;
	SpinLockRelease(&s->mutex);
}

static void
charger_exited(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("the dp_agg charger exited while charging this statement"),
			 errdetail("The charge may or may not have been recorded; nothing was released."),
			 errhint("Look for the statement in dp_agg.my_ledger before running it again.")));
}

/*
 * Is the slot still held by that charger?  Asked after finding it no longer
 * running: it may have answered just before it went.
 */
static bool
still_taken(RequestSlot *s, uint64 holder)
{
	bool		taken;

	SpinLockAcquire(&s->mutex);
	taken = s->state == REQ_TAKEN && s->charger == holder;
	SpinLockRelease(&s->mutex);
	return taken;
}

/*
 * Wait for the outcome of our published request: copy the reply out and
 * free the slot, or ERROR if the charger holding it exited.
 */
static void
await_reply(RequestSlot *s, DpChargeReply *reply)
{
	for (;;)
	{
		RequestState state;
		uint64		holder;

		SpinLockAcquire(&s->mutex);
		state = s->state;
		holder = s->charger;
		SpinLockRelease(&s->mutex);

		if (state == REQ_DONE)
			*reply = s->reply;
		if (state == REQ_DONE || state == REQ_ORPHANED)
		{
			ConditionVariableCancelSleep();
			SpinLockAcquire(&s->mutex);
			s->state = REQ_IDLE;
			SpinLockRelease(&s->mutex);
			if (state == REQ_ORPHANED)
				charger_exited();
			return;
		}
		if (state == REQ_TAKEN && !dp_charger_running(holder) && still_taken(s, holder))
			charger_exited();	/* left TAKEN: the next request takes the slot over */
		if (state == REQ_PENDING && prod_charger())
			continue;
		if (state != REQ_PENDING && state != REQ_TAKEN)
			elog(ERROR, "dp_agg: request slot in state %d while waiting", (int) state);
		ConditionVariableSleep(&s->cv, PG_WAIT_EXTENSION);
	}
}

/* the request's round trip, withdrawn if it is given up before a charger takes it */
static void
exchange(RequestSlot *slot, const DpChargeRequest *req, dsm_segment *seg, DpChargeReply *reply)
{
	PG_ENSURE_ERROR_CLEANUP(withdraw_request, (Datum) 0);
	{
		my_seq = 0;
		my_seq = begin_request(slot);
		/* prepared before the charger can answer: the first sleep waits */
		ConditionVariablePrepareToSleep(&slot->cv);
		publish_request(slot, req, seg);
		await_reply(slot, reply);
	}
	PG_END_ENSURE_ERROR_CLEANUP(withdraw_request, (Datum) 0);
}

/*
 * Send a charge request to this database's charger and wait for its reply.
 * Interrupts are honoured while waiting; a request given up while the
 * charger holds it may still be charged, but its statement releases
 * nothing.
 */
void
dp_charger_submit(const DpChargeRequest *req, DpChargeReply *reply)
{
	int			me = DP_MY_PROC_INDEX();
	RequestSlot *slot;
	dsm_segment *seg = NULL;

	if (dp_charger_shared == NULL || me < 0 || me >= dp_charger_shared->n_requests)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the dp_agg charge path is not available in this process"),
				 errdetail("Nothing was charged or released.")));
	slot = &dp_request_slots[me];

	if (req->size > CHARGE_INLINE_SIZE)
	{
		seg = dsm_create(req->size, 0);
		memcpy(dsm_segment_address(seg), req, req->size);
	}

	exchange(slot, req, seg, reply);
	if (seg != NULL)
		dsm_detach(seg);
}
