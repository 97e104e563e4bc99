/*-------------------------------------------------------------------------
 *
 * dist_plan.c
 *	  DP statements on Citus tables: the coordinator's rewrite.
 *
 * Citus plans a query on a distributed table in one of three ways: a
 * router query sent whole to the one shard it reads, full push-down when
 * the query groups by the distribution column (each worker evaluates the
 * whole target list, final functions included), or partial aggregation on
 * the workers and a combining aggregate on the coordinator.  Only the last
 * keeps the final function, where dp_agg draws its noise, on the
 * coordinator, and which one Citus picks depends on the query.  So the planner hook rewrites a DP statement on a Citus table
 * before Citus sees it, into two statements:
 *
 *	 inner:  SELECT g1, ..., dp_agg_internal.sum(spec, value), ...
 *			 FROM t WHERE ... GROUP BY g1, ...
 *	 outer:  SELECT ..., dp_agg_internal.dist_release(p1, 0, NULL::bigint), ...
 *			 FROM dp_agg_internal.dist_run('<inner>') AS s(g1, ..., p1, ...)
 *			 WHERE <HAVING> ORDER BY ... LIMIT ...
 *
 * The outer statement reads no Citus table, so Citus leaves it to
 * PostgreSQL and it runs on the coordinator: it is priced and charged at
 * executor start (dist_price.c), then dist_run plans and runs the inner
 * statement through Citus, whichever way Citus distributes it; every way
 * yields exact partial states only (dp_agg_internal.sum(spec, value) has no
 * final function; Citus distributes it as it distributes sum, with
 * dp_agg_internal.sum(dp_agg.dist_state) on the coordinator),
 * and dist_release draws the noise of each group once, on the coordinator.
 *
 * With GROUP BY and private group keys (selection.c), the inner statement
 * computes one more call, the private selection dp_agg_internal.dp_select,
 * which no expression of the outer statement names: its partial state is
 * the exact number of the group's rows, and dist_run decides each group with it
 * (once, from the count combined over the workers) and returns the
 * selected groups only (dist_exec.c), with k = 1: each row is a unit, in one
 * group.  With a privacy unit (unit_catalog.c) the inner statement also
 * groups by the unit, dist_run is called with the unit's k and bounds each
 * unit, and the selection counts units, as privacy_unit.c's level 3 does.
 *
 * With GROUP BY keys of a public domain (public_domain.c), the inner
 * statement gets no selection but keeps only rows whose keys are among the
 * domain's (key = ANY (constants), one conjunct per key), and dist_run,
 * given the domain's key set, returns one row per key of the domain: the
 * groups of the workers with the domain's own keys, and a row of empty
 * states for each key no worker returned, so that every key is released.
 *
 * The inner statement is stored in the outer plan as the text of its parse
 * tree with the user's DP aggregate calls in it (they give the price);
 * dist_run replaces them by dp_agg_internal.sum calls with signed
 * specifications (dist_token.c) when it runs.
 *
 * Supported: one SELECT level of DP aggregates reading one Citus table
 * directly, with WHERE, TABLESAMPLE, GROUP BY (any column, its keys
 * selected privately or public), HAVING, ORDER BY, DISTINCT and LIMIT.
 * Any other DP statement that reads a Citus table
 * is refused here with a clear error, as is a statement naming dist_run,
 * dist_release or the partial aggregates on the coordinator (they are made
 * by this rewrite and by dist_run only).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parse_func.h"
#include "parser/parse_oper.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "catalog.h"
#include "dist_catalog.h"
#include "dist_plan.h"
#include "dp_calls.h"
#include "guc.h"
#include "keyset.h"
#include "public_domain.h"
#include "selection.h"
#include "unit_catalog.h"

#define DETAIL_SUPPORTED "On a Citus table dp_agg supports one SELECT of DP aggregates that reads " \
	"the table directly (WHERE, TABLESAMPLE, GROUP BY, HAVING, ORDER BY, DISTINCT, LIMIT)."

/* an internal function of dp_agg (dp_agg_internal) by name and argument types */
Oid
dp_dist_func(const char *name, int nargs, const Oid *argtypes)
{
	return dp_internal_function(name, nargs, argtypes, false);
}

/* the type dp_agg.dist_state (the types stay in schema dp_agg) */
Oid
dp_dist_state_type(void)
{
	return GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid, CStringGetDatum("dist_state"),
						   ObjectIdGetDatum(get_namespace_oid(DP_SCHEMA, false)));
}

/*
 * Is funcid the internal function (or aggregate) <name> of dp_agg, any
 * overload?  A member of the extension, whichever schema holds it
 * (dp_agg_internal since 0.4, dp_agg before).
 */
bool
dp_is_dist_function(Oid funcid, const char *name)
{
	char	   *fname = get_func_name(funcid);

	return fname != NULL && strcmp(fname, name) == 0 && dp_extension_member(funcid);
}

/* ---------- what the statement reads and calls ---------- */

typedef struct ScanContext
{
	bool		has_dp;
	Oid			citus_relid;
	bool		names_dist;
	bool		names_partial;
} ScanContext;

/* dist_run is planning or running its inner statement (dist_exec.c) */
static bool inner_running = false;

void
dp_dist_set_inner(bool running)
{
	inner_running = running;
}

/* Is aggref the partial aggregate dp_agg_internal.sum(spec [, value])? */
bool
dp_is_partial_sum(Aggref *aggref)
{
	return aggref->args != NIL &&
		exprType((Node *) linitial_node(TargetEntry, aggref->args)->expr) == TEXTOID &&
		dp_is_dist_function(aggref->aggfnoid, "sum");
}

static bool
scan_walker(Node *node, ScanContext *ctx)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref) && dp_is_partial_sum((Aggref *) node))
		ctx->names_partial = true;
	else if (IsA(node, FuncExpr) &&
			 (dp_is_dist_function(((FuncExpr *) node)->funcid, "dist_run") ||
			  dp_is_dist_function(((FuncExpr *) node)->funcid, "dist_release")))
		ctx->names_dist = true;
	else if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;

		/* looked for only in DP statements (a catalog scan per table) */
		if (ctx->has_dp && rte->rtekind == RTE_RELATION && !OidIsValid(ctx->citus_relid) &&
			dp_is_citus_table(rte->relid))
			ctx->citus_relid = rte->relid;
		return false;
	}
	else if (IsA(node, Query))
		return query_tree_walker((Query *) node, scan_walker, ctx, QTW_EXAMINE_RTES_BEFORE);
	return expression_tree_walker(node, scan_walker, ctx);
}

/* a macro, so that each message is a literal format string where it is raised */
#define refuse(message) \
	ereport(ERROR, \
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED), \
			 errmsg(message), \
			 errdetail(DETAIL_SUPPORTED)))

/*
 * The DP calls of the level, distinct by equal(), in order; ERROR for
 * those partial states cannot carry
 */
static List *
level_calls(Query *q)
{
	List	   *calls = dp_level_calls(q);
	ListCell   *lc;

	foreach(lc, calls)
	{
		Aggref	   *a = lfirst(lc);
		const DpCallInfo *info = dp_lookup_call(a->aggfnoid);

		/*
		 * partial states of Citus tables are counts and clamped sums: no
		 * quantile tree, no bins of values for bounds to be estimated
		 */
		if (DP_KIND_QUANTILE(info->kind) || info->kind == DP_BOUNDS)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("%s is not supported on a Citus table", dp_kind_name(info->kind)),
					 errdetail("The partial states a worker sends hold counts and clamped sums only."),
					 errhint("Run it on a local table (a copy of the data, or of a sample).")));
		if (DP_KIND_SUMS(info->kind) && info->lower_arg < 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("DP aggregates without bounds are not supported on a Citus table"),
					 errdetail("The partial states of a Citus table hold clamped sums, for bounds known when the statement is signed."),
					 errhint("Give the clamping bounds.")));
	}
	return calls;
}

/* does a call have DISTINCT or ORDER BY in its arguments? */
static bool
calls_ordered(List *calls)
{
	ListCell   *lc;

	foreach(lc, calls)
	{
		Aggref	   *a = lfirst(lc);

		if (a->aggdistinct != NIL || a->aggorder != NIL)
			return true;
	}
	return false;
}

/* the one shape supported: a SELECT of DP aggregates on the Citus table */
static void
check_shape(Query *q, List **calls)
{
	RangeTblRef *rtr;
	ListCell   *lc;
	int			nread = 0;

	if (q->commandType != CMD_SELECT || q->utilityStmt != NULL)
		refuse("DP aggregates on a Citus table are supported in SELECT only");
	if (q->cteList != NIL || q->hasSubLinks || q->setOperations != NULL ||
		q->hasWindowFuncs || q->hasTargetSRFs || q->groupingSets != NIL ||
		q->rowMarks != NIL || q->hasForUpdate)
		refuse("this DP statement is not supported on a Citus table");
	/* a key list joined to the table left empty entries (key_list.c) */
	foreach(lc, q->rtable)
	{
		if (((RangeTblEntry *) lfirst(lc))->rtekind != RTE_RESULT)
			nread++;
	}
	if (nread != 1 || list_length(q->jointree->fromlist) != 1 ||
		!IsA(linitial(q->jointree->fromlist), RangeTblRef))
		refuse("a DP statement on a Citus table must read the table directly");
	rtr = linitial_node(RangeTblRef, q->jointree->fromlist);
	if (rt_fetch(rtr->rtindex, q->rtable)->rtekind != RTE_RELATION)
		refuse("a DP statement on a Citus table must read the table directly");
	*calls = level_calls(q);
	if (*calls == NIL || calls_ordered(*calls) || dp_level_has_other_aggregates(q, true))
		refuse("on a Citus table a DP statement may aggregate with DP aggregates only, "
			   "without DISTINCT or ORDER BY in their arguments");
}

/* ---------- the rewrite ---------- */

typedef struct OuterContext
{
	List	   *groups;			/* expressions of the GROUP BY, in order */
	List	   *calls;			/* the distinct DP Aggrefs, in order */
	Oid			state_type;
	Var		   *unit;			/* the privacy unit column, or NULL */
	int			unit_groups;	/* its max_groups_contributed (k) */
} OuterContext;

/*
 * The privacy unit of the Citus table the statement reads, if any, into
 * ctx: its column and k, the relation's max_groups_contributed or the
 * setting (dist_inner.c refuses, before the charge, a k above the
 * relation's for a role untrusted for it, as privacy_unit.c does at
 * planning).  Refused where privacy_unit.c refuses too (TABLESAMPLE), and
 * for a unit or keys without an ordering: dist_run sorts by them.
 */
static void
check_unit(Query *q, OuterContext *ctx)
{
	RangeTblEntry *rte = rt_fetch(linitial_node(RangeTblRef, q->jointree->fromlist)->rtindex,
								  q->rtable);
	DpUnit		unit;
	Oid			type;
	int32		typmod;
	Oid			collation;
	Oid			sortop;
	ListCell   *lc;

	if (!dp_unit_of_read(rte->relid, !rte->inh, &unit))
		return;
	if (rte->tablesample != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("TABLESAMPLE is not supported with privacy units"),
				 errdetail("Sampling rows does not sample units, so it gives no privacy amplification per unit."),
				 errhint("See \"Privacy units\" in dp_agg's doc/units-and-groups.md.")));
	get_atttypetypmodcoll(rte->relid, unit.attnum, &type, &typmod, &collation);
	get_sort_group_operators(type, false, false, false, &sortop, NULL, NULL, NULL);
	foreach(lc, q->groupClause)
		if (!OidIsValid(lfirst_node(SortGroupClause, lc)->sortop))
			sortop = InvalidOid;
	if (!OidIsValid(sortop))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("privacy units on a Citus table need a unit column and GROUP BY keys of types with an ordering"),
				 errdetail("The coordinator bounds each unit's contribution by sorting the groups of each unit, then the units of each group."),
				 errhint("Group by columns of ordered types, or cast them.")));
	ctx->unit = makeVar(linitial_node(RangeTblRef, q->jointree->fromlist)->rtindex,
						unit.attnum, type, typmod, collation, 0);
	ctx->unit_groups = dp_guc_max_groups_contributed > 0 ? dp_guc_max_groups_contributed :
		unit.max_groups;
}

/* dp_agg_internal.dist_release(state, call, NULL::result type) */
static Node *
make_release(OuterContext *ctx, Aggref *aggref, int call)
{
	Oid			argtypes[3] = {ctx->state_type, INT4OID, aggref->aggtype};
	Var		   *state = makeVar(1, list_length(ctx->groups) + call + 1, ctx->state_type, -1,
								InvalidOid, 0);

	return (Node *) makeFuncExpr(dp_dist_func("dist_release", 3, argtypes), aggref->aggtype,
								 list_make3(state,
											makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
													  Int32GetDatum(call), false, true),
											makeNullConst(aggref->aggtype, -1, InvalidOid)),
								 InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
}

static Node *
outer_mutator(Node *node, OuterContext *ctx)
{
	ListCell   *lc;
	int			i = 0;

	if (node == NULL)
		return NULL;
	foreach(lc, ctx->groups)
	{
		Node	   *g = lfirst(lc);

		i++;
		if (equal(node, g))
			return (Node *) makeVar(1, i, exprType(g), exprTypmod(g), exprCollation(g), 0);
	}
	if (IsA(node, Aggref))
	{
		i = 0;
		foreach(lc, ctx->calls)
		{
			if (equal(node, lfirst(lc)))
				return make_release(ctx, (Aggref *) node, i);
			i++;
		}
		elog(ERROR, "dp_agg: a DP aggregate call was not collected");
	}
	if (IsA(node, Var))
		refuse("on a Citus table a DP statement may name columns outside DP aggregates "
			   "only as they appear in GROUP BY");
	return expression_tree_mutator(node, outer_mutator, ctx);
}

/*
 * The inner statement: group keys and DP calls, grouped as the user's.
 * With a privacy unit, the unit column comes first (named dp_unit) and is
 * grouped by too, rows of no unit left out (as privacy_unit.c does):
 * dist_run bounds each unit's contribution from its groups' exact states.
 */
static Query *
make_inner(Query *q, OuterContext *ctx)
{
	Query	   *inner = copyObject(q);
	List	   *tlist = NIL;
	List	   *groups = NIL;
	ListCell   *lc;
	int			resno = 1;

	if (ctx->unit != NULL)
	{
		Index		ref = 0;
		SortGroupClause *gc = makeNode(SortGroupClause);
		TargetEntry *n = makeTargetEntry((Expr *) copyObject(ctx->unit), resno++,
										 pstrdup(DP_DIST_UNIT_COLUMN), false);
		NullTest   *nt = makeNode(NullTest);
		bool		hashable;

		foreach(lc, q->targetList)
			ref = Max(ref, lfirst_node(TargetEntry, lc)->ressortgroupref);
		n->ressortgroupref = ref + 1;
		tlist = lappend(tlist, n);
		get_sort_group_operators(ctx->unit->vartype, false, true, false,
								 &gc->sortop, &gc->eqop, NULL, &hashable);
		gc->tleSortGroupRef = n->ressortgroupref;
		gc->hashable = hashable;
		groups = lappend(groups, gc);
		nt->arg = (Expr *) copyObject(ctx->unit);
		nt->nulltesttype = IS_NOT_NULL;
		nt->location = -1;
		inner->jointree->quals = make_and_qual(inner->jointree->quals, (Node *) nt);
	}
	inner->groupClause = list_concat(groups, inner->groupClause);
	foreach(lc, q->groupClause)
	{
		TargetEntry *tle = get_sortgroupclause_tle(lfirst(lc), q->targetList);
		TargetEntry *n = makeTargetEntry(copyObject(tle->expr), resno, psprintf("g%d", resno), false);

		n->ressortgroupref = tle->ressortgroupref;
		tlist = lappend(tlist, n);
		ctx->groups = lappend(ctx->groups, tle->expr);
		resno++;
	}
	foreach(lc, ctx->calls)
	{
		tlist = lappend(tlist, makeTargetEntry(copyObject(lfirst(lc)), resno,
											   psprintf("p%d", resno), false));
		resno++;
	}
	inner->targetList = tlist;
	inner->havingQual = NULL;
	inner->sortClause = NIL;
	inner->distinctClause = NIL;
	inner->hasDistinctOn = false;
	inner->limitCount = NULL;
	inner->limitOffset = NULL;
	return inner;
}

/*
 * The inner statement reads one range table entry, the table: the empty
 * entries a key list left (key_list.c) are dropped and the table's
 * entry numbered 1.
 */
static void
compact_rtable(Query *inner)
{
	RangeTblRef *rtr = linitial_node(RangeTblRef, inner->jointree->fromlist);
	int			r = rtr->rtindex;

	if (list_length(inner->rtable) == 1)
		return;
	inner->rtable = list_make1(rt_fetch(r, inner->rtable));
	if (r != 1)
		ChangeVarNodes((Node *) inner, r, 1, 0);
}

/*
 * The rows of a public domain: each key's values among the domain's keys
 * (key = ANY (constants), or IS NULL too), added to the inner statement's
 * WHERE; dist_run keeps the groups of the domain's keys only.
 */
static void
domain_filter(Query *inner, const DpDomain *d)
{
	DpKeyset   *ks = dp_keyset_open(DatumGetByteaPP(d->keyset->constvalue), CurrentMemoryContext);
	List	   *quals = inner->jointree->quals != NULL ? list_make1(inner->jointree->quals) : NIL;
	int			j = 0;
	ListCell   *lc;

	if (list_length(d->coltypes) != list_length(d->keys))
		refuse("the columns of a key list that are not joined to the rows are not supported on a Citus table");
	foreach(lc, d->keys)
	{
		Node	   *key = lfirst(lc);
		Oid			type = exprType(key);
		int16		typlen;
		bool		typbyval;
		char		typalign;
		Datum	   *values = palloc(sizeof(Datum) * Max(dp_keyset_size(ks), 1));
		int			n = 0;
		bool		has_null = false;
		ScalarArrayOpExpr *sa = makeNode(ScalarArrayOpExpr);
		ArrayType  *arr;
		Node	   *cond;

		get_typlenbyvalalign(type, &typlen, &typbyval, &typalign);
		for (int i = 0; i < dp_keyset_size(ks); i++)
		{
			bool		isnull;
			Datum		v = dp_keyset_value(ks, i, j, &isnull);

			if (isnull)
				has_null = true;
			else
				values[n++] = v;
		}
		arr = construct_array(values, n, type, typlen, typbyval, typalign);
		sa->opno = lookup_type_cache(type, TYPECACHE_EQ_OPR)->eq_opr;
		sa->opfuncid = get_opcode(sa->opno);
		sa->useOr = true;
		sa->inputcollid = exprCollation(key);
		sa->args = list_make2(copyObject(key),
							  makeConst(get_array_type(type), -1, exprCollation(key), -1,
										PointerGetDatum(arr), false, false));
		sa->location = -1;
		cond = (Node *) sa;
		if (has_null)
		{
			NullTest   *nt = makeNode(NullTest);

			nt->arg = (Expr *) copyObject(key);
			nt->nulltesttype = IS_NULL;
			nt->argisrow = false;
			nt->location = -1;
			cond = (Node *) makeBoolExpr(OR_EXPR, list_make2(cond, nt), -1);
		}
		quals = lappend(quals, cond);
		j++;
	}
	inner->jointree->quals = (Node *) make_ands_explicit(quals);
}

/*
 * FROM dp_agg_internal.dist_run('<inner>') AS dp_dist(g1, ..., p1, ...);
 * with a privacy unit dp_agg_internal.dist_run('<inner>', k): the unit
 * column of the inner statement is not among the columns dist_run returns;
 * with a public domain of the GROUP BY keys
 * dp_agg_internal.dist_run('<inner>', keyset).
 */
static RangeTblEntry *
make_run_rte(Query *inner, OuterContext *ctx, const DpDomain *domain)
{
	Oid			argtypes[2] = {TEXTOID, INT4OID};
	List	   *args;
	FuncExpr   *run;
	RangeTblFunction *rtf = makeNode(RangeTblFunction);
	RangeTblEntry *rte = makeNode(RangeTblEntry);
	Oid			state_type = ctx->state_type;
	ListCell   *lc;

	args = list_make1(makeConst(TEXTOID, -1, DEFAULT_COLLATION_OID, -1,
								CStringGetTextDatum(nodeToString(inner)), false, false));
	if (ctx->unit != NULL)
		args = lappend(args, makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
									   Int32GetDatum(ctx->unit_groups), false, true));
	else if (domain != NULL)
	{
		argtypes[1] = BYTEAOID;
		args = lappend(args, copyObject(domain->keyset));
	}
	run = makeFuncExpr(dp_dist_func("dist_run", list_length(args), argtypes), RECORDOID, args,
					   InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
	run->funcretset = true;
	rtf->funcexpr = (Node *) run;
	foreach(lc, inner->targetList)
	{
		TargetEntry *tle = lfirst(lc);
		bool		call = IsA(tle->expr, Aggref);	/* a partial state when run */

		if (ctx->unit != NULL && foreach_current_index(lc) == 0)
			continue;

		rtf->funccolnames = lappend(rtf->funccolnames, makeString(pstrdup(tle->resname)));
		rtf->funccoltypes = lappend_oid(rtf->funccoltypes,
										call ? state_type : exprType((Node *) tle->expr));
		rtf->funccoltypmods = lappend_int(rtf->funccoltypmods,
										  call ? -1 : exprTypmod((Node *) tle->expr));
		rtf->funccolcollations = lappend_oid(rtf->funccolcollations,
											 call ? InvalidOid : exprCollation((Node *) tle->expr));
	}
	rtf->funccolcount = list_length(rtf->funccolnames);
	rte->rtekind = RTE_FUNCTION;
	rte->functions = list_make1(rtf);
	rte->eref = makeAlias("dp_dist", copyObject(rtf->funccolnames));
	rte->inFromCl = true;
	return rte;
}

/*
 * Rewrite a DP statement on a Citus table (see the header comment); any
 * other statement is returned as it is.  citus_relid is set to the Citus
 * table a DP statement reads, InvalidOid if none.
 */
Query *
dp_dist_rewrite(Query *q, Oid *citus_relid)
{
	ScanContext scan = {false, InvalidOid, false, false};
	List	   *calls = NIL;
	OuterContext ctx = {NIL, NIL, InvalidOid, NULL, 0};
	const DpDomain *domain;
	Query	   *inner;
	Query	   *outer;
	ListCell   *lc;

	*citus_relid = InvalidOid;
	if (!dp_extension_present())
		return q;
	scan.has_dp = dp_tree_has_calls(q, false);
	(void) query_tree_walker(q, scan_walker, &scan, QTW_EXAMINE_RTES_BEFORE);
	if (scan.names_dist)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("dp_agg_internal.dist_run and dp_agg_internal.dist_release cannot be called directly"),
				 errdetail("They are made by dp_agg's planner for DP statements on Citus tables.")));
	/*
	 * The partial sums are made by dist_run; a worker receives them in
	 * fragments, whose signatures it checks (dist_worker.c).  Refusing them
	 * here keeps an analyst from sending a signature seen in Citus's log of
	 * remote commands to shards through the coordinator.
	 */
	if (scan.names_partial && !inner_running && !dp_guc_citus_worker)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("the partial aggregates dp_agg_internal.sum(text, ...) cannot be called directly"),
				 errdetail("They are made by dp_agg's planner for DP statements on Citus tables.")));
	if (!scan.has_dp || !OidIsValid(scan.citus_relid))
		return q;
	*citus_relid = scan.citus_relid;

	check_shape(q, &calls);
	check_unit(q, &ctx);
	ctx.calls = calls;
	domain = dp_domain_of_level(q);
	if (domain != NULL && ctx.unit != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("public domains of GROUP BY keys are not supported on a Citus table with a privacy unit"),
				 errdetail("On a Citus table, a privacy unit's groups are bounded on the coordinator, which does not yet add the keys of a public domain."),
				 errhint("Group by the keys without a key list or domain (their private selection), or query a local copy of the table.")));
	if (q->groupClause != NIL && domain == NULL)
	{
		Aggref	   *select = dp_selection_call(ctx.unit != NULL ? ctx.unit_groups : 1);

		/* last: the columns of the user's calls keep their numbers */
		if (select != NULL)
			ctx.calls = lappend(ctx.calls, select);
	}
	ctx.state_type = dp_dist_state_type();
	inner = make_inner(q, &ctx);
	if (domain != NULL)
		domain_filter(inner, domain);
	compact_rtable(inner);

	outer = makeNode(Query);
	outer->commandType = CMD_SELECT;
	outer->querySource = q->querySource;
	outer->queryId = q->queryId;
	outer->canSetTag = q->canSetTag;
	outer->rtable = list_make1(make_run_rte(inner, &ctx, domain));
	{
		RangeTblRef *rtr = makeNode(RangeTblRef);

		rtr->rtindex = 1;
		outer->jointree = makeFromExpr(list_make1(rtr),
									   outer_mutator(copyObject(q->havingQual), &ctx));
	}
	foreach(lc, q->targetList)
	{
		TargetEntry *tle = copyObject(lfirst(lc));

		tle->expr = (Expr *) outer_mutator((Node *) tle->expr, &ctx);
		tle->resorigtbl = InvalidOid;
		tle->resorigcol = 0;
		outer->targetList = lappend(outer->targetList, tle);
	}
	outer->sortClause = q->sortClause;
	outer->distinctClause = q->distinctClause;
	outer->hasDistinctOn = q->hasDistinctOn;
	outer->limitCount = q->limitCount;
	outer->limitOffset = q->limitOffset;
	outer->limitOption = q->limitOption;
	outer->stmt_location = q->stmt_location;
	outer->stmt_len = q->stmt_len;
	return outer;
}
