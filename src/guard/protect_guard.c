/*-------------------------------------------------------------------------
 *
 * protect_guard.c
 *	  The stricter guard for untrusted roles over protected relations.
 *
 * doc/guard.md, "Protected tables", rule 3.  A DP release hides a row only if
 * nothing else the statement does depends on it: its result, its errors,
 * its side effects.  When a statement names a protected relation that the
 * current user is not trusted for, the rewritten query (views expanded) is
 * checked at planning, at every level:
 *   - no aggregate other than DP aggregates, no window function, and
 *     GROUP BY only at the level of the DP aggregates, with private
 *     selection of the groups (dp_agg.group_keys = 'private'): else the
 *     groups present would be released exactly;
 *   - at the level of the DP aggregates, the output and HAVING use row
 *     values only inside DP aggregates or as GROUP BY keys, and
 *     expressions of the keys are held to the rules of rows;
 *   - every expression evaluated on row data (WHERE, the arguments and
 *     FILTER of DP aggregates, everything in the sub-queries, views and
 *     CTEs below them) is made of node kinds dp_agg can evaluate so that
 *     they cannot fail (row_seal.c traps them), and its functions and
 *     operators are built in, not volatile, and LEAKPROOF, among the
 *     everyday built-ins, or allowed by a DBA (row_rules.c); patterns of
 *     regular expressions and LIKE, and the sizes given to lpad and rpad,
 *     come from the statement;
 *   - expressions without row data may not be volatile either: evaluated
 *     once per row, a side effect (a sequence, a setting, a notification)
 *     would count the rows; and nothing in the statement, not even the
 *     post-processing of the released values, runs code other than
 *     built-in functions that are not volatile: user code could change a
 *     setting while the rows are read (protect_settings.c);
 *   - an operator's negator and commutator are checked with it (the planner
 *     may substitute them);
 *   - TABLESAMPLE only by dp_agg.secure_bernoulli, BERNOULLI REPEATABLE or
 *     SYSTEM (check_tablesample);
 *   - no ORDER BY inside DP aggregates; DISTINCT inside them with its
 *     operators and comparison function held to the rules of rows
 *     (check_distinct); the row-level security policies of lookup tables
 *     (lookup_join.c) held to them too;
 *   - a level above the DP aggregates, or of a statement without any, may
 *     not read the protected relation: refused here, before the planner
 *     passes its statistics to the statement's operators.
 * Expressions over the DP results (above the DP aggregates) are
 * post-processing and are free.  Which scans feed the DP aggregates is
 * checked on the plan (protect_check.c).  The planner hook marks such plans
 * as depending on the role, so that a cached plan is checked again for
 * another role; changes of the catalogs and of role memberships reset the
 * plan cache (protect.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "access/transam.h"
#include "catalog/namespace.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"

#include "catalog.h"
#include "dp_calls.h"
#include "compat.h"
#include "guc.h"
#include "params.h"
#include "protect.h"
#include "protect_guard.h"
#include "row_rules.h"
#include "sampling.h"

typedef struct GuardContext
{
	Oid			relid;			/* the protected relation named, for messages */
} GuardContext;

static void check_level(Query *q, bool rows, GuardContext *ctx);

/* Find the protected relations a statement names (views expanded). */
typedef struct FindContext
{
	bool		any;			/* a protected relation */
	Oid			untrusted;		/* one the current user is not trusted for */
} FindContext;

/*
 * A relation named in the statement, and, unless ONLY was given (inh), its
 * partitions and inheritance children: the planner expands them later, so
 * a protected one read through an unprotected parent is found here.
 */
static void
find_relation(Oid relid, bool inh, FindContext *fc)
{
	List	   *rels;
	ListCell   *lc;

	/* without children (relhassubclass, as the planner checks) no search */
	if (inh && dp_relation_has_children(relid))
		rels = find_all_inheritors(relid, AccessShareLock, NULL);
	else
		rels = list_make1_oid(relid);
	foreach(lc, rels)
	{
		Oid			r = lfirst_oid(lc);

		if (!dp_relation_protected(r))
			continue;
		fc->any = true;
		if (!OidIsValid(fc->untrusted) && !dp_role_trusted(r, GetUserId()))
			fc->untrusted = r;
	}
}

/* a macro, so that each message is a literal format string where it is raised */
#define reject_construct(ctx, construct, detail, hint) \
	ereport(ERROR, \
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE), \
			 errmsg(construct " not allowed over protected relation \"%s\"", \
					get_rel_name((ctx)->relid)), \
			 errdetail(detail), \
			 errhint(hint)))

#define HINT_README "See \"Protected tables\" in dp_agg's doc/guard.md."

/* A function evaluated per row: on row data if on_rows. */

/*
 * A function's name in messages: its session's temporary schema is called
 * pg_temp, as the user wrote it (its real name, pg_temp_N, varies).
 */
static char *
function_name(Oid funcid)
{
	char	   *name = format_procedure(funcid);
	char	   *dot = strchr(name, '.');

	if (dot != NULL && isTempNamespace(get_func_namespace(funcid)))
		return psprintf("pg_temp%s", dot);
	return name;
}

static void
check_function(Oid funcid, bool on_rows, GuardContext *ctx)
{
	const char *detail = NULL;
	DpRowRefusal r = dp_row_function_refusal(funcid);

	if (r == DP_ROW_VOLATILE)
		detail = on_rows
			? "It is volatile: evaluated for each row, its side effects could count or show the rows."
			: "It is volatile: its side effects could count the rows, or change settings while they are read.";
	else if (r == DP_ROW_NOT_BUILT_IN && !on_rows && dp_extension_member(funcid))
		return;					/* dp_agg's own functions, over released values */
	else if (r == DP_ROW_NOT_BUILT_IN)
		detail = on_rows
			? "It is not built into PostgreSQL: it could fail, or show or store a row's values."
			: "It is not built into PostgreSQL: it could change settings while the rows are read. Post-process the released values in a separate statement (CREATE TEMPORARY TABLE r AS SELECT ...; SELECT f(...) FROM r).";
	else if (!on_rows)
		return;
	else if (r == DP_ROW_NOT_TRAPPABLE)
		detail = "It is not a plain built-in function that dp_agg can call safely on rows.";
	else if (r == DP_ROW_NOT_LISTED)
		detail = "It is not among the functions allowed on rows: for some values it could fail, and its error would tell a row's value.";
	if (detail == NULL)
		return;
	if (!on_rows)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("function %s is not allowed in a statement over protected relation \"%s\"",
						function_name(funcid), get_rel_name(ctx->relid)),
				 errdetail("%s", detail),
				 errhint(HINT_README)));
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("function %s is not allowed on the rows of protected relation \"%s\"",
					function_name(funcid), get_rel_name(ctx->relid)),
			 errdetail("%s", detail),
			 r == DP_ROW_NOT_LISTED ?
			 errhint("A DBA may allow a built-in function with dp_agg.allow_function('%s'); its errors then yield NULL, as for the built-ins listed in \"Protected tables\" in dp_agg's doc/guard.md.",
					 function_name(funcid)) :
			 errhint(HINT_README)));
}

/*
 * Could the expression's value differ from one row to another, or from
 * planning to execution: does it hold row values, parameters, the value a
 * CASE tests, or a sub-query?
 */
static bool
varies_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var) || IsA(node, Param) || IsA(node, CaseTestExpr) ||
		IsA(node, SubLink) || IsA(node, Query))
		return true;
	return expression_tree_walker(node, varies_walker, context);
}

/*
 * Does the planner leave this function call unevaluated even with constant
 * arguments?  evaluate_function (optimizer/util/clauses.c) does not fold a
 * function that returns a set or the type RECORD (such as the immutable
 * pg_walfile_name_offset): it runs at execution, once per row it is
 * reached for.
 */
static bool
never_folded(Oid funcid)
{
	return get_func_retset(funcid) || get_func_rettype(funcid) == RECORDOID;
}

static bool
unfolded_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, FuncExpr) && never_folded(((FuncExpr *) node)->funcid))
		return true;
	return expression_tree_walker(node, unfolded_walker, context);
}

/*
 * Is a function evaluated on the rows?  Every function on the rows' path
 * is, whatever its arguments: under CASE WHEN a row predicate, a function
 * of constants runs only for the rows that match, and its errors and side
 * effects count them.  The one exception is a built-in IMMUTABLE function
 * of constants (of immutable functions of constants) that the planner
 * evaluates once, before any row is read (eval_const_expressions, which
 * also simplifies the branches of CASE), so nothing it does depends on the
 * rows.
 */
static bool
function_on_rows(Oid funcid, Node *args)
{
	return funcid >= FirstNormalObjectId ||
		func_volatile(funcid) != PROVOLATILE_IMMUTABLE || never_folded(funcid) ||
		varies_walker(args, NULL) || contain_mutable_functions(args) ||
		unfolded_walker(args, NULL);
}

/*
 * The arguments of a function on rows that must come from the statement
 * (a regular expression's pattern and flags, LIKE's pattern, the size given
 * to lpad): constants and parameters, the same for every row, so that a
 * pattern is compiled once and the work a row costs is bounded by the
 * statement (row_seal.c counts them).  And the types whose output functions
 * concat and array_to_string call must be built in.
 */
static void
check_arguments(Oid funcid, List *args, GuardContext *ctx)
{
	int			fixed = dp_row_fixed_from(funcid);
	ListCell   *lc;

	foreach(lc, args)
	{
		if (fixed >= 0 && foreach_current_index(lc) >= fixed &&
			!dp_row_expr_fixed(lfirst(lc)))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("argument %d of %s on the rows of protected relation \"%s\" must come from the statement",
							foreach_current_index(lc) + 1, function_name(funcid),
							get_rel_name(ctx->relid)),
					 errdetail("Patterns and sizes that vary from row to row would make a row's work depend on other rows' values."),
					 errhint("Write it as a constant or a parameter.")));
		if (dp_row_any_io(funcid) && !dp_row_type_io_ok(exprType(lfirst(lc))))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("%s of type %s is not allowed on the rows of protected relation \"%s\"",
							function_name(funcid), format_type_be(exprType(lfirst(lc))),
							get_rel_name(ctx->relid)),
					 errdetail("Its text form comes from functions that are not built into PostgreSQL."),
					 errhint(HINT_README)));
	}
}

/* A function or operator call: its arguments args. */
static void
check_call(Oid funcid, Node *args, GuardContext *ctx)
{
	bool		on_rows = function_on_rows(funcid, args);

	check_function(funcid, on_rows, ctx);
	if (on_rows && IsA(args, List))
		check_arguments(funcid, (List *) args, ctx);
}

/*
 * An operator call.  The planner may run another operator's function in
 * its place: NOT (a op b) becomes a op' b with op's negator
 * (eval_const_expressions, negate_clause), and a clause can be commuted
 * to match an index; whoever creates an operator names its negator and
 * commutator, possibly operators of its own with functions of its own.
 * Their functions are checked as if they were called here.
 */
static void
check_operator(Oid opno, Oid opfuncid, Node *args, GuardContext *ctx)
{
	Oid			substitutes[] = {get_negator(opno), get_commutator(opno)};

	check_call(opfuncid, args, ctx);
	for (size_t i = 0; i < lengthof(substitutes); i++)
		if (OidIsValid(substitutes[i]))
			check_call(get_opcode(substitutes[i]), args, ctx);
}

/*
 * A cast through text (CoerceViaIO), to a domain, or of arrays on rows: the
 * types' input and output functions are built in, and the domains'
 * constraints call allowed functions only; row_seal.c traps the cast.
 */
static void
check_cast(Oid from, Oid to, GuardContext *ctx)
{
	if (dp_row_type_io_ok(from) && dp_row_type_io_ok(to))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("casts from %s to %s are not allowed on the rows of protected relation \"%s\"",
					format_type_be(from), format_type_be(to), get_rel_name(ctx->relid)),
			 errdetail("Their input or output functions, or the constraints of a domain, are not among those dp_agg calls safely on rows."),
			 errhint("Cast between built-in types, to domains whose constraints use built-in functions.")));
}

/*
 * Expressions evaluated on rows: node kinds that row_seal.c evaluates so
 * that they cannot fail, and allowed functions (see the file's comment).
 */
static bool
rows_walker(Node *node, GuardContext *ctx)
{
	if (node == NULL)
		return false;
	switch (nodeTag(node))
	{
		case T_Var:
		case T_Const:
		case T_Param:
		case T_CaseTestExpr:
		case T_BoolExpr:
		case T_RelabelType:
		case T_NullTest:
		case T_BooleanTest:
		case T_CaseExpr:
		case T_CaseWhen:
		case T_CoalesceExpr:
		case T_ArrayExpr:
		case T_RowExpr:
		case T_FieldSelect:
		case T_CollateExpr:
		case T_SQLValueFunction:
		case T_ConvertRowtypeExpr:
		case T_CoerceToDomainValue:
		case T_NamedArgExpr:
		case T_TargetEntry:
		case T_List:
		case T_FromExpr:
		case T_JoinExpr:
		case T_RangeTblRef:
			break;
		case T_FuncExpr:
			check_call(((FuncExpr *) node)->funcid, (Node *) ((FuncExpr *) node)->args, ctx);
			break;
		case T_OpExpr:
		case T_DistinctExpr:
		case T_NullIfExpr:
			set_opfuncid((OpExpr *) node);
			check_operator(((OpExpr *) node)->opno, ((OpExpr *) node)->opfuncid,
						   (Node *) ((OpExpr *) node)->args, ctx);
			break;
		case T_ScalarArrayOpExpr:
			set_sa_opfuncid((ScalarArrayOpExpr *) node);
			check_operator(((ScalarArrayOpExpr *) node)->opno,
						   ((ScalarArrayOpExpr *) node)->opfuncid,
						   (Node *) ((ScalarArrayOpExpr *) node)->args, ctx);
			break;
		case T_RowCompareExpr:
			{
				RowCompareExpr *r = (RowCompareExpr *) node;
				ListCell   *lc;

				foreach(lc, r->opnos)
					check_operator(lfirst_oid(lc), get_opcode(lfirst_oid(lc)),
								   (Node *) list_concat_copy(r->largs, r->rargs), ctx);
				break;
			}
		case T_CoerceViaIO:
			check_cast(exprType((Node *) ((CoerceViaIO *) node)->arg),
					   ((CoerceViaIO *) node)->resulttype, ctx);
			break;
		case T_ArrayCoerceExpr:
			check_cast(exprType((Node *) ((ArrayCoerceExpr *) node)->arg),
					   ((ArrayCoerceExpr *) node)->resulttype, ctx);
			break;
		case T_CoerceToDomain:
			if (!dp_row_domain_ok(((CoerceToDomain *) node)->resulttype))
				check_cast(exprType((Node *) ((CoerceToDomain *) node)->arg),
						   ((CoerceToDomain *) node)->resulttype, ctx);
			break;
		case T_MinMaxExpr:
			if (!dp_row_comparable(((MinMaxExpr *) node)->minmaxtype))
				reject_construct(ctx, "GREATEST and LEAST of this type are",
								 "Its comparison function is not built into PostgreSQL.",
								 "Compare values of built-in types.");
			break;
		case T_SubscriptingRef:
			if (((SubscriptingRef *) node)->refassgnexpr != NULL)
				reject_construct(ctx, "subscript assignments are",
								 "On rows, subscripts may only read.", HINT_README);
			break;
		case T_SubLink:
			check_level(castNode(Query, ((SubLink *) node)->subselect), true, ctx);
			return rows_walker(((SubLink *) node)->testexpr, ctx);
		case T_Aggref:
			reject_construct(ctx, "aggregates inside row expressions are",
							 "Only DP aggregates may read the rows, at the level of the statement that releases them.",
							 HINT_README);
			break;
		case T_NextValueExpr:
			reject_construct(ctx, "sequences are",
							 "Advanced once per row, a sequence would count the rows.", HINT_README);
			break;
		default:
			reject_construct(ctx, "this kind of expression is",
							 "On the rows of a protected relation, expressions are limited to allowed functions and operators, casts, CASE, COALESCE, NULLIF, GREATEST, LEAST, ARRAY, row values, subscripts, boolean logic and NULL tests, which dp_agg evaluates so that they cannot fail.",
							 HINT_README);
			break;
	}
	return expression_tree_walker(node, rows_walker, ctx);
}

/*
 * Expressions of the level of the DP aggregates, or above it: over DP
 * results (free), except the arguments of DP aggregates, which are rows.
 */
typedef struct PostContext
{
	GuardContext *ctx;
	bool		dp_level;		/* row values outside DP aggregates are rows */
	bool		grouped;		/* ... and GROUP BY keys are (check_grouping) */
	int			sublevels;
} PostContext;

static bool
level_var_walker(Node *node, int *sublevels)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
		return ((Var *) node)->varlevelsup == (Index) *sublevels;
	if (IsA(node, Query))
		return false;			/* a sub-query: check_level checks it */
	return expression_tree_walker(node, level_var_walker, sublevels);
}

static bool
contains_level_var(Node *node, int sublevels)
{
	return level_var_walker(node, &sublevels);
}

/*
 * Post-processing of the released values runs while the rows are read (a
 * group's output while the sort below it still reads): only built-in
 * functions that are not volatile, which cannot change a setting the
 * statement runs with (protect_settings.c), nor run the analyst's code.
 */
static void
check_post_function(Oid funcid, GuardContext *ctx)
{
	check_function(funcid, false, ctx);
}

static void
check_post_operator(Oid opno, GuardContext *ctx)
{
	Oid			ops[] = {opno, get_negator(opno), get_commutator(opno)};

	for (size_t i = 0; i < lengthof(ops); i++)
		if (OidIsValid(ops[i]))
			check_post_function(get_opcode(ops[i]), ctx);
}

static void
check_post(Node *node, GuardContext *ctx)
{
	ListCell   *lc;

	switch (nodeTag(node))
	{
		case T_FuncExpr:
			check_post_function(((FuncExpr *) node)->funcid, ctx);
			break;
		case T_OpExpr:
		case T_DistinctExpr:
		case T_NullIfExpr:
			check_post_operator(((OpExpr *) node)->opno, ctx);
			break;
		case T_ScalarArrayOpExpr:
			check_post_operator(((ScalarArrayOpExpr *) node)->opno, ctx);
			break;
		case T_RowCompareExpr:
			foreach(lc, ((RowCompareExpr *) node)->opnos)
				check_post_operator(lfirst_oid(lc), ctx);
			break;
		case T_CoerceToDomain:
			if (!dp_row_domain_ok(((CoerceToDomain *) node)->resulttype))
				reject_construct(ctx, "casts to this domain are",
								 "Its constraints call functions that are volatile or not built into PostgreSQL.",
								 HINT_README);
			break;
		case T_NextValueExpr:
			reject_construct(ctx, "sequences are",
							 "A DP statement over a protected relation runs no code with side effects.",
							 HINT_README);
			break;
		default:
			break;
	}
}

/*
 * DISTINCT inside a DP aggregate: its values are sorted and compared, with
 * the equality and ordering operators of the DISTINCT clause and the
 * comparison function of their btree family, on the rows: each is held to
 * the rules of functions on rows (the arguments vary with the row).
 */
static void
check_distinct(Aggref *a, GuardContext *ctx)
{
	ListCell   *lc;

	foreach(lc, a->aggdistinct)
	{
		SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);
		Oid			opfamily;
		Oid			opcintype;
		DP_ORDERING_KIND strategy;

		if (OidIsValid(sgc->eqop))
			check_operator(sgc->eqop, get_opcode(sgc->eqop), (Node *) a->args, ctx);
		if (OidIsValid(sgc->sortop))
		{
			check_operator(sgc->sortop, get_opcode(sgc->sortop), (Node *) a->args, ctx);
			if (get_ordering_op_properties(sgc->sortop, &opfamily, &opcintype, &strategy))
				check_call(get_opfamily_proc(opfamily, opcintype, opcintype, BTORDER_PROC),
						   (Node *) a->args, ctx);
		}
	}
}

static bool
post_walker(Node *node, PostContext *pc)
{
	if (node == NULL)
		return false;
	if (dp_is_call(node))
	{
		Aggref	   *a = (Aggref *) node;

		if (a->aggorder != NIL)
			reject_construct(pc->ctx, "ORDER BY inside DP aggregates is",
							 "Its comparisons would run on the rows, and the order changes no DP aggregate.",
							 "Remove the ORDER BY.");
		check_distinct(a, pc->ctx);
		{
			const DpCallInfo *info = dp_lookup_call(a->aggfnoid);
			ListCell   *lc;
			int			argno = 0;

			foreach(lc, a->args)
			{
				/*
				 * the percentiles of dp_percentile: of parameter form
				 * (guard.c), evaluated when the statement is priced, before
				 * a row is read (params.c), so that neither their value nor
				 * an error can depend on a row; an array cast of them is
				 * one (numeric[] to float8[])
				 */
				if (argno != info->p_arg || !dp_is_parameter_form((Node *) lfirst_node(TargetEntry, lc)->expr))
					(void) rows_walker(lfirst(lc), pc->ctx);
				argno++;
			}
		}
		(void) rows_walker((Node *) a->aggfilter, pc->ctx);
		return false;
	}
	if (IsA(node, Aggref))
		reject_construct(pc->ctx, "aggregates other than DP aggregates are",
						 "An exact aggregate releases exact values computed from the rows.",
						 "Use the DP aggregates: dp_count, dp_sum, dp_avg, dp_var, dp_stddev, dp_percentile, dp_median or dp_bounds.");
	if (IsA(node, WindowFunc))
		reject_construct(pc->ctx, "window functions are",
						 "A window function releases values computed from the rows.", HINT_README);
	if (pc->grouped && !dp_expr_has_calls(node) && contains_level_var(node, pc->sublevels))
	{
		/*
		 * An expression of the group keys: evaluated on the rows (GROUP BY
		 * expressions, HAVING conditions the planner moves to WHERE), and on
		 * groups before their selection, so it is held to the rules of rows
		 */
		(void) rows_walker(node, pc->ctx);
		return false;
	}
	if (IsA(node, Var) && pc->dp_level && ((Var *) node)->varlevelsup == (Index) pc->sublevels)
		reject_construct(pc->ctx, "row values are",
						 "The output may use the rows only through DP aggregates.", HINT_README);
	if (IsA(node, SubLink))
	{
		check_level(castNode(Query, ((SubLink *) node)->subselect), true, pc->ctx);
		return post_walker(((SubLink *) node)->testexpr, pc);
	}
	check_post(node, pc->ctx);
	return expression_tree_walker(node, post_walker, pc);
}

/*
 * The FROM items of a level: sub-queries, functions, VALUES.  The arguments
 * of TABLESAMPLE are evaluated once, not per row.
 */
static void
check_from(Query *q, bool rows, GuardContext *ctx)
{
	ListCell   *lc;

	foreach(lc, q->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		switch (rte->rtekind)
		{
			case RTE_SUBQUERY:
				check_level(rte->subquery, rows, ctx);
				break;
			case RTE_RELATION:

				/*
				 * The row-level security policies of a lookup table
				 * (lookup_join.c), which may be the role's own table, run
				 * for each of its rows read, once per row of the input in
				 * a nested loop: they are held to the rules of rows.
				 */
				if (DP_RTE_IS_LOOKUP(rte))
					(void) rows_walker((Node *) rte->securityQuals, ctx);
				break;
			case RTE_FUNCTION:
				(void) rows_walker((Node *) rte->functions, ctx);
				break;
			case RTE_VALUES:
				(void) rows_walker((Node *) rte->values_lists, ctx);
				break;
#ifdef DP_HAVE_RTE_GROUP
			case RTE_GROUP:
				/* the GROUP BY expressions, which the output refers to by Vars */
				(void) rows_walker((Node *) rte->groupexprs, ctx);
				break;
#endif
			default:
				break;
		}
	}
}

/*
 * GROUP BY only at the level of the DP aggregates, where the groups are
 * released through private selection (selection.c): with
 * dp_agg.group_keys = 'public' the groups present would be released
 * exactly (a group appears only if some row has its key).
 */
static void
check_grouping(Query *q, bool dp_here, GuardContext *ctx)
{
	if (q->groupClause == NIL && q->groupingSets == NIL)
		return;
	if (!dp_here || q->groupingSets != NIL)
		reject_construct(ctx, "GROUP BY is",
						 "The groups present would be released exactly: a group appears only if some row has its key.",
						 "Group the rows at the level of the DP aggregates, without GROUPING SETS, ROLLUP or CUBE.");
	if (dp_guc_group_keys == DP_GROUP_KEYS_PUBLIC)
		reject_construct(ctx, "GROUP BY with dp_agg.group_keys = 'public' is",
						 "The groups present would be released exactly: a group appears only if some row has its key.",
						 "SET dp_agg.group_keys = 'private': the groups are then released through private selection.");
}

/*
 * A level above the DP aggregates, or of a statement without any, may not
 * read a protected relation the current user is untrusted for.  Refused
 * here, before the planner runs: planning such a level estimates its WHERE
 * with the relation's statistics, and a role holding SELECT has them passed
 * to any function of its own (statistic_proc_security_check lets a role
 * that may read the column see them), such as an operator's function that
 * raises a notice with each most common value and histogram bound.  The
 * executor's start would refuse the plan too, but only after that.
 */
static void
check_not_read(Query *q)
{
	FindContext fc = {false, InvalidOid};
	ListCell   *lc;

	foreach(lc, q->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		if (rte->rtekind == RTE_RELATION)
			find_relation(rte->relid, rte->inh, &fc);
	}
	if (!OidIsValid(fc.untrusted))
		return;
	if (q->commandType != CMD_SELECT)
		dp_reject_protected(fc.untrusted,
							"Only queries that compute DP aggregates over it may read it; this statement changes data.");
	dp_reject_protected(fc.untrusted,
						"Only queries that compute DP aggregates over it may read it, and only as their input.");
}

/*
 * TABLESAMPLE over a protected relation the current user is untrusted for.
 *
 * BERNOULLI without REPEATABLE is refused: its release is priced with
 * amplification by subsampling (sampling.c), which holds only while the
 * sample is secret, and BERNOULLI draws its seed from PostgreSQL's
 * internal, non-cryptographic generator (xoroshiro128**), whose state the
 * role can learn from the samples it draws of its own tables in the same
 * session.  dp_agg.secure_bernoulli draws each row's coin from a CSPRNG.
 *
 * Methods other than BERNOULLI, SYSTEM and dp_agg.secure_bernoulli are
 * refused too.  Without amplification, a release over a sample is as
 * private as over the table only if sampling is a 1-stable transformation
 * (McSherry 2009, "Privacy Integrated Queries", Theorem 2: a c-stable
 * transformation followed by an epsilon-DP mechanism is c epsilon-DP),
 * that is, if a row's inclusion does not depend on the other rows:
 * BERNOULLI decides each row, SYSTEM each page, alone.  SYSTEM_ROWS (n)
 * reads rows until it has n, so removing one row lets another in (2-stable:
 * a sum with bounds of both signs moves by twice its sensitivity);
 * SYSTEM_TIME reads for a time, so which rows it reads depends on how long
 * the others took.
 */
static void
check_tablesample(Query *q, GuardContext *ctx)
{
	ListCell   *lc;

	foreach(lc, q->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);
		FindContext fc = {false, InvalidOid};
		Oid			handler;

		if (rte->rtekind != RTE_RELATION || rte->tablesample == NULL)
			continue;
		find_relation(rte->relid, rte->inh, &fc);
		if (!OidIsValid(fc.untrusted))
			continue;
		handler = rte->tablesample->tsmhandler;
		if (handler == F_BERNOULLI && rte->tablesample->repeatable == NULL)
			reject_construct(ctx, "TABLESAMPLE BERNOULLI is",
							 "Its seed comes from PostgreSQL's non-cryptographic random generator, whose state a role can learn from samples of its own tables; a known sample voids the amplification the release is priced with.",
							 "Use TABLESAMPLE dp_agg.secure_bernoulli, whose coins come from a cryptographic generator.");
		if (handler != F_BERNOULLI && handler != F_SYSTEM && !dp_is_secure_bernoulli(handler))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("TABLESAMPLE %s is not allowed over protected relation \"%s\"",
							get_func_name(handler), get_rel_name(ctx->relid)),
					 errdetail("Whether it reads a row depends on the other rows, so a row can change the release by more than its sensitivity."),
					 errhint("Use TABLESAMPLE dp_agg.secure_bernoulli.")));
	}
}

/*
 * One query level.  rows: its expressions are evaluated on rows (a FROM
 * item below the DP aggregates, a CTE, a sub-query in an expression);
 * else it is the level of the DP aggregates or above it.
 */
static void
check_level(Query *q, bool rows, GuardContext *ctx)
{
	bool		dp_here = !rows && dp_level_has_calls(q);
	ListCell   *lc;

	check_grouping(q, dp_here, ctx);
	if (q->hasWindowFuncs)
		reject_construct(ctx, "window functions are",
						 "A window function releases values computed from the rows.", HINT_README);
	if (q->hasTargetSRFs && rows)
		reject_construct(ctx, "set-returning functions on rows are",
						 "They could multiply the rows.", HINT_README);
	check_tablesample(q, ctx);
	foreach(lc, q->cteList)
		check_level(castNode(Query, ((CommonTableExpr *) lfirst(lc))->ctequery), true, ctx);
	check_from(q, rows || dp_here, ctx);
	if (rows)
	{
		if (q->sortClause != NIL)
			reject_construct(ctx, "ORDER BY below DP aggregates is",
							 "Past work_mem, sorting the rows writes temporary files, whose size pg_tablespace_size shows any role while the statement runs: it counts them.",
							 "Remove the ORDER BY: it does not change an aggregate.");
		if (q->hasAggs)
			reject_construct(ctx, "aggregates inside row expressions are",
							 "Only DP aggregates may read the rows, at the level of the statement that releases them.",
							 HINT_README);
		(void) rows_walker((Node *) q->targetList, ctx);
		(void) rows_walker((Node *) q->jointree, ctx);
		(void) rows_walker(q->havingQual, ctx);
	}
	else
	{
		PostContext pc = {ctx, dp_here, dp_here && q->groupClause != NIL, 0};

		if (!dp_here)
			check_not_read(q);
		if (dp_here)
			(void) rows_walker((Node *) q->jointree, ctx);
		else
			(void) post_walker((Node *) q->jointree, &pc);
		(void) post_walker((Node *) q->targetList, &pc);
		(void) post_walker(q->havingQual, &pc);
	}
}

static bool
find_walker(Node *node, FindContext *fc)
{
	if (node == NULL)
		return false;
	if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;

		if (rte->rtekind == RTE_RELATION)
			find_relation(rte->relid, rte->inh, fc);
		return false;
	}
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, find_walker, fc, QTW_EXAMINE_RTES_BEFORE);
	return expression_tree_walker(node, find_walker, fc);
}

/*
 * At planning: check a statement that names a protected relation the
 * current user is not trusted for (see the file's comment).  Returns
 * whether it names a protected relation at all: its plan then depends on
 * the role; *untrusted is one it names that the user is untrusted for
 * (InvalidOid if none): its plan is then sealed (row_seal.c).
 */
bool
dp_protect_guard_query(Query *query, Oid *untrusted)
{
	FindContext fc = {false, InvalidOid};
	GuardContext ctx;

	*untrusted = InvalidOid;
	if (!dp_any_protected())
		return false;
	(void) find_walker((Node *) query, &fc);
	if (OidIsValid(fc.untrusted))
	{
		if (dp_guc_citus_worker)
			dp_reject_protected(fc.untrusted, DP_PROTECTED_ON_WORKER);
		ctx.relid = fc.untrusted;
		check_level(query, false, &ctx);
	}
	*untrusted = fc.untrusted;
	return fc.any;
}
