/*-------------------------------------------------------------------------
 *
 * unit_catalog.c
 *	  The privacy units of relations: the catalog dp_agg.privacy_unit, and
 *	  the unit that applies to the rows a statement reads.
 *
 * doc/units-and-groups.md, "Privacy units".  dp_agg.set_privacy_unit declares
 * a column of a relation the unit of its rows.  The rows of a partition or of
 * an inheritance child are rows of its ancestors too (a parent read without
 * ONLY reads them), so a unit declared on a relation applies to every
 * relation below it, at any depth, whichever of them a statement names:
 * the unit of a relation read is the union of the declarations on it and
 * on its ancestors (inheritance.c), and reading a parent without ONLY
 * reads its descendants' rows, which must all have that one unit.  Two
 * different units meeting (a child with a unit of its own under a parent
 * with another, two parents of a child with different units, or a parent
 * read with children that have a unit and children that have none) is an
 * error: no bound holds for both.  When several declarations name the same
 * column, the smallest max_groups_contributed applies.
 *
 * The catalog stores the unit column by attribute number (unit_attnum,
 * from version 0.4), which follows the column through renames; the name
 * (unit_column) is kept up to date by the extension's triggers for
 * pg_dump, whose restore recreates tables without their dropped columns
 * and so may number them differently: a row written by a restore takes
 * its attribute number from the name (sql/dp_agg--0.3--0.4.sql).  With
 * the catalog of 0.3 (before ALTER EXTENSION UPDATE) the name is used.
 *
 * The catalog is read once into a per-session cache, dropped (with every
 * cached plan) whenever it changes: its trigger sends a relcache
 * invalidation of the catalog (privacy_unit_api.c).  Without any unit in
 * the database, resolving a relation's unit costs one hash lookup.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_attribute.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/plancache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "inheritance.h"
#include "relcache_watch.h"
#include "unit_catalog.h"

/* columns of dp_agg.privacy_unit; unit_attnum is found by name (0.4) */
#define ANUM_UNIT_RELATION 1
#define ANUM_UNIT_COLUMN 2
#define ANUM_UNIT_MAX_GROUPS 3

#define HINT_UNITS "See \"Privacy units\" in dp_agg's doc/units-and-groups.md."

/* one row of the catalog */
typedef struct UnitDecl
{
	Oid			relid;			/* the key */
	AttrNumber	attnum;			/* InvalidAttrNumber if NULL */
	NameData	column;
	int			max_groups;
} UnitDecl;

static MemoryContext unit_cxt = NULL;
static HTAB *declarations = NULL;
static bool cache_valid = false;
static Oid	unit_catalog = InvalidOid;
static bool by_attnum = false;	/* the catalog has unit_attnum (0.4) */

/*
 * A change of dp_agg.privacy_unit makes every plan again: a plan made
 * under the old units must not run under new ones.  Before the catalog
 * exists (versions before 0.3, or before CREATE EXTENSION) any relcache
 * invalidation may be its creation.
 */
static void
invalidate_units(Oid relid)
{
	if (!OidIsValid(unit_catalog))
		cache_valid = false;
	else if (!OidIsValid(relid) || relid == unit_catalog)
	{
		cache_valid = false;
		ResetPlanCache();
	}
}

void
dp_unit_catalog_init(void)
{
	dp_relcache_watch(invalidate_units);
}

static void
build_cache(void)
{
	Oid			nsp = get_namespace_oid("dp_agg", true);
	bool		had_catalog = OidIsValid(unit_catalog);
	HASHCTL		ctl;

	if (unit_cxt == NULL)
		unit_cxt = AllocSetContextCreate(TopMemoryContext, "dp_agg privacy units",
										 ALLOCSET_SMALL_SIZES);
	MemoryContextReset(unit_cxt);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(UnitDecl);
	ctl.hcxt = unit_cxt;
	declarations = hash_create("dp_agg privacy units", 16, &ctl,
							   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	unit_catalog = OidIsValid(nsp) ? get_relname_relid("privacy_unit", nsp) : InvalidOid;
	/* valid from here: an invalidation while loading marks it invalid again */
	cache_valid = true;
	if (OidIsValid(unit_catalog))
	{
		Relation	rel = table_open(unit_catalog, AccessShareLock);
		TupleDesc	desc = RelationGetDescr(rel);
		AttrNumber	attnum_col = get_attnum(unit_catalog, "unit_attnum");
		SysScanDesc scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
		HeapTuple	tup;

		by_attnum = attnum_col != InvalidAttrNumber;

		while (HeapTupleIsValid(tup = systable_getnext(scan)))
		{
			bool		isnull;
			Oid			relid = DatumGetObjectId(heap_getattr(tup, ANUM_UNIT_RELATION, desc, &isnull));
			UnitDecl   *d = hash_search(declarations, &relid, HASH_ENTER, NULL);
			Datum		attnum = (Datum) 0;

			namestrcpy(&d->column,
					   NameStr(*DatumGetName(heap_getattr(tup, ANUM_UNIT_COLUMN, desc, &isnull))));
			d->max_groups = DatumGetInt32(heap_getattr(tup, ANUM_UNIT_MAX_GROUPS, desc, &isnull));
			d->attnum = InvalidAttrNumber;
			isnull = true;
			if (attnum_col != InvalidAttrNumber)
				attnum = heap_getattr(tup, attnum_col, desc, &isnull);
			if (!isnull)
				d->attnum = DatumGetInt16(attnum);
		}
		systable_endscan(scan);
		table_close(rel, AccessShareLock);
		/* plans made while there was no catalog assumed no unit */
		if (!had_catalog)
			ResetPlanCache();
	}
}

static void
ensure_cache(void)
{
	while (!cache_valid)
		build_cache();
}

/* Has any relation of the database a privacy unit? */
bool
dp_any_privacy_unit(void)
{
	ensure_cache();
	return hash_get_num_entries(declarations) > 0;
}

/*
 * The name of the unit column of a declaration, now: the column of its
 * attribute number, whose name the catalog keeps current (or, with the
 * catalog of 0.3, the column of its name).  Fails closed when the column
 * was dropped (the event trigger of 0.4 removes the unit with the column;
 * without it, or with event triggers disabled, this is the last line) or
 * when number and name disagree (renamed while event triggers were
 * disabled, a catalog written by hand, a row of 0.3 whose column was
 * renamed before the update).
 */
static char *
declared_column(const UnitDecl *d)
{
	HeapTuple	tup;
	char	   *name;

	if (!by_attnum)
	{
		if (get_attnum(d->relid, NameStr(d->column)) == InvalidAttrNumber)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("privacy unit column \"%s\" of relation \"%s\" does not exist",
							NameStr(d->column), get_rel_name(d->relid)),
					 errdetail("The column was dropped or renamed after dp_agg.set_privacy_unit."),
					 errhint("Set the privacy unit again with dp_agg.set_privacy_unit.")));
		return pstrdup(NameStr(d->column));
	}
	if (d->attnum == InvalidAttrNumber ||
		!HeapTupleIsValid(tup = SearchSysCacheAttNum(d->relid, d->attnum)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("privacy unit column \"%s\" of relation \"%s\" does not exist",
						NameStr(d->column), get_rel_name(d->relid)),
				 errdetail("The column was dropped, or renamed before dp_agg was updated to 0.4."),
				 errhint("Set the privacy unit again with dp_agg.set_privacy_unit.")));
	name = pstrdup(NameStr(((Form_pg_attribute) GETSTRUCT(tup))->attname));
	ReleaseSysCache(tup);
	if (strcmp(name, NameStr(d->column)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("privacy unit of relation \"%s\" is out of date", get_rel_name(d->relid)),
				 errdetail("dp_agg.privacy_unit names column \"%s\" with the attribute number of column \"%s\": the column was renamed while event triggers were disabled, or the catalog was written by hand.",
						   NameStr(d->column), name),
				 errhint("Set the privacy unit again with dp_agg.set_privacy_unit.")));
	return name;
}

/* what applies to one relation: the declarations on it and its ancestors */
typedef struct Effective
{
	Oid			relid;
	char	   *column;			/* NULL: no unit */
	Oid			declared_on;	/* a relation declaring it (the nearest) */
	int			max_groups;		/* the smallest declared */
} Effective;

static void
two_units(Oid relid, const char *col1, Oid rel1, const char *col2, Oid rel2)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("relation \"%s\" has two privacy units", get_rel_name(relid)),
			 errdetail("Its rows are rows of \"%s\", whose privacy unit is column \"%s\", and of \"%s\", whose privacy unit is column \"%s\": no bound holds for both.",
					   get_rel_name(rel1), col1, get_rel_name(rel2), col2),
			 errhint("Set one privacy unit on the root of the inheritance tree and clear the others with dp_agg.clear_privacy_unit.")));
}

static Effective
effective_unit(Oid relid)
{
	Effective	e = {relid, NULL, InvalidOid, 0};
	List	   *rels = lcons_oid(relid, dp_relation_ancestors(relid, false));
	ListCell   *lc;

	foreach(lc, rels)
	{
		Oid			r = lfirst_oid(lc);
		UnitDecl   *d = hash_search(declarations, &r, HASH_FIND, NULL);
		char	   *column;

		if (d == NULL)
			continue;
		column = declared_column(d);
		if (e.column == NULL)
		{
			e.column = column;
			e.declared_on = r;
			e.max_groups = d->max_groups;
		}
		else if (strcmp(e.column, column) != 0)
			two_units(relid, e.column, e.declared_on, column, r);
		else
			e.max_groups = Min(e.max_groups, d->max_groups);
	}
	return e;
}

/*
 * The privacy unit of the rows a statement reads from a relation (with its
 * descendants unless only): false if they have none.  unit->attnum is the
 * unit column's number in that relation.  An error if two units meet, or
 * rows with a unit and rows without one (see the file's comment).
 */
bool
dp_unit_of_read(Oid relid, bool only, DpUnit *unit)
{
	Effective	first;
	ListCell   *lc;

	if (!dp_any_privacy_unit())
		return false;
	first = effective_unit(relid);
	foreach(lc, dp_relation_read_set(relid, only))
	{
		Effective	e;

		if (lfirst_oid(lc) == relid)
			continue;
		e = effective_unit(lfirst_oid(lc));
		if (e.column != NULL && first.column != NULL && strcmp(e.column, first.column) != 0)
			two_units(e.relid, first.column, first.declared_on, e.column, e.declared_on);
		if ((e.column == NULL) != (first.column == NULL))
		{
			Effective  *with = e.column != NULL ? &e : &first;
			Effective  *without = e.column != NULL ? &first : &e;

			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("relation \"%s\" holds rows with a privacy unit and rows without one",
							get_rel_name(relid)),
					 errdetail("Relation \"%s\" has privacy unit \"%s\" (set on \"%s\"), relation \"%s\" has none: no bound holds for both.",
							   get_rel_name(with->relid), with->column,
							   get_rel_name(with->declared_on), get_rel_name(without->relid)),
					 errhint("Set the privacy unit on \"%s\", or read the partitions with a unit on their own.",
							 get_rel_name(relid))));
		}
		if (e.column != NULL)
			first.max_groups = Min(first.max_groups, e.max_groups);
	}
	if (first.column == NULL)
		return false;
	unit->attnum = get_attnum(relid, first.column);
	if (unit->attnum == InvalidAttrNumber)
		elog(ERROR, "dp_agg: privacy unit column \"%s\" missing in relation \"%s\"",
			 first.column, get_rel_name(relid));
	unit->column = first.column;
	unit->declared_on = first.declared_on;
	unit->max_groups = first.max_groups;
	return true;
}
