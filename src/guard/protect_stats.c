/*-------------------------------------------------------------------------
 *
 * protect_stats.c
 *	  No row counts of protected relations from statistics.
 *
 * doc/guard.md, "Protected tables", rule 5.  Statistics that count the rows of
 * a protected relation are refused to a role untrusted for it; every other
 * statistic stays as PostgreSQL shows it.  Three kinds:
 *
 *   - Statistics of one relation: the cumulative counters of a relation,
 *     of its indexes and of its TOAST table (pg_stat_get_numscans(oid),
 *     _tuples_fetched, _live_tuples, _xact_*, ...; behind pg_stat_*_tables,
 *     pg_stat_*_indexes, pg_statio_*), and the planner's statistics
 *     (pg_statistic and pg_statistic_ext_data, behind pg_stats and
 *     pg_stats_ext).  Refused only where the relation is protected (or an
 *     index or TOAST table of one, or the parent of a protected partition
 *     or child) and the role is not trusted for it.  Which relation a call
 *     asks about is known only when it runs (pg_stat_user_tables computes
 *     the counters of every row of pg_class), so before planning each call
 *     is replaced by dp_agg_internal.relation_statistic(relation, function, type),
 *     which checks the relation and then calls the function
 *     (dp_stats_rewrite_query, dp_stats_finish_plan); the planner's
 *     statistics get a filter on each scan of their catalogs,
 *     dp_agg_internal.statistics_visible(catalog, key), as a security qual, so that
 *     pg_stats omits the protected relations' rows the way PostgreSQL omits
 *     the columns a role may not read.
 *   - Counters that mix the reads of every relation: per database
 *     (pg_stat_get_db_*), per function (a trigger or a policy runs once per
 *     row), the buffer counters of pg_stat_io and its kin, and the C
 *     functions of pg_stat_statements and its kin.  Refused to a role
 *     untrusted for some protected relation of the database, unless it is
 *     trusted for statistics.
 *   - Everything else (server activity, WAL, replication, progress, ...)
 *     is free.
 *
 * Roles trusted for statistics (dp_stats_trusted): superusers and the
 * roles with the privileges of the role dp_agg.stats_trusted_role names,
 * pg_read_all_stats by default, may read the cumulative counters of every
 * relation: PostgreSQL lets that role read every session's statement and
 * every statement's counters (pg_stat_activity, pg_stat_statements), so a
 * DBA who grants it already trusts the role with what other roles run.
 * The planner's statistics hold row values (most common values, histogram
 * bounds): they stay for the roles trusted for the relation.
 *
 * Where the checks are made.  The executor calls a function only after
 * initializing its expression, and that initialization calls the object
 * access hook (OAT_FUNCTION_EXECUTE) wherever the expression comes from: a
 * plan, a PL/pgSQL simple expression, the planner folding a constant, a
 * CHECK constraint, a trigger's WHEN, a domain's CHECK, CALL's arguments,
 * an aggregate's final function.  dp_stats_check_function, called from
 * that hook, refuses a counter that mixes reads, and a statistic of one
 * relation that was not replaced by the checking call (an operator over
 * it, a function inlined where no planner hook runs): its relation is not
 * known there.  A PL/pgSQL simple expression keeps its initialized
 * expression for the rest of the transaction, also across SET ROLE, so a
 * plan with such calls depends on the role (dp_stats_finish_plan): it is
 * then never a simple expression, and is initialized again at each
 * executor start.  A replaced call checks its relation at every call, with
 * the role of that moment, and needs nothing more.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_statistic_ext.h"
#include "catalog/pg_statistic_ext_data.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/parsenodes.h"
#include "optimizer/plancat.h"
#include "parser/parsetree.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgrtab.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "catalog.h"
#include "compat.h"
#include "guc.h"
#include "plan_nodes.h"
#include "protect.h"
#include "protect_stats.h"

#define STATS_PREFIX "pg_stat_get_"

/* What a statistics function counts (stats_kind). */
typedef enum StatsKind
{
	STATS_FREE,					/* nothing per relation, database or function */
	STATS_RELATION,				/* the rows of the relation its argument names */
	STATS_MIXED					/* reads of every relation, mixed */
} StatsKind;

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
 * Counters of one oid that is not a relation's: databases and functions
 * (pg_stat_get_db_*, pg_stat_get_function_*, pg_stat_get_xact_function_*).
 */
static const char *const mixed_prefixes[] = {
	"db_", "function_", "xact_function_",
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
	if (((Form_pg_proc) GETSTRUCT(tup))->prolang == ClanguageId)
	{
		bin = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_probin, &isnull);
		if (!isnull)
		{
			char	   *path = TextDatumGetCString(bin);

			for (size_t i = 0; i < lengthof(stats_modules); i++)
				if (strcmp(path, stats_modules[i]) == 0)
					found = true;
		}
	}
	ReleaseSysCache(tup);
	return found;
}

/* Does the built-in function take exactly one argument, of type oid? */
static bool
takes_one_oid(Oid fn_oid)
{
	HeapTuple	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fn_oid));
	bool		result;

	if (!HeapTupleIsValid(tup))
		return false;
	result = ((Form_pg_proc) GETSTRUCT(tup))->pronargs == 1 &&
		((Form_pg_proc) GETSTRUCT(tup))->proargtypes.values[0] == OIDOID;
	ReleaseSysCache(tup);
	return result;
}

/*
 * What does the function count?  For a built-in one, its C name tells (the
 * executable's own table of built-in functions): a pg_stat_get_ function
 * of one oid counts the rows of that relation unless it is a database's or
 * a function's; any other that is not known to be free mixes reads (fail
 * closed: a counter added in a later release is refused until it is
 * classified).  A non-built-in one mixes reads if it is a C function of a
 * statistics module.
 */
static StatsKind
stats_kind(Oid fn_oid)
{
	const char *name;
	uint16		index;

	if (fn_oid > fmgr_last_builtin_oid)
		return fn_oid >= FirstNormalObjectId && module_stats_function(fn_oid) ?
			STATS_MIXED : STATS_FREE;
	index = fmgr_builtin_oid_index[fn_oid];
	if (index == InvalidOidBuiltinMapping)
		return STATS_FREE;
	name = fmgr_builtins[index].funcName;
	if (strncmp(name, STATS_PREFIX, strlen(STATS_PREFIX)) != 0)
		return STATS_FREE;
	name += strlen(STATS_PREFIX);
	for (size_t i = 0; i < lengthof(counted_stats); i++)
		if (strcmp(name, counted_stats[i]) == 0)
			return STATS_MIXED;
	for (size_t i = 0; i < lengthof(harmless_stats); i++)
		if (strncmp(name, harmless_stats[i], strlen(harmless_stats[i])) == 0)
			return STATS_FREE;
	for (size_t i = 0; i < lengthof(mixed_prefixes); i++)
		if (strncmp(name, mixed_prefixes[i], strlen(mixed_prefixes[i])) == 0)
			return STATS_MIXED;
	return takes_one_oid(fn_oid) ? STATS_RELATION : STATS_MIXED;
}

/*
 * Does the function count rows of relations, databases, functions or
 * statements in their statistics (whatever the role)?  A DP statement may
 * not call one (side_reads.c): its value could depend on the rows that
 * feed the DP aggregates.
 */
bool
dp_stats_function(Oid fn_oid)
{
	return stats_kind(fn_oid) != STATS_FREE;
}

/*
 * Is the role trusted for statistics: a superuser, or a role with the
 * privileges of the role dp_agg.stats_trusted_role names (none if it is
 * empty or names no role)?
 */
static bool
stats_trusted(Oid roleid)
{
	Oid			trusted;

	if (superuser_arg(roleid))
		return true;
	if (dp_guc_stats_trusted_role == NULL || dp_guc_stats_trusted_role[0] == '\0')
		return false;
	trusted = get_role_oid(dp_guc_stats_trusted_role, true);
	return OidIsValid(trusted) && has_privs_of_role(roleid, trusted);
}

/*
 * The table whose rows a relation's statistics count: an index's table,
 * a TOAST table's owner (named pg_toast_<oid> after it, which CLUSTER and
 * VACUUM FULL keep), else the relation itself; InvalidOid if there is
 * none.
 */
static Oid
counted_table(Oid relid)
{
	char		relkind = get_rel_relkind(relid);

	/* no such relation (dropped: its counters are gone too) */
	if (relkind == '\0')
		return InvalidOid;
	if (relkind == RELKIND_INDEX || relkind == RELKIND_PARTITIONED_INDEX)
	{
		relid = IndexGetRelation(relid, true);
		if (!OidIsValid(relid) || (relkind = get_rel_relkind(relid)) == '\0')
			return InvalidOid;
	}
	if (relkind == RELKIND_TOASTVALUE)
	{
		char	   *name = get_rel_name(relid);
		unsigned int owner;
		HeapTuple	tup;
		Oid			toast = relid;

		if (name == NULL || sscanf(name, "pg_toast_%u", &owner) != 1)
			return InvalidOid;
		tup = SearchSysCache1(RELOID, ObjectIdGetDatum((Oid) owner));
		if (!HeapTupleIsValid(tup))
			return InvalidOid;
		relid = ((Form_pg_class) GETSTRUCT(tup))->reltoastrelid == toast ?
			(Oid) owner : InvalidOid;
		ReleaseSysCache(tup);
	}
	return relid;
}

/*
 * The protected relation, untrusted for the role, whose rows the
 * statistics of relation relid count: the relation itself, the table of an
 * index or TOAST table, or a partition or inheritance child of it (whose
 * rows a parent's counters and statistics include); InvalidOid if none.
 */
static Oid
counted_protected(Oid relid, Oid roleid)
{
	Oid			table;
	List	   *rels;
	ListCell   *lc;

	if (!dp_any_protected())
		return InvalidOid;
	table = counted_table(relid);
	if (!OidIsValid(table))
		return InvalidOid;
	rels = has_subclass(table) ? find_all_inheritors(table, NoLock, NULL) :
		list_make1_oid(table);
	foreach(lc, rels)
	{
		Oid			r = lfirst_oid(lc);

		if (dp_relation_protected(r) && !dp_role_trusted(r, roleid))
			return r;
	}
	return InvalidOid;
}

static const char *
current_role_name(void)
{
	return GetUserNameFromId(GetUserId(), false);
}

/* ---------- statistics of one relation ---------- */

/*
 * Replace a call of a statistics function of one relation by
 * dp_agg_internal.relation_statistic(relation, function, NULL::result type), its
 * volatile twin for a volatile function (the pg_stat_get_xact_ ones), in
 * place.  Without the function (the extension's SQL objects older than
 * the library) the call stays as it is, and is refused to untrusted roles
 * when its expression is initialized.
 */
static void
replace_relation_call(FuncExpr *f)
{
	Oid			statistic = f->funcid;
	Oid			checked;

	if (list_length(f->args) != 1 || f->funcretset)
		return;
	checked = dp_relation_statistic_oid(func_volatile(statistic) == PROVOLATILE_VOLATILE);
	if (!OidIsValid(checked))
		return;
	f->args = list_make3(linitial(f->args),
						 makeConst(REGPROCEDUREOID, -1, InvalidOid, sizeof(Oid),
								   ObjectIdGetDatum(statistic), false, true),
						 makeNullConst(f->funcresulttype, -1, InvalidOid));
	f->funcid = checked;
	f->funcvariadic = false;
	f->funcformat = COERCE_EXPLICIT_CALL;
}

/*
 * A filter on a scan of pg_statistic (starelid) or pg_statistic_ext_data
 * (stxoid), as the first security qual of its range table entry rti: the
 * planner evaluates it before any other qual that is not leakproof.
 */
static void
filter_statistics(RangeTblEntry *rte, int rti, Oid visible)
{
	AttrNumber	key = rte->relid == StatisticRelationId ?
		Anum_pg_statistic_starelid : Anum_pg_statistic_ext_data_stxoid;
	Expr	   *qual;

	qual = (Expr *) makeFuncExpr(visible, BOOLOID,
								 list_make2(makeConst(REGCLASSOID, -1, InvalidOid, sizeof(Oid),
													  ObjectIdGetDatum(rte->relid), false, true),
											makeVar(rti, key, OIDOID, -1, InvalidOid, 0)),
								 InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
	rte->securityQuals = lcons(qual, rte->securityQuals);
}

static bool is_statistics_catalog(RangeTblEntry *rte);
static bool rewrite_walker(Node *node, bool *may_check);

/*
 * check_functions_in_node's callback: a function that is, or that the
 * planner may replace by (a SQL function it inlines: any function not
 * built in), a call checked at initialization.
 */
static bool
may_bring_checked(Oid fn_oid, void *context)
{
	return fn_oid >= FirstNormalObjectId || stats_kind(fn_oid) != STATS_FREE;
}

/* One query level: filter its statistics catalogs, then its expressions. */
static void
rewrite_level(Query *q, bool *may_check)
{
	Oid			visible = dp_statistics_visible_oid();
	ListCell   *lc;
	int			rti = 0;

	foreach(lc, q->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		rti++;
		if (OidIsValid(visible) && is_statistics_catalog(rte) && rti != q->resultRelation)
			filter_statistics(rte, rti, visible);
	}
	query_tree_walker(q, rewrite_walker, may_check, 0);
}

static bool
rewrite_walker(Node *node, bool *may_check)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query))
	{
		rewrite_level((Query *) node, may_check);
		return false;
	}
	if (!*may_check &&
		(IsA(node, CoerceToDomain) ||
		 check_functions_in_node(node, may_bring_checked, NULL)))
		*may_check = true;
	if (IsA(node, FuncExpr) && stats_kind(((FuncExpr *) node)->funcid) == STATS_RELATION)
		replace_relation_call((FuncExpr *) node);
	return expression_tree_walker(node, rewrite_walker, may_check);
}

static bool
is_statistics_catalog(RangeTblEntry *rte)
{
	return rte->rtekind == RTE_RELATION &&
		(rte->relid == StatisticRelationId || rte->relid == StatisticExtDataRelationId);
}

/*
 * Before planning, while any relation of the database is protected: the
 * statistics of one relation are called through the checking function, and
 * the scans of the planner's statistics are filtered.  A plan made before
 * the first relation was protected is made again then (protect.c resets
 * the plan cache).  Returns whether the plan may call statistics checked
 * at initialization (dp_stats_finish_plan need not look otherwise): the
 * query calls one, coerces to a domain, or calls a function that is not
 * built in, which the planner may inline.
 */
bool
dp_stats_rewrite_query(Query *parse)
{
	bool		may_check = false;

	if (!dp_any_protected())
		return false;
	rewrite_level(parse, &may_check);
	return may_check;
}

/* ---------- the plan: calls checked when their expression starts ---------- */

/* What init_checked_walker does and found. */
typedef struct InitChecked
{
	bool		replace;		/* replace the calls of one relation's statistics */
	bool		found;			/* a call checked at initialization */
} InitChecked;

static bool init_checked_walker(Node *node, InitChecked *w);

/* Does a domain's CHECK constraint, run on each coercion, call one? */
static bool
domain_calls_checked(Oid domain)
{
	/* the reference's release is a callback of its context: a context of its own */
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "dp_agg domain",
											  ALLOCSET_SMALL_SIZES);
	DomainConstraintRef *ref = MemoryContextAlloc(cxt, sizeof(DomainConstraintRef));
	/* the constraints are the type cache's: looked at, never changed */
	InitChecked w = {false, false};
	ListCell   *lc;

	InitDomainConstraintRef(domain, ref, cxt, false);
	foreach(lc, ref->constraints)
	{
		DomainConstraintState *c = lfirst(lc);

		(void) init_checked_walker((Node *) c->check_expr, &w);
	}
	MemoryContextDelete(cxt);
	return w.found;
}

/* check_functions_in_node's callback: a function checked at initialization */
static bool
init_checked_function(Oid fn_oid, void *context)
{
	return stats_kind(fn_oid) != STATS_FREE;
}

/*
 * Walk an expression of a plan: replace the calls of statistics of one
 * relation that planning brought in (SQL functions it inlined), and note
 * any call left to the check at initialization: a counter that mixes
 * reads, a statistic of one relation under an operator, a domain whose
 * CHECK calls one of them.
 */
static bool
init_checked_walker(Node *node, InitChecked *w)
{
	if (node == NULL)
		return false;
	if (w->replace && IsA(node, FuncExpr) &&
		stats_kind(((FuncExpr *) node)->funcid) == STATS_RELATION)
		replace_relation_call((FuncExpr *) node);
	if (!w->found &&
		(check_functions_in_node(node, init_checked_function, NULL) ||
		 (IsA(node, CoerceToDomain) &&
		  domain_calls_checked(((CoerceToDomain *) node)->resulttype))))
		w->found = true;
	return expression_tree_walker(node, init_checked_walker, w);
}

static void
plan_init_checked(Plan *plan, InitChecked *w)
{
	ListCell   *lc;

	if (plan == NULL)
		return;
	(void) init_checked_walker((Node *) dp_plan_expressions(plan), w);
	foreach(lc, dp_plan_children(plan))
		plan_init_checked(lfirst(lc), w);
}

/*
 * After planning, while any relation is protected: replace the calls that
 * planning brought in, and tell whether the plan calls statistics that are
 * checked when its expressions are initialized, so that it must depend on
 * the role (the file's comment).
 */
bool
dp_stats_finish_plan(PlannedStmt *stmt)
{
	InitChecked w = {true, false};
	ListCell   *lc;

	if (!dp_any_protected())
		return false;
	plan_init_checked(stmt->planTree, &w);
	foreach(lc, stmt->subplans)
		plan_init_checked(lfirst(lc), &w);
	return w.found;
}

/* ---------- when an expression is initialized ---------- */

/*
 * The object access hook's OAT_FUNCTION_EXECUTE, made where the executor
 * initializes a function call (also an operator's, an aggregate's
 * transition and final functions, a set-returning function's): a counter
 * that mixes reads, or a statistic of one relation that was not replaced
 * by its checking call, is refused to a role untrusted for some protected
 * relation and not trusted for statistics.
 */
void
dp_stats_check_function(Oid fn_oid)
{
	StatsKind	kind;
	Oid			relid;

	/* no protected relation (a flag in a cache) before the function's kind (a catalog lookup) */
	if (!OidIsValid(MyDatabaseId) || !IsTransactionState() || !dp_any_protected())
		return;
	kind = stats_kind(fn_oid);
	if (kind == STATS_FREE)
		return;
	relid = dp_untrusted_protected(GetUserId());
	if (!OidIsValid(relid) || stats_trusted(GetUserId()))
		return;
	if (kind == STATS_MIXED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("statistics function %s is not available to role \"%s\"",
						get_func_name(fn_oid), current_role_name()),
				 errdetail("Its counters are kept per database, function or statement, not per relation: they count the rows read from protected relation \"%s\", which the role is not trusted for.",
						   get_rel_name(relid)),
				 errhint("Roles with the privileges of the role dp_agg.stats_trusted_role names (\"%s\") may read them; see \"Protected tables\" in dp_agg's doc/guard.md.",
						 dp_guc_stats_trusted_role ? dp_guc_stats_trusted_role : "")));
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("statistics function %s is not available to role \"%s\" here",
					get_func_name(fn_oid), current_role_name()),
			 errdetail("Called otherwise than by its name in a query (through an operator or an aggregate, in a constraint, or in an expression no query plans), the relation it counts the rows of is not known before it runs, and the role is not trusted for protected relation \"%s\".",
					   get_rel_name(relid)),
			 errhint("Call it by its name in a query, as in SELECT %s('my_table'::regclass).",
					 get_func_name(fn_oid))));
}

/* ---------- the checking functions (SQL) ---------- */

/* What dp_relation_statistic keeps between the calls of one expression. */
typedef struct RelationStatistic
{
	Oid			statistic;		/* the function checked */
	FmgrInfo	flinfo;
} RelationStatistic;

/*
 * dp_agg_internal.relation_statistic(relation oid, statistic regprocedure,
 * result anyelement) RETURNS anyelement: statistic(relation), if the
 * current role may read the statistics of the relation, else an error that
 * names it.  statistic must be a built-in statistics function of one
 * relation that the role may execute, and result a NULL of its type (the
 * planner writes these calls; see dp_stats_rewrite_query).
 */
PG_FUNCTION_INFO_V1(dp_relation_statistic);
Datum
dp_relation_statistic(PG_FUNCTION_ARGS)
{
	RelationStatistic *cache = fcinfo->flinfo->fn_extra;
	Oid			relid;
	Oid			protected_rel;
	Datum		result;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the statistics function of dp_agg_internal.relation_statistic must not be NULL")));
	if (cache == NULL || cache->statistic != PG_GETARG_OID(1))
	{
		Oid			statistic = PG_GETARG_OID(1);

		if (stats_kind(statistic) != STATS_RELATION)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("function %s is not a statistics function of one relation",
							format_procedure(statistic))));
		if (get_func_rettype(statistic) != get_fn_expr_rettype(fcinfo->flinfo))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("the result type of dp_agg_internal.relation_statistic must be that of %s",
							format_procedure(statistic))));
		if (DP_FUNCTION_ACLCHECK(statistic, GetUserId()) != ACLCHECK_OK)
			aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_FUNCTION, get_func_name(statistic));
		cache = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(RelationStatistic));
		fmgr_info_cxt(statistic, &cache->flinfo, fcinfo->flinfo->fn_mcxt);
		cache->statistic = statistic;
		fcinfo->flinfo->fn_extra = cache;
	}
	/* the statistics functions are strict */
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	relid = PG_GETARG_OID(0);
	protected_rel = counted_protected(relid, GetUserId());
	if (OidIsValid(protected_rel) && !stats_trusted(GetUserId()))
	{
		if (protected_rel == relid)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("statistics of protected relation \"%s\" are not available to role \"%s\"",
							get_rel_name(relid), current_role_name()),
					 errdetail("%s counts its rows, and the role is not trusted for it.",
							   get_func_name(cache->statistic)),
					 errhint("Read the statistics of other relations only (for example with WHERE relid <> '%s'::regclass), or ask a DBA for the privileges of the role dp_agg.stats_trusted_role names; see \"Protected tables\" in dp_agg's doc/guard.md.",
							 get_rel_name(relid))));
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("statistics of relation \"%s\" are not available to role \"%s\"",
						get_rel_name(relid), current_role_name()),
				 errdetail("%s of it counts rows of protected relation \"%s\", which the role is not trusted for.",
						   get_func_name(cache->statistic), get_rel_name(protected_rel)),
				 errhint("Read the statistics of other relations only (for example with WHERE relid <> '%s'::regclass), or ask a DBA for the privileges of the role dp_agg.stats_trusted_role names; see \"Protected tables\" in dp_agg's doc/guard.md.",
						 get_rel_name(relid))));
	}
	{
		LOCAL_FCINFO(call, 1);

		InitFunctionCallInfoData(*call, &cache->flinfo, 1, InvalidOid, NULL, NULL);
		call->args[0].value = PG_GETARG_DATUM(0);
		call->args[0].isnull = false;
		result = FunctionCallInvoke(call);
		if (call->isnull)
			PG_RETURN_NULL();
	}
	return result;
}

/*
 * dp_agg_internal.statistics_visible(catalog regclass, key oid) RETURNS boolean:
 * may the current role read this row of the planner's statistics?  key is
 * pg_statistic.starelid or pg_statistic_ext_data.stxoid.  False where the
 * statistics describe the rows of a protected relation the role is not
 * trusted for.
 */
PG_FUNCTION_INFO_V1(dp_statistics_visible);
Datum
dp_statistics_visible(PG_FUNCTION_ARGS)
{
	Oid			catalog;
	Oid			relid;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_BOOL(false);
	catalog = PG_GETARG_OID(0);
	relid = PG_GETARG_OID(1);
	if (catalog == StatisticExtDataRelationId)
	{
		HeapTuple	tup = SearchSysCache1(STATEXTOID, ObjectIdGetDatum(relid));

		if (!HeapTupleIsValid(tup))
			PG_RETURN_BOOL(true);
		relid = ((Form_pg_statistic_ext) GETSTRUCT(tup))->stxrelid;
		ReleaseSysCache(tup);
	}
	else if (catalog != StatisticRelationId)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("dp_agg_internal.statistics_visible takes pg_statistic or pg_statistic_ext_data")));
	PG_RETURN_BOOL(!OidIsValid(counted_protected(relid, GetUserId())));
}

/* ---------- at executor start: the filters are in place ---------- */

static void
reject_planner_statistics(Oid relid)
{
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("the planner's statistics are not available to role \"%s\"",
					current_role_name()),
			 errdetail("They hold the values of the rows of protected relation \"%s\", which the role is not trusted for, and this plan reads them unfiltered.",
					   get_rel_name(relid)),
			 errhint("Run ALTER EXTENSION dp_agg UPDATE, which adds the filter; see \"Protected tables\" in dp_agg's doc/guard.md.")));
}

/* Is fn called in the expression (the filter of filter_statistics)? */
static bool
calls_function(Node *node, Oid *fn)
{
	if (node == NULL)
		return false;
	if (IsA(node, FuncExpr) && ((FuncExpr *) node)->funcid == *fn)
		return true;
	return expression_tree_walker(node, calls_function, fn);
}

/* Does every scan of a statistics catalog in the plan carry the filter? */
static bool
scans_filtered(Plan *plan, List *rtable, Oid visible)
{
	ListCell   *lc;

	if (plan == NULL)
		return true;
	if (dp_plan_reads_relation(plan) &&
		is_statistics_catalog(rt_fetch(((Scan *) plan)->scanrelid, rtable)) &&
		(!OidIsValid(visible) || !calls_function((Node *) plan->qual, &visible)))
		return false;
	foreach(lc, dp_plan_children(plan))
		if (!scans_filtered(lfirst(lc), rtable, visible))
			return false;
	return true;
}

/*
 * At executor start: a plan that reads the planner's statistics for a role
 * untrusted for some protected relation must filter every scan of them
 * (made by dp_stats_rewrite_query; missing from a plan made with the SQL
 * objects of an older version); else it is refused, as a whole.
 */
void
dp_stats_check_start(PlannedStmt *stmt)
{
	ListCell   *lc;
	Oid			relid;
	bool		reads = false;

	foreach(lc, stmt->rtable)
		if (is_statistics_catalog(lfirst(lc)))
			reads = true;
	if (!reads || !dp_any_protected())
		return;
	relid = dp_untrusted_protected(GetUserId());
	if (!OidIsValid(relid))
		return;
	{
		Oid			visible = dp_statistics_visible_oid();
		bool		ok = scans_filtered(stmt->planTree, stmt->rtable, visible);

		foreach(lc, stmt->subplans)
			ok = ok && scans_filtered(lfirst(lc), stmt->rtable, visible);
		if (!ok)
			reject_planner_statistics(relid);
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
	List	   *rels;
	ListCell   *lc;

	/* called for every column and index the planner estimates: no list */
	if (!(inh && dp_relation_has_children(relid)))
		return dp_relation_protected(relid) && !dp_role_trusted(relid, GetUserId());
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
