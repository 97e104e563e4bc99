/*-------------------------------------------------------------------------
 *
 * key_list.c
 *	  Lists of keys in a statement: a join of the rows to a VALUES list or
 *	  to unnest(ARRAY[...]) of constants.
 *
 * doc/units-and-groups.md, "Public group keys".  The SQL way to ask for every
 * key of a list, with the ones no row has too, is an outer join from the list:
 *
 *   SELECT k.dept, dp_count(v.*)
 *   FROM (VALUES ('cardiology'), ('oncology'), ('neurology')) k(dept)
 *   LEFT JOIN visits v ON v.dept = k.dept
 *   GROUP BY k.dept
 *
 * (or unnest(ARRAY[...]) AS k(dept), several columns, USING, RIGHT JOIN
 * with the list on the right, an inner or comma join).  In a DP statement
 * the list is the public domain of the GROUP BY (public_domain.c): every
 * listed key is released, a noisy zero where no row has it, and the rows
 * whose key is not listed are dropped, whatever the kind of join.  The
 * guard accepts no join (guard.c); so before it runs, this file rewrites
 * the level to read the rows alone, and returns the list:
 *
 *   - the list's columns joined to the rows by equalities (v.dept = k.dept,
 *     with the equality of the column's type) are matched to those row
 *     expressions, which replace them everywhere;
 *   - its other columns (a label beside a code) are placeholders
 *     dp_agg_internal.domain_key(NULL, NULL, column, NULL::type) that
 *     public_domain.c fills with the key of the group's index;
 *   - conditions on the list's columns alone select the listed keys (they
 *     are evaluated on each key, at planning), conditions on the rows
 *     alone are the rows' WHERE;
 *   - as under the join's equality, a row whose expression is NULL matches
 *     no key (a listed NULL is released, empty).
 *
 * The keys must be constants of the statement (immutable expressions of
 * constants, no parameters): never a sub-query, a table or a function of
 * the rows.  Anything else is left to the guard, which refuses the join;
 * a list that is not constants, a list on the side a join does not
 * preserve, or one used inside a DP aggregate is an error that says what to
 * write.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "catalog.h"
#include "compat.h"
#include "key_list.h"

#define HINT_LIST "Write FROM (VALUES (key), ...) k(col) LEFT JOIN t ON t.col = k.col, or unnest(ARRAY[key, ...]) as the list."

/* a macro, so that each message is a literal format string where it is raised */
#define refuse(message, detail, hint) \
	ereport(ERROR, \
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED), \
			 errmsg(message), \
			 errdetail(detail), \
			 errhint(hint)))

/* ---------- the list's constants ---------- */

static Const *
fold(Node *node)
{
	Node	   *n = eval_const_expressions(NULL, copyObject(node));

	while (n != NULL && IsA(n, RelabelType))
		n = (Node *) ((RelabelType *) n)->arg;
	return n != NULL && IsA(n, Const) ? (Const *) n : NULL;
}

/* VALUES (...), ...: its rows, each a constant; false if one is not */
static bool
values_tuples(RangeTblEntry *rte, DpKeyList *kl)
{
	ListCell   *lc;

	kl->ncols = list_length(rte->coltypes);
	for (int i = 0; i < kl->ncols; i++)
		kl->types = lappend(kl->types,
							makeNullConst(list_nth_oid(rte->coltypes, i),
										  list_nth_int(rte->coltypmods, i),
										  list_nth_oid(rte->colcollations, i)));
	foreach(lc, rte->values_lists)
	{
		List	   *row = lfirst(lc);
		Const	  **t = palloc(sizeof(Const *) * kl->ncols);
		ListCell   *lc2;
		int			i = 0;

		if (list_length(row) != kl->ncols)
			return false;
		foreach(lc2, row)
		{
			Const	   *c = fold(lfirst(lc2));

			if (c == NULL || c->consttype != list_nth_oid(rte->coltypes, i))
				return false;
			t[i++] = c;
		}
		kl->tuples = lappend(kl->tuples, t);
	}
	return true;
}

/*
 * unnest(array) of constant arrays, several side by side (ROWS FROM, or
 * unnest(a, b)): the shorter ones padded with NULLs, as the executor does
 */
static bool
unnest_tuples(RangeTblEntry *rte, DpKeyList *kl)
{
	ListCell   *lc;
	int			n = 0;
	List	   *columns = NIL;	/* Const * lists, one per array */

	if (rte->funcordinality)
		return false;
	foreach(lc, rte->functions)
	{
		RangeTblFunction *rtf = lfirst(lc);
		FuncExpr   *f = (FuncExpr *) rtf->funcexpr;
		Const	   *arr;
		Oid			elem;
		int16		typlen;
		bool		typbyval;
		char		typalign;
		Datum	   *elems;
		bool	   *nulls;
		int			count;
		List	   *col = NIL;

		if (!IsA(f, FuncExpr) || f->funcid != F_UNNEST_ANYARRAY || list_length(f->args) != 1 ||
			(arr = fold(linitial(f->args))) == NULL || arr->constisnull)
			return false;
		elem = get_element_type(arr->consttype);
		if (!OidIsValid(elem) || type_is_rowtype(elem))
			return false;
		get_typlenbyvalalign(elem, &typlen, &typbyval, &typalign);
		deconstruct_array(DatumGetArrayTypeP(arr->constvalue), elem, typlen, typbyval, typalign,
						  &elems, &nulls, &count);
		for (int i = 0; i < count; i++)
			col = lappend(col, makeConst(elem, -1, arr->constcollid, typlen, elems[i], nulls[i],
										 typbyval));
		kl->types = lappend(kl->types, makeNullConst(elem, -1, arr->constcollid));
		columns = lappend(columns, col);
		n = Max(n, count);
	}
	kl->ncols = list_length(columns);
	for (int r = 0; r < n; r++)
	{
		Const	  **t = palloc(sizeof(Const *) * kl->ncols);
		int			i = 0;

		foreach(lc, columns)
		{
			List	   *col = lfirst(lc);

			t[i] = r < list_length(col) ? list_nth(col, r) : copyObject(list_nth(kl->types, i));
			i++;
		}
		kl->tuples = lappend(kl->tuples, t);
	}
	return true;
}

/* ---------- expressions of the level ---------- */

typedef struct Sides
{
	Index		list;
	Index		rows;
	bool		in_list;
	bool		in_rows;
	bool		other;
} Sides;

static bool
sides_walker(Node *node, Sides *s)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var) && ((Var *) node)->varlevelsup == 0)
	{
		Index		v = ((Var *) node)->varno;

		if (v == s->list)
			s->in_list = true;
		else if (v == s->rows)
			s->in_rows = true;
		else
			s->other = true;
		return false;
	}
	if (IsA(node, Query))
	{
		s->other = true;
		return false;
	}
	return expression_tree_walker(node, sides_walker, s);
}

/* the join's alias columns (USING, or a column named through the join) */
typedef struct Flatten
{
	Index		join;
	List	   *aliases;
	bool		failed;
} Flatten;

static Node *
flatten_mutator(Node *node, Flatten *f)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var) && ((Var *) node)->varlevelsup == 0 && ((Var *) node)->varno == (int) f->join)
	{
		Var		   *v = (Var *) node;

		if (v->varattno <= 0 || v->varattno > list_length(f->aliases))
		{
			f->failed = true;
			return node;
		}
		return flatten_mutator(copyObject(list_nth(f->aliases, v->varattno - 1)), f);
	}
	if (IsA(node, Query))
		return node;
	return expression_tree_mutator(node, flatten_mutator, f);
}

/* the list's columns in the level's output: their rows' expressions, or placeholders */
typedef struct Replace
{
	DpKeyList  *kl;
	Index		list;
	int			aggdepth;
} Replace;

static FuncExpr *
placeholder(DpKeyList *kl, int col)
{
	Const	   *type = list_nth(kl->types, col);
	FuncExpr   *f;

	f = makeFuncExpr(dp_domain_key_oid(), type->consttype,
					 list_make4(makeNullConst(BYTEAOID, -1, InvalidOid),
								makeNullConst(INT4OID, -1, InvalidOid),
								makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
										  Int32GetDatum(col), false, true),
								makeNullConst(type->consttype, -1, InvalidOid)),
					 type->constcollid, InvalidOid, COERCE_EXPLICIT_CALL);
	f->location = DP_DOMAIN_LOCATION;
	return f;
}

/*
 * Is node a placeholder of a listed column that is not matched to the rows
 * (made here, filled by public_domain.c)?  *col is the list's column.
 */
bool
dp_key_list_placeholder(Node *node, int *col)
{
	FuncExpr   *f;

	if (node == NULL || !IsA(node, FuncExpr))
		return false;
	f = (FuncExpr *) node;
	if (f->funcid != dp_domain_key_oid() || f->location != DP_DOMAIN_LOCATION ||
		list_length(f->args) != 4 || !IsA(linitial(f->args), Const) ||
		!((Const *) linitial(f->args))->constisnull || !IsA(lthird(f->args), Const))
		return false;
	*col = DatumGetInt32(((Const *) lthird(f->args))->constvalue);
	return true;
}

static Node *
replace_mutator(Node *node, Replace *r)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var) && ((Var *) node)->varlevelsup == 0 && ((Var *) node)->varno == (int) r->list)
	{
		int			col = ((Var *) node)->varattno - 1;

		if (col < 0 || col >= r->kl->ncols)
			refuse("a key list is used as a whole row",
				   "Its columns are keys of the GROUP BY; a whole row of it is not.", HINT_LIST);
		if (r->aggdepth > 0)
			refuse("columns of a key list are not allowed inside DP aggregates",
				   "A key list gives the groups of a DP statement: every listed key is released, and no row of it is counted.",
				   "Aggregate the rows' columns, and group by the list's.");
		if (r->kl->matched[col] != NULL)
			return copyObject(r->kl->matched[col]);
		return (Node *) placeholder(r->kl, col);
	}
	if (IsA(node, Aggref) && ((Aggref *) node)->agglevelsup == 0)
	{
		Node	   *result;

		r->aggdepth++;
		result = expression_tree_mutator(node, replace_mutator, r);
		r->aggdepth--;
		return result;
	}
	if (IsA(node, Query))
		return node;
	return expression_tree_mutator(node, replace_mutator, r);
}

/*
 * The level no longer has the outer join: no Var of it is made NULL by
 * one (varnullingrels), at any depth of sub-queries
 */
static bool
clear_nullingrels_walker(Node *node, int *depth)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
	{
		if (((Var *) node)->varlevelsup == (Index) *depth)
			DP_CLEAR_NULLINGRELS((Var *) node);
		return false;
	}
	if (IsA(node, Query))
	{
		bool		result;

		(*depth)++;
		result = query_tree_walker((Query *) node, clear_nullingrels_walker, depth, 0);
		(*depth)--;
		return result;
	}
	return expression_tree_walker(node, clear_nullingrels_walker, depth);
}

/* a condition on the list alone, on one of its keys: true, false or not a constant */
typedef struct OnKey
{
	Index		list;
	Const	  **tuple;
} OnKey;

static Node *
on_key_mutator(Node *node, OnKey *k)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var) && ((Var *) node)->varlevelsup == 0 && ((Var *) node)->varno == (int) k->list)
		return copyObject((Node *) k->tuple[((Var *) node)->varattno - 1]);
	return expression_tree_mutator(node, on_key_mutator, k);
}

static RangeTblEntry *
result_rte(void)
{
	RangeTblEntry *rte = makeNode(RangeTblEntry);

	rte->rtekind = RTE_RESULT;
	rte->eref = makeAlias("*RESULT*", NIL);
	return rte;
}

/* the conjuncts of quals, flattened */
static List *
conjuncts(Node *quals)
{
	List	   *result = NIL;
	ListCell   *lc;

	if (quals == NULL)
		return NIL;
	if (IsA(quals, BoolExpr) && ((BoolExpr *) quals)->boolop == AND_EXPR)
	{
		foreach(lc, ((BoolExpr *) quals)->args)
			result = list_concat(result, conjuncts(lfirst(lc)));
		return result;
	}
	return list_make1(quals);
}

/*
 * The VALUES list of (VALUES ...) AS k in a FROM: a sub-query that reads
 * it whole, its columns in order; NULL if rte is not one
 */
static RangeTblEntry *
values_of_subquery(RangeTblEntry *rte)
{
	Query	   *sub = rte->subquery;
	RangeTblEntry *v;
	ListCell   *lc;
	int			i = 0;

	if (rte->rtekind != RTE_SUBQUERY || sub == NULL || list_length(sub->rtable) != 1 ||
		sub->jointree == NULL || sub->jointree->quals != NULL ||
		list_length(sub->jointree->fromlist) != 1 || sub->hasAggs || sub->groupClause != NIL ||
		sub->distinctClause != NIL || sub->sortClause != NIL || sub->limitCount != NULL ||
		sub->limitOffset != NULL || sub->setOperations != NULL || sub->cteList != NIL)
		return NULL;
	v = linitial_node(RangeTblEntry, sub->rtable);
	if (v->rtekind != RTE_VALUES || list_length(sub->targetList) != list_length(v->coltypes))
		return NULL;
	foreach(lc, sub->targetList)
	{
		TargetEntry *t = lfirst(lc);

		i++;
		if (t->resjunk || !IsA(t->expr, Var) || ((Var *) t->expr)->varno != 1 ||
			((Var *) t->expr)->varattno != i || ((Var *) t->expr)->varlevelsup != 0)
			return NULL;
	}
	return v;
}

static bool
is_list_rte(RangeTblEntry *rte)
{
	return rte->rtekind == RTE_VALUES || rte->rtekind == RTE_FUNCTION ||
		values_of_subquery(rte) != NULL;
}

/*
 * If the level (a DP level with GROUP BY) joins its rows to a key list,
 * rewrite it to read the rows alone and return the list (the file's
 * comment); else NULL.
 */
DpKeyList *
dp_key_list_normalize(Query *q)
{
	List	   *from = q->jointree->fromlist;
	JoinExpr   *j = NULL;
	Index		a,
				b,
				list,
				rows;
	JoinType	jt = JOIN_INNER;
	RangeTblEntry *lrte;
	DpKeyList  *kl;
	List	   *conds;
	List	   *rowquals = NIL;
	List	   *keyquals = NIL;
	List	   *kept = NIL;
	ListCell   *lc;
	Replace		r;
	RangeTblRef *ref;

	if (q->groupClause == NIL || q->groupingSets != NIL || !OidIsValid(dp_domain_key_oid()))
		return NULL;
	if (list_length(from) == 1 && IsA(linitial(from), JoinExpr))
	{
		j = linitial_node(JoinExpr, from);
		if (!IsA(j->larg, RangeTblRef) || !IsA(j->rarg, RangeTblRef))
			return NULL;
		a = ((RangeTblRef *) j->larg)->rtindex;
		b = ((RangeTblRef *) j->rarg)->rtindex;
		jt = j->jointype;
	}
	else if (list_length(from) == 2 && IsA(linitial(from), RangeTblRef) &&
			 IsA(lsecond(from), RangeTblRef))
	{
		a = linitial_node(RangeTblRef, from)->rtindex;
		b = lsecond_node(RangeTblRef, from)->rtindex;
	}
	else
		return NULL;
	if (is_list_rte(rt_fetch(a, q->rtable)) == is_list_rte(rt_fetch(b, q->rtable)))
		return NULL;
	list = is_list_rte(rt_fetch(a, q->rtable)) ? a : b;
	rows = list == a ? b : a;
	lrte = rt_fetch(list, q->rtable);
	if (rt_fetch(rows, q->rtable)->rtekind != RTE_RELATION &&
		rt_fetch(rows, q->rtable)->rtekind != RTE_SUBQUERY)
		return NULL;
	if (lrte->lateral || rt_fetch(rows, q->rtable)->lateral)
		return NULL;

	kl = palloc0(sizeof(DpKeyList));
	if (!(lrte->rtekind == RTE_FUNCTION ? unnest_tuples(lrte, kl)
		  : values_tuples(lrte->rtekind == RTE_VALUES ? lrte : values_of_subquery(lrte), kl)))
		refuse("the keys of a key list must be constants",
			   "The keys of a GROUP BY whose domain is listed are released whatever the rows are: they must not come from the rows, a sub-query, a function or a parameter.",
			   HINT_LIST);
	if (jt == JOIN_FULL || (jt == JOIN_LEFT && list != a) || (jt == JOIN_RIGHT && list != b))
		refuse("a key list must be the side of the join that every key is kept from",
			   "Every listed key is released, and the rows whose key is not listed are dropped.",
			   HINT_LIST);
	kl->matched = palloc0(sizeof(Node *) * Max(kl->ncols, 1));

	/* the columns named through the join are the list's or the rows' */
	if (j != NULL && j->rtindex != 0)
	{
		Flatten		f = {j->rtindex, rt_fetch(j->rtindex, q->rtable)->joinaliasvars, false};

		q->targetList = (List *) flatten_mutator((Node *) q->targetList, &f);
		q->havingQual = flatten_mutator(q->havingQual, &f);
		q->jointree->quals = flatten_mutator(q->jointree->quals, &f);
		j->quals = flatten_mutator(j->quals, &f);
#ifdef DP_HAVE_RTE_GROUP
		/* the grouped expressions, which the target list names through it */
		foreach(lc, q->rtable)
		{
			RangeTblEntry *g = lfirst(lc);

			if (g->rtekind == RTE_GROUP)
				g->groupexprs = (List *) flatten_mutator((Node *) g->groupexprs, &f);
		}
#endif
		if (f.failed)
			elog(ERROR, "dp_agg: a column of a join with a key list has no alias");
	}

	conds = list_concat(conjuncts(j != NULL ? j->quals : NULL), conjuncts(q->jointree->quals));
	foreach(lc, conds)
	{
		Node	   *c = lfirst(lc);
		Sides		s = {list, rows, false, false, false};

		(void) sides_walker(c, &s);
		if (s.other)
			return NULL;
		if (s.in_list && s.in_rows)
		{
			OpExpr	   *op = (OpExpr *) c;
			Node	   *l,
					   *rr;
			Var		   *key = NULL;
			Node	   *expr = NULL;
			Sides		s2 = {list, rows, false, false, false};

			if (!IsA(c, OpExpr) || list_length(op->args) != 2)
				refuse("a key list is joined to the rows by equalities of its columns only",
					   "Each listed key is a group; the rows of a group are those whose expression equals the key.",
					   HINT_LIST);
			l = linitial(op->args);
			rr = lsecond(op->args);
			while (IsA(l, RelabelType))
				l = (Node *) ((RelabelType *) l)->arg;
			while (IsA(rr, RelabelType))
				rr = (Node *) ((RelabelType *) rr)->arg;
			if (IsA(l, Var) && ((Var *) l)->varno == (int) list)
			{
				key = (Var *) l;
				expr = lsecond(op->args);
			}
			else if (IsA(rr, Var) && ((Var *) rr)->varno == (int) list)
			{
				key = (Var *) rr;
				expr = linitial(op->args);
			}
			if (key != NULL)
				(void) sides_walker(expr, &s2);
			if (key == NULL || s2.in_list || key->varattno < 1 || key->varattno > kl->ncols)
				refuse("a key list is joined to the rows by equalities of its columns only",
					   "Each listed key is a group; the rows of a group are those whose expression equals the key.",
					   HINT_LIST);
			if (op->opno != lookup_type_cache(key->vartype, TYPECACHE_EQ_OPR)->eq_opr ||
				exprType(expr) != key->vartype)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("a key list is joined to the rows by the equality of its keys' type"),
						 errdetail("The keys have type %s, the expression they are joined to type %s.",
								   format_type_be(key->vartype), format_type_be(exprType(expr))),
						 errhint("Cast the keys of the list to the type of the rows' expression.")));
			if (kl->matched[key->varattno - 1] != NULL)
				refuse("a column of a key list is joined to the rows twice",
					   "Each listed key is a group; the rows of a group are those whose expression equals the key.",
					   HINT_LIST);
			kl->matched[key->varattno - 1] = expr;

			/*
			 * as the equality of the join, no row's NULL equals a key, a
			 * listed NULL too (which is then released empty)
			 */
			{
				NullTest   *nt = makeNode(NullTest);

				nt->arg = (Expr *) copyObject(expr);
				nt->nulltesttype = IS_NOT_NULL;
				nt->argisrow = false;
				nt->location = -1;
				rowquals = lappend(rowquals, nt);
			}
		}
		else if (s.in_list)
			keyquals = lappend(keyquals, c);
		else
			rowquals = lappend(rowquals, c);
	}

	/* conditions on the list alone select its keys */
	foreach(lc, kl->tuples)
	{
		OnKey		k = {list, lfirst(lc)};
		bool		keep = true;
		ListCell   *lc2;

		foreach(lc2, keyquals)
		{
			Const	   *v = fold(on_key_mutator(copyObject(lfirst(lc2)), &k));

			if (v == NULL || v->consttype != BOOLOID)
				refuse("a condition on a key list must be a constant for each key",
					   "Conditions on the listed keys alone choose the keys, at planning.",
					   HINT_LIST);
			keep = keep && !v->constisnull && DatumGetBool(v->constvalue);
		}
		if (keep)
			kept = lappend(kept, lfirst(lc));
	}
	kl->tuples = kept;

	/* the level reads the rows alone */
	r.kl = kl;
	r.list = list;
	r.aggdepth = 0;
	q->targetList = (List *) replace_mutator((Node *) q->targetList, &r);
	q->havingQual = replace_mutator(q->havingQual, &r);
#ifdef DP_HAVE_RTE_GROUP
	foreach(lc, q->rtable)
	{
		RangeTblEntry *g = lfirst(lc);

		if (g->rtekind == RTE_GROUP)
			g->groupexprs = (List *) replace_mutator((Node *) g->groupexprs, &r);
	}
#endif
	ref = makeNode(RangeTblRef);
	ref->rtindex = rows;
	q->jointree = makeFromExpr(list_make1(ref),
							   rowquals == NIL ? NULL : (Node *) make_ands_explicit(rowquals));
	list_nth_cell(q->rtable, list - 1)->ptr_value = result_rte();
	if (j != NULL && j->rtindex != 0)
		list_nth_cell(q->rtable, j->rtindex - 1)->ptr_value = result_rte();
	{
		int			depth = 0;

		(void) query_tree_walker(q, clear_nullingrels_walker, &depth, 0);
	}
	return kl;
}
