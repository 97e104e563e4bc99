/*-------------------------------------------------------------------------
 *
 * insert_drain.c
 *	  INSERT ... SELECT over a protected relation: the target receives its
 *	  first row only after every row has been read.
 *
 * doc/guard.md, "Protected tables".  An untrusted role may insert the
 * releases of a DP statement into a table it may write.  Whatever the
 * target runs for each row it receives (its BEFORE triggers, CHECK
 * constraints, generated columns, defaults, domain checks, index
 * expressions, RETURNING: code the role may have written) runs in the
 * statement's process.  Run while protected rows were still being read,
 * it could change what the rest of the reading does or reports: a trigger
 * that turns trace_sort and client_min_messages on when a GroupAggregate
 * hands over its first group makes the sorts of the later groups print
 * their sizes, groups the private selection never releases included.
 * dp_agg's settings are forced quiet when the executor is entered
 * (protect_settings.c), not after each call into the target's code, and
 * what that code may do has no end (a list of refused triggers and
 * constraints would miss the next kind), so the order is fixed instead:
 * between the query and the target, a node of this module (a CustomScan,
 * "dp_agg release") reads the query to its end into a tuplestore before it
 * hands the target the first row.  Every protected row has then been
 * read and every group decided; the target's code sees the releases, and
 * nothing it does can change what they were.
 *
 * The node is put under the ModifyTable of the finished plan by the
 * planner hook (dp_insert_drain_plan), for the statements of a role
 * untrusted for a protected relation; at executor start such an INSERT
 * whose plan does not have it (a plan of another shape: a Citus
 * distributed INSERT ... SELECT) is refused before any row is read
 * (dp_insert_drain_check).  The query stays the node's outer plan as well
 * as its custom plan, so that EXPLAIN VERBOSE names its columns; the
 * executor runs it once, as the custom plan.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

#include "insert_drain.h"

#define DRAIN_NAME "dp_agg release"

typedef struct DrainState
{
	CustomScanState css;
	Tuplestorestate *rows;		/* the query's rows, once read to the end */
	TupleTableSlot *out;		/* a row of rows */
} DrainState;

static Node *drain_create_state(CustomScan *cscan);
static void drain_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *drain_next(CustomScanState *node);
static void drain_end(CustomScanState *node);
static void drain_rescan(CustomScanState *node);

static const CustomScanMethods drain_plan_methods = {
	.CustomName = DRAIN_NAME,
	.CreateCustomScanState = drain_create_state,
};

static const CustomExecMethods drain_exec_methods = {
	.CustomName = DRAIN_NAME,
	.BeginCustomScan = drain_begin,
	.ExecCustomScan = drain_next,
	.EndCustomScan = drain_end,
	.ReScanCustomScan = drain_rescan,
};

/* called from _PG_init: plans holding the node can be copied and read back */
void
dp_insert_drain_init(void)
{
	RegisterCustomScanMethods(&drain_plan_methods);
}

static Node *
drain_create_state(CustomScan *cscan)
{
	DrainState *ds = (DrainState *) newNode(sizeof(DrainState), T_CustomScanState);

	ds->css.methods = &drain_exec_methods;
	return (Node *) ds;
}

static void
drain_begin(CustomScanState *node, EState *estate, int eflags)
{
	DrainState *ds = (DrainState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	PlanState  *query = ExecInitNode(linitial(cscan->custom_plans), estate, eflags);

	node->custom_ps = list_make1(query);
	ds->out = ExecInitExtraTupleSlot(estate, ExecGetResultType(query), &TTSOpsMinimalTuple);
	ds->rows = NULL;
}

static TupleTableSlot *
drain_next(CustomScanState *node)
{
	DrainState *ds = (DrainState *) node;

	if (ds->rows == NULL)
	{
		PlanState  *query = linitial(node->custom_ps);
		Tuplestorestate *rows = tuplestore_begin_heap(false, false, work_mem);

		for (;;)
		{
			TupleTableSlot *slot = ExecProcNode(query);

			if (TupIsNull(slot))
				break;
			tuplestore_puttupleslot(rows, slot);
		}
		ds->rows = rows;
	}
	if (!tuplestore_gettupleslot(ds->rows, true, false, ds->out))
		return ExecClearTuple(ds->out);
	return ds->out;
}

static void
drain_end(CustomScanState *node)
{
	DrainState *ds = (DrainState *) node;

	if (ds->rows != NULL)
		tuplestore_end(ds->rows);
	ds->rows = NULL;
	ExecEndNode(linitial(node->custom_ps));
}

static void
drain_rescan(CustomScanState *node)
{
	DrainState *ds = (DrainState *) node;

	if (ds->rows != NULL)
		tuplestore_end(ds->rows);
	ds->rows = NULL;
	ExecReScan(linitial(node->custom_ps));
}

/* is plan the node of this module? */
bool
dp_insert_drain_node(const Plan *plan)
{
	return plan != NULL && IsA(plan, CustomScan) &&
		((const CustomScan *) plan)->methods == &drain_plan_methods;
}

/*
 * The node over query: its output is the query's, column for column (junk
 * columns too, which ModifyTable reads by number), each an OUTER_VAR Var
 * or the query's constant.
 * It is never parallel; its plan_node_id is one no node of a finished plan
 * has (the ids number the nodes from 0; only those under a Gather are
 * looked up, and it is never under one).
 */
static Plan *
drain_node(Plan *query)
{
	CustomScan *cs = makeNode(CustomScan);
	List	   *tlist = NIL;
	ListCell   *lc;

	foreach(lc, query->targetlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Node	   *e = (Node *) tle->expr;
		Node	   *v;

		/*
		 * the NULL constants of dropped and generated columns stay
		 * constants: ModifyTable checks that it gets no value for those
		 */
		if (IsA(e, Const))
			v = copyObject(e);
		else
			v = (Node *) makeVar(OUTER_VAR, tle->resno, exprType(e), exprTypmod(e),
								 exprCollation(e), 0);
		tlist = lappend(tlist, makeTargetEntry((Expr *) v, tle->resno, tle->resname, tle->resjunk));
	}
	cs->scan.plan.targetlist = tlist;
	cs->scan.plan.startup_cost = query->total_cost;
	cs->scan.plan.total_cost = query->total_cost;
	cs->scan.plan.plan_rows = query->plan_rows;
	cs->scan.plan.plan_width = query->plan_width;
	cs->scan.plan.parallel_aware = false;
	cs->scan.plan.parallel_safe = false;
	cs->scan.plan.plan_node_id = PG_INT32_MAX;
	cs->scan.plan.extParam = bms_copy(query->extParam);
	cs->scan.plan.allParam = bms_copy(query->allParam);
	cs->scan.plan.lefttree = query;
	cs->scan.scanrelid = 0;
	cs->custom_plans = list_make1(query);
	cs->methods = &drain_plan_methods;
	return (Plan *) cs;
}

/* a node that writes: the top of a statement's plan or of a CTE's */
static bool
drained(Plan *plan, bool wrap)
{
	ModifyTable *mt;

	if (plan == NULL || !IsA(plan, ModifyTable))
		return true;
	mt = (ModifyTable *) plan;
	if (dp_insert_drain_node(outerPlan(mt)))
		return true;
	if (!wrap || mt->operation != CMD_INSERT || outerPlan(mt) == NULL)
		return false;
	outerPlan(mt) = drain_node(outerPlan(mt));
	return true;
}

/*
 * From the planner hook, for a statement of a role untrusted for a
 * protected relation: an INSERT's query (the statement's own, or a
 * data-modifying WITH's) is read to its end before the target gets a row.
 */
void
dp_insert_drain_plan(PlannedStmt *stmt)
{
	ListCell   *lc;

	(void) drained(stmt->planTree, true);
	foreach(lc, stmt->subplans)
		(void) drained(lfirst(lc), true);
}

/*
 * At executor start, before any row is read, for a statement of a role
 * untrusted for protected relation relid: a statement that writes rows
 * its query has not read to the end first is refused.
 */
void
dp_insert_drain_check(PlannedStmt *stmt, Oid relid)
{
	bool		ok = drained(stmt->planTree, false);
	ListCell   *lc;

	foreach(lc, stmt->subplans)
		ok = ok && drained(lfirst(lc), false);
	if (ok)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("this statement writes rows while it reads protected relation \"%s\"",
					get_rel_name(relid)),
			 errdetail("Only an INSERT ... SELECT whose rows reach the target table after every row of "
					   "\"%s\" is read is accepted: the target's triggers, constraints or defaults "
					   "could otherwise change what the rest of the reading reports.",
					   get_rel_name(relid)),
			 errhint("Run the SELECT on its own, then insert the values it released.")));
}
