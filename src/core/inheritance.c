/*-------------------------------------------------------------------------
 *
 * inheritance.c
 *	  A relation's ancestors and its inheritance tree (pg_inherits):
 *	  partitions and plain inheritance children, at any depth.
 *
 * The rows of a partition or of an inheritance child are also rows of
 * each of its ancestors (a parent read without ONLY reads them), so what
 * dp_agg attaches to a relation holds for them: protection for partitions
 * (protect.c), privacy units for every child (unit_catalog.c), and the
 * relations a DP statement must not read beside its DP aggregates
 * (side_reads.c).  pg_inherits is read when asked, as PostgreSQL's own
 * get_partition_ancestors and find_all_inheritors do: a plan depends on
 * the relations it names, and attaching or detaching one invalidates them.
 *
 * A partition has one parent, a partitioned table; a plain inheritance
 * child may have several parents, which may have parents of their own.
 * The walk upward is breadth-first, each ancestor once.  Its result is
 * cached per session (a DP statement over a partitioned table asks for
 * every partition, at planning and at executor start), and the whole cache
 * is dropped at any relcache invalidation: attaching, detaching,
 * inheriting or dropping a relation invalidates the relations concerned,
 * in this session at the end of the command and in the others at their
 * next one.  Without the callback (the library not preloaded) nothing is
 * cached.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_inherits.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "inheritance.h"
#include "relcache_watch.h"

/* relid -> its ancestors (a List in ancestors_cxt) */
typedef struct AncestorsEntry
{
	Oid			relid;
	List	   *ancestors;
} AncestorsEntry;

static MemoryContext ancestors_cxt = NULL;
static HTAB *ancestors_cache = NULL;
static bool cache_enabled = false;

static void
invalidate_ancestors(Oid relid)
{
	if (ancestors_cxt != NULL)
		MemoryContextReset(ancestors_cxt);
	ancestors_cache = NULL;
}

void
dp_inheritance_init(void)
{
	dp_relcache_watch(invalidate_ancestors);
	cache_enabled = true;
}

/* the direct parents of a relation, in pg_inherits' order (inhseqno) */
static List *
direct_parents(Relation inherits, Oid relid)
{
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	List	   *parents = NIL;

	ScanKeyInit(&key, Anum_pg_inherits_inhrelid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(relid));
	scan = systable_beginscan(inherits, InheritsRelidSeqnoIndexId, true, NULL, 1, &key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
		parents = lappend_oid(parents, ((Form_pg_inherits) GETSTRUCT(tup))->inhparent);
	systable_endscan(scan);
	return parents;
}

/*
 * The ancestors of a relation, nearest first, each once (NIL if it has
 * none).  With partitions_only, only those of a partition: a plain
 * inheritance child is then its own tree (protect.c, doc/guard.md, "Protected
 * tables").
 */
static List *
walk_ancestors(Oid relid)
{
	Relation	inherits;
	List	   *ancestors = NIL;
	List	   *queue;
	ListCell   *lc;

	/* pg_inherits has no row for a relation without parents: one lookup */
	inherits = table_open(InheritsRelationId, AccessShareLock);
	queue = direct_parents(inherits, relid);
	foreach(lc, queue)
	{
		Oid			parent = lfirst_oid(lc);

		if (list_member_oid(ancestors, parent))
			continue;
		ancestors = lappend_oid(ancestors, parent);
		/* foreach allows appending to the list it walks */
		queue = list_concat(queue, direct_parents(inherits, parent));
	}
	table_close(inherits, AccessShareLock);
	return ancestors;
}

List *
dp_relation_ancestors(Oid relid, bool partitions_only)
{
	AncestorsEntry *e;
	bool		found;
	List	   *ancestors;

	if (partitions_only && !get_rel_relispartition(relid))
		return NIL;
	if (!cache_enabled)
		return walk_ancestors(relid);
	if (ancestors_cache == NULL)
	{
		HASHCTL		ctl;

		if (ancestors_cxt == NULL)
			ancestors_cxt = AllocSetContextCreate(TopMemoryContext, "dp_agg ancestors",
												  ALLOCSET_SMALL_SIZES);
		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(AncestorsEntry);
		ctl.hcxt = ancestors_cxt;
		ancestors_cache = hash_create("dp_agg ancestors", 64, &ctl,
									  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	e = hash_search(ancestors_cache, &relid, HASH_FIND, NULL);
	if (e != NULL)
		return list_copy(e->ancestors);
	ancestors = walk_ancestors(relid);
	/* an invalidation while walking (catalog reads accept them) drops the cache */
	if (ancestors_cache != NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(ancestors_cxt);

		e = hash_search(ancestors_cache, &relid, HASH_ENTER, &found);
		e->ancestors = list_copy(ancestors);
		MemoryContextSwitchTo(old);
	}
	return ancestors;
}

/*
 * The roots of the inheritance trees a relation belongs to: its ancestors
 * without parents, or the relation itself if it has none.  Two relations
 * share rows, or (with a privacy unit on an ancestor) units, only if they
 * share a root.
 */
List *
dp_relation_roots(Oid relid)
{
	List	   *ancestors = dp_relation_ancestors(relid, false);
	List	   *roots = NIL;
	ListCell   *lc;

	if (ancestors == NIL)
		return list_make1_oid(relid);
	foreach(lc, ancestors)
	{
		if (dp_relation_ancestors(lfirst_oid(lc), false) == NIL)
			roots = lappend_oid(roots, lfirst_oid(lc));
	}
	return roots;
}

/*
 * The relation and, unless only (ONLY in FROM), its partitions and
 * inheritance children at any depth: the relations whose rows reading it
 * reads.  The children are locked as the planner will lock them.
 */
List *
dp_relation_read_set(Oid relid, bool only)
{
	if (only || !has_subclass(relid))
		return list_make1_oid(relid);
	return find_all_inheritors(relid, AccessShareLock, NULL);
}
