/*-------------------------------------------------------------------------
 *
 * plan_nodes.c
 *	  The children and expressions of a plan node, and whether it reads rows.
 *
 * Every check of a plan (the guard's, the protection of relations, the
 * row seal, public domains, Citus) walks plan trees the same way: the
 * children of a node (not the SubPlans of its expressions, which the
 * PlannedStmt lists), the expressions of a node by its type, and whether
 * a node reads the rows of the relation its scanrelid names.  One place
 * knows the plan node types, so that a walk misses none of them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/plannodes.h"

#include "plan_nodes.h"

/* Does this plan node read rows of the relation its scanrelid names? */
bool
dp_plan_reads_relation(Plan *plan)
{
	switch (nodeTag(plan))
	{
		case T_SeqScan:
		case T_SampleScan:
		case T_IndexScan:
		case T_IndexOnlyScan:
		case T_BitmapHeapScan:
		case T_TidScan:
		case T_TidRangeScan:
			return true;
		default:
			return false;
	}
}

/* children of a plan node (not SubPlans in expressions), a new list */
List *
dp_plan_children(Plan *plan)
{
	List	   *children = NIL;

	if (plan->lefttree)
		children = lappend(children, plan->lefttree);
	if (plan->righttree)
		children = lappend(children, plan->righttree);
	switch (nodeTag(plan))
	{
		case T_Append:
			children = list_concat(children, ((Append *) plan)->appendplans);
			break;
		case T_MergeAppend:
			children = list_concat(children, ((MergeAppend *) plan)->mergeplans);
			break;
		case T_BitmapAnd:
			children = list_concat(children, ((BitmapAnd *) plan)->bitmapplans);
			break;
		case T_BitmapOr:
			children = list_concat(children, ((BitmapOr *) plan)->bitmapplans);
			break;
		case T_SubqueryScan:
			children = lappend(children, ((SubqueryScan *) plan)->subplan);
			break;
		case T_CustomScan:
			/* a custom plan that is also the outer plan is one child */
			{
				ListCell   *lc;

				foreach(lc, ((CustomScan *) plan)->custom_plans)
					if (lfirst(lc) != (void *) plan->lefttree)
						children = lappend(children, lfirst(lc));
			}
			break;
		default:
			break;
	}
	return children;
}

/* The expressions of one plan node (not of its children), a new list. */
List *
dp_plan_expressions(Plan *plan)
{
	List	   *e = list_make2(plan->targetlist, plan->qual);

	switch (nodeTag(plan))
	{
		case T_Result:
			return lappend(e, ((Result *) plan)->resconstantqual);
		case T_ModifyTable:
			return list_concat(e, list_make3(((ModifyTable *) plan)->returningLists,
											 ((ModifyTable *) plan)->onConflictSet,
											 ((ModifyTable *) plan)->onConflictWhere));
		case T_IndexScan:
			return list_concat(e, list_make2(((IndexScan *) plan)->indexqual,
											 ((IndexScan *) plan)->indexorderby));
		case T_IndexOnlyScan:
			return list_concat(e, list_make2(((IndexOnlyScan *) plan)->indexqual,
											 ((IndexOnlyScan *) plan)->indexorderby));
		case T_BitmapIndexScan:
			return lappend(e, ((BitmapIndexScan *) plan)->indexqual);
		case T_BitmapHeapScan:
			return lappend(e, ((BitmapHeapScan *) plan)->bitmapqualorig);
		case T_TidScan:
			return lappend(e, ((TidScan *) plan)->tidquals);
		case T_TidRangeScan:
			return lappend(e, ((TidRangeScan *) plan)->tidrangequals);
		case T_SampleScan:
			return lappend(e, ((SampleScan *) plan)->tablesample);
		case T_FunctionScan:
			return lappend(e, ((FunctionScan *) plan)->functions);
		case T_TableFuncScan:
			return lappend(e, ((TableFuncScan *) plan)->tablefunc);
		case T_ValuesScan:
			return lappend(e, ((ValuesScan *) plan)->values_lists);
		case T_NestLoop:
			return lappend(e, ((Join *) plan)->joinqual);
		case T_MergeJoin:
			return list_concat(e, list_make2(((Join *) plan)->joinqual,
											 ((MergeJoin *) plan)->mergeclauses));
		case T_HashJoin:
			return list_concat(e, list_make3(((Join *) plan)->joinqual,
											 ((HashJoin *) plan)->hashclauses,
											 ((HashJoin *) plan)->hashkeys));
		case T_Hash:
			return lappend(e, ((Hash *) plan)->hashkeys);
		case T_Limit:
			return list_concat(e, list_make2(((Limit *) plan)->limitOffset,
											 ((Limit *) plan)->limitCount));
		case T_WindowAgg:
			return list_concat(e, list_make2(((WindowAgg *) plan)->startOffset,
											 ((WindowAgg *) plan)->endOffset));
		case T_Memoize:
			return lappend(e, ((Memoize *) plan)->param_exprs);
		case T_ForeignScan:
			return list_concat(e, list_make2(((ForeignScan *) plan)->fdw_exprs,
											 ((ForeignScan *) plan)->fdw_recheck_quals));
		case T_CustomScan:
			return lappend(e, ((CustomScan *) plan)->custom_exprs);
		default:
			return e;
	}
}
