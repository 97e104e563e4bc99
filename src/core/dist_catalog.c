/*-------------------------------------------------------------------------
 *
 * dist_catalog.c
 *	  Citus's catalogs, as dp_agg reads them: its tables, their shards and
 *	  placements, the node's group, and the names Citus gives shards.
 *
 * dp_agg does not link with Citus: it reads Citus's catalogs (tables of
 * pg_catalog that exist once the citus extension is created) by name, and
 * finds nothing when they are missing.  Citus copies them to every node
 * (metadata sync), so a worker knows, as the coordinator does, which
 * tables are distributed, which shards they have, and where.
 *
 * A shard of table t is the relation t_<shard id> in t's schema on the
 * nodes that hold a placement of it; when that name would not fit in
 * NAMEDATALEN - 1 bytes, Citus shortens t and inserts a hash of the whole
 * name (AppendShardIdToName in Citus's relay_event_utility.c, reproduced
 * by dp_citus_shard_name).  A relation is recognised as a shard only if
 * its name is exactly the one Citus gives that shard of that table.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_namespace.h"
#include "common/hashfn.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "nodes/primnodes.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "dist_catalog.h"

/* Citus's catalogs and the columns read here (Citus 13: pg_dist_*.h) */
#define CITUS_PARTITION_CATALOG "pg_dist_partition"
#define CITUS_PARTITION_RELID_INDEX "pg_dist_partition_logical_relid_index"
#define CITUS_PARTITION_LOGICALRELID 1
#define CITUS_PARTITION_METHOD 2
#define CITUS_PARTITION_KEY 3
#define CITUS_SHARD_CATALOG "pg_dist_shard"
#define CITUS_SHARD_ID_INDEX "pg_dist_shard_shardid_index"
#define CITUS_SHARD_RELID_INDEX "pg_dist_shard_logical_relid_index"
#define CITUS_SHARD_LOGICALRELID 1
#define CITUS_SHARD_SHARDID 2
#define CITUS_PLACEMENT_CATALOG "pg_dist_placement"
#define CITUS_PLACEMENT_SHARDID_INDEX "pg_dist_placement_shardid_index"
#define CITUS_PLACEMENT_SHARDID 2
#define CITUS_PLACEMENT_GROUPID 5
#define CITUS_LOCAL_GROUP_CATALOG "pg_dist_local_group"
#define CITUS_LOCAL_GROUPID 1

/* Citus's separator of a table's name and a shard id (SHARD_NAME_SEPARATOR) */
#define SHARD_SEPARATOR '_'

/* Is Citus installed in this database? */
bool
dp_citus_present(void)
{
	return OidIsValid(get_relname_relid(CITUS_PARTITION_CATALOG, PG_CATALOG_NAMESPACE));
}

/*
 * The rows of a Citus catalog where column keyattno = value (every row if
 * keyattno is 0), through the index of that name if given: a palloc'd
 * copy of each, and the catalog's tuple descriptor (NIL and NULL without
 * the catalog).
 */
static List *
catalog_rows(const char *catalog, const char *index, AttrNumber keyattno,
			 RegProcedure eqproc, Datum value, TupleDesc *desc)
{
	Oid			relid = get_relname_relid(catalog, PG_CATALOG_NAMESPACE);
	Oid			indexid = index != NULL ? get_relname_relid(index, PG_CATALOG_NAMESPACE) : InvalidOid;
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	List	   *result = NIL;

	*desc = NULL;
	if (!OidIsValid(relid))
		return NIL;
	rel = table_open(relid, AccessShareLock);
	if (keyattno > 0)
		ScanKeyInit(&key, keyattno, BTEqualStrategyNumber, eqproc, value);
	scan = systable_beginscan(rel, indexid, OidIsValid(indexid), NULL, keyattno > 0 ? 1 : 0,
							  &key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
		result = lappend(result, heap_copytuple(tup));
	systable_endscan(scan);
	*desc = CreateTupleDescCopy(RelationGetDescr(rel));
	table_close(rel, AccessShareLock);
	return result;
}

/* column attno of a catalog row */
static Datum
row_value(HeapTuple tup, TupleDesc desc, AttrNumber attno, bool *isnull)
{
	return heap_getattr(tup, attno, desc, isnull);
}

/* Is relid a table Citus distributes (or replicates)? */
bool
dp_is_citus_table(Oid relid)
{
	TupleDesc	desc;

	return catalog_rows(CITUS_PARTITION_CATALOG, CITUS_PARTITION_RELID_INDEX,
						CITUS_PARTITION_LOGICALRELID, F_OIDEQ, ObjectIdGetDatum(relid),
						&desc) != NIL;
}

/* the shard ids of a Citus table */
static List *
shard_ids(Oid relid)
{
	TupleDesc	desc;
	List	   *ids = NIL;
	ListCell   *lc;

	foreach(lc, catalog_rows(CITUS_SHARD_CATALOG, CITUS_SHARD_RELID_INDEX, CITUS_SHARD_LOGICALRELID,
							 F_OIDEQ, ObjectIdGetDatum(relid), &desc))
	{
		bool		isnull;
		Datum		d = row_value(lfirst(lc), desc, CITUS_SHARD_SHARDID, &isnull);
		int64	   *id = palloc(sizeof(int64));

		*id = DatumGetInt64(d);
		ids = lappend(ids, id);
	}
	return ids;
}

/*
 * How a Citus table is split: its method, its distribution column (from
 * the partkey, a column reference written as a node) and its number of
 * shards; false if relid is not a Citus table.
 */
bool
dp_citus_table(Oid relid, DpCitusTable *table)
{
	TupleDesc	desc;
	List	   *rows = catalog_rows(CITUS_PARTITION_CATALOG, NULL, CITUS_PARTITION_LOGICALRELID,
									F_OIDEQ, ObjectIdGetDatum(relid), &desc);
	bool		isnull;
	Datum		key;

	if (rows == NIL)
		return false;
	memset(table, 0, sizeof(*table));
	table->method = DatumGetChar(row_value(linitial(rows), desc, CITUS_PARTITION_METHOD, &isnull));
	key = row_value(linitial(rows), desc, CITUS_PARTITION_KEY, &isnull);
	if (!isnull)
	{
		Node	   *var = stringToNode(TextDatumGetCString(key));

		if (var != NULL && IsA(var, Var))
			table->distcol = ((Var *) var)->varattno;
	}
	table->nshards = list_length(shard_ids(relid));
	return true;
}

/*
 * Where the shards of a Citus table are: "shard:group;" for every
 * placement, from this node's metadata.
 */
char *
dp_citus_placements(Oid relid)
{
	StringInfoData s;
	ListCell   *lc;

	initStringInfo(&s);
	foreach(lc, shard_ids(relid))
	{
		int64		shard = *(int64 *) lfirst(lc);
		TupleDesc	desc;
		ListCell   *lc2;

		foreach(lc2, catalog_rows(CITUS_PLACEMENT_CATALOG, CITUS_PLACEMENT_SHARDID_INDEX,
								  CITUS_PLACEMENT_SHARDID, F_INT8EQ, Int64GetDatum(shard), &desc))
		{
			bool		isnull;
			Datum		group = row_value(lfirst(lc2), desc, CITUS_PLACEMENT_GROUPID, &isnull);

			if (!isnull)
				appendStringInfo(&s, INT64_FORMAT ":%d;", shard, DatumGetInt32(group));
		}
	}
	return s.data;
}

/*
 * This node's Citus group: 0 on the coordinator, and on a worker whose
 * metadata Citus has not synced; -1 without Citus.
 */
int
dp_citus_local_group(void)
{
	TupleDesc	desc;
	List	   *rows = catalog_rows(CITUS_LOCAL_GROUP_CATALOG, NULL, 0, InvalidOid, (Datum) 0,
									&desc);
	bool		isnull;
	Datum		d;

	if (rows == NIL)
		return -1;
	d = row_value(linitial(rows), desc, CITUS_LOCAL_GROUPID, &isnull);
	return isnull ? -1 : DatumGetInt32(d);
}

/*
 * The name Citus gives the shard shardid of a table named base: base_<id>,
 * or, when that is too long for a name, base shortened (at a character
 * boundary) and followed by the 32-bit hash_any of the whole base in
 * hexadecimal, then _<id> (Citus's AppendShardIdToName).
 */
char *
dp_citus_shard_name(const char *base, int64 shardid)
{
	char		suffix[NAMEDATALEN];
	int			baselen = (int) strlen(base);
	int			suffixlen;

	snprintf(suffix, sizeof(suffix), "%c" INT64_FORMAT, SHARD_SEPARATOR, shardid);
	suffixlen = (int) strlen(suffix);
	if (baselen < NAMEDATALEN - suffixlen)
		return psprintf("%s%s", base, suffix);
	return psprintf("%.*s%c%.8x%s",
					pg_mbcliplen(base, baselen, NAMEDATALEN - suffixlen - 10), base,
					SHARD_SEPARATOR,
					DatumGetUInt32(hash_any((const unsigned char *) base, baselen)), suffix);
}

/* the shard id at the end of a name (after its last '_'), false if none */
static bool
trailing_shard_id(const char *relname, int64 *shardid)
{
	const char *sep = strrchr(relname, SHARD_SEPARATOR);
	const char *p;
	char	   *end;

	if (sep == NULL || sep[1] == '\0' || sep[1] == '0')
		return false;
	for (p = sep + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	if (strlen(sep + 1) > 18)
		return false;
	*shardid = strtoi64(sep + 1, &end, 10);
	return *shardid > 0;
}

/*
 * Is relname the name Citus gives a shard of a table named base?  Its
 * shard id is returned.
 */
bool
dp_citus_shard_name_of(const char *relname, const char *base, int64 *shardid)
{
	return trailing_shard_id(relname, shardid) &&
		strcmp(dp_citus_shard_name(base, *shardid), relname) == 0;
}

/*
 * The Citus table whose shard relid is on this node (InvalidOid if relid
 * is not one): its name ends in a shard id that this node's metadata
 * knows, and is the name Citus gives that shard of that table, in the
 * table's schema.
 */
Oid
dp_citus_shard_table(Oid relid)
{
	char	   *relname;
	int64		shardid;
	TupleDesc	desc;
	List	   *rows;
	bool		isnull;
	Oid			table;
	char	   *tablename;

	relname = get_rel_name(relid);
	if (relname == NULL || !trailing_shard_id(relname, &shardid) || !dp_citus_present())
		return InvalidOid;
	rows = catalog_rows(CITUS_SHARD_CATALOG, CITUS_SHARD_ID_INDEX, CITUS_SHARD_SHARDID,
						F_INT8EQ, Int64GetDatum(shardid), &desc);
	if (rows == NIL)
		return InvalidOid;
	table = DatumGetObjectId(row_value(linitial(rows), desc, CITUS_SHARD_LOGICALRELID, &isnull));
	tablename = get_rel_name(table);
	if (isnull || table == relid || tablename == NULL ||
		get_rel_namespace(table) != get_rel_namespace(relid) ||
		strcmp(dp_citus_shard_name(tablename, shardid), relname) != 0)
		return InvalidOid;
	return table;
}

/*
 * Could relid be a shard, by its name alone (it ends in _<digits>)?  For a
 * node that has no metadata to tell.
 */
bool
dp_citus_shard_like(Oid relid)
{
	char	   *relname = get_rel_name(relid);
	int64		shardid;

	return relname != NULL && trailing_shard_id(relname, &shardid);
}
