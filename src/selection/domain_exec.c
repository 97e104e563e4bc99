/*-------------------------------------------------------------------------
 *
 * domain_exec.c
 *	  The key sets of a DP statement's public domains, opened at the
 *	  executor's start, before any row is read.
 *
 * doc/units-and-groups.md, "Public group keys".  Opening a key set (keyset.c)
 * decodes every key and builds its hash table: time in the number of keys,
 * seconds for millions of keys.  dp_agg_internal.domain_index runs on the rows, so if
 * it opened its key set at its first call, a statement would take that time
 * only when some row reached the GROUP BY: the time of a statement whose WHERE
 * keeps no row would differ from one that keeps a single row by the time
 * of opening, a signal far above the noise of timing one row.  So before
 * any row is read every key set constant of the plan (the first argument
 * of dp_agg_internal.domain_index and dp_agg_internal.domain_key) is opened here, in the
 * executor's memory, and registered by the address of its bytes
 * (dp_keyset_register), which is the address the functions receive: a
 * plan's constants are passed to functions as they are, a bytea of a plan
 * is never compressed or external (the key sets are made by the planner),
 * and a parallel worker runs this on its own copy of the plan.  What
 * remains per statement is the same for every database: the time of
 * opening depends on the key set, a constant of the statement.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "nodes/nodeFuncs.h"
#include "nodes/plannodes.h"

#include "catalog.h"
#include "domain_exec.h"
#include "keyset.h"
#include "plan_nodes.h"

typedef struct OpenWalk
{
	Oid			index_fn;
	Oid			key_fn;
	MemoryContext cxt;
	List	   *opened;			/* the addresses already registered */
} OpenWalk;

static bool
open_walker(Node *node, OpenWalk *w)
{
	if (node == NULL)
		return false;
	if (IsA(node, FuncExpr))
	{
		FuncExpr   *f = (FuncExpr *) node;
		Const	   *c = f->args != NIL ? linitial(f->args) : NULL;

		if ((f->funcid == w->index_fn || f->funcid == w->key_fn) &&
			c != NULL && IsA(c, Const) && c->consttype == BYTEAOID &&
			!c->constisnull &&
			!VARATT_IS_EXTERNAL(DatumGetPointer(c->constvalue)) &&
			!VARATT_IS_COMPRESSED(DatumGetPointer(c->constvalue)) &&
			!list_member_ptr(w->opened, DatumGetPointer(c->constvalue)))
		{
			MemoryContext old = MemoryContextSwitchTo(w->cxt);
			DpKeyset   *ks = dp_keyset_open(DatumGetByteaPP(c->constvalue), w->cxt);

			dp_keyset_register(DatumGetPointer(c->constvalue), ks, w->cxt);
			w->opened = lappend(w->opened, DatumGetPointer(c->constvalue));
			MemoryContextSwitchTo(old);
		}
	}
	return expression_tree_walker(node, open_walker, (void *) w);
}

static void
open_plan(Plan *plan, OpenWalk *w)
{
	ListCell   *lc;

	if (plan == NULL)
		return;
	open_walker((Node *) dp_plan_expressions(plan), w);
	foreach(lc, dp_plan_children(plan))
		open_plan(lfirst(lc), w);
}

/*
 * Open and register the key sets of the plan of queryDesc, for as long as
 * its execution lives.  Called at the executor's start of a DP statement
 * (or of a parallel worker's fragment of one), before any row is read.
 */
void
dp_domain_exec_open(QueryDesc *queryDesc)
{
	OpenWalk	w;
	ListCell   *lc;

	w.index_fn = dp_domain_index_oid();
	w.key_fn = dp_domain_key_oid();
	if (!OidIsValid(w.index_fn) || queryDesc->estate == NULL)
		return;
	w.cxt = queryDesc->estate->es_query_cxt;
	w.opened = NIL;
	open_plan(queryDesc->plannedstmt->planTree, &w);
	foreach(lc, queryDesc->plannedstmt->subplans)
		open_plan(lfirst(lc), &w);
}
