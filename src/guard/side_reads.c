/*-------------------------------------------------------------------------
 *
 * side_reads.c
 *	  A DP statement reads the rows of its input only through its DP
 *	  aggregates: no function it calls reads them beside.
 *
 * doc/guard.md, "What the guard accepts".  A release's noise hides one row (or
 * one unit) because the release depends on each row only through that
 * row's own contribution.  An expression whose value depends on other rows
 * of the relations that feed the DP aggregates breaks this, whatever the
 * role: WHERE f() > 0, where f counts the rows of unit 42, releases a count
 * or nothing as unit 42 is there or not.  Written as a sub-query it is
 * refused (guard.c); hidden in a function it is not seen by the guard,
 * which checks the statement's own expressions.  So, for every role:
 *
 *   - at planning (dp_side_reads_check_query), before the charge, every
 *     function the statement calls, at every level: a SQL function is
 *     seen into (its body parsed and analyzed as at execution, under its
 *     own search_path; the functions it calls in turn), and refused if it
 *     reads a relation of the inheritance trees (inheritance.c) of the
 *     relations the statement reads; a built-in function that reads
 *     relations or their statistics by name (table_to_xml, query_to_xml,
 *     ts_stat, pg_stat_get_*) is refused; and on the rows' path (the
 *     level of the DP aggregates, its WHERE, GROUP BY keys and the
 *     arguments of its DP aggregates, and every level below) a function in
 *     another language that is not IMMUTABLE is refused: dp_agg cannot
 *     see into it, and IMMUTABLE promises that it reads no table.  Above
 *     the rows' path (post-processing of the releases) such functions are
 *     allowed, and watched at execution:
 *
 *   - at execution (dp_side_reads_register, _enter, _leave), the
 *     property itself: while a DP statement is planned (the planner
 *     evaluates IMMUTABLE functions of constants) and while it runs
 *     (ExecutorRun), no other statement of its process (one a function
 *     runs, a cursor fetched, COPY) reads a relation of the inheritance
 *     trees it reads.  This catches
 *     what the planning check cannot see (an IMMUTABLE function that reads
 *     tables nevertheless, a function that runs dynamic SQL) after the
 *     charge: the statement fails and releases nothing.  Parallel workers
 *     watch their own part.
 *
 * Relations of other trees may be read: their rows are not the input of
 * the releases.  What reads rows without the executor (another connection
 * through dblink, pageinspect) is not seen; grant such functions to
 * trusted roles only (doc/guard.md, "Protected tables").
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/transam.h"
#include "catalog/namespace.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "executor/functions.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteHandler.h"
#include "tcop/tcopprot.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "catalog.h"
#include "dp_calls.h"
#include "compat.h"
#include "guard.h"
#include "inheritance.h"
#include "protect_stats.h"
#include "side_reads.h"

/* how deep SQL functions calling SQL functions are seen into */
#define MAX_BODY_DEPTH 16

#define HINT_SEPARATE "Compute its value in a statement of its own (with DP aggregates if it depends on the rows) and pass it as a constant or a parameter; see \"What the guard accepts\" in dp_agg's doc/guard.md."

/* built-in functions that read relations named by their arguments */
static const Oid relation_readers[] = {
	F_TABLE_TO_XML, F_TABLE_TO_XMLSCHEMA, F_TABLE_TO_XML_AND_XMLSCHEMA,
	F_QUERY_TO_XML, F_QUERY_TO_XMLSCHEMA, F_QUERY_TO_XML_AND_XMLSCHEMA,
	F_CURSOR_TO_XML, F_CURSOR_TO_XMLSCHEMA,
	F_SCHEMA_TO_XML, F_SCHEMA_TO_XMLSCHEMA, F_SCHEMA_TO_XML_AND_XMLSCHEMA,
	F_DATABASE_TO_XML, F_DATABASE_TO_XMLSCHEMA, F_DATABASE_TO_XML_AND_XMLSCHEMA,
	F_TS_STAT_TEXT, F_TS_STAT_TEXT_TEXT,
};

/* ---------- the relations a statement reads ---------- */

/* the roots of the inheritance trees of the relations read, a new list */
static List *
add_roots(List *roots, Oid relid)
{
	ListCell   *lc;

	foreach(lc, dp_relation_roots(relid))
		roots = list_append_unique_oid(roots, lfirst_oid(lc));
	return roots;
}

/* a relation of these trees, or InvalidOid */
static Oid
shares_tree(List *roots, Oid relid)
{
	ListCell   *lc;

	foreach(lc, dp_relation_roots(relid))
	{
		if (list_member_oid(roots, lfirst_oid(lc)))
			return relid;
	}
	return InvalidOid;
}

typedef struct RelationsRead
{
	List	   *relids;
	RangeTblEntry *target;		/* an INSERT's: written, not read */
} RelationsRead;

static bool
relations_walker(Node *node, RelationsRead *rr)
{
	if (node == NULL)
		return false;
	if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;

		if (rte->rtekind == RTE_RELATION && rte != rr->target)
			rr->relids = list_append_unique_oid(rr->relids, rte->relid);
		return false;
	}
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, relations_walker, rr, QTW_EXAMINE_RTES_BEFORE);
	return expression_tree_walker(node, relations_walker, rr);
}

/* the relations a query reads, at every level */
static List *
relations_read(Query *q)
{
	RelationsRead rr = {NIL, NULL};

	if (q->commandType == CMD_INSERT && q->resultRelation > 0)
		rr.target = rt_fetch(q->resultRelation, q->rtable);
	(void) relations_walker((Node *) q, &rr);
	return rr.relids;
}

/* ---------- functions, at planning ---------- */

typedef struct SideContext
{
	List	   *roots;			/* of the relations the statement reads */
	bool		rows;			/* the expression is on the rows' path */
	Oid			called;			/* the function the statement calls */
	List	   *seen;			/* SQL functions being seen into */
} SideContext;

static void check_function(Oid funcid, Node *call, SideContext *ctx);
static void check_query(Query *q, SideContext *ctx, bool rows);
static bool expr_walker(Node *node, SideContext *ctx);

/* a function's name in messages (pg_temp, not pg_temp_N) */
static char *
function_name(Oid funcid)
{
	char	   *name = format_procedure(funcid);
	char	   *dot = strchr(name, '.');

	if (dot != NULL && isTempNamespace(get_func_namespace(funcid)))
		return psprintf("pg_temp%s", dot);
	return name;
}

static void
reject_reader(SideContext *ctx, Oid funcid, Oid relid)
{
	Oid			called = OidIsValid(ctx->called) ? ctx->called : funcid;

	if (called != funcid)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("function %s is not allowed in a statement with DP aggregates",
						function_name(called)),
				 errdetail("Through function %s, it reads relation \"%s\", whose rows feed the statement's DP aggregates: its value would depend on other rows than each row's own, which the noise does not hide.",
						   function_name(funcid), get_rel_name(relid)),
				 errhint(HINT_SEPARATE)));
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("function %s is not allowed in a statement with DP aggregates",
					function_name(called)),
			 errdetail("It reads relation \"%s\", whose rows feed the statement's DP aggregates: its value would depend on other rows than each row's own, which the noise does not hide.",
					   get_rel_name(relid)),
			 errhint(HINT_SEPARATE)));
}

/* check_functions_in_node's callback */
static bool
function_found(Oid funcid, void *context)
{
	check_function(funcid, NULL, (SideContext *) context);
	return false;
}

/* the functions a node calls (operators' too), with the call for SQL ones */
static void
check_node_functions(Node *node, SideContext *ctx)
{
	switch (nodeTag(node))
	{
		case T_FuncExpr:
			check_function(((FuncExpr *) node)->funcid, node, ctx);
			break;
		case T_OpExpr:
		case T_DistinctExpr:
		case T_NullIfExpr:
			set_opfuncid((OpExpr *) node);
			check_function(((OpExpr *) node)->opfuncid, node, ctx);
			break;
		default:
			(void) check_functions_in_node(node, function_found, ctx);
			break;
	}
}

/*
 * The queries of a SQL function's body, analyzed and rewritten as
 * fmgr_sql would (views expanded), with the function's own search_path
 * (SET clause) in force; NIL if its arguments are
 * polymorphic and there is no call to resolve them.
 */
static List *
sql_body(HeapTuple tup, Oid funcid, Node *call)
{
	Form_pg_proc proc = (Form_pg_proc) GETSTRUCT(tup);
	List	   *queries = NIL;
	Datum		d;
	bool		isnull;
	int			nestlevel = -1;
	ArrayType  *config;

	for (int i = 0; i < proc->pronargs; i++)
	{
		if (IsPolymorphicType(proc->proargtypes.values[i]) && call == NULL)
			return NIL;
	}
	/* its search_path (SET clause), which resolves the names of its body */
	d = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_proconfig, &isnull);
	config = isnull ? NULL : DatumGetArrayTypeP(d);
	if (config != NULL)
	{
		Datum	   *items;
		int			nitems;

		nestlevel = NewGUCNestLevel();
		deconstruct_array(config, TEXTOID, -1, false, TYPALIGN_INT, &items, NULL, &nitems);
		for (int i = 0; i < nitems; i++)
		{
			char	   *name;
			char	   *value;

			ParseLongOption(TextDatumGetCString(items[i]), &name, &value);
			if (value != NULL && strcmp(name, "search_path") == 0)
				(void) set_config_option(name, value, PGC_USERSET, PGC_S_SESSION,
										 GUC_ACTION_SAVE, true, 0, false);
		}
	}
	d = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosqlbody, &isnull);
	if (!isnull)
	{
		/* BEGIN ATOMIC: stored analyzed */
		Node	   *n = stringToNode(TextDatumGetCString(d));
		List	   *stored = IsA(n, List) ? linitial_node(List, castNode(List, n)) : list_make1(n);
		ListCell   *lc;

		foreach(lc, stored)
		{
			Query	   *q = copyObject(lfirst_node(Query, lc));

			AcquireRewriteLocks(q, true, false);
			queries = list_concat(queries, pg_rewrite_query(q));
		}
	}
	else
	{
		char	   *src;
		SQLFunctionParseInfoPtr pinfo;
		ListCell   *lc;

		d = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosrc, &isnull);
		if (isnull)
			elog(ERROR, "dp_agg: null prosrc for function %u", funcid);
		src = TextDatumGetCString(d);
		pinfo = prepare_sql_fn_parse_info(tup, call, InvalidOid);
		foreach(lc, pg_parse_query(src))
			queries = list_concat(queries,
								  pg_analyze_and_rewrite_withcb(lfirst_node(RawStmt, lc), src,
																(ParserSetupHook) sql_fn_parser_setup,
																pinfo, NULL));
	}
	if (config != NULL)
		AtEOXact_GUC(true, nestlevel);
	return queries;
}

/* a SQL function: what its body reads, and the functions it calls */
static void
check_sql_function(HeapTuple tup, Oid funcid, Node *call, SideContext *ctx)
{
	List	   *queries;
	ListCell   *lc;

	if (list_member_oid(ctx->seen, funcid))
		return;					/* recursion: seen into already */
	if (list_length(ctx->seen) >= MAX_BODY_DEPTH)
		queries = NIL;
	else
		queries = sql_body(tup, funcid, call);
	if (queries == NIL)
	{
		/* nothing seen: as a function in another language */
		if (ctx->rows && func_volatile(funcid) != PROVOLATILE_IMMUTABLE)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("function %s is not allowed on the rows of a statement with DP aggregates",
							function_name(OidIsValid(ctx->called) ? ctx->called : funcid)),
					 errdetail("dp_agg cannot see into SQL function %s (polymorphic arguments, or nested too deep), which is not IMMUTABLE: it could read the rows that feed the DP aggregates.",
							   function_name(funcid)),
					 errhint(HINT_SEPARATE)));
		return;
	}
	ctx->seen = lappend_oid(ctx->seen, funcid);
	foreach(lc, queries)
	{
		Query	   *q = lfirst_node(Query, lc);
		ListCell   *rc;

		if (q->commandType == CMD_UTILITY)
		{
			if (ctx->rows)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("function %s is not allowed on the rows of a statement with DP aggregates",
								function_name(OidIsValid(ctx->called) ? ctx->called : funcid)),
						 errdetail("SQL function %s runs a utility statement, which dp_agg cannot see into.",
								   function_name(funcid)),
						 errhint(HINT_SEPARATE)));
			continue;
		}
		foreach(rc, relations_read(q))
		{
			Oid			relid = shares_tree(ctx->roots, lfirst_oid(rc));

			if (OidIsValid(relid))
				reject_reader(ctx, funcid, relid);
		}
		check_query(q, ctx, ctx->rows);
	}
	ctx->seen = list_delete_last(ctx->seen);
}

/* an aggregate's support functions, as if called here */
static void
check_aggregate(Oid aggfnoid, SideContext *ctx)
{
	HeapTuple	tup = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggfnoid));
	Form_pg_aggregate agg;
	Oid			support[8];

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "dp_agg: cache lookup failed for aggregate %u", aggfnoid);
	agg = (Form_pg_aggregate) GETSTRUCT(tup);
	support[0] = agg->aggtransfn;
	support[1] = agg->aggfinalfn;
	support[2] = agg->aggcombinefn;
	support[3] = agg->aggserialfn;
	support[4] = agg->aggdeserialfn;
	support[5] = agg->aggmtransfn;
	support[6] = agg->aggminvtransfn;
	support[7] = agg->aggmfinalfn;
	ReleaseSysCache(tup);
	for (size_t i = 0; i < lengthof(support); i++)
	{
		if (OidIsValid(support[i]))
			check_function(support[i], NULL, ctx);
	}
}

static void
check_function(Oid funcid, Node *call, SideContext *ctx)
{
	HeapTuple	tup;
	Form_pg_proc proc;
	bool		top = !OidIsValid(ctx->called);

	if (funcid < FirstNormalObjectId)
	{
		for (size_t i = 0; i < lengthof(relation_readers); i++)
			if (relation_readers[i] == funcid)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("function %s is not allowed in a statement with DP aggregates",
								function_name(top ? funcid : ctx->called)),
						 errdetail("Function %s reads the relations its arguments name: its value could depend on the rows that feed the DP aggregates.",
								   function_name(funcid)),
						 errhint(HINT_SEPARATE)));
		if (dp_stats_function(funcid))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("function %s is not allowed in a statement with DP aggregates",
							function_name(top ? funcid : ctx->called)),
					 errdetail("Function %s counts rows of relations in their statistics: its value could depend on the rows that feed the DP aggregates.",
							   function_name(funcid)),
					 errhint(HINT_SEPARATE)));
		return;
	}
	/*
	 * the extension's own functions read no relation of the statement: its
	 * members, in schema dp_agg or dp_agg_internal
	 */
	if (dp_lookup_call(funcid) != NULL || dp_extension_member(funcid))
		return;
	if (dp_stats_function(funcid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("function %s is not allowed in a statement with DP aggregates",
						function_name(top ? funcid : ctx->called)),
				 errdetail("Function %s counts rows of relations in their statistics: its value could depend on the rows that feed the DP aggregates.",
						   function_name(funcid)),
				 errhint(HINT_SEPARATE)));

	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "dp_agg: cache lookup failed for function %u", funcid);
	proc = (Form_pg_proc) GETSTRUCT(tup);
	if (top)
		ctx->called = funcid;
	if (proc->prokind == PROKIND_AGGREGATE || proc->prokind == PROKIND_WINDOW)
	{
		if (proc->prokind == PROKIND_AGGREGATE)
			check_aggregate(funcid, ctx);
		else if (ctx->rows && proc->provolatile != PROVOLATILE_IMMUTABLE)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("function %s is not allowed on the rows of a statement with DP aggregates",
							function_name(ctx->called)),
					 errdetail("dp_agg cannot see into window function %s, which is not IMMUTABLE: it could read the rows that feed the DP aggregates.",
							   function_name(funcid)),
					 errhint(HINT_SEPARATE)));
	}
	else if (proc->prolang == SQLlanguageId)
		check_sql_function(tup, funcid, call, ctx);
	else if (ctx->rows && proc->provolatile != PROVOLATILE_IMMUTABLE)
	{
		char	   *language = get_language_name(proc->prolang, true);

		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("function %s is not allowed on the rows of a statement with DP aggregates",
						function_name(ctx->called)),
				 errdetail("Function %s is written in %s and is not IMMUTABLE: dp_agg cannot see whether it reads the rows that feed the DP aggregates, which would make a release depend on other rows than its own.",
						   function_name(funcid), language ? language : "another language"),
				 errhint("Write it in SQL, declare it IMMUTABLE if it reads no table, or compute its value in a statement of its own and pass it as a constant or a parameter.")));
	}
	ReleaseSysCache(tup);
	if (top)
		ctx->called = InvalidOid;
}

/* The constraints of a domain run on each value cast to it. */
static void
check_domain(Oid domain, SideContext *ctx)
{
	/* the reference's release is a callback of its context: a context of its own */
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "dp_agg domain",
											  ALLOCSET_SMALL_SIZES);
	DomainConstraintRef *ref = MemoryContextAlloc(cxt, sizeof(DomainConstraintRef));
	ListCell   *lc;

	InitDomainConstraintRef(domain, ref, cxt, false);
	foreach(lc, ref->constraints)
		(void) expr_walker((Node *) ((DomainConstraintState *) lfirst(lc))->check_expr, ctx);
	MemoryContextDelete(cxt);
}

/* the node itself (not its children): its functions, a domain's checks */
static void
check_node(Node *node, SideContext *ctx)
{
	if (IsA(node, CoerceToDomain))
		check_domain(((CoerceToDomain *) node)->resulttype, ctx);
	check_node_functions(node, ctx);
}

static bool
expr_walker(Node *node, SideContext *ctx)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query))
	{
		check_query((Query *) node, ctx, ctx->rows);
		return false;
	}
	check_node(node, ctx);
	return expression_tree_walker(node, expr_walker, ctx);
}

static void
walk_mode(Node *node, SideContext *ctx, bool rows)
{
	bool		saved = ctx->rows;

	ctx->rows = rows;
	(void) expr_walker(node, ctx);
	ctx->rows = saved;
}

/* the operators of ORDER BY, GROUP BY and DISTINCT */
static void
check_sort_group(List *clauses, SideContext *ctx, bool rows)
{
	ListCell   *lc;
	bool		saved = ctx->rows;

	ctx->rows = rows;
	foreach(lc, clauses)
	{
		SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);

		if (OidIsValid(sgc->eqop))
			check_function(get_opcode(sgc->eqop), NULL, ctx);
		if (OidIsValid(sgc->sortop))
			check_function(get_opcode(sgc->sortop), NULL, ctx);
	}
	ctx->rows = saved;
}

/*
 * The output and HAVING of the level of the DP aggregates: the arguments
 * and FILTER of the DP aggregates, and the GROUP BY keys, are on the rows'
 * path; the rest is computed from the releases.
 */
typedef struct DpLevel
{
	SideContext *ctx;
	Query	   *q;
} DpLevel;

static bool
dp_level_walker(Node *node, DpLevel *dl)
{
	bool		saved = dl->ctx->rows;

	if (node == NULL)
		return false;
	if (dp_is_call(node) && ((Aggref *) node)->agglevelsup == 0)
	{
		walk_mode((Node *) ((Aggref *) node)->args, dl->ctx, true);
		walk_mode((Node *) ((Aggref *) node)->aggfilter, dl->ctx, true);
		return false;
	}
	if (IsA(node, TargetEntry) && ((TargetEntry *) node)->ressortgroupref != 0 &&
		get_sortgroupref_clause_noerr(((TargetEntry *) node)->ressortgroupref,
									  dl->q->groupClause) != NULL)
	{
		walk_mode(node, dl->ctx, true);
		return false;
	}
	if (IsA(node, Query))
	{
		walk_mode(node, dl->ctx, false);
		return false;
	}
	dl->ctx->rows = false;
	check_node(node, dl->ctx);
	dl->ctx->rows = saved;
	return expression_tree_walker(node, dp_level_walker, dl);
}

/*
 * One query level.  rows: it is below the level of the DP aggregates (a
 * row source, a CTE it reads), or in a function's body on the rows' path;
 * else it is that level or one above it, where only what feeds the DP
 * aggregates is on the rows' path.
 */
static void
check_query(Query *q, SideContext *ctx, bool rows)
{
	bool		dp_here = !rows && dp_level_has_calls(q);
	bool		below = rows || dp_here;	/* its FROM is on the rows' path */
	ListCell   *lc;

	foreach(lc, q->cteList)
	{
		Query	   *cq = castNode(Query, lfirst_node(CommonTableExpr, lc)->ctequery);

		check_query(cq, ctx, below || !dp_tree_has_calls(cq, false));
	}
	foreach(lc, q->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		switch (rte->rtekind)
		{
			case RTE_SUBQUERY:
				check_query(rte->subquery, ctx,
							below || !dp_tree_has_calls(rte->subquery, false));
				break;
			case RTE_RELATION:
				walk_mode((Node *) rte->tablesample, ctx, below);
				break;
			case RTE_FUNCTION:
				walk_mode((Node *) rte->functions, ctx, below);
				break;
			case RTE_VALUES:
				walk_mode((Node *) rte->values_lists, ctx, below);
				break;
			case RTE_TABLEFUNC:
				walk_mode((Node *) rte->tablefunc, ctx, below);
				break;
#ifdef DP_HAVE_RTE_GROUP
			case RTE_GROUP:
				/* the GROUP BY expressions, evaluated on the rows */
				walk_mode((Node *) rte->groupexprs, ctx, below);
				break;
#endif
			default:
				break;
		}
		/* row-level security policies filter the rows */
		walk_mode((Node *) rte->securityQuals, ctx, below);
	}
	walk_mode((Node *) q->jointree, ctx, below);
	if (rows)
	{
		walk_mode((Node *) q->targetList, ctx, true);
		walk_mode(q->havingQual, ctx, true);
		check_sort_group(q->groupClause, ctx, true);
	}
	else if (dp_here)
	{
		DpLevel		dl = {ctx, q};

		(void) dp_level_walker((Node *) q->targetList, &dl);
		(void) dp_level_walker(q->havingQual, &dl);
		check_sort_group(q->groupClause, ctx, true);
	}
	else
	{
		walk_mode((Node *) q->targetList, ctx, false);
		walk_mode(q->havingQual, ctx, false);
		check_sort_group(q->groupClause, ctx, false);
	}
	check_sort_group(q->sortClause, ctx, rows);
	check_sort_group(q->distinctClause, ctx, rows);
	walk_mode(q->limitOffset, ctx, rows);
	walk_mode(q->limitCount, ctx, rows);
	walk_mode((Node *) q->returningList, ctx, false);
	walk_mode((Node *) q->onConflict, ctx, false);
}

/*
 * At planning, before the charge: refuse a DP statement (one the guard
 * accepted) whose functions read, or may read, the rows that feed its DP
 * aggregates (see the file's comment).
 */
void
dp_side_reads_check_query(Query *query)
{
	SideContext ctx = {NIL, false, InvalidOid, NIL};
	ListCell   *lc;

	if (query->commandType == CMD_UTILITY || !dp_query_has_dp(query))
		return;
	foreach(lc, relations_read(query))
		ctx.roots = add_roots(ctx.roots, lfirst_oid(lc));
	check_query(query, &ctx, false);
}

/* ---------- nested statements, at execution ---------- */

/* a DP statement being executed */
typedef struct DpRun
{
	EState	   *estate;			/* NULL while it is planned */
	List	   *relids;			/* the relations it reads */
	List	   *roots;			/* their trees' roots, when first needed */
	bool		roots_known;
	int			running;		/* inside its ExecutorRun */
	struct DpRun *next;
	MemoryContextCallback callback;
} DpRun;

static DpRun *runs = NULL;
static int	running_runs = 0;

static void
forget_run(void *arg)
{
	DpRun	  **p;

	for (p = &runs; *p != NULL; p = &(*p)->next)
	{
		if (*p == arg)
		{
			running_runs -= (*p)->running;
			*p = (*p)->next;
			return;
		}
	}
}

/* the relations a plan reads (not the targets of its modifications) */
static List *
plan_relations(PlannedStmt *stmt)
{
	List	   *relids = NIL;
	ListCell   *lc;
	Index		rti = 0;

	foreach(lc, stmt->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		rti++;
		if (rte->rtekind != RTE_RELATION ||
			list_member_int(stmt->resultRelations, (int) rti))
			continue;
		relids = list_append_unique_oid(relids, rte->relid);
	}
	return relids;
}

/*
 * At a DP statement's executor start (leader and parallel workers):
 * remember what it reads, for as long as its executor state lives.
 */
void
dp_side_reads_register(QueryDesc *queryDesc)
{
	EState	   *estate = queryDesc->estate;
	MemoryContext old = MemoryContextSwitchTo(estate->es_query_cxt);
	DpRun	   *run = palloc0(sizeof(DpRun));

	run->estate = estate;
	run->relids = plan_relations(queryDesc->plannedstmt);
	run->callback.func = forget_run;
	run->callback.arg = run;
	MemoryContextRegisterResetCallback(estate->es_query_cxt, &run->callback);
	MemoryContextSwitchTo(old);
	run->next = runs;
	runs = run;
}

/* a statement of this process reads relid: not while a DP one reads its tree */
static void
check_nested(Oid relid, DpRun *mine)
{
	for (DpRun *run = runs; run != NULL; run = run->next)
	{
		if (run == mine || run->running == 0)
			continue;
		if (!run->roots_known)
		{
			MemoryContext old = MemoryContextSwitchTo(GetMemoryChunkContext(run));
			ListCell   *lc;

			foreach(lc, run->relids)
				run->roots = add_roots(run->roots, lfirst_oid(lc));
			run->roots_known = true;
			MemoryContextSwitchTo(old);
		}
		if (OidIsValid(shares_tree(run->roots, relid)))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("a statement run inside a statement with DP aggregates may not read relation \"%s\"",
							get_rel_name(relid)),
					 errdetail("Its rows feed the DP aggregates of the statement around it, whose releases would depend on other rows than their own."),
					 errhint(HINT_SEPARATE)));
	}
}

/*
 * Before a statement runs (ExecutorRun, also each fetch of a cursor):
 * refuse it if a DP statement of this process is running and it reads a
 * relation of the trees that one reads; then mark it running if it is a
 * DP statement.  Returns what dp_side_reads_leave takes.
 */
void *
dp_side_reads_enter(QueryDesc *queryDesc)
{
	DpRun	   *mine = NULL;
	DpRun	   *run;

	for (run = runs; run != NULL; run = run->next)
	{
		if (run->estate == queryDesc->estate)
			mine = run;
	}
	if (running_runs > 0)
	{
		ListCell   *lc;

		foreach(lc, mine != NULL ? mine->relids : plan_relations(queryDesc->plannedstmt))
			check_nested(lfirst_oid(lc), mine);
	}
	if (mine != NULL)
	{
		mine->running++;
		running_runs++;
	}
	return mine;
}

/*
 * The permission check of a range table (every statement's, COPY's too):
 * while a DP statement runs, no relation of its trees.
 */
void
dp_side_reads_check_rtable(List *rtable)
{
	ListCell   *lc;

	if (running_runs == 0)
		return;
	foreach(lc, rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		if (rte->rtekind == RTE_RELATION)
			check_nested(rte->relid, NULL);
	}
}

/*
 * While a DP statement is planned: the planner evaluates IMMUTABLE
 * functions of constants (and so the statements they run) once, before
 * any row is read; they must not read the statement's trees either.
 * Returns what dp_side_reads_plan_end takes (NULL for other statements).
 */
void *
dp_side_reads_plan_begin(Query *query)
{
	DpRun	   *run;

	if (query->commandType == CMD_UTILITY || !dp_query_has_dp(query))
		return NULL;
	run = palloc0(sizeof(DpRun));
	run->relids = relations_read(query);
	run->running = 1;
	run->next = runs;
	runs = run;
	running_runs++;
	return run;
}

/* After planning, also on error. */
void
dp_side_reads_plan_end(void *token)
{
	if (token != NULL)
		forget_run(token);
}

/* After ExecutorRun, also on error. */
void
dp_side_reads_leave(void *token)
{
	DpRun	   *run;

	/* the run may have been forgotten with its executor state */
	for (run = runs; run != NULL; run = run->next)
	{
		if (run == token && run->running > 0)
		{
			run->running--;
			running_runs--;
			return;
		}
	}
}
