/*-------------------------------------------------------------------------
 *
 * protect.c
 *	  Protected relations: which are, who may read them, who is trusted.
 *
 * The catalogs dp_agg.protected and dp_agg.access are read once into a
 * per-session cache, which is dropped whenever either catalog changes: the
 * trigger dp_agg_internal.protect_changed sends a relcache invalidation of the
 * catalog at every change (protect_api.c), and a relcache callback here
 * receives it, in this session at the end of the command and in the other
 * sessions when the change commits.  A statement therefore costs a few
 * hash lookups per relation it names, never a catalog scan.
 *
 * Partitions are resolved when asked (pg_inherits, inheritance.c): a
 * partition is protected when it or an ancestor is, and a grant on an
 * ancestor covers it.  A plain inheritance child is protected on its own
 * (doc/guard.md, "Protected tables").  On a Citus cluster a relation is also
 * protected when it carries dp_agg's security label, and a shard when its
 * table is (dist_protect.c): that is how a worker knows.
 *
 * The allow-list dp_agg.allowed_function names functions by signature
 * (text such as 'pg_catalog.int4pl(integer,integer)'), not by OID: the
 * OIDs of functions are not kept by pg_upgrade, which refuses tables with
 * a regprocedure column.  An entry is resolved when first needed after a
 * change of the catalog or of pg_proc, under the fixed search_path
 * pg_catalog, pg_temp, whatever the session's: an analyst cannot make an
 * entry name another function.  An entry that names no function (dropped,
 * renamed, or gone in a new major version) allows nothing.  With the
 * catalog of versions before 0.4 (a regprocedure column) the OIDs are used
 * as they are.
 *
 * A role is trusted for a relation when it is a superuser or has the
 * privileges of the relation's owner, or of the owner of a partitioned
 * table it is a partition of (doc/guard.md, "Protected tables"): such a
 * role could read the rows anyway, by lifting the protection.  Every other
 * role is untrusted, whatever it was granted.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/plancache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "dist_protect.h"
#include "inheritance.h"
#include "protect.h"
#include "relcache_watch.h"

/* a row of dp_agg.access, the key of the grants cache */
typedef struct GrantKey
{
	Oid			relid;
	Oid			roleid;
} GrantKey;

static MemoryContext protect_cxt = NULL;
static HTAB *protected_rels = NULL;	/* Oid -> Oid: the protected relations */
static HTAB *grants = NULL;		/* GrantKey -> GrantKey */
static HTAB *allowed_functions = NULL;	/* Oid -> Oid: the entries resolved */
static List *allowed_entries = NIL;	/* the entries: signatures (char *) */
static List *allowed_oids = NIL;	/* or OIDs, with the catalog before 0.4 */
static bool cache_valid = false;
static bool allowed_valid = false;	/* allowed_functions is up to date */
static bool built_in_script = false;	/* built while an extension script ran */

/*
 * What every statement asks of each relation it names, cached per session:
 * is it a partition, has it children (relispartition, relhassubclass)?  An
 * entry is dropped when its relation's relcache entry is invalidated, as on
 * any change of these flags (ATTACH, DETACH, CREATE TABLE ... INHERITS).
 */
typedef struct RelationShape
{
	Oid			relid;
	bool		partition;
	bool		children;
} RelationShape;

static HTAB *shapes = NULL;
static RelationShape unknown_shape;	/* returned when not cached */
static Oid	protected_catalog = InvalidOid;
static Oid	access_catalog = InvalidOid;
static Oid	allowed_catalog = InvalidOid;

/*
 * A relation changed: drop the cache if it was one of the catalogs, or if
 * they were missing when it was built (the extension may just have been
 * created or updated).  Plans were checked for the protection in force
 * when they were made (protect_guard.c): when the catalogs change, they are
 * all made again (and when the catalogs appear, by build_cache).
 */
static void
invalidate_protected(Oid relid)
{
	if (shapes != NULL)
	{
		if (OidIsValid(relid))
			hash_search(shapes, &relid, HASH_REMOVE, NULL);
		else
		{
			hash_destroy(shapes);
			shapes = NULL;
		}
	}
	/* any relation may have got or lost dp_agg's security label */
	dp_dist_invalidate_labels();
	if (!OidIsValid(protected_catalog))
		cache_valid = false;
	else if (!OidIsValid(relid) || relid == protected_catalog ||
			 relid == access_catalog || relid == allowed_catalog)
	{
		cache_valid = false;
		ResetPlanCache();
	}
}

/*
 * A function was created, changed or dropped: the allow-list's signatures
 * may name other functions now (resolved again when next needed).  Plans
 * already checked are kept: a plan that used an entry stays valid while
 * that function exists, as it did when entries were OIDs.
 */
static void
invalidate_allowed(Datum arg, int cacheid, uint32 hashvalue)
{
	allowed_valid = false;
}

/*
 * Role memberships or attributes (superuser, inherit) changed: who is
 * trusted may have changed, and plans that depend on the role were made
 * for the trust of their role then (hooks.c).  While nothing is protected
 * (as far as this session knows without reading a catalog) no plan does.
 */
static void
invalidate_roles(Datum arg, int cacheid, uint32 hashvalue)
{
	if (cache_valid && protected_rels != NULL && hash_get_num_entries(protected_rels) == 0 &&
		!dp_dist_maybe_protected())
		return;
	ResetPlanCache();
}

void
dp_protect_init(void)
{
	dp_relcache_watch(invalidate_protected);
	CacheRegisterSyscacheCallback(AUTHMEMROLEMEM, invalidate_roles, (Datum) 0);
	CacheRegisterSyscacheCallback(AUTHOID, invalidate_roles, (Datum) 0);
	CacheRegisterSyscacheCallback(PROCOID, invalidate_allowed, (Datum) 0);
}

static HTAB *
new_set(const char *name, Size keysize)
{
	HASHCTL		ctl;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = keysize;
	ctl.entrysize = keysize;
	ctl.hcxt = protect_cxt;
	return hash_create(name, 16, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/*
 * Add the rows of one catalog to a set: the first column (regclass) of
 * dp_agg.protected, the first two (regclass, regrole) of dp_agg.access.
 */
static void
load_catalog(Oid catalog, HTAB *set, bool with_role)
{
	Relation	rel = table_open(catalog, AccessShareLock);
	SysScanDesc scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	HeapTuple	tup;

	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		GrantKey	key = {InvalidOid, InvalidOid};
		bool		isnull;

		key.relid = DatumGetObjectId(heap_getattr(tup, 1, RelationGetDescr(rel), &isnull));
		if (with_role)
			key.roleid = DatumGetObjectId(heap_getattr(tup, 2, RelationGetDescr(rel), &isnull));
		hash_search(set, &key, HASH_ENTER, NULL);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
}

/*
 * Read the entries of dp_agg.allowed_function (its first column): the
 * signatures, or the OIDs of a catalog from before version 0.4, whose
 * column was regprocedure.
 */
static void
load_allowed(Oid catalog)
{
	Relation	rel = table_open(catalog, AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);
	bool		by_oid = TupleDescAttr(desc, 0)->atttypid != TEXTOID;
	SysScanDesc scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	HeapTuple	tup;
	MemoryContext old = MemoryContextSwitchTo(protect_cxt);

	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, 1, desc, &isnull);

		if (isnull)
			continue;
		if (by_oid)
			allowed_oids = lappend_oid(allowed_oids, DatumGetObjectId(d));
		else
			allowed_entries = lappend(allowed_entries, TextDatumGetCString(d));
	}
	MemoryContextSwitchTo(old);
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
}

/* the allow-list entry being resolved, for the context of an error */
static void
resolve_error_context(void *arg)
{
	errcontext("resolving entry \"%s\" of dp_agg.allowed_function", (const char *) arg);
}

/*
 * The function an allow-list entry names: the signature resolved under
 * the search_path pg_catalog, pg_temp (as PostgreSQL's to_regprocedure
 * does under it); InvalidOid if it names none.  A bare number is not a
 * signature: it would be an OID, which pg_upgrade does not keep.  Before
 * PostgreSQL 16 an unknown argument type or malformed text raises an
 * error (with a context naming the entry) instead: only a superuser
 * writing the catalog by hand can store such an entry.
 */
Oid
dp_allowed_function_oid(const char *signature)
{
	LOCAL_FCINFO(fcinfo, 1);
	ErrorContextCallback errcallback;
	int			nestlevel;
	Datum		result;

	if (strchr(signature, '(') == NULL)
		return InvalidOid;
	errcallback.callback = resolve_error_context;
	errcallback.arg = (void *) signature;
	errcallback.previous = error_context_stack;
	error_context_stack = &errcallback;
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	InitFunctionCallInfoData(*fcinfo, NULL, 1, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = CStringGetTextDatum(signature);
	fcinfo->args[0].isnull = false;
	result = to_regprocedure(fcinfo);
	AtEOXact_GUC(true, nestlevel);
	error_context_stack = errcallback.previous;
	return fcinfo->isnull ? InvalidOid : DatumGetObjectId(result);
}

/* Resolve the allow-list's entries into allowed_functions. */
static void
resolve_allowed(void)
{
	ListCell   *lc;

	/* valid from here: an invalidation while resolving marks it invalid again */
	allowed_valid = true;
	hash_destroy(allowed_functions);
	allowed_functions = new_set("dp_agg allowed functions", sizeof(Oid));
	foreach(lc, allowed_oids)
	{
		Oid			funcid = lfirst_oid(lc);

		hash_search(allowed_functions, &funcid, HASH_ENTER, NULL);
	}
	foreach(lc, allowed_entries)
	{
		Oid			funcid = dp_allowed_function_oid((const char *) lfirst(lc));

		if (OidIsValid(funcid))
			hash_search(allowed_functions, &funcid, HASH_ENTER, NULL);
	}
}

/* (Re)build the cache; without the catalogs nothing is protected. */
static void
build_cache(void)
{
	Oid			nsp = get_namespace_oid("dp_agg", true);
	bool		had_catalogs = OidIsValid(protected_catalog);

	if (protect_cxt == NULL)
		protect_cxt = AllocSetContextCreate(TopMemoryContext, "dp_agg protected relations",
											ALLOCSET_SMALL_SIZES);
	MemoryContextReset(protect_cxt);
	protected_rels = new_set("dp_agg protected relations", sizeof(Oid));
	grants = new_set("dp_agg access grants", sizeof(GrantKey));
	allowed_functions = NULL;
	allowed_entries = NIL;
	allowed_oids = NIL;
	allowed_valid = false;
	protected_catalog = OidIsValid(nsp) ? get_relname_relid("protected", nsp) : InvalidOid;
	access_catalog = OidIsValid(nsp) ? get_relname_relid("access", nsp) : InvalidOid;
	allowed_catalog = OidIsValid(nsp) ? get_relname_relid("allowed_function", nsp) : InvalidOid;
	/* valid from here: an invalidation while loading marks it invalid again */
	cache_valid = true;
	built_in_script = creating_extension;
	if (OidIsValid(protected_catalog) && OidIsValid(access_catalog) &&
		OidIsValid(allowed_catalog))
	{
		load_catalog(protected_catalog, protected_rels, false);
		load_catalog(access_catalog, grants, true);

		/*
		 * Not while an extension's script runs: the update to 0.4 changes
		 * the column's type from regprocedure to text, and in the middle of
		 * that ALTER TABLE (the planner is called for its TOAST table's
		 * index) the catalog says text while the rows still hold OIDs.  The
		 * allow-list is then empty, which allows nothing, until the cache is
		 * built again after the script.
		 */
		if (!creating_extension)
			load_allowed(allowed_catalog);
		/* plans made while there were no catalogs assumed no protection */
		if (!had_catalogs)
			ResetPlanCache();
	}
	else
		protected_catalog = InvalidOid;
}

static void
ensure_cache(void)
{
	if (built_in_script && !creating_extension)
		cache_valid = false;
	while (!cache_valid)
		build_cache();
}

/*
 * Is any relation of this database protected?  On a Citus cluster also
 * those a node knows by their security label (dist_protect.c).
 */
bool
dp_any_protected(void)
{
	ensure_cache();
	return hash_get_num_entries(protected_rels) > 0 || dp_dist_any_protected();
}

/*
 * The protected relation of smallest OID that the role is not trusted for
 * (one, the same every time, to name in messages); InvalidOid if there is
 * none.  A loop over the protected relations: called rarely (statistics).
 */
Oid
dp_untrusted_protected(Oid roleid)
{
	HASH_SEQ_STATUS seq;
	Oid		   *relid;
	Oid			found = InvalidOid;
	ListCell   *lc;

	if (!dp_any_protected())
		return InvalidOid;
	hash_seq_init(&seq, protected_rels);
	while ((relid = hash_seq_search(&seq)) != NULL)
	{
		if ((!OidIsValid(found) || *relid < found) && !dp_role_trusted(*relid, roleid))
			found = *relid;
	}
	foreach(lc, dp_dist_labeled_relations())
	{
		if ((!OidIsValid(found) || lfirst_oid(lc) < found) &&
			!dp_role_trusted(lfirst_oid(lc), roleid))
			found = lfirst_oid(lc);
	}
	return found;
}

/* Does an entry of dp_agg.allowed_function name the function? */
bool
dp_function_allowed(Oid funcid)
{
	ensure_cache();
	while (!allowed_valid)
	{
		resolve_allowed();
		/* the catalogs changed meanwhile: read them again */
		if (!cache_valid)
		{
			ensure_cache();
			allowed_valid = false;
		}
	}
	return hash_search(allowed_functions, &funcid, HASH_FIND, NULL) != NULL;
}

/* The shape of a relation (see RelationShape); a missing one has none. */
static RelationShape *
relation_shape(Oid relid)
{
	RelationShape *shape;
	bool		found;

	if (shapes == NULL)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(RelationShape);
		ctl.hcxt = TopMemoryContext;
		shapes = hash_create("dp_agg relation shapes", 64, &ctl,
							 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	shape = hash_search(shapes, &relid, HASH_FIND, NULL);
	if (shape == NULL)
	{
		/*
		 * read the catalog before entering: reading it may process
		 * invalidations, which remove entries or the whole table
		 */
		HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
		bool		partition = false;
		bool		children = false;

		if (HeapTupleIsValid(tup))
		{
			partition = ((Form_pg_class) GETSTRUCT(tup))->relispartition;
			children = ((Form_pg_class) GETSTRUCT(tup))->relhassubclass;
			ReleaseSysCache(tup);
		}
		/* all invalidated meanwhile: answered, not cached */
		shape = shapes == NULL ? &unknown_shape :
			hash_search(shapes, &relid, HASH_ENTER, &found);
		shape->partition = partition;
		shape->children = children;
	}
	return shape;
}

/*
 * May the relation have partitions or inheritance children (relhassubclass,
 * which the planner checks too: it may be true without any left, never
 * false with some)?
 */
bool
dp_relation_has_children(Oid relid)
{
	return relation_shape(relid)->children;
}

/*
 * The relation and, if it is a partition, its ancestors, nearest first;
 * for a shard of a Citus table, then the table and its ancestors
 * (dist_protect.c): a shard holds rows of its table.
 */
static List *
relation_and_ancestors(Oid relid)
{
	List	   *rels = list_make1_oid(relid);
	Oid			table = dp_dist_table_of_shard(relid);

	if (relation_shape(relid)->partition)
		rels = list_concat(rels, dp_relation_ancestors(relid, true));
	if (OidIsValid(table))
	{
		rels = lappend_oid(rels, table);
		if (relation_shape(table)->partition)
			rels = list_concat(rels, dp_relation_ancestors(table, true));
	}
	return rels;
}

/* Is the relation, or a partitioned table it is a partition of, protected? */
bool
dp_relation_protected(Oid relid)
{
	List	   *rels;
	ListCell   *lc;

	if (!dp_any_protected())
		return false;
	if (hash_search(protected_rels, &relid, HASH_FIND, NULL) != NULL)
		return true;
	/* the relation itself (labeled on a Citus node), its ancestors, its table */
	rels = relation_and_ancestors(relid);
	foreach(lc, rels)
	{
		Oid			r = lfirst_oid(lc);

		if (hash_search(protected_rels, &r, HASH_FIND, NULL) != NULL || dp_dist_labeled(r))
			return true;
	}
	/* a worker that cannot tell whether it is protected denies (dist_protect.c) */
	return dp_dist_unknown(relid);
}

/*
 * The first relation of the inheritance trees relid belongs to (each root,
 * and every partition and inheritance child below it) that is protected
 * and that the role is not trusted for; InvalidOid if there is none.  A
 * privacy unit declared on a relation holds in all its tree, so the bounds
 * of the unit that roles untrusted for a protected partition may not raise
 * are those of every statement over the tree, whichever of its relations
 * the statement names or reads first (the parent, an unprotected sibling).
 */
Oid
dp_untrusted_in_tree(Oid relid, Oid roleid)
{
	ListCell   *lc;

	if (!dp_any_protected())
		return InvalidOid;
	foreach(lc, dp_relation_roots(relid))
	{
		ListCell   *lc2;

		foreach(lc2, dp_relation_read_set(lfirst_oid(lc), false))
		{
			Oid			r = lfirst_oid(lc2);

			if (dp_relation_protected(r) && !dp_role_trusted(r, roleid))
				return r;
		}
	}
	return InvalidOid;
}

/* Was the role granted access to the relation or to one of its ancestors? */
bool
dp_role_granted(Oid relid, Oid roleid)
{
	List	   *rels;
	ListCell   *lc;

	ensure_cache();
	rels = relation_and_ancestors(relid);
	foreach(lc, rels)
	{
		GrantKey	key = {lfirst_oid(lc), roleid};

		if (hash_search(grants, &key, HASH_FIND, NULL) != NULL)
			return true;
	}
	return false;
}

/* The owner of a relation; InvalidOid if it does not exist. */
Oid
dp_relation_owner(Oid relid)
{
	HeapTuple	tup;
	Oid			owner;

	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
		return InvalidOid;
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

/*
 * Run one statement on the extension's catalog dp_agg.<catalog> as the
 * catalog's owner, in a restricted security context (the SQL functions
 * that write the catalogs, protect_api.c and privacy_unit_api.c); the
 * number of rows it processed.
 */
uint64
dp_catalog_execute(const char *catalog, const char *sql, int nargs, Oid *argtypes,
				   Datum *values)
{
	Oid			relid;
	Oid			save_userid;
	int			save_sec_context;
	uint64		processed;

	relid = get_relname_relid(catalog, get_namespace_oid("dp_agg", false));
	if (!OidIsValid(relid))
		elog(ERROR, "dp_agg: catalog dp_agg.%s is missing", catalog);
	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(dp_relation_owner(relid),
						   save_sec_context | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "dp_agg: SPI_connect failed");
	if (SPI_execute_with_args(sql, nargs, argtypes, values, NULL, false, 0) < 0)
		elog(ERROR, "dp_agg: SPI_execute_with_args failed: %s", sql);
	processed = SPI_processed;
	SPI_finish();
	SetUserIdAndSecContext(save_userid, save_sec_context);
	return processed;
}

/*
 * Is the role a superuser, or has it the privileges of the owner of the
 * relation or of a partitioned table it is a partition of?  The owner of a
 * partitioned table reads its partitions through it whoever owns them.
 */
bool
dp_role_trusted(Oid relid, Oid roleid)
{
	List	   *rels;
	ListCell   *lc;

	if (superuser_arg(roleid))
		return true;
	rels = relation_and_ancestors(relid);
	foreach(lc, rels)
	{
		Oid			owner = dp_relation_owner(lfirst_oid(lc));

		if (OidIsValid(owner) && has_privs_of_role(roleid, owner))
			return true;
	}
	return false;
}
