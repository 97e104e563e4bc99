/*-------------------------------------------------------------------------
 *
 * charger.c
 *	  The charger: commits budget charges durably, outside the transactions
 *	  of the statements it charges.
 *
 * A statement that releases DP values must be paid for before the first
 * value is computed, by a write that survives whatever the statement's own
 * transaction does afterwards (ROLLBACK, an error, a crash).  A backend
 * cannot commit a write of its own in the middle of a transaction, so each
 * database gets a charger: a background worker, started on demand, that
 * takes charge requests from backends, applies them to dp_agg.budget and
 * dp_agg.ledger in its own transaction with synchronous commit, and only
 * then answers.  A backend that gets no positive answer releases nothing.
 *
 * Protocol.  Shared memory holds one request slot per backend and one
 * charger slot per database with a charger (dp_agg.max_databases).  A
 * backend copies its request into its slot (or, when it is larger than
 * CHARGE_INLINE_SIZE, into a dynamic shared memory segment named in the
 * slot), marks the slot PENDING and sets the charger's latch; the charger
 * copies out the requests it takes and marks them TAKEN, processes them as
 * one batch (one commit, so concurrent statements share the WAL flush), then
 * marks them DONE with the reply and sets the backends' latches.  Slots carry a sequence number so that a reply
 * to an abandoned request (a cancelled backend) is never read as the reply
 * to a later one.  All slot fields are protected by one LWLock.
 *
 * Serialization.  One charger per database decides the requests of a batch
 * in arrival order, against each role's budget row read once under a row
 * lock (FOR UPDATE), so no interleaving of sessions can spend past a limit;
 * the row lock also orders charges against the DBA's set_budget and
 * reset_budget.
 *
 * Failure.  If the charger dies while it holds a request, the backend
 * cannot know whether the charge committed and fails with an error (an
 * over-charge, never an under-charge).  An idle charger exits after
 * dp_agg.charger_idle_timeout, so that DROP DATABASE is not blocked.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>
#include <unistd.h>

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "tcop/tcopprot.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "calibrate.h"
#include "charger.h"
#include "compat.h"
#include "guc.h"

#define SLOT_IDLE		0
#define SLOT_PENDING	1
#define SLOT_TAKEN		2
#define SLOT_DONE		3

#define CHARGER_START_TIMEOUT_MS 30000

/*
 * Requests up to this size travel in the slot itself: a dynamic shared
 * memory segment per statement (create, attach, detach: several system
 * calls and page faults on each side) was a large part of the cost of a
 * charge.  A request holds the query text, the detail and the Renyi curve
 * (DP_RDP_ORDERS doubles).
 */
#define CHARGE_INLINE_SIZE 8192

typedef struct RequestSlot
{
	int			state;
	Oid			dboid;
	uint64		seq;
	dsm_handle	handle;			/* DSM_HANDLE_INVALID: the request is inline */
	Latch	   *client_latch;
	pid_t		taken_by;		/* charger that holds it */
	DpChargeReply reply;
	uint32		inline_size;
	char		inline_data[CHARGE_INLINE_SIZE];
} RequestSlot;

typedef struct ChargerSlot
{
	Oid			dboid;			/* InvalidOid when free */
	pid_t		pid;			/* 0 while starting */
	Latch	   *latch;
	TimestampTz since;			/* claimed at */
} ChargerSlot;

typedef struct DpChargerShared
{
	LWLock	   *lock;
	int			n_chargers;
	int			n_requests;
	/* ChargerSlot[n_chargers], then RequestSlot[n_requests] */
} DpChargerShared;

static DpChargerShared *shared = NULL;
static ChargerSlot *chargers = NULL;
static RequestSlot *requests = NULL;

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
	shared = ShmemInitStruct("dp_agg charger", shmem_size(), &found);
	if (!found)
	{
		memset(shared, 0, shmem_size());
		shared->lock = &(GetNamedLWLockTranche("dp_agg"))->lock;
		shared->n_chargers = dp_guc_max_databases;
		shared->n_requests = request_slots();
	}
	chargers = (ChargerSlot *) ((char *) shared + MAXALIGN(sizeof(DpChargerShared)));
	requests = (RequestSlot *) (chargers + shared->n_chargers);
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

static bool
process_alive(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH);
}

/* ---------- the backend's side ---------- */

/*
 * With the lock held: the charger slot of this database.  Frees the slot of
 * a dead charger and claims a free one if there is none; *launch tells the
 * caller to start a charger for the claimed slot.
 */
static ChargerSlot *
charger_for_my_database(bool *launch)
{
	ChargerSlot *free_slot = NULL;
	TimestampTz now = GetCurrentTimestamp();

	*launch = false;
	for (int i = 0; i < shared->n_chargers; i++)
	{
		ChargerSlot *c = &chargers[i];

		if (c->dboid == MyDatabaseId)
		{
			if (c->pid != 0 && !process_alive(c->pid))
				c->dboid = InvalidOid;	/* died: forget it */
			else if (c->pid == 0 &&
					 TimestampDifferenceExceeds(c->since, now, CHARGER_START_TIMEOUT_MS))
				c->dboid = InvalidOid;	/* never started */
			else
				return c;
		}
		if (c->dboid == InvalidOid && free_slot == NULL)
			free_slot = c;
	}
	if (free_slot == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many databases are charging privacy budgets at the same time"),
				 errdetail("Nothing was charged or released."),
				 errhint("Raise dp_agg.max_databases (currently %d).", shared->n_chargers)));
	free_slot->dboid = MyDatabaseId;
	free_slot->pid = 0;
	free_slot->latch = NULL;
	free_slot->since = now;
	*launch = true;
	return free_slot;
}

static void
unclaim_charger(void)
{
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < shared->n_chargers; i++)
	{
		if (chargers[i].dboid == MyDatabaseId && chargers[i].pid == 0)
			chargers[i].dboid = InvalidOid;
	}
	LWLockRelease(shared->lock);
}

static void
launch_charger(void)
{
	BackgroundWorker bgw;
	BackgroundWorkerHandle *handle;
	pid_t		pid;

	memset(&bgw, 0, sizeof(bgw));
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
	bgw.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(bgw.bgw_library_name, BGW_MAXLEN, "dp_agg");
	snprintf(bgw.bgw_function_name, BGW_MAXLEN, "dp_charger_main");
	snprintf(bgw.bgw_name, BGW_MAXLEN, "dp_agg charger for database %u", MyDatabaseId);
	snprintf(bgw.bgw_type, BGW_MAXLEN, "dp_agg charger");
	bgw.bgw_main_arg = ObjectIdGetDatum(MyDatabaseId);
	bgw.bgw_notify_pid = MyProcPid;

	if (!RegisterDynamicBackgroundWorker(&bgw, &handle))
	{
		unclaim_charger();
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("could not start the dp_agg charger"),
				 errdetail("Nothing was charged or released."),
				 errhint("Raise max_worker_processes.")));
	}
	if (WaitForBackgroundWorkerStartup(handle, &pid) != BGWH_STARTED)
	{
		unclaim_charger();
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("could not start the dp_agg charger"),
				 errdetail("Nothing was charged or released."),
				 errhint("See the server log.")));
	}
}

/*
 * Send a charge request to this database's charger and wait for its reply.
 * Interrupts are honoured while waiting; a cancelled request may still be
 * charged, but its statement releases nothing.
 */
void
dp_charger_submit(const DpChargeRequest *req, DpChargeReply *reply)
{
	int			me = DP_MY_PROC_INDEX();
	RequestSlot *slot;
	dsm_segment *seg = NULL;
	uint64		seq;

	if (shared == NULL || me < 0 || me >= shared->n_requests)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the dp_agg charge path is not available in this process"),
				 errdetail("Nothing was charged or released.")));
	slot = &requests[me];

	if (req->size > CHARGE_INLINE_SIZE)
	{
		seg = dsm_create(req->size, 0);
		memcpy(dsm_segment_address(seg), req, req->size);
	}

	/*
	 * Under the lock: a request abandoned while PENDING (a cancel) may be
	 * taken by the charger at any moment, so the slot is rewritten only
	 * while the charger cannot read it.
	 */
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	seq = ++slot->seq;
	slot->state = SLOT_PENDING;
	slot->dboid = MyDatabaseId;
	if (seg != NULL)
	{
		slot->handle = dsm_segment_handle(seg);
		slot->inline_size = 0;
	}
	else
	{
		slot->handle = DSM_HANDLE_INVALID;
		slot->inline_size = req->size;
		memcpy(slot->inline_data, req, req->size);
	}
	slot->client_latch = MyLatch;
	slot->taken_by = 0;
	memset(&slot->reply, 0, sizeof(slot->reply));
	LWLockRelease(shared->lock);

	for (;;)
	{
		bool		done = false;
		bool		launch = false;
		int			state;
		pid_t		taken_by;
		Latch	   *charger_latch = NULL;

		LWLockAcquire(shared->lock, LW_EXCLUSIVE);
		state = slot->state;
		taken_by = slot->taken_by;
		if (slot->seq == seq && state == SLOT_DONE)
		{
			*reply = slot->reply;
			slot->state = SLOT_IDLE;
			done = true;
		}
		else if (state == SLOT_PENDING)
			charger_latch = charger_for_my_database(&launch)->latch;
		LWLockRelease(shared->lock);

		if (done)
			break;
		if (launch)
			launch_charger();
		if (state == SLOT_TAKEN && !process_alive(taken_by))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the dp_agg charger exited while charging this statement"),
					 errdetail("The charge may or may not have been recorded; nothing was released.")));
		if (charger_latch)
			SetLatch(charger_latch);

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 100L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	if (seg != NULL)
		dsm_detach(seg);
}

/* ---------- the charger's side ---------- */

typedef struct TakenRequest
{
	int			slot;
	uint64		seq;
	dsm_handle	handle;
	DpChargeRequest *req;		/* copied from the slot, or NULL */
	DpChargeReply reply;
} TakenRequest;

static SPIPlanPtr plan_lock = NULL;
static SPIPlanPtr plan_update = NULL;
static SPIPlanPtr plan_insert = NULL;

static SPIPlanPtr
keep_plan(const char *sql, int nargs, Oid *argtypes)
{
	SPIPlanPtr	plan = SPI_prepare(sql, nargs, argtypes);

	if (plan == NULL)
		elog(ERROR, "dp_agg charger: SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	SPI_keepplan(plan);
	return plan;
}

static void
prepare_plans(void)
{
	Oid			t_lock[] = {REGROLEOID};
	Oid			t_update[] = {REGROLEOID, FLOAT8OID, FLOAT8OID, FLOAT8ARRAYOID};
	Oid			t_insert[] = {REGROLEOID, FLOAT8OID, FLOAT8OID, TEXTOID, TEXTOID, FLOAT8ARRAYOID};

	if (plan_lock)
		return;
	plan_lock = keep_plan("SELECT epsilon_limit, delta_limit, epsilon_spent, delta_spent, "
						  "accounting = 'rdp', rdp "
						  "FROM dp_agg.budget WHERE role = $1 FOR UPDATE", 1, t_lock);
	plan_update = keep_plan("UPDATE dp_agg.budget SET epsilon_spent = $2, delta_spent = $3, rdp = $4, "
							"updated_at = pg_catalog.clock_timestamp() WHERE role = $1", 4, t_update);
	plan_insert = keep_plan("INSERT INTO dp_agg.ledger (role, kind, epsilon, delta, query, detail, rdp) "
							"VALUES ($1, 'charge', $2, $3, $4, $5::pg_catalog.jsonb, $6) RETURNING id",
							6, t_insert);
}

static double
get_float8(int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, col, &isnull);

	return isnull ? 0 : DatumGetFloat8(d);
}

/* a float8[] datum of n values */
static Datum
float8_array_datum(const double *v, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * n);

	for (int i = 0; i < n; i++)
		d[i] = Float8GetDatum(v[i]);
	return PointerGetDatum(construct_array(d, n, FLOAT8OID, sizeof(float8),
										   FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* the role's composed Renyi DP curve from the catalog (zeros if none) */
static void
read_curve(int col, double *curve)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, col, &isnull);

	memset(curve, 0, sizeof(double) * DP_RDP_ORDERS);
	if (!isnull)
	{
		Datum	   *elems;
		bool	   *nulls;
		int			n;

		deconstruct_array(DatumGetArrayTypeP(d), FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL,
						  TYPALIGN_DOUBLE, &elems, &nulls, &n);
		if (n != DP_RDP_ORDERS)
			elog(ERROR, "dp_agg charger: the Renyi DP curve of the budget has %d orders, not %d",
				 n, DP_RDP_ORDERS);
		for (int i = 0; i < n; i++)
			curve[i] = nulls[i] ? 0 : DatumGetFloat8(elems[i]);
	}
}

/* The budget of one role during a batch: read and locked once, written once. */
typedef struct RoleState
{
	Oid			role;
	bool		exists;
	bool		dirty;
	DpBudget	b;
} RoleState;

static RoleState *
role_state(RoleState *roles, int *nroles, Oid role)
{
	Datum		args[1];
	char		nulls[1] = {' '};
	RoleState  *rs;
	bool		isnull;

	for (int i = 0; i < *nroles; i++)
		if (roles[i].role == role)
			return &roles[i];
	rs = &roles[(*nroles)++];
	memset(rs, 0, sizeof(*rs));
	rs->role = role;
	args[0] = ObjectIdGetDatum(role);
	if (SPI_execute_plan(plan_lock, args, nulls, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "dp_agg charger: could not read the budget");
	if (SPI_processed == 0)
		return rs;
	rs->exists = true;
	rs->b.epsilon_limit = get_float8(1);
	rs->b.delta_limit = get_float8(2);
	rs->b.epsilon_spent = get_float8(3);
	rs->b.delta_spent = get_float8(4);
	rs->b.renyi = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
											 5, &isnull));
	read_curve(6, rs->b.rdp);
	return rs;
}

/*
 * Decide one request against its role's budget (in memory) and, if the
 * budget admits it (dp_budget_admits), append it to the ledger.  The spent
 * amounts and the composed curve are sums rounded up.
 */
static void
charge_one(const DpChargeRequest *req, RoleState *rs, DpChargeReply *reply)
{
	Datum		args[6];
	char		nulls[6] = {' ', ' ', ' ', ' ', ' ', ' '};
	DpBudget   *b = &rs->b;
	double		curve[DP_RDP_ORDERS];
	bool		isnull;

	if (!rs->exists)
	{
		reply->result = DP_CHARGE_NO_BUDGET;
		return;
	}
	memcpy(curve, req->data + req->query_len + 1 + req->detail_len + 1, sizeof(curve));
	reply->renyi = b->renyi;
	reply->epsilon_remaining = Max(b->epsilon_limit - b->epsilon_spent, 0);
	reply->delta_remaining = Max(b->delta_limit - b->delta_spent, 0);
	if (!dp_budget_admits(b, req->epsilon, req->delta, curve, &reply->composed))
	{
		reply->result = DP_CHARGE_DENIED;
		return;
	}

	b->epsilon_spent = dp_add_up(b->epsilon_spent, req->epsilon);
	b->delta_spent = dp_add_up(b->delta_spent, req->delta);
	for (int i = 0; i < DP_RDP_ORDERS; i++)
		b->rdp[i] = dp_add_up(b->rdp[i], curve[i]);
	rs->dirty = true;

	args[0] = ObjectIdGetDatum(req->role);
	args[1] = Float8GetDatum(req->epsilon);
	args[2] = Float8GetDatum(req->delta);
	args[3] = CStringGetTextDatum(req->data);
	args[4] = CStringGetTextDatum(req->data + req->query_len + 1);
	args[5] = float8_array_datum(curve, DP_RDP_ORDERS);
	if (SPI_execute_plan(plan_insert, args, nulls, false, 0) != SPI_OK_INSERT_RETURNING ||
		SPI_processed != 1)
		elog(ERROR, "dp_agg charger: could not write the ledger");
	reply->ledger_id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
												   SPI_tuptable->tupdesc, 1, &isnull));
	reply->epsilon_remaining = Max(b->epsilon_limit - b->epsilon_spent, 0);
	reply->delta_remaining = Max(b->delta_limit - b->delta_spent, 0);
	reply->result = DP_CHARGE_OK;
}

/* write back the budgets a batch changed */
static void
write_budgets(RoleState *roles, int nroles)
{
	for (int i = 0; i < nroles; i++)
	{
		Datum		args[4];
		char		nulls[4] = {' ', ' ', ' ', ' '};

		if (!roles[i].dirty)
			continue;
		args[0] = ObjectIdGetDatum(roles[i].role);
		args[1] = Float8GetDatum(roles[i].b.epsilon_spent);
		args[2] = Float8GetDatum(roles[i].b.delta_spent);
		args[3] = float8_array_datum(roles[i].b.rdp, DP_RDP_ORDERS);
		if (SPI_execute_plan(plan_update, args, nulls, false, 0) != SPI_OK_UPDATE ||
			SPI_processed != 1)
			elog(ERROR, "dp_agg charger: could not update the budget");
	}
}

/*
 * A checked copy of a request of at most avail bytes at src, in the current
 * memory context; NULL if it is malformed.
 */
static DpChargeRequest *
copy_request(const char *src, Size avail)
{
	DpChargeRequest head;
	DpChargeRequest *req;

	if (avail < offsetof(DpChargeRequest, data))
		return NULL;
	memcpy(&head, src, offsetof(DpChargeRequest, data));
	if (head.size < offsetof(DpChargeRequest, data) + 2 || head.size > avail ||
		head.query_len < 0 || head.detail_len < 0 || head.n_rdp != DP_RDP_ORDERS ||
		offsetof(DpChargeRequest, data) + (Size) head.query_len + 1 + (Size) head.detail_len + 1 +
		sizeof(double) * DP_RDP_ORDERS != head.size)
		return NULL;
	req = palloc(head.size);
	memcpy(req, src, head.size);
	req->data[req->query_len] = '\0';
	req->data[req->query_len + 1 + req->detail_len] = '\0';
	return req;
}

/* the request of a taken slot; NULL if the backend has gone or it is malformed */
static DpChargeRequest *
read_request(TakenRequest *t)
{
	dsm_segment *seg;
	DpChargeRequest *req;

	if (t->handle == DSM_HANDLE_INVALID)
		return t->req;
	seg = dsm_attach(t->handle);
	if (seg == NULL)
		return NULL;
	req = copy_request(dsm_segment_address(seg), dsm_segment_map_length(seg));
	dsm_detach(seg);
	return req;
}

static void
set_message(DpChargeReply *reply, const char *msg)
{
	strlcpy(reply->message, msg, sizeof(reply->message));
}

/*
 * Charge a batch in one transaction: each role's budget row is locked
 * (FOR UPDATE) and read once, the requests are decided in arrival order
 * against it, each admitted one appends its ledger row, and each budget is
 * written once; one synchronous commit makes them all durable.  If anything
 * fails, the transaction is rolled back and the requests are retried one at
 * a time, so that a request that cannot be charged fails alone.  The
 * replies are final only after this returns.
 */
static void
process_batch(TakenRequest *batch, int n)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	volatile bool failed = false;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PG_TRY();
	{
		RoleState  *roles;
		int			nroles = 0;

		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "dp_agg charger: SPI_connect failed");
		PushActiveSnapshot(GetTransactionSnapshot());
		pgstat_report_activity(STATE_RUNNING, "charging privacy budgets");
		prepare_plans();
		roles = palloc(sizeof(RoleState) * n);
		for (int i = 0; i < n; i++)
		{
			DpChargeRequest *req = read_request(&batch[i]);

			memset(&batch[i].reply, 0, sizeof(DpChargeReply));
			if (req == NULL)
			{
				batch[i].reply.result = DP_CHARGE_FAILED;
				set_message(&batch[i].reply, "the request was abandoned");
				continue;
			}
			charge_one(req, role_state(roles, &nroles, req->role), &batch[i].reply);
		}
		write_budgets(roles, nroles);
		SPI_finish();
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(oldcxt);
		edata = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		for (int i = 0; i < n; i++)
		{
			batch[i].reply.result = DP_CHARGE_FAILED;
			set_message(&batch[i].reply, edata->message);
		}
		ereport(LOG,
				(errmsg("dp_agg charger could not commit %d charges: %s", n, edata->message)));
		FreeErrorData(edata);
		failed = true;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(oldcxt);
	pgstat_report_activity(STATE_IDLE, NULL);

	if (failed && n > 1)
	{
		for (int i = 0; i < n; i++)
			process_batch(&batch[i], 1);
	}
}

void
dp_charger_main(Datum arg)
{
	Oid			dboid = DatumGetObjectId(arg);
	ChargerSlot *me = NULL;
	TakenRequest *batch;
	MemoryContext batch_cxt;
	TimestampTz idle_since;

	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);

	/* durability is the point: nobody may configure it away here */
	SetConfigOption("synchronous_commit", "on", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("default_transaction_read_only", "off", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("default_transaction_isolation", "read committed", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("statement_timeout", "0", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("search_path", "pg_catalog", PGC_SUSET, PGC_S_OVERRIDE);

	/* take the slot a backend claimed for us, unless another charger runs */
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	{
		bool		other = false;
		ChargerSlot *free_slot = NULL;

		for (int i = 0; i < shared->n_chargers; i++)
		{
			ChargerSlot *c = &chargers[i];

			if (c->dboid == dboid && c->pid != 0 && c->pid != MyProcPid && process_alive(c->pid))
				other = true;
			else if (c->dboid == dboid && me == NULL)
				me = c;
			else if (c->dboid == InvalidOid && free_slot == NULL)
				free_slot = c;
		}
		if (other)
		{
			if (me != NULL && me->pid == 0)
				me->dboid = InvalidOid;
			me = NULL;
		}
		else if (me == NULL)
			me = free_slot;
		if (me != NULL)
		{
			me->dboid = dboid;
			me->pid = MyProcPid;
			me->latch = MyLatch;
		}
	}
	LWLockRelease(shared->lock);
	if (me == NULL)
		proc_exit(0);

	batch = MemoryContextAlloc(TopMemoryContext, sizeof(TakenRequest) * shared->n_requests);
	batch_cxt = AllocSetContextCreate(TopMemoryContext, "dp_agg charger batch",
									  ALLOCSET_DEFAULT_SIZES);
	idle_since = GetCurrentTimestamp();

	for (;;)
	{
		int			n = 0;

		CHECK_FOR_INTERRUPTS();
		MemoryContextReset(batch_cxt);
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		LWLockAcquire(shared->lock, LW_EXCLUSIVE);
		for (int i = 0; i < shared->n_requests; i++)
		{
			RequestSlot *s = &requests[i];

			if (s->state == SLOT_PENDING && s->dboid == dboid)
			{
				s->state = SLOT_TAKEN;
				s->taken_by = MyProcPid;
				batch[n].slot = i;
				batch[n].seq = s->seq;
				batch[n].handle = s->handle;
				batch[n].req = NULL;
				if (s->handle == DSM_HANDLE_INVALID)
				{
					MemoryContext old = MemoryContextSwitchTo(batch_cxt);

					batch[n].req = copy_request(s->inline_data,
												Min(s->inline_size, CHARGE_INLINE_SIZE));
					MemoryContextSwitchTo(old);
				}
				memset(&batch[n].reply, 0, sizeof(DpChargeReply));
				n++;
			}
		}
		if (n == 0 &&
			TimestampDifferenceExceeds(idle_since, GetCurrentTimestamp(), dp_guc_charger_idle_ms))
		{
			/* nothing pending, under the lock: backends will start a new one */
			me->dboid = InvalidOid;
			me->pid = 0;
			me->latch = NULL;
			LWLockRelease(shared->lock);
			proc_exit(0);
		}
		LWLockRelease(shared->lock);

		if (n == 0)
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 dp_guc_charger_idle_ms, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			continue;
		}

		process_batch(batch, n);

		LWLockAcquire(shared->lock, LW_EXCLUSIVE);
		for (int i = 0; i < n; i++)
		{
			RequestSlot *s = &requests[batch[i].slot];

			if (s->seq == batch[i].seq && s->state == SLOT_TAKEN)
			{
				s->reply = batch[i].reply;
				s->state = SLOT_DONE;
				SetLatch(s->client_latch);
			}
		}
		LWLockRelease(shared->lock);
		idle_since = GetCurrentTimestamp();
	}
}
