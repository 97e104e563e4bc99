/*-------------------------------------------------------------------------
 *
 * domain_rows.c
 *	  Public domains: the domain's own rows, one per key, appended to a
 *	  level's rows with UNION ALL, kept out of its DP aggregates, and the
 *	  dp_public call that releases exactly the domain's groups.
 *
 * The second half of the rewrite that public_domain.c describes, run
 * after the rewrite of privacy units (its level 3) and the grouping by the
 * index (domain_group.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_aggregate.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "bins.h"
#include "catalog.h"
#include "compat.h"
#include "domain_catalog.h"
#include "guc.h"
#include "key_list.h"
#include "keyset.h"
#include "domain_rows.h"
#include "public_domain.h"
#include "rewrite_nodes.h"
#include "unit_catalog.h"

/*
 * The level's Vars (outside sub-queries), distinct, but for those of its
 * group expression g, which becomes column 1 of the union
 */
typedef struct Columns
{
	Node	   *g;
	List	   *vars;			/* the level's Vars, distinct */
} Columns;

static bool
collect_vars_walker(Node *node, Columns *c)
{
	if (node == NULL)
		return false;
	if (equal(node, c->g))
		return false;
	if (IsA(node, Var))
	{
		Var		   *v = (Var *) node;
		ListCell   *lc;

		if (v->varlevelsup != 0)
			return false;
		foreach(lc, c->vars)
		{
			Var		   *w = lfirst(lc);

			if (w->varno == v->varno && w->varattno == v->varattno)
				return false;
		}
		c->vars = lappend(c->vars, v);
		return false;
	}
	if (IsA(node, Query))
		return false;
	return expression_tree_walker(node, collect_vars_walker, c);
}

/* the level's expressions over the union: g is column 1, the Vars from 3 */
static Node *
to_union_mutator(Node *node, Columns *c)
{
	if (node == NULL)
		return NULL;
	if (equal(node, c->g))
		return (Node *) makeVar(1, 1, INT4OID, -1, InvalidOid, 0);
	if (IsA(node, Var) && ((Var *) node)->varlevelsup == 0)
	{
		Var		   *v = (Var *) node;
		ListCell   *lc;
		int			i = 0;

		foreach(lc, c->vars)
		{
			Var		   *w = lfirst(lc);

			if (w->varno == v->varno && w->varattno == v->varattno)
				return (Node *) makeVar(1, 3 + i, v->vartype, v->vartypmod, v->varcollid, 0);
			i++;
		}
		elog(ERROR, "dp_agg: a column of a level with a public domain was not collected");
	}
	if (IsA(node, Query))
		return node;
	return expression_tree_mutator(node, to_union_mutator, c);
}

/* SELECT g, true, NULL, ... FROM generate_series(0, N - 1) g */
static Query *
domain_rows(int nkeys, List *vars)
{
	Query	   *q = dp_new_select();
	RangeTblEntry *rte = makeNode(RangeTblEntry);
	RangeTblFunction *rtf = makeNode(RangeTblFunction);
	FuncExpr   *series;
	RangeTblRef *ref = makeNode(RangeTblRef);
	ListCell   *lc;
	int			resno = 1;

	series = makeFuncExpr(F_GENERATE_SERIES_INT4_INT4, INT4OID,
						  list_make2(makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
											   Int32GetDatum(0), false, true),
									 makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
											   Int32GetDatum(nkeys - 1), false, true)),
						  InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
	series->funcretset = true;
	series->location = DP_DOMAIN_LOCATION;
	rtf->funcexpr = (Node *) series;
	rtf->funccolcount = 1;
	rte->rtekind = RTE_FUNCTION;
	rte->functions = list_make1(rtf);
	rte->alias = makeAlias("dp_domain", NIL);
	rte->eref = makeAlias("dp_domain", list_make1(makeString(pstrdup("g"))));
	rte->inFromCl = true;
	q->rtable = list_make1(rte);
	ref->rtindex = 1;
	q->jointree = makeFromExpr(list_make1(ref), NULL);
	q->targetList = list_make2(makeTargetEntry((Expr *) makeVar(1, 1, INT4OID, -1, InvalidOid, 0),
											   resno, pstrdup("gi"), false),
							   makeTargetEntry((Expr *) makeBoolConst(true, false),
											   resno + 1, pstrdup("dom"), false));
	resno += 2;
	foreach(lc, vars)
	{
		Var		   *v = lfirst(lc);

		q->targetList = lappend(q->targetList,
								makeTargetEntry((Expr *) makeNullConst(v->vartype, v->vartypmod,
																	   v->varcollid),
												resno, psprintf("v%d", resno), false));
		resno++;
	}
	return q;
}

/* WHERE dom IS NULL: the domain's rows reach no DP aggregate */
static Node *
not_domain_row(void)
{
	NullTest   *nt = makeNode(NullTest);

	nt->arg = (Expr *) makeVar(1, 2, BOOLOID, -1, InvalidOid, 0);
	nt->nulltesttype = IS_NULL;
	nt->argisrow = false;
	nt->location = DP_DOMAIN_LOCATION;
	return (Node *) nt;
}

static Node *
filter_mutator(Node *node, void *context)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Aggref) && ((Aggref *) node)->agglevelsup == 0 &&
		dp_lookup_call(((Aggref *) node)->aggfnoid) != NULL)
	{
		Aggref	   *a = (Aggref *) copyObject(node);

		a->aggfilter = a->aggfilter == NULL ? (Expr *) not_domain_row()
			: make_andclause(list_make2(not_domain_row(), a->aggfilter));
		return (Node *) a;
	}
	if (IsA(node, Query))
		return node;
	return expression_tree_mutator(node, filter_mutator, context);
}

static void
inject_level(Query *q)
{
	DpDomainLevel *l = dp_domain_find_level(q);
	TargetEntry *gtle;
	Columns		c = {NULL, NIL};
	Query	   *table;
	Query	   *rows;
	Query	   *u;
	SetOperationStmt *op;
	RangeTblRef *lref = makeNode(RangeTblRef);
	RangeTblRef *rref = makeNode(RangeTblRef);
	RangeTblRef *ref = makeNode(RangeTblRef);
	ListCell   *lc;
	int			resno = 1;

	if (l == NULL || !l->applied)
		return;
	if (list_length(q->groupClause) != 1)
		elog(ERROR, "dp_agg: a level with a public domain groups by more than its index");
	gtle = get_sortgroupclause_tle(linitial(q->groupClause), q->targetList);
	c.g = copyObject((Node *) gtle->expr);
	(void) collect_vars_walker((Node *) q->targetList, &c);
	(void) collect_vars_walker(q->havingQual, &c);

	/* the table's rows: the level's FROM and WHERE, unchanged */
	table = dp_new_select();
	table->rtable = q->rtable;
#ifdef DP_HAVE_RTEPERMINFO
	table->rteperminfos = q->rteperminfos;
#endif
	table->jointree = q->jointree;
	table->hasSubLinks = q->hasSubLinks;
	table->targetList = list_make2(makeTargetEntry((Expr *) c.g, resno, pstrdup("gi"), false),
								   makeTargetEntry((Expr *) makeNullConst(BOOLOID, -1, InvalidOid),
												   resno + 1, pstrdup("dom"), false));
	resno += 2;
	foreach(lc, c.vars)
	{
		table->targetList = lappend(table->targetList,
									makeTargetEntry((Expr *) copyObject(lfirst(lc)), resno,
													psprintf("v%d", resno), false));
		resno++;
	}
	rows = domain_rows(l->domain.nkeys, c.vars);

	/* table UNION ALL rows */
	u = dp_new_select();
	u->rtable = list_make2(dp_subquery_rte(table, "dp_domain_table", false),
						   dp_subquery_rte(rows, "dp_domain_rows", false));
	u->jointree = makeFromExpr(NIL, NULL);
	op = makeNode(SetOperationStmt);
	op->op = SETOP_UNION;
	op->all = true;
	lref->rtindex = 1;
	rref->rtindex = 2;
	op->larg = (Node *) lref;
	op->rarg = (Node *) rref;
	resno = 1;
	foreach(lc, table->targetList)
	{
		TargetEntry *t = lfirst(lc);
		Node	   *e = (Node *) t->expr;

		op->colTypes = lappend_oid(op->colTypes, exprType(e));
		op->colTypmods = lappend_int(op->colTypmods, exprTypmod(e));
		op->colCollations = lappend_oid(op->colCollations, exprCollation(e));
		u->targetList = lappend(u->targetList,
								makeTargetEntry((Expr *) makeVar(1, resno, exprType(e), exprTypmod(e),
																 exprCollation(e), 0),
												resno, pstrdup(t->resname), false));
		resno++;
	}
	u->setOperations = (Node *) op;

	/* the level reads the union; its DP aggregates skip the domain's rows */
	q->targetList = (List *) to_union_mutator((Node *) q->targetList, &c);
	q->havingQual = to_union_mutator(q->havingQual, &c);
	q->targetList = (List *) filter_mutator((Node *) q->targetList, NULL);
	q->havingQual = filter_mutator(q->havingQual, NULL);
	q->havingQual = q->havingQual == NULL ? (Node *) dp_domain_public_call(l->domain.nkeys)
		: (Node *) make_andclause(list_make2(dp_domain_public_call(l->domain.nkeys), q->havingQual));
	q->rtable = list_make1(dp_subquery_rte(u, "dp_domain", true));
#ifdef DP_HAVE_RTEPERMINFO
	q->rteperminfos = NIL;
#endif
	ref->rtindex = 1;
	q->jointree = makeFromExpr(list_make1(ref), NULL);
	q->hasSubLinks = false;
}

/*
 * After the rewrite of privacy units and the private selection: add the
 * domain's rows to the input of each level with a public domain, keep them
 * out of its DP aggregates, and release only groups of the domain (the
 * file's comment).
 */
void
dp_domain_inject(Query *query)
{
	if (dp_domain_current == NULL || query->commandType == CMD_UTILITY)
		return;
	dp_domain_walk_levels(query, inject_level);
}

/*
 * The FILTER that keeps a public domain's own rows out of an aggregate of
 * a level (top_k.c), NULL if the level has no public domain
 */
Node *
dp_domain_row_filter(Query *level)
{
	DpDomainLevel *l = dp_domain_find_level(level);

	if (l == NULL || !l->applied)
		return NULL;
	return not_domain_row();
}
