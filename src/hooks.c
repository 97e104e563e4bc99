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
#include "guard.h"
#include "guc.h"
#include "hooks.h"
#include "pick_key.h"
#include "price.h"
#include "privacy_unit.h"
#include "protect.h"
#include "protect_check.h"
#include "protect_guard.h"
#include "protect_settings.h"
#include "protect_stats.h"
#include "registry.h"
#include "row_seal.h"
#include "selection.h"

static planner_hook_type prev_planner_hook = NULL;
static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ExecutorCheckPerms_hook_type prev_ExecutorCheckPerms = NULL;
static ExecutorRun_hook_type prev_ExecutorRun = NULL;
static ExecutorFinish_hook_type prev_ExecutorFinish = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;

static PlannedStmt *
dp_planner(Query *parse, const char *query_string, int cursorOptions,
		   ParamListInfo boundParams)
{
	PlannedStmt *stmt;
	bool		names_protected;
	Oid			untrusted;
	Oid			citus_relid;
	char	   *unit_column;
	int			unit_groups;
	List	   *fragment_specs = NIL;

	dp_guard_query(parse);
	names_protected = dp_protect_guard_query(parse, &untrusted);
	/* a worker: a fragment must be the one its signatures cover */
	if (dp_guc_citus_worker)
		fragment_specs = dp_dist_check_fragment_query(parse, boundParams);
	parse = dp_dist_rewrite(parse, &citus_relid);
	if (OidIsValid(citus_relid))
	{
		if (dp_relation_protected(citus_relid))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("DP statements on protected Citus tables are not supported"),
					 errdetail("The rules of protected tables are checked on one node's plan; a Citus table is read on its workers."),
					 errhint("Keep protected tables local, or undistribute the table.")));
		if (dp_privacy_unit_of(citus_relid, &unit_column, &unit_groups))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("DP statements on Citus tables with a privacy unit are not supported"),
					 errdetail("A privacy unit is bounded by aggregating its rows together, and Citus spreads a unit's rows over shards."),
					 errhint("Clear the privacy unit with dp_agg.clear_privacy_unit, or keep the table local.")));
	}
	else if (!dp_privacy_unit_rewrite(parse) && dp_query_has_dp(parse))
	{
		/*
		 * bound each privacy unit's contribution (privacy_unit.c), which
		 * also selects the group keys of a statement it rewrites, with its
		 * k; otherwise a unit is a row, in one group
		 */
		dp_selection_rewrite(parse, 1);
	}
	if (prev_planner_hook)
		stmt = prev_planner_hook(parse, query_string, cursorOptions, boundParams);
	else
		stmt = standard_planner(parse, query_string, cursorOptions, boundParams);
	if (dp_guc_citus_worker)
		dp_dist_check_fragment_plan(stmt, fragment_specs);
	/* nothing on its rows can fail or report (row_seal.c) */
	if (OidIsValid(untrusted))
		dp_row_seal_plan(stmt, untrusted);
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
		/* before the executor builds anything, and any row is read */
		if (protect.untrusted)
		{
			dp_row_check_plan(queryDesc->plannedstmt, queryDesc->params, protect.relid);
			dp_settings_check(queryDesc->plannedstmt, protect.relid);
			dp_settings_note_untrusted();
		}
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
	if (releases == NIL && fragments == NIL)
		return;

	if (protect.untrusted && !worker)
		dp_protect_check_epsilon(releases);
	/* before any row is read and any worker starts (pick_key.c) */
	if (!worker && picks_units(releases))
		dp_pick_key_renew();
	/* a fragment is paid for on the coordinator: no charge here */
	if (!worker && releases != NIL)
		dp_charge(queryDesc, releases);
	dp_register_releases(queryDesc->estate, list_concat(releases, fragments));
}

/*
 * While the executor reads the rows of a protected relation for a role
 * untrusted for it, no setting reports on the execution
 * (protect_settings.c): the settings are checked again at each run (a
 * cursor's FETCH runs after whatever the session did since), and those that
 * report are at their quiet values for the executor's call.
 */
static void
dp_ExecutorRun(DP_EXECUTOR_RUN_PARAMS)
{
	Oid			relid = dp_protect_untrusted(queryDesc->plannedstmt);
	int			nest = -1;

	if (OidIsValid(relid))
	{
		dp_settings_check(queryDesc->plannedstmt, relid);
		nest = dp_settings_force();
	}
	if (prev_ExecutorRun)
		prev_ExecutorRun(DP_EXECUTOR_RUN_ARGS);
	else
		standard_ExecutorRun(DP_EXECUTOR_RUN_ARGS);
	dp_settings_restore(nest);
}

static void
dp_ExecutorFinish(QueryDesc *queryDesc)
{
	int			nest = -1;

	if (OidIsValid(dp_protect_untrusted(queryDesc->plannedstmt)))
		nest = dp_settings_force();
	if (prev_ExecutorFinish)
		prev_ExecutorFinish(queryDesc);
	else
		standard_ExecutorFinish(queryDesc);
	dp_settings_restore(nest);
}

static void
dp_ExecutorEnd(QueryDesc *queryDesc)
{
	int			nest = -1;

	if (OidIsValid(dp_protect_untrusted(queryDesc->plannedstmt)))
		nest = dp_settings_force();
	if (prev_ExecutorEnd)
		prev_ExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
	dp_settings_restore(nest);
}

static bool
dp_ExecutorCheckPerms(DP_PERMS_HOOK_PARAMS)
{
	if (!dp_protect_check_rtable(rangeTable, ereport_on_violation))
		return false;
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
	prev_ExecutorCheckPerms = ExecutorCheckPerms_hook;
	ExecutorCheckPerms_hook = dp_ExecutorCheckPerms;
	prev_ExecutorRun = ExecutorRun_hook;
	ExecutorRun_hook = dp_ExecutorRun;
	prev_ExecutorFinish = ExecutorFinish_hook;
	ExecutorFinish_hook = dp_ExecutorFinish;
	prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = dp_ExecutorEnd;
	dp_stats_planner_init();
	dp_row_seal_init();
}
