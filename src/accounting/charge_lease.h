/*-------------------------------------------------------------------------
 *
 * charge_lease.h
 *	  What the charger leases after a batch commits (lease.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_CHARGE_LEASE_H
#define DP_AGG_CHARGE_LEASE_H

#include "charge_batch.h"
#include "charger_shmem.h"

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

extern bool dp_leasing(bool backend_flushes);
extern PendingLeases *dp_leases_to_grant(Batch *batch, List **charged, int n, MemoryContext cxt,
										 bool grant);
extern void dp_grant_leases(Oid budget_rel, PendingLeases *p, DpChargeReply **replies, int n,
							uint64 changes_seen);

#endif							/* DP_AGG_CHARGE_LEASE_H */
