/*-------------------------------------------------------------------------
 *
 * privacy_unit.c
 *	  Privacy units: each unit's contribution to a DP statement is bounded
 *	  by rewriting the statement, at planning, into three aggregation
 *	  levels that PostgreSQL executes.
 *
 * doc/units-and-groups.md, "Privacy units".  A relation's privacy unit is a
 * column (dp_agg.set_privacy_unit); neighbouring databases differ by all rows
 * of one unit.  The query level with the DP aggregates,
 *
 *   SELECT g, dp_sum(x, l, u) FROM t WHERE w GROUP BY g
 *
 * becomes (the names are the rewrite's; no analyst can write it, guard.c)
 *
 *   SELECT g, dp_agg_internal.unit_release_dp_sum(s, l, u)
 *   FROM (SELECT g, u, s, dp_agg_internal.unit_keep(k) OVER (PARTITION BY u) AS keep
 *         FROM (SELECT u, g, dp_agg_internal.unit_bound_dp_sum(x, l, u) AS s
 *               FROM t WHERE w AND u IS NOT NULL GROUP BY u, g) level1) level2
 *   WHERE keep GROUP BY g
 *
 * Level 1 computes, per (unit, group), the unit's bounded contribution
 * with the DP aggregate's own transition function, on the release's grid:
 * at most dp_agg.max_rows_contributed rows for a count, the total clamped
 * to [l, u] for a sum, both for an average.  Level 2 keeps at most k of
 * each unit's groups, chosen uniformly at random with the CSPRNG
 * (unit_keep.c).  Level 3 adds the bounded contributions of each group
 * and releases them with noise calibrated to k groups of bounded
 * contributions (release.c; Wilson et al. 2020).  Without GROUP BY there
 * is one group: level 2 is left out.  With k = 1 (and no DISTINCT, ORDER
 * BY or FILTER inside a DP call, and hashable unit and keys), levels 1 and
 * 2 are fused into one aggregation by unit that keeps each unit's group of
 * smallest pseudorandom priority (unit_pick.c): no sort, no window.
 *
 * The unit of the relation read is the one declared on it or on an
 * ancestor, for a partition or inheritance child named directly as for
 * its parent (unit_catalog.c, which refuses two units meeting); the plan
 * guard checks that every DP aggregate over such rows is this rewrite's
 * (plan_units.c).  Rows whose unit is NULL belong to no unit and are left out:
 * no release depends on them, so they need no protection.  The relation
 * may be read through views, sub-queries and CTEs, and joined to lookup
 * tables (lookup_join.c): the unit is found through them (find_unit) and
 * level 1 reads the level's whole FROM clause, grouped by the unit.
 * TABLESAMPLE on the relation samples units (sample_units, unit_sample.c).
 * Other aggregates next to DP ones are refused (fail closed).  Then the
 * selection of private group keys is applied to the rewritten level 3
 * (selection.c), with k.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_aggregate.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parse_func.h"
#include "parser/parse_oper.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "catalog.h"
#include "compat.h"
#include "dp_calls.h"
#include "guard.h"
#include "guc.h"
#include "privacy_unit.h"
#include "protect.h"
#include "rewrite_nodes.h"
#include "sampling.h"
#include "selection.h"
#include "unit_catalog.h"

#define HINT_UNITS "See \"Privacy units\" in dp_agg's doc/units-and-groups.md."

/* the internal aggregates of the fused level 1 (k = 1, unit_pick.c) */
#define UNIT_PICK_PREFIX "unit_pick_bound_"

/* a macro, so that each message is a literal format string where it is raised */
#define refuse(message, detail) \
	ereport(ERROR, \
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED), \
			 errmsg(message), \
			 errdetail(detail), \
			 errhint(HINT_UNITS)))

/*
 * Do the rows read from the relation (with its descendants unless ONLY)
 * have a privacy unit, declared on it or on an ancestor (unit_catalog.c)?
 */
static bool
reads_unit(RangeTblEntry *rte)
{
	DpUnit		unit;

	return dp_unit_of_read(rte->relid, !rte->inh, &unit);
}

/* Does a row source (sub-query, view, CTE) read a relation with a unit? */
static bool
row_source_has_unit(Query *q)
{
	ListCell   *lc;

	foreach(lc, q->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		if (rte->rtekind == RTE_RELATION && reads_unit(rte))
			return true;
		if (rte->rtekind == RTE_SUBQUERY && row_source_has_unit(rte->subquery))
			return true;
	}
	foreach(lc, q->cteList)
	{
		if (row_source_has_unit(castNode(Query, lfirst_node(CommonTableExpr, lc)->ctequery)))
			return true;
	}
	return false;
}

/* ---------- what the rewrite needs to know ---------- */

typedef struct UnitRewrite
{
	Query	   *q;				/* the level with the DP aggregates */
	Oid			relid;			/* the relation with the unit it reads */
	Var		   *unit;			/* the unit column, at level 1 (and at q) */
	int			max_groups;		/* k */
	List	   *aggrefs;		/* the distinct DP Aggrefs of the level */
	List	   *group_exprs;	/* the grouped expressions, in groupClause order */
	int			ncols_l1;		/* columns of level 1 */
	bool		fused;			/* k = 1: levels 1 and 2 in one aggregation */
} UnitRewrite;

/* the DP calls of the level (dp_calls.c), which a rewrite can bound */
static List *
level_calls(Query *q)
{
	List	   *calls = dp_level_calls(q);
	ListCell   *lc;

	if (dp_level_has_other_aggregates(q, false))
		refuse("aggregates other than DP aggregates are not allowed with privacy units",
			   "With a privacy unit, rows are bounded per unit before the DP aggregates see them; another aggregate would see them unbounded.");
	foreach(lc, calls)
	{
		const DpCallInfo *info = dp_lookup_call(((Aggref *) lfirst(lc))->aggfnoid);

		if (info->lower_arg < 0 && info->kind != DP_COUNT && info->kind != DP_COUNT_STAR)
			refuse("DP aggregates without bounds are not supported with privacy units",
				   "Give the clamping bounds (NULL bounds of dp_percentile and dp_median are supported).");
	}
	return calls;
}

/*
 * The internal aggregate dp_agg_internal.<prefix><name> of a DP aggregate:
 * the same argument types, or with value_as_bytea the bounded contribution
 * (bytea) in place of the value.
 */
static Oid
internal_aggregate(Oid aggfnoid, const char *prefix, bool value_as_bytea)
{
	int			nargs;
	Oid		   *argtypes;
	Oid			oid;

	(void) get_func_signature(aggfnoid, &argtypes, &nargs);
	if (strcmp(prefix, UNIT_PICK_PREFIX) == 0)
	{
		/* the priority after the arguments of the DP aggregate */
		Oid		   *types = palloc(sizeof(Oid) * (nargs + 1));

		memcpy(types, argtypes, sizeof(Oid) * nargs);
		types[nargs++] = INT8OID;
		argtypes = types;
	}
	else if (value_as_bytea)
	{
		Oid		   *types = palloc(sizeof(Oid) * (nargs + 1));

		/* dp_count(*) and dp_count(value) both become (bytea) */
		types[0] = BYTEAOID;
		for (int i = 1; i < nargs; i++)
			types[i] = argtypes[i];
		argtypes = types;
		nargs = Max(nargs, 1);
	}
	oid = dp_internal_function(psprintf("%s%s", prefix, get_func_name(aggfnoid)), nargs, argtypes,
							   true);
	if (!OidIsValid(oid))
		elog(ERROR, "dp_agg: internal aggregate %s%s is missing", prefix, get_func_name(aggfnoid));
	return oid;
}

static TargetEntry *
tle(Expr *expr, int resno, const char *name, Index sortgroupref)
{
	TargetEntry *t = makeTargetEntry(expr, (AttrNumber) resno, pstrdup(name), false);

	t->ressortgroupref = sortgroupref;
	return t;
}

/* a SortGroupClause on the unit column, with its type's default operators */
static SortGroupClause *
unit_group_clause(Var *unit, Index ref)
{
	SortGroupClause *gc = makeNode(SortGroupClause);
	Oid			sortop,
				eqop;
	bool		hashable;

	get_sort_group_operators(unit->vartype, false, true, false,
							 &sortop, &eqop, NULL, &hashable);
	gc->tleSortGroupRef = ref;
	gc->eqop = eqop;
	gc->sortop = sortop;
	gc->nulls_first = false;
	gc->hashable = hashable;
	return gc;
}

/* ---------- level 1: per (unit, group) ---------- */

/*
 * Level 1 reading the rows of non-NULL unit of the level's FROM clause (the
 * relation, or a row source, joined to lookup tables), with no columns
 * yet.  It takes the level's range table, joins, WHERE and CTEs as they
 * are, so the level's expressions mean the same in it; the level then
 * reads level 1 (or 2) only.
 */
static Query *
level1_scan(UnitRewrite *ur)
{
	Query	   *q = ur->q;
	Query	   *l1 = dp_new_select();
	NullTest   *nt = makeNode(NullTest);

	l1->rtable = q->rtable;
#ifdef DP_HAVE_RTEPERMINFO
	l1->rteperminfos = q->rteperminfos;
#endif
	l1->cteList = q->cteList;
	q->cteList = NIL;
	l1->hasRowSecurity = q->hasRowSecurity;
	nt->arg = (Expr *) copyObject(ur->unit);
	nt->nulltesttype = IS_NOT_NULL;
	nt->argisrow = false;
	nt->location = -1;
	l1->jointree = makeFromExpr(q->jointree->fromlist,
								make_and_qual(q->jointree->quals, (Node *) nt));
	l1->hasAggs = true;
	return l1;
}

static Query *
make_level1(UnitRewrite *ur)
{
	Query	   *q = ur->q;
	Query	   *l1 = level1_scan(ur);
	int			resno = 0;
	ListCell   *lc;

	/* the unit first: a sorted level 1 then feeds level 2 in order */
	l1->targetList = lappend(l1->targetList, tle((Expr *) ur->unit, ++resno, "unit", 1));
	l1->groupClause = lappend(l1->groupClause, unit_group_clause(ur->unit, 1));
	foreach(lc, q->groupClause)
	{
		SortGroupClause *gc = copyObject(lfirst_node(SortGroupClause, lc));
		Expr	   *e = copyObject(get_sortgroupref_tle(gc->tleSortGroupRef, q->targetList)->expr);

		ur->group_exprs = lappend(ur->group_exprs, copyObject(e));
		resno++;
		gc->tleSortGroupRef = resno;
		l1->targetList = lappend(l1->targetList, tle(e, resno, psprintf("g%d", resno - 1), resno));
		l1->groupClause = lappend(l1->groupClause, gc);
	}
	foreach(lc, ur->aggrefs)
	{
		Aggref	   *a = copyObject(lfirst_node(Aggref, lc));

		a->aggfnoid = internal_aggregate(a->aggfnoid, "unit_bound_", false);
		a->aggtype = BYTEAOID;
		a->location = DP_UNIT_LOCATION;
		resno++;
		l1->targetList = lappend(l1->targetList, tle((Expr *) a, resno, psprintf("c%d", resno), 0));
	}
	ur->ncols_l1 = resno;
	return l1;
}

/* ---------- levels 1 and 2 fused, for k = 1 (unit_pick.c) ---------- */

/* dp_agg_internal.unit_priority(unit, keys...) over the columns of level 1 */
static Expr *
priority_expr(UnitRewrite *ur, List *keys)
{
	FuncExpr   *f = makeNode(FuncExpr);

	f->funcid = dp_unit_priority_oid();
	f->funcresulttype = INT8OID;
	f->funcretset = false;
	f->funcvariadic = false;
	f->funcformat = COERCE_EXPLICIT_CALL;
	f->funccollid = InvalidOid;
	f->inputcollid = InvalidOid;
	f->args = lcons(copyObject(ur->unit), copyObject(keys));
	f->location = DP_UNIT_LOCATION;
	return (Expr *) f;
}

/* dp_agg_internal.unit_pick(key, p): the key of the unit's rows of smallest p */
static Aggref *
pick_key_aggref(Expr *key, Expr *priority)
{
	Aggref	   *a = makeNode(Aggref);

	a->aggfnoid = dp_unit_pick_oid();
	a->aggtype = exprType((Node *) key);
	a->aggcollid = exprCollation((Node *) key);
	a->inputcollid = exprCollation((Node *) key);
	a->aggtranstype = InvalidOid;
	a->aggargtypes = list_make2_oid(exprType((Node *) key), INT8OID);
	a->args = list_make2(makeTargetEntry(copyObject(key), 1, NULL, false),
						 makeTargetEntry(copyObject(priority), 2, NULL, false));
	a->aggkind = AGGKIND_NORMAL;
	a->aggsplit = AGGSPLIT_SIMPLE;
	a->aggno = -1;
	a->aggtransno = -1;
	a->location = DP_UNIT_LOCATION;
	return a;
}

/* dp_agg.unit_pick_bound_f(args of f..., p) in place of f(args...) */
static Aggref *
pick_bound_aggref(UnitRewrite *ur, Aggref *orig, Expr *priority)
{
	Aggref	   *a = copyObject(orig);

	a->aggfnoid = internal_aggregate(orig->aggfnoid, UNIT_PICK_PREFIX, false);
	a->aggtype = BYTEAOID;
	if (a->aggstar)
	{
		/* dp_count(*) becomes unit_pick_bound_dp_count(p) */
		a->aggstar = false;
		a->args = NIL;
		a->aggargtypes = NIL;
	}
	a->args = lappend(a->args, makeTargetEntry(copyObject(priority),
											   (AttrNumber) (list_length(a->args) + 1),
											   NULL, false));
	a->aggargtypes = lappend_oid(a->aggargtypes, INT8OID);
	a->location = DP_UNIT_LOCATION;
	return a;
}

/*
 * Level 1 grouped by the unit alone: each group key is dp_agg_internal.unit_pick of
 * the key, each contribution dp_agg.unit_pick_bound_f, with the same
 * priority; the columns are those of make_level1 (unit, keys,
 * contributions), so level 3 reads both alike.
 */
static Query *
make_level1_fused(UnitRewrite *ur)
{
	Query	   *q = ur->q;
	Query	   *l1 = level1_scan(ur);
	List	   *keys = NIL;
	Expr	   *priority;
	int			resno = 0;
	ListCell   *lc;

	l1->targetList = lappend(l1->targetList, tle((Expr *) ur->unit, ++resno, "unit", 1));
	l1->groupClause = list_make1(unit_group_clause(ur->unit, 1));
	foreach(lc, q->groupClause)
	{
		SortGroupClause *gc = lfirst_node(SortGroupClause, lc);
		Expr	   *e = copyObject(get_sortgroupref_tle(gc->tleSortGroupRef, q->targetList)->expr);

		ur->group_exprs = lappend(ur->group_exprs, copyObject(e));
		keys = lappend(keys, e);
	}
	priority = priority_expr(ur, keys);
	foreach(lc, keys)
	{
		resno++;
		l1->targetList = lappend(l1->targetList,
								 tle((Expr *) pick_key_aggref(lfirst(lc), priority), resno,
									 psprintf("g%d", resno - 1), 0));
	}
	foreach(lc, ur->aggrefs)
	{
		resno++;
		l1->targetList = lappend(l1->targetList,
								 tle((Expr *) pick_bound_aggref(ur, lfirst_node(Aggref, lc), priority),
									 resno, psprintf("c%d", resno), 0));
	}
	ur->ncols_l1 = resno;
	return l1;
}

/* a type whose values the priority can hash, with equality as GROUP BY's */
static bool
pickable_type(Oid type, Oid collation)
{
	TypeCacheEntry *tc = lookup_type_cache(type, TYPECACHE_HASH_EXTENDED_PROC);

	if (!OidIsValid(tc->hash_extended_proc))
		return false;
	return !OidIsValid(collation) || get_collation_isdeterministic(collation);
}

/*
 * The fused path computes exactly what levels 1 and 2 compute with k = 1:
 * a uniform choice of one group per unit, then its bounded contribution.
 * Not with DISTINCT, ORDER BY or FILTER inside a DP call (the choice must
 * see every row of the unit, the contribution only some), nor for a unit
 * or key the priority cannot hash consistently with GROUP BY's equality,
 * nor for a volatile key (the key and its priority would be computed from
 * different evaluations).
 */
static bool
can_fuse(UnitRewrite *ur)
{
	ListCell   *lc;

	if (ur->max_groups != 1 || ur->q->groupClause == NIL ||
		!OidIsValid(dp_unit_pick_oid()) || !OidIsValid(dp_unit_priority_oid()))
		return false;
	foreach(lc, ur->aggrefs)
	{
		Aggref	   *a = lfirst_node(Aggref, lc);

		if (a->aggdistinct != NIL || a->aggorder != NIL || a->aggfilter != NULL)
			return false;
	}
	if (!pickable_type(ur->unit->vartype, ur->unit->varcollid))
		return false;
	foreach(lc, ur->q->groupClause)
	{
		SortGroupClause *gc = lfirst_node(SortGroupClause, lc);
		Node	   *e = (Node *) get_sortgroupref_tle(gc->tleSortGroupRef, ur->q->targetList)->expr;

		if (!gc->hashable || contain_volatile_functions(e) ||
			!pickable_type(exprType(e), exprCollation(e)))
			return false;
	}
	return true;
}

/* ---------- level 2: at most k groups per unit ---------- */

static Query *
make_level2(UnitRewrite *ur, Query *l1)
{
	Query	   *l2 = dp_new_select();
	WindowClause *wc = makeNode(WindowClause);
	WindowFunc *wf = makeNode(WindowFunc);
	ListCell   *lc;
	int			resno = 0;

	l2->rtable = list_make1(dp_subquery_rte(l1, "dp_unit_level1", true));
	l2->jointree = makeFromExpr(list_make1(makeNode(RangeTblRef)), NULL);
	linitial_node(RangeTblRef, l2->jointree->fromlist)->rtindex = 1;
	foreach(lc, l1->targetList)
	{
		TargetEntry *t = lfirst_node(TargetEntry, lc);
		Var		   *v = makeVarFromTargetEntry(1, t);

		resno++;
		l2->targetList = lappend(l2->targetList, tle((Expr *) v, resno, t->resname, resno == 1 ? 1 : 0));
	}

	wf->winfnoid = dp_unit_keep_oid();
	wf->wintype = BOOLOID;
	wf->args = list_make1(makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
									Int32GetDatum(ur->max_groups), false, true));
	wf->winref = 1;
	wf->location = DP_UNIT_LOCATION;
	l2->targetList = lappend(l2->targetList, tle((Expr *) wf, resno + 1, "keep", 0));

	wc->partitionClause = list_make1(unit_group_clause(ur->unit, 1));
	wc->frameOptions = FRAMEOPTION_DEFAULTS;
	wc->winref = 1;
	l2->windowClause = list_make1(wc);
	l2->hasWindowFuncs = true;
	return l2;
}

/* ---------- level 3: the release per group ---------- */

static int	list_index_of_aggref(List *aggrefs, Aggref *a);

typedef struct Level3Context
{
	UnitRewrite *ur;
} Level3Context;

static Node *
level3_mutator(Node *node, Level3Context *ctx)
{
	UnitRewrite *ur = ctx->ur;
	ListCell   *lc;
	int			i;

	if (node == NULL)
		return NULL;
	/* a grouped expression: a column of the level below */
	i = 0;
	foreach(lc, ur->group_exprs)
	{
		i++;
		if (equal(node, lfirst(lc)))
		{
			Expr	   *e = lfirst(lc);

			/* dp_agg_internal.unit_pick returns the key's type without its typmod */
			return (Node *) makeVar(1, (AttrNumber) (i + 1), exprType((Node *) e),
									ur->fused ? -1 : exprTypmod((Node *) e),
									exprCollation((Node *) e), 0);
		}
	}
	if (IsA(node, Aggref) && ((Aggref *) node)->agglevelsup == 0)
	{
		Aggref	   *a = (Aggref *) copyObject(node);
		int			col = list_index_of_aggref(ur->aggrefs, (Aggref *) node);
		Var		   *v = makeVar(1, (AttrNumber) (ur->ncols_l1 - list_length(ur->aggrefs) + col + 1),
								BYTEAOID, -1, InvalidOid, 0);
		TargetEntry *first = makeTargetEntry((Expr *) v, 1, NULL, false);

		a->aggfnoid = internal_aggregate(a->aggfnoid, "unit_release_", true);
		if (a->args == NIL)
		{
			a->args = list_make1(first);
			a->aggargtypes = list_make1_oid(BYTEAOID);
			a->aggstar = false;
		}
		else
		{
			linitial(a->args) = first;
			linitial_oid(a->aggargtypes) = BYTEAOID;
		}
		/* FILTER and DISTINCT were applied at level 1 */
		a->aggfilter = NULL;
		a->aggdistinct = NIL;
		a->aggorder = NIL;
		a->location = DP_UNIT_LOCATION;
		return (Node *) a;
	}
	if (IsA(node, Var) && ((Var *) node)->varlevelsup == 0)
		refuse("columns outside DP aggregates must be grouped with privacy units",
			   "With a privacy unit, only the GROUP BY expressions and DP aggregates are computed per group.");
	return expression_tree_mutator(node, level3_mutator, ctx);
}

/* index of an Aggref in the list (by equal()), 0-based */
static int
list_index_of_aggref(List *aggrefs, Aggref *a)
{
	int			i = 0;
	ListCell   *lc;

	foreach(lc, aggrefs)
	{
		if (equal(lfirst(lc), a))
			return i;
		i++;
	}
	elog(ERROR, "dp_agg: DP aggregate of a privacy unit rewrite not found");
	return -1;
}

/* k: the relation's max_groups_contributed, or the setting where allowed */
static int
effective_max_groups(UnitRewrite *ur, int catalog_k)
{
	int			k = dp_guc_max_groups_contributed;
	Oid			relid = ur->relid;
	Oid			denied;

	if (k == 0)
		return catalog_k;
	if (k > catalog_k && OidIsValid(denied = dp_untrusted_in_tree(relid, GetUserId())))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("dp_agg.max_groups_contributed %d exceeds the %d of relation \"%s\"",
						k, catalog_k, get_rel_name(relid)),
				 errdetail("Roles untrusted for the protected relation \"%s\" may lower the bounds of its privacy unit, not raise them.",
						   get_rel_name(denied)),
				 errhint("SET dp_agg.max_groups_contributed to at most %d, or to 0.", catalog_k)));
	return k;
}

/*
 * PostgreSQL 18 gives GROUP BY a range table entry of its own (RTE_GROUP):
 * in the target list and HAVING, a grouped expression is a Var of that
 * entry, whose groupexprs hold the expressions.  The rewrite matches the
 * grouped expressions themselves (level3_mutator), as parse analysis
 * produces them on 15-17, so the level is first given that shape: its
 * Vars of the GROUP entry are replaced by their expressions, and the entry
 * leaves the range table (the planner then treats the level as on 17).
 * flatten_group_exprs may be given no PlannerInfo when the query has no
 * grouping sets (its comment): the guard refuses them in a DP statement.
 * Returns the relation's range table index, which follows the entry's
 * removal.  A no-op before 18.
 */
static Index
flatten_group_rte(Query *q, Index rti)
{
#ifdef DP_HAVE_RTE_GROUP
	int			group_rti = 0;
	int			nrtes = list_length(q->rtable);

	if (!q->hasGroupRTE)
		return rti;
	if (q->groupingSets != NIL)
		elog(ERROR, "dp_agg: grouping sets in a privacy unit rewrite");
	q->targetList = (List *) flatten_group_exprs(NULL, q, (Node *) q->targetList);
	q->havingQual = flatten_group_exprs(NULL, q, q->havingQual);
	for (int i = 1; i <= nrtes; i++)
	{
		if (rt_fetch(i, q->rtable)->rtekind == RTE_GROUP)
			group_rti = i;
	}
	if (group_rti == 0)
		elog(ERROR, "dp_agg: GROUP range table entry not found");
	q->rtable = list_delete_nth_cell(q->rtable, group_rti - 1);
	/* nothing refers to the entry now: the ones after it move down by one */
	for (int i = group_rti + 1; i <= nrtes; i++)
		ChangeVarNodes((Node *) q, i, i - 1, 0);
	q->hasGroupRTE = false;
	if (rti > (Index) group_rti)
		rti--;
#endif
	return rti;
}

/* the unit column of the input of a query level */
typedef struct UnitSource
{
	Var		   *var;			/* the unit column, a Var of the level */
	Oid			relid;			/* the relation with the unit, below */
	DpUnit		unit;
} UnitSource;

/*
 * Can the sample of units hash the unit's values (unit_sample.c)
 * consistently with the equality level 1 groups them by (the type's
 * default, unit_group_clause): units equal under it must have equal
 * hashes, so that all rows of a unit are kept or dropped together.
 */
static bool
sampleable_type(Oid type, Oid collation)
{
	TypeCacheEntry *tc = lookup_type_cache(getBaseType(type),
										   TYPECACHE_HASH_OPFAMILY | TYPECACHE_HASH_EXTENDED_PROC);
	Oid			eqop;

	get_sort_group_operators(type, false, true, false, NULL, &eqop, NULL, NULL);
	if (!OidIsValid(tc->hash_extended_proc) || !OidIsValid(tc->hash_opf) ||
		!op_in_opfamily(eqop, tc->hash_opf))
		return false;
	return !OidIsValid(collation) || get_collation_isdeterministic(collation);
}

/*
 * The scan of a sample of units that reads only the rows of the units it
 * keeps (unit_sample.c, "Reading only the rows of the sample"): TABLESAMPLE
 * dp_agg_internal.unit_scan (percent, unit column), the column a constant
 * with the rewrite's mark; on a plain heap table without inheritance
 * children whose unit has a fixed length.  Elsewhere NULL: the condition
 * alone decides.
 */
static TableSampleClause *
unit_scan_clause(RangeTblEntry *rte, UnitSource *us, Node *percent)
{
	TableSampleClause *tsc;
	Const	   *attnum;
	HeapTuple	tup;
	bool		heap;

	if (!OidIsValid(dp_unit_scan_oid()) || get_typlen(us->var->vartype) <= 0 ||
		has_subclass(rte->relid))
		return NULL;
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(rte->relid));
	if (!HeapTupleIsValid(tup))
		return NULL;
	heap = ((Form_pg_class) GETSTRUCT(tup))->relkind == RELKIND_RELATION &&
		((Form_pg_class) GETSTRUCT(tup))->relam == HEAP_TABLE_AM_OID;
	ReleaseSysCache(tup);
	if (!heap)
		return NULL;
	attnum = makeConst(INT2OID, -1, InvalidOid, sizeof(int16),
					   Int16GetDatum(us->var->varattno), false, true);
	attnum->location = DP_UNIT_LOCATION;
	tsc = makeNode(TableSampleClause);
	tsc->tsmhandler = dp_unit_scan_oid();
	tsc->args = list_make2(copyObject(percent), attnum);
	tsc->repeatable = NULL;
	return tsc;
}

/*
 * TABLESAMPLE on the relation with the unit, in a level q of the input of
 * the DP aggregates (doc/sampling.md, "Subsampling").
 * dp_agg.secure_bernoulli, and BERNOULLI without REPEATABLE, sample units: the
 * clause leaves the relation, whose rows the level keeps when their unit is in
 * the sample of the execution, dp_agg_internal.unit_sampled(unit, percent, method), a
 * conjunct of its WHERE, which the planner puts in each scan of the
 * relation (each partition's).  Pricing finds it there and amplifies the
 * releases at the level of units (sampling.c).  Where it can, the clause
 * is replaced by TABLESAMPLE dp_agg_internal.unit_scan, which hands over
 * only the rows the condition keeps (unit_scan_clause).  REPEATABLE and SYSTEM keep
 * sampling rows and pages as they do without a unit: each row's inclusion
 * depends on no other row, so the releases are DP over units without
 * amplification (priced as if the relation were read whole); other
 * methods are refused when the statement is priced.
 */
static void
sample_units(Query *q, RangeTblEntry *rte, UnitSource *us)
{
	TableSampleClause *tsc = rte->tablesample;
	FuncExpr   *f;
	int			method;

	if (dp_is_secure_bernoulli(tsc->tsmhandler))
		method = DP_UNIT_SAMPLE_SECURE_BERNOULLI;
	else if (tsc->tsmhandler == F_BERNOULLI && tsc->repeatable == NULL)
		method = DP_UNIT_SAMPLE_BERNOULLI;
	else
		return;
	if (!OidIsValid(dp_unit_sampled_oid()))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("sampling privacy units needs version 0.4 of the dp_agg objects"),
				 errdetail("The function dp_agg_internal.unit_sampled is missing."),
				 errhint("Run ALTER EXTENSION dp_agg UPDATE.")));
	if (!sampleable_type(us->var->vartype, us->var->varcollid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("TABLESAMPLE cannot sample the privacy units of relation \"%s\"",
						get_rel_name(rte->relid)),
				 errdetail("A sample of units hashes each unit, and the type %s of its unit column \"%s\" has no hash function that agrees with its equality (or a nondeterministic collation).",
						   format_type_be(us->var->vartype), us->unit.column),
				 errhint("Use a unit column of a type with a hash operator class, with a deterministic collation, or TABLESAMPLE ... REPEATABLE, which samples rows without amplification.")));
	f = makeNode(FuncExpr);
	f->funcid = dp_unit_sampled_oid();
	f->funcresulttype = BOOLOID;
	f->funcretset = false;
	f->funcvariadic = false;
	f->funcformat = COERCE_EXPLICIT_CALL;
	f->funccollid = InvalidOid;
	f->inputcollid = us->var->varcollid;
	f->args = list_make3(copyObject(us->var), copyObject(linitial(tsc->args)),
						 makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
								   Int32GetDatum(method), false, true));
	f->location = DP_UNIT_LOCATION;
	q->jointree->quals = make_and_qual(q->jointree->quals, (Node *) f);
	rte->tablesample = unit_scan_clause(rte, us, linitial(tsc->args));
}

/* ---------- the unit through sub-queries, views and CTEs ---------- */

static bool find_unit(Query *q, Index rti, UnitSource *us, bool modify);

/* the CTE a reference of this level names */
static CommonTableExpr *
cte_of(Query *q, RangeTblEntry *rte)
{
	ListCell   *lc;

	foreach(lc, q->cteList)
	{
		CommonTableExpr *cte = lfirst_node(CommonTableExpr, lc);

		if (strcmp(cte->ctename, rte->ctename) == 0)
			return cte;
	}
	elog(ERROR, "dp_agg: CTE \"%s\" not found", rte->ctename);
	return NULL;
}

/*
 * A CTE that the DP aggregates read becomes the sub-query it stands for,
 * as the planner would inline it (inline_cte): only one read, not
 * MATERIALIZED, nothing volatile.  Otherwise the planner would scan it as
 * a materialized CTE, which the plan guard refuses as the input of DP
 * aggregates: refused here, saying what to write.
 */
static void
inline_cte(Query *q, RangeTblEntry *rte)
{
	CommonTableExpr *cte = cte_of(q, rte);

	if (cte->cterefcount != 1 || cte->ctematerialized == CTEMaterializeAlways ||
		contain_volatile_functions(cte->ctequery))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("CTE \"%s\" over a relation with a privacy unit must be read once, not MATERIALIZED",
						cte->ctename),
				 errdetail("The DP aggregates must read the rows of the relation with the unit as they come, to bound each unit's contribution."),
				 errhint("Read the CTE once in the statement, without MATERIALIZED or volatile functions, or write it as a sub-query in FROM.")));
	rte->rtekind = RTE_SUBQUERY;
	rte->subquery = copyObject(castNode(Query, cte->ctequery));
	rte->security_barrier = false;
	rte->ctename = NULL;
	rte->ctelevelsup = 0;
	rte->self_reference = false;
	rte->coltypes = NIL;
	rte->coltypmods = NIL;
	rte->colcollations = NIL;
	cte->cterefcount--;
}

/*
 * The output column of a row source that is the unit (a Var of it): an
 * output column that is that Var, else a new one, before the resjunk
 * columns (ORDER BY), which the level above never reads.  Returns its
 * number.
 */
static AttrNumber
expose_unit(Query *sub, RangeTblEntry *rte, Var *unit)
{
	AttrNumber	resno = 1;
	ListCell   *lc;
	TargetEntry *t;

	foreach(lc, sub->targetList)
	{
		t = lfirst_node(TargetEntry, lc);
		if (!t->resjunk && equal(t->expr, unit))
			return t->resno;
		if (!t->resjunk)
			resno = t->resno + 1;
	}
	foreach(lc, sub->targetList)
	{
		t = lfirst_node(TargetEntry, lc);
		if (t->resjunk)
			t->resno++;
	}
	t = makeTargetEntry((Expr *) copyObject(unit), resno, pstrdup("dp_unit"), false);
	sub->targetList = list_insert_nth(sub->targetList, resno - 1, t);
	rte->eref->colnames = lappend(rte->eref->colnames, makeString(pstrdup("dp_unit")));
	return resno;
}

/*
 * The privacy unit of the input rti of query level q: of a relation read
 * there, or found through a sub-query, view or CTE that reads it row by
 * row (the guard checked that they do: no aggregation, DISTINCT, window,
 * LIMIT or set operation below the DP aggregates), the relation possibly
 * joined to lookup tables (lookup_join.c) at each level.  Each row of such
 * a row source comes from one row of the relation, so the unit is a column
 * of it: the rewrite adds it to the row source's output if it is not
 * there.  With modify false, only says whether there is a unit.
 */
static bool
find_unit(Query *q, Index rti, UnitSource *us, bool modify)
{
	RangeTblEntry *rte = rt_fetch(rti, q->rtable);
	Query	   *sub;
	RangeTblRef *ref;
	UnitSource	inner;
	AttrNumber	resno;

	switch (rte->rtekind)
	{
		case RTE_RELATION:
			{
				Oid			type;
				int32		typmod;
				Oid			collation;

				if (!dp_unit_of_read(rte->relid, !rte->inh, &us->unit))
					return false;
				us->relid = rte->relid;
				get_atttypetypmodcoll(rte->relid, us->unit.attnum, &type, &typmod, &collation);
				us->var = makeVar(rti, us->unit.attnum, type, typmod, collation, 0);
				if (modify && rte->tablesample != NULL)
					sample_units(q, rte, us);
				return true;
			}
		case RTE_CTE:
			if (rte->ctelevelsup != 0)
				return false;	/* refused by the guard */
			if (!modify)
			{
				sub = castNode(Query, cte_of(q, rte)->ctequery);
				ref = dp_guard_fact(sub);
				return ref != NULL && find_unit(sub, ref->rtindex, us, false);
			}
			{
				Query	   *cq = castNode(Query, cte_of(q, rte)->ctequery);
				RangeTblRef *cref = dp_guard_fact(cq);

				if (cref == NULL || !find_unit(cq, cref->rtindex, &inner, false))
					return false;
			}
			inline_cte(q, rte);
			/* FALLTHROUGH */
		case RTE_SUBQUERY:
			sub = rte->subquery;
			ref = dp_guard_fact(sub);
			if (ref == NULL || !find_unit(sub, ref->rtindex, &inner, modify))
				return false;
			*us = inner;
			if (!modify)
				return true;
			resno = expose_unit(sub, rte, inner.var);
			us->var = makeVar(rti, resno, inner.var->vartype, inner.var->vartypmod,
							  inner.var->varcollid, 0);
			return true;
		default:
			return false;
	}
}

/* Rewrite the level with the DP aggregates, whose input has the unit us. */
static void
rewrite_level(Query *q, UnitSource *us)
{
	UnitRewrite ur;
	Query	   *l1;
	Query	   *source;

	memset(&ur, 0, sizeof(ur));
	ur.q = q;
	ur.relid = us->relid;
	ur.unit = us->var;
	ur.max_groups = effective_max_groups(&ur, us->unit.max_groups);
	ur.aggrefs = level_calls(q);

	ur.fused = can_fuse(&ur);
	if (ur.fused)
		source = l1 = make_level1_fused(&ur);
	else
	{
		l1 = make_level1(&ur);
		source = q->groupClause != NIL ? make_level2(&ur, l1) : l1;
	}

	{
		Level3Context ctx = {&ur};
		Node	   *keep = NULL;

		q->targetList = (List *) level3_mutator((Node *) q->targetList, &ctx);
		q->havingQual = level3_mutator(q->havingQual, &ctx);
		if (source != l1)
			keep = (Node *) makeVar(1, (AttrNumber) (ur.ncols_l1 + 1), BOOLOID, -1, InvalidOid, 0);
		q->rtable = list_make1(dp_subquery_rte(source, source == l1 ? "dp_unit_level1" : "dp_unit_level2", true));
#ifdef DP_HAVE_RTEPERMINFO
		q->rteperminfos = NIL;
#endif
		q->jointree = makeFromExpr(list_make1(makeNode(RangeTblRef)), keep);
		linitial_node(RangeTblRef, q->jointree->fromlist)->rtindex = 1;
	}
	/* one input row of q per (unit, group) kept: dp_select counts units */
	dp_selection_rewrite(q, ur.max_groups);
}


/*
 * Find the query level with the DP aggregates (the guard has checked the
 * shape: each level above it reads one sub-query or CTE) and rewrite it if
 * its input has a privacy unit.
 */
static bool
rewrite_query(Query *q)
{
	RangeTblRef *ref = dp_guard_fact(q);
	ListCell   *lc;
	UnitSource	us;

	if (ref == NULL)
		return false;
	if (dp_level_has_calls(q))
	{
		if (!find_unit(q, ref->rtindex, &us, false))
		{
			if (row_source_has_unit(q))
				refuse("the privacy unit of the relation the DP aggregates read cannot be found",
					   "A sub-query, view or CTE between them hides the unit column.");
			return false;
		}
		(void) flatten_group_rte(q, 0);
		ref = dp_guard_fact(q);
		(void) find_unit(q, ref->rtindex, &us, true);
		rewrite_level(q, &us);
		return true;
	}
	if (rt_fetch(ref->rtindex, q->rtable)->rtekind == RTE_SUBQUERY &&
		rewrite_query(rt_fetch(ref->rtindex, q->rtable)->subquery))
		return true;
	foreach(lc, q->cteList)
	{
		if (rewrite_query(castNode(Query, lfirst_node(CommonTableExpr, lc)->ctequery)))
			return true;
	}
	return false;
}

/*
 * Rewrite a statement the guard accepted (hooks.c, after the guards,
 * before the planner) if its DP aggregates read a relation with a
 * privacy unit.  True if it did: the selection of group keys has then been
 * applied to its releases (level 3), and must not be applied again.
 */
bool
dp_privacy_unit_rewrite(Query *query)
{
	if (query->commandType != CMD_SELECT && query->commandType != CMD_INSERT)
		return false;
	if (!dp_query_has_dp(query))
		return false;
	return rewrite_query(query);
}
