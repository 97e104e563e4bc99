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
 * Shared memory holds one request slot per backend (indexed like PGPROCs)
 * and one charger slot per database with a charger (dp_agg.max_databases).
 *
 * Request slots.  Each is a small state machine under its own spinlock;
 * whoever the state names owns the request body and the reply, and touches
 * them without any lock:
 *
 *	IDLE -> WRITING		the backend: it writes the body
 *	WRITING -> PENDING	the backend publishes it and sets the charger's latch
 *	PENDING -> TAKEN	the charger: it copies the body out, charges, and
 *						writes the reply
 *	TAKEN -> DONE		the charger publishes the reply
 *	TAKEN -> ORPHANED	the charger exits (its exit callback) before replying
 *	DONE, ORPHANED -> IDLE	the backend has read the outcome
 *	WRITING, PENDING -> IDLE	the backend gives up (an error, a cancel, exit)
 *
 * A backend that gives up while its request is TAKEN leaves it TAKEN, and
 * the next request from that slot (the same backend or a new one with the
 * same PGPROC) waits until the charger lets go, so the charger never copies
 * a body being rewritten nor writes a reply into someone else's request.
 * Each request gets a sequence number and each charger a generation
 * (unique since the server started); a TAKEN slot records the generation
 * of the charger holding it.  Backends wait on their slot's condition
 * variable, which is broadcast whenever the state of the slot changes in a
 * way the backend must see: a reply, the holding charger's exit, the
 * database's charger exiting or failing to start while the request is
 * PENDING.
 *
 * Charger slots.  FREE -> STARTING (claimed by the backend that launches
 * the charger) -> RUNNING (the charger registered its latch) -> FREE (the
 * charger retires when idle, or its exit callback runs).  They are changed
 * and read under one LWLock, held only to read or write a few words: no
 * system call, allocation or copy of a request happens under it.  Liveness
 * is "the slot holds this generation and is RUNNING", which a recycled PID
 * cannot fake: only the charger's own exit callback or retirement frees
 * its slot, and a process that dies without running its exit callbacks
 * makes the postmaster reinitialize shared memory.
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
 * Files.  The requests, replies and slots are in charger_shmem.c, the
 * backend's side (launch, submit, wait) in charge_request.c, the rows of
 * the ledger in charge_ledger.c; this file is the charger's side: it
 * decides and charges each batch, and runs the worker.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/heapam.h"
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
#include "utils/float.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "admission.h"
#include "budget_charge.h"
#include "budget_row.h"
#include "budget_store.h"
#include "calibrate.h"
#include "charger.h"
#include "charger_shmem.h"
#include "charge_ledger.h"
#include "compat.h"
#include "guc.h"
#include "journal.h"
#include "lease.h"
#include "pld_state.h"

/* ---------- the charger's side ---------- */

typedef struct TakenRequest
{
	int			slot;
	dsm_handle	handle;
	DpChargeRequest *req;		/* copied from the slot, or NULL */
	DpChargeReply reply;
} TakenRequest;

static void set_message(DpChargeReply *reply, const char *msg);
static void charger_commit_mode(void);
static bool backend_flushes;

/* the releases by kind of a request */
static void
request_pld(const DpChargeRequest *req, DpPldState *stmt)
{
	memset(stmt, 0, sizeof(*stmt));
	if (req->n_pld < 0)
		stmt->saturated = true;
	else
	{
		stmt->n = req->n_pld;
		memcpy(stmt->terms, DP_REQUEST_PLD(req), sizeof(DpPldTerm) * req->n_pld);
	}
}

/*
 * The PLD certificate a request carries for a budget; false if it carries
 * none for it.
 */
static bool
request_cert(const DpChargeRequest *req, const DpBudgetRow *row, DpPldCertificate *cert)
{
	const char *p = DP_REQUEST_CERTS(req);

	for (int i = 0; i < req->n_certs; i++)
	{
		DpChargeCert c;

		memcpy(&c, p, sizeof(c));
		if (c.budget_kind == (int32) row->kind && c.budget_subject == row->subject &&
			(c.kind == DP_PLD_CERT_FIT || c.kind == DP_PLD_CERT_REFUSED))
		{
			memset(cert, 0, sizeof(*cert));
			cert->kind = (DpPldCertKind) c.kind;
			cert->epsilon_limit = c.epsilon_limit;
			cert->delta_limit = c.delta_limit;
			cert->epsilon = c.epsilon;
			cert->state.n = c.n;
			memcpy(cert->state.terms, p + sizeof(c), sizeof(DpPldTerm) * c.n);
			return true;
		}
		p += sizeof(c) + sizeof(DpPldTerm) * c.n;
	}
	return false;
}

/*
 * Histories the PLD certificate refused, as backends composed them
 * (dp_pld_certify): a statement whose history + statement is one of them
 * is refused without asking its backend to compose again (a role whose
 * budget is exhausted, cycling through statement shapes, composes each
 * shape once).  Exact states, not hashes: a refusal here is exactly that
 * of dp_pld_epsilon.  A small ring in the charger's memory, keyed by the
 * budget (its kind and its role or relation); the certificate of a state
 * depends on nothing else, so an entry never goes stale, it only stops
 * being asked for.
 */
#define REFUSED_RING 64

typedef struct RefusedHistory
{
	DpBudgetKind kind;
	Oid			subject;
	double		epsilon;
	double		delta;
	DpPldState	after;
	double		certificate;	/* its dp_pld_epsilon (Infinity: not available) */
} RefusedHistory;

static RefusedHistory *refused_ring = NULL;
static int	refused_next = 0;
static int	refused_count = 0;

/* is after known to be refused for this budget?  *certificate: its epsilon */
static bool
pld_refused(const DpBudgetRow *row, const DpPldState *after, double *certificate)
{
	for (int i = 0; i < refused_count; i++)
	{
		RefusedHistory *r = &refused_ring[i];

		if (r->kind == row->kind && r->subject == row->subject &&
			r->epsilon == row->b.epsilon_limit && r->delta == row->b.delta_limit &&
			dp_pld_state_equal(&r->after, after))
		{
			*certificate = r->certificate;
			return true;
		}
	}
	return false;
}

static void
remember_refused(const DpBudgetRow *row, const DpPldState *after, double certificate)
{
	RefusedHistory *r;
	double		known;

	if (pld_refused(row, after, &known))
		return;
	if (refused_ring == NULL)
		refused_ring = MemoryContextAlloc(TopMemoryContext, sizeof(RefusedHistory) * REFUSED_RING);
	r = &refused_ring[refused_next];
	refused_next = (refused_next + 1) % REFUSED_RING;
	refused_count = Min(refused_count + 1, REFUSED_RING);
	r->kind = row->kind;
	r->subject = row->subject;
	r->epsilon = row->b.epsilon_limit;
	r->delta = row->b.delta_limit;
	r->after = *after;
	r->certificate = certificate;
}

/* the budget a role or a relation has in this batch (NULL: none) */
typedef struct KeyedBudget
{
	bool		relation;
	Oid			key;
	BudgetState *budget;
} KeyedBudget;

/* a role that charges in this batch: its groups and caps */
typedef struct RoleInfo
{
	Oid			role;
	List	   *groups;
	DpCaps		caps;
} RoleInfo;

typedef struct Batch
{
	DpBudgetStore store;
	List	   *keyed;			/* KeyedBudget */
	List	   *budgets;		/* BudgetState, in the order they were locked */
	List	   *roles;			/* RoleInfo */
	/* folding the journal (see "Folding") */
	bool		fold_all;		/* every row, not only those of leased budgets */
	bool		folding;
	bool		refold;			/* a budget was recalled while folding */
	bool		folded_all;
} Batch;

static void fold(Batch *batch);

/* the budget of a role (own or group) or of a relation, read and locked once per batch */
static BudgetState *
budget_of(Batch *batch, bool relation, Oid key)
{
	ListCell   *lc;
	KeyedBudget *k;
	DpBudgetRow row;
	bool		found;

	foreach(lc, batch->keyed)
	{
		k = lfirst(lc);
		if (k->relation == relation && k->key == key)
			return k->budget;
	}
	found = relation ? dp_budget_fetch_relation(&batch->store, key, &row)
		: dp_budget_fetch_role(&batch->store, key, &row);
	k = palloc0(sizeof(KeyedBudget));
	k->relation = relation;
	k->key = key;
	if (found)
	{
		bool		leased = false;

		k->budget = palloc0(sizeof(BudgetState));
		k->budget->row = row;
		batch->budgets = lappend(batch->budgets, k->budget);
		batch->keyed = lappend(batch->keyed, k);
		/*
		 * Before anything is decided against the row: take its lease back and
		 * fold the charges decided on it that the row does not hold yet.
		 */
		if (dp_lease_recall(RelationGetRelid(batch->store.rel), row.id, &leased))
		{
			k->budget->leased = leased;
			batch->refold = true;
			if (!batch->folding)
				fold(batch);
		}
		k->budget->leased = leased;
		return k->budget;
	}
	batch->keyed = lappend(batch->keyed, k);
	return k->budget;
}

static RoleInfo *
role_info(Batch *batch, Oid role)
{
	ListCell   *lc;
	RoleInfo   *r;

	foreach(lc, batch->roles)
	{
		r = lfirst(lc);
		if (r->role == role)
			return r;
	}
	r = palloc0(sizeof(RoleInfo));
	r->role = role;
	r->groups = dp_role_groups(role);
	dp_caps_of(role, r->groups, &r->caps);
	batch->roles = lappend(batch->roles, r);
	return r;
}

/* ---------- folding the journal ---------- */

/*
 * Folding.  The charges backends decide on leased budgets (lease.c) are
 * journaled (journal.c), not written to dp_agg.budget and dp_agg.ledger;
 * the charger folds them in, in the transaction of a batch, before it
 * decides anything against the budgets they charged.  budget_of recalls
 * the lease of every budget it reads; if the budget may have journal rows
 * not folded yet, fold reads every journal row of the budgets recalled so
 * far, reads and recalls the other budgets those rows charged (and again,
 * until no row names a budget not recalled), then adds each row to each of
 * its budgets, in the order the entries added them (seq: the same sums
 * rounded up the same way), deletes it, and writes one ledger row per
 * statement described (statements: how many were folded).  A crash
 * empties the leases but not the journal, so a charger's first batch, and
 * a batch after charges were journaled while it was idle, fold every row
 * (fold_all).  A row's amounts for a budget that no longer exists (or was
 * dropped and created again: another id) are dropped with it.
 */

/* the Renyi DP curve of the statements a ledger row describes, as leased */
typedef struct ShapeCurve
{
	int64		shape;
	double		curve[DP_RDP_ORDERS];
} ShapeCurve;

#define SHAPE_CURVES 64
static ShapeCurve shape_curves[SHAPE_CURVES];
static int	shape_next = 0;

static void
remember_shape(int64 shape, const double *curve)
{
	shape_curves[shape_next].shape = shape;
	memcpy(shape_curves[shape_next].curve, curve, sizeof(double) * DP_RDP_ORDERS);
	shape_next = (shape_next + 1) % SHAPE_CURVES;
}

/*
 * The curve of one statement of a shape: remembered when its budgets were
 * leased, else its ledger row's (a charge of one statement), else, if a
 * DBA deleted that row, infinite at every order (an over-charge of the
 * Renyi curve, never an under-charge).
 */
static void
shape_curve(int64 shape, double *curve)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1];

	for (int i = 0; i < SHAPE_CURVES; i++)
	{
		if (shape_curves[i].shape == shape && shape != 0)
		{
			memcpy(curve, shape_curves[i].curve, sizeof(double) * DP_RDP_ORDERS);
			return;
		}
	}
	for (int i = 0; i < DP_RDP_ORDERS; i++)
		curve[i] = get_float8_infinity();
	args[0] = Int64GetDatum(shape);
	if (SPI_execute_with_args("SELECT rdp FROM dp_agg.ledger WHERE id = $1 AND statements = 1",
							  1, types, args, NULL, true, 1) == SPI_OK_SELECT && SPI_processed == 1)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		int			where;

		if (!isnull &&
			dp_rdp_curve_check(DatumGetArrayTypeP(d), curve, &where) != DP_CURVE_OK)
			for (int i = 0; i < DP_RDP_ORDERS; i++)
				curve[i] = get_float8_infinity();
	}
	remember_shape(shape, curve);
}

/* the releases by kind of a journal row (saturated if it has none kept) */
static void
entry_releases(const DpJournalEntry *e, DpPldState *stmt)
{
	memset(stmt, 0, sizeof(*stmt));
	if (e->releases_len < 0 || e->releases_len % sizeof(DpPldTerm) != 0 ||
		e->releases_len / sizeof(DpPldTerm) > DP_PLD_MAX_KINDS)
		stmt->saturated = true;
	else
	{
		stmt->n = e->releases_len / sizeof(DpPldTerm);
		memcpy(stmt->terms, e->releases, e->releases_len);
	}
}

/* the budget of the batch with this id, or NULL */
static BudgetState *
budget_with_id(Batch *batch, int64 id)
{
	ListCell   *lc;

	foreach(lc, batch->budgets)
	{
		BudgetState *st = lfirst(lc);

		if (st->row.id == id)
			return st;
	}
	return NULL;
}

/*
 * Read (and lock, and recall) the budget of this id into the batch, if it
 * exists.  By its id, not by the role or relation the journal names: ids
 * survive a dump and restore, OIDs do not.
 */
static void
read_budget_id(Batch *batch, int64 id)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1];
	bool		isnull;
	Datum		d;

	if (budget_with_id(batch, id) != NULL)
		return;
	args[0] = Int64GetDatum(id);
	if (SPI_execute_with_args("SELECT role::pg_catalog.oid, relation::pg_catalog.oid FROM dp_agg.budget WHERE id = $1",
							  1, types, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "dp_agg charger: could not look up budget " INT64_FORMAT, id);
	if (SPI_processed != 1)
		return;					/* gone: what the journal charged it is dropped */
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (!isnull)
		(void) budget_of(batch, false, DatumGetObjectId(d));
	else
	{
		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
		if (!isnull)
			(void) budget_of(batch, true, DatumGetObjectId(d));
	}
}

/* the journal rows to fold: of a budget recalled in this batch, or all */
static List *
read_journal(Relation rel, Batch *batch)
{
	List	   *entries = NIL;
	TableScanDesc scan = table_beginscan(rel, SnapshotSelf, 0, NULL);
	HeapTuple	tup;

	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		DpJournalEntry *e = palloc(sizeof(DpJournalEntry));
		bool		wanted = batch->fold_all;

		if (!dp_journal_decode(rel, tup, e))
		{
			pfree(e);
			continue;
		}
		for (int j = 0; j < e->n_budgets && !wanted; j++)
		{
			BudgetState *st = budget_with_id(batch, e->budgets[j]);

			wanted = st != NULL && st->leased;
		}
		if (!wanted)
		{
			pfree(e);
			continue;
		}
		/* the releases point into the tuple: keep them */
		if (e->releases_len >= 0)
			e->releases = memcpy(palloc(Max(e->releases_len, 1)), e->releases, e->releases_len);
		entries = lappend(entries, e);
	}
	table_endscan(scan);
	return entries;
}

static int
entry_seq_cmp(const ListCell *a, const ListCell *b)
{
	const DpJournalEntry *x = lfirst(a);
	const DpJournalEntry *y = lfirst(b);

	return x->seq < y->seq ? -1 : x->seq > y->seq ? 1 : 0;
}

/* the folded statements of one shape and role: one ledger row */
typedef struct FoldedShape
{
	int64		shape;
	Oid			role;
	int64		budgets[DP_JOURNAL_MAX_BUDGETS];
	int			n_budgets;
	int32		statements;
	TimestampTz at;
	double		epsilon;
	double		delta;
	double		curve[DP_RDP_ORDERS];
} FoldedShape;

static void
write_folded(const FoldedShape *f)
{
	Oid			types[8] = {TIMESTAMPTZOID, OIDOID, FLOAT8OID, FLOAT8OID, FLOAT8ARRAYOID,
	INT8ARRAYOID, INT4OID, INT8OID};
	Datum		args[8];
	Datum		curve[DP_RDP_ORDERS];
	Datum		budgets[DP_JOURNAL_MAX_BUDGETS];

	for (int i = 0; i < DP_RDP_ORDERS; i++)
		curve[i] = Float8GetDatum(f->curve[i]);
	for (int i = 0; i < f->n_budgets; i++)
		budgets[i] = Int64GetDatum(f->budgets[i]);
	args[0] = TimestampTzGetDatum(f->at);
	args[1] = ObjectIdGetDatum(f->role);
	args[2] = Float8GetDatum(f->epsilon);
	args[3] = Float8GetDatum(f->delta);
	args[4] = PointerGetDatum(construct_array(curve, DP_RDP_ORDERS, FLOAT8OID, sizeof(float8),
											  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	args[5] = PointerGetDatum(construct_array(budgets, f->n_budgets, INT8OID, 8,
											  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	args[6] = Int32GetDatum(f->statements);
	args[7] = Int64GetDatum(f->shape);
	/* described as the ledger row of the shape; if a DBA deleted it, by the journal alone */
	if (SPI_execute_with_args("INSERT INTO dp_agg.ledger (at, role, kind, epsilon, delta, query, detail, rdp, "
							  "relations, budgets, windows, statements) "
							  "SELECT $1, $2::regrole, 'charge', $3, $4, l.query, "
							  "COALESCE(l.detail, '[]'::pg_catalog.jsonb), $5, l.relations, "
							  "COALESCE(l.budgets, $6), "
							  "CASE WHEN l.id IS NULL THEN pg_catalog.array_fill(NULL::pg_catalog.timestamptz, "
							  "ARRAY[pg_catalog.cardinality($6)]) ELSE l.windows END, $7 "
							  "FROM (SELECT) AS one LEFT JOIN dp_agg.ledger AS l ON l.id = $8",
							  8, types, args, NULL, false, 0) != SPI_OK_INSERT || SPI_processed != 1)
		elog(ERROR, "dp_agg charger: could not write the ledger row of folded charges");
}

/*
 * Write the ledger row of folded charges, in a subtransaction: their
 * statements have released already, so a row that a DBA's constraint or
 * trigger refuses must not stop their budgets from being charged.  The
 * server log says what the ledger lacks.
 */
static void
write_folded_or_log(const FoldedShape *f)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		write_folded(f);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		ereport(WARNING,
				(errmsg("dp_agg charger: the ledger refused the row of %d charges of role %u folded from the journal: %s",
						f->statements, f->role, edata->message),
				 errdetail("Their budgets were charged; dp_agg.ledger lacks the row.")));
		FreeErrorData(edata);
	}
	PG_END_TRY();
}

/* add one folded statement to its shape's ledger row */
static void
count_folded(List **shapes, const DpJournalEntry *e, const double *curve)
{
	ListCell   *lc;
	FoldedShape *f = NULL;

	foreach(lc, *shapes)
	{
		FoldedShape *g = lfirst(lc);

		if (g->shape == e->shape && g->role == e->role && g->n_budgets == e->n_budgets &&
			memcmp(g->budgets, e->budgets, sizeof(int64) * e->n_budgets) == 0)
			f = g;
	}
	if (f == NULL)
	{
		f = palloc0(sizeof(FoldedShape));
		f->shape = e->shape;
		f->role = e->role;
		f->n_budgets = e->n_budgets;
		memcpy(f->budgets, e->budgets, sizeof(int64) * e->n_budgets);
		*shapes = lappend(*shapes, f);
	}
	f->statements++;
	f->at = Max(f->at, e->at);
	f->epsilon = dp_add_up(f->epsilon, e->epsilon);
	f->delta = dp_add_up(f->delta, e->delta);
	for (int i = 0; i < DP_RDP_ORDERS; i++)
		f->curve[i] = dp_add_up(f->curve[i], curve[i]);
}

static void
fold(Batch *batch)
{
	Oid			relid = dp_journal_relid();
	Relation	rel;
	List	   *entries;
	List	   *shapes = NIL;
	ListCell   *lc;

	if (!OidIsValid(relid))
		return;					/* SQL objects older than 0.4: nothing was leased */
	batch->folding = true;
	rel = table_open(relid, RowExclusiveLock);
	/* read and recall every budget the rows charged, until none is new */
	do
	{
		batch->refold = false;
		entries = read_journal(rel, batch);
		foreach(lc, entries)
		{
			DpJournalEntry *e = lfirst(lc);

			for (int j = 0; j < e->n_budgets; j++)
				read_budget_id(batch, e->budgets[j]);
		}
	} while (batch->refold);

	list_sort(entries, entry_seq_cmp);
	foreach(lc, entries)
	{
		DpJournalEntry *e = lfirst(lc);
		DpChargeAmounts a;
		double		curve[DP_RDP_ORDERS];
		DpPldState	stmt;

		a.epsilon = e->epsilon;
		a.delta = e->delta;
		a.selection_epsilon = e->selection_epsilon;
		a.selection_delta = e->selection_delta;
		shape_curve(e->shape, curve);
		entry_releases(e, &stmt);
		for (int j = 0; j < e->n_budgets; j++)
		{
			BudgetState *st = budget_with_id(batch, e->budgets[j]);

			if (st == NULL)
				continue;		/* the budget is gone */
			dp_budget_row_add(&st->row, &a, curve, &stmt);
			st->dirty = true;	/* folded */
		}
		count_folded(&shapes, e, curve);
		simple_heap_delete(rel, &e->tid);
	}
	foreach(lc, shapes)
		write_folded_or_log(lfirst(lc));
	table_close(rel, NoLock);
	batch->folding = false;
	batch->refold = false;
}

/*
 * The budgets that pay for a request, each once: the role's own (or its
 * group's, if the role is a group), those of the groups it is a member of
 * (nearest first), those of the relations it read and of their ancestors.
 * *role_paid: one of them is a role's or a group's (a relation's budget
 * alone does not let a role release).
 */
static List *
applicable(Batch *batch, const DpChargeRequest *req, RoleInfo *ri, bool *role_paid)
{
	List	   *set = NIL;
	BudgetState *st;
	ListCell   *lc;
	Oid			rel;

	*role_paid = false;
	st = budget_of(batch, false, req->role);
	if (st != NULL)
	{
		set = lappend(set, st);
		*role_paid = true;
	}
	foreach(lc, ri->groups)
	{
		st = budget_of(batch, false, lfirst_oid(lc));
		if (st != NULL && st->row.kind == DP_BUDGET_GROUP && !list_member_ptr(set, st))
		{
			set = lappend(set, st);
			*role_paid = true;
		}
	}
	for (int i = 0; i < req->n_relations + req->n_ancestors; i++)
	{
		memcpy(&rel, DP_REQUEST_RELATIONS(req) + sizeof(Oid) * i, sizeof(Oid));
		st = budget_of(batch, true, rel);
		if (st != NULL && !list_member_ptr(set, st))
			set = lappend(set, st);
	}
	return set;
}

/* is the request within the role's caps?  If not, the reply says which */
static bool
within_caps(const DpChargeRequest *req, const DpCaps *caps, DpChargeReply *reply)
{
	const double asked[DP_CAP_KINDS] = {req->epsilon, req->delta, req->call_epsilon, req->call_delta};

	for (int k = 0; k < DP_CAP_KINDS; k++)
	{
		if (caps->set[k] && !(asked[k] <= caps->cap[k]))
		{
			reply->result = DP_CHARGE_CAPPED;
			reply->cap_kind = k;
			reply->cap_role = caps->role[k];
			reply->cap = caps->cap[k];
			reply->asked = asked[k];
			return false;
		}
	}
	return true;
}

/* what a request charges each budget that pays for it */
static DpChargeAmounts
request_amounts(const DpChargeRequest *req)
{
	DpChargeAmounts a;

	a.epsilon = req->epsilon;
	a.delta = req->delta;
	a.selection_epsilon = req->selection_epsilon;
	a.selection_delta = req->selection_delta;
	return a;
}

typedef enum Admission
{
	ADMIT,
	REFUSE,
	ASK_PLD						/* only a composition can decide */
} Admission;

/* how one budget decided, for the reply and the charge */
typedef struct Verdict
{
	Admission	admission;
	bool		lifetime;		/* REFUSE: by the lifetime limit */
	double		composed;
	double		pld_composed;
	bool		adopt;			/* ADMIT by cert: it becomes the frontier */
	DpPldCertificate cert;
} Verdict;

/*
 * Does one budget admit the request?  Cheapest first, none composing: the
 * lifetime sums; the basic sums; for 'pld' budgets the frontier (a
 * composition known to fit that covers history + statement) or the
 * certificate the request carries; the Renyi certificate; for 'pld'
 * budgets a refusal known for exactly history + statement.  Otherwise
 * the statement's backend must compose (ASK_PLD).  The work is a few
 * comparisons of at most DP_PLD_MAX_KINDS kinds, whatever the history.
 */
static void
admits(BudgetState *st, const DpChargeRequest *req, const double *curve,
	   const DpPldState *stmt, Verdict *v)
{
	DpBudgetRow *row = &st->row;
	DpBudget   *b = &row->b;
	bool		ask = false;
	DpChargeAmounts amounts = request_amounts(req);

	memset(v, 0, sizeof(*v));
	v->composed = NAN;
	v->pld_composed = NAN;
	v->admission = REFUSE;
	if (!dp_budget_lifetime_admits(row, &amounts))
	{
		v->lifetime = true;
		return;
	}
	if (row->pld_accounting)
	{
		DpBudget	basic = *b;
		DpPldState	after;
		DpPldCertificate cert;

		basic.renyi = false;
		v->admission = ADMIT;
		if (dp_budget_row_admits(&basic, &amounts, curve, &v->composed))
			return;
		after = dp_pld_state_after(&row->pld, stmt);
		if (!after.saturated && b->delta_limit > 0)
		{
			if (stmt->n == 0)
				return;			/* no noisy release to compose */
			if (dp_pld_frontier_admits(&row->frontier, b->epsilon_limit, b->delta_limit, &after))
				return;
			if (request_cert(req, row, &cert) &&
				cert.epsilon_limit == b->epsilon_limit && cert.delta_limit == b->delta_limit)
			{
				if (cert.kind == DP_PLD_CERT_FIT && cert.epsilon <= b->epsilon_limit &&
					dp_pld_state_covers(&cert.state, &after))
				{
					v->adopt = true;
					v->cert = cert;
					return;
				}
				if (cert.kind == DP_PLD_CERT_REFUSED && dp_pld_state_equal(&cert.state, &after))
					remember_refused(row, &after, cert.epsilon);
			}
			ask = !pld_refused(row, &after, &v->pld_composed);
		}
		v->admission = REFUSE;
	}
	if (dp_budget_row_admits(b, &amounts, curve, &v->composed))
		v->admission = ADMIT;
	else if (ask)
		v->admission = ASK_PLD;
}

/* the reply's account of the budget that decided */
static void
describe_budget(const BudgetState *st, const Verdict *v, DpChargeReply *reply)
{
	const DpBudgetRow *row = &st->row;

	reply->budget_kind = row->kind;
	reply->budget_subject = row->subject;
	reply->renyi = row->b.renyi;
	reply->lifetime = v->lifetime;
	reply->composed = v->composed;
	reply->pld_composed = v->pld_composed;
	reply->epsilon_limit = row->b.epsilon_limit;
	reply->delta_limit = row->b.delta_limit;
	reply->has_window = row->has_window && row->has_window_start;
	reply->window_start = row->window_start;
	reply->window_end = st->window_end;
	if (v->lifetime)
	{
		reply->epsilon_remaining = Max(row->lifetime_epsilon_limit - row->lifetime_epsilon_spent, 0);
		reply->delta_remaining = Max(row->lifetime_delta_limit - row->lifetime_delta_spent, 0);
	}
	else
	{
		reply->epsilon_remaining = Max(row->b.epsilon_limit - row->b.epsilon_spent, 0);
		reply->delta_remaining = Max(row->b.delta_limit - row->b.delta_spent, 0);
	}
}

/* charge one budget that admitted the request */
static void
charge_budget(BudgetState *st, const DpChargeRequest *req, const double *curve,
			  const DpPldState *stmt, const Verdict *v)
{
	DpBudgetRow *row = &st->row;
	DpChargeAmounts amounts = request_amounts(req);

	if (v->adopt)
	{
		dp_pld_frontier_adopt(&row->frontier, &v->cert);
		st->frontier_dirty = true;
	}
	dp_budget_row_add(row, &amounts, curve, stmt);
	st->dirty = true;			/* charged */
}

/* until when the statements prepaid to these budgets may run: the first window end */
static TimestampTz
prepaid_until(List *set)
{
	TimestampTz until = DT_NOEND;
	ListCell   *lc;

	foreach(lc, set)
	{
		BudgetState *st = lfirst(lc);

		if (st->row.has_window && st->window_end < until)
			until = st->window_end;
	}
	return until;
}

/*
 * Decide one more statement against every budget of an admitted request
 * and, if each admits it, charge it to each: as if an identical request
 * arrived right after (by the same certificates, none composing, the same
 * caps, the same directed rounding).
 */
static bool
charge_again(BudgetState **budgets, int n, const DpChargeRequest *req, const double *curve,
			 const DpPldState *stmt)
{
	Verdict    *v = palloc(sizeof(Verdict) * n);
	bool		ok = true;

	for (int i = 0; i < n && ok; i++)
	{
		admits(budgets[i], req, curve, stmt, &v[i]);
		ok = v[i].admission == ADMIT;
	}
	if (ok)
		for (int i = 0; i < n; i++)
			charge_budget(budgets[i], req, curve, stmt, &v[i]);
	pfree(v);
	return ok;
}

/*
 * Prepaid statements (dp_agg.prepay; the backend's side is in budget.c).
 * A request for copies > 1 asks its budgets to pay, beside the statement,
 * for up to copies - 1 identical statements that its backend may then run
 * without asking.  Each is decided and charged by charge_again, so the
 * budgets end exactly where that many requests in a row would have left
 * them.  A prepayment takes at most half of what the budgets would still
 * admit: on scratch copies of them, up to 2 (copies - 1) more statements
 * are decided, and if m are admitted, min(copies - 1, m / 2) are charged;
 * so the last statements a budget can pay for are never held by one
 * session from the role's others (or from the other members of a group).
 * Nothing is prepaid when a window of the budgets ends before the
 * prepaid statements would expire (prepay_ms from now, the instant the
 * charge is decided; the backend counts them from before it asked): what
 * a window pays for is run in that window, and a session does not take,
 * in a window's last moments, statements it would have no time to run.
 * Returns how many were charged beyond the statement.
 */
static int
prepay(List *set, const DpChargeRequest *req, const double *curve, const DpPldState *stmt,
	   TimestampTz now)
{
	int			want = req->copies - 1;
	int			n = list_length(set);
	BudgetState *scratch;
	BudgetState **real;
	BudgetState **sim;
	int			admitted = 0;
	int			granted;
	int			i = 0;
	ListCell   *lc;

	if (want <= 0 || n == 0 || req->prepay_ms <= 0 ||
		prepaid_until(set) < TimestampTzPlusMilliseconds(now, req->prepay_ms))
		return 0;
	scratch = palloc(sizeof(BudgetState) * n);
	real = palloc(sizeof(BudgetState *) * n);
	sim = palloc(sizeof(BudgetState *) * n);
	foreach(lc, set)
	{
		real[i] = lfirst(lc);
		scratch[i] = *real[i];
		sim[i] = &scratch[i];
		i++;
	}
	while (admitted < 2 * want && charge_again(sim, n, req, curve, stmt))
		admitted++;
	granted = Min(want, admitted / 2);
	for (i = 0; i < granted; i++)
		if (!charge_again(real, n, req, curve, stmt))
			elog(ERROR, "dp_agg charger: a budget refused a prepaid statement it admitted on its copy");
	pfree(scratch);
	pfree(real);
	pfree(sim);
	return granted;
}

/*
 * Decide one request against every budget that pays for it (in memory)
 * and, if all of them admit it, charge each and append it to the ledger:
 * atomically, since the batch commits or rolls back as a whole, and
 * nothing of a refused request is written anywhere.  Each budget is first
 * renewed if the request falls in a later window than the one it holds;
 * the instant is the charger's clock when it decides, which the ledger
 * records as at: a statement charged at 23:59:59 of a daily window counts
 * in that day, whenever it releases.  Refused before anything is charged,
 * in this order: no budget of the role or of a group (NO_BUDGET), a cap
 * (CAPPED), a budget that cannot pay by any cheap certificate (DENIED,
 * naming the first such budget), a 'pld' budget that only a composition
 * can decide (NEED_PLD: its backend composes, and asks again).  Once it
 * is charged, the statements it prepays, if any (prepay), are charged
 * after it, and its one ledger row records them all.
 */
static void
charge_one(const DpChargeRequest *req, Batch *batch, LedgerWriter *ledger, DpChargeReply *reply,
		   List **charged)
{
	double		curve[DP_RDP_ORDERS];
	DpPldState	stmt;
	RoleInfo   *ri = role_info(batch, req->role);
	bool		role_paid;
	List	   *set = applicable(batch, req, ri, &role_paid);
	TimestampTz now = GetCurrentTimestamp();
	Verdict    *verdicts;
	int			i;
	ListCell   *lc;
	int			refused = -1;
	int			asked = -1;
	int			copies;

	reply->composed = NAN;
	reply->pld_composed = NAN;
	if (!role_paid)
	{
		reply->result = DP_CHARGE_NO_BUDGET;
		return;
	}
	if (!dp_budget_store_has(&batch->store, "selection_epsilon") &&
		(req->selection_epsilon != 0 || req->selection_delta != 0))
	{
		/* the selection needs 0.3 objects, checked before: fail closed */
		reply->result = DP_CHARGE_FAILED;
		set_message(reply, "The SQL objects of dp_agg are older than version 0.3 and cannot record a private selection.");
		return;
	}
	if (!within_caps(req, &ri->caps, reply))
		return;
	memcpy(curve, DP_REQUEST_CURVE(req), sizeof(curve));
	request_pld(req, &stmt);

	verdicts = palloc(sizeof(Verdict) * list_length(set));
	i = 0;
	foreach(lc, set)
	{
		BudgetState *st = lfirst(lc);

		dp_budget_roll_window(&st->row, now, &st->window_end);
		admits(st, req, curve, &stmt, &verdicts[i]);
		if (verdicts[i].admission == REFUSE && refused < 0)
			refused = i;
		if (verdicts[i].admission == ASK_PLD && asked < 0)
			asked = i;
		i++;
	}
	if (refused >= 0 || asked >= 0)
	{
		int			which = refused >= 0 ? refused : asked;
		BudgetState *st = list_nth(set, which);

		describe_budget(st, &verdicts[which], reply);
		if (refused >= 0)
			reply->result = DP_CHARGE_DENIED;
		else
		{
			reply->result = DP_CHARGE_NEED_PLD;
			reply->history = st->row.pld;
		}
		return;
	}

	i = 0;
	foreach(lc, set)
		charge_budget(lfirst(lc), req, curve, &stmt, &verdicts[i++]);
	copies = 1 + (ledger->statements ? prepay(set, req, curve, &stmt, now) : 0);
	reply->ledger_id = dp_ledger_append(ledger, req, curve, set, copies);
	reply->result = DP_CHARGE_OK;
	if (copies == 1)
	{
		*charged = set;
		remember_shape(reply->ledger_id, curve);
	}
	reply->copies = copies;
	reply->prepaid_until = prepaid_until(set);
	if (set != NIL)
		describe_budget(linitial(set), &verdicts[0], reply);
}

/* write back the budgets a batch changed */
static void
write_budgets(Batch *batch)
{
	ListCell   *lc;

	foreach(lc, batch->budgets)
	{
		BudgetState *st = lfirst(lc);

		if (st->dirty || st->frontier_dirty)
			dp_budget_store_write(&batch->store, &st->row, st->frontier_dirty);
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
	const char *certs;
	Size		certs_size = 0;

	if (avail < offsetof(DpChargeRequest, data))
		return NULL;
	memcpy(&head, src, offsetof(DpChargeRequest, data));
	if (head.size < offsetof(DpChargeRequest, data) + 1 || head.size > avail ||
		head.copies < 0 || head.copies > DP_PREPAY_MAX || head.prepay_ms < 0 ||
		head.query_len < 0 || head.detail_len < (int32) VARHDRSZ || head.n_rdp != DP_RDP_ORDERS ||
		head.n_pld < -1 || head.n_pld > DP_PLD_MAX_KINDS ||
		head.n_relations < 0 || head.n_relations > (int32) (MaxAllocSize / sizeof(Oid)) ||
		head.n_ancestors < 0 || head.n_ancestors > (int32) (MaxAllocSize / sizeof(Oid)) ||
		head.n_certs < 0 || head.certs_size < 0 ||
		offsetof(DpChargeRequest, data) + (Size) head.query_len + 1 + (Size) head.detail_len +
		sizeof(double) * DP_RDP_ORDERS + sizeof(DpPldTerm) * (Size) Max(head.n_pld, 0) +
		sizeof(Oid) * ((Size) head.n_relations + (Size) head.n_ancestors) +
		(Size) head.certs_size != head.size)
		return NULL;
	req = palloc(head.size);
	memcpy(req, src, head.size);
	req->data[req->query_len] = '\0';
	/* the detail is one uncompressed jsonb varlena of exactly its length */
	{
		char	   *copy = palloc(req->detail_len);

		memcpy(copy, DP_REQUEST_DETAIL(req), req->detail_len);
		if (VARATT_IS_EXTENDED(copy) || VARSIZE(copy) != (Size) req->detail_len)
			return NULL;
		pfree(copy);
	}
	/* the certificates fill their bytes exactly */
	certs = DP_REQUEST_CERTS(req);
	for (int i = 0; i < req->n_certs; i++)
	{
		DpChargeCert c;

		if (certs_size + sizeof(c) > (Size) req->certs_size)
			return NULL;
		memcpy(&c, certs + certs_size, sizeof(c));
		if (c.n < 0 || c.n > DP_PLD_MAX_KINDS)
			return NULL;
		certs_size += sizeof(c) + sizeof(DpPldTerm) * c.n;
	}
	if (certs_size != (Size) req->certs_size)
		return NULL;
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
 * Leasing.  After a batch commits, the charger leases (lease.c) each budget
 * row it committed that a backend may charge alone: one whose lease it
 * recalled for the batch, and one a request of the batch charged, but not
 * a 'pld' budget (its certificates are checked here, against the history),
 * nor one whose window has ended.  The lease holds until
 * dp_agg.lease_time from now, and not past the end of the row's window.
 * The reply of a request charged alone (no prepaid statements) names the
 * leases of all of its budgets, if each was leased: its backend charges
 * its next identical statements on them.  Nothing is leased when the
 * backends do not flush the charges themselves (synchronous replication:
 * charger_commit_mode), or when dp_agg.lease_time is 0.
 */
typedef struct PendingLease
{
	DpBudgetRow row;			/* as committed */
	TimestampTz end;			/* of its window */
	bool		granted;
	DpLeaseRef	ref;
} PendingLease;

typedef struct PendingLeases
{
	int			n;
	PendingLease *leases;
	int		   *n_of;			/* per request charged alone: its budgets, */
	int		  **of;				/* as indexes into leases (-1: not leased) */
	int			n_recalled;		/* budgets recalled and not to be leased */
	int64	   *recalled;
} PendingLeases;

/* budgets are leased only to 0.4 objects and later: a journal, budget ids */
static bool
leasing(void)
{
	return dp_guc_lease_ms > 0 && backend_flushes && dp_lease_available() &&
		OidIsValid(dp_journal_relid());
}

/*
 * The budgets of the batch to lease once it commits, and those of each
 * request charged alone; in cxt, which outlives the transaction.
 */
static PendingLeases *
leases_to_grant(Batch *batch, List **charged, int n, MemoryContext cxt, bool grant)
{
	PendingLeases *p = MemoryContextAllocZero(cxt, sizeof(PendingLeases));
	BudgetState **pending_st = palloc0(sizeof(BudgetState *) * Max(list_length(batch->budgets), 1));
	TimestampTz now = GetCurrentTimestamp();
	ListCell   *lc;

	p->leases = MemoryContextAllocZero(cxt, sizeof(PendingLease) * Max(list_length(batch->budgets), 1));
	p->n_of = MemoryContextAllocZero(cxt, sizeof(int) * Max(n, 1));
	p->of = MemoryContextAllocZero(cxt, sizeof(int *) * Max(n, 1));
	p->recalled = MemoryContextAllocZero(cxt, sizeof(int64) * Max(list_length(batch->budgets), 1));
	foreach(lc, batch->budgets)
	{
		BudgetState *st = lfirst(lc);
		bool		wanted = st->leased;
		DpBudgetRow rolled = st->row;
		TimestampTz end;

		for (int i = 0; i < n && !wanted; i++)
			wanted = list_member_ptr(charged[i], st);
		dp_budget_roll_window(&rolled, now, &end);
		if (!grant || !wanted || st->row.pld_accounting || st->row.id == 0 ||
			rolled.has_window_start != st->row.has_window_start ||
			rolled.window_start != st->row.window_start)	/* its window has ended */
		{
			if (st->leased)
				p->recalled[p->n_recalled++] = st->row.id;
			continue;
		}
		pending_st[p->n] = st;
		p->leases[p->n].row = st->row;
		p->leases[p->n].row.tuple = NULL;
		p->leases[p->n].end = end;
		p->n++;
	}
	for (int i = 0; i < n; i++)
	{
		int			m = 0;

		if (charged[i] == NIL || list_length(charged[i]) > DP_LEASE_MAX_BUDGETS)
			continue;
		p->of[i] = MemoryContextAlloc(cxt, sizeof(int) * list_length(charged[i]));
		foreach(lc, charged[i])
		{
			int			k;

			for (k = 0; k < p->n && pending_st[k] != lfirst(lc); k++)
				;
			p->of[i][m++] = k < p->n ? k : -1;
		}
		p->n_of[i] = m;
	}
	return p;
}

/* lease them, and name the leases in the replies of the requests they pay for */
static void
grant_leases(Oid budget_rel, PendingLeases *p, TakenRequest *batch, int n, uint64 changes_seen)
{
	TimestampTz now = GetCurrentTimestamp();
	TimestampTz until = TimestampTzPlusMilliseconds(now, dp_guc_lease_ms);

	for (int k = 0; k < p->n; k++)
	{
		p->leases[k].granted = now < p->leases[k].end &&
			dp_lease_grant(budget_rel, &p->leases[k].row, Min(until, p->leases[k].end),
						   changes_seen, &p->leases[k].ref);
		if (!p->leases[k].granted)
			dp_lease_folded(budget_rel, p->leases[k].row.id);
	}
	/* the others recalled have nothing left to fold */
	for (int k = 0; k < p->n_recalled; k++)
		dp_lease_folded(budget_rel, p->recalled[k]);
	for (int i = 0; i < n; i++)
	{
		DpChargeReply *reply = &batch[i].reply;
		int			m = 0;

		if (reply->result != DP_CHARGE_OK || p->n_of[i] == 0)
			continue;
		reply->lease_until = until;
		for (int j = 0; j < p->n_of[i]; j++)
		{
			int			k = p->of[i][j];

			if (k < 0 || !p->leases[k].granted)
				break;
			reply->leases[m++] = p->leases[k].ref;
		}
		if (m < p->n_of[i])
			continue;
		/* in slot order, the order the backend locks them in */
		for (int a = 1; a < m; a++)
			for (int b = a; b > 0 && reply->leases[b - 1].slot > reply->leases[b].slot; b--)
			{
				DpLeaseRef	t = reply->leases[b];

				reply->leases[b] = reply->leases[b - 1];
				reply->leases[b - 1] = t;
			}
		reply->n_leases = m;
	}
}

/*
 * The first batch of a charger folds every journal row (a crash leaves rows
 * that no lease remembers), and so does one after charges were journaled
 * while the charger was idle (charger_main); fold_charges: the charges
 * decided on leases up to the last such fold.
 */
static bool fold_everything = true;
static uint64 fold_charges = 0;

/*
 * Charge a batch in one transaction: each budget row is locked (as SELECT
 * ... FOR UPDATE locks it) and read once, its lease recalled and the
 * journal folded into it (see "Folding"), the requests are decided in
 * arrival order against the budgets in memory, each admitted one appends
 * its ledger row, and each budget is written once; one commit makes them
 * all durable (charger_commit_mode).  Then the budgets are leased again
 * (see "Leasing").  If anything fails, the transaction is rolled back and
 * the requests are retried one at a time, so that a request that cannot
 * be charged fails alone.  The replies are final only after this returns.
 * n may be 0: only a fold.
 */
static void
process_batch(TakenRequest *batch, int n)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	volatile bool failed = false;
	List	  **charged = palloc0(sizeof(List *) * Max(n, 1));
	uint64		charges = dp_lease_charges();
	uint64		changes = dp_lease_changes();	/* before any row is read */

	charger_commit_mode();
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PG_TRY();
	{
		Batch		b;
		LedgerWriter ledger;
		PendingLeases *pending = NULL;
		Oid			budget_rel;
		bool		folded_all;

		memset(&b, 0, sizeof(b));
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "dp_agg charger: SPI_connect failed");
		PushActiveSnapshot(GetTransactionSnapshot());
		pgstat_report_activity(STATE_RUNNING, "charging privacy budgets");
		if (!dp_budget_store_open(&b.store, true))
			elog(ERROR, "dp_agg charger: dp_agg.budget does not exist");
		budget_rel = RelationGetRelid(b.store.rel);
		dp_ledger_open(&ledger);
		if (fold_everything)
		{
			b.fold_all = true;
			fold(&b);
			b.fold_all = false;
			b.folded_all = true;
		}
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
			if (req->copies == 0)
			{
				/* a reader of the tables asks them folded (dp_fold_for_readers) */
				if (!b.folded_all)
				{
					b.fold_all = true;
					fold(&b);
					b.fold_all = false;
					b.folded_all = true;
				}
				batch[i].reply.result = DP_CHARGE_OK;
				continue;
			}
			charge_one(req, &b, &ledger, &batch[i].reply, &charged[i]);
		}
		dp_ledger_close(&ledger);
		write_budgets(&b);
		dp_budget_store_close(&b.store);
		pending = leases_to_grant(&b, charged, n, oldcxt, leasing());
		folded_all = b.folded_all;
		SPI_finish();
		PopActiveSnapshot();
		CommitTransactionCommand();
		if (folded_all)
		{
			fold_everything = false;
			fold_charges = charges;
			dp_lease_db_folded();
		}
		/* where the backends of the charges wait for the WAL to be flushed */
		for (int i = 0; i < n; i++)
			batch[i].reply.commit_lsn = backend_flushes ? XactLastCommitEnd : InvalidXLogRecPtr;
		grant_leases(budget_rel, pending, batch, n, changes);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(oldcxt);
		edata = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		dp_ledger_forget();		/* look the ledger's sequence up again, recompile */
		dp_budget_store_forget();
		for (int i = 0; i < n; i++)
		{
			batch[i].reply.result = DP_CHARGE_FAILED;
			set_message(&batch[i].reply, edata->detail == NULL ? edata->message :
						psprintf("%s: %s", edata->message, edata->detail));
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

/* ---------- the charger's life ---------- */

static Oid	my_dboid = InvalidOid;
static ChargerStart my_start = {-1, 0};

/*
 * Exit callback: fail the requests we hold (the backends cannot know
 * whether their charges committed), give our slot back, and wake the
 * backends waiting for a charger so that they start another.  Runs after
 * the transaction was aborted (on_shmem_exit callbacks follow the
 * before_shmem_exit ones), on every exit that does not reinitialize shared
 * memory.
 */
static void
charger_exit(int code, Datum arg)
{
	for (int i = 0; i < dp_charger_shared->n_requests; i++)
	{
		RequestSlot *s = &dp_request_slots[i];
		bool		orphaned = false;

		SpinLockAcquire(&s->mutex);
		if (s->state == REQ_TAKEN && s->charger == my_start.generation)
		{
			s->state = REQ_ORPHANED;
			orphaned = true;
		}
		SpinLockRelease(&s->mutex);
		if (orphaned)
			ConditionVariableBroadcast(&s->cv);
	}
	if (dp_charger_release_slot(my_start.slot, my_start.generation, false))
		dp_charger_wake_pending(my_dboid);
}

/*
 * Turn our STARTING slot RUNNING and wake the backend that launched us;
 * false if the slot is no longer ours (the launch was given up).
 */
static bool
register_charger(void)
{
	ChargerSlot *c = &dp_charger_slots[my_start.slot];
	Latch	   *starter = NULL;
	bool		ok = false;

	LWLockAcquire(dp_charger_shared->lock, LW_EXCLUSIVE);
	if (c->generation == my_start.generation && c->state == CHARGER_STARTING)
	{
		c->state = CHARGER_RUNNING;
		c->latch = MyLatch;
		starter = c->starter;
		c->starter = NULL;
		ok = true;
	}
	LWLockRelease(dp_charger_shared->lock);
	if (starter != NULL)
		SetLatch(starter);
	return ok;
}

/*
 * Take every PENDING request of our database, copying inline bodies out
 * after the slot is ours; returns how many.
 */
static int
take_requests(TakenRequest *batch, MemoryContext cxt)
{
	int			n = 0;

	for (int i = 0; i < dp_charger_shared->n_requests; i++)
	{
		RequestSlot *s = &dp_request_slots[i];
		bool		taken = false;

		SpinLockAcquire(&s->mutex);
		if (s->state == REQ_PENDING && s->dboid == my_dboid)
		{
			s->state = REQ_TAKEN;
			s->charger = my_start.generation;
			taken = true;
		}
		SpinLockRelease(&s->mutex);
		if (!taken)
			continue;
		batch[n].slot = i;
		batch[n].handle = s->handle;
		batch[n].req = NULL;
		if (s->handle == DSM_HANDLE_INVALID)
		{
			MemoryContext old = MemoryContextSwitchTo(cxt);

			batch[n].req = copy_request(s->inline_data, Min(s->inline_size, CHARGE_INLINE_SIZE));
			MemoryContextSwitchTo(old);
		}
		memset(&batch[n].reply, 0, sizeof(DpChargeReply));
		n++;
	}
	return n;
}

/* publish the replies of a processed batch and wake their backends */
static void
reply_all(TakenRequest *batch, int n)
{
	for (int i = 0; i < n; i++)
	{
		RequestSlot *s = &dp_request_slots[batch[i].slot];

		s->reply = batch[i].reply;	/* ours while TAKEN */
		SpinLockAcquire(&s->mutex);
		Assert(s->state == REQ_TAKEN && s->charger == my_start.generation);
		s->state = REQ_DONE;
		SpinLockRelease(&s->mutex);
		ConditionVariableBroadcast(&s->cv);
	}
}

/*
 * Give our slot back if no request of our database is pending; true if we
 * did (the caller exits).  Checked under the lock that backends take to
 * find us after publishing a request, so that none is left behind: a
 * backend that publishes later finds no charger and starts one.
 */
static bool
retire(void)
{
	bool		pending = false;

	LWLockAcquire(dp_charger_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < dp_charger_shared->n_requests && !pending; i++)
	{
		SpinLockAcquire(&dp_request_slots[i].mutex);
		pending = dp_request_slots[i].state == REQ_PENDING && dp_request_slots[i].dboid == my_dboid;
		SpinLockRelease(&dp_request_slots[i].mutex);
	}
	if (!pending && dp_charger_slots[my_start.slot].generation == my_start.generation)
	{
		dp_charger_slots[my_start.slot].state = CHARGER_FREE;
		dp_charger_slots[my_start.slot].latch = NULL;
	}
	LWLockRelease(dp_charger_shared->lock);
	return !pending;
}

/*
 * Group commit.  A charge must be durable before its statement releases
 * anything, but the charger need not wait for the WAL flush itself: it
 * commits each batch asynchronously (the commit record is in the WAL
 * buffers, the transaction visible) and tells each backend the commit's
 * end, which the backend flushes (XLogFlush) before it goes on, so that
 * the charger takes the next batch while the disk writes the last.
 * XLogFlush is PostgreSQL's own group commit: the backends waiting for
 * one flush are served by one fsync.  Nothing is released before its charge
 * is on disk, as before; and since the WAL is flushed in order, a crash can
 * only lose a suffix of the charges, never one that a later charge
 * counted on (any charge decided after a lost one is lost with it), and
 * only charges whose statements released nothing.  With synchronous
 * replication (synchronous_standby_names set), the charger commits
 * synchronously as it always did: the wait for the standby stays in the
 * process that cannot be cancelled.
 */
static bool backend_flushes = false;

static void
charger_commit_mode(void)
{
	bool		flushes = SyncRepStandbyNames == NULL || SyncRepStandbyNames[0] == '\0';

	if (flushes != backend_flushes)
	{
		SetConfigOption("synchronous_commit", flushes ? "off" : "on", PGC_SUSET, PGC_S_OVERRIDE);
		backend_flushes = flushes;
	}
}

/* settings of the charger's own session: durability is the point */
static void
charger_settings(void)
{
	SetConfigOption("synchronous_commit", "on", PGC_SUSET, PGC_S_OVERRIDE);
	backend_flushes = false;
	SetConfigOption("default_transaction_read_only", "off", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("default_transaction_isolation", "read committed", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("statement_timeout", "0", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("search_path", "pg_catalog", PGC_SUSET, PGC_S_OVERRIDE);
}

void
dp_charger_main(Datum arg)
{
	TakenRequest *batch;
	MemoryContext batch_cxt;
	TimestampTz idle_since;
	TimestampTz fold_tried = 0;

	my_dboid = DatumGetObjectId(arg);
	memcpy(&my_start, MyBgworkerEntry->bgw_extra, sizeof(my_start));
	if (my_start.slot < 0 || my_start.slot >= dp_charger_shared->n_chargers)
		elog(FATAL, "dp_agg charger: started for slot %d of %d", my_start.slot, dp_charger_shared->n_chargers);
	on_shmem_exit(charger_exit, (Datum) 0);

	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(my_dboid, InvalidOid, 0);
	charger_settings();
	if (!register_charger())
		proc_exit(0);

	batch = MemoryContextAlloc(TopMemoryContext, sizeof(TakenRequest) * dp_charger_shared->n_requests);
	batch_cxt = AllocSetContextCreate(TopMemoryContext, "dp_agg charger batch",
									  ALLOCSET_DEFAULT_SIZES);
	idle_since = GetCurrentTimestamp();

	for (;;)
	{
		int			n;

		CHECK_FOR_INTERRUPTS();
		MemoryContextReset(batch_cxt);
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		n = take_requests(batch, batch_cxt);
		if (n > 0)
		{
			process_batch(batch, n);
			reply_all(batch, n);
			idle_since = GetCurrentTimestamp();
			continue;
		}
		/*
		 * Charges were journaled since the last fold of every row, and no
		 * lease is in use any more: fold them, so that the tables do not lag
		 * (and the charger does not retire before).
		 */
		if (dp_lease_charges() != fold_charges && !dp_lease_any_valid() &&
			TimestampDifferenceExceeds(fold_tried, GetCurrentTimestamp(), Max(dp_guc_lease_ms, 100)))
		{
			fold_everything = true;
			process_batch(batch, 0);
			fold_tried = idle_since = GetCurrentTimestamp();
			continue;
		}
		if (TimestampDifferenceExceeds(idle_since, GetCurrentTimestamp(), dp_guc_charger_idle_ms) &&
			dp_lease_charges() == fold_charges && retire())
			proc_exit(0);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 dp_lease_charges() != fold_charges || dp_lease_any_valid() ?
						 Min(dp_guc_charger_idle_ms, Max(dp_guc_lease_ms, 100)) :
						 dp_guc_charger_idle_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}
