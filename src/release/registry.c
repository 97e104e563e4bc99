/*-------------------------------------------------------------------------
 *
 * registry.c
 *	  The tickets of running executions, where the aggregate support
 *	  functions look up theirs: a call without a ticket was not priced and
 *	  fails closed.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/execnodes.h"
#include "utils/memutils.h"

#include "guc.h"
#include "registry.h"

typedef struct DpExecution
{
	EState	   *estate;
	List	   *releases;
	struct DpExecution *next;
	MemoryContextCallback callback;
} DpExecution;

static DpExecution *executions = NULL;

static void
unregister_execution(void *arg)
{
	DpExecution **p;

	for (p = &executions; *p != NULL; p = &(*p)->next)
	{
		if (*p == arg)
		{
			*p = (*p)->next;
			return;
		}
	}
}

/*
 * Register the tickets of one execution; they vanish with its executor
 * state (normal end or error).
 */
void
dp_register_releases(EState *estate, List *releases)
{
	DpExecution *ex = MemoryContextAllocZero(estate->es_query_cxt, sizeof(DpExecution));

	ex->estate = estate;
	ex->releases = releases;
	ex->callback.func = unregister_execution;
	ex->callback.arg = ex;
	MemoryContextRegisterResetCallback(estate->es_query_cxt, &ex->callback);
	ex->next = executions;
	executions = ex;
}

/* The tickets registered for an execution (NIL if none). */
List *
dp_execution_releases(EState *estate)
{
	for (DpExecution *ex = executions; ex != NULL; ex = ex->next)
		if (ex->estate == estate)
			return ex->releases;
	return NIL;
}

/*
 * The ticket of the DP aggregate call that fcinfo belongs to, cached in
 * fn_extra.  ERROR (fail closed) if there is none.
 */
const DpRelease *
dp_release_for_call(FunctionCallInfo fcinfo, const char *fname)
{
	int			ctx;
	AggState   *aggstate;
	Aggref	   *aggref;

	if (fcinfo->flinfo->fn_extra != NULL)
		return (const DpRelease *) fcinfo->flinfo->fn_extra;

	ctx = AggCheckCallContext(fcinfo, NULL);
	if (ctx == AGG_CONTEXT_WINDOW)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s cannot be used as a window function", fname),
				 errdetail("A window function would release one noisy value per row.")));
	if (ctx != AGG_CONTEXT_AGGREGATE || !IsA(fcinfo->context, AggState))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s called in non-aggregate context", fname)));

	aggstate = (AggState *) fcinfo->context;
	aggref = AggGetAggref(fcinfo);
	for (DpExecution *ex = executions; ex != NULL; ex = ex->next)
	{
		ListCell   *lc;

		if (ex->estate != aggstate->ss.ps.state)
			continue;
		foreach(lc, ex->releases)
		{
			DpRelease  *r = lfirst(lc);

			if (r->aggref == aggref)
			{
				fcinfo->flinfo->fn_extra = r;
				return r;
			}
		}
	}

	if (!dp_preloaded)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("dp_agg must be loaded via shared_preload_libraries"),
				 errdetail("Without it no release can be priced and charged, so none is made."),
				 errhint("Add dp_agg to shared_preload_libraries in postgresql.conf and restart the server.")));
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s support functions may only run inside the DP aggregates of dp_agg", fname),
			 errdetail("This call was not priced before the statement started.")));
	return NULL;				/* keep compiler quiet */
}
