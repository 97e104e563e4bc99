/*-------------------------------------------------------------------------
 *
 * dist_protect.c
 *	  Protected tables on a Citus cluster: what every node knows of them.
 *
 * doc/citus.md, "Citus", "Protected tables".  The coordinator keeps the
 * catalogs of protection (dp_agg.protected, dp_agg.access) and enforces the
 * rules as for a local table; a worker must know which of its relations are
 * protected (the tables' copies Citus keeps on it, and their shards) to
 * refuse roles not trusted for them any read.  Citus's own metadata
 * carries that knowledge: in a database where Citus is installed,
 * dp_agg.protect also puts the security label 'protected' of provider
 * dp_agg on the table (and dp_agg.unprotect removes it), through SQL, so
 * that Citus propagates it in the same distributed transaction to every
 * node's copy of a Citus table.  Citus also writes a table's security
 * labels with its definition wherever it creates the table or a shard of
 * it: on a node added later (metadata sync), for the shards of
 * create_distributed_table, of a shard move or split and of a reference
 * table replicated to a new node, and for the table alter_distributed_table
 * and undistribute_table build.  So on any node a relation is protected
 * when it, or the Citus table it is a shard of, carries the label or is in
 * dp_agg.protected (protect.c adds the ancestors of partitions).
 *
 * Deny by default: a worker (dp_agg.citus_worker) whose Citus metadata is
 * not synced (its group is unknown) cannot tell a shard from a local
 * table; there, a relation named like a shard (ending in _<digits>) is
 * taken as protected.
 *
 * The label provider accepts the label 'protected', or none, on tables
 * only.  PostgreSQL lets only a table's owner (or a superuser) label it,
 * and the owner may protect and unprotect it anyway.  Every change
 * invalidates the table's relcache entry (and the catalog dp_agg.protected,
 * so that every session plans again, as for a change of the catalog); the
 * list of labeled relations each session keeps is dropped at any relcache
 * invalidation (protect.c's callback), as inheritance.c drops its cache.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_seclabel.h"
#include "commands/seclabel.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "dist_catalog.h"
#include "dist_protect.h"
#include "guc.h"

/* the relations of this database labeled 'protected', and the node's state */
static MemoryContext label_cxt = NULL;
static List *labeled = NIL;
static bool unsynced_worker = false;	/* deny by default (see above) */
static bool labels_valid = false;

/*
 * Any relation changed: read the labels again when next needed.  Called
 * from protect.c's relcache callback (PostgreSQL has few slots for them).
 */
void
dp_dist_invalidate_labels(void)
{
	labels_valid = false;
}

/* read pg_seclabel: the relations with dp_agg's label */
static void
load_labels(void)
{
	Relation	rel;
	SysScanDesc scan;
	HeapTuple	tup;
	MemoryContext old;

	if (label_cxt == NULL)
		label_cxt = AllocSetContextCreate(TopMemoryContext, "dp_agg protected labels",
										  ALLOCSET_SMALL_SIZES);
	MemoryContextReset(label_cxt);
	labeled = NIL;
	/* valid from here: an invalidation while loading marks it invalid again */
	labels_valid = true;
	rel = table_open(SecLabelRelationId, AccessShareLock);
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	old = MemoryContextSwitchTo(label_cxt);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		FormData_pg_seclabel *l = (FormData_pg_seclabel *) GETSTRUCT(tup);
		bool		isnull;
		Datum		provider = heap_getattr(tup, Anum_pg_seclabel_provider,
											RelationGetDescr(rel), &isnull);
		Datum		label;

		if (isnull || l->classoid != RelationRelationId || l->objsubid != 0 ||
			strcmp(TextDatumGetCString(provider), DP_PROTECT_LABEL_PROVIDER) != 0)
			continue;
		label = heap_getattr(tup, Anum_pg_seclabel_label, RelationGetDescr(rel), &isnull);
		if (!isnull && strcmp(TextDatumGetCString(label), DP_PROTECT_LABEL) == 0)
			labeled = lappend_oid(labeled, l->objoid);
	}
	MemoryContextSwitchTo(old);
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	unsynced_worker = dp_guc_citus_worker && dp_citus_local_group() <= 0;
}

static void
ensure_labels(void)
{
	while (!labels_valid)
		load_labels();
}

/*
 * The label provider dp_agg: the label 'protected' or none, on a table.
 * The table and the catalog of protection are invalidated so that every
 * session reads the labels again and plans again.
 */
static void
label_hook(const ObjectAddress *object, const char *seclabel)
{
	char		relkind;
	Oid			nsp;

	if (object->classId != RelationRelationId || object->objectSubId != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("security labels of provider \"%s\" are for tables only",
						DP_PROTECT_LABEL_PROVIDER),
				 errdetail("The label '%s' marks a protected table on every node of a Citus cluster.",
						   DP_PROTECT_LABEL),
				 errhint("Protect a table with dp_agg.protect.")));
	relkind = get_rel_relkind(object->objectId);
	if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("security labels of provider \"%s\" are for tables only",
						DP_PROTECT_LABEL_PROVIDER)));
	if (seclabel != NULL && strcmp(seclabel, DP_PROTECT_LABEL) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid security label \"%s\" of provider \"%s\"", seclabel,
						DP_PROTECT_LABEL_PROVIDER),
				 errdetail("The only label is '%s'.", DP_PROTECT_LABEL)));
	CacheInvalidateRelcacheByRelid(object->objectId);
	nsp = get_namespace_oid("dp_agg", true);
	if (OidIsValid(nsp) && OidIsValid(get_relname_relid("protected", nsp)))
		CacheInvalidateRelcacheByRelid(get_relname_relid("protected", nsp));
}

/* called from _PG_init while preloading */
void
dp_dist_protect_init(void)
{
	register_label_provider(DP_PROTECT_LABEL_PROVIDER, label_hook);
}

/*
 * Does this node know of protected relations beyond dp_agg.protected
 * (labels), or must it deny by default?
 */
bool
dp_dist_any_protected(void)
{
	ensure_labels();
	return labeled != NIL || unsynced_worker;
}

/*
 * Might a relation of this database carry the label, as far as this
 * session knows without reading a catalog (for invalidation callbacks,
 * which may not read one)?
 */
bool
dp_dist_maybe_protected(void)
{
	return !labels_valid || labeled != NIL || unsynced_worker;
}

/* Does the relation carry the label 'protected'? */
bool
dp_dist_labeled(Oid relid)
{
	ensure_labels();
	return list_member_oid(labeled, relid);
}

/* the relations labeled 'protected' (a copy) */
List *
dp_dist_labeled_relations(void)
{
	ensure_labels();
	return list_copy(labeled);
}

/* The Citus table relid is a shard of, on this node (InvalidOid if none). */
Oid
dp_dist_table_of_shard(Oid relid)
{
	return dp_citus_shard_table(relid);
}

/*
 * Deny by default: is relid a relation this node cannot tell from a shard,
 * on a worker without synced metadata?
 */
bool
dp_dist_unknown(Oid relid)
{
	ensure_labels();
	return unsynced_worker && dp_citus_shard_like(relid);
}

/*
 * Set or remove the label of a protected table, in a database where Citus
 * is installed, by SQL as the current user (who is trusted for it, so may
 * label it), with Citus's propagation of DDL on for the statement: Citus
 * sends it to the other nodes in this distributed transaction.  A table
 * that is not a Citus table yet keeps the label when it becomes one.
 * Nothing without Citus, or for relations Citus cannot distribute.
 */
void
dp_dist_set_label(Oid relid, bool protect)
{
	char		relkind = get_rel_relkind(relid);
	int			level;
	char	   *sql;

	if (!dp_citus_present() ||
		(relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE))
		return;
	sql = psprintf("SECURITY LABEL FOR %s ON TABLE %s IS %s", DP_PROTECT_LABEL_PROVIDER,
				   quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
											  get_rel_name(relid)),
				   protect ? "'" DP_PROTECT_LABEL "'" : "NULL");
	level = NewGUCNestLevel();
	if (GetConfigOption("citus.enable_ddl_propagation", true, false) != NULL)
		(void) set_config_option("citus.enable_ddl_propagation", "on", PGC_USERSET,
								 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	if (GetConfigOption("citus.enable_alter_role_propagation", true, false) != NULL)
		(void) set_config_option("citus.enable_alter_role_propagation", "on", PGC_USERSET,
								 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "dp_agg: SPI_connect failed");
	if (SPI_execute(sql, false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "dp_agg: could not label relation \"%s\"", get_rel_name(relid));
	SPI_finish();
	AtEOXact_GUC(true, level);
}
