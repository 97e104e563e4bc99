/*-------------------------------------------------------------------------
 *
 * public_domain.c
 *	  Public domains of GROUP BY keys: every key released, no selection.
 *
 * doc/units-and-groups.md, "Public group keys".  A GROUP BY releases its keys;
 * private selection (selection.c) hides the keys that few units have.  When
 * the set of keys is public knowledge (written in the statement, declared by a
 * DBA, or derived from the statement's constants), there is nothing to
 * hide: a DP statement releases every key of that domain, with the noisy
 * values of its DP aggregates (a noisy zero when no row has the key),
 * drops the rows whose key is outside it, and pays no selection.
 *
 * Where a key's domain comes from, in this order:
 *   - a list of keys in the statement: a join of the rows to a VALUES list
 *     or unnest(ARRAY[...]) of constants (key_list.c, which rewrites the
 *     join away before the guards see the statement), or a conjunct of the
 *     WHERE  key = constant  or  key IN (constants);
 *   - a domain a DBA declared for the key expression of the relation read
 *     (domain_catalog.c), through views and sub-queries that read it row by
 *     row;
 *   - the statement's constants (bins.c): booleans, enums, width_bucket,
 *     date_trunc and integer bands over a range of the WHERE.
 * The domain of the level is the product of its keys' domains (or of the
 * listed tuples), at most dp_agg.max_public_keys keys; if a key has none,
 * the keys are selected privately.  A domain never depends on the rows:
 * its keys are constants of the statement (parameters are not constants
 * here: a prepared statement has the same domain in all its plans), of the
 * catalog when the statement is planned, or of the types; the key list
 * of a join must be constants, never a sub-query.
 *
 * The rewrite, for a level whose keys k1..km have the domain D of N keys:
 *
 *   SELECT k1, f(x) FROM t WHERE w GROUP BY k1, ..., km
 * becomes
 *   SELECT dp_agg_internal.domain_key(D, s.gi, 0, NULL::type of k1),
 *          f(s.x) FILTER (WHERE s.dom IS NULL)
 *   FROM (SELECT dp_agg_internal.domain_index(D, k1, ..., km) AS gi, NULL::boolean AS dom, x
 *         FROM t WHERE w
 *         UNION ALL
 *         SELECT g, true, NULL FROM generate_series(0, N - 1) g) s
 *   GROUP BY s.gi
 *   HAVING dp_agg_internal.dp_public(NULL::internal, s.dom, N) AND <the HAVING written>
 *
 * domain_index is the index of a row's key in D, NULL outside it
 * (keyset.c); the rows outside D form one group of NULL index, which
 * dp_public drops: it releases a group only if one of the domain's own
 * rows (dom true, one per key, from the constants) is in it, so the groups
 * released are exactly D whatever the rows are.  The domain's rows reach
 * no DP aggregate (the FILTER), so a key no row has releases the noise
 * alone, drawn as for any empty group.  The key released is D's own
 * constant, never a row's spelling of an equal value.  dp_public costs
 * nothing (release.c) and takes dp_select's place: the level gets no
 * private selection.  With a privacy unit, the rewrite of privacy units
 * (privacy_unit.c) runs between dp_domain_apply, which groups by the index
 * and keeps only the rows of D (so that each unit's k groups are groups of
 * D), and dp_domain_inject, which adds the domain's rows at level 3: each
 * unit still contributes to at most k groups, and every key is released.
 * Parallel plans append the domain's rows to the table's in one worker.
 *
 * Here: the levels of a statement and where each key's domain comes from;
 * the grouping by the index is domain_group.c, the domain's rows
 * domain_rows.c.
 *
 * The guard accepts such a level only in this shape (plan_guard.c): dp_public
 * in the qual of the aggregation, with this file's location, and the
 * domain's generate_series below it.
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
#include "dp_calls.h"
#include "compat.h"
#include "domain_catalog.h"
#include "guc.h"
#include "key_list.h"
#include "keyset.h"
#include "public_domain.h"
#include "unit_catalog.h"

/*
 * The domain of some columns of a level's key set: tuples of constants (a
 * key list's, or one key's alone); the domain is their product
 */
typedef struct Factor
{
	List	   *cols;			/* the key set's columns it gives, in order */
	List	   *tuples;			/* Const ** of list_length(cols) each */
} Factor;


DpDomainContext *dp_domain_current = NULL;

/* ---------- the levels of a statement ---------- */

void *
dp_domain_begin(void)
{
	DpDomainContext *saved = dp_domain_current;

	dp_domain_current = palloc0(sizeof(DpDomainContext));
	return saved;
}

void
dp_domain_end(void *saved)
{
	dp_domain_current = (DpDomainContext *) saved;
}

DpDomainLevel *
dp_domain_find_level(Query *q)
{
	ListCell   *lc;

	if (dp_domain_current == NULL)
		return NULL;
	foreach(lc, dp_domain_current->levels)
	{
		DpDomainLevel *l = lfirst(lc);

		if (l->q == q)
			return l;
	}
	return NULL;
}

static DpDomainLevel *
level_of(Query *q)
{
	DpDomainLevel *l = dp_domain_find_level(q);

	if (l == NULL)
	{
		l = palloc0(sizeof(DpDomainLevel));
		l->q = q;
		dp_domain_current->levels = lappend(dp_domain_current->levels, l);
	}
	return l;
}

/* a DP aggregate of this level that releases its groups */
static bool
dp_here(Query *q)
{
	ListCell   *lc;

	foreach(lc, dp_level_calls(q))
	{
		const DpCallInfo *info = dp_lookup_call(((Aggref *) lfirst(lc))->aggfnoid);

		if (info->unit == DP_UNIT_NONE && info->kind != DP_SELECT && info->kind != DP_PUBLIC)
			return true;
	}
	return false;
}

static bool
is_dp_level(Query *q)
{
	return q->commandType == CMD_SELECT &&
		dp_here(q);
}


/* fn on every query level of the statement, inner ones first */
void
dp_domain_walk_levels(Query *q, DpDomainLevelFn fn)
{
	ListCell   *lc;

	foreach(lc, q->cteList)
		dp_domain_walk_levels(castNode(Query, lfirst_node(CommonTableExpr, lc)->ctequery), fn);
	foreach(lc, q->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		if (rte->rtekind == RTE_SUBQUERY)
			dp_domain_walk_levels(rte->subquery, fn);
	}
	fn(q);
}

static void
prepare_level(Query *q)
{
	DpKeyList  *kl;

	if (q->groupClause == NIL || !is_dp_level(q))
		return;
	kl = dp_key_list_normalize(q);
	if (kl != NULL)
		level_of(q)->list = kl;
}

/*
 * Before the guards: the key lists of the statement's levels (key_list.c),
 * whose joins the guards would refuse.
 */
void
dp_domain_prepare(Query *query)
{
	if (dp_domain_current == NULL || query->commandType == CMD_UTILITY || !dp_extension_present())
		return;
	dp_domain_walk_levels(query, prepare_level);
}

/* ---------- small helpers ---------- */

static int
max_keys(void)
{
	return dp_guc_max_public_keys;
}

/* the conjuncts of quals, flattened */
List *
dp_domain_conjuncts(Node *quals)
{
	List	   *result = NIL;
	ListCell   *lc;

	if (quals == NULL)
		return NIL;
	if (IsA(quals, BoolExpr) && ((BoolExpr *) quals)->boolop == AND_EXPR)
	{
		foreach(lc, ((BoolExpr *) quals)->args)
			result = list_concat(result, dp_domain_conjuncts(lfirst(lc)));
		return result;
	}
	if (IsA(quals, List))
	{
		foreach(lc, (List *) quals)
			result = list_concat(result, dp_domain_conjuncts(lfirst(lc)));
		return result;
	}
	return list_make1(quals);
}

static Node *
strip(Node *node)
{
	while (node != NULL && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	return node;
}

/* Vars with the syntactic fields cleared, varno to 1: to compare expressions */
static Node *
normalize_mutator(Node *node, Index *varno)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var))
	{
		Var		   *v = (Var *) copyObject(node);

		if (v->varlevelsup == 0 && v->varno == (int) *varno)
			v->varno = 1;
		else if (v->varlevelsup == 0)
			v->varno = 0;		/* matches nothing */
		v->varnosyn = 0;
		v->varattnosyn = 0;
		v->location = -1;
		return (Node *) v;
	}
	return expression_tree_mutator(node, normalize_mutator, varno);
}

static Node *
normalize(Node *node, Index varno)
{
	return strip(normalize_mutator(node, &varno));
}


/* the default equality of a type (the GROUP BY's, checked by usable_key) */
static Oid
type_eq_opr(Oid type)
{
	return lookup_type_cache(type, TYPECACHE_EQ_OPR)->eq_opr;
}

/* ---------- where the level's rows come from ---------- */

/*
 * The relation a level reads row by row (directly, or through views and
 * sub-queries that read one relation each, with neither grouping, DISTINCT
 * nor LIMIT), the substitutions that map the level's expressions to the
 * relation's columns, and every conjunct of the WHERE of each of these
 * levels, mapped alike: all hold for every row the level aggregates.
 */
typedef struct Base
{
	Oid			relid;			/* InvalidOid: not one relation */
	Index		varno;			/* its range table index, innermost level */
	List	   *steps;			/* Substitute *, outermost first */
	List	   *quals;			/* conjuncts in the relation's terms, folded */
} Base;

typedef struct Substitute
{
	Query	   *sub;
	Index		rti;
	bool		failed;
} Substitute;

static Node *
substitute_mutator(Node *node, Substitute *s)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var) && ((Var *) node)->varlevelsup == 0 && ((Var *) node)->varno == (int) s->rti)
	{
		TargetEntry *tle;

		if (((Var *) node)->varattno <= 0 ||
			(tle = get_tle_by_resno(s->sub->targetList, ((Var *) node)->varattno)) == NULL)
		{
			s->failed = true;
			return node;
		}
		return copyObject((Node *) tle->expr);
	}
	if (IsA(node, Query) || IsA(node, SubLink))
	{
		s->failed = true;
		return node;
	}
	return expression_tree_mutator(node, substitute_mutator, s);
}

/* an expression of the level in the relation's terms, NULL if it has none */
static Node *
to_base(const Base *b, Node *expr)
{
	ListCell   *lc;
	Node	   *e = copyObject(expr);

	if (!OidIsValid(b->relid))
		return NULL;
	foreach(lc, b->steps)
	{
		Substitute *s = lfirst(lc);

		s->failed = false;
		e = substitute_mutator(e, s);
		if (s->failed)
			return NULL;
	}
	return e;
}

/* does q read one FROM item, row by row?  its item's index */
bool
dp_domain_row_source(Query *q, bool below, Index *rti)
{
	if (q->commandType != CMD_SELECT || q->setOperations != NULL ||
		list_length(q->jointree->fromlist) != 1 ||
		!IsA(linitial(q->jointree->fromlist), RangeTblRef))
		return false;
	if (below && (q->hasAggs || q->groupClause != NIL || q->distinctClause != NIL ||
				  q->limitCount != NULL || q->limitOffset != NULL || q->hasWindowFuncs ||
				  q->hasTargetSRFs || q->hasSubLinks))
		return false;
	*rti = linitial_node(RangeTblRef, q->jointree->fromlist)->rtindex;
	return true;
}

static Base
base_of(Query *q)
{
	Base		none = {InvalidOid, 0, NIL, NIL};
	Base		b = none;
	List	   *quals = dp_domain_conjuncts(q->jointree->quals);
	Query	   *cur = q;
	ListCell   *lc;

	for (;;)
	{
		RangeTblEntry *rte;
		Index		rti;
		Substitute *s;
		List	   *mapped = NIL;

		if (!dp_domain_row_source(cur, cur != q, &rti))
			return none;
		rte = rt_fetch(rti, cur->rtable);
		if (cur != q)
			quals = list_concat(quals, dp_domain_conjuncts(cur->jointree->quals));
		if (rte->rtekind == RTE_RELATION)
		{
			b.relid = rte->relid;
			b.varno = rti;
			break;
		}
		if (rte->rtekind != RTE_SUBQUERY)
			return none;
		s = palloc0(sizeof(Substitute));
		s->sub = rte->subquery;
		s->rti = rti;
		b.steps = lappend(b.steps, s);
		/* the quals gathered so far are in cur's terms: one step down */
		foreach(lc, quals)
		{
			s->failed = false;
			mapped = lappend(mapped, substitute_mutator(copyObject(lfirst(lc)), s));
			if (s->failed)
				return none;
		}
		quals = mapped;
		cur = rte->subquery;
	}
	foreach(lc, quals)
		b.quals = lappend(b.quals, dp_bins_simplify(lfirst(lc)));
	return b;
}

/* ---------- the domain of each key ---------- */

static Const *
fold_const(Node *node)
{
	Node	   *n = strip(dp_bins_simplify(node));

	return n != NULL && IsA(n, Const) ? (Const *) n : NULL;
}

/* a constant of the key's type (its typmod and collation), NULL if of another */
static Const *
as_key(Const *c, Node *key)
{
	Const	   *k;

	if (c->consttype != exprType(key))
		return NULL;
	k = copyObject(c);
	k->consttypmod = exprTypmod(key);
	k->constcollid = exprCollation(key);
	return k;
}

/*
 * key = constant, or key IN (constants) (key = ANY (array)), among the
 * conjuncts of the level's WHERE: the constants, without NULL (no row
 * passes with a NULL key); *which is the conjunct.
 */
static bool
listed_keys(Node *key, List *quals, List **keys, Node **which)
{
	Oid			type = exprType(key);
	Oid			eq = type_eq_opr(type);
	ListCell   *lc;

	foreach(lc, quals)
	{
		Node	   *q = lfirst(lc);

		if (IsA(q, OpExpr) && ((OpExpr *) q)->opno == eq &&
			list_length(((OpExpr *) q)->args) == 2)
		{
			OpExpr	   *op = (OpExpr *) q;
			Node	   *other = NULL;
			Const	   *c;

			if (equal(strip(linitial(op->args)), strip(key)))
				other = lsecond(op->args);
			else if (equal(strip(lsecond(op->args)), strip(key)))
				other = linitial(op->args);
			if (other == NULL || (c = fold_const(other)) == NULL || c->constisnull ||
				(c = as_key(c, key)) == NULL)
				continue;
			*keys = list_make1(c);
			*which = q;
			return true;
		}
		if (IsA(q, ScalarArrayOpExpr) && ((ScalarArrayOpExpr *) q)->useOr &&
			((ScalarArrayOpExpr *) q)->opno == eq &&
			equal(strip(linitial(((ScalarArrayOpExpr *) q)->args)), strip(key)))
		{
			Const	   *arr = fold_const(lsecond(((ScalarArrayOpExpr *) q)->args));
			Datum	   *elems;
			bool	   *nulls;
			int			n;
			int16		typlen;
			bool		typbyval;
			char		typalign;

			if (arr == NULL || arr->constisnull || get_element_type(arr->consttype) != type)
				continue;
			get_typlenbyvalalign(type, &typlen, &typbyval, &typalign);
			deconstruct_array(DatumGetArrayTypeP(arr->constvalue), type, typlen, typbyval,
							  typalign, &elems, &nulls, &n);
			*keys = NIL;
			for (int i = 0; i < n; i++)
				if (!nulls[i])
					*keys = lappend(*keys, makeConst(type, exprTypmod(key), exprCollation(key),
													 typlen, elems[i], false, typbyval));
			*which = q;
			return true;
		}
	}
	return false;
}

/* the declared domain of a key (domain_catalog.c), NIL if none */
static bool
declared_keys(const Base *b, Node *key, List **keys)
{
	Node	   *e;
	ListCell   *lc;

	if (!OidIsValid(b->relid) || !dp_any_declared_domain() || (e = to_base(b, key)) == NULL)
		return false;
	e = normalize(e, b->varno);
	foreach(lc, dp_declared_domains(b->relid))
	{
		DpDeclaredDomain *d = lfirst(lc);
		ListCell   *lc2;

		if (!equal(e, normalize(d->expr, 1)))
			continue;
		*keys = NIL;
		foreach(lc2, d->keys)
		{
			Const	   *c = as_key(lfirst(lc2), key);

			if (c == NULL)
				return false;
			*keys = lappend(*keys, c);
		}
		return true;
	}
	return false;
}

/* the keys of a domain without repeats, in their order */
static List *
distinct_keys(List *keys, Node *key)
{
	DpKeysetColumn col = {exprType(key), exprTypmod(key), exprCollation(key)};
	DpKeysetBuilder *b = dp_keyset_begin(1, 1, &col);
	DpKeyset   *ks;
	List	   *result = NIL;
	ListCell   *lc;
	int			dup;
	int			i = 0;

	foreach(lc, keys)
	{
		Const	   *c = lfirst(lc);

		dp_keyset_add(b, &c->constvalue, &c->constisnull);
	}
	ks = dp_keyset_open(dp_keyset_finish(b, &dup), CurrentMemoryContext);
	if (dup < 0)
		return keys;
	foreach(lc, keys)
	{
		Const	   *c = lfirst(lc);

		if (dp_keyset_lookup(ks, &c->constvalue, &c->constisnull) == i)
			result = lappend(result, c);
		i++;
	}
	return result;
}

/*
 * Can a GROUP BY key be in a key set: its grouping uses its type's default
 * equality (which the key set's lookup uses), and its type can be sent,
 * received and hashed, with a deterministic collation (keyset.c)?
 */
static bool
usable_key(Query *q, SortGroupClause *gc, Node *key)
{
	return gc->eqop == type_eq_opr(exprType(key)) && OidIsValid(gc->eqop) &&
		dp_keyset_type_ok(exprType(key), exprCollation(key));
}

/*
 * The domain of one key, as a list of constants; *listed is set when it
 * comes from the statement's list or a DBA (a domain too large is then an
 * error, not a private selection).
 */
static bool
key_domain(DpDomainLevel *l, const Base *b, List *quals, Node *key, List **keys,
		   const char **source, bool *listed)
{
	Node	   *which = NULL;
	Node	   *e;

	*listed = false;
	if (listed_keys(key, quals, keys, &which))
	{
		l->consumed = lappend(l->consumed, which);
		*keys = distinct_keys(*keys, key);
		*source = "list";
		*listed = true;
		return true;
	}
	if (declared_keys(b, key, keys))
	{
		*keys = distinct_keys(*keys, key);
		*source = "declared";
		*listed = true;
		return true;
	}
	/* derived from the statement's constants, in the relation's terms if it has one */
	e = to_base(b, key);
	if (e != NULL)
	{
		if (!dp_bins_domain(e, b->quals, max_keys(), keys, source))
			return false;
		if (!dp_bins_never_null(e, b->quals, b->relid, b->varno))
			*keys = lappend(*keys, makeNullConst(exprType(key), exprTypmod(key), exprCollation(key)));
	}
	else
	{
		List	   *folded = NIL;
		ListCell   *lc;

		foreach(lc, quals)
			folded = lappend(folded, dp_bins_simplify(lfirst(lc)));
		if (!dp_bins_domain(key, folded, max_keys(), keys, source))
			return false;
		if (!dp_bins_never_null(key, folded, InvalidOid, 0))
			*keys = lappend(*keys, makeNullConst(exprType(key), exprTypmod(key), exprCollation(key)));
	}
	/* the key's own typmod and collation */
	{
		ListCell   *lc;

		foreach(lc, *keys)
		{
			Const	   *c = lfirst(lc);

			c->consttypmod = exprTypmod(key);
			c->constcollid = exprCollation(key);
		}
	}
	return true;
}

/* ---------- the level's output ---------- */

Node *
dp_domain_replace_mutator(Node *node, DpDomainReplace *r)
{
	ListCell   *f,
			   *t;

	if (node == NULL)
		return NULL;
	forboth(f, r->from, t, r->to)
	{
		if (equal(node, lfirst(f)))
			return copyObject(lfirst(t));
	}
	if (IsA(node, Aggref) && ((Aggref *) node)->agglevelsup == 0)
		return node;
	return expression_tree_mutator(node, dp_domain_replace_mutator, r);
}

/* a Var of the level outside its aggregates? */
static bool
free_var_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
		return ((Var *) node)->varlevelsup == 0;
	if (IsA(node, Aggref) && ((Aggref *) node)->agglevelsup == 0)
		return false;
	if (IsA(node, Query))
		return false;
	return expression_tree_walker(node, free_var_walker, context);
}

/* placeholders of a key list (key_list.c) as NULL constants */
static Node *
placeholder_null_mutator(Node *node, void *context)
{
	int			col;

	if (node == NULL)
		return NULL;
	if (dp_key_list_placeholder(node, &col))
		return (Node *) makeNullConst(exprType(node), -1, InvalidOid);
	return expression_tree_mutator(node, placeholder_null_mutator, context);
}

/*
 * Does the level compute its output from its keys and aggregates only (not
 * from a column that depends on a grouped primary key, say)?
 */
static bool
output_from_keys(Query *q, List *keys)
{
	DpDomainReplace r = {keys, NIL};
	ListCell   *lc;

	foreach(lc, keys)
		r.to = lappend(r.to, makeNullConst(exprType(lfirst(lc)), -1, InvalidOid));
	return !free_var_walker(dp_domain_replace_mutator(placeholder_null_mutator((Node *) q->targetList, NULL), &r), NULL) &&
		!free_var_walker(dp_domain_replace_mutator(placeholder_null_mutator(q->havingQual, NULL), &r), NULL);
}

/* ---------- resolving a level ---------- */

/*
 * PostgreSQL 18 gives GROUP BY a range table entry of its own (RTE_GROUP),
 * whose Vars stand for the grouped expressions in the target list and
 * HAVING: put the expressions back in their place and drop the entry, so
 * that the level has the shape of 15-17 (as privacy_unit.c does before
 * its own rewrite; flatten_group_exprs takes no PlannerInfo without
 * grouping sets).  A no-op before 18.
 */
static void
flatten_group_rte(Query *q)
{
#ifdef DP_HAVE_RTE_GROUP
	int			group_rti = 0;
	int			nrtes = list_length(q->rtable);

	if (!q->hasGroupRTE || q->groupingSets != NIL)
		return;
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
	for (int i = group_rti + 1; i <= nrtes; i++)
		ChangeVarNodes((Node *) q, i, i - 1, 0);
	q->hasGroupRTE = false;
#endif
}

static void
too_many_keys(int64 n)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("the public domain of the GROUP BY keys has " INT64_FORMAT " keys, more than dp_agg.max_public_keys (%d)",
					n, dp_guc_max_public_keys),
			 errdetail("Every key of a public domain is released, each with the noise of its DP aggregates."),
			 errhint("SET dp_agg.max_public_keys to at least " INT64_FORMAT ", or list fewer keys.", n)));
}

/* the tuples of the product of the factors, into the key set */
static void
add_product(DpKeysetBuilder *b, List *factors, int f, Datum *values, bool *nulls)
{
	Factor	   *fa;
	ListCell   *lc;

	if (f == list_length(factors))
	{
		dp_keyset_add(b, values, nulls);
		return;
	}
	fa = list_nth(factors, f);
	foreach(lc, fa->tuples)
	{
		Const	  **t = lfirst(lc);
		int			i = 0;
		ListCell   *lc2;

		foreach(lc2, fa->cols)
		{
			values[lfirst_int(lc2)] = t[i]->constvalue;
			nulls[lfirst_int(lc2)] = t[i]->constisnull;
			i++;
		}
		add_product(b, factors, f + 1, values, nulls);
	}
}

/* the column of a key list that key is joined to, -1 if none */
static int
matched_column(DpKeyList *kl, Node *key)
{
	for (int c = 0; c < kl->ncols; c++)
		if (kl->matched[c] != NULL && equal(kl->matched[c], key))
			return c;
	return -1;
}

/*
 * A macro, so that each message is a literal format string where it is
 * raised: the primary message, then the detail's format and arguments.
 */
#define list_refused(message, ...) \
	ereport(ERROR, \
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED), \
			 errmsg(message), \
			 errdetail(__VA_ARGS__), \
			 errhint("Group by the list's columns, and give the other keys a public domain too, or group by the list's columns alone.")))

/* find the domain of a DP level with GROUP BY (the file's comment) */
static void
resolve_level(Query *q)
{
	DpDomainLevel *l;
	DpKeyList  *kl;
	List	   *keys = NIL;		/* the hashed keys: GROUP BY expressions */
	List	   *coltypes = NIL;	/* every column's type: Const NULLs */
	List	   *payload = NIL;	/* the key list's other columns grouped, list columns */
	List	   *factors = NIL;
	Factor	   *listfactor = NULL;
	List	   *quals;
	Base		b;
	ListCell   *lc;
	int64		n = 1;
	bool		listed = false;
	const char *source = NULL;
	DpKeysetBuilder *kb;
	DpKeysetColumn *cols;
	Datum	   *values;
	bool	   *nulls;
	int			dup;
	int			m;

	if (q->groupClause == NIL || q->groupingSets != NIL || !is_dp_level(q))
		return;
	if (!OidIsValid(dp_public_aggregate()) || !OidIsValid(dp_domain_index_oid()) ||
		!OidIsValid(dp_domain_key_oid()))
		return;					/* the SQL objects of 0.3: private selection */
	l = level_of(q);
	kl = l->list;
	flatten_group_rte(q);
	b = base_of(q);
	quals = dp_domain_conjuncts(q->jointree->quals);
	if (kl != NULL)
	{
		listfactor = palloc0(sizeof(Factor));
		factors = lappend(factors, listfactor);
		l->list_col = palloc(sizeof(int) * Max(kl->ncols, 1));
		for (int c = 0; c < kl->ncols; c++)
			l->list_col[c] = -1;
		listed = true;
		source = "list";
	}
	foreach(lc, q->groupClause)
	{
		SortGroupClause *gc = lfirst_node(SortGroupClause, lc);
		Node	   *key = (Node *) get_sortgroupclause_expr(gc, q->targetList);
		List	   *d;
		const char *s;
		bool		lst;
		int			c;
		Factor	   *f;

		if (kl != NULL && dp_key_list_placeholder(key, &c))
		{
			/* a listed column joined to no row expression: its value is the key's */
			if (!list_member_int(payload, c))
				payload = lappend_int(payload, c);
			continue;
		}
		if (!usable_key(q, gc, key))
		{
			if (kl != NULL)
				list_refused("a GROUP BY key of a statement with a key list cannot be listed",
							 "Keys of type %s cannot be in a public domain: they need binary send and receive functions, a hash operator class, and a deterministic collation.",
							 format_type_be(exprType(key)));
			l->consumed = NIL;
			return;
		}
		if (kl != NULL && (c = matched_column(kl, key)) >= 0)
		{
			if (l->list_col[c] < 0)
			{
				l->list_col[c] = list_length(keys);
				keys = lappend(keys, key);
				coltypes = lappend(coltypes, makeNullConst(exprType(key), exprTypmod(key),
														   exprCollation(key)));
			}
			continue;
		}
		if (!key_domain(l, &b, quals, key, &d, &s, &lst))
		{
			if (kl != NULL)
				list_refused("a GROUP BY key of a statement with a key list has no public domain",
							 "With a key list, every key of the list is released, so every key of the GROUP BY needs a public domain: the list, a list of its own, a domain declared by a DBA, or one derived from the statement's constants.");
			l->consumed = NIL;
			return;
		}
		listed |= lst;
		source = source == NULL ? s : psprintf("%s, %s", source, s);
		f = palloc0(sizeof(Factor));
		f->cols = list_make1_int(list_length(keys));
		{
			ListCell   *lc2;

			foreach(lc2, d)
			{
				Const	  **t = palloc(sizeof(Const *));

				t[0] = lfirst(lc2);
				f->tuples = lappend(f->tuples, t);
			}
		}
		factors = lappend(factors, f);
		keys = lappend(keys, key);
		coltypes = lappend(coltypes, makeNullConst(exprType(key), exprTypmod(key), exprCollation(key)));
	}
	if (kl != NULL)
	{
		int			hashed = 0;

		/* every listed column joined to the rows is a key: its rows are a group */
		for (int c = 0; c < kl->ncols; c++)
		{
			if (kl->matched[c] != NULL && l->list_col[c] < 0)
				list_refused("every column of a key list joined to the rows must be a GROUP BY key",
							 "Each listed key is a group: the rows whose expressions equal it.");
			if (l->list_col[c] >= 0)
				hashed++;
		}
		if (hashed == 0)
			list_refused("a key list must be joined to the rows",
						 "Each listed key is a group: the rows whose expressions equal it.");
		/* the list's columns, keys first, then its other columns the GROUP BY names */
		foreach(lc, payload)
		{
			int			c = lfirst_int(lc);
			l->list_col[c] = list_length(keys) + foreach_current_index(lc);
		}
		for (int c = 0; c < kl->ncols; c++)
			if (l->list_col[c] >= 0 && l->list_col[c] < list_length(keys))
				listfactor->cols = lappend_int(listfactor->cols, l->list_col[c]);
		foreach(lc, payload)
		{
			listfactor->cols = lappend_int(listfactor->cols, l->list_col[lfirst_int(lc)]);
			coltypes = lappend(coltypes, copyObject(list_nth(kl->types, lfirst_int(lc))));
		}
		foreach(lc, kl->tuples)
		{
			Const	  **lt = lfirst(lc);
			Const	  **t = palloc(sizeof(Const *) * Max(list_length(listfactor->cols), 1));
			int			i = 0;

			for (int c = 0; c < kl->ncols; c++)
				if (l->list_col[c] >= 0 && l->list_col[c] < list_length(keys))
					t[i++] = lt[c];
			{
				ListCell   *lc2;

				foreach(lc2, payload)
					t[i++] = lt[lfirst_int(lc2)];
			}
			listfactor->tuples = lappend(listfactor->tuples, t);
		}
	}
	foreach(lc, factors)
	{
		n *= Max(list_length(((Factor *) lfirst(lc))->tuples), 1);
		if (n > DP_KEYSET_MAX_KEYS)
			n = (int64) DP_KEYSET_MAX_KEYS + 1;
	}
	if (n > dp_guc_max_public_keys || list_length(coltypes) > 32)
	{
		l->consumed = NIL;
		if (listed)
			too_many_keys(n);
		return;
	}
	if (!output_from_keys(q, keys))
	{
		if (kl != NULL)
			list_refused("a statement with a key list may name the rows' columns only inside DP aggregates",
						 "Outside them, it releases the keys of its groups only.");
		l->consumed = NIL;
		return;
	}

	m = list_length(coltypes);
	cols = palloc(sizeof(DpKeysetColumn) * m);
	values = palloc(sizeof(Datum) * m);
	nulls = palloc(sizeof(bool) * m);
	for (int j = 0; j < m; j++)
	{
		Const	   *t = list_nth(coltypes, j);

		cols[j].type = t->consttype;
		cols[j].typmod = t->consttypmod;
		cols[j].collation = t->constcollid;
	}
	for (int j = list_length(keys); j < m; j++)
		if (!dp_keyset_type_ok(cols[j].type, cols[j].collation))
			list_refused("a column of a key list cannot be a GROUP BY key",
						 "Its type %s cannot be in a public domain.", format_type_be(cols[j].type));
	kb = dp_keyset_begin(m, list_length(keys), cols);
	add_product(kb, factors, 0, values, nulls);
	l->domain.nkeys = dp_keyset_count(kb);
	l->domain.keyset = makeConst(BYTEAOID, -1, InvalidOid, -1,
								 PointerGetDatum(dp_keyset_finish(kb, &dup)), false, false);
	if (dup >= 0)
	{
		if (kl == NULL)
			elog(ERROR, "dp_agg: a public domain repeats a key");
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a key list repeats a key"),
				 errdetail("Its key number %d equals an earlier one: each listed key is one group, and a row is in one group.", dup + 1),
				 errhint("List each key once.")));
	}
	if (l->domain.nkeys == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the public domain of the GROUP BY keys has no key"),
				 errdetail("Its keys are listed in the statement, and none is left."),
				 errhint("List at least one key.")));
	l->domain.keys = keys;
	l->domain.coltypes = coltypes;
	l->domain.source = source;
	l->public = true;
}

/*
 * After the guards: the public domain of each DP level with GROUP BY, if
 * its keys have one (the file's comment).
 */
void
dp_domain_resolve(Query *query)
{
	if (dp_domain_current == NULL || query->commandType == CMD_UTILITY)
		return;
	dp_domain_walk_levels(query, resolve_level);
}

/* the public domain of a query level, NULL if it has none */
const DpDomain *
dp_domain_of_level(Query *level)
{
	DpDomainLevel *l = dp_domain_find_level(level);

	return l != NULL && l->public ? &l->domain : NULL;
}

/* dp_agg_internal.dp_public(NULL::internal, dom, N) */
static Aggref *
make_public(int nkeys);

/*
 * The release call of a public domain of nkeys keys, for the ticket of a
 * statement that releases the domain's keys without it (a Citus
 * statement's, whose coordinator adds the empty keys: dist_exec.c)
 */
Aggref *
dp_domain_public_call(int nkeys)
{
	return make_public(nkeys);
}

static Aggref *
make_public(int nkeys)
{
	Aggref	   *a = makeNode(Aggref);

	a->aggfnoid = dp_public_aggregate();
	a->aggtype = BOOLOID;
	a->aggargtypes = list_make3_oid(INTERNALOID, BOOLOID, INT8OID);
	a->args = list_make3(makeTargetEntry((Expr *) makeConst(INTERNALOID, -1, InvalidOid,
															SIZEOF_DATUM, (Datum) 0, true, true),
										 1, NULL, false),
						 makeTargetEntry((Expr *) makeVar(1, 2, BOOLOID, -1, InvalidOid, 0),
										 2, NULL, false),
						 makeTargetEntry((Expr *) makeConst(INT8OID, -1, InvalidOid, sizeof(int64),
															Int64GetDatum(nkeys), false, FLOAT8PASSBYVAL),
										 3, NULL, false));
	/* the table's rows skip its transition (which counts only the domain's) */
	a->aggfilter = (Expr *) makeVar(1, 2, BOOLOID, -1, InvalidOid, 0);
	a->aggkind = AGGKIND_NORMAL;
	a->aggsplit = AGGSPLIT_SIMPLE;
	a->aggno = -1;
	a->aggtransno = -1;
	a->location = DP_DOMAIN_LOCATION;
	return a;
}

/* is this level's grouping a public domain's (selection.c skips it)? */
bool
dp_domain_level_public(Query *level)
{
	DpDomainLevel *l = dp_domain_find_level(level);

	return l != NULL && l->public;
}
