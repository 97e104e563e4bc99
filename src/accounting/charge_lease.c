/*-------------------------------------------------------------------------
 *
 * charge_lease.c
 *	  What the charger leases after a batch commits: the budget rows it
 *	  committed that a backend may charge alone (lease.c), and which of them
 *	  each reply names.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "charge_lease.h"
#include "guc.h"
#include "journal.h"
#include "lease.h"

/*
 * Leasing.  After a batch commits, the charger leases (lease.c) each budget
 * row it committed that a backend may charge alone: one whose lease it
 * recalled for the batch, and one a request of the batch charged, but not
 * a 'pld' budget (its certificates are checked here, against the history),
 * nor one whose window has ended.  The lease holds until
 * dp_agg.lease_time from now, and not past the end of the row's window.
 * The reply of a request charged alone (no prepaid statements) names the
 * leases of all of its budgets, if each was leased: its backend charges
 * its next identical statements on them.  Nothing is leased when the
 * backends do not flush the charges themselves (synchronous replication:
 * charger_commit_mode), or when dp_agg.lease_time is 0.
 */
/* budgets are leased only to 0.4 objects and later: a journal, budget ids */
bool
dp_leasing(bool backend_flushes)
{
	return dp_guc_lease_ms > 0 && backend_flushes && dp_lease_available() &&
		OidIsValid(dp_journal_relid());
}

/*
 * The budgets of the batch to lease once it commits, and those of each
 * request charged alone; in cxt, which outlives the transaction.
 */
PendingLeases *
dp_leases_to_grant(Batch *batch, List **charged, int n, MemoryContext cxt, bool grant)
{
	PendingLeases *p = MemoryContextAllocZero(cxt, sizeof(PendingLeases));
	BudgetState **pending_st = palloc0(sizeof(BudgetState *) * Max(list_length(batch->budgets), 1));
	TimestampTz now = GetCurrentTimestamp();
	ListCell   *lc;

	p->leases = MemoryContextAllocZero(cxt, sizeof(PendingLease) * Max(list_length(batch->budgets), 1));
	p->n_of = MemoryContextAllocZero(cxt, sizeof(int) * Max(n, 1));
	p->of = MemoryContextAllocZero(cxt, sizeof(int *) * Max(n, 1));
	p->recalled = MemoryContextAllocZero(cxt, sizeof(int64) *
										 Max(list_length(batch->budgets) + list_length(batch->gone), 1));
	foreach(lc, batch->gone)
		p->recalled[p->n_recalled++] = *(int64 *) lfirst(lc);
	foreach(lc, batch->budgets)
	{
		BudgetState *st = lfirst(lc);
		bool		wanted = st->leased;
		DpBudgetRow rolled = st->row;
		TimestampTz end;

		for (int i = 0; i < n && !wanted; i++)
			wanted = list_member_ptr(charged[i], st);
		dp_budget_roll_window(&rolled, now, &end);
		if (!grant || !wanted || st->row.pld_accounting || st->row.id == 0 ||
			rolled.has_window_start != st->row.has_window_start ||
			rolled.window_start != st->row.window_start)	/* its window has ended */
		{
			if (st->leased)
				p->recalled[p->n_recalled++] = st->row.id;
			continue;
		}
		pending_st[p->n] = st;
		p->leases[p->n].row = st->row;
		p->leases[p->n].row.tuple = NULL;
		p->leases[p->n].end = end;
		p->n++;
	}
	for (int i = 0; i < n; i++)
	{
		int			m = 0;

		if (charged[i] == NIL || list_length(charged[i]) > DP_LEASE_MAX_BUDGETS)
			continue;
		p->of[i] = MemoryContextAlloc(cxt, sizeof(int) * list_length(charged[i]));
		foreach(lc, charged[i])
		{
			int			k;

			for (k = 0; k < p->n && pending_st[k] != lfirst(lc); k++)
				;
			p->of[i][m++] = k < p->n ? k : -1;
		}
		p->n_of[i] = m;
	}
	return p;
}

/* lease them, and name the leases in the replies of the requests they pay for */
void
dp_grant_leases(Oid budget_rel, PendingLeases *p, DpChargeReply **replies, int n, uint64 changes_seen)
{
	TimestampTz now = GetCurrentTimestamp();
	TimestampTz until = TimestampTzPlusMilliseconds(now, dp_guc_lease_ms);

	for (int k = 0; k < p->n; k++)
	{
		p->leases[k].granted = now < p->leases[k].end &&
			dp_lease_grant(budget_rel, &p->leases[k].row, Min(until, p->leases[k].end),
						   changes_seen, &p->leases[k].ref);
		if (!p->leases[k].granted)
			dp_lease_folded(budget_rel, p->leases[k].row.id);
	}
	/* the others recalled have nothing left to fold */
	for (int k = 0; k < p->n_recalled; k++)
		dp_lease_folded(budget_rel, p->recalled[k]);
	for (int i = 0; i < n; i++)
	{
		DpChargeReply *reply = replies[i];
		int			m = 0;

		if (reply->result != DP_CHARGE_OK || p->n_of[i] == 0)
			continue;
		reply->lease_until = until;
		for (int j = 0; j < p->n_of[i]; j++)
		{
			int			k = p->of[i][j];

			if (k < 0 || !p->leases[k].granted)
				break;
			reply->leases[m++] = p->leases[k].ref;
		}
		if (m < p->n_of[i])
			continue;
		/* in slot order, the order the backend locks them in */
		for (int a = 1; a < m; a++)
			for (int b = a; b > 0 && reply->leases[b - 1].slot > reply->leases[b].slot; b--)
			{
				DpLeaseRef	t = reply->leases[b];

				reply->leases[b] = reply->leases[b - 1];
				reply->leases[b - 1] = t;
			}
		reply->n_leases = m;
	}
}

