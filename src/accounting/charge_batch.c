/*-------------------------------------------------------------------------
 *
 * charge_batch.c
 *	  The budgets of one batch of the charger (charger.c): each read and
 *	  locked once, its lease taken back and the charges decided on leases
 *	  folded into it before anything is decided against it, and written
 *	  back once.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "budget_charge.h"
#include "budget_row.h"
#include "calibrate.h"
#include "charge_batch.h"
#include "journal.h"
#include "lease.h"
#include "pld_state.h"

/* the budget of a role (own or group) or of a relation, read and locked once per batch */
BudgetState *
dp_batch_budget(Batch *batch, bool relation, Oid key)
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
				dp_batch_fold(batch);
		}
		k->budget->leased = leased;
		return k->budget;
	}
	batch->keyed = lappend(batch->keyed, k);
	return k->budget;
}

RoleInfo *
dp_batch_role(Batch *batch, Oid role)
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

void
dp_batch_remember_shape(int64 shape, const double *curve)
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
	dp_batch_remember_shape(shape, curve);
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
 * exists.  The journal names budgets by id, not by role or relation:
 * ids survive a dump and restore, OIDs do not.
 */
static void
read_budget_id(Batch *batch, int64 id)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1];
	bool		isnull;
	Datum		d;
	ListCell   *lc;

	if (budget_with_id(batch, id) != NULL)
		return;
	foreach(lc, batch->gone)
		if (*(int64 *) lfirst(lc) == id)
			return;
	args[0] = Int64GetDatum(id);
	if (SPI_execute_with_args("SELECT role::pg_catalog.oid, relation::pg_catalog.oid FROM dp_agg.budget WHERE id = $1",
							  1, types, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "dp_agg charger: could not look up budget " INT64_FORMAT, id);
	if (SPI_processed != 1)
	{
		/* gone: what the journal charged it is dropped, its lease freed */
		int64	   *gone = palloc(sizeof(int64));

		*gone = id;
		batch->gone = lappend(batch->gone, gone);
		return;
	}
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (!isnull)
		(void) dp_batch_budget(batch, false, DatumGetObjectId(d));
	else
	{
		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
		if (!isnull)
			(void) dp_batch_budget(batch, true, DatumGetObjectId(d));
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
	/* the window each budget held when they were added to it (has: it has one) */
	TimestampTz windows[DP_JOURNAL_MAX_BUDGETS];
	bool		has[DP_JOURNAL_MAX_BUDGETS];
	int32		statements;
	TimestampTz at;
	double		epsilon;
	double		delta;
	double		curve[DP_RDP_ORDERS];
} FoldedShape;

static void
write_folded(const FoldedShape *f)
{
	Oid			types[9] = {TIMESTAMPTZOID, OIDOID, FLOAT8OID, FLOAT8OID, FLOAT8ARRAYOID,
	INT8ARRAYOID, INT4OID, INT8OID, TIMESTAMPTZARRAYOID};
	Datum		args[9];
	Datum		curve[DP_RDP_ORDERS];
	Datum		budgets[DP_JOURNAL_MAX_BUDGETS];
	Datum		windows[DP_JOURNAL_MAX_BUDGETS];
	bool		no_window[DP_JOURNAL_MAX_BUDGETS];
	int			dims[1] = {f->n_budgets};
	int			lbs[1] = {1};

	for (int i = 0; i < DP_RDP_ORDERS; i++)
		curve[i] = Float8GetDatum(f->curve[i]);
	for (int i = 0; i < f->n_budgets; i++)
	{
		budgets[i] = Int64GetDatum(f->budgets[i]);
		windows[i] = TimestampTzGetDatum(f->windows[i]);
		no_window[i] = !f->has[i];
	}
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
	args[8] = PointerGetDatum(construct_md_array(windows, no_window, 1, dims, lbs, TIMESTAMPTZOID,
												 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	/*
	 * described as the ledger row of the shape (if a DBA deleted it, by the
	 * journal alone); the windows are those the charges were added in
	 */
	if (SPI_execute_with_args("INSERT INTO dp_agg.ledger (at, role, kind, epsilon, delta, query, detail, rdp, "
							  "relations, budgets, windows, statements) "
							  "SELECT $1, $2::regrole, 'charge', $3, $4, l.query, "
							  "COALESCE(l.detail, '[]'::pg_catalog.jsonb), $5, l.relations, $6, $9, $7 "
							  "FROM (SELECT) AS one LEFT JOIN dp_agg.ledger AS l ON l.id = $8",
							  9, types, args, NULL, false, 0) != SPI_OK_INSERT || SPI_processed != 1)
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
count_folded(Batch *batch, List **shapes, const DpJournalEntry *e, const double *curve)
{
	ListCell   *lc;
	FoldedShape *f = NULL;
	FoldedShape key;

	memset(&key, 0, sizeof(key));
	key.shape = e->shape;
	key.role = e->role;
	key.n_budgets = e->n_budgets;
	for (int j = 0; j < e->n_budgets; j++)
	{
		BudgetState *st = budget_with_id(batch, e->budgets[j]);

		key.budgets[j] = e->budgets[j];
		key.has[j] = st != NULL && st->row.has_window && st->row.has_window_start;
		key.windows[j] = key.has[j] ? st->row.window_start : 0;
	}
	foreach(lc, *shapes)
	{
		FoldedShape *g = lfirst(lc);

		if (g->shape == key.shape && g->role == key.role && g->n_budgets == key.n_budgets &&
			memcmp(g->budgets, key.budgets, sizeof(key.budgets)) == 0 &&
			memcmp(g->windows, key.windows, sizeof(key.windows)) == 0 &&
			memcmp(g->has, key.has, sizeof(key.has)) == 0)
			f = g;
	}
	if (f == NULL)
	{
		f = palloc(sizeof(FoldedShape));
		*f = key;
		*shapes = lappend(*shapes, f);
	}
	f->statements++;
	f->at = Max(f->at, e->at);
	f->epsilon = dp_add_up(f->epsilon, e->epsilon);
	f->delta = dp_add_up(f->delta, e->delta);
	for (int i = 0; i < DP_RDP_ORDERS; i++)
		f->curve[i] = dp_add_up(f->curve[i], curve[i]);
}

void
dp_batch_fold(Batch *batch)
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
		count_folded(batch, &shapes, e, curve);
		simple_heap_delete(rel, &e->tid);
	}
	foreach(lc, shapes)
		write_folded_or_log(lfirst(lc));
	table_close(rel, NoLock);
	batch->folding = false;
	batch->refold = false;
}

/* write back the budgets a batch changed */
void
dp_batch_write(Batch *batch)
{
	ListCell   *lc;

	foreach(lc, batch->budgets)
	{
		BudgetState *st = lfirst(lc);

		if (st->dirty || st->frontier_dirty)
			dp_budget_store_write(&batch->store, &st->row, st->frontier_dirty);
	}
}

