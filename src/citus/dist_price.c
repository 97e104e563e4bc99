/*-------------------------------------------------------------------------
 *
 * dist_price.c
 *	  DP statements on Citus tables: the coordinator's price.
 *
 * On the coordinator (dist_plan.c made the outer statement):
 *
 * - dp_dist_price, at executor start, finds the dist_run scan of the plan,
 *   checks the inner statement it carries (the guard's query check, one
 *   Citus table, group keys and DP calls only) and that no partial state
 *   can leave the plan except into dist_release, and makes a ticket for
 *   every DP call of the inner statement, priced like any other (so the one
 *   durable charge, before any fragment is sent, covers them, and the
 *   ledger records the user's statement).
 *
 * Sampling: TABLESAMPLE BERNOULLI (p) on a distributed table reaches every
 * shard's fragment; each shard is read by one scan, whose BERNOULLI keeps
 * each row independently with the same probability q (a fresh seed per
 * scan without REPEATABLE), and the shards are disjoint, so every row of
 * the table is kept independently with probability q: the Poisson
 * subsampling the amplification theorems assume (Balle, Barthe & Gaboardi
 * 2018, Theorem 8; Steinke 2022, Theorem 29).  The price is computed on the
 * coordinator as for a local table read once.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"

#include "catalog.h"
#include "describe.h"
#include "dist_fingerprint.h"
#include "dist_inner.h"
#include "dist_plan.h"
#include "dist_price.h"
#include "guc.h"
#include "keyset.h"
#include "plan_nodes.h"
#include "price.h"
#include "public_domain.h"
#include "release.h"
#include "sampling.h"

/* ---------- the coordinator's price ---------- */

typedef struct StateCheck
{
	Oid			state_type;
	Oid			run_oid;
} StateCheck;

static void
state_escapes(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("partial states of DP aggregates may only be released by dp_agg_internal.dist_release"),
			 errdetail("A partial state is exact: it must never reach a client.")));
}

/* partial states flow from the dist_run scan into dist_release only */
static bool
state_walker(Node *node, StateCheck *c)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
	{
		Var		   *v = (Var *) node;

		if (v->vartype == c->state_type || v->varattno == InvalidAttrNumber)
			state_escapes();
		return false;
	}
	if (IsA(node, FuncExpr))
	{
		FuncExpr   *f = (FuncExpr *) node;

		if (f->funcid == c->run_oid || dp_is_dist_function(f->funcid, "dist_run"))
			state_escapes();
		if (dp_is_dist_function(f->funcid, "dist_release"))
		{
			if (list_length(f->args) != 3 || !IsA(linitial(f->args), Var))
				state_escapes();
			return expression_tree_walker((Node *) list_delete_first(list_copy(f->args)),
										  state_walker, c);
		}
	}
	return expression_tree_walker(node, state_walker, c);
}

/*
 * Every expression of the plan but the dist_run calls of its scans: a
 * state may pass through a node below the top as a bare column (the
 * planner evaluates the volatile dist_release after a sort), and is used
 * by dist_release only.
 */
static void
check_states(Plan *plan, StateCheck *c, bool top)
{
	ListCell   *lc;

	if (plan == NULL)
		return;
	foreach(lc, plan->targetlist)
	{
		Expr	   *e = lfirst_node(TargetEntry, lc)->expr;

		if (top || !IsA(e, Var) || ((Var *) e)->varattno == InvalidAttrNumber)
			(void) state_walker((Node *) e, c);
	}
	(void) state_walker((Node *) plan->qual, c);
	if (IsA(plan, FunctionScan) && dp_dist_run_of_scan(plan) == NULL)
		(void) state_walker((Node *) ((FunctionScan *) plan)->functions, c);
	foreach(lc, dp_plan_children(plan))
		check_states(lfirst(lc), c, false);
}

/*
 * The fragments of the inner statement can be bound to it
 * (dist_fingerprint.c); checked before the charge, so that a statement
 * whose fragments a worker could not match fails before it costs anything.
 */
static void
check_bindable(Query *inner, ParamListInfo params)
{
	const char *why;

	if (dp_fragment_fingerprint(inner, "", "", params, true, &why) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("this DP statement on a Citus table cannot be bound to its fragments"),
				 errdetail("%s", why),
				 errhint("On a Citus table, write WHERE, GROUP BY, TABLESAMPLE and the arguments of DP aggregates with built-in immutable functions and operators, columns, constants and parameters.")));
}

/*
 * The private selection of an inner statement's groups: present when it
 * has GROUP BY and the keys are private (dist_plan.c put it there at
 * planning), with the k of its privacy unit (1 when rows are the units);
 * absent when they are the keys of a public domain (dist_run's key set).  A plan made
 * with dp_agg.group_keys = 'public' and run after it changed is refused, as
 * the guard refuses a local one (plan_guard.c), not run without selection.
 */
static void
check_inner_selection(Query *inner, List *tickets, int unit_groups, bool public_domain)
{
	bool		selected = public_domain;
	ListCell   *lc;

	foreach(lc, tickets)
	{
		const DpRelease *r = lfirst(lc);

		if (r->call.kind != DP_SELECT)
			continue;
		if (selected || list_length(inner->groupClause) <= (unit_groups > 0 ? 1 : 0) ||
			r->selection.max_groups != Max(unit_groups, 1) || public_domain)
			dp_dist_bad_inner();
		selected = true;
	}
	if (!selected && list_length(inner->groupClause) > (unit_groups > 0 ? 1 : 0) &&
		dp_guc_group_keys == DP_GROUP_KEYS_PRIVATE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("GROUP BY keys of a DP statement are released only by private selection"),
				 errdetail("This plan of a DP statement on a Citus table releases its groups without a private selection: it was made with dp_agg.group_keys = 'public'."),
				 errhint("Prepare the statement again, or SET dp_agg.group_keys = 'public' if the group keys are public knowledge.")));
}

/*
 * Tickets of the DP calls of the dist_run scans of a plan (NIL if it has
 * none), finalized on the coordinator; ERROR on a Citus worker.
 */
List *
dp_dist_price(PlannedStmt *stmt, ParamListInfo params)
{
	StateCheck	c;
	List	   *runs = NIL;
	List	   *releases = NIL;
	ListCell   *lc;
	Oid			argtype = TEXTOID;

	if (stmt->commandType == CMD_UTILITY || !dp_extension_present())
		return NIL;
	dp_dist_collect_runs(stmt->planTree, &runs);
	foreach(lc, stmt->subplans)
		dp_dist_collect_runs(lfirst(lc), &runs);
	if (runs == NIL)
		return NIL;
	c.state_type = dp_dist_state_type();
	c.run_oid = dp_dist_func("dist_run", 1, &argtype);
	check_states(stmt->planTree, &c, true);
	foreach(lc, stmt->subplans)
		check_states(lfirst(lc), &c, true);
	if (dp_guc_citus_worker)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("DP aggregates are not allowed on a Citus worker"),
				 errdetail("Budgets are kept and charged on the coordinator only; a worker computes partial states for signed fragments only."),
				 errhint("Connect to the coordinator.")));

	foreach(lc, runs)
	{
		FuncExpr   *run = lfirst(lc);
		int			unit_groups;
		Query	   *inner = dp_dist_inner_of(run, &unit_groups);
		/* the second argument is the k of a unit, or a public domain's key set */
		bool		public_domain = list_length(run->args) == 2 && unit_groups == 0;
		RangeTblEntry *rte = linitial_node(RangeTblEntry, inner->rtable);
		int			unit_rows = unit_groups > 0 ? dp_price_unit_rows(rte->relid) : 0;
		List	   *tickets = NIL;
		ListCell   *lc2;

		check_bindable(inner, params);

		foreach(lc2, inner->targetList)
		{
			TargetEntry *tle = lfirst(lc2);
			DpSampling	sampling = dp_no_sampling;
			DpCallInfo	info;
			DpRelease  *r;

			if (!IsA(tle->expr, Aggref))
				continue;
			if (rte->tablesample != NULL)
			{
				sampling.sampled = true;
				sampling.tablesample = rte->tablesample;
				sampling.nscans = 1;
			}
			info = *dp_lookup_call(((Aggref *) tle->expr)->aggfnoid);
			/* released per group of bounded units, as level 3 of privacy_unit.c */
			if (unit_groups > 0 && info.kind != DP_SELECT)
				info.unit = DP_UNIT_RELEASE;
			r = dp_release_create((Aggref *) tle->expr, (Aggref *) tle->expr, &info, true,
								  &sampling, params, unit_groups, unit_rows);
			/* partial states hold counts and sums only: no bins, no tree */
			if (r->auto_bounds)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("DP aggregates without bounds are not supported on a Citus table"),
						 errdetail("The partial states of a Citus table hold clamped sums, for bounds known when the statement is signed."),
						 errhint("Give the clamping bounds; dp_bounds on a local copy of a sample can suggest them.")));
			dp_plan_halfwidths(r);
			r->agg_node = run;
			tickets = lappend(tickets, r);
		}
		dp_price_selection_shares(tickets);
		check_inner_selection(inner, tickets, unit_groups, public_domain);
		releases = list_concat(releases, tickets);
		/* a public domain's keys: recorded as on a local table, at no price */
		if (public_domain)
		{
			Const	   *ks = lsecond(run->args);
			Aggref	   *pub;
			DpRelease  *r;

			if (!IsA(ks, Const) || ks->constisnull)
				dp_dist_bad_inner();
			pub = dp_domain_public_call(dp_keyset_header_keys(DatumGetByteaPP(ks->constvalue)));
			r = dp_release_create(pub, pub, dp_lookup_call(pub->aggfnoid), true, &dp_no_sampling,
								  params, 0, 0);
			releases = lappend(releases, r);
		}
	}
	return releases;
}

