/*-------------------------------------------------------------------------
 *
 * charge_batch.h
 *	  The budgets of one batch of the charger: read and locked once, their
 *	  leases taken back and the journal folded into them, written once.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_CHARGE_BATCH_H
#define DP_AGG_CHARGE_BATCH_H

#include "budget_store.h"
#include "charge_ledger.h"

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
	/* folding the journal (charge_batch.c, "Folding") */
	bool		fold_all;		/* every row, not only those of leased budgets */
	bool		folding;
	bool		refold;			/* a budget was recalled while folding */
	bool		folded_all;
	List	   *gone;			/* ids (int64 *) the journal charged that no
								 * budget has any more */
} Batch;

extern BudgetState *dp_batch_budget(Batch *batch, bool relation, Oid key);
extern RoleInfo *dp_batch_role(Batch *batch, Oid role);
extern void dp_batch_fold(Batch *batch);
extern void dp_batch_remember_shape(int64 shape, const double *curve);
extern void dp_batch_write(Batch *batch);

#endif							/* DP_AGG_CHARGE_BATCH_H */
