/*-------------------------------------------------------------------------
 *
 * charge_ledger.h
 *	  The charger's writes to dp_agg.ledger: one row per charge.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_CHARGE_LEDGER_H
#define DP_AGG_CHARGE_LEDGER_H

#include "executor/tuptable.h"
#include "nodes/execnodes.h"
#include "nodes/pg_list.h"
#include "utils/relcache.h"

#include "budget_store.h"
#include "charger_shmem.h"

/* A budget during a batch: read and locked once, written once. */
typedef struct BudgetState
{
	DpBudgetRow row;
	TimestampTz window_end;		/* of the window it holds */
	bool		dirty;
	bool		frontier_dirty;
	bool		leased;			/* its lease was recalled for the batch */
} BudgetState;

#define LEDGER_BASE_COLUMNS 9
#define LEDGER_POLICY_COLUMNS 12	/* and relations, budgets, windows */
#define LEDGER_COLUMNS 13			/* and statements */

typedef struct LedgerWriter
{
	bool		direct;			/* false: through SQL */
	bool		policies;		/* relations, budgets, windows (0.4 on) */
	bool		statements;		/* a row may charge several statements (0.4 on) */
	Relation	rel;
	EState	   *estate;			/* kept from batch to batch (write_cache.c) */
	EState	   *index_estate;	/* of this batch's index entries */
	ResultRelInfo *rri;
	TupleTableSlot *slot;
	Oid			seq;			/* of the identity column id */
	AttrNumber	att[LEDGER_COLUMNS];
} LedgerWriter;

extern void dp_ledger_forget(void);
extern void dp_ledger_open(LedgerWriter *w);
extern void dp_ledger_close(LedgerWriter *w);
extern int64 dp_ledger_append(LedgerWriter *w, const DpChargeRequest *req, const double *curve,
							   List *charged, int statements);

#endif							/* DP_AGG_CHARGE_LEDGER_H */
