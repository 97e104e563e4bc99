/*-------------------------------------------------------------------------
 *
 * row_fields.c
 *	  Every expression of a plan node, and how the executor evaluates it.
 *
 * doc/guard.md, "Protected tables", "Nothing on the row path can fail or
 * report".  The row seal (row_seal.c) traps the expressions evaluated on
 * rows and checks the others before the first row; this file says, for
 * every plan node type PostgreSQL 15 to 18 makes, which of its fields hold
 * expressions and how each is evaluated:
 *   - DP_ROW_FIELD_ROWS: evaluated for rows, as an expression whose NULL
 *     means what a failed call's NULL means (target lists, quals, join
 *     conditions, hash and merge clauses and keys, a lossy scan's recheck,
 *     a Memoize node's cache keys, a window's run condition, a constant
 *     qual, which a correlated sub-plan evaluates for each outer row):
 *     trapped;
 *   - DP_ROW_FIELD_INDEX: the conditions an index scan hands to the index:
 *     the index applies their operator (its operator family's functions,
 *     checked apart), while their other operand is evaluated for each scan,
 *     for each outer row of a nested loop (a runtime key): the operands are
 *     trapped, the operator is not;
 *   - DP_ROW_FIELD_FIXED: evaluated once for a scan, outside any trap
 *     (LIMIT, TABLESAMPLE, window frame offsets, TID lists, the functions
 *     and VALUES of FROM, a custom or foreign scan's expressions): they may
 *     not read a row, a parameter set from rows (a nested loop's), or a
 *     sub-plan (dp_row_fixed);
 *   - DP_ROW_FIELD_PARAMS: a nested loop's parameters, which the executor
 *     copies from the outer row's columns: Vars only;
 *   - DP_ROW_FIELD_NONE: not supported on such a plan (MERGE's actions):
 *     must be empty.
 * Fields that hold no expression, or only describe the scan tuple
 * (indextlist, fdw_scan_tlist, custom_scan_tlist, exclRelTlist), are not
 * listed; copies of an expression for EXPLAIN (indexorderbyorig,
 * runConditionOrig) are trapped like the rest; the initPlan list names
 * sub-plans, which are checked as plans.  A node type this file does not know (a later
 * PostgreSQL's) makes dp_row_fields return -1: the seal refuses the plan.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "nodes/nodeFuncs.h"
#include "nodes/plannodes.h"

#include "row_fields.h"

#define ADD(f, k, w) \
	do { \
		fields[n].field = (Node **) &(f); \
		fields[n].kind = (k); \
		fields[n].what = (w); \
		n++; \
	} while (0)

int
dp_row_fields(Plan *plan, DpRowField *fields)
{
	int			n = 0;

	ADD(plan->targetlist, DP_ROW_FIELD_ROWS, "the select list");
	ADD(plan->qual, DP_ROW_FIELD_ROWS, "a condition");
	switch (nodeTag(plan))
	{
		case T_Result:
			ADD(((Result *) plan)->resconstantqual, DP_ROW_FIELD_ROWS, "a condition");
			break;
		case T_ModifyTable:
			{
				ModifyTable *m = (ModifyTable *) plan;

				ADD(m->withCheckOptionLists, DP_ROW_FIELD_ROWS, "a check option");
				ADD(m->returningLists, DP_ROW_FIELD_ROWS, "RETURNING");
				ADD(m->onConflictSet, DP_ROW_FIELD_ROWS, "ON CONFLICT DO UPDATE");
				ADD(m->onConflictWhere, DP_ROW_FIELD_ROWS, "ON CONFLICT DO UPDATE");
				ADD(m->mergeActionLists, DP_ROW_FIELD_NONE, "MERGE");
#if PG_VERSION_NUM >= 170000
				ADD(m->mergeJoinConditions, DP_ROW_FIELD_NONE, "MERGE");
#endif
				break;
			}
		case T_SampleScan:
			ADD(((SampleScan *) plan)->tablesample, DP_ROW_FIELD_FIXED, "the arguments of TABLESAMPLE");
			break;
		case T_IndexScan:
			ADD(((IndexScan *) plan)->indexqual, DP_ROW_FIELD_INDEX, "an index condition");
			ADD(((IndexScan *) plan)->indexqualorig, DP_ROW_FIELD_ROWS, "an index condition");
			ADD(((IndexScan *) plan)->indexorderby, DP_ROW_FIELD_INDEX, "an index ordering");
			ADD(((IndexScan *) plan)->indexorderbyorig, DP_ROW_FIELD_ROWS, "an index ordering");
			break;
		case T_IndexOnlyScan:
			ADD(((IndexOnlyScan *) plan)->indexqual, DP_ROW_FIELD_INDEX, "an index condition");
			ADD(((IndexOnlyScan *) plan)->recheckqual, DP_ROW_FIELD_ROWS, "an index condition");
			ADD(((IndexOnlyScan *) plan)->indexorderby, DP_ROW_FIELD_INDEX, "an index ordering");
			break;
		case T_BitmapIndexScan:
			ADD(((BitmapIndexScan *) plan)->indexqual, DP_ROW_FIELD_INDEX, "an index condition");
			ADD(((BitmapIndexScan *) plan)->indexqualorig, DP_ROW_FIELD_ROWS, "an index condition");
			break;
		case T_BitmapHeapScan:
			ADD(((BitmapHeapScan *) plan)->bitmapqualorig, DP_ROW_FIELD_ROWS, "an index condition");
			break;
		case T_TidScan:
			ADD(((TidScan *) plan)->tidquals, DP_ROW_FIELD_FIXED, "a condition on ctid");
			break;
		case T_TidRangeScan:
			ADD(((TidRangeScan *) plan)->tidrangequals, DP_ROW_FIELD_FIXED, "a condition on ctid");
			break;
		case T_FunctionScan:
			ADD(((FunctionScan *) plan)->functions, DP_ROW_FIELD_FIXED, "a function in FROM");
			break;
		case T_ValuesScan:
			ADD(((ValuesScan *) plan)->values_lists, DP_ROW_FIELD_FIXED, "a VALUES list");
			break;
		case T_TableFuncScan:
			ADD(((TableFuncScan *) plan)->tablefunc, DP_ROW_FIELD_FIXED, "a table function in FROM");
			break;
		case T_ForeignScan:
			ADD(((ForeignScan *) plan)->fdw_exprs, DP_ROW_FIELD_FIXED, "the expressions of a foreign scan");
			ADD(((ForeignScan *) plan)->fdw_recheck_quals, DP_ROW_FIELD_ROWS, "a condition");
			break;
		case T_CustomScan:
			ADD(((CustomScan *) plan)->custom_exprs, DP_ROW_FIELD_FIXED, "the expressions of a custom scan");
			break;
		case T_NestLoop:
			ADD(((Join *) plan)->joinqual, DP_ROW_FIELD_ROWS, "a join condition");
			ADD(((NestLoop *) plan)->nestParams, DP_ROW_FIELD_PARAMS, "a join condition");
			break;
		case T_MergeJoin:
			ADD(((Join *) plan)->joinqual, DP_ROW_FIELD_ROWS, "a join condition");
			ADD(((MergeJoin *) plan)->mergeclauses, DP_ROW_FIELD_ROWS, "a join condition");
			break;
		case T_HashJoin:
			ADD(((Join *) plan)->joinqual, DP_ROW_FIELD_ROWS, "a join condition");
			ADD(((HashJoin *) plan)->hashclauses, DP_ROW_FIELD_ROWS, "a join condition");
			ADD(((HashJoin *) plan)->hashkeys, DP_ROW_FIELD_ROWS, "a join condition");
			break;
		case T_Hash:
			ADD(((Hash *) plan)->hashkeys, DP_ROW_FIELD_ROWS, "a join condition");
			break;
		case T_Memoize:
			ADD(((Memoize *) plan)->param_exprs, DP_ROW_FIELD_ROWS, "a join condition");
			break;
		case T_WindowAgg:
			ADD(((WindowAgg *) plan)->startOffset, DP_ROW_FIELD_FIXED, "a window frame offset");
			ADD(((WindowAgg *) plan)->endOffset, DP_ROW_FIELD_FIXED, "a window frame offset");
			ADD(((WindowAgg *) plan)->runCondition, DP_ROW_FIELD_ROWS, "a condition");
			ADD(((WindowAgg *) plan)->runConditionOrig, DP_ROW_FIELD_ROWS, "a condition");
			break;
		case T_Limit:
			ADD(((Limit *) plan)->limitOffset, DP_ROW_FIELD_FIXED, "OFFSET");
			ADD(((Limit *) plan)->limitCount, DP_ROW_FIELD_FIXED, "LIMIT");
			break;
			/* the node types without expressions of their own */
		case T_ProjectSet:
		case T_Append:
		case T_MergeAppend:
		case T_RecursiveUnion:
		case T_BitmapAnd:
		case T_BitmapOr:
		case T_SeqScan:
		case T_SubqueryScan:
		case T_CteScan:
		case T_NamedTuplestoreScan:
		case T_WorkTableScan:
		case T_Material:
		case T_Sort:
		case T_IncrementalSort:
		case T_Group:
		case T_Agg:
		case T_Unique:
		case T_Gather:
		case T_GatherMerge:
		case T_SetOp:
		case T_LockRows:
			break;
		default:
			return -1;
	}
	Assert(n <= DP_ROW_MAX_FIELDS);
	return n;
}

/* does an expression read nothing that comes from rows? */
static bool
fixed_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	/* a TID condition's ctid is the scanned tuple's, not a value computed */
	if (IsA(node, Var) && ((Var *) node)->varattno != SelfItemPointerAttributeNumber)
		return true;
	if (IsA(node, Param) && ((Param *) node)->paramkind != PARAM_EXTERN)
		return true;
	if (IsA(node, SubPlan) || IsA(node, AlternativeSubPlan) || IsA(node, PlaceHolderVar) ||
		IsA(node, Aggref) || IsA(node, WindowFunc) || IsA(node, GroupingFunc))
		return true;
	return expression_tree_walker(node, fixed_walker, context);
}

/*
 * May an expression of a DP_ROW_FIELD_FIXED field be evaluated outside any
 * trap?  Only if it reads no row: constants and the statement's parameters.
 */
bool
dp_row_fixed(Node *expr)
{
	return !fixed_walker(expr, NULL);
}
