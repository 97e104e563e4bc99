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
 *	 HAVING dp_agg.dp_select(NULL::internal, k) AND (the HAVING written)
 *
 * dp_select is a DP aggregate: it counts the input rows of its group (each
 * one unit at this level) and its final function draws the decision, once
 * per group, independently.  The planner and executor treat it as any
 * other aggregate of the node, so hashed, sorted and parallel aggregation
 * work unchanged; the guard finds, prices and charges it with the other DP
 * calls (guard.c, release.c), and a group it suppresses releases nothing.
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
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"

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

/* dp_agg.dp_select(NULL::internal, k) */
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

/* dp_agg.dp_select, ERROR if the installed SQL objects have none */
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
 * (dist_plan.c): the call dp_agg.dp_select(NULL::internal, k) for its inner
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
