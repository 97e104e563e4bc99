/*-------------------------------------------------------------------------
 *
 * price.c
 *	  The price of a statement: a ticket for every DP aggregate call its plan
 *	  holds, and the total epsilon and delta of the calls it finalizes
 *	  (basic composition: Dwork & Roth 2014, Theorem 3.16), each call counted
 *	  once however many groups it produces, as groups are disjoint and their
 *	  releases compose in parallel.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/nodeFuncs.h"

#include "miscadmin.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "calibrate.h"
#include "describe.h"
#include "guc.h"
#include "joint.h"
#include "plan_guard.h"
#include "price.h"
#include "selection.h"
#include "protect.h"

/*
 * The NOTICE that a sampled table earns no amplification is given once per
 * plan, as a NOTICE of planning would be: a prepared statement's cached plan
 * gives it at its first execution only, a statement planned again (a custom
 * plan, a plan made again after an invalidation) gives it again.  A plan is
 * remembered until its memory context is reset or deleted, so that a plan
 * made later at the same address is never taken for it.
 */
typedef struct NoticedPlan
{
	MemoryContextCallback cb;	/* forgets the plan with its context */
	const PlannedStmt *stmt;
	const char *why_not;		/* the reason given */
	struct NoticedPlan *prev;
	struct NoticedPlan *next;
} NoticedPlan;

static NoticedPlan *noticed_plans = NULL;

static void
forget_noticed_plan(void *arg)
{
	NoticedPlan *n = arg;

	if (n->prev)
		n->prev->next = n->next;
	else
		noticed_plans = n->next;
	if (n->next)
		n->next->prev = n->prev;
}

/* Is this the first time the plan gives this reason?  Remembers it. */
static bool
first_notice_of_plan(const PlannedStmt *stmt, const char *why_not)
{
	MemoryContext cxt = GetMemoryChunkContext((void *) stmt);
	NoticedPlan *n;

	for (n = noticed_plans; n != NULL; n = n->next)
		if (n->stmt == stmt && strcmp(n->why_not, why_not) == 0)
			return false;
	n = MemoryContextAllocZero(cxt, sizeof(NoticedPlan));
	n->stmt = stmt;
	n->why_not = MemoryContextStrdup(cxt, why_not);
	n->next = noticed_plans;
	if (noticed_plans)
		noticed_plans->prev = n;
	noticed_plans = n;
	n->cb.func = forget_noticed_plan;
	n->cb.arg = n;
	MemoryContextRegisterResetCallback(cxt, &n->cb);
	return true;
}

/*
 * dp_agg.max_rows_contributed, read when a statement is priced: a role
 * untrusted for the protected relation may not exceed the superuser
 * setting dp_agg.max_rows_contributed_limit (doc/units-and-groups.md, "Privacy
 * units").
 */
int
dp_price_unit_rows(Oid relid)
{
	int			rows = dp_guc_max_rows_contributed;
	int			limit = dp_guc_max_rows_contributed_limit;
	Oid			denied;

	if (rows > limit && OidIsValid(relid) &&
		OidIsValid(denied = dp_untrusted_in_tree(relid, GetUserId())))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("dp_agg.max_rows_contributed %d exceeds dp_agg.max_rows_contributed_limit %d",
						rows, limit),
				 errdetail("Roles untrusted for the protected relation \"%s\" may lower the bounds of its privacy unit, not raise them.",
						   get_rel_name(denied)),
				 errhint("SET dp_agg.max_rows_contributed to at most %d.", limit)));
	return rows;
}

/*
 * A fused selection (selection.c) reads the rows of each group from its
 * host, the call dp_selection_host names among the finalized calls of its
 * aggregation node: both tickets get the same feed.  The planner fused
 * them on the same plan, so the host is there; if not, fail closed.
 */
static void
link_fused_selections(List *releases)
{
	ListCell   *lc;

	foreach(lc, releases)
	{
		DpRelease  *sel = lfirst(lc);
		List	   *node_calls = NIL;
		Aggref	   *host_aggref;
		DpSelectionFeed *feed = NULL;
		ListCell   *lc2;

		if (sel->call.kind != DP_SELECT || !sel->finalize || !dp_selection_fused(sel->aggref))
			continue;
		foreach(lc2, releases)
		{
			DpRelease  *r = lfirst(lc2);

			if (r->agg_node == sel->agg_node && r->finalize)
				node_calls = lappend(node_calls, r->aggref);
		}
		host_aggref = dp_selection_host(node_calls, sel->aggref);
		/* equal calls are one call of the executor's: the first it meets finalizes */
		foreach(lc2, releases)
		{
			DpRelease  *r = lfirst(lc2);

			if (host_aggref != NULL && r->agg_node == sel->agg_node && r->finalize &&
				r->aggref->aggno == host_aggref->aggno)
			{
				if (feed == NULL)
					feed = r->feed ? r->feed : palloc0(sizeof(DpSelectionFeed));
				r->feed = feed;
			}
		}
		if (feed == NULL)
			elog(ERROR, "dp_agg: a private selection without the DP aggregate that counts its rows");
		sel->feed = feed;
		list_free(node_calls);
	}
}

/*
 * Tickets for the DP calls of a plan, in the executor's query context.
 * Pricing is not a calculator call: its calibrations run without a work
 * limit (they can always be cancelled), whatever a calculator left behind.
 */
List *
dp_price_plan(PlannedStmt *stmt, ParamListInfo params, bool validate)
{
	List	   *calls;
	List	   *releases = NIL;
	ListCell   *lc;

	dp_work_limit(0);
	calls = dp_guard_plan(stmt, validate);
	if (calls != NIL && dp_guc_citus_worker)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("DP aggregates are not allowed on a Citus worker"),
				 errdetail("Budgets are kept and charged on the coordinator only; a worker computes partial states for signed fragments only."),
				 errhint("Connect to the coordinator.")));

	foreach(lc, calls)
	{
		DpPlanCall *c = lfirst(lc);

		DpRelease  *r = dp_release_create(c->aggref, c->args_from, c->info,
										  c->finalize, &c->sampling, params,
										  c->unit_groups,
										  c->info->unit != DP_UNIT_NONE ? dp_price_unit_rows(c->unit_relid) : 0);

		r->agg_node = c->agg;
		releases = lappend(releases, r);
	}

	link_fused_selections(releases);
	dp_price_selection_shares(releases);

	/* the Gaussian releases of the statement share its price (joint.c) */
	{
		double		epsilon,
					delta;

		dp_joint_calibrate(dp_priced_releases(releases, &epsilon, &delta), releases);
	}
	/* the half-widths of the error bars, from the noise as calibrated */
	foreach(lc, releases)
		dp_plan_halfwidths(lfirst(lc));

	/* say once per plan why a sampled table gets no amplification */
	foreach(lc, releases)
	{
		DpRelease  *r = lfirst(lc);

		if (validate && r->finalize && r->sampling.sampled && !r->sampling.amplified)
		{
			if (!first_notice_of_plan(stmt, r->sampling.why_not))
				break;
			ereport(NOTICE,
					(errmsg("TABLESAMPLE %s gives no privacy amplification here",
							r->sampling.method),
					 errdetail("The release is priced and its noise calibrated as if the table "
							   "were read whole: %s.", r->sampling.why_not),
					 errhint("BERNOULLI without REPEATABLE, or dp_agg.secure_bernoulli, "
							 "earns amplification by subsampling.")));
			break;
		}
	}
	return releases;
}

/*
 * The epsilon of the private selections whose price is a share of their
 * node's (dp_agg.selection_share while dp_agg.selection_epsilon is unset,
 * release.c): a selection at share s of a node whose releases cost E costs
 * s E / (1 - s), so that it is the share s of the node's total (E is
 * dp_agg.epsilon when the planner dropped every release of the node: an
 * outer query uses none).  Called once
 * every ticket of the statement is made, by dp_price_plan and for Citus
 * statements (dist_price.c).
 */
void
dp_price_selection_shares(List *releases)
{
	double		epsilon,
				delta;
	List	   *priced = dp_priced_releases(releases, &epsilon, &delta);
	ListCell   *lc;

	foreach(lc, releases)
	{
		DpRelease  *r = lfirst(lc);
		double		node_epsilon = 0;
		double		share = dp_guc_selection_share;
		ListCell   *lc2;

		if (!r->selection_share)
			continue;
		foreach(lc2, priced)
		{
			DpRelease  *p = lfirst(lc2);

			if (p->agg_node == r->agg_node && !p->selection_share &&
				p->call.kind != DP_SELECT && p->call.kind != DP_PUBLIC &&
				p->call.kind != DP_TOP_K)
				node_epsilon = dp_add_up(node_epsilon, p->epsilon);
		}
		/*
		 * a node whose releases the planner dropped (an outer query uses
		 * none of them): the share of dp_agg.epsilon, the price of one
		 * release
		 */
		if (!(node_epsilon > 0) && !dp_guc_epsilon(&node_epsilon))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("dp_agg.selection_epsilon is not set"),
					 errdetail("While it is unset, the private selection of GROUP BY keys, and top-k, cost dp_agg.selection_share of the price of the releases of their groups, or of dp_agg.epsilon; the groups release nothing and dp_agg.epsilon is not set either."),
					 errhint("SET dp_agg.selection_epsilon to the privacy loss of the selection.")));
		r->selection_share = false;
		if (r->call.kind == DP_TOP_K)
			dp_release_plan_top_k(r, dp_mul_up(node_epsilon, share / (1 - share)));
		else
			dp_release_plan_selection(r, dp_mul_up(node_epsilon, share / (1 - share)));
	}
}

/*
 * The releases a statement pays for: the finalized calls, one per distinct
 * call of each Agg node (the executor evaluates equal calls once), and
 * their total price, rounded up.
 */
List *
dp_priced_releases(List *releases, double *epsilon, double *delta)
{
	List	   *priced = NIL;
	ListCell   *lc;

	*epsilon = 0;
	*delta = 0;
	foreach(lc, releases)
	{
		DpRelease  *r = lfirst(lc);
		ListCell   *lc2;
		bool		dup = false;

		if (!r->finalize)
			continue;
		foreach(lc2, priced)
		{
			DpRelease  *p = lfirst(lc2);

			if (p->agg_node == r->agg_node && equal(p->aggref, r->aggref))
			{
				dup = true;
				break;
			}
		}
		if (dup)
			continue;
		priced = lappend(priced, r);
		*epsilon = dp_add_up(*epsilon, r->epsilon);
		*delta = dp_add_up(*delta, r->delta);
	}
	return priced;
}
