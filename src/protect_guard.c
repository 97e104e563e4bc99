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
 *     CTEs below them) is made of a few node kinds that cannot fail, and
 *     its functions and operators are built in, not volatile, and LEAKPROOF
 *     or in the allow-list: the list below, or dp_agg.allowed_function;
 *   - expressions without row data may not be volatile either: evaluated
 *     once per row, a side effect (a sequence, a setting, a notification)
 *     would count the rows;
 *   - an operator's negator and commutator are checked with it (the planner
 *     may substitute them), and starts_with with a nondeterministic
 *     collation is refused (LEAKPROOF, yet it fails at each call);
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
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"

#include "catalog.h"
#include "compat.h"
#include "guc.h"
#include "params.h"
#include "protect.h"
#include "protect_guard.h"
#include "sampling.h"

/*
 * Built-in functions that are not LEAKPROOF but neither fail nor have side
 * effects for any argument value (each is tested on extreme values in the
 * regression test protect): comparisons of numeric (NaN and the infinities
 * are ordered values), absolute values and larger/smaller of floating point values (IEEE 754 has no
 * overflow to trap), and the length of text.  Integer arithmetic is not
 * here: it fails on overflow.
 */
static const Oid default_allowed[] = {
	F_NUMERIC_EQ, F_NUMERIC_NE, F_NUMERIC_LT, F_NUMERIC_LE, F_NUMERIC_GT, F_NUMERIC_GE,
	F_FLOAT4ABS, F_FLOAT8ABS, F_ABS_FLOAT4, F_ABS_FLOAT8,
	F_FLOAT8LARGER, F_FLOAT8SMALLER,
	F_TEXTLEN, F_LENGTH_TEXT, F_CHAR_LENGTH_TEXT,
};

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

static void
reject_construct(GuardContext *ctx, const char *construct, const char *detail, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("%s not allowed over protected relation \"%s\"", construct,
					get_rel_name(ctx->relid)),
			 errdetail("%s", detail),
			 errhint("%s", hint)));
}

#define HINT_README "See \"Protected tables\" in the dp_agg README."

static bool
default_allowed_function(Oid funcid)
{
	for (size_t i = 0; i < lengthof(default_allowed); i++)
		if (default_allowed[i] == funcid)
			return true;
	return false;
}

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

	if (func_volatile(funcid) == PROVOLATILE_VOLATILE)
		detail = "It is volatile: evaluated for each row, its side effects could count or show the rows.";
	else if (!on_rows)
		return;
	else if (funcid >= FirstNormalObjectId)
		detail = "It is not built into PostgreSQL: it could fail, or show or store a row's values.";
	else if (!get_func_leakproof(funcid) && !default_allowed_function(funcid) &&
			 !dp_function_allowed(funcid))
		detail = "It is not LEAKPROOF: for some values it could fail, and its error would tell a row's value.";
	if (detail == NULL)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("function %s is not allowed on the rows of protected relation \"%s\"",
					function_name(funcid), get_rel_name(ctx->relid)),
			 errdetail("%s", detail),
			 funcid < FirstNormalObjectId && func_volatile(funcid) != PROVOLATILE_VOLATILE ?
			 errhint("If it neither fails nor has side effects for any argument, a DBA may allow it with dp_agg.allow_function('%s').",
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
 * Built-in functions that PostgreSQL marks LEAKPROOF but that fail for a
 * nondeterministic collation: starts_with (and its operator ^@) raises
 * "nondeterministic collations are not supported for substring searches"
 * at each call, so under CASE WHEN a row predicate its error would tell
 * whether some row matches.
 */
static const Oid fails_nondeterministic[] = {F_STARTS_WITH};

static void
check_collation(Oid funcid, Oid inputcollid, GuardContext *ctx)
{
	if (!OidIsValid(inputcollid) || get_collation_isdeterministic(inputcollid))
		return;
	for (size_t i = 0; i < lengthof(fails_nondeterministic); i++)
		if (fails_nondeterministic[i] == funcid)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("function %s is not allowed on the rows of protected relation \"%s\" with a nondeterministic collation",
							function_name(funcid), get_rel_name(ctx->relid)),
					 errdetail("It fails for a nondeterministic collation, and its error would tell whether a row reaches it."),
					 errhint("Compare with = or with a range instead.")));
}

/* A function or operator call: its arguments args, its input collation. */
static void
check_call(Oid funcid, Node *args, Oid inputcollid, GuardContext *ctx)
{
	bool		on_rows = function_on_rows(funcid, args);

	check_function(funcid, on_rows, ctx);
	if (on_rows)
		check_collation(funcid, inputcollid, ctx);
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
check_operator(Oid opno, Oid opfuncid, Node *args, Oid inputcollid, GuardContext *ctx)
{
	Oid			substitutes[] = {get_negator(opno), get_commutator(opno)};

	check_call(opfuncid, args, inputcollid, ctx);
	for (size_t i = 0; i < lengthof(substitutes); i++)
		if (OidIsValid(substitutes[i]))
			check_call(get_opcode(substitutes[i]), args, inputcollid, ctx);
}

/*
 * ARRAY[] on rows.  One that nests arrays fails when its sub-arrays'
 * dimensions differ, and one of variable-length elements fails when their
 * total size exceeds the maximum size of an array (construct_md_array);
 * either error would depend on the rows.  An array of fixed-length
 * elements, or of row-independent ones, cannot fail.
 */
static void
check_array(ArrayExpr *a, GuardContext *ctx)
{
	if (a->multidims)
		reject_construct(ctx, "nested ARRAY[] on rows is",
						 "It fails when its sub-arrays' dimensions differ, and its error would depend on the rows.",
						 "Use one-dimensional arrays.");
	if (get_typlen(a->element_typeid) == -1 && varies_walker((Node *) a->elements, NULL))
		reject_construct(ctx, "ARRAY[] of variable-length row values is",
						 "It fails when the values' total size exceeds the maximum size of an array, and its error would depend on the rows.",
						 HINT_README);
}

/*
 * Expressions evaluated on rows: only node kinds that cannot fail, and
 * allowed functions (see the file's comment).
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
		case T_TargetEntry:
		case T_List:
		case T_FromExpr:
		case T_JoinExpr:
		case T_RangeTblRef:
			break;
		case T_ArrayExpr:
			check_array((ArrayExpr *) node, ctx);
			break;
		case T_FuncExpr:
			check_call(((FuncExpr *) node)->funcid, (Node *) ((FuncExpr *) node)->args,
					   ((FuncExpr *) node)->inputcollid, ctx);
			break;
		case T_OpExpr:
		case T_DistinctExpr:
		case T_NullIfExpr:
			set_opfuncid((OpExpr *) node);
			check_operator(((OpExpr *) node)->opno, ((OpExpr *) node)->opfuncid,
						   (Node *) ((OpExpr *) node)->args,
						   ((OpExpr *) node)->inputcollid, ctx);
			break;
		case T_ScalarArrayOpExpr:
			set_sa_opfuncid((ScalarArrayOpExpr *) node);
			check_operator(((ScalarArrayOpExpr *) node)->opno,
						   ((ScalarArrayOpExpr *) node)->opfuncid,
						   (Node *) ((ScalarArrayOpExpr *) node)->args,
						   ((ScalarArrayOpExpr *) node)->inputcollid, ctx);
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
		case T_CoerceViaIO:
			reject_construct(ctx, "casts through text are",
							 "A cast through text fails for some values, and its error shows the value.",
							 "Compare with a constant of the column's type instead.");
			break;
		case T_MinMaxExpr:
			reject_construct(ctx, "GREATEST and LEAST on rows are",
							 "Their comparisons are not checked to be LEAKPROOF.",
							 "Use CASE with LEAKPROOF comparisons.");
			break;
		case T_ArrayCoerceExpr:
		case T_CoerceToDomain:
			reject_construct(ctx, "array and domain casts on rows are",
							 "A cast of this kind can fail for some values, and its error would show the value.",
							 HINT_README);
			break;
		default:
			reject_construct(ctx, "this kind of expression is",
							 "On the rows of a protected relation, expressions are limited to allowed functions and operators, CASE, COALESCE, ARRAY, boolean logic and NULL tests, which cannot fail.",
							 HINT_README);
			break;
	}
	return expression_tree_walker(node, rows_walker, ctx);
}

static bool
is_dp_aggref(Node *node)
{
	return IsA(node, Aggref) && dp_lookup_call(((Aggref *) node)->aggfnoid) != NULL;
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
contains_dp_aggref_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (is_dp_aggref(node))
		return true;
	if (IsA(node, Query))
		return false;			/* a sub-query: check_level checks it */
	return expression_tree_walker(node, contains_dp_aggref_walker, context);
}

static bool
contains_dp_aggref(Node *node)
{
	return contains_dp_aggref_walker(node, NULL);
}

/* a Var of the level sublevels above node's own */
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
			check_operator(sgc->eqop, get_opcode(sgc->eqop), (Node *) a->args, a->inputcollid, ctx);
		if (OidIsValid(sgc->sortop))
		{
			check_operator(sgc->sortop, get_opcode(sgc->sortop), (Node *) a->args, a->inputcollid, ctx);
			if (get_ordering_op_properties(sgc->sortop, &opfamily, &opcintype, &strategy))
				check_call(get_opfamily_proc(opfamily, opcintype, opcintype, BTORDER_PROC),
						   (Node *) a->args, a->inputcollid, ctx);
		}
	}
}

static bool
post_walker(Node *node, PostContext *pc)
{
	if (node == NULL)
		return false;
	if (is_dp_aggref(node))
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
	if (pc->grouped && !contains_dp_aggref(node) && contains_level_var(node, pc->sublevels))
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
	return expression_tree_walker(node, post_walker, pc);
}

static bool
dp_here_walker(Node *node, void *context)
{
	if (node == NULL || IsA(node, Query))
		return false;
	if (is_dp_aggref(node) && ((Aggref *) node)->agglevelsup == 0)
		return true;
	return expression_tree_walker(node, dp_here_walker, context);
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
			reject_construct(ctx, psprintf("TABLESAMPLE %s is", get_func_name(handler)),
							 "Whether it reads a row depends on the other rows, so a row can change the release by more than its sensitivity.",
							 "Use TABLESAMPLE dp_agg.secure_bernoulli.");
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
	bool		dp_here = !rows && (dp_here_walker((Node *) q->targetList, NULL) ||
									dp_here_walker(q->havingQual, NULL));
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
 * the role.
 */
bool
dp_protect_guard_query(Query *query)
{
	FindContext fc = {false, InvalidOid};
	GuardContext ctx;

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
	return fc.any;
}
