/*-------------------------------------------------------------------------
 *
 * hooks.c
 *	  Where dp_agg joins query processing: planning and executor start.
 *
 * The data flows one way:
 *
 *   plan -> guard -> price -> charge -> aggregate -> noise -> release
 *
 * At planning the guard rejects statements it cannot price (guard.c), and
 * statements over relations with a privacy unit are rewritten to bound
 * each unit's contribution (privacy_unit.c), and the groups of a DP
 * statement with GROUP BY are put under private selection (selection.c; on
 * a Citus table in the rewrite of dist_plan.c).  At
 * executor start, protected relations are enforced first (protect_check.c,
 * also from the executor's permission hook, which COPY calls too; and
 * statistics, protect_stats.c).  At
 * executor start, before a single row is read, the plan is checked again
 * and every DP aggregate call gets its ticket (price.c, release.c); the
 * statement is charged durably (budget.c); only then are the tickets
 * registered (registry.c), which is what allows the aggregates to run
 * (aggregates.c).  Parallel workers
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
#include "compat.h"
#include "dist_exec.h"
#include "dist_plan.h"
#include "domain_exec.h"
#include "guard.h"
#include "guc.h"
#include "hooks.h"
#include "pick_key.h"
#include "price.h"
#include "privacy_unit.h"
#include "protect.h"
#include "protect_check.h"
#include "protect_guard.h"
#include "protect_stats.h"
#include "public_domain.h"
#include "registry.h"
#include "selection.h"
#include "side_reads.h"
#include "top_k.h"
#include "unit_catalog.h"

static planner_hook_type prev_planner_hook = NULL;
static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ExecutorRun_hook_type prev_ExecutorRun = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;
static ExecutorCheckPerms_hook_type prev_ExecutorCheckPerms = NULL;

static PlannedStmt *
dp_plan(Query *parse, const char *query_string, int cursorOptions,
		ParamListInfo boundParams)
{
	PlannedStmt *stmt;
	bool		names_protected;
	Oid			citus_relid;
	DpUnit		unit;
	List	   *fragment_specs = NIL;
	void	   *side_reads;

	/* key lists of the statement (key_list.c), before the guards see their joins */
	dp_domain_prepare(parse);
	/* its conditions HAVING dp_agg.top_k(k) (top_k.c) */
	dp_top_k_prepare(parse);
	dp_guard_query(parse);
	names_protected = dp_protect_guard_query(parse);
	/* for every role: no function reads the rows beside the DP aggregates */
	dp_side_reads_check_query(parse);
	/* a worker: a fragment must be the one its signatures cover */
	if (dp_guc_citus_worker)
		fragment_specs = dp_dist_check_fragment_query(parse, boundParams);
	/* the public domains of GROUP BY keys (public_domain.c) */
	dp_domain_resolve(parse);
	parse = dp_dist_rewrite(parse, &citus_relid);
	if (OidIsValid(citus_relid))
	{
		if (dp_relation_protected(citus_relid))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("DP statements on protected Citus tables are not supported"),
					 errdetail("The rules of protected tables are checked on one node's plan; a Citus table is read on its workers."),
					 errhint("Keep protected tables local, or undistribute the table.")));
		if (dp_top_k_requested())
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("top-k is not supported on Citus tables"),
					 errdetail("The groups of a DP statement on a Citus table are combined on the coordinator by dp_agg.dist_run, which ranks none."),
					 errhint("Release the groups' noisy counts and order them by those: ORDER BY dp_count(*) DESC LIMIT k.")));
		if (dp_unit_of_read(citus_relid, false, &unit))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("DP statements on Citus tables with a privacy unit are not supported"),
					 errdetail("A privacy unit is bounded by aggregating its rows together, and Citus spreads a unit's rows over shards."),
					 errhint("Clear the privacy unit with dp_agg.clear_privacy_unit, or keep the table local.")));
	}
	else
	{
		/* the levels with a public domain group by the index of their keys */
		dp_domain_apply(parse);
		if (!dp_privacy_unit_rewrite(parse) && dp_query_has_dp(parse))
		{
			/*
			 * bound each privacy unit's contribution (privacy_unit.c), which
			 * also selects the group keys of a statement it rewrites, with
			 * its k; otherwise a unit is a row, in one group
			 */
			dp_selection_rewrite(parse, 1);
		}
		/* ... and read the domain's rows beside the table's */
		dp_domain_inject(parse);
		/* the levels with top-k rank their groups */
		dp_top_k_rewrite(parse);
	}
	side_reads = dp_side_reads_plan_begin(parse);
	PG_TRY();
	{
		if (prev_planner_hook)
			stmt = prev_planner_hook(parse, query_string, cursorOptions, boundParams);
		else
			stmt = standard_planner(parse, query_string, cursorOptions, boundParams);
	}
	PG_FINALLY();
	{
		dp_side_reads_plan_end(side_reads);
	}
	PG_END_TRY();
	if (dp_guc_citus_worker)
		dp_dist_check_fragment_plan(stmt, fragment_specs);
	/*
	 * PL/pgSQL evaluates simple expressions without the executor's start:
	 * check their statistics calls here too (protect_stats.c)
	 */
	dp_stats_check_plan(stmt);
	/* the checks depend on the role: a cached plan is made again for another */
	if (names_protected || dp_any_protected())
		stmt->dependsOnRole = true;
	return stmt;
}

static PlannedStmt *
dp_planner(Query *parse, const char *query_string, int cursorOptions,
		   ParamListInfo boundParams)
{
	PlannedStmt *stmt;
	void	   *domains = dp_domain_begin();
	void	   *top_k = dp_top_k_begin();

	PG_TRY();
	{
		stmt = dp_plan(parse, query_string, cursorOptions, boundParams);
	}
	PG_FINALLY();
	{
		dp_top_k_end(top_k);
		dp_domain_end(domains);
	}
	PG_END_TRY();
	return stmt;
}

/* does the statement choose the groups of privacy units by priority? */
static bool
picks_units(List *releases)
{
	ListCell   *lc;

	foreach(lc, releases)
	{
		if (((DpRelease *) lfirst(lc))->call.unit == DP_UNIT_PICK)
			return true;
	}
	return false;
}

static void
dp_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	MemoryContext oldcxt;
	List	   *releases;
	List	   *fragments;
	bool		worker = IsParallelWorker();
	DpProtectStart protect;

	dp_stats_check_plan(queryDesc->plannedstmt);
	dp_protect_start(queryDesc->plannedstmt, queryDesc->params, eflags,
					 queryDesc->instrument_options, &protect);
	PG_TRY();
	{
		if (prev_ExecutorStart)
			prev_ExecutorStart(queryDesc, eflags);
		else
			standard_ExecutorStart(queryDesc, eflags);
	}
	PG_FINALLY();
	{
		dp_protect_end(&protect);
	}
	PG_END_TRY();

	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;

	oldcxt = MemoryContextSwitchTo(queryDesc->estate->es_query_cxt);
	releases = dp_price_plan(queryDesc->plannedstmt, queryDesc->params, !worker);
	/* DP statements on Citus tables: priced here, fragments on workers */
	releases = list_concat(releases, dp_dist_price(queryDesc->plannedstmt, queryDesc->params));
	fragments = dp_dist_fragment_releases(queryDesc->plannedstmt, queryDesc->instrument_options);
	MemoryContextSwitchTo(oldcxt);
	/*
	 * key sets of public domains: opened before any row is read, also by a
	 * parallel worker whose part of the plan has no DP aggregate
	 */
	if (releases != NIL || fragments != NIL || worker)
		dp_domain_exec_open(queryDesc);
	if (releases == NIL && fragments == NIL)
		return;

	if (protect.untrusted && !worker)
		dp_protect_check_epsilon(releases);
	/* before any row is read and any worker starts (pick_key.c) */
	if (!worker && picks_units(releases))
		dp_pick_key_renew(queryDesc);
	/* a fragment is paid for on the coordinator: no charge here */
	if (!worker && releases != NIL)
		dp_charge(queryDesc, releases);
	dp_register_releases(queryDesc->estate, list_concat(releases, fragments));
	/* while it runs, no other statement reads its rows (side_reads.c) */
	if (releases != NIL)
		dp_side_reads_register(queryDesc);
}

static void
dp_ExecutorRun(DP_RUN_HOOK_PARAMS)
{
	void	   *token = dp_side_reads_enter(queryDesc);

	PG_TRY();
	{
		if (prev_ExecutorRun)
			prev_ExecutorRun(DP_RUN_HOOK_ARGS);
		else
			standard_ExecutorRun(DP_RUN_HOOK_ARGS);
	}
	PG_FINALLY();
	{
		dp_side_reads_leave(token);
	}
	PG_END_TRY();
}

/* the key of privacy units lives as long as the statement that drew it */
static void
dp_ExecutorEnd(QueryDesc *queryDesc)
{
	if (prev_ExecutorEnd)
		prev_ExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
	dp_pick_key_release(queryDesc);
}

static bool
dp_ExecutorCheckPerms(DP_PERMS_HOOK_PARAMS)
{
	if (!dp_protect_check_rtable(rangeTable, ereport_on_violation))
		return false;
	dp_side_reads_check_rtable(rangeTable);
	dp_stats_check_rtable(rangeTable);
	if (prev_ExecutorCheckPerms)
		return prev_ExecutorCheckPerms(DP_PERMS_HOOK_ARGS);
	return true;
}

void
dp_hooks_init(void)
{
	prev_planner_hook = planner_hook;
	planner_hook = dp_planner;
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = dp_ExecutorStart;
	prev_ExecutorRun = ExecutorRun_hook;
	ExecutorRun_hook = dp_ExecutorRun;
	prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = dp_ExecutorEnd;
	prev_ExecutorCheckPerms = ExecutorCheckPerms_hook;
	ExecutorCheckPerms_hook = dp_ExecutorCheckPerms;
	dp_stats_planner_init();
	dp_pick_key_init();
}
