/*-------------------------------------------------------------------------
 *
 * journal.h
 *	  Rows appended through generic WAL, outside the transaction that
 *	  appends them (doc/charging-design.md, "Journal").
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_JOURNAL_H
#define DP_AGG_JOURNAL_H

#include "access/htup.h"
#include "access/xlogdefs.h"
#include "datatype/timestamp.h"
#include "storage/itemptr.h"
#include "utils/relcache.h"

/* the most budgets one journal row charges */
#define DP_JOURNAL_MAX_BUDGETS 8

/* the columns of dp_agg.journal, in order */
typedef enum DpJournalColumn
{
	JOURNAL_SEQ = 0,
	JOURNAL_AT,
	JOURNAL_ROLE,
	JOURNAL_SHAPE,
	JOURNAL_EPSILON,
	JOURNAL_DELTA,
	JOURNAL_SELECTION_EPSILON,
	JOURNAL_SELECTION_DELTA,
	JOURNAL_BUDGETS,
	JOURNAL_RELEASES,
	JOURNAL_COLUMNS
} DpJournalColumn;

/* one row of dp_agg.journal: a charge decided in a backend */
typedef struct DpJournalEntry
{
	ItemPointerData tid;		/* where it was read */
	int64		seq;			/* the order the charges were decided in */
	TimestampTz at;
	Oid			role;
	int64		shape;			/* dp_agg.ledger.id describing the statement */
	double		epsilon;
	double		delta;
	double		selection_epsilon;
	double		selection_delta;
	int			n_budgets;
	int64		budgets[DP_JOURNAL_MAX_BUDGETS];	/* dp_agg.budget.id */
	int			releases_len;	/* -1: NULL (more kinds than kept) */
	const char *releases;		/* the releases by kind, as the request holds them */
} DpJournalEntry;

extern Oid	dp_journal_relid(void);
extern bool dp_journal_usable(Relation rel);
extern void dp_journal_check(Relation rel);
extern XLogRecPtr dp_journal_append(Relation rel, const Datum *values, const bool *nulls);
extern XLogRecPtr dp_journal_append_entry(Relation rel, const DpJournalEntry *e);
extern bool dp_journal_decode(Relation rel, HeapTuple tup, DpJournalEntry *e);

#endif							/* DP_AGG_JOURNAL_H */
