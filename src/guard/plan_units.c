/*-------------------------------------------------------------------------
 *
 * plan_units.c
 *	  Privacy units in the guard's plan check.
 *
 * Part of the guard's plan check (plan_guard.c).  The rewrite of privacy
 * units (privacy_unit.c) puts three levels in a statement: the bounded
 * contributions of each unit (level 1, or its fused form of k = 1,
 * unit_pick.c), the groups each unit keeps (level 2) and the releases
 * (level 3).  The plan check accepts them only in that shape, made by the
 * rewrite (marked with DP_UNIT_LOCATION), over relations whose privacy
 * unit they bound, and with the filter of a sample of units
 * (dp_agg.unit_sampled) in its place only: on each scan of the relation
 * with the unit, nowhere else in the plan.  The messages are those of
 * guard_messages.h.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"

#include "catalog.h"
#include "guard_messages.h"
#include "plan_input.h"
#include "plan_nodes.h"
#include "plan_units.h"
#include "sampling.h"
#include "unit_catalog.h"

/*
 * The level of privacy units of a node's DP aggregates (all the same).  The
 * private selection of the node's groups (dp_select, of no level) may sit
 * beside releases of any level but 1: selection.c puts it in the query
 * whose groups are released, level 3 of a rewrite (privacy_unit.c), and
 * check_selection checks where it is.
 */
DpUnitLevel
dp_guard_unit_level(PlanWalk *w, List *aggrefs)
{
	DpUnitLevel level = DP_UNIT_NONE;
	bool		first = true;
	bool		selects = false;
	ListCell   *lc;

	foreach(lc, aggrefs)
	{
		Aggref	   *a = lfirst(lc);
		const DpCallInfo *info = dp_lookup_call(a->aggfnoid);

		if (info->kind == DP_SELECT || info->kind == DP_PUBLIC || info->kind == DP_TOP_K)
		{
			/* top-k counts the units of level 3 as the selection does */
			if (info->kind == DP_TOP_K && w->validate && a->location != DP_DOMAIN_LOCATION)
				reject_internal();
			selects = true;
			continue;
		}
		if (!first && info->unit != level)
			plan_reject_msg(w, "internal functions of dp_agg are not allowed in statements",
							"DP aggregates of different levels of a privacy unit rewrite are evaluated together.");
		/* made by the rewrite (privacy_unit.c), never written */
		if (info->unit != DP_UNIT_NONE && a->location != DP_UNIT_LOCATION)
			plan_reject_msg(w, "internal functions of dp_agg are not allowed in statements",
							"dp_agg_internal.unit_bound_*, dp_agg_internal.unit_release_* and dp_agg_internal.unit_keep are made by the rewrite of privacy units only.");
		level = info->unit;
		first = false;
	}
	if (selects && (level == DP_UNIT_BOUND || level == DP_UNIT_PICK))
		plan_reject_msg(w, "internal functions of dp_agg are not allowed in statements",
						"A private selection of groups is evaluated with the bounding of privacy units.");
	return level;
}

/* k of the window function of level 2 (privacy_unit.c), or 0 if none */
static int
unit_keep_groups(PlanWalk *w, WindowAgg *wa)
{
	ListCell   *lc;
	int			k = 0;

	foreach(lc, wa->plan.targetlist)
	{
		Expr	   *e = lfirst_node(TargetEntry, lc)->expr;
		WindowFunc *wf;
		Const	   *arg;

		if (!IsA(e, WindowFunc))
			continue;
		wf = (WindowFunc *) e;
		arg = list_length(wf->args) == 1 ? (Const *) linitial(wf->args) : NULL;
		if (wf->winfnoid != dp_unit_keep_oid() || wf->location != DP_UNIT_LOCATION ||
			arg == NULL || !IsA(arg, Const) || arg->constisnull || k != 0)
		{
			plan_reject_msg(w, "window functions in the FROM of a DP aggregate are not allowed", DETAIL_DATA);
			continue;
		}
		k = DatumGetInt32(arg->constvalue);
	}
	return k;
}

/*
 * An aggregate other than a DP aggregate; with *allow_pick, other than the
 * keys of the fused level 1 of privacy units too (made by the rewrite)
 */
static bool
other_aggref_walker(Node *node, bool *allow_pick)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref) && dp_lookup_call(((Aggref *) node)->aggfnoid) == NULL)
	{
		Aggref	   *a = (Aggref *) node;

		return !(*allow_pick && a->aggfnoid == dp_unit_pick_oid() &&
				 a->location == DP_UNIT_LOCATION);
	}
	return expression_tree_walker(node, other_aggref_walker, allow_pick);
}

/* do the expressions compute aggregates other than DP aggregates? */
static bool
other_aggregates(Node *targetlist, Node *qual, bool allow_pick)
{
	return other_aggref_walker(targetlist, &allow_pick) || other_aggref_walker(qual, &allow_pick);
}

/* the single child of a node that passes rows on, NULL for other nodes */
static Plan *
pass_through_child(Plan *plan)
{
	switch (nodeTag(plan))
	{
		case T_Sort:
		case T_IncrementalSort:
		case T_Material:
		case T_Result:
		case T_Gather:
		case T_GatherMerge:
		case T_WindowAgg:
			return plan->lefttree;
		case T_SubqueryScan:
			return ((SubqueryScan *) plan)->subplan;
		default:
			return NULL;
	}
}

/*
 * The input of the releases of a privacy unit rewrite (level 3): nodes
 * that pass rows on, at most one WindowAgg of dp_agg.unit_keep (level 2,
 * which sets k), partial level-3 aggregation (parallel plans), down to the
 * aggregation of the bounded contributions (level 1, finalizing the partial
 * level 1 of parallel workers), whose own input is checked as any DP
 * aggregate's.
 */
void
dp_guard_unit_input(PlanWalk *w, Plan *plan, UnitInput *ui)
{
	while (plan != NULL)
	{
		if (IsA(plan, Append) || IsA(plan, MergeAppend))
		{
			/* the rows of a public domain beside the units' (public_domain.c) */
			List	   *children = dp_plan_children(plan);
			Plan	   *units = NULL;
			ListCell   *lc;

			foreach(lc, children)
			{
				if (dp_guard_domain_rows(w, lfirst(lc)) != NULL)
					continue;
				if (units != NULL)
				{
					plan_reject(w, "UNION ALL is", DETAIL_TWICE);
					return;
				}
				units = lfirst(lc);
			}
			if (list_length(children) < 2 || units == NULL)
			{
				plan_reject(w, "UNION ALL is", DETAIL_TWICE);
				return;
			}
			plan = units;
			continue;
		}
		if (IsA(plan, WindowAgg))
		{
			if (ui->groups != 0)
				plan_reject_msg(w, "window functions in the FROM of a DP aggregate are not allowed", DETAIL_DATA);
			ui->groups = unit_keep_groups(w, (WindowAgg *) plan);
		}
		else if (IsA(plan, Agg))
		{
			Agg		   *agg = (Agg *) plan;
			List	   *aggrefs = dp_guard_node_aggrefs(plan);
			DpUnitLevel level = dp_guard_unit_level(w, aggrefs);

			if (level == DP_UNIT_RELEASE && DO_AGGSPLIT_SKIPFINAL(agg->aggsplit))
				ui->partial = list_concat(ui->partial, aggrefs);
			else if (level == DP_UNIT_BOUND && !DO_AGGSPLIT_SKIPFINAL(agg->aggsplit) &&
					 agg->groupingSets == NIL &&
					 list_length(aggrefs) > 0 &&
					 !other_aggregates((Node *) agg->plan.targetlist, (Node *) agg->plan.qual, false))
			{
				ui->bound_agg = agg;
				ui->bound = aggrefs;
				return;
			}

			/*
			 * the fused level 1 (unit_pick.c): grouped by the unit alone, so
			 * that each unit is one row, one group, one contribution; no
			 * level 2 above it.  PostgreSQL 16 and later drop the grouping
			 * column when the WHERE makes the unit a constant (u = 0): one
			 * unit, one row.  Even over several units the pick aggregates
			 * keep the rows of one smallest priority, one unit's group.
			 */
			else if (level == DP_UNIT_PICK && !DO_AGGSPLIT_SKIPFINAL(agg->aggsplit) &&
					 agg->groupingSets == NIL && agg->numCols <= 1 && ui->groups == 0 &&
					 list_length(aggrefs) > 0 &&
					 !other_aggregates((Node *) agg->plan.targetlist, (Node *) agg->plan.qual, true))
			{
				ui->picked = true;
				ui->bound_agg = agg;
				ui->bound = aggrefs;
				return;
			}
			else
			{
				plan_reject_msg(w, "aggregation in the FROM of a DP aggregate is not allowed", DETAIL_DATA);
				return;
			}
		}
		else if (pass_through_child(plan) == NULL)
			break;
		plan = IsA(plan, Agg) ? plan->lefttree : pass_through_child(plan);
	}
	plan_reject_msg(w, "a DP aggregate must read a table",
					"The releases of a privacy unit read the bounded contributions of units.");
}

/*
 * The relations a DP aggregate reads must be bounded as their privacy
 * units require (unit_catalog.c): the releases of a rewrite read rows of
 * one unit, and other DP aggregates rows without any.  The rewrite at
 * planning (privacy_unit.c) makes it so; this is the plan's check, for a
 * relation whose unit is declared on an ancestor as much as on itself.
 */
void
dp_guard_scan_units(PlanWalk *w, InputWalk *in, bool units)
{
	const char *column = NULL;
	ListCell   *lc;

	if (!w->validate)
		return;
	dp_guard_check_lookups(w, in);
	if (!dp_any_privacy_unit())
		return;
	foreach(lc, in->scans)
	{
		Oid			relid = rt_fetch(((Scan *) lfirst(lc))->scanrelid, w->stmt->rtable)->relid;
		DpUnit		unit;
		bool		has_unit = dp_unit_of_read(relid, true, &unit);

		if (!has_unit && units)
			reject_msg("a DP aggregate over privacy units must read a relation with a privacy unit",
					   "The bounded contributions of units were computed from rows without a unit.");
		if (has_unit && !units)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("DP aggregates over relation \"%s\" do not bound its privacy unit",
							get_rel_name(relid)),
					 errdetail("Its privacy unit is column \"%s\" of \"%s\": a release over its rows must bound each unit's contribution.",
							   unit.column, get_rel_name(unit.declared_on)),
					 errhint("Plan the statement again, or read the relation directly in the DP statement; see \"Privacy units\" in dp_agg's doc/units-and-groups.md.")));
		if (has_unit && column != NULL && strcmp(column, unit.column) != 0)
			reject_msg("a DP aggregate over privacy units must read rows of one unit",
					   "The relations it reads have different privacy units.");
		if (has_unit)
			column = unit.column;
	}
}

/* does the expression hold a node made by the rewrite of privacy units? */
static bool
rewrite_mark_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if ((IsA(node, Aggref) && ((Aggref *) node)->location == DP_UNIT_LOCATION) ||
		(IsA(node, WindowFunc) && ((WindowFunc *) node)->location == DP_UNIT_LOCATION) ||
		(IsA(node, FuncExpr) && ((FuncExpr *) node)->location == DP_UNIT_LOCATION))
		return true;
	return expression_tree_walker(node, rewrite_mark_walker, context);
}

/* is the plan, or a node below it, part of a rewrite of privacy units? */
bool
dp_guard_below_unit_rewrite(Plan *plan)
{
	ListCell   *lc;

	if (plan == NULL)
		return false;
	if (rewrite_mark_walker((Node *) plan->targetlist, NULL) ||
		rewrite_mark_walker((Node *) plan->qual, NULL))
		return true;
	foreach(lc, dp_plan_children(plan))
	{
		if (dp_guard_below_unit_rewrite(lfirst(lc)))
			return true;
	}
	return false;
}

/* occurrences of dp_agg.unit_sampled in an expression */
static bool
count_sampled_walker(Node *node, int *n)
{
	if (node == NULL)
		return false;
	if (IsA(node, FuncExpr) && ((FuncExpr *) node)->funcid == dp_unit_sampled_oid())
		(*n)++;
	return expression_tree_walker(node, count_sampled_walker, n);
}

static int
count_sampled(Node *node)
{
	int			n = 0;

	(void) count_sampled_walker(node, &n);
	return n;
}

/*
 * occurrences of dp_agg.unit_sampled, and of scans by TABLESAMPLE
 * dp_agg_internal.unit_scan, in a plan tree
 */
int
dp_guard_count_sampled(Plan *plan)
{
	int			n;
	ListCell   *lc;

	if (plan == NULL)
		return 0;
	n = count_sampled((Node *) dp_plan_expressions(plan));
	if (IsA(plan, SampleScan) && dp_is_unit_scan(((SampleScan *) plan)->tablesample))
		n++;
	foreach(lc, dp_plan_children(plan))
		n += dp_guard_count_sampled(lfirst(lc));
	return n;
}

/*
 * The filters of a sample of units (privacy_unit.c, unit_sample.c) in the
 * input of DP aggregates: over units (units), each scan of the relation
 * with the unit has one, a conjunct of its quals, of the unit column of
 * that scan's relation, all with the same percentage and method, and it
 * appears nowhere else in them; without units, none.  A scan by TABLESAMPLE
 * dp_agg_internal.unit_scan, which reads only the rows the filter keeps,
 * has the filter, and the filter's percentage and unit column.  Counted in
 * w->unit_filters: dp_guard_plan refuses any other occurrence in the plan.
 * Checked in parallel workers too (without the rewrite's mark, and
 * without the catalog checks of the leader).
 */
void
dp_guard_unit_sample(PlanWalk *w, InputWalk *in, const DpSampling *sampling, bool units)
{
	ListCell   *lc;

	if (!OidIsValid(dp_unit_sampled_oid()))
		return;
	foreach(lc, in->scans)
	{
		Scan	   *scan = lfirst(lc);
		FuncExpr   *f = dp_unit_sample_filter(&scan->plan);
		TableSampleClause *tsc = NULL;
		Var		   *v;

		if (IsA(scan, SampleScan) && dp_is_unit_scan(((SampleScan *) scan)->tablesample))
			tsc = ((SampleScan *) scan)->tablesample;
		if (tsc != NULL && f == NULL)
			reject_sample_filter();

		if (count_sampled((Node *) dp_plan_expressions(&scan->plan)) != (f != NULL ? 1 : 0))
			reject_sample_filter();
		if (f == NULL)
		{
			if (sampling->units && w->validate)
				reject_sample_filter();
			continue;
		}
		if (!units || list_length(f->args) != 3 ||
			!equal(list_copy_tail(f->args, 1), list_copy_tail(sampling->unit_filter->args, 1)))
			reject_sample_filter();
		v = (Var *) linitial(f->args);
		if (!IsA(v, Var) || v->varno != (int) scan->scanrelid || v->varlevelsup != 0)
			reject_sample_filter();
		if (w->validate)
		{
			Oid			relid = rt_fetch(scan->scanrelid, w->stmt->rtable)->relid;
			DpUnit		unit;

			if (f->location != DP_UNIT_LOCATION || !dp_unit_of_read(relid, true, &unit) ||
				v->varattno != unit.attnum)
				reject_sample_filter();
		}
		w->unit_filters++;
		if (tsc != NULL)
		{
			Const	   *attnum = list_length(tsc->args) == 2 ? lsecond(tsc->args) : NULL;

			if (attnum == NULL || !IsA(attnum, Const) || attnum->consttype != INT2OID ||
				attnum->constisnull || DatumGetInt16(attnum->constvalue) != v->varattno ||
				!equal(linitial(tsc->args), lsecond(f->args)) || tsc->repeatable != NULL ||
				(w->validate && attnum->location != DP_UNIT_LOCATION))
				reject_sample_filter();
			w->unit_filters++;
		}
	}
	foreach(lc, in->lookups)
	{
		if (count_sampled((Node *) dp_plan_expressions(lfirst(lc))) != 0)
			reject_sample_filter();
	}
}
