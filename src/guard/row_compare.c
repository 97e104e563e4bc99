/*-------------------------------------------------------------------------
 *
 * row_compare.c
 *	  The comparisons the executor makes on rows itself, outside any
 *	  expression: checked before the first row.
 *
 * doc/guard.md, "Protected tables", "Nothing on the row path can fail or
 * report", "What the executor compares itself".  Grouping, DISTINCT,
 * sorting, hash and merge joins, Memoize, set operations and index scans
 * call comparison and hash functions on rows without an expression around
 * them, where the trap of row_seal.c cannot reach: at executor start, for a
 * role untrusted for a protected relation, they must be built-in C
 * functions (which fail on none of their inputs of a valid value), and a
 * collatable key must have a collation, else the first comparison fails,
 * at a row.  The collations are collected, for row_seal.c to load them
 * before the first row.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/nbtree.h"
#include "access/transam.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "nodes/nodeFuncs.h"
#include "nodes/plannodes.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "compat.h"
#include "row_compare.h"

typedef struct Cmp
{
	Oid			relid;			/* the protected relation, for messages */
	List	  **collations;		/* the collations used, to load */
} Cmp;

static void check_node(Plan *plan, Cmp *c);
static void check_merge(Node *clause, Oid opfamily, Oid collation, Cmp *c);

/* Is the function a plain built-in C function (language internal)? */
bool
dp_row_builtin_c(Oid funcid)
{
	HeapTuple	tup;
	bool		result;

	if (!OidIsValid(funcid) || funcid >= FirstNormalObjectId)
		return false;
	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	if (!HeapTupleIsValid(tup))
		return false;
	result = ((Form_pg_proc) GETSTRUCT(tup))->prolang == INTERNALlanguageId;
	ReleaseSysCache(tup);
	return result;
}

/* a collation the plan uses, to load before the first row */
void
dp_row_add_collation(Oid collation, List **collations)
{
	if (OidIsValid(collation) && collation != DEFAULT_COLLATION_OID)
		*collations = list_append_unique_oid(*collations, collation);
}

static void
refuse_comparison(Cmp *c, const char *what, Oid funcid, Oid type)
{
	if (OidIsValid(funcid) && !dp_row_builtin_c(funcid))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("%s of type %s are not allowed over protected relation \"%s\"",
						what, format_type_be(type), get_rel_name(c->relid)),
				 errdetail("They would call %s, which is not a built-in function, on rows.",
						   format_procedure(funcid)),
				 errhint("Group and sort by values of built-in types.")));
	ereport(ERROR,
			(errcode(ERRCODE_INDETERMINATE_COLLATION),
			 errmsg("%s of type %s without a collation are not allowed over protected relation \"%s\"",
					what, format_type_be(type), get_rel_name(c->relid)),
			 errdetail("They would fail at their first comparison, which only some rows reach."),
			 errhint("Use the COLLATE clause to set the collation explicitly.")));
}

/*
 * A comparison the executor makes itself (grouping, sorting): by an
 * operator whose functions are built-in C functions, with a collation if the
 * type needs one.
 */
static void
check_equality(Oid eqop, Oid collation, bool hashed, Cmp *c, const char *what)
{
	Oid			left;
	Oid			right;
	Oid			lhash = InvalidOid;
	Oid			rhash = InvalidOid;
	Oid			fn = get_opcode(eqop);

	op_input_types(eqop, &left, &right);
	if (!dp_row_builtin_c(fn))
		refuse_comparison(c, what, fn, left);
	if (hashed && (!get_op_hash_functions(eqop, &lhash, &rhash) ||
				   !dp_row_builtin_c(lhash) || !dp_row_builtin_c(rhash)))
		refuse_comparison(c, what, OidIsValid(lhash) ? lhash : fn, left);
	if (!OidIsValid(collation) && (type_is_collatable(left) || type_is_collatable(right)))
		refuse_comparison(c, what, InvalidOid, left);
	dp_row_add_collation(collation, c->collations);
}

static void
check_ordering(Oid sortop, Oid collation, Cmp *c, const char *what)
{
	Oid			opfamily;
	Oid			opcintype;
	DP_ORDERING_KIND strategy;
	Oid			cmp;
	Oid			support;

	if (!get_ordering_op_properties(sortop, &opfamily, &opcintype, &strategy))
		refuse_comparison(c, what, get_opcode(sortop), InvalidOid);
	cmp = get_opfamily_proc(opfamily, opcintype, opcintype, BTORDER_PROC);
	if (!dp_row_builtin_c(cmp))
		refuse_comparison(c, what, OidIsValid(cmp) ? cmp : get_opcode(sortop), opcintype);
	support = get_opfamily_proc(opfamily, opcintype, opcintype, BTSORTSUPPORT_PROC);
	if (OidIsValid(support) && !dp_row_builtin_c(support))
		refuse_comparison(c, what, support, opcintype);
	if (!OidIsValid(collation) && type_is_collatable(opcintype))
		refuse_comparison(c, what, InvalidOid, opcintype);
	dp_row_add_collation(collation, c->collations);
}

/*
 * The quals an index evaluates (btree and hash indexes of built-in operator
 * families only, relation_info): their operators' functions are built-in C
 * functions; the index's own comparison functions are those of its
 * operator family.
 */
static void
check_index(List *quals, List *orderby, Cmp *c)
{
	ListCell   *lc;

	if (orderby != NIL)
		refuse_comparison(c, "ordered index scans", InvalidOid, InvalidOid);
	foreach(lc, quals)
	{
		Node	   *q = lfirst(lc);
		Oid			fn = InvalidOid;
		Oid			collation = InvalidOid;

		if (IsA(q, OpExpr))
		{
			set_opfuncid((OpExpr *) q);
			fn = ((OpExpr *) q)->opfuncid;
			collation = ((OpExpr *) q)->inputcollid;
		}
		else if (IsA(q, ScalarArrayOpExpr))
		{
			set_sa_opfuncid((ScalarArrayOpExpr *) q);
			fn = ((ScalarArrayOpExpr *) q)->opfuncid;
			collation = ((ScalarArrayOpExpr *) q)->inputcollid;
		}
		else if (!IsA(q, NullTest))
			refuse_comparison(c, "index conditions of this kind", InvalidOid, InvalidOid);
		if (OidIsValid(fn) && !dp_row_builtin_c(fn))
			refuse_comparison(c, "index conditions", fn, InvalidOid);
		dp_row_add_collation(collation, c->collations);
	}
}

/* the comparisons of one plan node (not of its children) */
static void
check_node(Plan *plan, Cmp *c)
{
	switch (nodeTag(plan))
	{
		case T_Agg:
			{
				Agg		   *a = (Agg *) plan;
				ListCell   *lc;

				for (int i = 0; i < a->numCols; i++)
					check_equality(a->grpOperators[i], a->grpCollations[i],
								   a->aggstrategy != AGG_SORTED && a->aggstrategy != AGG_PLAIN,
								   c, "GROUP BY keys");
				/* grouping sets: the other Agg and Sort nodes of the chain */
				foreach(lc, a->chain)
					check_node(lfirst(lc), c);
				break;
			}
		case T_HashJoin:
			{
				ListCell   *op;
				ListCell   *coll;

				forboth(op, ((HashJoin *) plan)->hashoperators, coll, ((HashJoin *) plan)->hashcollations)
					check_equality(lfirst_oid(op), lfirst_oid(coll), true, c, "join keys");
				break;
			}
		case T_MergeJoin:
			{
				MergeJoin  *m = (MergeJoin *) plan;
				ListCell   *lc;

				foreach(lc, m->mergeclauses)
					check_merge(lfirst(lc), m->mergeFamilies[foreach_current_index(lc)],
								m->mergeCollations[foreach_current_index(lc)], c);
				break;
			}
		case T_Memoize:
			for (int i = 0; i < ((Memoize *) plan)->numKeys; i++)
				check_equality(((Memoize *) plan)->hashOperators[i],
							   ((Memoize *) plan)->collations[i], true, c, "join keys");
			break;
		case T_RecursiveUnion:
			for (int i = 0; i < ((RecursiveUnion *) plan)->numCols; i++)
				check_equality(((RecursiveUnion *) plan)->dupOperators[i],
							   ((RecursiveUnion *) plan)->dupCollations[i], true, c, "UNION keys");
			break;
		case T_SetOp:
			for (int i = 0; i < ((SetOp *) plan)->numCols; i++)
#if PG_VERSION_NUM >= 180000
				check_equality(((SetOp *) plan)->cmpOperators[i], ((SetOp *) plan)->cmpCollations[i],
#else
				check_equality(((SetOp *) plan)->dupOperators[i], ((SetOp *) plan)->dupCollations[i],
#endif
							   ((SetOp *) plan)->strategy == SETOP_HASHED, c, "set operation keys");
			break;
		case T_Group:
			for (int i = 0; i < ((Group *) plan)->numCols; i++)
				check_equality(((Group *) plan)->grpOperators[i],
							   ((Group *) plan)->grpCollations[i], false, c, "GROUP BY keys");
			break;
		case T_Unique:
			for (int i = 0; i < ((Unique *) plan)->numCols; i++)
				check_equality(((Unique *) plan)->uniqOperators[i],
							   ((Unique *) plan)->uniqCollations[i], false, c, "DISTINCT keys");
			break;
		case T_WindowAgg:
			{
				WindowAgg  *w = (WindowAgg *) plan;

				for (int i = 0; i < w->partNumCols; i++)
					check_equality(w->partOperators[i], w->partCollations[i], false, c,
								   "PARTITION BY keys");
				for (int i = 0; i < w->ordNumCols; i++)
					check_equality(w->ordOperators[i], w->ordCollations[i], false, c,
								   "ORDER BY keys");
				break;
			}
		case T_Sort:
		case T_IncrementalSort:
			for (int i = 0; i < ((Sort *) plan)->numCols; i++)
				check_ordering(((Sort *) plan)->sortOperators[i],
							   ((Sort *) plan)->collations[i], c, "sort keys");
			break;
		case T_GatherMerge:
			for (int i = 0; i < ((GatherMerge *) plan)->numCols; i++)
				check_ordering(((GatherMerge *) plan)->sortOperators[i],
							   ((GatherMerge *) plan)->collations[i], c, "sort keys");
			break;
		case T_MergeAppend:
			for (int i = 0; i < ((MergeAppend *) plan)->numCols; i++)
				check_ordering(((MergeAppend *) plan)->sortOperators[i],
							   ((MergeAppend *) plan)->collations[i], c, "sort keys");
			break;
		case T_IndexScan:
			check_index(((IndexScan *) plan)->indexqual, ((IndexScan *) plan)->indexorderby, c);
			break;
		case T_IndexOnlyScan:
			check_index(((IndexOnlyScan *) plan)->indexqual,
						((IndexOnlyScan *) plan)->indexorderby, c);
			break;
		case T_BitmapIndexScan:
			check_index(((BitmapIndexScan *) plan)->indexqual, NIL, c);
			break;
		default:
			break;
	}
}

/* the join keys of a merge join: compared by their operator family */
static void
check_merge(Node *clause, Oid opfamily, Oid collation, Cmp *c)
{
	Oid			left;
	Oid			right;
	Oid			cmp;
	Oid			support;

	if (!IsA(clause, OpExpr))
		refuse_comparison(c, "join keys of this kind", InvalidOid, InvalidOid);
	op_input_types(((OpExpr *) clause)->opno, &left, &right);
	cmp = get_opfamily_proc(opfamily, left, right, BTORDER_PROC);
	if (!dp_row_builtin_c(cmp))
		refuse_comparison(c, "join keys", OidIsValid(cmp) ? cmp : get_opcode(((OpExpr *) clause)->opno),
						  left);
	support = get_opfamily_proc(opfamily, left, right, BTSORTSUPPORT_PROC);
	if (OidIsValid(support) && !dp_row_builtin_c(support))
		refuse_comparison(c, "join keys", support, left);
	if (!OidIsValid(collation) && (type_is_collatable(left) || type_is_collatable(right)))
		refuse_comparison(c, "join keys", InvalidOid, left);
	dp_row_add_collation(collation, c->collations);
}


/*
 * The comparisons of one plan node (not of its children) of a statement
 * over protected relation relid: refused, or their collations added.
 */
void
dp_row_check_node(Plan *plan, Oid relid, List **collations)
{
	Cmp			c = {relid, collations};

	check_node(plan, &c);
}

/* the DISTINCT of an aggregate's arguments: an equality and an ordering */
void
dp_row_check_equality(Oid eqop, Oid collation, bool hashed, Oid relid, List **collations,
					  const char *what)
{
	Cmp			c = {relid, collations};

	check_equality(eqop, collation, hashed, &c, what);
}

void
dp_row_check_ordering(Oid sortop, Oid collation, Oid relid, List **collations,
					  const char *what)
{
	Cmp			c = {relid, collations};

	check_ordering(sortop, collation, &c, what);
}
