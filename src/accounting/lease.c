/*-------------------------------------------------------------------------
 *
 * lease.c
 *	  Budgets leased by the charger to shared memory: a backend repeating a
 *	  statement decides its charge itself, against the leased state, and
 *	  journals it, without a round trip to the charger.
 *
 * Design (doc/charging-design.md).  The charger stays the only process
 * that reads and writes dp_agg.budget and dp_agg.ledger.  After a batch
 * commits, it copies each budget row it committed and may lease into an
 * entry here (dp_lease_grant), valid until a time: at most
 * dp_agg.lease_time from then, and never past the end of the budget's
 * window.  A backend whose statement is identical to the last one it had
 * charged through the charger (so the same role, price and relations, so
 * the same budgets) then charges the entries of those budgets itself
 * (dp_lease_charge): it locks them in slot order, checks every one is
 * still valid, decides with the charger's own functions (budget_charge.c),
 * adds the charge to each, takes the next number of the shared sequence
 * of charges and counts itself in flight, all under the locks; it then
 * appends its journal row (journal.c), leaves flight (dp_lease_landed) and
 * flushes the WAL to the row before it reads any data.
 *
 * Why no interleaving spends past a limit: every decision on a leased
 * budget is made under its entry's lock, against an entry holding every
 * charge admitted before it, whether by a backend (added before the lock
 * is released) or by the charger (the lease was copied from the row it had
 * just committed).  Before the charger reads a budget row for a batch, it
 * recalls the budget's entry (dp_lease_recall: not valid any more, then a
 * wait until no backend is in flight on it), so every charge the entry
 * admitted has its journal row, which the charger folds into the row it
 * read before it decides anything against it (charge_batch.c, "Folding").
 * The sequence number orders the rows as the entries added them, so the
 * fold repeats the same sums rounded the same way (dp_add_up).
 *
 * An entry that may have journal rows not folded yet (charges journaled
 * and not folded, or a backend in flight) is never given to another
 * budget, so that a recall of that budget still finds it and folds.  A
 * crash empties this memory; the charger then folds the whole journal
 * before it leases anything (its first batch folds everything).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/procarray.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "guc.h"
#include "lease.h"

typedef struct DpLease
{
	/* the key; dboid InvalidOid: the entry is free */
	Oid			dboid;
	Oid			budget_rel;
	int64		budget_id;
	bool		valid;			/* only the charger sets it */
	TimestampTz valid_until;
	int32		in_flight;		/* backends between deciding and journaling */
	uint64		journaled;		/* charges journaled, and folded */
	uint64		folded;
	DpBudgetRow row;			/* the decision state (row.tuple unused) */
} DpLease;

#define FOLDED_DBS 64
#define PREPARED_CHANGES 64

typedef struct DpLeaseShared
{
	pg_atomic_uint64 seq;		/* the last number given to a charge */
	pg_atomic_uint64 charges;	/* charges decided on leases, ever */
	pg_atomic_uint64 changes;	/* DBA's changes of budgets and caps, ever */
	/* databases whose whole journal a charger folded since the start */
	slock_t		mutex;
	Oid			folded_dbs[FOLDED_DBS];
	int			folded_next;	/* the place taken next when it is full */
	/* prepared transactions that changed budgets or caps (under mutex) */
	TransactionId prepared_xids[PREPARED_CHANGES];
	Oid			prepared_dbs[PREPARED_CHANGES];
	int			n;
	DpLease		leases[FLEXIBLE_ARRAY_MEMBER];
} DpLeaseShared;

static DpLeaseShared *shared = NULL;
static LWLockPadded *locks = NULL;

static bool prepared_changes_settled(void);
static void dp_lease_recall_all(void);

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* the entries this backend is in flight on (dp_lease_charge .. dp_lease_landed) */
static int	held[DP_LEASE_MAX_BUDGETS];
static int	n_held = 0;
static bool held_journaled = false;

#define LEASE_TRANCHE "dp_agg leases"

static Size
shmem_size(void)
{
	return add_size(offsetof(DpLeaseShared, leases),
					mul_size(dp_guc_max_leases, sizeof(DpLease)));
}

static void
lease_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	if (dp_guc_max_leases > 0)
	{
		RequestAddinShmemSpace(shmem_size());
		RequestNamedLWLockTranche(LEASE_TRANCHE, dp_guc_max_leases);
	}
}

static void
lease_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	if (dp_guc_max_leases <= 0)
		return;
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	shared = ShmemInitStruct("dp_agg leases", shmem_size(), &found);
	if (!found)
	{
		memset(shared, 0, shmem_size());
		pg_atomic_init_u64(&shared->seq, 0);
		pg_atomic_init_u64(&shared->charges, 0);
		pg_atomic_init_u64(&shared->changes, 0);
		SpinLockInit(&shared->mutex);
		shared->n = dp_guc_max_leases;
	}
	locks = GetNamedLWLockTranche(LEASE_TRANCHE);
	LWLockRelease(AddinShmemInitLock);
}

/* called from _PG_init */
void
dp_lease_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = lease_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = lease_shmem_startup;
}

/* can budgets be leased in this server? */
bool
dp_lease_available(void)
{
	return shared != NULL && shared->n > 0;
}

static LWLock *
lock_of(int slot)
{
	return &locks[slot].lock;
}

static bool
same_key(const DpLease *e, Oid dboid, Oid budget_rel, int64 budget_id)
{
	return e->dboid == dboid && e->budget_rel == budget_rel && e->budget_id == budget_id;
}

/* ---------- a backend's side ---------- */

/* leave flight on every entry held; also when the backend exits */
void
dp_lease_landed(void)
{
	for (int i = 0; i < n_held; i++)
	{
		DpLease    *e = &shared->leases[held[i]];

		LWLockAcquire(lock_of(held[i]), LW_EXCLUSIVE);
		Assert(e->in_flight > 0);
		e->in_flight--;
		if (held_journaled)
			e->journaled++;
		LWLockRelease(lock_of(held[i]));
	}
	n_held = 0;
	held_journaled = false;
}

/* a backend that exits in flight (a FATAL error skips PG_FINALLY) lands first */
static void
land_on_exit(int code, Datum arg)
{
	if (n_held > 0)
		dp_lease_landed();
}

/*
 * Decide a charge on the leased budgets refs[0..n-1] (sorted by slot) at
 * the instant now, and if every one admits it, add it to each.  On
 * DP_LEASE_CHARGED the backend is in flight on them, and *seq numbers the
 * charge: the caller appends the journal row, calls dp_lease_journaled and
 * then dp_lease_landed (also on error: the charge then stays in the
 * entries, an over-charge until they are leased again from the table).
 */
DpLeaseVerdict
dp_lease_charge(const DpLeaseRef *refs, int n, const DpChargeAmounts *a,
				const double *curve, const DpPldState *stmt, TimestampTz now, int64 *seq)
{
	static bool registered = false;
	DpLeaseVerdict verdict = DP_LEASE_CHARGED;
	double		composed;
	int			locked = 0;

	if (!dp_lease_available() || n <= 0 || n > DP_LEASE_MAX_BUDGETS || n_held > 0)
		return DP_LEASE_GONE;
	if (!registered)
	{
		before_shmem_exit(land_on_exit, (Datum) 0);
		registered = true;
	}
	for (int i = 0; i < n; i++)
	{
		const DpLeaseRef *r = &refs[i];
		DpLease    *e;

		if (r->slot < 0 || r->slot >= shared->n || (i > 0 && r->slot <= refs[i - 1].slot))
		{
			verdict = DP_LEASE_GONE;
			break;
		}
		LWLockAcquire(lock_of(r->slot), LW_EXCLUSIVE);
		locked++;
		e = &shared->leases[r->slot];
		/*
		 * the same budget, leased, and no DBA's change since this reference
		 * was granted: a change ends the leases of the statements' budgets
		 * (a new budget may pay for it, or a cap bound it), also when
		 * another session's charge leased the same budget again since
		 */
		if (!same_key(e, r->dboid, r->budget_rel, r->budget_id) || !e->valid ||
			!(now < e->valid_until) || pg_atomic_read_u64(&shared->changes) != r->changes)
		{
			verdict = DP_LEASE_GONE;
			break;
		}
		if (!dp_budget_lifetime_admits(&e->row, a) ||
			!dp_budget_row_admits(&e->row.b, a, curve, &composed))
		{
			verdict = DP_LEASE_REFUSED;
			break;
		}
	}
	if (verdict == DP_LEASE_CHARGED)
	{
		*seq = (int64) pg_atomic_add_fetch_u64(&shared->seq, 1);
		pg_atomic_fetch_add_u64(&shared->charges, 1);
		for (int i = 0; i < n; i++)
		{
			DpLease    *e = &shared->leases[refs[i].slot];

			dp_budget_row_add(&e->row, a, curve, stmt);
			e->in_flight++;
			held[i] = refs[i].slot;
		}
		n_held = n;
		held_journaled = false;
	}
	for (int i = locked - 1; i >= 0; i--)
		LWLockRelease(lock_of(refs[i].slot));
	return verdict;
}

/* the journal row of the charge in flight is appended */
void
dp_lease_journaled(void)
{
	held_journaled = true;
}

/* ---------- the charger's side ---------- */

/*
 * Take back the lease of a budget of this database: no backend decides on
 * it any more, and every charge it admitted is journaled (or its backend
 * failed before, and released nothing).  True if the budget may have
 * journal rows to fold (it was leased since the last fold); *leased: it
 * has an entry.
 */
bool
dp_lease_recall(Oid budget_rel, int64 budget_id, bool *leased)
{
	int			slot = -1;
	bool		unfolded = false;

	*leased = false;
	if (!dp_lease_available())
		return false;
	for (int i = 0; i < shared->n && slot < 0; i++)
	{
		DpLease    *e = &shared->leases[i];

		LWLockAcquire(lock_of(i), LW_EXCLUSIVE);
		if (same_key(e, MyDatabaseId, budget_rel, budget_id))
		{
			slot = i;
			e->valid = false;
		}
		LWLockRelease(lock_of(i));
	}
	if (slot < 0)
		return false;
	*leased = true;
	for (;;)
	{
		DpLease    *e = &shared->leases[slot];
		int32		flying;

		LWLockAcquire(lock_of(slot), LW_SHARED);
		flying = e->in_flight;
		unfolded = e->journaled != e->folded || flying > 0;
		LWLockRelease(lock_of(slot));
		if (flying == 0)
			break;
		/* a backend between its decision and its journal row: microseconds */
		CHECK_FOR_INTERRUPTS();
		pg_usleep(20L);
	}
	return unfolded;
}

/*
 * Lease a budget row of this database that the charger has just
 * committed, until the given time (the caller bounds it by dp_agg.lease_time
 * and the end of the row's window); the caller folded every journal row of
 * the budget.  changes_seen: dp_lease_changes() before the row was read.
 * False if no entry is free, or if a DBA changed budgets or caps since
 * (dp_lease_recall_all).
 */
bool
dp_lease_grant(Oid budget_rel, const DpBudgetRow *row, TimestampTz until, uint64 changes_seen,
			   DpLeaseRef *ref)
{
	int			slot = -1;

	if (!dp_lease_available() || !prepared_changes_settled())
		return false;
	/* its own entry, else a free one, else one of no use any more */
	for (int pass = 0; pass < 3 && slot < 0; pass++)
	{
		TimestampTz now = GetCurrentTimestamp();

		for (int i = 0; i < shared->n && slot < 0; i++)
		{
			DpLease    *e = &shared->leases[i];
			bool		take;

			LWLockAcquire(lock_of(i), LW_EXCLUSIVE);
			/* a DBA changed budgets since the row was read: it may be stale */
			if (pg_atomic_read_u64(&shared->changes) != changes_seen)
			{
				LWLockRelease(lock_of(i));
				return false;
			}
			if (pass == 0)
				take = same_key(e, MyDatabaseId, budget_rel, row->id);
			else if (pass == 1)
				take = !OidIsValid(e->dboid);
			else
				take = (!e->valid || !(now < e->valid_until)) && e->in_flight == 0 &&
					e->journaled == e->folded;
			if (take)
			{
				slot = i;
				if (pass == 0)
					e->folded = e->journaled;	/* the caller folded them all */
				else
				{
					e->dboid = MyDatabaseId;
					e->budget_rel = budget_rel;
					e->budget_id = row->id;
					e->journaled = e->folded = 0;
				}
				Assert(e->in_flight == 0);
				e->row = *row;
				e->row.tuple = NULL;
				e->valid_until = until;
				e->valid = true;
			}
			LWLockRelease(lock_of(i));
		}
	}
	if (slot < 0)
		return false;
	ref->slot = slot;
	ref->dboid = MyDatabaseId;
	ref->budget_rel = budget_rel;
	ref->budget_id = row->id;
	ref->changes = changes_seen;
	return true;
}

/*
 * The folds of a recalled budget, counted: after the charger folded every
 * journal row of a budget it recalled, and did not lease it again.
 */
void
dp_lease_folded(Oid budget_rel, int64 budget_id)
{
	if (!dp_lease_available())
		return;
	for (int i = 0; i < shared->n; i++)
	{
		DpLease    *e = &shared->leases[i];

		LWLockAcquire(lock_of(i), LW_EXCLUSIVE);
		if (same_key(e, MyDatabaseId, budget_rel, budget_id) && !e->valid && e->in_flight == 0)
			e->folded = e->journaled;
		LWLockRelease(lock_of(i));
	}
}

/* is a lease of this database valid, or a backend in flight on one? */
bool
dp_lease_any_valid(void)
{
	TimestampTz now = GetCurrentTimestamp();
	bool		any = false;

	if (!dp_lease_available())
		return false;
	for (int i = 0; i < shared->n && !any; i++)
	{
		DpLease    *e = &shared->leases[i];

		LWLockAcquire(lock_of(i), LW_SHARED);
		any = e->dboid == MyDatabaseId &&
			((e->valid && now < e->valid_until) || e->in_flight > 0);
		LWLockRelease(lock_of(i));
	}
	return any;
}

/*
 * The charger of this database folded its whole journal.  When the list is
 * full, the place of another database is taken in turn: its readers then
 * ask for a fold until its charger folds again (a cost, never a charge
 * missed).  (No catalog lookup: this runs after the charger's commit.)
 */
void
dp_lease_db_folded(void)
{
	bool		done = false;

	if (!dp_lease_available())
		return;
	SpinLockAcquire(&shared->mutex);
	for (int i = 0; i < FOLDED_DBS && !done; i++)
	{
		if (shared->folded_dbs[i] == MyDatabaseId)
			done = true;
		else if (!OidIsValid(shared->folded_dbs[i]))
		{
			shared->folded_dbs[i] = MyDatabaseId;
			done = true;
		}
	}
	if (!done)
	{
		shared->folded_dbs[shared->folded_next] = MyDatabaseId;
		shared->folded_next = (shared->folded_next + 1) % FOLDED_DBS;
	}
	SpinLockRelease(&shared->mutex);
}

/*
 * A cheap test before dp_lease_unfolded, for every statement planned: false
 * if no charge was ever decided on a lease since the start and this
 * database's journal was folded since (remembered by the backend once
 * seen).
 */
bool
dp_lease_maybe_unfolded(void)
{
	static Oid	seen_folded = InvalidOid;

	if (!dp_lease_available())
		return false;
	if (pg_atomic_read_u64(&shared->charges) != 0)
		return true;
	if (seen_folded == MyDatabaseId)
		return false;
	SpinLockAcquire(&shared->mutex);
	for (int i = 0; i < FOLDED_DBS; i++)
		if (shared->folded_dbs[i] == MyDatabaseId)
			seen_folded = MyDatabaseId;
	SpinLockRelease(&shared->mutex);
	return seen_folded != MyDatabaseId;
}

/*
 * May the journal of this database hold rows not folded yet?  Rows left by
 * a crash (the charger has not folded every row since the start), charges
 * journaled and not folded, or a backend in flight.
 */
bool
dp_lease_unfolded(void)
{
	bool		folded = false;
	bool		any = false;

	if (!dp_lease_available())
		return false;
	SpinLockAcquire(&shared->mutex);
	for (int i = 0; i < FOLDED_DBS && !folded; i++)
		folded = shared->folded_dbs[i] == MyDatabaseId;
	SpinLockRelease(&shared->mutex);
	if (!folded)
		return true;
	if (pg_atomic_read_u64(&shared->charges) == 0)
		return false;
	for (int i = 0; i < shared->n && !any; i++)
	{
		DpLease    *e = &shared->leases[i];

		LWLockAcquire(lock_of(i), LW_SHARED);
		any = e->dboid == MyDatabaseId && (e->in_flight > 0 || e->journaled != e->folded);
		LWLockRelease(lock_of(i));
	}
	return any;
}

/*
 * A DBA's change of budgets or caps (the trigger dp_agg_recall_leases on
 * dp_agg.budget and dp_agg.cap): every lease of this database ends, and
 * none is granted from rows read before the change.  Called when the
 * change is made and again when its transaction commits (a lease granted
 * in between, from rows that did not show the change yet, ends then): the
 * count is bumped before the entries are invalidated, each under its lock,
 * and dp_lease_grant checks it under the same lock, so a grant either sees
 * the count moved or is invalidated after.
 */
static void
dp_lease_recall_all(void)
{
	if (!dp_lease_available())
		return;
	pg_atomic_fetch_add_u64(&shared->changes, 1);
	for (int i = 0; i < shared->n; i++)
	{
		DpLease    *e = &shared->leases[i];

		LWLockAcquire(lock_of(i), LW_EXCLUSIVE);
		if (e->dboid == MyDatabaseId)
			e->valid = false;
		LWLockRelease(lock_of(i));
	}
}

/* DBA's changes of budgets and caps since the server started */
uint64
dp_lease_changes(void)
{
	return dp_lease_available() ? pg_atomic_read_u64(&shared->changes) : 0;
}

/*
 * A transaction that changed budgets or caps is being prepared: remember
 * it until it ends.  ERROR if too many are (the PREPARE fails, and the
 * change with it).
 */
static void
remember_prepared_change(TransactionId xid)
{
	bool		done = false;

	dp_lease_recall_all();
	SpinLockAcquire(&shared->mutex);
	for (int i = 0; i < PREPARED_CHANGES && !done; i++)
	{
		if (!TransactionIdIsValid(shared->prepared_xids[i]))
		{
			shared->prepared_xids[i] = xid;
			shared->prepared_dbs[i] = MyDatabaseId;
			done = true;
		}
	}
	SpinLockRelease(&shared->mutex);
	if (!done)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many prepared transactions change dp_agg budgets or caps"),
				 errdetail("At most %d can be prepared at a time.", PREPARED_CHANGES),
				 errhint("Commit or roll back the prepared ones first: COMMIT PREPARED or ROLLBACK PREPARED.")));
}

/*
 * May the charger grant leases of this database?  Not while a prepared
 * transaction that changed its budgets or caps is in progress (its change
 * becomes visible at COMMIT PREPARED, which no callback here sees); once
 * one has ended, its change counts as committed: the leases end, the count
 * of changes moves, and the grant in progress is refused.
 */
static bool
prepared_changes_settled(void)
{
	TransactionId xids[PREPARED_CHANGES];
	Oid			dbs[PREPARED_CHANGES];
	bool		settled = true;

	SpinLockAcquire(&shared->mutex);
	memcpy(xids, shared->prepared_xids, sizeof(xids));
	memcpy(dbs, shared->prepared_dbs, sizeof(dbs));
	SpinLockRelease(&shared->mutex);
	for (int i = 0; i < PREPARED_CHANGES; i++)
	{
		if (!TransactionIdIsValid(xids[i]) || dbs[i] != MyDatabaseId)
			continue;
		settled = false;
		if (TransactionIdIsInProgress(xids[i]))
			continue;
		dp_lease_recall_all();
		SpinLockAcquire(&shared->mutex);
		if (shared->prepared_xids[i] == xids[i])
			shared->prepared_xids[i] = InvalidTransactionId;
		SpinLockRelease(&shared->mutex);
	}
	return settled;
}

static bool recall_at_commit = false;

static void
recall_on_commit(XactEvent event, void *arg)
{
	if (!recall_at_commit)
		return;
	/*
	 * COMMIT PREPARED runs no callback here, perhaps in another session:
	 * the charger grants no lease of this database while the prepared
	 * transaction is in progress, and ends them when it has ended
	 * (prepared_changes_settled)
	 */
	if (event == XACT_EVENT_PRE_PREPARE)
		remember_prepared_change(GetTopTransactionId());
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT)
		dp_lease_recall_all();
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_PREPARE)
		recall_at_commit = false;
}

/* a change of budgets or caps in this transaction: recall now and at commit */
void
dp_lease_budgets_changed(void)
{
	static bool registered = false;

	if (!registered)
	{
		RegisterXactCallback(recall_on_commit, NULL);
		registered = true;
	}
	recall_at_commit = true;
	dp_lease_recall_all();
}

/*
 * Free the entries of databases dropped with charges unfolded, which
 * nothing can fold any more and dp_lease_grant would never give to another
 * budget.  In a transaction (it looks the databases up).
 */
void
dp_lease_reclaim_dropped(void)
{
	if (!dp_lease_available())
		return;
	for (int i = 0; i < shared->n; i++)
	{
		DpLease    *e = &shared->leases[i];
		Oid			db;

		LWLockAcquire(lock_of(i), LW_SHARED);
		db = e->journaled != e->folded ? e->dboid : InvalidOid;
		LWLockRelease(lock_of(i));
		if (!OidIsValid(db) || db == MyDatabaseId ||
			SearchSysCacheExists1(DATABASEOID, ObjectIdGetDatum(db)))
			continue;
		LWLockAcquire(lock_of(i), LW_EXCLUSIVE);
		if (e->dboid == db && e->in_flight == 0)
		{
			e->valid = false;
			e->dboid = InvalidOid;
			e->journaled = e->folded = 0;
		}
		LWLockRelease(lock_of(i));
	}
}
