/*-------------------------------------------------------------------------
 *
 * guard.c
 *	  Which statements may compute DP aggregates.
 *
 * A DP release is only as private as its sensitivity analysis and only as
 * cheap as its price: each row must feed each DP aggregate at most once,
 * each DP aggregate must be evaluated at most as often as it was charged,
 * and nothing that sets the noise or the price may depend on the data.
 *
 * Two checks enforce this.  dp_guard_query runs at planning time on the
 * rewritten query (views expanded) and rejects the constructs users write,
 * naming them.  dp_guard_plan runs on the plan before execution and is the
 * authority: it sees what will really run, including SQL functions inlined
 * by the planner, and it finds the DP aggregate calls to price.
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
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "compat.h"
#include "dp_calls.h"
#include "guard.h"
#include "guc.h"
#include "inheritance.h"
#include "params.h"
#include "sampling.h"
#include "unit_catalog.h"

/* Does the query, at any level, call a DP aggregate? */
bool
dp_query_has_dp(Query *query)
{
	if (!dp_extension_present())
		return false;
	return dp_tree_has_calls(query, true);
}

/* ---------- the query-level check ---------- */

/*
 * ERROR with a complete message.  Macros, so that every message is one
 * literal format string where it is raised (translatable, and checked by
 * test/check-messages.py); reject_fmt takes a format and its arguments.
 */
#define GUARD_HINT "See \"What the guard accepts\" in dp_agg's doc/guard.md."
#define reject_msg(message, detail) \
	ereport(ERROR, \
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED), \
			 errmsg(message), \
			 errdetail(detail), \
			 errhint(GUARD_HINT)))
#define reject_fmt(detail, ...) \
	ereport(ERROR, \
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED), \
			 errmsg(__VA_ARGS__), \
			 errdetail(detail), \
			 errhint(GUARD_HINT)))

/* ERROR naming a construct ("joins are") */
#define reject(construct, detail) \
	reject_msg(construct " not allowed in a statement with DP aggregates", detail)

/* ERROR naming a row source where a DP aggregate reads or around a DP sub-query */
#define reject_source(dp_here, things, detail) \
	do { \
		if (dp_here) \
			reject_msg(things " in the FROM of a DP aggregate are not allowed", detail); \
		else \
			reject_msg(things " around a DP sub-query are not allowed", detail); \
	} while (0)

#define DETAIL_TWICE "A row could feed a DP aggregate more than once, or a DP aggregate be evaluated more often than it was charged."
#define DETAIL_DATA "The result of a DP aggregate would depend on other rows than its own, so its noise would not hide a row."

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

/* the internal functions of privacy units, made only by their rewrite */
static void
reject_internal(void)
{
	reject_msg("internal functions of dp_agg are not allowed in statements",
			   "dp_agg_internal.unit_bound_*, dp_agg_internal.unit_release_*, dp_agg_internal.unit_keep, dp_agg_internal.unit_pick*, dp_agg_internal.unit_priority and dp_agg_internal.unit_sampled are made by the rewrite of privacy units only, dp_agg_internal.dp_public by the rewrite of public domains, dp_agg_internal.dp_top_k and dp_agg_internal.top_k_rank by that of top-k.");
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

/* ---------- the plan-level check ---------- */

typedef struct PlanWalk
{
	PlannedStmt *stmt;
	bool		validate;
	List	   *calls;			/* DpPlanCall * */
	Bitmapset  *cte_plans;		/* plan_ids of CTE subplans */
	int			unit_groups;	/* k of the privacy unit being visited, or 0 */
	Oid			unit_relid;		/* its relation */
	int			unit_filters;	/* filters of samples of units in their place */
} PlanWalk;

typedef struct InputWalk
{
	List	   *scans;			/* Scan *: the relation the DP aggregates read */
	List	   *lookups;		/* Scan *: the lookup tables joined to it */
	bool		inheritance;	/* under an Append of one partitioned table */
	List	   *partial_aggrefs;	/* DP Aggrefs of partial Agg nodes */
	List	   *domains;		/* the public domain's rows (public_domain.c) */
} InputWalk;

#define plan_reject(w, construct, detail) \
	do { \
		if ((w)->validate) \
			reject(construct, detail); \
	} while (0)

#define plan_reject_msg(w, message, detail) \
	do { \
		if ((w)->validate) \
			reject_msg(message, detail); \
	} while (0)

#define plan_reject_fmt(w, detail, ...) \
	do { \
		if ((w)->validate) \
			reject_fmt(detail, __VA_ARGS__); \
	} while (0)

/* the DP Aggrefs of a plan node; ERROR for a DP window function */
static List *
plan_dp_aggrefs(Plan *plan)
{
	bool		window;
	List	   *calls = dp_plan_node_calls(plan, &window);

	if (window)
		reject_msg("DP aggregates cannot be used as window functions",
				   "A window function would release one noisy value per row.");
	return calls;
}

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

/* Does this plan node read rows of the relation its scanrelid names? */
bool
dp_plan_reads_relation(Plan *plan)
{
	switch (nodeTag(plan))
	{
		case T_SeqScan:
		case T_SampleScan:
		case T_IndexScan:
		case T_IndexOnlyScan:
		case T_BitmapHeapScan:
		case T_TidScan:
		case T_TidRangeScan:
			return true;
		default:
			return false;
	}
}

/* children of a plan node (not SubPlans in expressions), a new list */
List *
dp_plan_children(Plan *plan)
{
	List	   *children = NIL;

	if (plan->lefttree)
		children = lappend(children, plan->lefttree);
	if (plan->righttree)
		children = lappend(children, plan->righttree);
	switch (nodeTag(plan))
	{
		case T_Append:
			children = list_concat(children, ((Append *) plan)->appendplans);
			break;
		case T_MergeAppend:
			children = list_concat(children, ((MergeAppend *) plan)->mergeplans);
			break;
		case T_BitmapAnd:
			children = list_concat(children, ((BitmapAnd *) plan)->bitmapplans);
			break;
		case T_BitmapOr:
			children = list_concat(children, ((BitmapOr *) plan)->bitmapplans);
			break;
		case T_SubqueryScan:
			children = lappend(children, ((SubqueryScan *) plan)->subplan);
			break;
		case T_CustomScan:
			children = list_concat(children, ((CustomScan *) plan)->custom_plans);
			break;
		default:
			break;
	}
	return children;
}

/* The expressions of one plan node (not of its children), a new list. */
List *
dp_plan_expressions(Plan *plan)
{
	List	   *e = list_make2(plan->targetlist, plan->qual);

	switch (nodeTag(plan))
	{
		case T_Result:
			return lappend(e, ((Result *) plan)->resconstantqual);
		case T_ModifyTable:
			return list_concat(e, list_make3(((ModifyTable *) plan)->returningLists,
											 ((ModifyTable *) plan)->onConflictSet,
											 ((ModifyTable *) plan)->onConflictWhere));
		case T_IndexScan:
			return list_concat(e, list_make2(((IndexScan *) plan)->indexqual,
											 ((IndexScan *) plan)->indexorderby));
		case T_IndexOnlyScan:
			return list_concat(e, list_make2(((IndexOnlyScan *) plan)->indexqual,
											 ((IndexOnlyScan *) plan)->indexorderby));
		case T_BitmapIndexScan:
			return lappend(e, ((BitmapIndexScan *) plan)->indexqual);
		case T_BitmapHeapScan:
			return lappend(e, ((BitmapHeapScan *) plan)->bitmapqualorig);
		case T_TidScan:
			return lappend(e, ((TidScan *) plan)->tidquals);
		case T_TidRangeScan:
			return lappend(e, ((TidRangeScan *) plan)->tidrangequals);
		case T_SampleScan:
			return lappend(e, ((SampleScan *) plan)->tablesample);
		case T_FunctionScan:
			return lappend(e, ((FunctionScan *) plan)->functions);
		case T_TableFuncScan:
			return lappend(e, ((TableFuncScan *) plan)->tablefunc);
		case T_ValuesScan:
			return lappend(e, ((ValuesScan *) plan)->values_lists);
		case T_NestLoop:
			return lappend(e, ((Join *) plan)->joinqual);
		case T_MergeJoin:
			return list_concat(e, list_make2(((Join *) plan)->joinqual,
											 ((MergeJoin *) plan)->mergeclauses));
		case T_HashJoin:
			return list_concat(e, list_make3(((Join *) plan)->joinqual,
											 ((HashJoin *) plan)->hashclauses,
											 ((HashJoin *) plan)->hashkeys));
		case T_Hash:
			return lappend(e, ((Hash *) plan)->hashkeys);
		case T_Limit:
			return list_concat(e, list_make2(((Limit *) plan)->limitOffset,
											 ((Limit *) plan)->limitCount));
		case T_WindowAgg:
			return list_concat(e, list_make2(((WindowAgg *) plan)->startOffset,
											 ((WindowAgg *) plan)->endOffset));
		case T_Memoize:
			return lappend(e, ((Memoize *) plan)->param_exprs);
		case T_ForeignScan:
			return list_concat(e, list_make2(((ForeignScan *) plan)->fdw_exprs,
											 ((ForeignScan *) plan)->fdw_recheck_quals));
		case T_CustomScan:
			return lappend(e, ((CustomScan *) plan)->custom_exprs);
		default:
			return e;
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
static Plan *
domain_rows_scan(PlanWalk *w, Plan *plan)
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
		if (domain_rows_scan(w, lfirst(lc)) == NULL)
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
				in->partial_aggrefs = list_concat(in->partial_aggrefs, plan_dp_aggrefs(plan));
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

static void walk_plan(PlanWalk *w, Plan *plan, const char *unsafe);

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

/*
 * Walk the input of an aggregation node of DP aggregates: one table read
 * row by row (checked if validating); its sampling, and the partial DP
 * aggregates met on the way.
 */
static void
check_dp_input(PlanWalk *w, Plan *input, InputWalk *in, DpSampling *sampling)
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
 * The level of privacy units of a node's DP aggregates (all the same).  The
 * private selection of the node's groups (dp_select, of no level) may sit
 * beside releases of any level but 1: selection.c puts it in the query
 * whose groups are released, level 3 of a rewrite (privacy_unit.c), and
 * check_selection checks where it is.
 */
static DpUnitLevel
aggrefs_unit_level(PlanWalk *w, List *aggrefs)
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

/* the calls of a privacy unit rewrite, met below its level-3 node */
typedef struct UnitInput
{
	int			groups;			/* k, from level 2; 0 if there is none */
	bool		picked;			/* level 1 is the fused path of k = 1 */
	Agg		   *bound_agg;		/* level 1 */
	List	   *bound;			/* its Aggrefs */
	List	   *partial;		/* partial level-3 Aggrefs (parallel plans) */
} UnitInput;

/*
 * The input of the releases of a privacy unit rewrite (level 3): nodes
 * that pass rows on, at most one WindowAgg of dp_agg.unit_keep (level 2,
 * which sets k), partial level-3 aggregation (parallel plans), down to the
 * aggregation of the bounded contributions (level 1, finalizing the partial
 * level 1 of parallel workers), whose own input is checked as any DP
 * aggregate's.
 */
static void
walk_unit_input(PlanWalk *w, Plan *plan, UnitInput *ui)
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
				if (domain_rows_scan(w, lfirst(lc)) != NULL)
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
			List	   *aggrefs = plan_dp_aggrefs(plan);
			DpUnitLevel level = aggrefs_unit_level(w, aggrefs);

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
 * The lookup tables joined to the input of DP aggregates (lookup_join.c
 * checked them at planning; checked again here on what the plan reads):
 * their rows are public, so none may have a privacy unit, and none may be
 * of the inheritance tree of the relation the DP aggregates read (a join
 * of a table with itself).  Protected relations read as lookups are
 * refused by protect_check.c, which does not count lookups as the input
 * of DP aggregates.
 */
static void
check_lookups(PlanWalk *w, InputWalk *in)
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

/*
 * The relations a DP aggregate reads must be bounded as their privacy
 * units require (unit_catalog.c): the releases of a rewrite read rows of
 * one unit, and other DP aggregates rows without any.  The rewrite at
 * planning (privacy_unit.c) makes it so; this is the plan's check, for a
 * relation whose unit is declared on an ancestor as much as on itself.
 */
static void
check_scan_units(PlanWalk *w, InputWalk *in, bool units)
{
	const char *column = NULL;
	ListCell   *lc;

	if (!w->validate)
		return;
	check_lookups(w, in);
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
static bool
below_unit_rewrite(Plan *plan)
{
	ListCell   *lc;

	if (plan == NULL)
		return false;
	if (rewrite_mark_walker((Node *) plan->targetlist, NULL) ||
		rewrite_mark_walker((Node *) plan->qual, NULL))
		return true;
	foreach(lc, dp_plan_children(plan))
	{
		if (below_unit_rewrite(lfirst(lc)))
			return true;
	}
	return false;
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

/* occurrences of dp_agg.unit_sampled in a plan tree */
static int
plan_count_sampled(Plan *plan)
{
	int			n;
	ListCell   *lc;

	if (plan == NULL)
		return 0;
	n = count_sampled((Node *) dp_plan_expressions(plan));
	foreach(lc, dp_plan_children(plan))
		n += plan_count_sampled(lfirst(lc));
	return n;
}

static void
reject_sample_filter(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("dp_agg_internal.unit_sampled is allowed only as the filter of the sample of a privacy unit rewrite"),
			 errdetail("It decides which privacy units the sample of one statement keeps: anywhere else it would show them."),
			 errhint("Write TABLESAMPLE dp_agg.secure_bernoulli (p) on the relation with the privacy unit.")));
}

/*
 * The filters of a sample of units (privacy_unit.c, unit_sample.c) in the
 * input of DP aggregates: over units (units), each scan of the relation
 * with the unit has one, a conjunct of its quals, of the unit column of
 * that scan's relation, all with the same percentage and method, and it
 * appears nowhere else in them; without units, none.  Counted in
 * w->unit_filters: dp_guard_plan refuses any other occurrence in the plan.
 * Checked in parallel workers too (without the rewrite's mark, and
 * without the catalog checks of the leader).
 */
static void
check_unit_sample(PlanWalk *w, InputWalk *in, const DpSampling *sampling, bool units)
{
	ListCell   *lc;

	if (!OidIsValid(dp_unit_sampled_oid()))
		return;
	foreach(lc, in->scans)
	{
		Scan	   *scan = lfirst(lc);
		FuncExpr   *f = dp_unit_sample_filter(&scan->plan);
		Var		   *v;

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
	}
	foreach(lc, in->lookups)
	{
		if (count_sampled((Node *) dp_plan_expressions(lfirst(lc))) != 0)
			reject_sample_filter();
	}
}

/* a DP Agg node: check where it is and what it reads, and record its calls */
static void
visit_dp_agg(PlanWalk *w, Agg *agg, List *aggrefs, const char *unsafe)
{
	InputWalk	in = {NIL, NIL, false, NIL, NIL};
	DpSampling	sampling = dp_no_sampling;
	DpUnitLevel level = aggrefs_unit_level(w, aggrefs);

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
		below_unit_rewrite(agg->plan.lefttree))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a DP sub-query over a relation with a privacy unit must be used through its DP aggregates"),
				 errdetail("The outer query uses none of the sub-query's DP aggregates, so the planner removed them and kept only the private selection of its groups."),
				 errhint("Use a DP aggregate of the sub-query in the outer query: count(c) instead of count(*), where c is a DP aggregate's column.")));

	if (level == DP_UNIT_RELEASE && !DO_AGGSPLIT_SKIPFINAL(agg->aggsplit))
	{
		UnitInput	ui = {0, false, NULL, NIL, NIL};

		walk_unit_input(w, agg->plan.lefttree, &ui);
		if (ui.bound_agg == NULL)
			return;				/* rejected if validating */
		/* without level 2, each unit has one group: no GROUP BY */
		if (ui.groups == 0 && !ui.picked && agg->numCols != 0)
			plan_reject_msg(w, "a DP aggregate over privacy units must choose the groups of each unit",
							"Level 2 of the rewrite of privacy units is missing.");
		check_dp_input(w, ui.bound_agg->plan.lefttree, &in, &sampling);
		check_scan_units(w, &in, true);
		check_unit_sample(w, &in, &sampling, true);
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

	check_dp_input(w, agg->plan.lefttree, &in, &sampling);
	check_scan_units(w, &in, false);
	/* a parallel worker's part of levels 1 and 2 of a rewrite reads units */
	check_unit_sample(w, &in, &sampling, level != DP_UNIT_NONE);
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
		List	   *aggrefs = plan_dp_aggrefs(plan);

		if (aggrefs != NIL)
		{
			visit_dp_agg(w, (Agg *) plan, aggrefs, unsafe);
			return;
		}
	}
	else if (IsA(plan, WindowAgg))
		(void) plan_dp_aggrefs(plan);	/* rejects DP window functions */

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
		int			n = plan_count_sampled(stmt->planTree);

		foreach(lc, stmt->subplans)
			n += plan_count_sampled(lfirst(lc));
		if (n != w.unit_filters)
			reject_sample_filter();
	}
	return w.calls;
}
