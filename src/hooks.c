/*-------------------------------------------------------------------------
 *
 * hooks.c
 *	  Where dp_agg joins query processing: planning and executor start.
 *
 * The data flows one way:
 *
 *   plan -> guard -> price -> charge -> aggregate -> noise -> release
 *
 * At planning the guard rejects statements it cannot price (guard.c).  At
 * executor start, before a single row is read, the plan is checked again
 * and every DP aggregate call gets its ticket (release.c); the statement is
 * charged durably (budget.c); only then are the tickets registered, which
 * is what allows the aggregates to run (aggregates.c).  Parallel workers
 * rebuild the tickets of their plan fragment to learn the accumulation
 * units, and never charge or release.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "executor/executor.h"
#include "optimizer/planner.h"

#include "budget.h"
#include "dp_agg.h"
#include "guard.h"
#include "release.h"

static planner_hook_type prev_planner_hook = NULL;
static ExecutorStart_hook_type prev_ExecutorStart = NULL;

static PlannedStmt *
dp_planner(Query *parse, const char *query_string, int cursorOptions,
		   ParamListInfo boundParams)
{
	dp_guard_query(parse);
	if (prev_planner_hook)
		return prev_planner_hook(parse, query_string, cursorOptions, boundParams);
	return standard_planner(parse, query_string, cursorOptions, boundParams);
}

/*
 * Tickets for the DP calls of a plan, in the executor's query context.
 */
List *
dp_price_plan(PlannedStmt *stmt, ParamListInfo params, bool validate)
{
	List	   *calls = dp_guard_plan(stmt, validate);
	List	   *releases = NIL;
	ListCell   *lc;

	foreach(lc, calls)
	{
		DpPlanCall *c = lfirst(lc);

		DpRelease  *r = dp_release_create(c->aggref, c->args_from, c->info,
										  c->finalize, &c->sampling, params);

		r->agg_node = c->agg;
		releases = lappend(releases, r);
	}

	/* say once why a sampled table gets no amplification */
	foreach(lc, releases)
	{
		DpRelease  *r = lfirst(lc);

		if (validate && r->finalize && r->sampling.sampled && !r->sampling.amplified)
		{
			ereport(NOTICE,
					(errmsg("TABLESAMPLE %s gives no privacy amplification here",
							r->sampling.method),
					 errdetail("The release is priced and its noise calibrated as if the table "
							   "were read whole: %s.", r->sampling.why_not),
					 errhint("BERNOULLI without REPEATABLE, or dp_agg.secure_bernoulli, "
							 "earns amplification by subsampling.")));
			break;
		}
	}
	return releases;
}

static void
dp_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	MemoryContext oldcxt;
	List	   *releases;
	bool		worker = IsParallelWorker();

	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);

	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;

	oldcxt = MemoryContextSwitchTo(queryDesc->estate->es_query_cxt);
	releases = dp_price_plan(queryDesc->plannedstmt, queryDesc->params, !worker);
	MemoryContextSwitchTo(oldcxt);
	if (releases == NIL)
		return;

	if (!worker)
		dp_charge(queryDesc, releases);
	dp_register_releases(queryDesc->estate, releases);
}

void
dp_hooks_init(void)
{
	prev_planner_hook = planner_hook;
	planner_hook = dp_planner;
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = dp_ExecutorStart;
}
