/*-------------------------------------------------------------------------
 *
 * lookup_join.c
 *	  Joins of the input of DP aggregates to lookup tables, on a key unique
 *	  in the lookup table.
 *
 * doc/guard.md, "Lookup joins".  A DP aggregate reads one relation (its input;
 * with a privacy unit, rows of one unit); a query level with DP aggregates,
 * or a sub-query, view or CTE below one, may join that relation to lookup
 * tables:
 *
 *   SELECT d.name, dp_count(*) FROM visits v JOIN departments d
 *       ON d.dept_id = v.dept_id GROUP BY d.name
 *
 * provided each input row matches at most one row of each lookup table.
 * Then the join maps each input row to at most one output row, a function
 * of that row alone (and of the lookup tables, which are not the data the
 * release protects): a 1-stable transformation (McSherry 2009, "Privacy
 * Integrated Queries", Theorem 2).  Neighbouring inputs, which differ by
 * one row (or by all the rows of one unit), give joined rows that differ
 * by at most that row (or those rows, all of the same unit, which the join
 * keeps), so the sensitivity of every DP aggregate is the one it has over
 * the input alone, with or without privacy units, and the lookup table's
 * columns may be used in WHERE, GROUP BY and the arguments of DP
 * aggregates.
 *
 * The condition, checked here at planning, before the planner and before
 * the charge: for each lookup table L, the join conditions compare every
 * key column of a unique index of L (a primary key, a unique constraint,
 * or another unique index: valid, not deferrable, without predicate or
 * expressions) with the equality operator of the index column's operator
 * family, the column plain on its side (or relabelled to a binary
 * compatible type), the other side an expression of the input and of
 * lookup tables already joined, without volatile functions; the collation
 * of the comparison is deterministic or the index column's.  Each
 * condition is a conjunct of WHERE or of an inner join's ON (or, for a
 * LEFT JOIN's lookup table, of that join's ON).  What breaks uniqueness is
 * refused: a cast of the key column (two keys may cast to one value), a
 * nondeterministic collation other than the index's (two keys may be
 * equal under it), an operator of another family, a condition under OR,
 * a deferrable constraint (violated until commit), a partial index, an
 * inheritance parent read with its children (its index does not cover
 * them), IS NOT DISTINCT FROM (matches NULL keys).  NULL keys match
 * nothing under a strict equality.  Joins are inner, or LEFT (RIGHT) with
 * the lookup table on the nullable side: every input row is kept at most
 * once.  The input is the one relation that is not looked up: a relation
 * with a privacy unit, a protected one, a sub-query, view or CTE, else the
 * first of the FROM clause that the others can be looked up from.  A
 * lookup table may not be protected, have a privacy unit, be sampled, or
 * belong to the inheritance tree of the input; a join of two inputs is
 * refused.
 *
 * Why the uniqueness seen at planning holds at execution: the statement
 * holds a lock on L from its parse to the end of its transaction, so no
 * other session drops the index meanwhile; a plan cached with the index
 * is invalidated when it is dropped (a change of L's relcache entry), and
 * checked again; the statement reads L with one snapshot, in which no two
 * rows share a key of an immediate unique index built before that snapshot
 * was taken.  Only then: a snapshot older than the index may still see rows
 * removed (deleted, or updated to another key) before the build, which the
 * build never checked.  So the unique index each lookup table is looked up
 * by is the mark (catalog.h), and the executor's start checks it against
 * the statement's snapshot, whatever transaction made the plan
 * (dp_lookup_check_plan); planning prefers an index old enough for its own
 * snapshot.  While it is planned and
 * while it runs, no statement of its process writes L (side_reads.c: L is
 * a relation it reads); and ALTER TABLE on L fails while the statement has
 * it open.  Rows of L changed between planning and execution change which
 * row each input row matches, never how many.
 *
 * Accepted lookup tables are marked (catalog.h, DP_LOOKUP_MARK) for the
 * guards that follow: guard.c finds the input among the items of the FROM
 * clause, and accepts in the plan joins whose one side reads marked
 * relations only; privacy_unit.c finds the unit in the input;
 * protect_guard.c holds the row-level security policies of lookup tables
 * to the rules of rows; protect_check.c does not count lookup tables as
 * the input of DP aggregates.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relation.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "catalog.h"
#include "dp_calls.h"
#include "guard.h"
#include "inheritance.h"
#include "lookup_join.h"
#include "protect.h"
#include "unit_catalog.h"

#define HINT_LOOKUP "See \"Lookup joins\" in dp_agg's doc/guard.md."

/* an item of a FROM clause: a table, sub-query, view or CTE */
typedef struct FromItem
{
	Index		rti;
	RangeTblEntry *rte;
	bool		nullable;		/* on the nullable side of a LEFT or RIGHT JOIN */
	Oid			index;			/* looked up: the unique index it is looked up by */
	List	   *on;				/* then: the conjuncts of that join's ON */
	bool		resolved;		/* the input, or looked up from it */
} FromItem;

/* the items of a query level's FROM clause and the conditions joining them */
typedef struct Joins
{
	Query	   *q;
	List	   *items;			/* FromItem * */
	List	   *inner;			/* the conjuncts of WHERE and of inner ONs */
} Joins;

/* why an item could not be looked up: the first near miss, for the message */
typedef enum Miss
{
	MISS_NONE,
	MISS_NO_KEY,				/* L has no usable unique index */
	MISS_NOT_COVERED,			/* no condition on some key column */
	MISS_CAST,					/* the key column under a cast */
	MISS_OPERATOR,				/* not the equality of the key's family */
	MISS_COLLATION,				/* another nondeterministic collation */
	MISS_VOLATILE,				/* the other side is volatile */
	MISS_OTHER_SIDE				/* the other side reads L, or tables not yet
								 * joined */
} Miss;

typedef struct Why
{
	Miss		miss;
	FromItem	   *item;			/* the item that could not be looked up */
	AttrNumber	attno;			/* the key column concerned */
} Why;

/* ---------- the FROM clause ---------- */

/* Vars of join alias columns (JOIN ... USING) replaced by what they alias */
static Node *
join_alias_mutator(Node *node, Query *q)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var) && ((Var *) node)->varlevelsup == 0)
	{
		Var		   *v = (Var *) node;
		RangeTblEntry *rte = rt_fetch(v->varno, q->rtable);

		if (rte->rtekind == RTE_JOIN && v->varattno > 0 &&
			v->varattno <= list_length(rte->joinaliasvars))
		{
			Node	   *alias = list_nth(rte->joinaliasvars, v->varattno - 1);

			if (alias != NULL)
				return join_alias_mutator(copyObject(alias), q);
		}
		return node;
	}
	if (IsA(node, Query))
		return node;			/* sub-queries are refused by the guard */
	return expression_tree_mutator(node, join_alias_mutator, q);
}

static List *
conjuncts(Query *q, Node *qual)
{
	if (qual == NULL)
		return NIL;
	return make_ands_implicit((Expr *) join_alias_mutator(copyObject(qual), q));
}

static FromItem *
add_item(Joins *j, Node *n)
{
	FromItem	   *it = palloc0(sizeof(FromItem));

	it->rti = castNode(RangeTblRef, n)->rtindex;
	it->rte = rt_fetch(it->rti, j->q->rtable);
	j->items = lappend(j->items, it);
	return it;
}

#define DETAIL_ONCE "Each row read by the DP aggregates must appear at most once in the joined rows, and only rows it reads may appear."

/* the lookup table on the nullable side of an outer join */
static void
nullable_item(Joins *j, Node *n, Node *quals)
{
	FromItem	   *it;

	if (!IsA(n, RangeTblRef))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the nullable side of an outer join in a statement with DP aggregates must be one lookup table"),
				 errdetail(DETAIL_ONCE),
				 errhint("Write one LEFT JOIN per lookup table, with the relation the DP aggregates read on the left.")));
	it = add_item(j, n);
	it->nullable = true;
	it->on = conjuncts(j->q, quals);
}

static void
collect(Joins *j, Node *n)
{
	ListCell   *lc;

	if (IsA(n, RangeTblRef))
		(void) add_item(j, n);
	else if (IsA(n, FromExpr))
	{
		foreach(lc, ((FromExpr *) n)->fromlist)
			collect(j, lfirst(lc));
		j->inner = list_concat(j->inner, conjuncts(j->q, ((FromExpr *) n)->quals));
	}
	else if (IsA(n, JoinExpr))
	{
		JoinExpr   *je = (JoinExpr *) n;

		switch (je->jointype)
		{
			case JOIN_INNER:
				collect(j, je->larg);
				collect(j, je->rarg);
				j->inner = list_concat(j->inner, conjuncts(j->q, je->quals));
				break;
			case JOIN_LEFT:
				collect(j, je->larg);
				nullable_item(j, je->rarg, je->quals);
				break;
			case JOIN_RIGHT:
				collect(j, je->rarg);
				nullable_item(j, je->larg, je->quals);
				break;
			default:
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("FULL JOIN is not allowed in a statement with DP aggregates"),
						 errdetail(DETAIL_ONCE),
						 errhint("Use LEFT JOIN, with the relation the DP aggregates read on the left.")));
		}
	}
	else
		elog(ERROR, "dp_agg: unexpected node %d in a FROM clause", (int) nodeTag(n));
}

/* ---------- unique keys ---------- */

typedef struct Resolved
{
	Joins	   *j;
	Bitmapset  *rtis;			/* of the resolved items */
	Index		self;			/* the item being looked up */
} Resolved;

/* is every Var of the expression of a resolved item other than self? */
static bool
other_side_walker(Node *node, Resolved *r)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
	{
		Var		   *v = (Var *) node;

		if (v->varlevelsup != 0)
			return true;
		return v->varno == (int) r->self || !bms_is_member(v->varno, r->rtis);
	}
	if (IsA(node, PlaceHolderVar) || IsA(node, Query) || IsA(node, SubLink))
		return true;
	return expression_tree_walker(node, other_side_walker, r);
}

/* the key column attno of item it, plain or relabelled */
static bool
is_key_column(Node *n, Index rti, AttrNumber attno)
{
	while (IsA(n, RelabelType))
		n = (Node *) ((RelabelType *) n)->arg;
	return IsA(n, Var) && ((Var *) n)->varno == (int) rti &&
		((Var *) n)->varlevelsup == 0 && ((Var *) n)->varattno == attno;
}

/* does the expression mention column attno of item rti? */
static bool
mentions_walker(Node *node, Var *col)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
		return ((Var *) node)->varno == col->varno && ((Var *) node)->varlevelsup == 0 &&
			((Var *) node)->varattno == col->varattno;
	return expression_tree_walker(node, mentions_walker, col);
}

/*
 * Is cond "key = expression" for key column attno of the item being looked
 * up, with the equality of the column's operator family, a collation
 * under which equal values are equal keys, and an expression of resolved
 * items only?  Otherwise, if it mentions the column, say why in *why.
 */
static bool
key_condition(Node *cond, Resolved *r, AttrNumber attno, Oid opfamily, Oid collation, Why *why)
{
	Var			col;
	Miss		miss = MISS_NONE;

	col.varno = r->self;
	col.varattno = attno;
	if (IsA(cond, OpExpr) && list_length(((OpExpr *) cond)->args) == 2)
	{
		OpExpr	   *op = (OpExpr *) cond;

		for (int side = 0; side < 2; side++)
		{
			Node	   *key = list_nth(op->args, side);
			Node	   *other = list_nth(op->args, 1 - side);

			if (!is_key_column(key, r->self, attno))
				continue;
			if (!op_in_opfamily(op->opno, opfamily) ||
				get_op_opfamily_strategy(op->opno, opfamily) != BTEqualStrategyNumber ||
				!op_strict(op->opno))
				miss = MISS_OPERATOR;
			else if (OidIsValid(op->inputcollid) &&
					 !get_collation_isdeterministic(op->inputcollid) &&
					 op->inputcollid != collation)
				miss = MISS_COLLATION;
			else if (contain_volatile_functions(other))
				miss = MISS_VOLATILE;
			else if (other_side_walker(other, r))
				miss = MISS_OTHER_SIDE;
			else
				return true;
		}
	}
	if (miss == MISS_NONE && mentions_walker(cond, &col))
		miss = MISS_CAST;
	if (miss != MISS_NONE && why->miss == MISS_NONE)
	{
		why->miss = miss;
		why->attno = attno;
	}
	return false;
}

/* a unique index whose uniqueness holds for every snapshot of the statement */
static bool
usable_unique_index(HeapTuple tup)
{
	Form_pg_index ix = (Form_pg_index) GETSTRUCT(tup);

	if (!ix->indisunique || !ix->indimmediate || !ix->indisvalid || !ix->indislive)
		return false;
	if (!heap_attisnull(tup, Anum_pg_index_indpred, NULL) ||
		!heap_attisnull(tup, Anum_pg_index_indexprs, NULL))
		return false;
	for (int i = 0; i < ix->indnkeyatts; i++)
	{
		if (ix->indkey.values[i] <= 0)
			return false;
	}
	return true;
}

/*
 * Does the uniqueness of the index hold for every row of its table that the
 * snapshot sees?  Its build checked the rows live then, and every insertion
 * since is checked against the rows live or in progress: so it holds if the
 * index was built before the snapshot was taken, that is if the transaction
 * that inserted its pg_index row committed before then.  A snapshot taken
 * earlier may still see rows that were removed (deleted, or updated to
 * another key) before the build, and never checked: duplicates.  The
 * pg_index row's xmin is that of the build or of a later change: indisvalid
 * and indisready are set in place (CREATE INDEX CONCURRENTLY, which waits
 * for older snapshots before setting indisvalid), other changes are new
 * versions with a newer xmin, and REINDEX CONCURRENTLY makes a new index;
 * so the test is never weaker than the build's time.  The index of our own
 * transaction does not count (rows that others removed after our snapshot
 * were not checked); nor, as for the planner's use of an index
 * (plancat.c), one built over broken HOT chains (indcheckxmin) whose xmin
 * is not older than the transaction's oldest snapshot.
 */
static bool
index_older_than_snapshot(HeapTuple tup, Snapshot snapshot)
{
	Form_pg_index ix = (Form_pg_index) GETSTRUCT(tup);
	TransactionId xmin = HeapTupleHeaderGetXmin(tup->t_data);

	if (snapshot == NULL || !IsMVCCSnapshot(snapshot))
		return false;
	if (ix->indcheckxmin && !TransactionIdPrecedes(xmin, TransactionXmin))
		return false;
	if (TransactionIdIsCurrentTransactionId(xmin) || XidInMVCCSnapshot(xmin, snapshot))
		return false;
	return TransactionIdDidCommit(xmin);
}

/* an oidvector column of a pg_index row */
static oidvector *
index_oids(HeapTuple tup, AttrNumber attno)
{
	bool		isnull;
	Datum		d = SysCacheGetAttr(INDEXRELID, tup, attno, &isnull);

	if (isnull)
		elog(ERROR, "dp_agg: null column %d of pg_index", attno);
	return (oidvector *) DatumGetPointer(d);
}

/*
 * Is item it (a relation) joined by conds on every key column of one of
 * its usable unique indexes, the other sides from resolved items?
 */
static bool
keyed(Joins *j, FromItem *it, List *conds, Bitmapset *rtis, Why *why)
{
	Relation	rel = relation_open(it->rte->relid, NoLock);
	List	   *indexes = RelationGetIndexList(rel);
	Resolved	r = {j, rtis, it->rti};
	Snapshot	snapshot = ActiveSnapshotSet() ? GetActiveSnapshot() : NULL;
	bool		found = false;
	bool		any = false;
	ListCell   *lc;

	relation_close(rel, NoLock);
	foreach(lc, indexes)
	{
		HeapTuple	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(lfirst_oid(lc)));
		Form_pg_index ix;
		oidvector  *classes;
		oidvector  *collations;
		bool		covered = true;

		if (!HeapTupleIsValid(tup))
			elog(ERROR, "dp_agg: cache lookup failed for index %u", lfirst_oid(lc));
		if (!usable_unique_index(tup))
		{
			ReleaseSysCache(tup);
			continue;
		}
		any = true;
		ix = (Form_pg_index) GETSTRUCT(tup);
		classes = index_oids(tup, Anum_pg_index_indclass);
		collations = index_oids(tup, Anum_pg_index_indcollation);
		for (int i = 0; i < ix->indnkeyatts && covered; i++)
		{
			Oid			opfamily = get_opclass_family(classes->values[i]);
			bool		one = false;
			ListCell   *cc;

			foreach(cc, conds)
			{
				if (key_condition(lfirst(cc), &r, ix->indkey.values[i], opfamily,
								  collations->values[i], why))
				{
					one = true;
					break;
				}
			}
			if (!one && why->miss == MISS_NONE)
			{
				why->miss = MISS_NOT_COVERED;
				why->attno = ix->indkey.values[i];
			}
			covered = one;
		}
		if (covered)
		{
			/*
			 * By an index older than the snapshot if there is one: the
			 * executor refuses the statement otherwise (dp_lookup_check_plan)
			 */
			bool		older = index_older_than_snapshot(tup, snapshot);

			if (!found || older)
				it->index = lfirst_oid(lc);
			found = true;
			if (older)
			{
				ReleaseSysCache(tup);
				break;
			}
		}
		ReleaseSysCache(tup);
	}
	if (!any)
	{
		why->miss = MISS_NO_KEY;
		why->attno = InvalidAttrNumber;
	}
	return found;
}

/* ---------- lookup tables ---------- */

/*
 * Must the item be the input of the DP aggregates?  Only a relation may be
 * looked up: a sub-query, view or CTE is the input; so is a relation with
 * a privacy unit or a protected one, whose rows are private.
 */
static bool
must_be_input(FromItem *it)
{
	RangeTblEntry *rte = it->rte;
	ListCell   *lc;
	DpUnit		unit;

	if (rte->rtekind != RTE_RELATION)
		return true;
	if (dp_unit_of_read(rte->relid, !rte->inh, &unit))
		return true;
	foreach(lc, dp_relation_read_set(rte->relid, !rte->inh))
	{
		if (dp_relation_protected(lfirst_oid(lc)))
			return true;
	}
	return false;
}

/* what may not be a lookup table whatever it is joined on */
static void
check_lookup_table(FromItem *it, FromItem *input)
{
	RangeTblEntry *rte = it->rte;
	char		relkind = get_rel_relkind(rte->relid);
	ListCell   *lc;

	if (rte->tablesample != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("TABLESAMPLE on lookup table \"%s\" is not allowed", get_rel_name(rte->relid)),
				 errdetail("A lookup table is read whole; only the relation the DP aggregates read may be sampled."),
				 errhint("Remove the TABLESAMPLE clause of the lookup table.")));
	if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE &&
		relkind != RELKIND_MATVIEW)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("relation \"%s\" cannot be a lookup table", get_rel_name(rte->relid)),
				 errdetail("A lookup table is a table, a partitioned table or a materialized view with a unique key."),
				 errhint(HINT_LOOKUP)));
	if (rte->inh && relkind == RELKIND_RELATION && has_subclass(rte->relid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lookup table \"%s\" must be read with ONLY", get_rel_name(rte->relid)),
				 errdetail("Its unique keys do not cover the rows of its inheritance children."),
				 errhint("Write ONLY before its name, or join the child tables one by one.")));
	if (input->rte->rtekind == RTE_RELATION)
	{
		foreach(lc, dp_relation_roots(rte->relid))
		{
			if (list_member_oid(dp_relation_roots(input->rte->relid), lfirst_oid(lc)))
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("a join of \"%s\" with \"%s\", whose rows the DP aggregates read, is not allowed",
								get_rel_name(rte->relid), get_rel_name(input->rte->relid)),
						 errdetail("They are of one inheritance tree: the rows looked up would be rows of the input, on which each other row's lookup would then depend."),
						 errhint("Compute the value you look up in a statement of its own.")));
		}
	}
}

/* an item that cannot be the input refused as a lookup, with why */
static void
refuse_private_lookup(FromItem *it)
{
	if (it->rte->rtekind != RTE_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a join of two sub-queries, views or CTEs in a statement with DP aggregates is not allowed"),
				 errdetail(DETAIL_ONCE),
				 errhint("Join the relation the DP aggregates read to lookup tables only, inside the sub-query if need be.")));
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("relation \"%s\" cannot be a lookup table of a statement with DP aggregates",
					get_rel_name(it->rte->relid)),
			 errdetail("It has a privacy unit or is protected: its rows are private, and looked up they would feed the DP aggregates unbounded."),
			 errhint("A join between two such relations is not supported: compute each release in a statement of its own.")));
}

/* two items that must both be the input: a join of two inputs */
static void
refuse_two_inputs(FromItem *a, FromItem *b)
{
	FromItem   *rel = a->rte->rtekind == RTE_RELATION ? a : b;

	if (a->rte->rtekind == RTE_RELATION && b->rte->rtekind == RTE_RELATION)
		refuse_private_lookup(b);
	if (rel->rte->rtekind == RTE_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a join of \"%s\" with a sub-query, view or CTE is not allowed in a statement with DP aggregates",
						get_rel_name(rel->rte->relid)),
				 errdetail("Only a table can be looked up, on a unique key of its own; \"%s\" has a privacy unit or is protected, so it is the relation the DP aggregates read.",
						   get_rel_name(rel->rte->relid)),
				 errhint("Join \"%s\" to lookup tables only.", get_rel_name(rel->rte->relid))));
	refuse_private_lookup(a);
}

/* a column's name in messages */
static char *
column_name(FromItem *it, AttrNumber attno)
{
	return get_attname(it->rte->relid, attno, false);
}

/* the unique keys of a relation, "(a, b), (c)", for messages */
static char *
unique_keys(Oid relid)
{
	Relation	rel = relation_open(relid, NoLock);
	List	   *indexes = RelationGetIndexList(rel);
	StringInfoData buf;
	ListCell   *lc;

	relation_close(rel, NoLock);
	initStringInfo(&buf);
	foreach(lc, indexes)
	{
		HeapTuple	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(lfirst_oid(lc)));
		Form_pg_index ix;

		if (!HeapTupleIsValid(tup))
			continue;
		ix = (Form_pg_index) GETSTRUCT(tup);
		if (usable_unique_index(tup))
		{
			appendStringInfoString(&buf, buf.len > 0 ? ", (" : "(");
			for (int i = 0; i < ix->indnkeyatts; i++)
				appendStringInfo(&buf, "%s%s", i > 0 ? ", " : "",
								 quote_identifier(get_attname(relid, ix->indkey.values[i], false)));
			appendStringInfoChar(&buf, ')');
		}
		ReleaseSysCache(tup);
	}
	return buf.data;
}

/* the join does not look item up by a unique key: say why, and what to write */
static void
refuse_not_keyed(FromItem *input, Why *why)
{
	FromItem	   *it = why->item;
	char	   *rel = get_rel_name(it->rte->relid);
	char	   *in = input->rte->rtekind == RTE_RELATION ? get_rel_name(input->rte->relid)
		: input->rte->eref->aliasname;

	switch (why->miss)
	{
		case MISS_NO_KEY:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("lookup table \"%s\" has no unique key", rel),
					 errdetail("Each row of \"%s\" must match at most one row of \"%s\", so the join must compare all columns of a primary key or unique constraint of \"%s\" with =; it has none that is valid, immediate, without predicate and on columns.",
							   in, rel, rel),
					 errhint("Add a primary key or unique constraint to \"%s\", or aggregate it first in a statement of its own.",
							 rel)));
			break;
		case MISS_CAST:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("the join does not look up \"%s\" by a unique key", rel),
					 errdetail("Column \"%s\" of its unique key is compared through a cast or a function (under which two keys can be equal), under OR, or with IS NOT DISTINCT FROM.",
							   column_name(it, why->attno)),
					 errhint("Compare the column itself with =, casting the other side to its type if need be: ON %s.%s = <expression of \"%s\">. Its unique keys: %s.",
							 quote_identifier(it->rte->eref->aliasname),
							 quote_identifier(column_name(it, why->attno)), in,
							 unique_keys(it->rte->relid))));
			break;
		case MISS_OPERATOR:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("the join does not look up \"%s\" by a unique key", rel),
					 errdetail("Column \"%s\" of its unique key is compared with an operator that is not the equality of the key's operator class.",
							   column_name(it, why->attno)),
					 errhint("Compare it with =, with the other side of the column's type. Its unique keys: %s.",
							 unique_keys(it->rte->relid))));
			break;
		case MISS_COLLATION:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("the join does not look up \"%s\" by a unique key", rel),
					 errdetail("Column \"%s\" of its unique key is compared under a nondeterministic collation other than its key's, under which two keys can be equal.",
							   column_name(it, why->attno)),
					 errhint("Compare it under the collation of the column (remove the COLLATE clause), or under a deterministic one.")));
			break;
		case MISS_VOLATILE:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("the join does not look up \"%s\" by a unique key", rel),
					 errdetail("Column \"%s\" of its unique key is compared with a volatile expression, which can take another value for each row of \"%s\".",
							   column_name(it, why->attno), rel),
					 errhint("Compare it with an expression of the columns of \"%s\", constants and parameters.",
							 in)));
			break;
		case MISS_OTHER_SIDE:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("the join does not look up \"%s\" by a unique key", rel),
					 errdetail("Column \"%s\" of its unique key is compared with an expression of \"%s\" itself or of a table that is looked up from it.",
							   column_name(it, why->attno), rel),
					 errhint("Compare each key column with an expression of \"%s\" (or of a table looked up before it), constants and parameters.",
							 in)));
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("the join does not look up \"%s\" by a unique key", rel),
					 errdetail("Each row of \"%s\" must match at most one row of \"%s\": the join must compare all columns of one of its unique keys with =, in WHERE or in the ON of its join. Its unique keys: %s.",
							   in, rel, unique_keys(it->rte->relid)),
					 errhint("Join on all columns of a primary key or unique constraint of \"%s\", or aggregate \"%s\" first in a statement of its own.",
							 rel, rel)));
	}
}

/*
 * Can every other item be looked up from the input, directly or through
 * items looked up before it?  Fills *why with the first item that cannot.
 */
static bool
resolve_from(Joins *j, FromItem *input, Why *why)
{
	Bitmapset  *rtis = bms_make_singleton(input->rti);
	bool		progress = true;
	ListCell   *lc;

	foreach(lc, j->items)
		((FromItem *) lfirst(lc))->resolved = lfirst(lc) == input;
	while (progress)
	{
		progress = false;
		foreach(lc, j->items)
		{
			FromItem	   *it = lfirst(lc);
			Why			w = {MISS_NONE, it, InvalidAttrNumber};

			if (it->resolved || it->rte->rtekind != RTE_RELATION)
				continue;
			if (keyed(j, it, it->nullable ? it->on : j->inner, rtis, &w))
			{
				it->resolved = true;
				rtis = bms_add_member(rtis, it->rti);
				progress = true;
			}
			else if (why->item == NULL || why->miss == MISS_NOT_COVERED)
				*why = w;
		}
	}
	foreach(lc, j->items)
	{
		FromItem	   *it = lfirst(lc);

		if (!it->resolved)
		{
			if (why->item == NULL || it->rte->rtekind != RTE_RELATION)
			{
				why->item = it;
				why->miss = MISS_NONE;
			}
			return false;
		}
	}
	return true;
}

/*
 * The FROM clause of a query level whose rows feed DP aggregates (their
 * level, or a row source below it) joins several items: find the input,
 * check that every other item is a lookup table joined on a unique key,
 * and mark them.  Returns the input's range table index, 0 for a FROM
 * clause left to the guard.
 */
static Index
check_joins(Query *q)
{
	Joins		j = {q, NIL, NIL};
	FromItem	   *input = NULL;
	Why			first_why = {MISS_NONE, NULL, InvalidAttrNumber};
	FromItem	   *first_input = NULL;
	ListCell   *lc;

	collect(&j, (Node *) q->jointree);

	/*
	 * Items that are not relations, sub-queries or CTEs (functions, VALUES),
	 * LATERAL ones, recursive CTEs: left to the guard, which refuses the
	 * join as such (guard.c)
	 */
	foreach(lc, j.items)
	{
		FromItem   *it = lfirst(lc);

		if ((it->rte->rtekind != RTE_RELATION && it->rte->rtekind != RTE_SUBQUERY &&
			 it->rte->rtekind != RTE_CTE) || it->rte->lateral ||
			(it->rte->rtekind == RTE_CTE && (it->rte->self_reference || q->hasRecursive)))
			return 0;
	}

	/* a relation with a unit, a protected one, a sub-query: the input */
	foreach(lc, j.items)
	{
		FromItem	   *it = lfirst(lc);

		if (!must_be_input(it))
			continue;
		if (input != NULL)
			refuse_two_inputs(input, it);
		input = it;
	}
	if (input != NULL)
	{
		foreach(lc, j.items)
		{
			if (lfirst(lc) != input && ((FromItem *) lfirst(lc))->rte->rtekind == RTE_RELATION)
				check_lookup_table(lfirst(lc), input);
		}
		if (input->nullable)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("the relation the DP aggregates read may not be on the nullable side of an outer join"),
					 errdetail(DETAIL_ONCE),
					 errhint("Put it on the left of LEFT JOIN, and the lookup tables on the right.")));
		if (!resolve_from(&j, input, &first_why))
		{
			if (first_why.item->rte->rtekind != RTE_RELATION)
				refuse_private_lookup(first_why.item);
			refuse_not_keyed(input, &first_why);
		}
	}
	else
	{
		/* else the first item from which the others can be looked up */
		foreach(lc, j.items)
		{
			FromItem	   *it = lfirst(lc);
			Why			why = {MISS_NONE, NULL, InvalidAttrNumber};

			if (it->nullable)
				continue;
			if (resolve_from(&j, it, &why))
			{
				input = it;
				break;
			}
			if (first_input == NULL)
			{
				first_input = it;
				first_why = why;
			}
		}
		if (input == NULL)
		{
			/* a join of a table with itself, or of one tree, says so */
			foreach(lc, j.items)
			{
				if (lfirst(lc) != first_input)
					check_lookup_table(lfirst(lc), first_input);
			}
			refuse_not_keyed(first_input, &first_why);
		}
	}

	foreach(lc, j.items)
	{
		FromItem	   *it = lfirst(lc);

		if (it == input)
			continue;
		check_lookup_table(it, input);
		Assert(OidIsValid(it->index));
		it->rte->ctelevelsup = DP_LOOKUP_MARK(it->index);
	}
	return input->rti;
}

/* ---------- the query levels whose rows feed DP aggregates ---------- */

/* no mark but the ones this check sets (stale ones from a re-planned tree) */
static bool
clear_marks_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;

		if (rte->rtekind == RTE_RELATION)
			rte->ctelevelsup = 0;
		return false;
	}
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, clear_marks_walker, context,
								 QTW_EXAMINE_RTES_BEFORE);
	return expression_tree_walker(node, clear_marks_walker, context);
}

/*
 * One query level: rows, it is a row source below DP aggregates (a
 * sub-query, view or CTE they read); else its joins matter only if it
 * computes DP aggregates itself (the guard refuses the others).
 */
static void
check_level(Query *q, bool rows)
{
	ListCell   *lc;

	if (q->commandType != CMD_SELECT && q->commandType != CMD_INSERT)
		return;
	if (rows || dp_level_has_calls(q))
	{
		FromExpr   *from = q->jointree;
		Index		input;
		RangeTblEntry *rte;

		if (list_length(from->fromlist) == 0)
			return;
		if (list_length(from->fromlist) == 1 && IsA(linitial(from->fromlist), RangeTblRef))
			input = linitial_node(RangeTblRef, from->fromlist)->rtindex;
		else if ((input = check_joins(q)) == 0)
			return;
		rte = rt_fetch(input, q->rtable);
		if (rte->rtekind == RTE_SUBQUERY)
			check_level(rte->subquery, true);
		else if (rte->rtekind == RTE_CTE && rte->ctelevelsup == 0)
		{
			foreach(lc, q->cteList)
			{
				CommonTableExpr *cte = lfirst_node(CommonTableExpr, lc);

				if (strcmp(cte->ctename, rte->ctename) == 0 && IsA(cte->ctequery, Query))
					check_level((Query *) cte->ctequery, true);
			}
		}
		return;
	}
	foreach(lc, q->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		if (rte->rtekind == RTE_SUBQUERY)
			check_level(rte->subquery, false);
	}
	foreach(lc, q->cteList)
	{
		CommonTableExpr *cte = lfirst_node(CommonTableExpr, lc);

		if (IsA(cte->ctequery, Query))
			check_level((Query *) cte->ctequery, false);
	}
}

/*
 * At planning, before the guards (hooks.c): check the joins of a
 * statement with DP aggregates to lookup tables, and mark the lookup
 * tables (see the file's comment).  Joins it does not concern (around DP
 * sub-queries) are left to the guard, which refuses them.
 */
void
dp_lookup_check_query(Query *query)
{
	if (query->commandType == CMD_UTILITY || !dp_query_has_dp(query))
		return;
	(void) query_tree_walker(query, clear_marks_walker, NULL, QTW_EXAMINE_RTES_BEFORE);
	check_level(query, false);
}

/* ---------- at the executor's start ---------- */

/* the index of partition relid attached to the lookup table's index, or 0 */
static Oid
partition_index(Oid relid, Oid index)
{
	Relation	rel = relation_open(relid, NoLock);
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *lc;

	relation_close(rel, NoLock);
	foreach(lc, indexes)
	{
		if (list_member_oid(get_partition_ancestors(lfirst_oid(lc)), index))
			return lfirst_oid(lc);
	}
	return InvalidOid;
}

/*
 * The unique index lookup table relid (or a partition of it) is looked up
 * by must prove, for the snapshot the statement reads it with, that each
 * input row matches at most one of its rows: see index_older_than_snapshot.
 */
static void
check_lookup_index(Oid relid, Oid index, Snapshot snapshot)
{
	HeapTuple	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(index));
	Oid			own = index;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "dp_agg: cache lookup failed for index %u", index);
	if (((Form_pg_index) GETSTRUCT(tup))->indrelid != relid)
	{
		/* a partition of a partitioned lookup table: its own index */
		ReleaseSysCache(tup);
		own = partition_index(relid, index);
		if (!OidIsValid(own))
			elog(ERROR, "dp_agg: partition %u has no index attached to index %u", relid, index);
		tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(own));
		if (!HeapTupleIsValid(tup))
			elog(ERROR, "dp_agg: cache lookup failed for index %u", own);
	}
	if (!usable_unique_index(tup))
		elog(ERROR, "dp_agg: index %u of lookup table %u is no longer usable", own, relid);
	if (!index_older_than_snapshot(tup, snapshot))
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("unique index \"%s\" of lookup table \"%s\" is newer than the statement's snapshot",
						get_rel_name(own), get_rel_name(relid)),
				 errdetail("The join looks up \"%s\" by this index, which was built after the snapshot was taken (or in this transaction): rows the snapshot sees may share a key, and one input row would then match several of them.",
						   get_rel_name(relid)),
				 errhint("Run the statement in a new transaction, whose snapshot is taken after the index was built. See \"Lookup joins\" in dp_agg's doc/guard.md.")));
	ReleaseSysCache(tup);
}

/*
 * At the executor's start, before any row is read and before the charge
 * (hooks.c): each lookup table of the plan is looked up by a unique index
 * whose uniqueness holds for the statement's snapshot.  Planning checked
 * the join, maybe in another transaction (a cached plan), with the
 * catalog's latest state: an index built after the snapshot proves
 * nothing about the rows it sees.
 */
void
dp_lookup_check_plan(PlannedStmt *stmt, Snapshot snapshot)
{
	ListCell   *lc;

	foreach(lc, stmt->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		if (DP_RTE_IS_LOOKUP(rte))
			check_lookup_index(rte->relid, DP_LOOKUP_INDEX(rte), snapshot);
	}
}
