/*-------------------------------------------------------------------------
 *
 * domain_catalog.c
 *	  Public domains declared by a DBA: the catalog dp_agg.public_domain.
 *
 * doc/units-and-groups.md, "Public group keys".  dp_agg.set_public_domain
 * declares the keys a column (or an expression of the columns) of a relation
 * can take: a DP statement grouping that relation's rows by it releases every
 * key, and drops the rows whose key is not declared (public_domain.c).  A row
 * of the catalog holds the relation, the key expression as written, the key's
 * type and the keys as text, written and read under fixed settings (ISO
 * dates, UTC, the postgres interval style: dp_domain_settings_enter) so
 * that a key reads back as the value that was declared, whatever the
 * session's settings.  The key expression is parsed again, over the
 * columns of the relation a statement reads, with the search_path
 * pg_catalog, pg_temp: a declaration names the functions it uses
 * schema-qualified, and an analyst's function of the same name is another
 * function, whose expression the declaration does not match.
 *
 * A declaration applies to the rows of the relation and of its partitions
 * and inheritance children (inheritance.c); the key expression is parsed
 * over the columns of the relation read, by name.  One that no longer
 * parses (a column renamed or dropped, its type changed) applies to
 * nothing: the keys of such a GROUP BY are then selected privately.
 *
 * The catalog is read once into a per-session cache, dropped (with every
 * cached plan) when its trigger says it changed (domain_api.c), as for
 * privacy units (unit_catalog.c).  The keys a plan releases are copied into
 * it when it is made: a declaration changed between planning and execution
 * changes no plan that already runs, and plans made afterwards use the new
 * keys.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parse_collate.h"
#include "parser/parse_expr.h"
#include "parser/parse_relation.h"
#include "parser/parser.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/plancache.h"
#include "utils/rel.h"

#include "domain_catalog.h"
#include "inheritance.h"
#include "relcache_watch.h"

/* columns of dp_agg.public_domain */
#define ANUM_DOMAIN_RELATION 1
#define ANUM_DOMAIN_KEY 2
#define ANUM_DOMAIN_KEY_TYPE 3
#define ANUM_DOMAIN_KEYS 4

/* one row of the catalog */
typedef struct Declaration
{
	Oid			relid;
	char	   *key;
	Oid			type;
	int			nkeys;
	char	  **keys;			/* NULL for a NULL key */
} Declaration;

static MemoryContext domain_cxt = NULL;
static List *declarations = NIL;	/* Declaration * */
static bool cache_valid = false;
static Oid	domain_catalog = InvalidOid;

static void
invalidate_domains(Oid relid)
{
	if (!OidIsValid(domain_catalog))
		cache_valid = false;
	else if (!OidIsValid(relid) || relid == domain_catalog)
	{
		cache_valid = false;
		ResetPlanCache();
	}
}

void
dp_domain_catalog_init(void)
{
	dp_relcache_watch(invalidate_domains);
}

static void
build_cache(void)
{
	Oid			nsp = get_namespace_oid("dp_agg", true);
	bool		had_catalog = OidIsValid(domain_catalog);
	MemoryContext oldcxt;

	if (domain_cxt == NULL)
		domain_cxt = AllocSetContextCreate(TopMemoryContext, "dp_agg public domains",
										   ALLOCSET_SMALL_SIZES);
	MemoryContextReset(domain_cxt);
	declarations = NIL;
	domain_catalog = OidIsValid(nsp) ? get_relname_relid("public_domain", nsp) : InvalidOid;
	cache_valid = true;
	if (!OidIsValid(domain_catalog))
		return;
	{
		Relation	rel = table_open(domain_catalog, AccessShareLock);
		TupleDesc	desc = RelationGetDescr(rel);
		SysScanDesc scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
		HeapTuple	tup;

		oldcxt = MemoryContextSwitchTo(domain_cxt);
		while (HeapTupleIsValid(tup = systable_getnext(scan)))
		{
			Declaration *d = palloc0(sizeof(Declaration));
			bool		isnull;
			Datum		keys;
			Datum	   *elems;
			bool	   *nulls;

			d->relid = DatumGetObjectId(heap_getattr(tup, ANUM_DOMAIN_RELATION, desc, &isnull));
			d->key = TextDatumGetCString(heap_getattr(tup, ANUM_DOMAIN_KEY, desc, &isnull));
			d->type = DatumGetObjectId(heap_getattr(tup, ANUM_DOMAIN_KEY_TYPE, desc, &isnull));
			keys = heap_getattr(tup, ANUM_DOMAIN_KEYS, desc, &isnull);
			if (isnull)
				continue;
			deconstruct_array(DatumGetArrayTypeP(keys), TEXTOID, -1, false, TYPALIGN_INT,
							  &elems, &nulls, &d->nkeys);
			d->keys = palloc(sizeof(char *) * Max(d->nkeys, 1));
			for (int i = 0; i < d->nkeys; i++)
				d->keys[i] = nulls[i] ? NULL : TextDatumGetCString(elems[i]);
			declarations = lappend(declarations, d);
		}
		MemoryContextSwitchTo(oldcxt);
		systable_endscan(scan);
		table_close(rel, AccessShareLock);
	}
	if (!had_catalog)
		ResetPlanCache();
}

static void
ensure_cache(void)
{
	while (!cache_valid)
		build_cache();
}

/* Has any relation of the database a declared public domain? */
bool
dp_any_declared_domain(void)
{
	ensure_cache();
	return declarations != NIL;
}

/*
 * The fixed settings under which keys are written and read as text, until
 * dp_domain_settings_leave(level).
 */
int
dp_domain_settings_enter(void)
{
	int			level = NewGUCNestLevel();

	(void) set_config_option("datestyle", "ISO, YMD", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("intervalstyle", "postgres", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("timezone", "UTC", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("extra_float_digits", "3", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("bytea_output", "hex", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	return level;
}

void
dp_domain_settings_leave(int level)
{
	AtEOXact_GUC(true, level);
}

/* does every column a raw key expression names exist in relid? */
static bool
columns_exist_walker(Node *node, Oid *relid)
{
	if (node == NULL)
		return false;
	if (IsA(node, ColumnRef))
	{
		ColumnRef  *cr = (ColumnRef *) node;
		Node	   *last = llast(cr->fields);

		if (list_length(cr->fields) != 1 || !IsA(last, String))
			return true;
		return get_attnum(*relid, strVal(last)) == InvalidAttrNumber;
	}
	return raw_expression_tree_walker(node, columns_exist_walker, relid);
}

/*
 * A key expression over the columns of relid (Vars of varno 1): one
 * expression, no sub-query, aggregate or set-returning function, under the
 * fixed settings; NULL if it does not parse.  With errors on, a key that
 * does not parse is an error (dp_agg.set_public_domain).
 */
static Node *
parse_key(Oid relid, const char *key, bool errors)
{
	List	   *raw;
	SelectStmt *sel;
	ResTarget  *rt;
	ParseState *pstate;
	Relation	rel;
	ParseNamespaceItem *nsitem;
	Node	   *expr;

	raw = raw_parser(psprintf("SELECT %s", key), RAW_PARSE_DEFAULT);
	if (list_length(raw) != 1 || !IsA(linitial_node(RawStmt, raw)->stmt, SelectStmt))
		goto bad;
	sel = (SelectStmt *) linitial_node(RawStmt, raw)->stmt;
	if (list_length(sel->targetList) != 1 || sel->fromClause != NIL || sel->whereClause != NULL ||
		sel->groupClause != NIL || sel->havingClause != NULL || sel->windowClause != NIL ||
		sel->valuesLists != NIL || sel->sortClause != NIL || sel->limitCount != NULL ||
		sel->limitOffset != NULL || sel->lockingClause != NIL || sel->withClause != NULL ||
		sel->op != SETOP_NONE || sel->distinctClause != NIL || sel->intoClause != NULL)
		goto bad;
	rt = linitial_node(ResTarget, sel->targetList);
	if (rt->name != NULL)
		goto bad;
	if (columns_exist_walker(rt->val, &relid))
	{
		if (errors)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("the key of a public domain names a column that relation \"%s\" does not have",
							get_rel_name(relid)),
					 errdetail("The key is \"%s\".", key),
					 errhint("Name the columns of the relation, without qualifying them.")));
		return NULL;
	}
	pstate = make_parsestate(NULL);
	rel = relation_open(relid, AccessShareLock);
	nsitem = addRangeTableEntryForRelation(pstate, rel, AccessShareLock, NULL, false, false);
	addNSItemToQuery(pstate, nsitem, false, true, true);
	expr = transformExpr(pstate, rt->val, EXPR_KIND_INDEX_EXPRESSION);
	assign_expr_collations(pstate, expr);
	relation_close(rel, AccessShareLock);
	free_parsestate(pstate);
	if (contain_mutable_functions(expr))
	{
		if (errors)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("the key of a public domain must be immutable"),
					 errdetail("Key \"%s\" of relation \"%s\" calls a function that is not immutable.",
							   key, get_rel_name(relid))));
		return NULL;
	}
	return expr;

bad:
	if (errors)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the key of a public domain must be one expression of the relation's columns"),
				 errdetail("The key is \"%s\".", key),
				 errhint("Write a column name, or an expression of the columns such as lower(department).")));
	return NULL;
}

/*
 * The key expression key over the columns of relid, under the fixed
 * settings; errors while parsing it are raised (dp_agg.set_public_domain).
 */
Node *
dp_domain_parse_key(Oid relid, const char *key)
{
	int			level = dp_domain_settings_enter();
	Node	   *expr = parse_key(relid, key, true);

	dp_domain_settings_leave(level);
	return expr;
}

/*
 * The declared domains that apply to the rows read from relid: those of
 * relid and of its ancestors, each key expression parsed over relid's
 * columns, its keys as constants.  A declaration that does not parse, or
 * whose key no longer has the declared type, applies to nothing.
 */
List *
dp_declared_domains(Oid relid)
{
	List	   *rels;
	List	   *result = NIL;
	ListCell   *lc;
	int			level;

	if (!dp_any_declared_domain())
		return NIL;
	rels = lcons_oid(relid, dp_relation_ancestors(relid, false));
	level = dp_domain_settings_enter();
	foreach(lc, declarations)
	{
		Declaration *d = lfirst(lc);
		DpDeclaredDomain *dd;
		Node	   *expr;
		Oid			input;
		Oid			ioparam;
		int16		typlen;
		bool		typbyval;

		if (!list_member_oid(rels, d->relid))
			continue;
		expr = parse_key(relid, d->key, false);
		if (expr == NULL || exprType(expr) != d->type)
			continue;
		dd = palloc0(sizeof(DpDeclaredDomain));
		dd->declared_on = d->relid;
		dd->key = pstrdup(d->key);
		dd->expr = expr;
		getTypeInputInfo(d->type, &input, &ioparam);
		get_typlenbyval(d->type, &typlen, &typbyval);
		for (int i = 0; i < d->nkeys; i++)
		{
			Datum		v = (Datum) 0;

			if (d->keys[i] != NULL)
				v = OidInputFunctionCall(input, d->keys[i], ioparam, exprTypmod(expr));
			dd->keys = lappend(dd->keys,
							   makeConst(d->type, exprTypmod(expr), exprCollation(expr), typlen,
										 v, d->keys[i] == NULL, typbyval));
		}
		result = lappend(result, dd);
	}
	dp_domain_settings_leave(level);
	return result;
}
