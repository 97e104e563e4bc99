/*-------------------------------------------------------------------------
 *
 * dist_inner.c
 *	  DP statements on Citus tables: the inner statement of a dist_run scan.
 *
 * dist_plan.c puts the statement the workers are to run, the inner
 * statement, in the plan of a DP statement on a Citus table as the
 * argument of a dist_run scan (with the k of a privacy unit or the key set
 * of a public domain).  This file finds those scans in a plan and reads the
 * inner statement back, refusing any that is not of the shape the rewrite
 * makes: one Citus table, group keys and DP calls only, the unit column
 * first with a privacy unit.  The price (dist_price.c), the checks of who
 * may run it (dist_access.c) and the run (dist_exec.c) all read it here.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "optimizer/clauses.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "catalog.h"
#include "dist_catalog.h"
#include "dist_inner.h"
#include "dist_plan.h"
#include "guard.h"
#include "guc.h"
#include "plan_nodes.h"
#include "protect.h"
#include "unit_catalog.h"

/* the dist_run call a plan node scans, or NULL */
FuncExpr *
dp_dist_run_of_scan(Plan *plan)
{
	RangeTblFunction *rtf;

	if (!IsA(plan, FunctionScan) || list_length(((FunctionScan *) plan)->functions) != 1)
		return NULL;
	rtf = linitial_node(RangeTblFunction, ((FunctionScan *) plan)->functions);
	if (!IsA(rtf->funcexpr, FuncExpr) ||
		!dp_is_dist_function(((FuncExpr *) rtf->funcexpr)->funcid, "dist_run"))
		return NULL;
	return (FuncExpr *) rtf->funcexpr;
}

void
dp_dist_collect_runs(Plan *plan, List **runs)
{
	FuncExpr   *run;
	ListCell   *lc;

	if (plan == NULL)
		return;
	run = dp_dist_run_of_scan(plan);
	if (run != NULL)
		*runs = lappend(*runs, run);
	foreach(lc, dp_plan_children(plan))
		dp_dist_collect_runs(lfirst(lc), runs);
}

void
dp_dist_bad_inner(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("dp_agg_internal.dist_run runs only the statements dp_agg's planner makes")));
}

static bool
is_group_key(Query *q, Index ref)
{
	ListCell   *lc;

	foreach(lc, q->groupClause)
		if (lfirst_node(SortGroupClause, lc)->tleSortGroupRef == ref)
			return true;
	return false;
}

/*
 * The inner statement of a dist_run scan, of the shape the rewrite makes,
 * and its privacy unit's k (the second argument), 0 without a unit.
 */
Query *
dp_dist_inner_query(FuncExpr *run, int *unit_groups)
{
	Const	   *arg = linitial(run->args);
	Query	   *inner;
	RangeTblEntry *rte;

	*unit_groups = 0;
	if (list_length(run->args) < 1 || list_length(run->args) > 2 || !IsA(arg, Const) ||
		arg->constisnull)
		dp_dist_bad_inner();
	if (list_length(run->args) == 2)
	{
		/*
		 * the k of a privacy unit, or the key set of a public domain
		 * (dist_plan.c): a constant
		 */
		Const	   *second = lsecond(run->args);

		if (!IsA(second, Const) || second->constisnull)
			dp_dist_bad_inner();
		if (second->consttype == INT4OID)
		{
			*unit_groups = DatumGetInt32(second->constvalue);
			if (*unit_groups < 1 || *unit_groups > DP_MAX_UNIT_BOUND)
				dp_dist_bad_inner();
		}
		else if (second->consttype != BYTEAOID)
			dp_dist_bad_inner();
	}
	inner = (Query *) stringToNode(TextDatumGetCString(arg->constvalue));
	if (!IsA(inner, Query) || inner->commandType != CMD_SELECT || inner->havingQual != NULL ||
		list_length(inner->rtable) != 1 || !inner->hasAggs)
		dp_dist_bad_inner();
	rte = linitial_node(RangeTblEntry, inner->rtable);
	if (rte->rtekind != RTE_RELATION || !dp_is_citus_table(rte->relid))
		dp_dist_bad_inner();
	return inner;
}

/*
 * The inner statement of a dist_run scan, checked; with a privacy unit,
 * its first column is the unit column of the table's unit now (the plan
 * was made again if it changed: privacy_unit.c's catalog resets the plan
 * cache), and k is not above the relation's for a role untrusted for it
 * (privacy_unit.c refuses the same at planning).
 */
Query *
dp_dist_inner_of(FuncExpr *run, int *unit_groups)
{
	Query	   *inner = dp_dist_inner_query(run, unit_groups);
	RangeTblEntry *rte = linitial_node(RangeTblEntry, inner->rtable);
	DpUnit		unit;
	bool		has_unit = dp_unit_of_read(rte->relid, !rte->inh, &unit);
	ListCell   *lc;

	if (has_unit != (*unit_groups > 0))
		dp_dist_bad_inner();
	if (has_unit)
	{
		TargetEntry *first = linitial_node(TargetEntry, inner->targetList);

		if (first->resname == NULL || strcmp(first->resname, DP_DIST_UNIT_COLUMN) != 0 ||
			!IsA(first->expr, Var) || ((Var *) first->expr)->varattno != unit.attnum)
			dp_dist_bad_inner();
		if (*unit_groups > unit.max_groups && dp_relation_protected(rte->relid) &&
			!dp_role_trusted(rte->relid, GetUserId()))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("dp_agg.max_groups_contributed %d exceeds the %d of relation \"%s\"",
							*unit_groups, unit.max_groups, get_rel_name(rte->relid)),
					 errdetail("Roles untrusted for a protected relation may lower the bounds of its privacy unit, not raise them."),
					 errhint("SET dp_agg.max_groups_contributed to at most %d, or to 0.",
							 unit.max_groups)));
	}
	dp_guard_query(inner);
	foreach(lc, inner->targetList)
	{
		TargetEntry *tle = lfirst(lc);

		if (IsA(tle->expr, Aggref) && dp_lookup_call(((Aggref *) tle->expr)->aggfnoid) != NULL)
			continue;
		/* a group key, with no aggregate in it */
		if (tle->ressortgroupref == 0 || contain_agg_clause((Node *) tle->expr) ||
			!is_group_key(inner, tle->ressortgroupref))
			dp_dist_bad_inner();
	}
	return inner;
}
