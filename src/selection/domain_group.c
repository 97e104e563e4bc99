/*-------------------------------------------------------------------------
 *
 * domain_group.c
 *	  Public domains: a level whose keys have a public domain grouped by
 *	  the index of its key in the domain (dp_agg_internal.domain_index), its keys
 *	  released as the domain's constants (dp_agg_internal.domain_key).
 *
 * public_domain.c finds the domains and describes the rewrite; this is its
 * first half, run before the rewrite of privacy units, which then sees
 * only the rows of the domain.  The domain's own rows are added after it
 * (domain_rows.c).
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
#include "domain_group.h"
#include "public_domain.h"
#include "unit_catalog.h"

static FuncExpr *
domain_key_call(const DpDomain *d, Node *index, int col)
{
	Node	   *key = list_nth(d->coltypes, col);
	FuncExpr   *f;

	f = makeFuncExpr(dp_domain_key_oid(), exprType(key),
					 list_make4(copyObject(d->keyset), copyObject(index),
								makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
										  Int32GetDatum(col), false, true),
								makeNullConst(exprType(key), -1, InvalidOid)),
					 exprCollation(key), InvalidOid, COERCE_EXPLICIT_CALL);
	f->location = DP_DOMAIN_LOCATION;
	return f;
}

/* the key of column col, with the key's own typmod */
static Node *
domain_key_expr(const DpDomain *d, Node *index, int col)
{
	Node	   *key = list_nth(d->coltypes, col);
	Node	   *f = (Node *) domain_key_call(d, index, col);

	if (exprTypmod(key) != -1)
		f = (Node *) makeRelabelType((Expr *) f, exprType(key), exprTypmod(key),
									 exprCollation(key), COERCE_IMPLICIT_CAST);
	return f;
}

/* the placeholders of a key list's columns (key_list.c), filled */
typedef struct Fill
{
	DpDomainLevel *l;
	Node	   *gi;
} Fill;

static Node *
fill_mutator(Node *node, Fill *f)
{
	int			col;

	if (node == NULL)
		return NULL;
	if (dp_key_list_placeholder(node, &col))
	{
		if (col < 0 || col >= f->l->list->ncols || f->l->list_col[col] < 0)
			elog(ERROR, "dp_agg: a column of a key list that is not a GROUP BY key");
		return domain_key_expr(&f->l->domain, f->gi, f->l->list_col[col]);
	}
	return expression_tree_mutator(node, fill_mutator, f);
}

static Index
max_sortgroupref(List *tlist)
{
	Index		ref = 0;
	ListCell   *lc;

	foreach(lc, tlist)
		ref = Max(ref, lfirst_node(TargetEntry, lc)->ressortgroupref);
	return ref;
}

/* does the level read a relation with a privacy unit directly (privacy_unit.c)? */
static bool
reads_unit(Query *q)
{
	Index		rti;
	RangeTblEntry *rte;
	DpUnit		unit;

	if (!dp_domain_row_source(q, false, &rti))
		return false;
	rte = rt_fetch(rti, q->rtable);
	return rte->rtekind == RTE_RELATION && dp_unit_of_read(rte->relid, !rte->inh, &unit);
}

static void
apply_level(Query *q)
{
	DpDomainLevel *l = dp_domain_find_level(q);
	DpDomain   *d;
	FuncExpr   *gi;
	TargetEntry *tle;
	SortGroupClause *gc = makeNode(SortGroupClause);
	DpDomainReplace r = {NIL, NIL};
	List	   *quals;
	ListCell   *lc;
	int			col = 0;

	if (l == NULL || !l->public || l->applied)
		return;
	d = &l->domain;
	gi = makeFuncExpr(dp_domain_index_oid(), INT4OID,
					  lcons(copyObject(d->keyset), copyObject(d->keys)),
					  InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
	gi->location = DP_DOMAIN_LOCATION;
	l->gi = gi;

	/* outside the aggregates, each key is the domain's key of the group's index */
	foreach(lc, d->keys)
	{
		r.from = lappend(r.from, lfirst(lc));
		r.to = lappend(r.to, domain_key_expr(d, (Node *) gi, col++));
	}
	q->targetList = (List *) dp_domain_replace_mutator((Node *) q->targetList, &r);
	q->havingQual = dp_domain_replace_mutator(q->havingQual, &r);
	/* a key list's other columns too */
	if (l->list != NULL)
	{
		Fill		fill = {l, (Node *) gi};

		q->targetList = (List *) fill_mutator((Node *) q->targetList, &fill);
		q->havingQual = fill_mutator(q->havingQual, &fill);
	}

	tle = makeTargetEntry((Expr *) copyObject(gi), list_length(q->targetList) + 1,
						  pstrdup("dp_domain_index"), true);
	tle->ressortgroupref = max_sortgroupref(q->targetList) + 1;
	q->targetList = lappend(q->targetList, tle);
	gc->tleSortGroupRef = tle->ressortgroupref;
	gc->eqop = Int4EqualOperator;
	gc->sortop = Int4LessOperator;
	gc->nulls_first = false;
	gc->hashable = true;
	q->groupClause = list_make1(gc);

	/* the WHERE conjuncts the domain replaces (rows outside it are dropped anyway) */
	quals = NIL;
	foreach(lc, dp_domain_conjuncts(q->jointree->quals))
	{
		if (!list_member_ptr(l->consumed, lfirst(lc)))
			quals = lappend(quals, lfirst(lc));
	}
	/*
	 * with a privacy unit, only the rows of the domain are bounded, so that
	 * each unit's groups are groups of the domain
	 */
	if (reads_unit(q))
	{
		NullTest   *nt = makeNode(NullTest);

		nt->arg = (Expr *) copyObject(gi);
		nt->nulltesttype = IS_NOT_NULL;
		nt->argisrow = false;
		nt->location = DP_DOMAIN_LOCATION;
		quals = lappend(quals, nt);
	}
	q->jointree->quals = (Node *) make_ands_explicit(quals);
	if (quals == NIL)
		q->jointree->quals = NULL;
	l->applied = true;
}

/*
 * Before the rewrite of privacy units and the private selection: group
 * each level with a public domain by the index of its keys in the domain.
 */
void
dp_domain_apply(Query *query)
{
	if (dp_domain_current == NULL || query->commandType == CMD_UTILITY)
		return;
	dp_domain_walk_levels(query, apply_level);
}
