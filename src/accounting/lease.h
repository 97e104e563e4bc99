/*-------------------------------------------------------------------------
 *
 * lease.h
 *	  Budgets leased by the charger to shared memory, so that a backend
 *	  repeating a statement decides its charge itself
 *	  (doc/charging-design.md).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_LEASE_H
#define DP_AGG_LEASE_H

#include "datatype/timestamp.h"

#include "budget_charge.h"
#include "budget_store.h"
#include "charger_shmem.h"

typedef enum DpLeaseVerdict
{
	DP_LEASE_CHARGED,			/* admitted and charged; in flight until
								 * dp_lease_landed */
	DP_LEASE_REFUSED,			/* a budget cannot pay: ask the charger, which
								 * says why */
	DP_LEASE_GONE				/* a lease is not valid: ask the charger */
} DpLeaseVerdict;

extern void dp_lease_init(void);
extern bool dp_lease_available(void);

/* a backend's side */
extern DpLeaseVerdict dp_lease_charge(const DpLeaseRef *refs, int n, const DpChargeAmounts *a,
									  const double *curve, const DpPldState *stmt,
									  TimestampTz now, int64 *seq);
extern void dp_lease_journaled(void);
extern void dp_lease_landed(void);

/* the charger's side */
extern bool dp_lease_recall(Oid budget_rel, int64 budget_id, bool *leased);
extern bool dp_lease_grant(Oid budget_rel, const DpBudgetRow *row, TimestampTz until,
						   uint64 changes_seen, DpLeaseRef *ref);
extern uint64 dp_lease_changes(void);
extern void dp_lease_budgets_changed(void);
extern void dp_lease_folded(Oid budget_rel, int64 budget_id);
extern bool dp_lease_any_valid(void);
extern void dp_lease_db_folded(void);
extern void dp_lease_reclaim_dropped(void);
extern bool dp_lease_unfolded(void);
extern bool dp_lease_maybe_unfolded(void);

#endif							/* DP_AGG_LEASE_H */
