/*-------------------------------------------------------------------------
 *
 * row_seal.c
 *	  Plans whose row expressions cannot fail or report: the rewrite that
 *	  traps them, and the checks before the first row.
 *
 * doc/guard.md, "Protected tables", "Nothing on the row path can fail or
 * report".  A statement of a role untrusted for a protected relation is
 * planned as usual (its query checked by protect_guard.c); then, in the
 * finished plan (dp_row_seal_plan, from the planner hook, so that cached
 * plans keep it), in every expression that row_fields.c says a plan node
 * evaluates on rows (target lists, quals, join conditions, hash and merge
 * clauses and keys, Memoize keys, and the operands of index conditions,
 * which a nested loop evaluates for each outer row):
 *   - every call of an allowed built-in function (row_rules.c) that can
 *     fail goes through dp_agg_internal.row_call (row_trap.c): a FuncExpr gets the
 *     callee as its last argument, an operator node (OpExpr, DistinctExpr,
 *     NullIfExpr, ScalarArrayOpExpr) keeps its operator and calls the trap
 *     in place of the operator's function (a ScalarArrayOpExpr loses its
 *     hash table, which would call hash functions untrapped);
 *   - every expression that can fail otherwise than by a call (a cast
 *     through text or to a domain, an array cast, GREATEST and LEAST, a row
 *     comparison, a subscript, an ARRAY[] that nests or holds values of
 *     variable length) goes through dp_agg_internal.row_eval: its inputs are
 *     evaluated as before (each trapped in turn), and the expression itself,
 *     with Params in their place, is evaluated inside the trap;
 *   - the arguments of DP aggregates that set their noise (bounds, epsilon,
 *     delta) are left as they are: they are evaluated once, before any row
 *     (params.c);
 *   - below the DP aggregates, a built-in function that is not allowed is
 *     refused: the query's check saw the functions as written, this one
 *     sees them after the planner inlined SQL functions.
 * Calls of functions of the relation's owner (row-level security policies)
 * are left as they are; the analyst's own functions were refused.
 *
 * At executor start, before any row is read (dp_row_check_plan):
 *   - the plan must be sealed: an allowed call that can fail and is not
 *     trapped is refused (a plan made without this module's planner hook);
 *   - every expression field of every node is one row_fields.c knows: the
 *     fields evaluated once per scan (LIMIT, TABLESAMPLE, functions in
 *     FROM) may read no row, and a node type it does not know is refused;
 *   - what PostgreSQL would check when it builds the expressions (EXECUTE
 *     permission on the callees) is checked here, as the trap builds its
 *     callees at their first call, which only some rows would reach;
 *   - the comparisons the executor makes itself, outside any expression
 *     (grouping, hashing, sorting, joins, index scans), must be built-in C
 *     functions, and a collatable type must have a collation: without one
 *     they fail at their first call (row_compare.c);
 *   - every collation the plan uses is loaded (pg_newlocale_from_collation),
 *     so that an unavailable locale or a collation's version mismatch
 *     raises its error or warning now, not at the first row using it;
 *   - the work a row can cost is bounded (doc/guard.md, rule 6): expression
 *     nodes, bytes of constants and parameters, a regular expression's
 *     pattern counted DP_ROW_REGEX_WORK times, the output size of lpad and
 *     rpad; patterns with back-references are refused.
 * Index scans of protected relations use btree and hash indexes of built-in
 * operator families only (dp_row_seal_init's planner hook): other access
 * methods evaluate their operators inside the index, untrapped.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/nbtree.h"
#include "access/transam.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_am.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/plancat.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/pg_locale.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "access/detoast.h"
#include "catalog.h"
#include "dp_calls.h"
#include "compat.h"
#include "guc.h"
#include "params.h"
#include "plan_nodes.h"
#include "protect.h"
#include "row_compare.h"
#include "row_fields.h"
#include "row_rules.h"
#include "row_seal.h"

static get_relation_info_hook_type prev_relation_info_hook = NULL;

/* ---------- the rewrite ---------- */

typedef struct Seal
{
	Oid			row_call;		/* dp_agg_internal.row_call */
	Oid			row_eval;		/* dp_agg_internal.row_eval */
	Oid			relid;			/* the protected relation, for messages */
	bool		on_rows;		/* below, or in the arguments of, DP aggregates */
	bool		on_workers;		/* Citus fragments: refused, not trapped */
} Seal;

static Node *seal_mutator(Node *node, Seal *s);

/* A function's name in messages. */
static char *
function_name(Oid funcid)
{
	return format_procedure(funcid);
}

/* ERROR for a function on rows; detail: a literal */
#define refuse_function(s, funcid, detail) \
	ereport(ERROR, \
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE), \
			 errmsg("function %s is not allowed on the rows of protected relation \"%s\"", \
					function_name(funcid), get_rel_name((s)->relid)), \
			 errdetail(detail), \
			 errhint("See \"Protected tables\" in dp_agg's doc/guard.md for the functions allowed on rows.")))

static void
refuse_expression(Seal *s, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("%s on the rows of protected relation \"%s\" is not allowed", what,
					get_rel_name(s->relid)),
			 errdetail("It could fail for some rows, and its type or functions are not among those dp_agg evaluates safely."),
			 errhint("See \"Protected tables\" in dp_agg's doc/guard.md for what may be computed on rows.")));
}

/* Citus fragments run on the workers as signed: nothing traps them there */
static void
refuse_on_workers(Seal *s)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("an expression that can fail on rows is not supported over protected Citus table \"%s\"",
					get_rel_name(s->relid)),
			 errdetail("The workers evaluate the expressions of a DP statement on a Citus table, where a call that fails on a row is not turned into NULL: its error would tell whether such a row exists."),
			 errhint("Over a protected Citus table, compute on rows only what cannot fail (comparisons of columns with constants of their type, IS NULL, CASE over them), or query a local copy of the table.")));
}

/*
 * Should a call of funcid be trapped?  Allowed functions that can fail are;
 * below the DP aggregates, a built-in function that is not allowed, or one
 * in SQL the planner did not inline, is refused.  Other calls (the owner's
 * functions, post-processing of the released values) are left alone.
 */
static bool
trap_call(Seal *s, Oid funcid, List *args)
{
	DpRowRefusal r;

	if (funcid >= FirstNormalObjectId || funcid == s->row_call || funcid == s->row_eval)
		return false;
	r = dp_row_function_refusal(funcid);
	if (r == DP_ROW_ALLOWED && !dp_row_builtin_c(funcid))
		r = DP_ROW_NOT_TRAPPABLE;	/* a listed SQL function, not inlined */
	if (r != DP_ROW_ALLOWED)
	{
		if (s->on_rows)
		{
			if (r == DP_ROW_VOLATILE)
				refuse_function(s, funcid, "It is volatile: evaluated for each row, its side effects could count or show the rows.");
			else if (r == DP_ROW_NOT_TRAPPABLE)
				refuse_function(s, funcid, "It is not a plain built-in function that dp_agg can call safely (a function in SQL the planner did not inline, or one with settings of its own).");
			else
				refuse_function(s, funcid, "It is not among the functions allowed on rows.");
		}
		return false;
	}
	return !dp_row_never_fails(funcid, args);
}

/*
 * The soft version of an operator's function (dp_agg_internal.row_int4pl for
 * int4pl, row_trap.c), which returns NULL where the function fails; or
 * InvalidOid.  Only in operators: the operator keeps naming the function
 * whose permission is checked (check_walker).
 */
static Oid
soft_version(Oid funcid)
{
	const char *name = dp_row_soft_name(funcid);

	return name != NULL ? dp_row_function_oid(name) : InvalidOid;
}

/* f(args) as dp_agg_internal.row_call(args..., f) */
static Node *
wrap_call(Seal *s, FuncExpr *f)
{
	FuncExpr   *w = makeNode(FuncExpr);

	if (list_length(f->args) + 1 > FUNC_MAX_ARGS)
		refuse_function(s, f->funcid, "It has too many arguments to be called safely on rows.");
	*w = *f;
	w->funcid = s->row_call;
	w->args = lappend(list_copy(f->args),
					  makeConst(OIDOID, -1, InvalidOid, sizeof(Oid),
								ObjectIdGetDatum(f->funcid), false, true));
	return (Node *) w;
}

/* the inputs of an expression, hoisted out of it (wrap_eval) */
typedef struct Hoist
{
	List	   *inputs;
} Hoist;

static Node *
hoist_mutator(Node *node, Hoist *h)
{
	Param	   *p;

	if (node == NULL || IsA(node, Const))
		return node;
	if (IsA(node, List))
		return expression_tree_mutator(node, hoist_mutator, (void *) h);
	h->inputs = lappend(h->inputs, node);
	p = makeNode(Param);
	p->paramkind = PARAM_EXTERN;
	p->paramid = list_length(h->inputs);
	p->paramtype = exprType(node);
	p->paramtypmod = exprTypmod(node);
	p->paramcollid = exprCollation(node);
	p->location = -1;
	return (Node *) p;
}

/*
 * node as dp_agg_internal.row_eval(inputs..., 'node with Params for its inputs'):
 * its direct inputs (but constants, and an array cast's per-element
 * expression) are evaluated outside, the node itself inside the trap.
 */
static Node *
wrap_eval(Seal *s, Node *node)
{
	Hoist		h = {NIL};
	Node	   *template;
	FuncExpr   *w;
	int32		typmod = exprTypmod(node);

	if (IsA(node, ArrayCoerceExpr))
	{
		ArrayCoerceExpr *a = (ArrayCoerceExpr *) copyObject(node);

		a->arg = (Expr *) hoist_mutator((Node *) a->arg, &h);
		template = (Node *) a;
	}
	else
		template = expression_tree_mutator(node, hoist_mutator, (void *) &h);
	if (list_length(h.inputs) + 1 > FUNC_MAX_ARGS)
		refuse_expression(s, "an expression of so many values");
	w = makeFuncExpr(s->row_eval, exprType(node),
					 lappend(h.inputs,
							 makeConst(TEXTOID, -1, InvalidOid, -1,
									   CStringGetTextDatum(nodeToString(template)),
									   false, false)),
					 exprCollation(node), InvalidOid, COERCE_EXPLICIT_CALL);
	/* keep the type modifier (varchar(10), numeric(5, 2)) of the value */
	if (typmod >= 0)
		return (Node *) makeRelabelType((Expr *) w, exprType(node), typmod,
										exprCollation(node), COERCE_IMPLICIT_CAST);
	return (Node *) w;
}

/* are the calls of an expression (already sealed) allowed inside a trap? */
static bool
inner_refused_walker(Node *node, Seal *s)
{
	Oid			funcid = InvalidOid;

	if (node == NULL)
		return false;
	if (IsA(node, FuncExpr))
		funcid = ((FuncExpr *) node)->funcid;
	else if (IsA(node, OpExpr) || IsA(node, DistinctExpr) || IsA(node, NullIfExpr))
		funcid = ((OpExpr *) node)->opfuncid;
	else if (IsA(node, ScalarArrayOpExpr))
		funcid = ((ScalarArrayOpExpr *) node)->opfuncid;
	if (OidIsValid(funcid) && funcid != s->row_call && funcid != s->row_eval &&
		dp_row_function_refusal(funcid) != DP_ROW_ALLOWED)
		return true;
	return expression_tree_walker(node, inner_refused_walker, (void *) s);
}

/* The built-in subscripting of arrays and jsonb. */
static bool
subscript_ok(SubscriptingRef *r)
{
	HeapTuple	tup;
	Oid			handler;

	if (r->refassgnexpr != NULL)
		return false;
	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(r->refcontainertype));
	if (!HeapTupleIsValid(tup))
		return false;
	handler = ((Form_pg_type) GETSTRUCT(tup))->typsubscript;
	ReleaseSysCache(tup);
	return dp_row_builtin_c(handler);
}

/*
 * Does a node of this kind, other than a call, need the trap, and may it
 * have it?  *trap says whether it needs it; the result, whether its own
 * functions and types are among those the trap may run (else, on rows, it
 * is refused).
 */
static bool
eval_needed(Seal *s, Node *node, bool *trap)
{
	*trap = true;
	switch (nodeTag(node))
	{
		case T_CoerceViaIO:
			{
				CoerceViaIO *c = (CoerceViaIO *) node;

				return dp_row_type_io_ok(exprType((Node *) c->arg)) &&
					dp_row_type_io_ok(c->resulttype);
			}
		case T_CoerceToDomain:
			return dp_row_domain_ok(((CoerceToDomain *) node)->resulttype);
		case T_ArrayCoerceExpr:
			{
				ArrayCoerceExpr *a = (ArrayCoerceExpr *) node;

				return !inner_refused_walker((Node *) a->elemexpr, s) &&
					dp_row_type_io_ok(a->resulttype);
			}
		case T_MinMaxExpr:
			{
				MinMaxExpr *m = (MinMaxExpr *) node;

				return dp_row_comparable(m->minmaxtype);
			}
		case T_RowCompareExpr:
			{
				RowCompareExpr *r = (RowCompareExpr *) node;
				ListCell   *lc;

				foreach(lc, r->opnos)
					if (dp_row_function_refusal(get_opcode(lfirst_oid(lc))) != DP_ROW_ALLOWED ||
						!dp_row_builtin_c(get_opcode(lfirst_oid(lc))))
						return false;
				return true;
			}
		case T_SubscriptingRef:
			return subscript_ok((SubscriptingRef *) node);
		case T_ArrayExpr:
			{
				ArrayExpr  *a = (ArrayExpr *) node;

				/*
				 * fails when nested arrays' dimensions differ, or when the
				 * values exceed an array's size; fixed-length values in one
				 * dimension cannot
				 */
				*trap = a->multidims || get_typlen(a->element_typeid) == -1;
				return true;
			}
		default:
			*trap = false;
			return true;
	}
}

static bool
is_param_arg(const DpCallInfo *info, int argno)
{
	return argno == info->lower_arg || argno == info->upper_arg ||
		argno == info->epsilon_arg || argno == info->delta_arg || argno == info->k_arg;
}

/*
 * An aggregate: its value arguments and FILTER are evaluated on rows; the
 * arguments that set a DP aggregate's noise are left as they are (params.c
 * reads them in their parameter form), and so is dp_select's.
 */
static Node *
seal_aggref(Aggref *a, Seal *s)
{
	Aggref	   *n = makeNode(Aggref);
	const DpCallInfo *info = dp_lookup_call(a->aggfnoid);
	bool		on_rows = s->on_rows;
	ListCell   *lc;

	*n = *a;
	if (info != NULL && info->kind == DP_SELECT)
		return (Node *) n;
	s->on_rows = true;
	n->args = NIL;
	foreach(lc, a->args)
	{
		TargetEntry *te = lfirst_node(TargetEntry, lc);

		if (info == NULL || !is_param_arg(info, foreach_current_index(lc)))
		{
			te = flatCopyTargetEntry(te);
			te->expr = (Expr *) seal_mutator((Node *) te->expr, s);
		}
		n->args = lappend(n->args, te);
	}
	n->aggfilter = (Expr *) seal_mutator((Node *) a->aggfilter, s);
	s->on_rows = on_rows;
	return (Node *) n;
}

static Node *
seal_mutator(Node *node, Seal *s)
{
	bool		trap;

	if (node == NULL)
		return NULL;
	if (IsA(node, Aggref))
		return seal_aggref((Aggref *) node, s);
	/* the inputs first: a trapped expression's inputs are trapped too */
	node = expression_tree_mutator(node, seal_mutator, (void *) s);
	switch (nodeTag(node))
	{
		case T_FuncExpr:
			{
				FuncExpr   *f = (FuncExpr *) node;

				if (!f->funcretset && trap_call(s, f->funcid, f->args))
				{
					if (s->on_workers)
						refuse_on_workers(s);
					return wrap_call(s, f);
				}
				return node;
			}
		case T_OpExpr:
		case T_DistinctExpr:
		case T_NullIfExpr:
			{
				OpExpr	   *o = (OpExpr *) node;

				set_opfuncid(o);
				if (!o->opretset && trap_call(s, o->opfuncid, o->args))
				{
					Oid			soft;

					if (s->on_workers)
						refuse_on_workers(s);
					soft = IsA(o, OpExpr) ? soft_version(o->opfuncid) : InvalidOid;

					o->opfuncid = OidIsValid(soft) ? soft : s->row_call;
				}
				return node;
			}
		case T_ScalarArrayOpExpr:
			{
				ScalarArrayOpExpr *o = (ScalarArrayOpExpr *) node;

				set_sa_opfuncid(o);
				if (trap_call(s, o->opfuncid, o->args))
				{
					if (s->on_workers)
						refuse_on_workers(s);
					o->opfuncid = s->row_call;
					o->hashfuncid = InvalidOid;
					o->negfuncid = InvalidOid;
				}
				return node;
			}
		default:
			if (!eval_needed(s, node, &trap))
			{
				if (s->on_rows)
					refuse_expression(s, "this expression");
				return node;
			}
			if (trap && s->on_workers)
				refuse_on_workers(s);
			return trap ? wrap_eval(s, node) : node;
	}
}

/*
 * An index's conditions: the index applies the operator, the executor
 * evaluates the other operand for each scan (a runtime key).  A trapped
 * operand that fails is NULL, which matches no index entry.
 */
static List *
seal_index_quals(List *quals, Seal *s)
{
	List	   *sealed = NIL;
	ListCell   *lc;

	foreach(lc, quals)
	{
		Node	   *q = lfirst(lc);

		if (IsA(q, OpExpr))
		{
			OpExpr	   *o = makeNode(OpExpr);

			*o = *(OpExpr *) q;
			o->args = (List *) seal_mutator((Node *) o->args, s);
			q = (Node *) o;
		}
		else if (IsA(q, ScalarArrayOpExpr))
		{
			ScalarArrayOpExpr *o = makeNode(ScalarArrayOpExpr);

			*o = *(ScalarArrayOpExpr *) q;
			o->args = (List *) seal_mutator((Node *) o->args, s);
			q = (Node *) o;
		}
		/* other kinds are refused at executor start (check_index) */
		sealed = lappend(sealed, q);
	}
	return sealed;
}

static void
seal_plan(Plan *plan, Seal *s)
{
	DpRowField	fields[DP_ROW_MAX_FIELDS];
	int			n;
	bool		on_rows = s->on_rows;
	ListCell   *lc;

	if (plan == NULL)
		return;
	/* a node of an unknown type (n < 0) is refused at executor start */
	n = dp_row_fields(plan, fields);
	for (int i = 0; i < n; i++)
	{
		if (fields[i].kind == DP_ROW_FIELD_ROWS)
			*fields[i].field = seal_mutator(*fields[i].field, s);
		else if (fields[i].kind == DP_ROW_FIELD_INDEX)
			*fields[i].field = (Node *) seal_index_quals((List *) *fields[i].field, s);
	}
	/* a node that computes DP aggregates: below it, its input is rows */
	if (IsA(plan, Agg))
	{
		bool		window;

		if (dp_plan_node_calls(plan, &window) != NIL)
			s->on_rows = true;
	}
	foreach(lc, dp_plan_children(plan))
		seal_plan(lfirst(lc), s);
	s->on_rows = on_rows;
}

/*
 * At the end of planning, a statement naming protected relation relid that
 * the current user is untrusted for: trap its row expressions (see the
 * file's comment).
 */
void
dp_row_seal_plan(PlannedStmt *stmt, Oid relid)
{
	Seal		s = {dp_row_call_oid(), dp_row_eval_oid(), relid, false, false};
	ListCell   *lc;

	if (stmt->commandType == CMD_UTILITY)
		return;
	if (!OidIsValid(s.row_call) || !OidIsValid(s.row_eval))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("dp_agg must be updated to version 0.4 to read protected relation \"%s\"",
						get_rel_name(relid)),
				 errhint("Run ALTER EXTENSION dp_agg UPDATE.")));
	seal_plan(stmt->planTree, &s);
	foreach(lc, stmt->subplans)
		seal_plan(lfirst(lc), &s);
}

/*
 * A Citus inner statement over protected relid, for an untrusted role,
 * before the charge: no expression on its rows may fail (on a copy).
 */
void
dp_row_refuse_failing(Query *inner, Oid relid)
{
	Seal		s = {dp_row_call_oid(), dp_row_eval_oid(), relid, true, true};

	(void) seal_mutator(copyObject((Node *) inner->jointree), &s);
	(void) seal_mutator(copyObject((Node *) inner->targetList), &s);
	(void) seal_mutator(copyObject(inner->havingQual), &s);
}

/* ---------- the checks before the first row ---------- */

typedef struct Check
{
	Oid			row_call;
	Oid			row_eval;
	Oid			relid;
	ParamListInfo params;
	int64		work;			/* rule 6: see check_row_work */
	List	   *collations;		/* to load */
	bool		verify;			/* the expressions must be sealed */
} Check;

static void check_expr(Node *node, Check *c);

/* a variable-length value's size in bytes, as evaluated (detoasted) */
static int64
value_size(int16 typlen, Datum value, bool isnull)
{
	if (isnull || typlen != -1)
		return 0;
	return (int64) toast_raw_datum_size(value);
}

/*
 * The value of an argument that comes from the statement: a constant or a
 * parameter.  False for anything else (an expression of parameters that a
 * generic plan did not fold).
 */
static bool
fixed_value(Node *node, Check *c, Datum *value, bool *isnull, Oid *type)
{
	while (node != NULL && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	if (node != NULL && IsA(node, Const))
	{
		*value = ((Const *) node)->constvalue;
		*isnull = ((Const *) node)->constisnull;
		*type = ((Const *) node)->consttype;
		return true;
	}
	if (node != NULL && IsA(node, Param) && ((Param *) node)->paramkind == PARAM_EXTERN &&
		c->params != NULL)
	{
		Param	   *p = (Param *) node;
		ParamExternData workspace;
		ParamExternData *prm = NULL;

		prm = dp_param_extern(c->params, p->paramid, &workspace);
		if (prm == NULL || !OidIsValid(prm->ptype))
			return false;
		*value = prm->value;
		*isnull = prm->isnull;
		*type = prm->ptype;
		return true;
	}
	return false;
}

/*
 * The arguments of a regular expression or of lpad and rpad (row_rules.c):
 * a pattern is counted DP_ROW_REGEX_WORK times and may not hold
 * back-references; an output size is counted.
 */
static void
check_fixed_args(Oid funcid, List *args, Check *c)
{
	int			size_arg = dp_row_size_arg(funcid);
	Datum		value;
	bool		isnull;
	Oid			type;

	if (dp_row_is_regex(funcid) && list_length(args) >= 2)
	{
		if (!fixed_value(lsecond(args), c, &value, &isnull, &type))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("the pattern of %s on the rows of protected relation \"%s\" must be a constant or a parameter",
							function_name(funcid), get_rel_name(c->relid)),
					 errhint("Write the pattern as one literal or one parameter.")));
		if (!isnull && (type == TEXTOID || type == VARCHAROID || type == BPCHAROID))
		{
			text	   *t = DatumGetTextPP(value);

			if (dp_row_pattern_backrefs(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t)))
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("back-references are not allowed in regular expressions on the rows of protected relation \"%s\"",
								get_rel_name(c->relid)),
						 errdetail("A pattern with back-references (\\1 to \\9) is matched by backtracking, whose time could depend on a row more than the statement allows."),
						 errhint("Remove the back-reference.")));
			c->work += (int64) DP_ROW_REGEX_WORK * VARSIZE_ANY_EXHDR(t);
		}
	}
	if (size_arg >= 0 && list_length(args) > size_arg)
	{
		if (!fixed_value(list_nth(args, size_arg), c, &value, &isnull, &type) || type != INT4OID)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("the length given to %s on the rows of protected relation \"%s\" must be a constant or a parameter",
							function_name(funcid), get_rel_name(c->relid)),
					 errhint("Write the length as one literal or one parameter.")));
		if (!isnull && DatumGetInt32(value) > 0)
			c->work += DatumGetInt32(value);
	}
}

static void
add_collation(Oid collation, Check *c)
{
	dp_row_add_collation(collation, &c->collations);
}

/*
 * A trapped call: PostgreSQL checks the permission to call a function when
 * it builds the expression; the trap builds its callee at its first call,
 * which only some rows reach.  Check it here, before any row.
 */
static void
check_callee(Oid callee)
{
	AclResult	aclresult = DP_FUNCTION_ACLCHECK(callee, GetUserId());

	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_FUNCTION, get_func_name(callee));
	InvokeFunctionExecuteHook(callee);
}

static void
refuse_unsealed(Check *c)
{
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("the plan of this statement over protected relation \"%s\" was not made by dp_agg",
					get_rel_name(c->relid)),
			 errdetail("Its expressions on rows are not evaluated so that they cannot fail."),
			 errhint("Check that no other extension's planner hook bypasses dp_agg's.")));
}

/* a call: sealed, or one that cannot fail, or not an allowed function */
static void
check_call(Oid funcid, List *args, Oid inputcollid, Check *c)
{
	add_collation(inputcollid, c);
	if (!c->verify || funcid == c->row_call || funcid >= FirstNormalObjectId ||
		!dp_row_builtin_c(funcid))
		return;
	if (dp_row_function_refusal(funcid) == DP_ROW_ALLOWED &&
		!dp_row_never_fails(funcid, args))
		refuse_unsealed(c);
}

static bool
check_walker(Node *node, Check *c)
{
	if (node == NULL)
		return false;
	c->work++;
	switch (nodeTag(node))
	{
		case T_Aggref:
			{
				/* as sealed: the arguments that set the noise are not */
				Aggref	   *a = (Aggref *) node;
				const DpCallInfo *info = dp_lookup_call(a->aggfnoid);
				bool		verify = c->verify;
				ListCell   *lc;

				foreach(lc, a->args)
				{
					c->verify = verify && !(info != NULL &&
											(info->kind == DP_SELECT ||
											 is_param_arg(info, foreach_current_index(lc))));
					(void) check_walker(lfirst(lc), c);
				}
				c->verify = verify && !(info != NULL && info->kind == DP_SELECT);
				(void) check_walker((Node *) a->aggfilter, c);
				c->verify = verify;
				/*
				 * DISTINCT inside it: the aggregation sorts and compares the
				 * values itself, outside any expression, as for GROUP BY
				 */
				foreach(lc, a->aggdistinct)
				{
					SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);

					if (OidIsValid(sgc->eqop))
						dp_row_check_equality(sgc->eqop, a->inputcollid, false, c->relid, &c->collations,
											  "DISTINCT keys");
					if (OidIsValid(sgc->sortop))
						dp_row_check_ordering(sgc->sortop, a->inputcollid, c->relid, &c->collations,
											  "DISTINCT keys");
				}
				return false;
			}
		case T_Const:
			c->work += value_size(((Const *) node)->constlen, ((Const *) node)->constvalue,
								  ((Const *) node)->constisnull);
			break;
		case T_Param:
			{
				Datum		value;
				bool		isnull;
				Oid			type;

				if (fixed_value(node, c, &value, &isnull, &type))
					c->work += value_size(get_typlen(type), value, isnull);
				break;
			}
		case T_FuncExpr:
			{
				FuncExpr   *f = (FuncExpr *) node;

				if (f->funcid == c->row_call)
				{
					Oid			callee = DatumGetObjectId(((Const *) llast(f->args))->constvalue);
					List	   *args = list_copy_head(f->args, list_length(f->args) - 1);

					add_collation(f->inputcollid, c);
					check_callee(callee);
					check_fixed_args(callee, args, c);
					(void) expression_tree_walker((Node *) args, check_walker, c);
					return false;
				}
				if (f->funcid == c->row_eval)
				{
					List	   *args = list_copy_head(f->args, list_length(f->args) - 1);
					Node	   *expr = stringToNode(TextDatumGetCString(((Const *) llast(f->args))->constvalue));

					(void) expression_tree_walker((Node *) args, check_walker, c);
					check_expr(expr, c);
					return false;
				}
				/*
				 * The key set of a public domain (public_domain.c) is looked
				 * up in a hash table built before any row is read (keyset.c):
				 * its size adds nothing to a row's work, whatever the number
				 * of keys
				 */
				if (f->location == DP_DOMAIN_LOCATION &&
					(f->funcid == dp_domain_index_oid() || f->funcid == dp_domain_key_oid()) &&
					f->args != NIL && IsA(linitial(f->args), Const))
				{
					(void) expression_tree_walker((Node *) list_delete_first(list_copy(f->args)),
												  check_walker, c);
					return false;
				}
				check_call(f->funcid, f->args, f->inputcollid, c);
				break;
			}
		case T_OpExpr:
		case T_DistinctExpr:
		case T_NullIfExpr:
			{
				OpExpr	   *o = (OpExpr *) node;

				if (o->opfuncid == c->row_call ||
					(IsA(o, OpExpr) && o->opfuncid >= FirstNormalObjectId &&
					 o->opfuncid == soft_version(get_opcode(o->opno))))
				{
					add_collation(o->inputcollid, c);
					check_callee(get_opcode(o->opno));
					check_fixed_args(get_opcode(o->opno), o->args, c);
				}
				else
					check_call(o->opfuncid, o->args, o->inputcollid, c);
				break;
			}
		case T_ScalarArrayOpExpr:
			{
				ScalarArrayOpExpr *o = (ScalarArrayOpExpr *) node;

				if (o->opfuncid == c->row_call)
				{
					add_collation(o->inputcollid, c);
					check_callee(get_opcode(o->opno));
					check_fixed_args(get_opcode(o->opno), o->args, c);
				}
				else
					check_call(o->opfuncid, o->args, o->inputcollid, c);
				break;
			}
		case T_MinMaxExpr:
			add_collation(((MinMaxExpr *) node)->inputcollid, c);
			break;
		case T_RowCompareExpr:
			{
				ListCell   *lc;

				foreach(lc, ((RowCompareExpr *) node)->inputcollids)
					add_collation(lfirst_oid(lc), c);
				break;
			}
		default:
			break;
	}
	return expression_tree_walker(node, check_walker, c);
}

/* An expression inside dp_agg_internal.row_eval: its Params are its inputs, free. */
static void
check_expr(Node *node, Check *c)
{
	ParamListInfo params = c->params;

	c->params = NULL;
	(void) check_walker(node, c);
	c->params = params;
}

/* an index's conditions: the index applies the operator (check_index) */
static void
check_index_operands(List *quals, Check *c)
{
	ListCell   *lc;

	foreach(lc, quals)
	{
		Node	   *q = lfirst(lc);

		if (IsA(q, OpExpr))
			(void) check_walker((Node *) ((OpExpr *) q)->args, c);
		else if (IsA(q, ScalarArrayOpExpr))
			(void) check_walker((Node *) ((ScalarArrayOpExpr *) q)->args, c);
		else
			(void) check_walker(q, c);
	}
}

/*
 * The expressions of one plan node (row_fields.c): those on rows sealed,
 * those evaluated once free of rows; any other node or field refused.
 */
static void
check_fields(Plan *plan, Check *c)
{
	DpRowField	fields[DP_ROW_MAX_FIELDS];
	int			n = dp_row_fields(plan, fields);
	ListCell   *lc;

	if (n < 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("plan nodes of type %d are not supported over protected relation \"%s\"",
						(int) nodeTag(plan), get_rel_name(c->relid)),
				 errdetail("dp_agg does not know which of their expressions are evaluated on rows, so it cannot make sure that no row makes them fail."),
				 errhint("Write a DP aggregate over the relation, joined to lookup tables on their unique key: see \"Protected tables\" in dp_agg's doc/guard.md.")));
	for (int i = 0; i < n; i++)
	{
		Node	   *e = *fields[i].field;

		c->verify = true;
		switch (fields[i].kind)
		{
			case DP_ROW_FIELD_ROWS:
				(void) check_walker(e, c);
				break;
			case DP_ROW_FIELD_INDEX:
				check_index_operands((List *) e, c);
				break;
			case DP_ROW_FIELD_FIXED:
				if (!dp_row_fixed(e))
					ereport(ERROR,
							(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
							 errmsg("%s may not use values of the rows of protected relation \"%s\"",
									fields[i].what, get_rel_name(c->relid)),
							 errdetail("It is evaluated outside the trap that turns a failure on a row into NULL: a row could make the statement fail."),
							 errhint("Compute on rows in the select list, WHERE, the join conditions or the arguments of the DP aggregates.")));
				/* evaluated once per scan: counted only */
				c->verify = false;
				(void) check_walker(e, c);
				break;
			case DP_ROW_FIELD_PARAMS:
				/* the executor copies an outer column: nothing to fail */
				foreach(lc, (List *) e)
					if (!IsA(lfirst_node(NestLoopParam, lc)->paramval, Var))
						elog(ERROR, "nested loop parameter is not a Var");
				break;
			case DP_ROW_FIELD_NONE:
				if (e != NULL)
					ereport(ERROR,
							(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
							 errmsg("%s is not supported over protected relation \"%s\"",
									fields[i].what, get_rel_name(c->relid)),
							 errhint("Release the values with a DP statement alone, or with INSERT ... SELECT.")));
				break;
		}
	}
	/* what the other walks of plans take for expressions is among them */
	foreach(lc, dp_plan_expressions(plan))
	{
		bool		known = lfirst(lc) == NULL;

		for (int i = 0; i < n; i++)
			known |= lfirst(lc) == (void *) *fields[i].field;
		if (!known)
			elog(ERROR, "plan node of type %d has expressions the row seal does not know",
				 (int) nodeTag(plan));
	}
}

static void
check_plan(Plan *plan, Check *c)
{
	ListCell   *lc;

	if (plan == NULL)
		return;
	check_fields(plan, c);
	dp_row_check_node(plan, c->relid, &c->collations);
	foreach(lc, dp_plan_children(plan))
		check_plan(lfirst(lc), c);
}

/*
 * Load a collation's locale now: an unavailable locale fails, and a
 * collation whose version changed warns, at the first use in a session,
 * which would otherwise be the first row that reaches a comparison.
 */
static void
load_collation(Oid collation)
{
	if (!SearchSysCacheExists1(COLLOID, ObjectIdGetDatum(collation)))
		return;
	(void) pg_newlocale_from_collation(collation);
}

/*
 * Bound the work a statement may do for one row (doc/guard.md, "Protected
 * tables", rule 6).  An expression evaluated only for some rows (under CASE
 * WHEN, after AND) that is large, or takes a large constant or parameter
 * (md5 of a 100 MB text, a comparison with every element of a large array,
 * a long regular expression, lpad to a million characters), makes the
 * statement's duration tell whether such rows exist: one measurement, where
 * the work of a small expression is far below the noise of the timing.  The
 * expressions of the whole plan are counted once per statement, never per
 * row: their nodes, plus the bytes of their variable-length constants and
 * parameters, a regular expression's pattern DP_ROW_REGEX_WORK times, and
 * the output sizes of lpad and rpad.  The trap's own scaffolding is not
 * counted: an expression inside dp_agg_internal.row_eval counts as written.
 */
static void
check_row_work(Check *c)
{
	if (c->work > dp_guc_protected_max_row_work)
		ereport(ERROR,
				(errcode(ERRCODE_STATEMENT_TOO_COMPLEX),
				 errmsg("expressions on the rows of protected relation \"%s\" are too large",
						get_rel_name(c->relid)),
				 errdetail("They count %lld expression nodes and bytes of constants and parameters; dp_agg.protected_max_row_work allows %d.",
						   (long long) c->work, dp_guc_protected_max_row_work),
				 errhint("Evaluated only for some rows, a large expression would make the statement's duration tell whether they exist: use smaller expressions and constants.")));
}

/*
 * At executor start, before any row is read, of a plan accepted for a role
 * untrusted for protected relation relid (see the file's comment).
 */
void
dp_row_check_plan(PlannedStmt *stmt, ParamListInfo params, Oid relid)
{
	Check		c = {dp_row_call_oid(), dp_row_eval_oid(), relid, params, 0, NIL, true};
	ListCell   *lc;

	check_plan(stmt->planTree, &c);
	foreach(lc, stmt->subplans)
		check_plan(lfirst(lc), &c);
	check_row_work(&c);
	foreach(lc, c.collations)
		load_collation(lfirst_oid(lc));
}

/* ---------- the indexes the planner may use ---------- */

/* May an untrusted statement scan the relation through this index? */
static bool
index_allowed(IndexOptInfo *index)
{
	if (index->relam != BTREE_AM_OID && index->relam != HASH_AM_OID)
		return false;
	for (int i = 0; i < index->nkeycolumns; i++)
		if (index->opfamily[i] >= FirstNormalObjectId)
			return false;
	return true;
}

/*
 * The planner's view of a relation: a protected relation that the current
 * user is untrusted for keeps only its btree and hash indexes of built-in
 * operator families (see the file's comment).
 */
static void
relation_info(PlannerInfo *root, Oid relationObjectId, bool inhparent, RelOptInfo *rel)
{
	List	   *kept = NIL;
	ListCell   *lc;

	if (prev_relation_info_hook)
		prev_relation_info_hook(root, relationObjectId, inhparent, rel);
	if (rel->indexlist == NIL || !dp_relation_protected(relationObjectId) ||
		dp_role_trusted(relationObjectId, GetUserId()))
		return;
	foreach(lc, rel->indexlist)
		if (index_allowed(lfirst(lc)))
			kept = lappend(kept, lfirst(lc));
	rel->indexlist = kept;
}

/* Install the planner hook above (from _PG_init, through hooks.c). */
void
dp_row_seal_init(void)
{
	prev_relation_info_hook = get_relation_info_hook;
	get_relation_info_hook = relation_info;
}
