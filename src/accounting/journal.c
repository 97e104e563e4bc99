/*-------------------------------------------------------------------------
 *
 * journal.c
 *	  Rows appended through generic WAL, outside the transaction that
 *	  appends them: the journal of charges decided in the backends
 *	  (doc/charging-design.md).
 *
 * A charge a backend decides must be durable before its statement reads a
 * row, whatever becomes of the statement's transaction afterwards.  A heap
 * insert cannot give that cheaply: it needs the transaction's xid, whose
 * commit then writes a record and waits for its flush.  So the journal's
 * rows are written here, not by heap_insert: each is a heap tuple marked
 * frozen (visible to every snapshot, whatever becomes of the transaction
 * that wrote it), added to a page of the journal with PageAddItem, and
 * logged as a change of that page through generic WAL (GenericXLogStart),
 * which needs no xid.  Recovery and standbys replay the page whatever
 * becomes of the transaction; a checkpoint writes the page, whose LSN
 * covers the row, by the ordinary WAL rule.  The caller flushes the WAL to
 * the returned LSN before it goes on.
 *
 * The pages stay heap pages that the heap, VACUUM and amcheck read as
 * such: a frozen tuple on a page keeps the page's all-visible flag and its
 * bits in the visibility map true.  The journal has no index (its entries
 * would be missing from it) and must be WAL-logged; a journal whose file
 * this transaction created (a TRUNCATE, a rewrite, CREATE EXTENSION) is
 * refused, because a ROLLBACK would throw that file away with the rows.
 * Rows are read back, and deleted, by ordinary scans and deletes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/heapam.h"
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/transam.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_type.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/freespace.h"
#include "storage/lmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "compat.h"
#include "journal.h"

typedef enum JournalProblem
{
	JOURNAL_FINE = 0,
	JOURNAL_NOT_HEAP,
	JOURNAL_NOT_LOGGED,
	JOURNAL_INDEXED,
	JOURNAL_NEW_FILE
} JournalProblem;

static JournalProblem
problem(Relation rel)
{
	List	   *indexes;

	if (rel->rd_rel->relkind != RELKIND_RELATION || rel->rd_rel->relam != HEAP_TABLE_AM_OID)
		return JOURNAL_NOT_HEAP;
	if (!RelationNeedsWAL(rel))
		return JOURNAL_NOT_LOGGED;
	indexes = RelationGetIndexList(rel);
	if (indexes != NIL)
	{
		list_free(indexes);
		return JOURNAL_INDEXED;
	}
	if (rel->rd_createSubid != InvalidSubTransactionId ||
		DP_REL_NEW_FILE_SUBID(rel) != InvalidSubTransactionId)
		return JOURNAL_NEW_FILE;
	return JOURNAL_FINE;
}

/* dp_agg.journal, or InvalidOid if the SQL objects have none */
Oid
dp_journal_relid(void)
{
	Oid			nsp = get_namespace_oid("dp_agg", true);

	return OidIsValid(nsp) ? get_relname_relid("journal", nsp) : InvalidOid;
}

/*
 * Can charges be journaled in this relation?  A backend that cannot asks
 * the charger instead.
 */
bool
dp_journal_usable(Relation rel)
{
	return problem(rel) == JOURNAL_FINE && RelationGetDescr(rel)->natts == JOURNAL_COLUMNS;
}

/*
 * Can rows be appended to this relation?  ERROR if not: a journal that is
 * not a plain WAL-logged heap without indexes, whose file is not new in
 * this transaction.
 */
void
dp_journal_check(Relation rel)
{
	switch (problem(rel))
	{
		case JOURNAL_FINE:
			break;
		case JOURNAL_NOT_HEAP:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the dp_agg journal \"%s\" is not a heap table",
							RelationGetRelationName(rel)),
					 errdetail("Nothing was charged or released."),
					 errhint("Reinstall the extension.")));
			break;
		case JOURNAL_NOT_LOGGED:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the dp_agg journal \"%s\" is not WAL-logged",
							RelationGetRelationName(rel)),
					 errdetail("A charge written to it would not survive a crash. "
							   "Nothing was charged or released."),
					 errhint("Make it logged again: ALTER TABLE %s SET LOGGED.",
							 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
														RelationGetRelationName(rel)))));
			break;
		case JOURNAL_INDEXED:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the dp_agg journal \"%s\" has an index",
							RelationGetRelationName(rel)),
					 errdetail("Its rows are written without index entries. "
							   "Nothing was charged or released."),
					 errhint("Drop the index.")));
			break;
		case JOURNAL_NEW_FILE:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the dp_agg journal \"%s\" was created, truncated or rewritten in this transaction",
							RelationGetRelationName(rel)),
					 errdetail("A ROLLBACK would discard its new file with the charges written to it. "
							   "Nothing was charged or released."),
					 errhint("Run the statement in a new transaction.")));
			break;
	}
}

/* a new block of the journal, zeroed and locked exclusively */
static Buffer
new_block(Relation rel)
{
#ifdef DP_HAVE_EXTEND_BUFFERED_REL
	return ExtendBufferedRel(BMR_REL(rel), MAIN_FORKNUM, NULL, EB_LOCK_FIRST);
#else
	Buffer		buf;

	LockRelationForExtension(rel, ExclusiveLock);
	buf = ReadBufferExtended(rel, MAIN_FORKNUM, P_NEW, RBM_ZERO_AND_LOCK, NULL);
	UnlockRelationForExtension(rel, ExclusiveLock);
	return buf;
#endif
}

/* blk locked exclusively if a row of len bytes fits in it; else InvalidBuffer */
static Buffer
try_block(Relation rel, BlockNumber blk, Size len)
{
	Buffer		buf;
	Page		page;

	if (blk == InvalidBlockNumber || blk >= RelationGetNumberOfBlocks(rel))
		return InvalidBuffer;
	buf = ReadBuffer(rel, blk);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	page = BufferGetPage(buf);
	if (PageIsNew(page) || PageGetHeapFreeSpace(page) < len)
	{
		UnlockReleaseBuffer(buf);
		return InvalidBuffer;
	}
	return buf;
}

/*
 * A block of the journal with room for a row of len bytes, locked
 * exclusively: the last one this backend appended to, else one the free
 * space map names (VACUUM records the space of folded rows there), else
 * the last block; InvalidBuffer if none has room.
 */
static Buffer
block_with_room(Relation rel, Size len)
{
	Buffer		buf;
	BlockNumber n;

	buf = try_block(rel, RelationGetTargetBlock(rel), len);
	if (!BufferIsValid(buf))
		buf = try_block(rel, GetPageWithFreeSpace(rel, len), len);
	if (!BufferIsValid(buf) && (n = RelationGetNumberOfBlocks(rel)) > 0)
		buf = try_block(rel, n - 1, len);
	return buf;
}

/*
 * Append a row to the journal, frozen, through generic WAL; returns the
 * LSN the caller must flush to before the row counts as written.
 */
XLogRecPtr
dp_journal_append(Relation rel, const Datum *values, const bool *nulls)
{
	HeapTuple	tup;
	HeapTupleHeader td;
	Size		len;
	Buffer		buf;
	bool		fresh = false;
	GenericXLogState *state;
	Page		page;
	OffsetNumber off;
	XLogRecPtr	lsn;

	dp_journal_check(rel);
	tup = heap_form_tuple(RelationGetDescr(rel), unconstify(Datum *, values),
						  unconstify(bool *, nulls));
	if (HeapTupleHasExternal(tup) || tup->t_len > TOAST_TUPLE_THRESHOLD)
		elog(ERROR, "dp_agg: a journal row of %u bytes does not fit inline", tup->t_len);
	len = MAXALIGN(tup->t_len);

	/* frozen, never deleted yet: visible to every snapshot, as COPY FREEZE's rows */
	td = tup->t_data;
	td->t_infomask &= ~HEAP_XACT_MASK;
	td->t_infomask2 &= ~HEAP2_XACT_MASK;
	td->t_infomask |= HEAP_XMAX_INVALID;
	HeapTupleHeaderSetXmin(td, FrozenTransactionId);
	HeapTupleHeaderSetXminFrozen(td);
	HeapTupleHeaderSetCmin(td, FirstCommandId);
	HeapTupleHeaderSetXmax(td, InvalidTransactionId);

	buf = block_with_room(rel, len);
	if (!BufferIsValid(buf))
	{
		buf = new_block(rel);
		fresh = true;
	}
	state = GenericXLogStart(rel);
	page = GenericXLogRegisterBuffer(state, buf, fresh ? GENERIC_XLOG_FULL_IMAGE : 0);
	if (fresh)
		PageInit(page, BufferGetPageSize(buf), 0);
	off = PageAddItem(page, (Item) td, tup->t_len, InvalidOffsetNumber, false, true);
	if (off == InvalidOffsetNumber)
	{
		BlockNumber blk = BufferGetBlockNumber(buf);

		GenericXLogAbort(state);
		UnlockReleaseBuffer(buf);
		elog(ERROR, "dp_agg: could not add a row to block %u of the journal", blk);
	}
	ItemPointerSet(&((HeapTupleHeader) PageGetItem(page, PageGetItemId(page, off)))->t_ctid,
				   BufferGetBlockNumber(buf), off);
	lsn = GenericXLogFinish(state);
	RelationSetTargetBlock(rel, BufferGetBlockNumber(buf));
	UnlockReleaseBuffer(buf);
	heap_freetuple(tup);
	return lsn;
}

/* an entry's columns, and append it */
XLogRecPtr
dp_journal_append_entry(Relation rel, const DpJournalEntry *e)
{
	Datum		values[JOURNAL_COLUMNS];
	bool		nulls[JOURNAL_COLUMNS];
	Datum		budgets[DP_JOURNAL_MAX_BUDGETS];

	if (e->n_budgets < 0 || e->n_budgets > DP_JOURNAL_MAX_BUDGETS)
		elog(ERROR, "dp_agg: a journal row for %d budgets", e->n_budgets);
	memset(nulls, 0, sizeof(nulls));
	for (int i = 0; i < e->n_budgets; i++)
	{
		budgets[i] = Int64GetDatum(e->budgets[i]);
	}
	values[JOURNAL_SEQ] = Int64GetDatum(e->seq);
	values[JOURNAL_AT] = TimestampTzGetDatum(e->at);
	values[JOURNAL_ROLE] = ObjectIdGetDatum(e->role);
	values[JOURNAL_SHAPE] = Int64GetDatum(e->shape);
	values[JOURNAL_EPSILON] = Float8GetDatum(e->epsilon);
	values[JOURNAL_DELTA] = Float8GetDatum(e->delta);
	values[JOURNAL_SELECTION_EPSILON] = Float8GetDatum(e->selection_epsilon);
	values[JOURNAL_SELECTION_DELTA] = Float8GetDatum(e->selection_delta);
	values[JOURNAL_BUDGETS] = PointerGetDatum(construct_array(budgets, e->n_budgets, INT8OID, 8,
															  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	if (e->releases_len < 0)
		nulls[JOURNAL_RELEASES] = true;
	else
	{
		bytea	   *b = palloc(VARHDRSZ + e->releases_len);

		SET_VARSIZE(b, VARHDRSZ + e->releases_len);
		memcpy(VARDATA(b), e->releases, e->releases_len);
		values[JOURNAL_RELEASES] = PointerGetDatum(b);
	}
	if (RelationGetDescr(rel)->natts != JOURNAL_COLUMNS)
		elog(ERROR, "dp_agg: the journal has %d columns, not %d",
			 RelationGetDescr(rel)->natts, (int) JOURNAL_COLUMNS);
	return dp_journal_append(rel, values, nulls);
}

/* the elements of an array column of n elements of a type, or -1 */
static int
array_elements(Datum d, Oid type, int16 len, bool byval, char align, Datum **elems)
{
	ArrayType  *a = DatumGetArrayTypeP(d);
	bool	   *elem_nulls;
	int			n;

	if (ARR_NDIM(a) > 1 || ARR_ELEMTYPE(a) != type)
		return -1;
	deconstruct_array(a, type, len, byval, align, elems, &elem_nulls, &n);
	for (int i = 0; i < n; i++)
		if (elem_nulls[i])
			return -1;
	return n;
}

/*
 * The entry of a journal row (its releases point into the tuple); false if
 * the row is not one a backend wrote (a NULL, arrays of different lengths
 * or too long: then nothing of it is folded).
 */
bool
dp_journal_decode(Relation rel, HeapTuple tup, DpJournalEntry *e)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Datum		values[JOURNAL_COLUMNS];
	bool		nulls[JOURNAL_COLUMNS];
	Datum	   *budgets;
	int			n;

	if (desc->natts != JOURNAL_COLUMNS)
		return false;
	heap_deform_tuple(tup, desc, values, nulls);
	for (int i = 0; i < JOURNAL_COLUMNS; i++)
		if (nulls[i] && i != JOURNAL_RELEASES)
			return false;
	memset(e, 0, sizeof(*e));
	e->tid = tup->t_self;
	e->seq = DatumGetInt64(values[JOURNAL_SEQ]);
	e->at = DatumGetTimestampTz(values[JOURNAL_AT]);
	e->role = DatumGetObjectId(values[JOURNAL_ROLE]);
	e->shape = DatumGetInt64(values[JOURNAL_SHAPE]);
	e->epsilon = DatumGetFloat8(values[JOURNAL_EPSILON]);
	e->delta = DatumGetFloat8(values[JOURNAL_DELTA]);
	e->selection_epsilon = DatumGetFloat8(values[JOURNAL_SELECTION_EPSILON]);
	e->selection_delta = DatumGetFloat8(values[JOURNAL_SELECTION_DELTA]);
	n = array_elements(values[JOURNAL_BUDGETS], INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					   &budgets);
	if (n < 1 || n > DP_JOURNAL_MAX_BUDGETS)
		return false;
	e->n_budgets = n;
	for (int i = 0; i < n; i++)
	{
		e->budgets[i] = DatumGetInt64(budgets[i]);
	}
	e->releases_len = -1;
	if (!nulls[JOURNAL_RELEASES])
	{
		bytea	   *b = DatumGetByteaPP(values[JOURNAL_RELEASES]);

		e->releases_len = VARSIZE_ANY_EXHDR(b);
		e->releases = VARDATA_ANY(b);
	}
	return true;
}
