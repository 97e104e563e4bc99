/*-------------------------------------------------------------------------
 *
 * protect_stats.c
 *	  No row counts of protected relations from statistics.
 *
 * README, "Protected tables", rule 5.  A role untrusted for some protected
 * relation may not read the planner's statistics (pg_statistic and
 * pg_statistic_ext_data, behind pg_stats and pg_stats_ext) nor call the
 * cumulative statistics functions that count rows, blocks or calls per
 * relation, database or function (pg_stat_get_numscans, _tuples_fetched,
 * _xact_*, _db_*, ...; behind pg_stat_*, pg_stat_xact_* and pg_statio_*):
 * an indexed predicate's exact count shows in the tuple counters of its
 * transaction.  The statistics functions are caught in the plan at
 * planning and at executor start (dp_stats_check_plan), where views and
 * SQL functions have been expanded, whether called directly, through an
 * operator or through a domain's CHECK constraint; the function manager's
 * hook cannot see them, as built-in functions bypass it.  The catalogs are caught by the executor's
 * permission hook (dp_stats_check_rtable).  Counters of buffer hits and
 * reads, and the C functions of pg_stat_statements and its kin, are
 * refused too.  The planner estimates an untrusted role's statements
 * without the statistics of protected relations (its hooks, below), since
 * its choices show in the statement's duration.  Table sizes
 * (pg_class.reltuples, relpages, pg_relation_size) stay public, and are
 * documented so.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "catalog/index.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_statistic_ext_data.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "nodes/parsenodes.h"
#include "optimizer/plancat.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgrtab.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "guard.h"
#include "protect.h"
#include "protect_stats.h"

#define STATS_PREFIX "pg_stat_get_"

/*
 * Statistics functions without per-relation, per-database or per-function
 * counts: server activity, background writer and checkpoints, WAL, I/O,
 * archiver, replication, SLRU caches, progress of one's own commands.
 */
static const char *const harmless_stats[] = {
	"activity", "archiver", "backend_", "bgwriter_", "buf_", "checkpoint",
	"progress_info", "recovery_prefetch", "replication_slot", "slru",
	"snapshot_timestamp", "subscription", "wal",
};

/*
 * Server-wide or per-backend counters of buffer hits and reads, refused
 * although they match a harmless prefix: on a quiet server, the hits of
 * the client backends (pg_stat_io, PostgreSQL 16) or of one's own backend
 * (pg_stat_get_backend_io, 18) after an index scan count the heap pages,
 * so about the rows, that its predicate matched, as pg_stat_database's
 * blks_hit would; buffers allocated count the pages read from disk.
 */
static const char *const counted_stats[] = {
	"backend_io", "buf_alloc", "io",
};

/*
 * Modules whose C functions report per-statement counts of rows and
 * buffers: pg_stat_statements (its view is readable by every role, which
 * sees the rows and buffer hits of its own statements), pg_qualstats,
 * pg_stat_kcache, pg_stat_monitor.
 */
static const char *const stats_modules[] = {
	"$libdir/pg_stat_statements", "$libdir/pg_qualstats",
	"$libdir/pg_stat_kcache", "$libdir/pg_stat_monitor",
};

/* Is the function a C function of one of stats_modules? */
static bool
module_stats_function(Oid fn_oid)
{
	HeapTuple	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fn_oid));
	bool		found = false;
	Datum		bin;
	bool		isnull;

	if (!HeapTupleIsValid(tup))
		return false;
	bin = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_probin, &isnull);
	if (((Form_pg_proc) GETSTRUCT(tup))->prolang == ClanguageId && !isnull)
	{
		char	   *path = TextDatumGetCString(bin);

		for (size_t i = 0; i < lengthof(stats_modules); i++)
			if (strcmp(path, stats_modules[i]) == 0)
				found = true;
	}
	ReleaseSysCache(tup);
	return found;
}

/*
 * Is the function a statistics function with counts per relation,
 * database, function or statement?  For a built-in one, its C name tells
 * (the executable's own table of built-in functions); else its module.
 */
bool
dp_stats_function(Oid fn_oid)
{
	const char *name;
	uint16		index;

	if (fn_oid > fmgr_last_builtin_oid)
		return fn_oid >= FirstNormalObjectId && module_stats_function(fn_oid);
	index = fmgr_builtin_oid_index[fn_oid];
	if (index == InvalidOidBuiltinMapping)
		return false;
	name = fmgr_builtins[index].funcName;
	if (strncmp(name, STATS_PREFIX, strlen(STATS_PREFIX)) != 0)
		return false;
	name += strlen(STATS_PREFIX);
	for (size_t i = 0; i < lengthof(counted_stats); i++)
		if (strcmp(name, counted_stats[i]) == 0)
			return true;
	for (size_t i = 0; i < lengthof(harmless_stats); i++)
		if (strncmp(name, harmless_stats[i], strlen(harmless_stats[i])) == 0)
			return false;
	return true;
}

/* check_functions_in_node's callback: remember a statistics function */
static bool
stats_function_found(Oid fn_oid, void *context)
{
	if (!dp_stats_function(fn_oid))
		return false;
	*(Oid *) context = fn_oid;
	return true;
}

static void
reject_statistics(const char *what, Oid relid)
{
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("%s not available to role \"%s\"", what,
					GetUserNameFromId(GetUserId(), false)),
			 errdetail("The role is not trusted for protected relation \"%s\", whose rows statistics count.",
					   get_rel_name(relid)),
			 errhint("See \"Protected tables\" in the dp_agg README.")));
}

static bool stats_call_walker(Node *node, Oid *found);

/* Does a domain's CHECK constraint, run on each coercion, call one? */
static bool
domain_stats_call(Oid domain, Oid *found)
{
	/* the reference's release is a callback of its context: a context of its own */
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "dp_agg domain",
											  ALLOCSET_SMALL_SIZES);
	DomainConstraintRef *ref = MemoryContextAlloc(cxt, sizeof(DomainConstraintRef));
	bool		calls = false;
	ListCell   *lc;

	InitDomainConstraintRef(domain, ref, cxt, false);
	foreach(lc, ref->constraints)
	{
		DomainConstraintState *c = lfirst(lc);

		if (stats_call_walker((Node *) c->check_expr, found))
		{
			calls = true;
			break;
		}
	}
	MemoryContextDelete(cxt);
	return calls;
}

/*
 * A statistics function called in an expression: by a function call, by
 * an operator (whose function may be one), or by the CHECK constraint of
 * a domain the expression coerces to.
 */
static bool
stats_call_walker(Node *node, Oid *found)
{
	if (node == NULL)
		return false;
	if (check_functions_in_node(node, stats_function_found, found))
		return true;
	if (IsA(node, CoerceToDomain) &&
		domain_stats_call(((CoerceToDomain *) node)->resulttype, found))
		return true;
	return expression_tree_walker(node, stats_call_walker, found);
}

/* A statistics function called in a plan tree; InvalidOid if none. */
static Oid
plan_stats_call(Plan *plan)
{
	Oid			found = InvalidOid;
	List	   *children;
	ListCell   *lc;

	if (plan == NULL)
		return InvalidOid;
	if (stats_call_walker((Node *) dp_plan_expressions(plan), &found))
		return found;
	children = dp_plan_children(plan);
	foreach(lc, children)
		if (OidIsValid(found = plan_stats_call(lfirst(lc))))
			return found;
	return InvalidOid;
}

/*
 * At executor start, and at planning (a PL/pgSQL simple expression is
 * planned, then evaluated without the executor's start): a plan that calls
 * a statistics function is refused to a role untrusted for some protected
 * relation.
 */
void
dp_stats_check_plan(PlannedStmt *stmt)
{
	Oid			func;
	Oid			relid;
	ListCell   *lc;

	if (!dp_any_protected())
		return;
	func = plan_stats_call(stmt->planTree);
	foreach(lc, stmt->subplans)
		if (!OidIsValid(func))
			func = plan_stats_call(lfirst(lc));
	if (!OidIsValid(func))
		return;
	relid = dp_untrusted_protected(GetUserId());
	if (OidIsValid(relid))
		reject_statistics(psprintf("statistics function %s is", get_func_name(func)), relid);
}

/* The planner's statistics in a range table (the executor's permission hook). */
void
dp_stats_check_rtable(List *rtable)
{
	ListCell   *lc;

	foreach(lc, rtable)
	{
		RangeTblEntry *rte = lfirst(lc);
		Oid			relid;

		if (rte->rtekind != RTE_RELATION ||
			(rte->relid != StatisticRelationId && rte->relid != StatisticExtDataRelationId))
			continue;
		relid = dp_untrusted_protected(GetUserId());
		if (OidIsValid(relid))
			reject_statistics("the planner's statistics are", relid);
	}
}

/* ---------- the planner's estimates ---------- */

static get_relation_stats_hook_type prev_relation_stats_hook = NULL;
static get_index_stats_hook_type prev_index_stats_hook = NULL;
static get_relation_info_hook_type prev_relation_info_hook = NULL;
static get_attavgwidth_hook_type prev_attavgwidth_hook = NULL;

/*
 * Does the current user plan with a relation's statistics that count rows
 * of a protected relation it is not trusted for: the relation's own, or,
 * read with its inheritance children (inh), theirs too?
 */
static bool
stats_hidden(Oid relid, bool inh)
{
	List	   *rels = list_make1_oid(relid);
	ListCell   *lc;

	/* a role trusted for every protected relation (an owner) plans as usual */
	if (!OidIsValid(dp_untrusted_protected(GetUserId())))
		return false;
	if (inh && has_subclass(relid))
		rels = find_all_inheritors(relid, NoLock, NULL);
	foreach(lc, rels)
	{
		Oid			r = lfirst_oid(lc);

		if (dp_relation_protected(r) && !dp_role_trusted(r, GetUserId()))
			return true;
	}
	return false;
}

/*
 * The planner's statistics of a column (get_relation_stats_hook) or of an
 * index expression (get_index_stats_hook): none for a protected relation
 * the current user is untrusted for.  Its plan (an index or a sequential
 * scan, parallel workers, JIT compilation, all chosen by cost) then
 * depends on the table's size, which is public, and on the statement, but
 * not on the most common values and their frequencies, which for a table
 * that ANALYZE reads whole are exact counts: the role can see the choice
 * through its statement's duration (JIT compiles past jit_above_cost,
 * which it sets) or its parallel workers in pg_stat_activity.
 */
static bool
relation_stats(PlannerInfo *root, RangeTblEntry *rte, AttrNumber attnum,
			   VariableStatData *vardata)
{
	if (rte->rtekind == RTE_RELATION && stats_hidden(rte->relid, rte->inh))
	{
		vardata->statsTuple = NULL;
		vardata->freefunc = NULL;
		return true;
	}
	return prev_relation_stats_hook &&
		prev_relation_stats_hook(root, rte, attnum, vardata);
}

static bool
index_stats(PlannerInfo *root, Oid indexOid, AttrNumber indexattnum,
			VariableStatData *vardata)
{
	if (stats_hidden(IndexGetRelation(indexOid, false), false))
	{
		vardata->statsTuple = NULL;
		vardata->freefunc = NULL;
		return true;
	}
	return prev_index_stats_hook &&
		prev_index_stats_hook(root, indexOid, indexattnum, vardata);
}

/* extended statistics (CREATE STATISTICS): none either */
static void
relation_info(PlannerInfo *root, Oid relationObjectId, bool inhparent, RelOptInfo *rel)
{
	if (prev_relation_info_hook)
		prev_relation_info_hook(root, relationObjectId, inhparent, rel);
	if (stats_hidden(relationObjectId, inhparent))
		rel->statlist = NIL;
}

/*
 * A column's average width: its type's default, not the one ANALYZE
 * measured.  0 lets PostgreSQL read the statistics.
 */
static int32
attavgwidth(Oid relid, AttrNumber attnum)
{
	int32		width = prev_attavgwidth_hook ? prev_attavgwidth_hook(relid, attnum) : 0;
	Oid			type;
	int32		typmod;
	Oid			collation;

	if (width > 0 || attnum <= 0 || !stats_hidden(relid, false))
		return width;
	get_atttypetypmodcoll(relid, attnum, &type, &typmod, &collation);
	return get_typavgwidth(type, typmod);
}

/* Install the planner's hooks above (from _PG_init, through hooks.c). */
void
dp_stats_planner_init(void)
{
	prev_relation_stats_hook = get_relation_stats_hook;
	get_relation_stats_hook = relation_stats;
	prev_index_stats_hook = get_index_stats_hook;
	get_index_stats_hook = index_stats;
	prev_relation_info_hook = get_relation_info_hook;
	get_relation_info_hook = relation_info;
	prev_attavgwidth_hook = get_attavgwidth_hook;
	get_attavgwidth_hook = attavgwidth;
}
