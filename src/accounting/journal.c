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
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "compat.h"
#include "journal.h"

/*
 * Can rows be appended to this relation?  ERROR if not: a journal that is
 * not a plain WAL-logged heap without indexes, whose file is not new in
 * this transaction.
 */
void
dp_journal_check(Relation rel)
{
	List	   *indexes;

	if (rel->rd_rel->relkind != RELKIND_RELATION || rel->rd_rel->relam != HEAP_TABLE_AM_OID)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the dp_agg journal \"%s\" is not a heap table",
						RelationGetRelationName(rel)),
				 errdetail("Nothing was charged or released."),
				 errhint("Reinstall the extension.")));
	if (!RelationNeedsWAL(rel))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the dp_agg journal \"%s\" is not WAL-logged",
						RelationGetRelationName(rel)),
				 errdetail("A charge written to it would not survive a crash. "
						   "Nothing was charged or released."),
				 errhint("Make it logged again: ALTER TABLE %s SET LOGGED.",
						 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
													RelationGetRelationName(rel)))));
	indexes = RelationGetIndexList(rel);
	if (indexes != NIL)
	{
		list_free(indexes);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the dp_agg journal \"%s\" has an index",
						RelationGetRelationName(rel)),
				 errdetail("Its rows are written without index entries. "
						   "Nothing was charged or released."),
				 errhint("Drop the index.")));
	}
	if (rel->rd_createSubid != InvalidSubTransactionId ||
		DP_REL_NEW_FILE_SUBID(rel) != InvalidSubTransactionId)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the dp_agg journal \"%s\" was created, truncated or rewritten in this transaction",
						RelationGetRelationName(rel)),
				 errdetail("A ROLLBACK would discard its new file with the charges written to it. "
						   "Nothing was charged or released."),
				 errhint("Run the statement in a new transaction.")));
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

/*
 * The last block the journal was appended to in this backend, or its last
 * block, locked exclusively, if a row of len bytes fits; else InvalidBuffer
 */
static Buffer
block_with_room(Relation rel, Size len)
{
	BlockNumber blk = RelationGetTargetBlock(rel);
	Buffer		buf;
	Page		page;

	if (blk == InvalidBlockNumber)
	{
		BlockNumber n = RelationGetNumberOfBlocks(rel);

		if (n == 0)
			return InvalidBuffer;
		blk = n - 1;
	}
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
