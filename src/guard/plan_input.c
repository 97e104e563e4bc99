/*-------------------------------------------------------------------------
 *
 * plan_input.c
 *	  The input of a DP aggregation node in a plan: one table, row by row.
 *
 * Part of the guard's plan check (plan_guard.c, which walks the plan and
 * records the DP calls).  Below an Agg node of DP aggregates the plan may
 * only pass the rows of one table on: sorts, gathers, the partial
 * aggregation of parallel plans, the partitions of one partitioned table,
 * the rows of a public domain beside the table's (public_domain.c), and
 * joins to lookup tables that lookup_join.c checked and marked at
 * planning.  The walk collects the scans of that table, the lookup tables
 * and the partial DP aggregates met on the way, refusing (when it
 * validates) any node that could read a row twice or make a release depend
 * on other rows.  The rules are those of guard.c; the messages those of
 * guard_messages.h.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
#include "utils/fmgroids.h"

#include "catalog.h"
#include "dp_calls.h"
#include "guard_messages.h"
#include "inheritance.h"
#include "plan_input.h"
#include "plan_nodes.h"
#include "sampling.h"
#include "unit_catalog.h"

/* the DP Aggrefs of a plan node; ERROR for a DP window function */
List *
dp_guard_node_aggrefs(Plan *plan)
{
	bool		window;
	List	   *calls = dp_plan_node_calls(plan, &window);

	if (window)
		reject_msg("DP aggregates cannot be used as window functions",
				   "A window function would release one noisy value per row.");
	return calls;
}

static void walk_input(PlanWalk *w, Plan *plan, InputWalk *in);

/* Is an Append over one partitioned (or inheritance) table? */
static bool
append_is_inheritance(PlanWalk *w, Bitmapset *apprelids)
{
	int			rti = -1;

	if (bms_num_members(apprelids) < 1)
		return false;
	while ((rti = bms_next_member(apprelids, rti)) >= 0)
	{
		RangeTblEntry *rte = rt_fetch(rti, w->stmt->rtable);

		if (rte->rtekind != RTE_RELATION || !rte->inh)
			return false;
	}
	return true;
}

/*
 * Does the subtree read only lookup tables (marked by lookup_join.c, which
 * checked at planning that each is joined on a unique key of its own),
 * through nodes that pass rows on or join them?  Its scans are added to
 * *lookups.  In a parallel worker's plan, which carries no marks, it is
 * never true (the leader checked the plan).
 */
static bool
lookup_only(PlanWalk *w, Plan *plan, List **lookups)
{
	ListCell   *lc;

	if (plan == NULL)
		return true;
	if (dp_plan_reads_relation(plan))
	{
		if (!DP_RTE_IS_LOOKUP(rt_fetch(((Scan *) plan)->scanrelid, w->stmt->rtable)))
			return false;
		*lookups = lappend(*lookups, plan);
		return true;
	}
	switch (nodeTag(plan))
	{
		case T_Hash:
		case T_Memoize:
		case T_Material:
		case T_Sort:
		case T_IncrementalSort:
		case T_Result:
		case T_Append:
		case T_MergeAppend:
		case T_NestLoop:
		case T_MergeJoin:
		case T_HashJoin:
		case T_Gather:
		case T_GatherMerge:
			break;
		default:
			return false;
	}
	foreach(lc, dp_plan_children(plan))
	{
		if (!lookup_only(w, lfirst(lc), lookups))
			return false;
	}
	return true;
}

/*
 * The rows of a public domain (public_domain.c): a scan of
 * generate_series(0, N - 1) of constants, made by the rewrite (its parse
 * location says so where the plan is validated), maybe under a node that
 * projects it.  Quals on it (a HAVING on the keys that the planner pushed
 * down) only drop keys of the domain.  NULL if plan is not one.
 */
Plan *
dp_guard_domain_rows(PlanWalk *w, Plan *plan)
{
	RangeTblFunction *rtf;
	FuncExpr   *f;

	while (plan != NULL && IsA(plan, Result) && ((Result *) plan)->resconstantqual == NULL &&
		   plan->lefttree != NULL)
		plan = plan->lefttree;
	while (plan != NULL && IsA(plan, SubqueryScan))
		plan = ((SubqueryScan *) plan)->subplan;
	if (plan == NULL || !IsA(plan, FunctionScan) ||
		list_length(((FunctionScan *) plan)->functions) != 1)
		return NULL;
	rtf = linitial_node(RangeTblFunction, ((FunctionScan *) plan)->functions);
	if (!IsA(rtf->funcexpr, FuncExpr))
		return NULL;
	f = (FuncExpr *) rtf->funcexpr;
	if (f->funcid != F_GENERATE_SERIES_INT4_INT4 || list_length(f->args) != 2 ||
		!IsA(linitial(f->args), Const) || !IsA(lsecond(f->args), Const))
		return NULL;
	if (w->validate && f->location != DP_DOMAIN_LOCATION)
		return NULL;
	return plan;
}

/*
 * An Append (or MergeAppend) of the rows of a public domain and of the
 * table's rows (public_domain.c): its children but the domain's rows are
 * walked as the input; false if it is not one.
 */
static bool
walk_domain_union(PlanWalk *w, Plan *plan, Bitmapset *apprelids, InputWalk *in)
{
	List	   *children = dp_plan_children(plan);
	Plan	   *domain = NULL;
	ListCell   *lc;
	int			rti = -1;

	foreach(lc, children)
	{
		if (dp_guard_domain_rows(w, lfirst(lc)) == NULL)
			continue;
		if (domain != NULL)
			plan_reject(w, "UNION ALL is", DETAIL_TWICE);
		domain = lfirst(lc);
	}
	if (domain == NULL)
		return false;
	in->domains = lappend(in->domains, domain);
	/* the table's branch may read a partitioned table's partitions */
	while ((rti = bms_next_member(apprelids, rti)) >= 0)
	{
		RangeTblEntry *rte = rt_fetch(rti, w->stmt->rtable);

		if (rte->rtekind == RTE_RELATION && rte->inh)
			in->inheritance = true;
	}
	foreach(lc, children)
	{
		if (lfirst(lc) != domain)
			walk_input(w, lfirst(lc), in);
	}
	return true;
}

/*
 * A join in the input of a DP Agg node: one side reads lookup tables only,
 * and every row of the other side, the input, is kept at most once (an
 * inner join, or an outer join that preserves the input).  The planner may
 * put the input on either side; lookup_join.c checked at planning that
 * each input row matches at most one row of each lookup table.  Returns
 * the input's side, NULL if the join is not such a join.
 */
static Plan *
join_input(PlanWalk *w, Join *join, InputWalk *in)
{
	List	   *lookups = NIL;

	if (lookup_only(w, innerPlan(join), &lookups) &&
		(join->jointype == JOIN_INNER || join->jointype == JOIN_LEFT))
	{
		in->lookups = list_concat(in->lookups, lookups);
		return outerPlan(join);
	}
	lookups = NIL;
	if (lookup_only(w, outerPlan(join), &lookups) &&
		(join->jointype == JOIN_INNER || join->jointype == JOIN_RIGHT))
	{
		in->lookups = list_concat(in->lookups, lookups);
		return innerPlan(join);
	}
	return NULL;
}

/*
 * The input of a DP Agg node: one table read row by row, through nodes
 * that pass rows on (sort, gather, the partial aggregation of parallel
 * plans, the partitions of one partitioned table, joins to lookup tables).
 */
static void
walk_input(PlanWalk *w, Plan *plan, InputWalk *in)
{
	ListCell   *lc;

	if (plan == NULL)
		return;
	if (dp_plan_reads_relation(plan))
	{
		in->scans = lappend(in->scans, plan);
		return;					/* bitmap index children read no rows */
	}
	switch (nodeTag(plan))
	{
		case T_Sort:
		case T_IncrementalSort:
		case T_Material:
		case T_Result:
		case T_Gather:
		case T_GatherMerge:
		case T_SubqueryScan:
		case T_Hash:			/* the input hashed by a join to lookups */
		case T_Memoize:
			break;
		case T_NestLoop:
		case T_MergeJoin:
		case T_HashJoin:
			{
				Plan	   *input = join_input(w, (Join *) plan, in);

				if (input != NULL)
				{
					walk_input(w, input, in);
					return;
				}
				plan_reject(w, "joins are", DETAIL_TWICE);
				break;
			}
		case T_Agg:
			{
				Agg		   *agg = (Agg *) plan;

				if (!DO_AGGSPLIT_SKIPFINAL(agg->aggsplit))
					plan_reject_msg(w, "aggregation in the FROM of a DP aggregate is not allowed", DETAIL_DATA);
				in->partial_aggrefs = list_concat(in->partial_aggrefs, dp_guard_node_aggrefs(plan));
				break;
			}
		case T_Append:
			if (walk_domain_union(w, plan, ((Append *) plan)->apprelids, in))
				return;
			if (!append_is_inheritance(w, ((Append *) plan)->apprelids))
				plan_reject(w, "UNION ALL is", DETAIL_TWICE);
			in->inheritance = true;
			break;
		case T_MergeAppend:
			if (walk_domain_union(w, plan, ((MergeAppend *) plan)->apprelids, in))
				return;
			if (!append_is_inheritance(w, ((MergeAppend *) plan)->apprelids))
				plan_reject(w, "UNION ALL is", DETAIL_TWICE);
			in->inheritance = true;
			break;
		case T_FunctionScan:
		case T_ProjectSet:
			plan_reject_msg(w, "set-returning functions in the FROM of a DP aggregate are not allowed", DETAIL_TWICE);
			break;
		case T_ValuesScan:
			plan_reject_msg(w, "VALUES lists in the FROM of a DP aggregate are not allowed", DETAIL_TWICE);
			break;
		case T_CteScan:
		case T_WorkTableScan:
			plan_reject_msg(w, "materialized or recursive CTEs in the FROM of a DP aggregate are not allowed", DETAIL_TWICE);
			break;
		case T_Limit:
			plan_reject_msg(w, "LIMIT and OFFSET in the FROM of a DP aggregate are not allowed", DETAIL_DATA);
			break;
		case T_Unique:
		case T_Group:
		case T_SetOp:
			plan_reject_msg(w, "DISTINCT and set operations in the FROM of a DP aggregate are not allowed", DETAIL_DATA);
			break;
		case T_WindowAgg:
			plan_reject_msg(w, "window functions in the FROM of a DP aggregate are not allowed", DETAIL_DATA);
			break;
		case T_LockRows:
			plan_reject_msg(w, "FOR UPDATE and FOR SHARE in the FROM of a DP aggregate are not allowed", DETAIL_TWICE);
			break;
		default:
			plan_reject_fmt(w, "dp_agg cannot tell how often such a node reads its input.",
							"plan nodes of type %d in the FROM of a DP aggregate are not allowed",
							(int) nodeTag(plan));
			break;
	}
	foreach(lc, dp_plan_children(plan))
		walk_input(w, lfirst(lc), in);
}

/*
 * Walk the input of an aggregation node of DP aggregates: one table read
 * row by row (checked if validating); its sampling, and the partial DP
 * aggregates met on the way.
 */
void
dp_guard_check_input(PlanWalk *w, Plan *input, InputWalk *in, DpSampling *sampling)
{
	ListCell   *lc;

	walk_input(w, input, in);

	if (w->validate)
	{
		/* with a public domain, the table's rows may be none at all (WHERE false) */
		if (in->scans == NIL && in->domains == NIL)
			reject_msg("a DP aggregate must read a table",
					   "A DP aggregate reads exactly one table (or a view of one).");
		if (list_length(in->scans) > 1)
		{
			/* the partitions of one table, each read once */
			Bitmapset  *relids = NULL;

			if (!in->inheritance)
				reject("reading more than one table is", DETAIL_TWICE);
			foreach(lc, in->scans)
			{
				Scan	   *scan = lfirst(lc);
				Oid			relid = rt_fetch(scan->scanrelid, w->stmt->rtable)->relid;

				if (bms_is_member((int) relid, relids))
					reject("reading a table twice is", DETAIL_TWICE);
				relids = bms_add_member(relids, (int) relid);
			}
		}
	}
	dp_sampling_of_input(w->stmt, in->scans, sampling);
}

/*
 * The lookup tables joined to the input of DP aggregates (lookup_join.c
 * checked them at planning; checked again here on what the plan reads):
 * their rows are public, so none may have a privacy unit, and none may be
 * of the inheritance tree of the relation the DP aggregates read (a join
 * of a table with itself).  Protected relations read as lookups are
 * refused by protect_check.c, which does not count lookups as the input
 * of DP aggregates.
 */
void
dp_guard_check_lookups(PlanWalk *w, InputWalk *in)
{
	List	   *roots = NIL;
	ListCell   *lc;

	if (in->lookups == NIL)
		return;
	foreach(lc, in->scans)
	{
		Oid			relid = rt_fetch(((Scan *) lfirst(lc))->scanrelid, w->stmt->rtable)->relid;

		roots = list_concat_unique_oid(roots, dp_relation_roots(relid));
	}
	foreach(lc, in->lookups)
	{
		Oid			relid = rt_fetch(((Scan *) lfirst(lc))->scanrelid, w->stmt->rtable)->relid;
		DpUnit		unit;
		ListCell   *rc;

		if (dp_any_privacy_unit() && dp_unit_of_read(relid, true, &unit))
			reject_msg("a lookup table may not have a privacy unit",
					   "Its rows would feed the DP aggregates unbounded.");
		foreach(rc, dp_relation_roots(relid))
		{
			if (list_member_oid(roots, lfirst_oid(rc)))
				reject_msg("a lookup table may not be the relation the DP aggregates read",
						   "A join of a table with itself lets one row change many others.");
		}
	}
}
