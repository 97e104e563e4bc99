/*-------------------------------------------------------------------------
 *
 * error_bars.c
 *	  Error bars in the statement that releases the value: the rewrite of
 *	  dp_interval_low, dp_interval_high, dp_noise_scale, dp_lower_bound and
 *	  dp_upper_bound (doc/statistics.md, "Preview and error bars").
 *
 * An analyst writes, next to a DP aggregate or above it,
 *
 *   SELECT g, dp_avg(x, 0, 100) AS a, dp_interval_low(dp_avg(x, 0, 100)),
 *          dp_interval_high(dp_avg(x, 0, 100)) FROM t GROUP BY g;
 *   SELECT g, a, dp_interval_low(a), dp_interval_high(a)
 *   FROM (SELECT g, dp_avg(x, 0, 100) AS a FROM t GROUP BY g) s;
 *
 * Before planning (hooks.c, after the guard), every such call is replaced:
 * the DP aggregate A it names (directly, or through the columns of
 * sub-queries and CTEs down to the level that computes it) becomes A', the
 * same aggregate returning a dp_agg.estimate (estimate.c): its final
 * function computes the value and its error bar from the one noise it
 * draws.  Every use of A in its level becomes
 * dp_agg_internal.estimate_part(A', 0, NULL::type) (its value), each error-bar call
 * the part it asks for, and a sub-query that computes A gets one more
 * column, A' itself, for the levels above to read.  A and A' are one
 * aggregate call: equal Aggrefs are evaluated once, priced once and drawn
 * once, so the error bar costs nothing (post-processing: Dwork & Roth
 * 2014, Proposition 2.1) and cannot disagree with the value.
 *
 * A call whose argument is anything else (an expression of a DP
 * aggregate, a column that is not one, a constant) is refused with a
 * message saying what to write.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"

#include "catalog.h"
#include "error_bars.h"
#include "estimate.h"

/* the DP aggregates of one query level that return an estimate */
typedef struct LevelMarks
{
	Query	   *q;
	List	   *aggrefs;		/* the plain Aggrefs A, by equal() */
} LevelMarks;

typedef struct BarContext
{
	List	   *levels;			/* LevelMarks * */
	Query	   *q;				/* the level being rewritten */
	LevelMarks *marks;			/* its marks, in the value pass */
} BarContext;

/* a macro, so that the detail is a literal format string where it is raised */
#define refuse(...) \
	ereport(ERROR, \
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED), \
			 errmsg("error bars are given for the result of a DP aggregate only"), \
			 errdetail(__VA_ARGS__), \
			 errhint("Write dp_interval_low(dp_avg(...)) next to the aggregate, or apply it to a sub-query's column that holds a DP aggregate; post-process the interval, not the argument.")))

static LevelMarks *
marks_of(BarContext *ctx, Query *q)
{
	ListCell   *lc;
	LevelMarks *m;

	foreach(lc, ctx->levels)
	{
		m = lfirst(lc);
		if (m->q == q)
			return m;
	}
	m = palloc0(sizeof(LevelMarks));
	m->q = q;
	ctx->levels = lappend(ctx->levels, m);
	return m;
}

/* A' of a plain DP Aggref A: the same call, returning an estimate */
static Aggref *
estimate_aggref(Aggref *a)
{
	Aggref	   *e = copyObject(a);

	e->aggtype = dp_estimate_type();
	e->aggcollid = InvalidOid;
	return e;
}

/* strip casts that keep the value: a relabelling */
static Node *
strip(Node *node)
{
	while (node != NULL && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	return node;
}

static Node *estimate_of(BarContext *ctx, Query *q, Node *arg, Oid *valtype);

/*
 * The estimate of column attno of a sub-query: its expression's estimate
 * in the sub-query, made a column of its own (appended; the levels above
 * name columns by number, and name only those they read).  Returns the
 * column's number.
 */
static AttrNumber
expose_column(BarContext *ctx, Query *sub, AttrNumber attno, Oid *valtype)
{
	TargetEntry *tle;
	Node	   *est;
	TargetEntry *col;
	ListCell   *lc;

	if (attno < 1 || attno > list_length(sub->targetList))
		refuse("The argument is not a column of a sub-query.");
	tle = list_nth_node(TargetEntry, sub->targetList, attno - 1);
	if (tle->resjunk)
		refuse("The argument is not a column of a sub-query.");
	est = estimate_of(ctx, sub, (Node *) tle->expr, valtype);
	/* the same estimate asked twice: one column */
	foreach(lc, sub->targetList)
	{
		TargetEntry *t = lfirst_node(TargetEntry, lc);

		if (!t->resjunk && equal(t->expr, est))
			return t->resno;
	}
	/*
	 * The new column goes after the last output column and before the
	 * resjunk entries (sorting and grouping expressions the sub-query does
	 * not return), which are renumbered: clauses name them by
	 * ressortgroupref, never by number, and the levels above read output
	 * columns only.
	 */
	{
		int			pos = 0;
		List	   *tl = NIL;

		foreach(lc, sub->targetList)
		{
			if (!lfirst_node(TargetEntry, lc)->resjunk)
				pos++;
		}
		col = makeTargetEntry((Expr *) est, (AttrNumber) (pos + 1),
							  psprintf("dp_estimate_%d", attno), false);
		foreach(lc, sub->targetList)
		{
			TargetEntry *t = lfirst_node(TargetEntry, lc);

			if (t->resjunk && col != NULL)
			{
				tl = lappend(tl, col);
				col = NULL;
			}
			if (t->resjunk)
				t->resno = (AttrNumber) (list_length(tl) + 1);
			tl = lappend(tl, t);
		}
		if (col != NULL)
			tl = lappend(tl, col);
		sub->targetList = tl;
		return (AttrNumber) (pos + 1);
	}
}

/* the new column of a range table entry: its name (and a CTE's type) */
static void
add_rte_column(Query *q, RangeTblEntry *rte, AttrNumber attno)
{
	char	   *name = psprintf("dp_estimate_%d", (int) attno);

	rte->eref->colnames = lappend(rte->eref->colnames, makeString(name));
	if (rte->rtekind == RTE_CTE)
	{
		rte->coltypes = lappend_oid(rte->coltypes, dp_estimate_type());
		rte->coltypmods = lappend_int(rte->coltypmods, -1);
		rte->colcollations = lappend_oid(rte->colcollations, InvalidOid);
	}
}

/* the CTE a range table entry of q reads */
static CommonTableExpr *
cte_of(Query *q, RangeTblEntry *rte)
{
	Query	   *owner = q;
	ListCell   *lc;

	/* levels above are not tracked: a CTE of q's own WITH only */
	if (rte->ctelevelsup != 0)
		refuse("The argument is a column of a CTE of an enclosing query.");
	foreach(lc, owner->cteList)
	{
		CommonTableExpr *cte = lfirst_node(CommonTableExpr, lc);

		if (strcmp(cte->ctename, rte->ctename) == 0)
			return cte;
	}
	elog(ERROR, "dp_agg: CTE \"%s\" not found", rte->ctename);
	return NULL;
}

/*
 * An expression of type dp_agg.estimate, in q's context, for the DP
 * aggregate that arg (an expression of q) releases; *valtype is the type
 * of its value.
 */
static Node *
estimate_of(BarContext *ctx, Query *q, Node *arg, Oid *valtype)
{
	arg = strip(arg);
	if (arg != NULL && IsA(arg, Aggref) && ((Aggref *) arg)->agglevelsup == 0)
	{
		Aggref	   *a = (Aggref *) arg;
		const DpCallInfo *info = dp_lookup_call(a->aggfnoid);
		LevelMarks *m;

		if (info == NULL)
			refuse("The argument is an aggregate that is not differentially private.");
		if (info->kind == DP_BOUNDS || info->kind == DP_SELECT)
			refuse("dp_bounds releases bounds, estimates themselves, with no error bar of their own.");
		if (a->aggtype == dp_estimate_type())
			return (Node *) a;	/* already an estimate */
		m = marks_of(ctx, q);
		if (!list_member(m->aggrefs, a))
			m->aggrefs = lappend(m->aggrefs, copyObject(a));
		*valtype = a->aggtype;
		return (Node *) estimate_aggref(a);
	}
	if (arg != NULL && IsA(arg, FuncExpr) &&
		((FuncExpr *) arg)->funcid == dp_estimate_part_oid())
	{
		/* a column a level below already rewrote: its estimate */
		FuncExpr   *f = (FuncExpr *) arg;

		if (DatumGetInt32(castNode(Const, lsecond(f->args))->constvalue) != DP_ESTIMATE_VALUE)
			refuse("The argument is an error bar, not a DP aggregate's value.");
		*valtype = f->funcresulttype;
		return (Node *) linitial(f->args);
	}
	if (arg != NULL && IsA(arg, Var) && ((Var *) arg)->varlevelsup == 0)
	{
		Var		   *v = (Var *) arg;
		RangeTblEntry *rte = rt_fetch(v->varno, q->rtable);
		Query	   *sub = NULL;
		AttrNumber	col;

		if (rte->rtekind == RTE_SUBQUERY)
			sub = rte->subquery;
		else if (rte->rtekind == RTE_CTE)
			sub = castNode(Query, cte_of(q, rte)->ctequery);
		if (sub == NULL)
			refuse("The argument is a column of a table, not a DP aggregate's result.");
		col = expose_column(ctx, sub, v->varattno, valtype);
		if (col > list_length(rte->eref->colnames))
			add_rte_column(q, rte, col);
		if (rte->rtekind == RTE_CTE)
		{
			/* every reference to the CTE sees the new column */
			CommonTableExpr *cte = cte_of(q, rte);
			ListCell   *lc;

			if (col > list_length(cte->ctecolnames))
			{
				cte->ctecolnames = lappend(cte->ctecolnames,
										   makeString(psprintf("dp_estimate_%d", (int) v->varattno)));
				cte->ctecoltypes = lappend_oid(cte->ctecoltypes, dp_estimate_type());
				cte->ctecoltypmods = lappend_int(cte->ctecoltypmods, -1);
				cte->ctecolcollations = lappend_oid(cte->ctecolcollations, InvalidOid);
			}
			foreach(lc, q->rtable)
			{
				RangeTblEntry *other = lfirst(lc);

				if (other != rte && other->rtekind == RTE_CTE && other->ctelevelsup == 0 &&
					strcmp(other->ctename, rte->ctename) == 0 &&
					col > list_length(other->eref->colnames))
					add_rte_column(q, other, col);
			}
		}
		return (Node *) makeVar(v->varno, col, dp_estimate_type(), -1, InvalidOid, 0);
	}
	refuse("The argument is an expression, not a DP aggregate or a column that holds one.");
	return NULL;
}

/* dp_agg_internal.estimate_part(est, part, NULL::valtype), or estimate_scale(est) */
static Node *
part_expr(Node *est, DpErrorBar bar, int part, Oid valtype)
{
	FuncExpr   *f = makeNode(FuncExpr);

	f->funcretset = false;
	f->funcvariadic = false;
	f->funcformat = COERCE_EXPLICIT_CALL;
	f->funccollid = InvalidOid;
	f->inputcollid = InvalidOid;
	f->location = -1;
	if (bar == DP_BAR_SCALE)
	{
		f->funcid = dp_estimate_scale_oid();
		f->funcresulttype = FLOAT8OID;
		f->args = list_make1(est);
		return (Node *) f;
	}
	f->funcid = dp_estimate_part_oid();
	f->funcresulttype = valtype;
	f->args = list_make3(est,
						 makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
								   Int32GetDatum(part), false, true),
						 makeNullConst(valtype, -1, InvalidOid));
	return (Node *) f;
}

static int
bar_part(DpErrorBar bar)
{
	switch (bar)
	{
		case DP_BAR_LOW:
			return DP_ESTIMATE_LOW;
		case DP_BAR_HIGH:
			return DP_ESTIMATE_HIGH;
		case DP_BAR_LOWER:
			return DP_ESTIMATE_LOWER;
		case DP_BAR_UPPER:
			return DP_ESTIMATE_UPPER;
		default:
			return DP_ESTIMATE_VALUE;
	}
}

/* pass 1: each error-bar call becomes the part of an estimate */
static Node *
bar_mutator(Node *node, BarContext *ctx)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Query))
		return node;			/* sub-links: refused in DP statements */
	if (IsA(node, FuncExpr))
	{
		FuncExpr   *f = (FuncExpr *) node;
		DpErrorBar	bar = dp_error_bar_function(f->funcid);

		if (bar != DP_BAR_NONE)
		{
			Oid			valtype = InvalidOid;
			Node	   *est;

			if (list_length(f->args) != 1)
				refuse("An error-bar function takes one argument.");
			est = estimate_of(ctx, ctx->q, linitial(f->args), &valtype);
			return part_expr(est, bar, bar_part(bar), valtype);
		}
	}
	return expression_tree_mutator(node, bar_mutator, ctx);
}

/* pass 2: each other use of a marked aggregate becomes its value */
static Node *
value_mutator(Node *node, BarContext *ctx)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Query))
		return node;
	if (IsA(node, Aggref) && list_member(ctx->marks->aggrefs, node))
	{
		Aggref	   *a = (Aggref *) node;

		return part_expr((Node *) estimate_aggref(a), DP_BAR_NONE, DP_ESTIMATE_VALUE, a->aggtype);
	}
	return expression_tree_mutator(node, value_mutator, ctx);
}

static void
mutate_level(Query *q, Node *(*mutator) (), BarContext *ctx)
{
	q->targetList = (List *) mutator((Node *) q->targetList, ctx);
	q->havingQual = mutator(q->havingQual, ctx);
	if (q->jointree != NULL)
		q->jointree->quals = mutator(q->jointree->quals, ctx);
}

/* the error-bar calls of q and of the levels below it */
static void
rewrite_calls(BarContext *ctx, Query *q)
{
	ListCell   *lc;

	ctx->q = q;
	mutate_level(q, bar_mutator, ctx);
	foreach(lc, q->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		if (rte->rtekind == RTE_SUBQUERY)
			rewrite_calls(ctx, rte->subquery);
	}
	foreach(lc, q->cteList)
		rewrite_calls(ctx, castNode(Query, lfirst_node(CommonTableExpr, lc)->ctequery));
}

/* does a query hold an error-bar call? */
static bool
has_bar_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, FuncExpr) && dp_error_bar_function(((FuncExpr *) node)->funcid) != DP_BAR_NONE)
		return true;
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, has_bar_walker, context, 0);
	return expression_tree_walker(node, has_bar_walker, context);
}

/*
 * Rewrite the error-bar calls of a statement the guard accepted (hooks.c),
 * before the rewrites of privacy units, of Citus tables and of the private
 * selection, which then see DP aggregates returning estimates.
 */
void
dp_error_bars_rewrite(Query *query)
{
	BarContext	ctx;
	ListCell   *lc;

	if (!OidIsValid(dp_estimate_type()))
		return;					/* before 0.4: no such functions */
	if (!query_tree_walker(query, has_bar_walker, NULL, 0) &&
		!has_bar_walker((Node *) query->targetList, NULL))
		return;
	memset(&ctx, 0, sizeof(ctx));
	rewrite_calls(&ctx, query);
	foreach(lc, ctx.levels)
	{
		ctx.marks = lfirst(lc);
		ctx.q = ctx.marks->q;
		mutate_level(ctx.q, value_mutator, &ctx);
	}
}
