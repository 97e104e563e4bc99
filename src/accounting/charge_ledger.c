/*-------------------------------------------------------------------------
 *
 * charge_ledger.c
 *	  The charger's writes to dp_agg.ledger: one row per charge, in the
 *	  charger's transaction, beside the charges of the budgets.
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

#include "calibrate.h"
#include "charge_ledger.h"
#include "compat.h"
#include "write_cache.h"

/*
 * The ledger rows of a batch, written without SPI: an INSERT through SPI
 * per charge (parse-free, but an executor started and its CHECK
 * constraints compiled again for every row, and the detail parsed as
 * jsonb) was most of the charger's work per charge, and the charger is the
 * one process every charge goes through.  Per batch, the ledger is opened
 * once, with its indexes and its constraints compiled in one executor
 * state; per charge, the row is formed, its constraints checked
 * (ExecConstraints: NOT NULL and CHECK, as an INSERT checks them), and it
 * is inserted into the heap and every index (ExecInsertIndexTuples, as an
 * INSERT does).  id is the identity column's next value, at the clock.
 * The detail arrives as jsonb, converted by the statement's backend.  A
 * ledger that is not the one this code knows (a column it does not fill,
 * or triggers, rules or a partition's bound a DBA added:
 * dp_write_direct_possible) is written through SPI instead, so that
 * nothing an INSERT would do is skipped.
 */
static const char *const ledger_columns[LEDGER_COLUMNS] = {
	"id", "at", "role", "kind", "epsilon", "delta", "query", "detail", "rdp",
	"relations", "budgets", "windows", "statements"
};

static Oid	ledger_relid = InvalidOid;
static Oid	ledger_seq = InvalidOid;

/*
 * The executor state of the ledger's writes, kept from batch to batch with
 * its compiled CHECK constraints (write_cache.c).
 */
static DpWriteCache ledger_cache = {"dp_agg charger ledger"};

void
dp_ledger_forget(void)
{
	dp_write_cache_forget(&ledger_cache);
	ledger_relid = InvalidOid;
}

void
dp_ledger_open(LedgerWriter *w)
{
	static uint64 generation = 0;
	static Oid	relid = InvalidOid;
	static AttrNumber att[LEDGER_COLUMNS];
	bool		fresh = generation == 0 || generation != dp_budget_catalog_generation();
	TupleDesc	desc;
	int			live = 0;
	int			known = 0;
	bool		isnull;

	memset(w, 0, sizeof(*w));
	if (fresh)
		relid = get_relname_relid("ledger", get_namespace_oid("dp_agg", false));
	if (!OidIsValid(relid))
		elog(ERROR, "dp_agg charger: dp_agg.ledger does not exist");
	w->rel = table_open(relid, RowExclusiveLock);
	/* the names of its columns, looked up again after an invalidation */
	if (fresh || generation != dp_budget_catalog_generation())
	{
		for (int i = 0; i < LEDGER_COLUMNS; i++)
			att[i] = get_attnum(relid, ledger_columns[i]);
		ledger_seq = InvalidOid;
		generation = dp_budget_catalog_generation();
	}
	memcpy(w->att, att, sizeof(att));
	desc = RelationGetDescr(w->rel);
	for (int i = 0; i < desc->natts; i++)
		if (!TupleDescAttr(desc, i)->attisdropped)
			live++;
	for (int i = 0; i < LEDGER_COLUMNS; i++)
		if (w->att[i] != InvalidAttrNumber)
			known++;
	w->policies = w->att[LEDGER_BASE_COLUMNS] != InvalidAttrNumber &&
		w->att[LEDGER_BASE_COLUMNS + 1] != InvalidAttrNumber &&
		w->att[LEDGER_BASE_COLUMNS + 2] != InvalidAttrNumber;
	w->statements = w->policies && w->att[LEDGER_POLICY_COLUMNS] != InvalidAttrNumber;
	/* the columns of 0.1 to 0.3, or of 0.4, and nothing else */
	w->direct = live == known &&
		known == (w->statements ? LEDGER_COLUMNS : w->policies ? LEDGER_POLICY_COLUMNS : LEDGER_BASE_COLUMNS) &&
		dp_write_direct_possible(w->rel);
	for (int i = 0; i < LEDGER_BASE_COLUMNS && w->direct; i++)
		w->direct = w->att[i] != InvalidAttrNumber;
	if (!w->direct)
		return;
	/* the identity's sequence, looked up again only if the ledger is another table */
	if (relid != ledger_relid || !OidIsValid(ledger_seq))
	{
		if (SPI_execute("SELECT pg_catalog.pg_get_serial_sequence('dp_agg.ledger', 'id')"
						"::pg_catalog.regclass::pg_catalog.oid", true, 1) != SPI_OK_SELECT ||
			SPI_processed != 1)
			elog(ERROR, "dp_agg charger: could not find the sequence of dp_agg.ledger");
		ledger_seq = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0],
													SPI_tuptable->tupdesc, 1, &isnull));
		if (isnull)
			ledger_seq = InvalidOid;
		ledger_relid = relid;
	}
	w->seq = ledger_seq;
	if (!OidIsValid(w->seq))
	{
		w->direct = false;
		return;
	}
	dp_write_cache_open(&ledger_cache, w->rel, &w->estate, &w->rri);
	w->index_estate = dp_write_open_indexes(w->rri);
	w->slot = MakeSingleTupleTableSlot(desc, &TTSOpsVirtual);
}

void
dp_ledger_close(LedgerWriter *w)
{
	if (w->rel == NULL)
		return;
	if (w->direct)
	{
		ExecDropSingleTupleTableSlot(w->slot);
		dp_write_close_indexes(w->rri, w->index_estate);
		w->rri->ri_RelationDesc = NULL;
	}
	table_close(w->rel, NoLock);
	w->rel = NULL;
}

/* the relations a request read, as a regclass[] datum */
static Datum
relations_datum(const DpChargeRequest *req)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(req->n_relations, 1));

	for (int i = 0; i < req->n_relations; i++)
	{
		Oid			rel;

		memcpy(&rel, DP_REQUEST_RELATIONS(req) + sizeof(Oid) * i, sizeof(Oid));
		d[i] = ObjectIdGetDatum(rel);
	}
	return PointerGetDatum(construct_array(d, req->n_relations, REGCLASSOID, sizeof(Oid), true,
										   TYPALIGN_INT));
}

/* the budgets charged (bigint[]) and the start of each one's window (timestamptz[]) */
static void
budgets_datums(List *charged, Datum *budgets, Datum *windows)
{
	int			n = list_length(charged);
	Datum	   *ids = palloc(sizeof(Datum) * Max(n, 1));
	Datum	   *starts = palloc(sizeof(Datum) * Max(n, 1));
	bool	   *nulls = palloc(sizeof(bool) * Max(n, 1));
	int			dims[1] = {n};
	int			lbs[1] = {1};
	int			i = 0;
	ListCell   *lc;

	foreach(lc, charged)
	{
		const DpBudgetRow *row = &((BudgetState *) lfirst(lc))->row;

		ids[i] = Int64GetDatum(row->id);
		starts[i] = TimestampTzGetDatum(row->window_start);
		nulls[i] = !(row->has_window && row->has_window_start);
		i++;
	}
	*budgets = PointerGetDatum(construct_array(ids, n, INT8OID, sizeof(int64), FLOAT8PASSBYVAL,
											   TYPALIGN_DOUBLE));
	*windows = PointerGetDatum(construct_md_array(starts, nulls, 1, dims, lbs, TIMESTAMPTZOID,
												  sizeof(TimestampTz), FLOAT8PASSBYVAL,
												  TYPALIGN_DOUBLE));
}

/* the detail of a request: its jsonb, copied (aligned) */
static Datum
detail_datum(const DpChargeRequest *req)
{
	char	   *copy = palloc(req->detail_len);

	memcpy(copy, DP_REQUEST_DETAIL(req), req->detail_len);
	return PointerGetDatum(copy);
}

/*
 * The sum of n statements' prices, each added rounding up, as the budgets
 * add them (charger.c, charge_budget): never less than the exact sum.
 */
static double
times_up(double price, int n)
{
	double		sum = 0;

	for (int i = 0; i < n; i++)
		sum = dp_add_up(sum, price);
	return sum;
}

/*
 * Append one charge to the ledger, of the request's statement and the
 * statements - 1 prepaid with it (its epsilon, delta and curve are their
 * sums; its query and detail are the statement's); its id.
 */
int64
dp_ledger_append(LedgerWriter *w, const DpChargeRequest *req, const double *curve, List *charged,
				 int statements)
{
	TupleTableSlot *slot = w->slot;
	Datum	   *values;
	bool	   *nulls;
	int64		id;
	Datum		budgets = (Datum) 0,
				windows = (Datum) 0;
	double		epsilon = req->epsilon;
	double		delta = req->delta;
	double		sums[DP_RDP_ORDERS];

	Assert(statements == 1 || w->statements);
	if (statements > 1)
	{
		epsilon = times_up(req->epsilon, statements);
		delta = times_up(req->delta, statements);
		for (int i = 0; i < DP_RDP_ORDERS; i++)
			sums[i] = times_up(curve[i], statements);
		curve = sums;
	}
	if (w->policies)
		budgets_datums(charged, &budgets, &windows);
	if (!w->direct)
	{
		Datum		args[10];
		Oid			types[10] = {REGROLEOID, FLOAT8OID, FLOAT8OID, TEXTOID, JSONBOID,
			FLOAT8ARRAYOID, REGCLASSARRAYOID, INT8ARRAYOID, TIMESTAMPTZARRAYOID, INT4OID};
		bool		isnull;

		args[0] = ObjectIdGetDatum(req->role);
		args[1] = Float8GetDatum(epsilon);
		args[2] = Float8GetDatum(delta);
		args[3] = CStringGetTextDatum(req->data);
		args[4] = detail_datum(req);
		args[5] = dp_write_float8_array(curve, DP_RDP_ORDERS);
		if (w->policies)
		{
			args[6] = relations_datum(req);
			args[7] = budgets;
			args[8] = windows;
		}
		args[9] = Int32GetDatum(statements);
		if (SPI_execute_with_args(w->statements
								  ? "INSERT INTO dp_agg.ledger (role, kind, epsilon, delta, query, detail, rdp, "
								  "relations, budgets, windows, statements) "
								  "VALUES ($1, 'charge', $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id"
								  : w->policies
								  ? "INSERT INTO dp_agg.ledger (role, kind, epsilon, delta, query, detail, rdp, "
								  "relations, budgets, windows) "
								  "VALUES ($1, 'charge', $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id"
								  : "INSERT INTO dp_agg.ledger (role, kind, epsilon, delta, query, detail, rdp) "
								  "VALUES ($1, 'charge', $2, $3, $4, $5, $6) RETURNING id",
								  w->statements ? 10 : w->policies ? 9 : 6, types, args, NULL, false, 0) !=
			SPI_OK_INSERT_RETURNING ||
			SPI_processed != 1)
			elog(ERROR, "dp_agg charger: could not write the ledger");
		return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
										   &isnull));
	}

	ExecClearTuple(slot);
	values = slot->tts_values;
	nulls = slot->tts_isnull;
	memset(nulls, 0, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	id = nextval_internal(w->seq, false);
	values[w->att[0] - 1] = Int64GetDatum(id);
	values[w->att[1] - 1] = TimestampTzGetDatum(GetCurrentTimestamp());
	values[w->att[2] - 1] = ObjectIdGetDatum(req->role);
	values[w->att[3] - 1] = CStringGetTextDatum("charge");
	values[w->att[4] - 1] = Float8GetDatum(epsilon);
	values[w->att[5] - 1] = Float8GetDatum(delta);
	values[w->att[6] - 1] = CStringGetTextDatum(req->data);
	values[w->att[7] - 1] = detail_datum(req);
	values[w->att[8] - 1] = dp_write_float8_array(curve, DP_RDP_ORDERS);
	if (w->policies)
	{
		values[w->att[9] - 1] = relations_datum(req);
		values[w->att[10] - 1] = budgets;
		values[w->att[11] - 1] = windows;
	}
	if (w->statements)
		values[w->att[12] - 1] = Int32GetDatum(statements);
	ExecStoreVirtualTuple(slot);
	if (w->rel->rd_att->constr)
		ExecConstraints(w->rri, slot, w->estate);
	table_tuple_insert(w->rel, slot, GetCurrentCommandId(true), 0, NULL);
	if (w->rri->ri_NumIndices > 0)
		list_free(DP_INSERT_INDEX_TUPLES(w->rri, slot, w->index_estate));
	ResetPerTupleExprContext(w->estate);
	ResetPerTupleExprContext(w->index_estate);
	return id;
}
