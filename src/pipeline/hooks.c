/*-------------------------------------------------------------------------
 *
 * hooks.c
 *	  Where dp_agg joins query processing: planning and executor start.
 *
 * The data flows one way:
 *
 *   plan -> guard -> price -> charge -> aggregate -> noise -> release
 *
 * At planning the joins of DP statements to lookup tables are checked and
 * the lookup tables marked (lookup_join.c), the guard rejects statements
 * it cannot price (guard.c), and
 * statements over relations with a privacy unit are rewritten to bound
 * each unit's contribution (privacy_unit.c), and the groups of a DP
 * statement with GROUP BY are put under private selection (selection.c; on
 * a Citus table in the rewrite of dist_plan.c).  At
 * executor start, protected relations are enforced first (protect_check.c,
 * also from the executor's permission hook, which COPY calls too).  The
 * statistics that count protected rows are checked where the executor
 * initializes a function call (the object access hook) and, for one
 * relation's, at each call of the checking function the planning puts in
 * (protect_stats.c).  At
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
#include "catalog/objectaccess.h"
#include "catalog/pg_proc.h"
#include "executor/executor.h"
#include "optimizer/cost.h"
#include "optimizer/planner.h"
#include "utils/guc.h"

#include "budget.h"
#include "compat.h"
#include "dist_access.h"
#include "dist_plan.h"
#include "dist_price.h"
#include "dist_worker.h"
#include "domain_exec.h"
#include "domain_group.h"
#include "domain_rows.h"
#include "error_bars.h"
#include "guard.h"
#include "guc.h"
#include "hooks.h"
#include "insert_drain.h"
#include "lookup_join.h"
#include "pick_key.h"
#include "price.h"
#include "privacy_unit.h"
#include "protect.h"
#include "protect_check.h"
#include "protect_guard.h"
#include "protect_settings.h"
#include "protect_stats.h"
#include "public_domain.h"
#include "registry.h"
#include "row_seal.h"
#include "selection.h"
#include "side_reads.h"
#include "top_k.h"

static planner_hook_type prev_planner_hook = NULL;
static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ExecutorRun_hook_type prev_ExecutorRun = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;
static ExecutorCheckPerms_hook_type prev_ExecutorCheckPerms = NULL;
static ExecutorFinish_hook_type prev_ExecutorFinish = NULL;
static object_access_hook_type prev_object_access_hook = NULL;

/* Does the plan read a protected relation (one the planner added too)? */
static bool
reads_protected(PlannedStmt *stmt)
{
	ListCell   *lc;

	foreach(lc, stmt->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		if (rte->rtekind == RTE_RELATION && dp_relation_protected(rte->relid))
			return true;
	}
	return false;
}

/*
 * A DP statement is planned without partitionwise aggregation.  With
 * enable_partitionwise_aggregate, the planner may aggregate each partition
 * of a partitioned table on its own, below an Append: fully (each
 * partition's groups released by their own aggregation node, each priced
 * and noised on its own) or partially (partial states combined above the
 * Append).  The guard accepts neither: the first would price one release
 * per partition, and a DP aggregate below an Append is refused.  So the
 * setting is turned off while such a statement is planned: the partitions
 * are read through one Append, below one aggregation, as for any
 * partitioned table.  Returns the GUC nest level to close, or -1.
 */
static int
plan_without_partitionwise_aggregation(Query *parse)
{
	int			nestlevel;

	if (!enable_partitionwise_aggregate || !dp_query_has_dp(parse))
		return -1;
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("enable_partitionwise_aggregate", "off", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	return nestlevel;
}

/*
 * The planner (the next hook's or the standard one), with the side reads'
 * check ended whatever it does.  Not inlined: the caller's variables stay
 * out of the setjmp's frame.
 */
static pg_noinline PlannedStmt *
plan_with_side_reads(Query *parse, const char *query_string, int cursorOptions,
					 ParamListInfo boundParams, void *side_reads)
{
	PlannedStmt *volatile stmt = NULL;

	PG_TRY();
	{
		if (prev_planner_hook)
			stmt = prev_planner_hook(parse, query_string, cursorOptions, boundParams);
		else
			stmt = standard_planner(parse, query_string, cursorOptions, boundParams);
	}
	PG_CATCH();
	{
		dp_side_reads_plan_end(side_reads);
		PG_RE_THROW();
	}
	PG_END_TRY();
	dp_side_reads_plan_end(side_reads);
	return stmt;
}

static PlannedStmt *
dp_plan(Query *parse, const char *query_string, int cursorOptions,
		ParamListInfo boundParams)
{
	PlannedStmt *stmt;
	bool		names_protected;
	Oid			untrusted;
	Oid			citus_relid;
	List	   *fragment_specs = NIL;
	void	   *side_reads;
	bool		may_check;
	int			gucs;

	/* key lists of the statement (key_list.c), before the guards see their joins */
	dp_domain_prepare(parse);
	/* its conditions HAVING dp_agg.top_k(k) (top_k.c) */
	dp_top_k_prepare(parse);
	/* joins to lookup tables, which the guards then accept (lookup_join.c) */
	dp_lookup_check_query(parse);
	dp_guard_query(parse);
	names_protected = dp_protect_guard_query(parse, &untrusted);
	/* for every role: no function reads the rows beside the DP aggregates */
	dp_side_reads_check_query(parse);
	/* error bars: the DP aggregates they name return estimates (error_bars.c) */
	dp_error_bars_rewrite(parse);
	/* a worker: a fragment must be the one its signatures cover */
	if (dp_guc_citus_worker)
		fragment_specs = dp_dist_check_fragment_query(parse, boundParams);
	/* the public domains of GROUP BY keys (public_domain.c) */
	dp_domain_resolve(parse);
	parse = dp_dist_rewrite(parse, &citus_relid);
	if (OidIsValid(citus_relid))
	{
		/* a Citus statement's units and keys are handled by its rewrite (dist_plan.c) */
		if (dp_top_k_requested())
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("top-k is not supported on Citus tables"),
					 errdetail("The groups of a DP statement on a Citus table are combined on the coordinator by dp_agg_internal.dist_run, which ranks none."),
					 errhint("Release the groups' noisy counts and order them by those: ORDER BY dp_count(*) DESC LIMIT k.")));
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
	/* the statistics of one relation are read through their check */
	may_check = dp_stats_rewrite_query(parse);
	side_reads = dp_side_reads_plan_begin(parse);
	gucs = plan_without_partitionwise_aggregation(parse);
	stmt = plan_with_side_reads(parse, query_string, cursorOptions, boundParams, side_reads);
	/* an error aborts the (sub)transaction, which restores the setting */
	if (gucs >= 0)
		AtEOXact_GUC(true, gucs);
	if (dp_guc_citus_worker)
		dp_dist_check_fragment_plan(stmt, fragment_specs);
	else if (!OidIsValid(citus_relid))
		dp_selection_fuse(stmt);	/* a selection reads its rows from a DP aggregate */
	/* nothing on its rows can fail or report (row_seal.c) */
	if (OidIsValid(untrusted))
	{
		dp_row_seal_plan(stmt, untrusted);
		/* an INSERT's target gets its rows once they are all read (insert_drain.c) */
		dp_insert_drain_plan(stmt);
	}
	/*
	 * Which plans depend on the role (doc/guard.md, "Protected tables", "What
	 * protection changes").  A cached plan is used again only by the role
	 * it was made for when dependsOnRole is set; a PL/pgSQL expression whose
	 * plan sets it is never evaluated as a simple expression (plancache.c,
	 * CachedPlanAllowsSimpleValidityCheck), but through the executor's start,
	 * at a cost: a loop of i := i + 1 runs about 45 times slower, and
	 * GET DIAGNOSTICS ROW_COUNT and error contexts follow the SPI path.  So
	 * it is set only where something was decided for the role at planning,
	 * or is checked only when an expression is initialized:
	 *   - the statement names a protected relation, views expanded, also
	 *     through a parent (names_protected): the stricter guard, and the
	 *     planner's estimates without statistics, were applied for the role;
	 *   - the plan reads a protected relation that planning added (a
	 *     set-returning SQL function it inlined): the estimates again;
	 *   - the plan calls statistics checked when its expression is
	 *     initialized (protect_stats.c): a simple expression keeps that
	 *     state for its transaction, across SET ROLE and SECURITY DEFINER
	 *     calls.
	 * Everything else is checked again at each execution with the role of
	 * that moment: protected relations at the executor's start and in its
	 * permission hook (and a plan with a relation is never a simple
	 * expression), one relation's statistics at each call.  A plan made
	 * before a relation was protected, or before a grant, a revocation, a
	 * change of role membership or of a role's attributes, is made again:
	 * protect.c resets the plan cache then.
	 */
	if (names_protected || (may_check && dp_stats_finish_plan(stmt)) ||
		(dp_any_protected() && reads_protected(stmt)))
		stmt->dependsOnRole = true;
	return stmt;
}

static PlannedStmt *
dp_planner(Query *parse, const char *query_string, int cursorOptions,
		   ParamListInfo boundParams)
{
	PlannedStmt *volatile stmt = NULL;
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
	/* the budget tables hold every charge before they are read */
	dp_fold_for_readers(stmt);
	return stmt;
}

/*
 * Does the statement choose the groups of privacy units by priority, or
 * sample units?  Then it draws its keys (pick_key.c).
 */
static bool
keys_units(List *releases)
{
	ListCell   *lc;

	foreach(lc, releases)
	{
		DpRelease  *r = lfirst(lc);

		if (r->call.unit == DP_UNIT_PICK || r->sampling.units)
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
	Oid			dist_untrusted;

	dp_stats_check_start(queryDesc->plannedstmt);
	/* lookup joins hold for the statement's snapshot (lookup_join.c) */
	if (!worker && !(eflags & EXEC_FLAG_EXPLAIN_ONLY))
		dp_lookup_check_plan(queryDesc->plannedstmt, queryDesc->snapshot);
	/* a DP statement on a Citus table reads it in dist_run (dist_access.c) */
	dist_untrusted = dp_dist_protect_start(queryDesc->plannedstmt, queryDesc->params, eflags,
										   queryDesc->instrument_options);
	dp_protect_start(queryDesc->plannedstmt, queryDesc->params, eflags,
					 queryDesc->instrument_options, &protect);
	if (OidIsValid(dist_untrusted))
	{
		protect.untrusted = true;
		if (!OidIsValid(protect.relid))
			protect.relid = dist_untrusted;
	}
	PG_TRY();
	{
		/* before the executor builds anything, and any row is read */
		if (protect.untrusted)
		{
			dp_row_check_plan(queryDesc->plannedstmt, queryDesc->params, protect.relid);
			dp_insert_drain_check(queryDesc->plannedstmt, protect.relid);
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
	if (!worker && keys_units(releases))
		dp_pick_key_renew(queryDesc);
	/* a fragment is paid for on the coordinator: no charge here */
	if (!worker && releases != NIL)
		dp_charge(queryDesc, releases);
	dp_register_releases(queryDesc->estate, list_concat(releases, fragments));
	/* while it runs, no other statement reads its rows (side_reads.c) */
	if (releases != NIL)
		dp_side_reads_register(queryDesc);
}

/*
 * While the executor reads the rows of a protected relation for a role
 * untrusted for it, no setting reports on the execution
 * (protect_settings.c): the settings are checked again at each run (a
 * cursor's FETCH runs after whatever the session did since), and those that
 * report are at their quiet values for the executor's call.  An error
 * leaves them quiet: the (sub)transaction's abort restores them.  While it
 * runs, no other statement reads its rows (side_reads.c).
 */
static void
dp_ExecutorRun(DP_RUN_HOOK_PARAMS)
{
	Oid			relid = dp_protect_untrusted(queryDesc->plannedstmt);
	int			nest = -1;
	void	   *token;

	if (OidIsValid(relid))
	{
		dp_settings_check(queryDesc->plannedstmt, relid);
		nest = dp_settings_force();
	}
	token = dp_side_reads_enter(queryDesc);
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

/*
 * The end of an untrusted role's statement runs with the quiet settings too
 * (a sort's end reports its memory); the key of privacy units lives as long
 * as the statement that drew it.
 */
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
	dp_pick_key_release(queryDesc);
}

static bool
dp_ExecutorCheckPerms(DP_PERMS_HOOK_PARAMS)
{
	if (!dp_protect_check_rtable(rangeTable, ereport_on_violation))
		return false;
	dp_side_reads_check_rtable(rangeTable);
	if (prev_ExecutorCheckPerms)
		return prev_ExecutorCheckPerms(DP_PERMS_HOOK_ARGS);
	return true;
}

/*
 * The executor initializes a function call (also an operator's, an
 * aggregate's support functions, a set-returning function's): statistics
 * that count protected rows (protect_stats.c).
 */
static void
dp_object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId,
				 void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (access == OAT_FUNCTION_EXECUTE && classId == ProcedureRelationId)
		dp_stats_check_function(objectId);
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
	prev_ExecutorFinish = ExecutorFinish_hook;
	ExecutorFinish_hook = dp_ExecutorFinish;
	prev_object_access_hook = object_access_hook;
	object_access_hook = dp_object_access;
	dp_stats_planner_init();
	dp_pick_key_init();
	dp_row_seal_init();
}
