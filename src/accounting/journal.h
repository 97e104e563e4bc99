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

#include "access/xlogdefs.h"
#include "utils/relcache.h"

extern void dp_journal_check(Relation rel);
extern XLogRecPtr dp_journal_append(Relation rel, const Datum *values, const bool *nulls);

#endif							/* DP_AGG_JOURNAL_H */
