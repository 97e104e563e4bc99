/*-------------------------------------------------------------------------
 *
 * selection.c
 *	  Private selection of GROUP BY keys: the rewrite that puts it in a DP
 *	  statement.
 *
 * A GROUP BY releases its keys: a group appears only if some row has its
 * key, so GROUP BY the primary key would release every row.  A DP
 * statement with GROUP BY therefore releases a group only if a private
 * selection of it says so (selection_mechanism.c: the optimal mechanism of
 * Desfontaines, Voss, Gipson & Mandayam 2022, Theorem 1).
 *
 * The rewrite, before planning: every query level that computes DP
 * aggregates and has a GROUP BY gets the condition
 *
 *	 HAVING dp_agg_internal.dp_select(NULL::internal, k) AND (the HAVING written)
 *
 * dp_select is a DP aggregate: it counts the input rows of its group (each
 * one unit at this level) and its final function draws the decision, once
 * per group, independently.  The planner and executor treat it as any
 * other aggregate of the node, so hashed, sorted and parallel aggregation
 * work unchanged; the guard finds, prices and charges it with the other DP
 * calls (plan_guard.c, release.c), and a group it suppresses releases nothing.
 * Its first argument has type internal, which no SQL expression has: an
 * analyst cannot call it (it would be an oracle that nothing priced), and
 * the guard accepts it only as a condition of its aggregation node.  It
 * comes first in HAVING, and the planner orders quals by cost (an Aggref
 * costs nothing), so other conditions are evaluated only on groups the
 * selection released.
 *
 * k (max_groups_contributed) is the number of groups one unit can be in:
 * 1 when rows are the units (a row is in one group).  A rewrite into
 * per-unit aggregation calls dp_selection_rewrite on its outer query with
 * its own k, where each input row of a group is one unit.
 *
 * Fused selection.  Counting a group's rows in an aggregate of its own
 * costs a transition per row beside the statement's DP aggregates, which
 * already count them: dp_count(*) exactly, and every other dp_count,
 * dp_sum, dp_avg, dp_var and dp_stddev with bounds as its rows counted plus
 * its rows skipped (NULL, NaN: aggregates.c keeps both).  So after
 * planning (dp_selection_fuse), a selection at a level where rows are the
 * units (k = 1) whose aggregation node also finalizes such a call (its
 * host: no FILTER, DISTINCT or ORDER BY, of this level, and before the
 * selection in the node's order, dp_selection_host) gets FILTER (WHERE
 * false): it no longer counts, and its final function reads the rows of
 * the group from the host's final function, which the executor runs just
 * before it for the same group (the node's aggregates are finalized in
 * their order, all of them for each group, before HAVING).  The count is
 * the same exact count (combined over parallel workers like the host's
 * state); a selection that would read the rows of another group, or none,
 * fails (aggregates.c, DpSelectionFeed).  A node without a host keeps the
 * selection that counts its rows.
 *
 * On a Citus table the coordinator sees one row per group and worker, not
 * the group's rows: dp_selection_call gives the call for the inner
 * statement of the rewrite (dist_plan.c), whose workers count each group's
 * rows exactly, and the coordinator decides each group once, from the
 * combined count, before any of its values is released (dist_exec.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_aggregate.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/pg_list.h"

#include "catalog.h"
#include "dp_calls.h"
#include "guc.h"
#include "public_domain.h"
#include "selection.h"

/*
 * a DP aggregate of this query level (dp_select included) that releases
 * its groups: not the bounding of a privacy unit rewrite (level 1,
 * privacy_unit.c), whose groups (unit, group) feed level 3 and are never
 * released; level 3 is selected
 */
static bool
level_has_dp(Query *q)
{
	ListCell   *lc;

	foreach(lc, dp_level_calls(q))
	{
		const DpCallInfo *info = dp_lookup_call(((Aggref *) lfirst(lc))->aggfnoid);

		if (info->unit != DP_UNIT_BOUND && info->unit != DP_UNIT_PICK)
			return true;
	}
	return false;
}

/* dp_select already in HAVING (the rewrite is idempotent) */
static bool
select_walker(Node *node, Oid *select_oid)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
		return ((Aggref *) node)->aggfnoid == *select_oid;
	if (IsA(node, Query))
		return false;			/* another level */
	return expression_tree_walker(node, select_walker, select_oid);
}

/* dp_agg_internal.dp_select(NULL::internal, k) */
static Aggref *
make_select(Oid select_oid, int max_groups_contributed)
{
	Aggref	   *a = makeNode(Aggref);
	Const	   *marker = makeConst(INTERNALOID, -1, InvalidOid, SIZEOF_DATUM,
								   (Datum) 0, true, true);
	Const	   *k = makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
							  Int32GetDatum(max_groups_contributed), false, true);

	a->aggfnoid = select_oid;
	a->aggtype = BOOLOID;
	a->aggcollid = InvalidOid;
	a->inputcollid = InvalidOid;
	a->aggargtypes = list_make2_oid(INTERNALOID, INT4OID);
	a->args = list_make2(makeTargetEntry((Expr *) marker, 1, NULL, false),
						 makeTargetEntry((Expr *) k, 2, NULL, false));
	a->aggkind = AGGKIND_NORMAL;
	a->agglevelsup = 0;
	a->aggsplit = AGGSPLIT_SIMPLE;
	a->aggno = -1;
	a->aggtransno = -1;
	a->location = -1;
	return a;
}

/* dp_agg_internal.dp_select, ERROR if the installed SQL objects have none */
static Oid
select_aggregate(void)
{
	Oid			select_oid = dp_select_aggregate();

	if (!OidIsValid(select_oid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("private selection of GROUP BY keys needs dp_agg version 0.3"),
				 errdetail("The installed SQL objects of dp_agg are older than its library."),
				 errhint("Run ALTER EXTENSION dp_agg UPDATE.")));
	return select_oid;
}

static void
rewrite_level(Query *q, int max_groups_contributed)
{
	ListCell   *lc;
	Oid			select_oid;

	foreach(lc, q->cteList)
		rewrite_level(castNode(Query, ((CommonTableExpr *) lfirst(lc))->ctequery),
					  max_groups_contributed);
	foreach(lc, q->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		if (rte->rtekind == RTE_SUBQUERY)
			rewrite_level(rte->subquery, max_groups_contributed);
	}
	if (q->groupClause == NIL || !level_has_dp(q))
		return;
	/* the groups of a public domain are released without selection */
	if (dp_domain_level_public(q))
		return;

	select_oid = select_aggregate();
	if (select_walker(q->havingQual, &select_oid))
		return;
	if (q->havingQual == NULL)
		q->havingQual = (Node *) make_select(select_oid, max_groups_contributed);
	else
		q->havingQual = (Node *) makeBoolExpr(AND_EXPR,
											  list_make2(make_select(select_oid, max_groups_contributed),
														 q->havingQual),
											  -1);
}

/*
 * Put the private selection of groups in every query level of a DP
 * statement that has GROUP BY (the file's comment), unless
 * dp_agg.group_keys is 'public'.  Called by the planner hook after the
 * guards, with max_groups_contributed = 1 when rows are the units.
 */
void
dp_selection_rewrite(Query *query, int max_groups_contributed)
{
	if (query->commandType == CMD_UTILITY || dp_guc_group_keys == DP_GROUP_KEYS_PUBLIC)
		return;
	if (max_groups_contributed < 1)
		elog(ERROR, "dp_agg: private selection with max_groups_contributed %d",
			 max_groups_contributed);
	rewrite_level(query, max_groups_contributed);
}

/*
 * The private selection of the groups of a DP statement on a Citus table
 * (dist_plan.c): the call dp_agg_internal.dp_select(NULL::internal, k) for its inner
 * statement, which the workers compute as an exact count of each group's
 * rows and the coordinator decides once per group (dist_exec.c); NULL when
 * dp_agg.group_keys is 'public'.
 */
Aggref *
dp_selection_call(int max_groups_contributed)
{
	if (dp_guc_group_keys == DP_GROUP_KEYS_PUBLIC)
		return NULL;
	if (max_groups_contributed < 1)
		elog(ERROR, "dp_agg: private selection with max_groups_contributed %d",
			 max_groups_contributed);
	return make_select(select_aggregate(), max_groups_contributed);
}

/* ---------- fused selection (the file's comment) ---------- */

/* does the plan's private selection count no row itself (FILTER (WHERE false))? */
bool
dp_selection_fused(const Aggref *select)
{
	Const	   *c = (Const *) select->aggfilter;

	return c != NULL && IsA(c, Const) && c->consttype == BOOLOID && !c->constisnull &&
		!DatumGetBool(c->constvalue);
}

/*
 * The host of a selection among the DP aggregate calls of its aggregation
 * node: the first, in the node's order (aggno), before the selection, of
 * dp_count, or of dp_sum, dp_avg, dp_var, dp_stddev with bounds, of rows
 * as units, without FILTER, DISTINCT or ORDER BY.  Its state counts every
 * input row of the group (counted or skipped).  NULL if there is none.
 */
Aggref *
dp_selection_host(List *aggrefs, const Aggref *select)
{
	Aggref	   *host = NULL;
	ListCell   *lc;

	foreach(lc, aggrefs)
	{
		Aggref	   *a = lfirst(lc);
		const DpCallInfo *info = dp_lookup_call(a->aggfnoid);

		if (info == NULL || info->unit != DP_UNIT_NONE)
			continue;
		switch (info->kind)
		{
			case DP_COUNT_STAR:
			case DP_COUNT:
				break;
			case DP_SUM:
			case DP_AVG:
			case DP_VAR:
			case DP_STDDEV:
				if (info->lower_arg < 0)
					continue;	/* bounds estimated: rows by bin */
				break;
			default:
				continue;
		}
		if (a->aggfilter != NULL || a->aggdistinct != NIL || a->aggorder != NIL ||
			a->agglevelsup != 0 || a->aggno < 0 || a->aggno >= select->aggno)
			continue;
		if (host == NULL || a->aggno < host->aggno)
			host = a;
	}
	return host;
}

static bool
collect_aggrefs_walker(Node *node, List **aggrefs)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		*aggrefs = lappend(*aggrefs, node);
		return false;			/* no aggregate in an aggregate's arguments */
	}
	return expression_tree_walker(node, collect_aggrefs_walker, aggrefs);
}

/* the aggregate calls an aggregation node evaluates */
static List *
agg_aggrefs(Agg *agg)
{
	List	   *aggrefs = NIL;

	(void) collect_aggrefs_walker((Node *) agg->plan.targetlist, &aggrefs);
	(void) collect_aggrefs_walker((Node *) agg->plan.qual, &aggrefs);
	return aggrefs;
}

/* the call of aggno among aggrefs, or NULL */
static Aggref *
aggref_of(List *aggrefs, int aggno)
{
	ListCell   *lc;

	foreach(lc, aggrefs)
	{
		Aggref	   *a = lfirst(lc);

		if (a->aggno == aggno)
			return a;
	}
	return NULL;
}

/*
 * The partial aggregation node whose states a combining node finalizes:
 * below Gather, Gather Merge and sorts only; NULL for any other shape
 * (then nothing is fused).
 */
static Agg *
partial_agg_below(Plan *plan)
{
	while (plan != NULL)
	{
		switch (nodeTag(plan))
		{
			case T_Gather:
			case T_GatherMerge:
			case T_Sort:
			case T_IncrementalSort:
				plan = plan->lefttree;
				break;
			case T_Agg:
				return DO_AGGSPLIT_SKIPFINAL(((Agg *) plan)->aggsplit) ? (Agg *) plan : NULL;
			default:
				return NULL;
		}
	}
	return NULL;
}

/*
 * k of a selection that reads rows (its second argument), -1 if not a
 * constant: 1 when each input row is one unit, as fusion needs
 */
static int
select_k(const Aggref *select)
{
	Const	   *k;

	if (list_length(select->args) != 2)
		return -1;
	k = (Const *) ((TargetEntry *) lsecond(select->args))->expr;
	if (!IsA(k, Const) || k->consttype != INT4OID || k->constisnull)
		return -1;
	return DatumGetInt32(k->constvalue);
}

static Const *
false_filter(void)
{
	return makeConst(BOOLOID, -1, InvalidOid, 1, BoolGetDatum(false), false, true);
}

/* fuse the selection of one finalizing aggregation node with its host */
static void
fuse_agg(Agg *agg, Oid select_oid)
{
	List	   *aggrefs;
	ListCell   *lc;

	if (DO_AGGSPLIT_SKIPFINAL(agg->aggsplit))
		return;
	aggrefs = agg_aggrefs(agg);
	foreach(lc, agg->plan.qual)
	{
		Aggref	   *select = lfirst(lc);
		Aggref	   *host;

		if (!IsA(select, Aggref) || select->aggfnoid != select_oid || select->aggfilter != NULL)
			continue;
		host = dp_selection_host(aggrefs, select);
		if (host == NULL)
			continue;
		if (DO_AGGSPLIT_COMBINE(agg->aggsplit))
		{
			/* the rows are read by the partial node: its calls of the same numbers */
			Agg		   *partial = partial_agg_below(agg->plan.lefttree);
			List	   *partial_aggrefs;
			Aggref	   *partial_select;
			Aggref	   *partial_host;

			if (partial == NULL)
				continue;
			partial_aggrefs = agg_aggrefs(partial);
			partial_select = aggref_of(partial_aggrefs, select->aggno);
			partial_host = aggref_of(partial_aggrefs, host->aggno);
			if (partial_select == NULL || partial_host == NULL ||
				partial_select->aggfnoid != select_oid || partial_select->aggfilter != NULL ||
				select_k(partial_select) != 1 ||
				partial_host->aggfnoid != host->aggfnoid || partial_host->aggfilter != NULL)
				continue;
			partial_select->aggfilter = (Expr *) false_filter();
		}
		else if (select_k(select) != 1)
			continue;
		select->aggfilter = (Expr *) false_filter();
	}
}

static void
fuse_plan(Plan *plan, Oid select_oid)
{
	ListCell   *lc;

	if (plan == NULL)
		return;
	check_stack_depth();
	if (IsA(plan, Agg))
		fuse_agg((Agg *) plan, select_oid);
	fuse_plan(plan->lefttree, select_oid);
	fuse_plan(plan->righttree, select_oid);
	switch (nodeTag(plan))
	{
		case T_Append:
			foreach(lc, ((Append *) plan)->appendplans)
				fuse_plan(lfirst(lc), select_oid);
			break;
		case T_MergeAppend:
			foreach(lc, ((MergeAppend *) plan)->mergeplans)
				fuse_plan(lfirst(lc), select_oid);
			break;
		case T_SubqueryScan:
			fuse_plan(((SubqueryScan *) plan)->subplan, select_oid);
			break;
		default:
			break;
	}
}

/*
 * Fuse the private selections of a plan with their hosts (the file's
 * comment).  Called by the planner hook on the finished plan; the
 * tickets link each fused selection to its host (price.c).
 */
void
dp_selection_fuse(PlannedStmt *stmt)
{
	Oid			select_oid = dp_select_aggregate();
	ListCell   *lc;

	if (!OidIsValid(select_oid))
		return;
	fuse_plan(stmt->planTree, select_oid);
	foreach(lc, stmt->subplans)
		fuse_plan(lfirst(lc), select_oid);
}
