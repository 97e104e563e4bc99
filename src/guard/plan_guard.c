/*-------------------------------------------------------------------------
 *
 * plan_guard.c
 *	  The guard's check of a plan, and the DP calls it evaluates.
 *
 * dp_guard_plan runs on the plan before execution and is the authority
 * (guard.c checks the query at planning, and holds the rules): it sees
 * what will really run, including SQL functions inlined by the planner,
 * and it finds the DP aggregate calls to price.  It walks the plan tree:
 * each Agg node of DP aggregates must run at most once per group (no join,
 * Memoize, set operation, Gather or sub-query used as an expression above
 * it), over one table read row by row (plan_input.c), with the levels of
 * a privacy unit rewrite in their shape (plan_units.c), and with its
 * groups released through private selection.  It records each call with
 * the node that evaluates it, its sampling and its privacy unit.  With
 * validate false it only finds the calls (a plan a leader checked).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"

#include "catalog.h"
#include "guard_messages.h"
#include "guc.h"
#include "insert_drain.h"
#include "plan_guard.h"
#include "plan_input.h"
#include "plan_nodes.h"
#include "plan_units.h"
#include "sampling.h"

/*
 * A combining Aggref has one argument, a Var for the partial state that the
 * node below computes; follow it down (through Gather, Sort...) to the
 * partial Aggref, which carries the call's real arguments.
 */
static Aggref *
partial_aggref(Aggref *aggref, Plan *input)
{
	Expr	   *e = linitial_node(TargetEntry, aggref->args)->expr;

	while (input != NULL && IsA(e, Var) && ((Var *) e)->varno == OUTER_VAR)
	{
		AttrNumber	attno = ((Var *) e)->varattno;

		if (attno < 1 || attno > list_length(input->targetlist))
			break;
		e = list_nth_node(TargetEntry, input->targetlist, attno - 1)->expr;
		if (IsA(e, Aggref))
			return (Aggref *) e;
		input = input->lefttree;
	}
	elog(ERROR, "dp_agg: cannot find the partial aggregate of a combining DP aggregate");
	return NULL;
}

static void
add_calls(PlanWalk *w, Agg *agg, List *aggrefs, bool finalize, const DpSampling *sampling)
{
	ListCell   *lc;

	foreach(lc, aggrefs)
	{
		DpPlanCall *c = palloc0(sizeof(DpPlanCall));

		c->unit_groups = w->unit_groups;
		c->unit_relid = w->unit_relid;

		c->aggref = lfirst(lc);
		c->args_from = c->aggref;
		if (agg != NULL && DO_AGGSPLIT_COMBINE(agg->aggsplit))
			c->args_from = partial_aggref(c->aggref, agg->plan.lefttree);
		c->info = dp_lookup_call(c->aggref->aggfnoid);
		c->agg = agg;
		c->finalize = finalize;
		c->sampling = *sampling;
		w->calls = lappend(w->calls, c);
	}
}

static void
collect_cte_plans(PlanWalk *w, Plan *plan)
{
	ListCell   *lc;

	if (plan == NULL)
		return;
	if (IsA(plan, CteScan))
		w->cte_plans = bms_add_member(w->cte_plans, ((CteScan *) plan)->ctePlanId);
	foreach(lc, dp_plan_children(plan))
		collect_cte_plans(w, lfirst(lc));
}

/*
 * The constant max_groups_contributed of a dp_select call (selection.c),
 * -1 if it is not a constant.  Not for a combining call, whose argument is
 * the partial state (its k is read from the partial call, release.c).
 */
static int
selection_groups(Aggref *a)
{
	int			k_arg = dp_lookup_call(a->aggfnoid)->k_arg;
	Const	   *k;

	Assert(!DO_AGGSPLIT_COMBINE(a->aggsplit));
	if (k_arg < 0 || k_arg >= list_length(a->args))
		return -1;
	k = (Const *) ((TargetEntry *) list_nth(a->args, k_arg))->expr;
	if (!IsA(k, Const) || k->constisnull)
		return -1;
	return DatumGetInt32(k->constvalue);
}

/*
 * The private selection of the groups of a DP Agg node (selection.c): the
 * node's groups are released only through a dp_select condition of its
 * qual (HAVING), unless dp_agg.group_keys is 'public' now (a plan made with
 * 'public' and run after it changed is refused, not run without
 * selection).  dp_select takes an argument of type internal, which no SQL
 * expression has: only selection.c puts it in a statement.  Over privacy
 * units (w->unit_groups > 0, privacy_unit.c) its max_groups_contributed is
 * the k of the rewrite's level 2, each unit being an input row of the node.
 */
static void
check_selection(PlanWalk *w, Agg *agg, List *aggrefs)
{
	bool		selected = false;
	ListCell   *lc;

	if (DO_AGGSPLIT_SKIPFINAL(agg->aggsplit))
		return;
	foreach(lc, aggrefs)
	{
		Aggref	   *a = lfirst(lc);
		DpAggKind	kind = dp_lookup_call(a->aggfnoid)->kind;

		if (kind == DP_PUBLIC)
		{
			/*
			 * the groups of a public domain (public_domain.c): released only
			 * if they hold a row of the domain, whatever the table's rows
			 */
			if (!list_member_ptr(agg->plan.qual, a))
				elog(ERROR, "dp_agg: the groups of a public domain that are not a condition of their aggregation");
			if (w->validate && a->location != DP_DOMAIN_LOCATION)
				reject_internal();
			selected = true;
			continue;
		}
		if (kind != DP_SELECT)
			continue;
		if (!list_member_ptr(agg->plan.qual, a))
			elog(ERROR, "dp_agg: a private selection that is not a condition of its aggregation");
		if (!DO_AGGSPLIT_COMBINE(a->aggsplit) &&
			selection_groups(a) != Max(w->unit_groups, 1))
			elog(ERROR, "dp_agg: a private selection of max_groups_contributed %d over units of %d groups",
				 selection_groups(a), Max(w->unit_groups, 1));
		selected = true;
	}
	if (w->validate && agg->numCols > 0 && !selected &&
		dp_guc_group_keys == DP_GROUP_KEYS_PRIVATE)
		reject_msg("GROUP BY keys of a DP statement are released only by private selection",
				   "This plan releases its groups without a private selection: it was made with "
				   "dp_agg.group_keys = 'public', or its grouping comes from a SQL function the "
				   "planner inlined.");
}

/* are the DP aggregates private selections (dp_select) only? */
static bool
selections_only(List *aggrefs)
{
	ListCell   *lc;

	foreach(lc, aggrefs)
	{
		DpAggKind	kind = dp_lookup_call(((Aggref *) lfirst(lc))->aggfnoid)->kind;

		if (kind != DP_SELECT && kind != DP_PUBLIC)
			return false;
	}
	return true;
}

/* a DP Agg node: check where it is and what it reads, and record its calls */
static void
visit_dp_agg(PlanWalk *w, Agg *agg, List *aggrefs, const char *unsafe)
{
	InputWalk	in = {NIL, NIL, false, NIL, NIL};
	DpSampling	sampling = dp_no_sampling;
	DpUnitLevel level = dp_guard_unit_level(w, aggrefs);

	if (DO_AGGSPLIT_SKIPFINAL(agg->aggsplit))
	{
		/* partial aggregation met outside the input of its finalize node:
		 * this is a parallel worker's plan fragment */
		plan_reject_msg(w, "partial DP aggregation without its finalization is not allowed", DETAIL_TWICE);
	}
	else if (unsafe)
		plan_reject_fmt(w, DETAIL_TWICE, "DP aggregates cannot be evaluated below %s", unsafe);
	if (agg->groupingSets != NIL || agg->aggstrategy == AGG_MIXED || agg->chain != NIL)
		plan_reject(w, "GROUPING SETS, ROLLUP and CUBE are",
					"A row would feed one release per grouping set.");
	if (level == DP_UNIT_BOUND || level == DP_UNIT_PICK)
		plan_reject_msg(w, "internal functions of dp_agg are not allowed in statements",
						"dp_agg_internal.unit_bound_* runs only below the releases of a privacy unit rewrite.");

	/*
	 * The planner removes the DP aggregates of a sub-query whose results
	 * the outer query does not use (SELECT count(*) FROM (SELECT g,
	 * dp_count(*) ...) s), leaving the private selection of its groups.
	 * Without a unit the selection reads the table, and is accepted as
	 * any DP aggregate; over the rewrite of privacy units it would read
	 * levels 1 and 2 stripped of their bounded contributions, a shape
	 * this guard does not accept: say what to write instead.
	 */
	if (level == DP_UNIT_NONE && selections_only(aggrefs) &&
		!DO_AGGSPLIT_SKIPFINAL(agg->aggsplit) && w->validate &&
		dp_guard_below_unit_rewrite(agg->plan.lefttree))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a DP sub-query over a relation with a privacy unit must be used through its DP aggregates"),
				 errdetail("The outer query uses none of the sub-query's DP aggregates, so the planner removed them and kept only the private selection of its groups."),
				 errhint("Use a DP aggregate of the sub-query in the outer query: count(c) instead of count(*), where c is a DP aggregate's column.")));

	if (level == DP_UNIT_RELEASE && !DO_AGGSPLIT_SKIPFINAL(agg->aggsplit))
	{
		UnitInput	ui = {0, false, NULL, NIL, NIL};

		dp_guard_unit_input(w, agg->plan.lefttree, &ui);
		if (ui.bound_agg == NULL)
			return;				/* rejected if validating */
		/* without level 2, each unit has one group: no GROUP BY */
		if (ui.groups == 0 && !ui.picked && agg->numCols != 0)
			plan_reject_msg(w, "a DP aggregate over privacy units must choose the groups of each unit",
							"Level 2 of the rewrite of privacy units is missing.");
		dp_guard_check_input(w, ui.bound_agg->plan.lefttree, &in, &sampling);
		dp_guard_scan_units(w, &in, true);
		dp_guard_unit_sample(w, &in, &sampling, true);
		w->unit_groups = Max(ui.groups, 1);
		check_selection(w, agg, aggrefs);
		w->unit_relid = in.scans != NIL
			? rt_fetch(((Scan *) linitial(in.scans))->scanrelid, w->stmt->rtable)->relid
			: InvalidOid;
		add_calls(w, ui.bound_agg, ui.bound, false, &sampling);
		add_calls(w, NULL, in.partial_aggrefs, false, &sampling);
		add_calls(w, NULL, ui.partial, false, &sampling);
		add_calls(w, agg, aggrefs, true, &sampling);
		w->unit_groups = 0;
		w->unit_relid = InvalidOid;
		return;
	}

	dp_guard_check_input(w, agg->plan.lefttree, &in, &sampling);
	dp_guard_scan_units(w, &in, false);
	/* a parallel worker's part of levels 1 and 2 of a rewrite reads units */
	dp_guard_unit_sample(w, &in, &sampling, level != DP_UNIT_NONE);
	check_selection(w, agg, aggrefs);
	add_calls(w, NULL, in.partial_aggrefs, false, &sampling);
	add_calls(w, agg, aggrefs, !DO_AGGSPLIT_SKIPFINAL(agg->aggsplit), &sampling);
}

/*
 * Walk a plan tree; unsafe names the first ancestor that could run its
 * subtree more than once (NULL if there is none).
 */
static void
walk_plan(PlanWalk *w, Plan *plan, const char *unsafe)
{
	const char *child_unsafe = unsafe;
	ListCell   *lc;

	if (plan == NULL)
		return;

	if (IsA(plan, Agg))
	{
		List	   *aggrefs = dp_guard_node_aggrefs(plan);

		if (aggrefs != NIL)
		{
			visit_dp_agg(w, (Agg *) plan, aggrefs, unsafe);
			return;
		}
	}
	else if (IsA(plan, WindowAgg))
		(void) dp_guard_node_aggrefs(plan);	/* rejects DP window functions */

	switch (nodeTag(plan))
	{
		case T_NestLoop:
		case T_MergeJoin:
		case T_HashJoin:
			child_unsafe = "a join";
			break;
		case T_Memoize:
			child_unsafe = "a Memoize node";
			break;
		case T_RecursiveUnion:
			child_unsafe = "a recursive union";
			break;
		case T_Append:
		case T_MergeAppend:
		case T_SetOp:
			child_unsafe = "a set operation";
			break;
		case T_Gather:
		case T_GatherMerge:
			child_unsafe = "a Gather node (parallel workers cannot release)";
			break;
		case T_CustomScan:
			/* the node of insert_drain.c runs its query once, to its end */
			if (!dp_insert_drain_node(plan))
				child_unsafe = "a custom or foreign scan";
			break;
		case T_ForeignScan:
			child_unsafe = "a custom or foreign scan";
			break;
		default:
			break;
	}
	foreach(lc, dp_plan_children(plan))
		walk_plan(w, lfirst(lc), child_unsafe);
}

/*
 * Find the DP aggregate calls of a plan, checking (if validate) that the
 * plan evaluates each at most once per group over one table read once.
 * Returns a list of DpPlanCall, NIL if the plan has no DP aggregate.
 */
List *
dp_guard_plan(PlannedStmt *stmt, bool validate)
{
	PlanWalk	w = {stmt, validate, NIL, NULL, 0, InvalidOid, 0};
	ListCell   *lc;
	int			plan_id = 0;
	bool		other_subplans = false;

	if (stmt->commandType == CMD_UTILITY || !dp_extension_present())
		return NIL;

	collect_cte_plans(&w, stmt->planTree);
	foreach(lc, stmt->subplans)
		collect_cte_plans(&w, lfirst(lc));

	walk_plan(&w, stmt->planTree, NULL);
	foreach(lc, stmt->subplans)
	{
		Plan	   *sub = lfirst(lc);
		int			before = list_length(w.calls);

		plan_id++;
		if (sub == NULL)
			continue;
		if (bms_is_member(plan_id, w.cte_plans))
			walk_plan(&w, sub, NULL);	/* a CTE runs once */
		else
		{
			other_subplans = true;
			walk_plan(&w, sub, "a sub-query used as an expression");
			if (list_length(w.calls) != before)
				plan_reject_msg(&w, "DP aggregates are not allowed in sub-queries used as expressions", DETAIL_TWICE);
		}
	}
	if (w.calls != NIL && other_subplans)
		plan_reject(&w, "sub-queries in expressions are",
					"A sub-query could be evaluated many times, or make a release depend on other rows.");

	/*
	 * dp_agg.unit_sampled only in its place, checked above: in DP plans,
	 * and in every plan started while this process holds the key of a
	 * sample (a statement that a function of the sampling statement runs),
	 * before any parallel worker starts.  A leader evaluates only marked
	 * calls (unit_sample.c); a worker runs only a plan its leader checked
	 * (its part of the plan, below a Gather, may be a scan alone).
	 */
	if (w.validate && OidIsValid(dp_unit_sampled_oid()) &&
		(w.calls != NIL ||
		 (dp_guc_unit_sample_key != NULL && dp_guc_unit_sample_key[0] != '\0')))
	{
		int			n = dp_guard_count_sampled(stmt->planTree);

		foreach(lc, stmt->subplans)
			n += dp_guard_count_sampled(lfirst(lc));
		if (n != w.unit_filters)
			reject_sample_filter();
	}
	return w.calls;
}
