/*-------------------------------------------------------------------------
 *
 * guard.c
 *	  Which statements may compute DP aggregates: the check of the query.
 *
 * A DP release is only as private as its sensitivity analysis and only as
 * cheap as its price: each row must feed each DP aggregate at most once,
 * each DP aggregate must be evaluated at most as often as it was charged,
 * and nothing that sets the noise or the price may depend on the data.
 *
 * Two checks enforce this.  dp_guard_query (here) runs at planning time on
 * the rewritten query (views expanded) and rejects the constructs users
 * write, naming them.  dp_guard_plan (plan_guard.c) runs on the plan
 * before execution and is the authority: it sees what will really run,
 * including SQL functions inlined by the planner, and it finds the DP
 * aggregate calls to price.  Both refuse with the messages of
 * guard_messages.h.
 *
 * The rules (doc/guard.md, "What the guard accepts"):
 *   - the FROM of a query level with DP aggregates is one table, optionally
 *     with TABLESAMPLE, or a sub-query or view that reads one table row by
 *     row (no aggregation, DISTINCT, window functions, LIMIT, set-returning
 *     functions or sub-queries in it), at each level possibly joined to
 *     lookup tables that lookup_join.c checked and marked (in the plan:
 *     joins whose one side reads marked relations only);
 *   - no other joins, LATERAL, set operations, recursive CTEs, grouping
 *     sets, sub-queries in expressions, or window functions at that level;
 *   - query levels above it only post-process its result: their FROM is
 *     that one sub-query, so it is evaluated once;
 *   - epsilon, delta and the bounds are constants or statement parameters.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"

#include "catalog.h"
#include "compat.h"
#include "dp_calls.h"
#include "guard.h"
#include "guard_messages.h"
#include "params.h"
#include "sampling.h"

/* Does the query, at any level, call a DP aggregate? */
bool
dp_query_has_dp(Query *query)
{
	if (!dp_extension_present())
		return false;
	return dp_tree_has_calls(query, true);
}

/* ---------- the query-level check ---------- */

static void check_level(Query *q);

/*
 * The FROM sub-query (or view, or CTE) of a query level with DP aggregates:
 * it must read one table, row by row.
 */
static void check_row_source(Query *q);

/* the leaves of a FROM clause that are not lookup tables, and its join kinds */
typedef struct FactSearch
{
	Query	   *q;
	RangeTblRef *fact;
	int			others;			/* leaves that are not lookups, beyond one */
	bool		bad_join;		/* a FULL JOIN, or another kind */
} FactSearch;

static void
fact_walk(Node *n, FactSearch *fs)
{
	ListCell   *lc;

	if (IsA(n, RangeTblRef))
	{
		if (DP_RTE_IS_LOOKUP(rt_fetch(((RangeTblRef *) n)->rtindex, fs->q->rtable)))
			return;
		if (fs->fact != NULL)
			fs->others++;
		else
			fs->fact = (RangeTblRef *) n;
	}
	else if (IsA(n, FromExpr))
	{
		foreach(lc, ((FromExpr *) n)->fromlist)
			fact_walk(lfirst(lc), fs);
	}
	else if (IsA(n, JoinExpr))
	{
		JoinExpr   *j = (JoinExpr *) n;

		if (j->jointype != JOIN_INNER && j->jointype != JOIN_LEFT && j->jointype != JOIN_RIGHT)
			fs->bad_join = true;
		fact_walk(j->larg, fs);
		fact_walk(j->rarg, fs);
	}
	else
		fs->bad_join = true;
}

/*
 * The FROM item of a query level that its DP aggregates read: its only
 * item, or the only one among the items of its joins that is not a lookup
 * table (marked by lookup_join.c, which checked each join).  NULL if there
 * is none, or more than one, or a join of another kind.
 */
RangeTblRef *
dp_guard_fact(Query *q)
{
	FactSearch	fs = {q, NULL, 0, false};

	fact_walk((Node *) q->jointree, &fs);
	if (fs.others > 0 || fs.bad_join)
		return NULL;
	return fs.fact;
}

static void
check_from_item(Query *q, bool dp_here)
{
	RangeTblRef *ref;
	RangeTblEntry *rte;

	if (list_length(q->jointree->fromlist) == 0)
	{
		if (dp_here)
			reject_msg("a DP aggregate must read a table",
					   "A DP aggregate reads exactly one table (or a view of one).");
		return;
	}
	if (list_length(q->jointree->fromlist) > 1 ||
		!IsA(linitial(q->jointree->fromlist), RangeTblRef))
	{
		/* joins to lookup tables, checked by lookup_join.c */
		ref = dp_guard_fact(q);
		if (!dp_here)
			reject_msg("joins with a DP sub-query are not allowed", DETAIL_TWICE);
		if (ref == NULL)
			reject("joins are", DETAIL_TWICE);
	}
	else
		ref = linitial_node(RangeTblRef, q->jointree->fromlist);
	rte = rt_fetch(ref->rtindex, q->rtable);
	if (rte->lateral)
		reject("LATERAL is", DETAIL_TWICE);

	switch (rte->rtekind)
	{
		case RTE_RELATION:
			if (rte->tablesample)
				dp_check_tablesample(rte->tablesample);
			break;
		case RTE_SUBQUERY:
			if (dp_here)
				check_row_source(rte->subquery);
			else
				check_level(rte->subquery);
			break;
		case RTE_CTE:
			{
				Query	   *cq = NULL;
				Index		levelsup = rte->ctelevelsup;
				ListCell   *lc;

				if (levelsup != 0)
					reject("CTEs of an outer query level are", DETAIL_TWICE);
				foreach(lc, q->cteList)
				{
					CommonTableExpr *cte = lfirst_node(CommonTableExpr, lc);

					if (strcmp(cte->ctename, rte->ctename) == 0)
					{
						if (cte->cterecursive)
							reject("recursive CTEs are", DETAIL_TWICE);
						cq = castNode(Query, cte->ctequery);
						break;
					}
				}
				if (cq == NULL)
					elog(ERROR, "dp_agg: CTE \"%s\" not found", rte->ctename);
				if (dp_here)
					check_row_source(cq);
				else
					check_level(cq);
				break;
			}
		case RTE_FUNCTION:
			reject_source(dp_here, "set-returning functions", DETAIL_TWICE);
			break;
		case RTE_VALUES:
			reject_source(dp_here, "VALUES lists", DETAIL_TWICE);
			break;
		case RTE_TABLEFUNC:
			reject_source(dp_here, "table functions", DETAIL_TWICE);
			break;
		case RTE_NAMEDTUPLESTORE:
			reject_source(dp_here, "transition tables", DETAIL_TWICE);
			break;
		case RTE_RESULT:
			if (dp_here)
				reject_msg("a DP aggregate must read a table",
						   "A DP aggregate reads exactly one table (or a view of one).");
			break;
		case RTE_JOIN:
			reject("joins are", DETAIL_TWICE);
			break;
#ifdef DP_HAVE_RTE_GROUP
		case RTE_GROUP:

			/*
			 * Parse analysis puts the GROUP RTE in the range table only, for
			 * the Vars of grouped expressions; it is never in a FROM list.
			 */
			elog(ERROR, "dp_agg: GROUP range table entry in a FROM list");
			break;
#endif
	}
}

/* rules common to every query level of a DP statement */
static void
check_common(Query *q)
{
	if (q->commandType != CMD_SELECT && q->commandType != CMD_INSERT)
		reject_msg("DP aggregates are not allowed in UPDATE, DELETE or MERGE", DETAIL_TWICE);
	if (q->hasRecursive)
		reject("recursive CTEs are", DETAIL_TWICE);
	if (q->setOperations)
		reject("UNION, INTERSECT and EXCEPT are", DETAIL_TWICE);
	if (q->hasSubLinks)
		reject("sub-queries in expressions are",
			   "A sub-query could be evaluated many times, or make a release depend on other rows.");
}

static void
check_row_source(Query *q)
{
	check_common(q);
	if (q->commandType != CMD_SELECT)
		reject("data-modifying sub-queries are", DETAIL_TWICE);
	if (dp_tree_has_calls(q, true))
		reject_msg("DP aggregates are not allowed over the results of DP aggregates", DETAIL_TWICE);
	if (q->hasAggs || q->groupClause || q->groupingSets || q->havingQual)
		reject_msg("aggregation in the FROM of a DP aggregate is not allowed", DETAIL_DATA);
	if (q->distinctClause)
		reject_msg("DISTINCT in the FROM of a DP aggregate is not allowed", DETAIL_DATA);
	if (q->hasWindowFuncs)
		reject_msg("window functions in the FROM of a DP aggregate are not allowed", DETAIL_DATA);
	if (q->limitCount || q->limitOffset)
		reject_msg("LIMIT and OFFSET in the FROM of a DP aggregate are not allowed", DETAIL_DATA);
	if (q->hasTargetSRFs)
		reject_msg("set-returning functions in the FROM of a DP aggregate are not allowed", DETAIL_TWICE);
	if (q->rowMarks)
		reject_msg("FOR UPDATE and FOR SHARE in the FROM of a DP aggregate are not allowed", DETAIL_TWICE);
	check_from_item(q, true);
}

/* a query level that contains DP aggregates at it or below it */
static void
check_level(Query *q)
{
	List	   *calls = dp_level_calls(q);
	ListCell   *lc;

	check_common(q);
	if (dp_level_has_window_calls(q))
		reject_msg("DP aggregates cannot be used as window functions",
			   "A window function would release one noisy value per row.");

	if (calls != NIL)
	{
		if (q->commandType != CMD_SELECT)
			reject_msg("DP aggregates are not allowed directly in INSERT", DETAIL_TWICE);
		if (q->groupingSets)
			reject("GROUPING SETS, ROLLUP and CUBE are",
				   "A row would feed one release per grouping set.");
		if (q->hasTargetSRFs)
			reject("set-returning functions in the target list are", DETAIL_TWICE);
		if (q->hasWindowFuncs)
			reject("window functions over DP aggregates are", DETAIL_TWICE);
		foreach(lc, calls)
		{
			Aggref	   *a = lfirst(lc);
			const DpCallInfo *info = dp_lookup_call(a->aggfnoid);
			int			argnos[] = {info->lower_arg, info->upper_arg,
				info->epsilon_arg, info->delta_arg, info->p_arg};

			for (size_t i = 0; i < lengthof(argnos); i++)
			{
				if (argnos[i] >= 0)
					dp_check_parameter_expr((Node *) list_nth_node(TargetEntry, a->args, argnos[i])->expr,
											info, argnos[i]);
			}
		}
		check_from_item(q, true);
	}
	else
		check_from_item(q, false);
}

static bool
internal_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		const DpCallInfo *info = dp_lookup_call(((Aggref *) node)->aggfnoid);

		if (info != NULL && (info->unit != DP_UNIT_NONE || info->kind == DP_PUBLIC ||
							 info->kind == DP_TOP_K))
			return true;
		if (((Aggref *) node)->aggfnoid == dp_unit_pick_oid())
			return true;
	}
	else if (IsA(node, FuncExpr))
	{
		if (((FuncExpr *) node)->funcid == dp_unit_priority_oid() ||
			((FuncExpr *) node)->funcid == dp_unit_sampled_oid())
			return true;
	}
	else if (IsA(node, WindowFunc))
	{
		if (((WindowFunc *) node)->winfnoid == dp_unit_keep_oid() ||
			((WindowFunc *) node)->winfnoid == dp_top_k_rank_oid())
			return true;
	}
	else if (IsA(node, Query))
		return query_tree_walker((Query *) node, internal_walker, context, 0);
	return expression_tree_walker(node, internal_walker, context);
}

/*
 * Reject, naming the construct, a statement that computes DP aggregates in
 * a way the rules above do not allow.
 */
void
dp_guard_query(Query *query)
{
	if (!dp_query_has_dp(query))
		return;
	if (query->commandType == CMD_UTILITY)
		return;					/* its inner query is planned separately */
	if (query_tree_walker(query, internal_walker, NULL, 0))
		reject_internal();
	check_level(query);
}
