/*-------------------------------------------------------------------------
 *
 * budget_store.c
 *	  The rows of dp_agg.budget and dp_agg.cap, read, locked and written
 *	  without SPI; the groups a role belongs to; the renewal of a budget's
 *	  window.
 *
 * The charger reads and locks the budget rows a batch charges and writes
 * each once; dp_agg.preview reads the same rows to predict the charge.
 * Through SPI, a SELECT ... FOR UPDATE and an UPDATE per budget and batch
 * started an executor each and compiled the table's CHECK constraints
 * again from their stored node trees: a quarter of the charger's time.
 * Here a row is found through the unique index on its role or relation,
 * locked as SELECT ... FOR UPDATE locks it (the latest committed version,
 * after waiting for a transaction that is changing it), decoded, and
 * written back as UPDATE writes it: the table's constraints checked
 * (compiled once and kept across batches while they stay the same), the
 * heap updated (HOT when it can), every index updated when it is not,
 * without checking again a unique key the write did not change
 * (insert_index_entries).  A
 * table with triggers or stored generated columns is written through SPI
 * instead (UPDATE ... WHERE ctid = the row locked), so that nothing an
 * UPDATE does is skipped; reading needs no SPI either way, and no
 * privilege: preview reads the rows of the budgets that pay for the
 * caller's statements, which the caller cannot SELECT.
 *
 * The store knows the columns of every version of the SQL objects by
 * name: a column an older version lacks reads as its default (no window,
 * no lifetime limit, the sums of the private selections 0, one budget per
 * role), so that the library charges databases whose extension has not
 * been updated yet.
 *
 * Groups.  A group's budget (members true) pays for the statements of the
 * group role and of every role that is a member of it, directly or through
 * other roles, whatever the INHERIT attribute and (16 on) the INHERIT and
 * SET options of each membership: a NOINHERIT membership grants no
 * privileges by itself, but its member can SET ROLE to the group, and a
 * team's budget that a membership option escaped would bound nothing.
 * Superuser status does not make a role a member of anything here.
 *
 * Windows.  A budget's amounts spent, curve and releases by kind are those
 * of the window of window_start (budget_window.c); a charge in a later
 * window first renews them (dp_budget_roll_window): they start from
 * nothing, the window moves to the charge's, and the lifetime sums go on.
 * A window never moves back, even if the clock does: a charge then counts
 * in the later window (which errs on the side of privacy).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_auth_members.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/catcache.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "budget_row.h"
#include "budget_store.h"
#include "budget_window.h"
#include "compat.h"
#include "pld_state.h"
#include "write_cache.h"

/*
 * Where the latest version of each budget row this process locked or wrote
 * is (the charger's): its row found without walking its chain of versions.
 * A budget row is updated by every charge; while any transaction of the
 * database holds back the horizon of what may be pruned (a long statement,
 * a session idle in a transaction), its dead versions stay on their page,
 * and a fetch through the unique index walks all of them from the chain's
 * root: the charger's cost per charge grew with the charges made since the
 * oldest snapshot.  The cached TID is a hint: a row fetched by it is used
 * only if it is live and current (visible to a dirty snapshot, changed by
 * no transaction in progress), holds the key, and locks as the index path
 * locks it; else the index path runs as before.  The unique index makes
 * that row the only live one of its key.
 */
typedef struct LatestVersionKey
{
	Oid			indexoid;
	Oid			key;
} LatestVersionKey;

typedef struct LatestVersion
{
	LatestVersionKey k;
	Oid			relfilenode;	/* of the table when the TID was seen */
	ItemPointerData tid;
} LatestVersion;

static HTAB *latest_versions = NULL;

/* the columns of dp_agg.budget the store knows, in every version */
typedef enum BudgetColumn
{
	BC_ID,
	BC_ROLE,
	BC_RELATION,
	BC_MEMBERS,
	BC_EPSILON_LIMIT,
	BC_DELTA_LIMIT,
	BC_EPSILON_SPENT,
	BC_DELTA_SPENT,
	BC_ACCOUNTING,
	BC_RDP,
	BC_SELECTION_EPSILON,
	BC_SELECTION_DELTA,
	BC_PLD,
	BC_PLD_FRONTIER,
	BC_WINDOW_LENGTH,
	BC_WINDOW_TIME_ZONE,
	BC_WINDOW_START,
	BC_LIFETIME_EPSILON_LIMIT,
	BC_LIFETIME_DELTA_LIMIT,
	BC_LIFETIME_EPSILON_SPENT,
	BC_LIFETIME_DELTA_SPENT,
	BC_UPDATED_AT,
	BC_COUNT
} BudgetColumn;

static const char *const column_names[BC_COUNT] = {
	"id", "role", "relation", "members", "epsilon_limit", "delta_limit", "epsilon_spent",
	"delta_spent", "accounting", "rdp", "selection_epsilon", "selection_delta", "pld",
	"pld_frontier", "window_length", "window_time_zone", "window_start",
	"lifetime_epsilon_limit", "lifetime_delta_limit", "lifetime_epsilon_spent",
	"lifetime_delta_spent", "updated_at"
};

/* the columns a charge writes */
static const BudgetColumn written[] = {
	BC_EPSILON_SPENT, BC_DELTA_SPENT, BC_RDP, BC_SELECTION_EPSILON, BC_SELECTION_DELTA, BC_PLD,
	BC_PLD_FRONTIER, BC_WINDOW_START, BC_LIFETIME_EPSILON_SPENT, BC_LIFETIME_DELTA_SPENT,
	BC_UPDATED_AT
};

/*
 * What the store looks up about its catalogs (their OIDs, the attribute
 * numbers of their columns, their unique indexes) is kept from one batch
 * to the next until a relcache invalidation (any change of a relation's
 * definition, the extension's update included) makes it look again:
 * looking up names in the system catalogs at every batch was a tenth of
 * the charger's work.  Without the callback (the library not preloaded)
 * nothing is kept.
 */
static uint64 catalog_generation = 1;
static bool catalog_callback = false;

static void
invalidate_catalogs(Datum arg, Oid relid)
{
	catalog_generation++;
}

/* called from _PG_init */
void
dp_budget_store_init(void)
{
	CacheRegisterRelcacheCallback(invalidate_catalogs, (Datum) 0);
	catalog_callback = true;
}

/* the generation of what is kept about the catalogs: 0 if nothing is kept */
uint64
dp_budget_catalog_generation(void)
{
	return catalog_callback ? catalog_generation : 0;
}

static Oid
catalog_relid(const char *name)
{
	Oid			nsp = get_namespace_oid("dp_agg", true);

	return OidIsValid(nsp) ? get_relname_relid(name, nsp) : InvalidOid;
}

/* the attribute numbers of the known columns in this relation (0: absent) */
static void
resolve_columns(Relation rel, const char *const *names, int n, AttrNumber *att)
{
	TupleDesc	desc = RelationGetDescr(rel);

	for (int c = 0; c < n; c++)
	{
		att[c] = InvalidAttrNumber;
		for (int i = 0; i < desc->natts; i++)
		{
			Form_pg_attribute a = TupleDescAttr(desc, i);

			if (!a->attisdropped && strcmp(NameStr(a->attname), names[c]) == 0)
				att[c] = a->attnum;
		}
	}
}

/* the unique btree index on exactly this column, InvalidOid if none */
static Oid
unique_index_on(Relation rel, AttrNumber attnum)
{
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *lc;
	Oid			found = InvalidOid;

	if (attnum == InvalidAttrNumber)
		return InvalidOid;
	foreach(lc, indexes)
	{
		Relation	idx = index_open(lfirst_oid(lc), AccessShareLock);
		Form_pg_index ind = idx->rd_index;

		if (ind->indisunique && ind->indisvalid && ind->indnkeyatts == 1 &&
			ind->indkey.values[0] == attnum && idx->rd_rel->relam == BTREE_AM_OID &&
			heap_attisnull(idx->rd_indextuple, Anum_pg_index_indpred, NULL) &&
			heap_attisnull(idx->rd_indextuple, Anum_pg_index_indexprs, NULL))
			found = lfirst_oid(lc);
		index_close(idx, AccessShareLock);
		if (OidIsValid(found))
			break;
	}
	list_free(indexes);
	return found;
}

/* ---------- the executor state of direct writes, kept across batches ---------- */

/*
 * Compiling the table's CHECK constraints (from their stored node trees)
 * for every write was most of the cost of a budget's UPDATE; they are
 * compiled once and kept while the relation's constraints stay the same
 * (their number and text), and dropped after an error
 * (dp_budget_store_forget): write_cache.c, as for the ledger.
 */
static DpWriteCache store_cache = {"dp_agg budget writes"};

void
dp_budget_store_forget(void)
{
	dp_write_cache_forget(&store_cache);
	if (latest_versions != NULL)
	{
		hash_destroy(latest_versions);
		latest_versions = NULL;
	}
}

/* ---------- opening ---------- */

/*
 * Open dp_agg.budget for reading (and, with for_update, locking and
 * writing its rows) until dp_budget_store_close; false if the extension
 * has no budget table in this database.  Needs an active snapshot.
 */
bool
dp_budget_store_open(DpBudgetStore *s, bool for_update)
{
	static uint64 generation = 0;
	static Oid	relid = InvalidOid;
	static AttrNumber att[BC_COUNT];
	static Oid	role_index = InvalidOid;
	static Oid	relation_index = InvalidOid;
	bool		fresh = generation == 0 || generation != dp_budget_catalog_generation();
	TupleDesc	desc;

	memset(s, 0, sizeof(*s));
	if (fresh)
		relid = catalog_relid("budget");
	if (!OidIsValid(relid))
		return false;
	s->for_update = for_update;
	s->rel = table_open(relid, for_update ? RowExclusiveLock : AccessShareLock);
	desc = RelationGetDescr(s->rel);
	/* opening it accepted invalidations: look again if one came */
	if (fresh || generation != dp_budget_catalog_generation())
	{
		resolve_columns(s->rel, column_names, BC_COUNT, att);
		role_index = unique_index_on(s->rel, att[BC_ROLE]);
		relation_index = unique_index_on(s->rel, att[BC_RELATION]);
		generation = dp_budget_catalog_generation();
	}
	s->att = att;
	s->role_index = role_index;
	s->relation_index = relation_index;
	if (!OidIsValid(s->role_index))
		elog(ERROR, "dp_agg: dp_agg.budget has no unique index on its role");
	s->slot = table_slot_create(s->rel, NULL);
	if (for_update)
	{
		s->direct_writes = dp_write_direct_possible(s->rel);
		if (s->direct_writes)
		{
			s->write_slot = MakeSingleTupleTableSlot(desc, &TTSOpsHeapTuple);
			dp_write_cache_open(&store_cache, s->rel, &s->estate, &s->rri);
			s->index_estate = dp_write_open_indexes(s->rri);
		}
	}
	return true;
}

void
dp_budget_store_close(DpBudgetStore *s)
{
	if (s->rel == NULL)
		return;
	if (s->write_slot != NULL)
	{
		ExecDropSingleTupleTableSlot(s->write_slot);
		dp_write_close_indexes(s->rri, s->index_estate);
		s->rri->ri_RelationDesc = NULL;
	}
	ExecDropSingleTupleTableSlot(s->slot);
	table_close(s->rel, NoLock);
	s->rel = NULL;
}

/* do the SQL objects have the budget policies (version 0.4 on)? */
bool
dp_budget_store_policies(const DpBudgetStore *s)
{
	return s->att[BC_ID] != InvalidAttrNumber;
}

/* does dp_agg.budget have this column of the store? */
bool
dp_budget_store_has(const DpBudgetStore *s, const char *column)
{
	for (int c = 0; c < BC_COUNT; c++)
		if (strcmp(column_names[c], column) == 0)
			return s->att[c] != InvalidAttrNumber;
	return false;
}

/* ---------- reading ---------- */

/* ERROR for a budget row the store cannot read; detail: a literal */
#define malformed(detail) \
	ereport(ERROR, \
			(errcode(ERRCODE_DATA_CORRUPTED), \
			 errmsg("malformed row in dp_agg.budget"), \
			 errdetail(detail), \
			 errhint("Reset the budget with dp_agg.reset_budget, which keeps the ledger.")))

/* the value of a known column of the slot's row; *isnull true if absent */
static Datum
column(DpBudgetStore *s, BudgetColumn c, bool *isnull)
{
	if (s->att[c] == InvalidAttrNumber)
	{
		*isnull = true;
		return (Datum) 0;
	}
	*isnull = s->slot->tts_isnull[s->att[c] - 1];
	return s->slot->tts_values[s->att[c] - 1];
}

static double
float_or(DpBudgetStore *s, BudgetColumn c, double dflt)
{
	bool		isnull;
	Datum		d = column(s, c, &isnull);

	return isnull ? dflt : DatumGetFloat8(d);
}

/* decode the row in the store's slot */
static void
decode(DpBudgetStore *s, DpBudgetRow *row)
{
	Datum		values[DP_BUDGET_ROW_NCOLUMNS];
	bool		nulls[DP_BUDGET_ROW_NCOLUMNS];
	static const BudgetColumn basic[] = {BC_EPSILON_LIMIT, BC_DELTA_LIMIT, BC_EPSILON_SPENT,
	BC_DELTA_SPENT};
	bool		isnull;
	Datum		d;
	char	   *accounting;

	StaticAssertStmt(DP_BUDGET_ROW_NCOLUMNS == 8, "the columns of budget_row.c");
	memset(row, 0, sizeof(*row));
	slot_getallattrs(s->slot);

	d = column(s, BC_ID, &isnull);
	row->id = isnull ? 0 : DatumGetInt64(d);
	d = column(s, BC_RELATION, &isnull);
	if (!isnull)
	{
		row->kind = DP_BUDGET_RELATION;
		row->subject = DatumGetObjectId(d);
	}
	else
	{
		d = column(s, BC_ROLE, &isnull);
		if (isnull)
			malformed("A budget has neither a role nor a relation.");
		row->subject = DatumGetObjectId(d);
		d = column(s, BC_MEMBERS, &isnull);
		row->kind = (!isnull && DatumGetBool(d)) ? DP_BUDGET_GROUP : DP_BUDGET_ROLE;
	}

	/* limits, sums, curve, selections: checked as budget_row.c checks them */
	for (int i = 0; i < (int) lengthof(basic); i++)
		values[i] = column(s, basic[i], &nulls[i]);
	d = column(s, BC_ACCOUNTING, &isnull);
	if (isnull)
		malformed("A limit, an amount spent or the accounting is NULL.");
	accounting = TextDatumGetCString(d);
	values[4] = BoolGetDatum(strcmp(accounting, "rdp") == 0 || strcmp(accounting, "pld") == 0);
	nulls[4] = false;
	row->pld_accounting = strcmp(accounting, "pld") == 0;
	values[5] = column(s, BC_RDP, &nulls[5]);
	/* before 0.3 no selection was charged: the sums are 0 */
	values[6] = Float8GetDatum(0);
	values[7] = Float8GetDatum(0);
	nulls[6] = nulls[7] = false;
	if (s->att[BC_SELECTION_EPSILON] != InvalidAttrNumber)
		values[6] = column(s, BC_SELECTION_EPSILON, &nulls[6]);
	if (s->att[BC_SELECTION_DELTA] != InvalidAttrNumber)
		values[7] = column(s, BC_SELECTION_DELTA, &nulls[7]);
	dp_budget_values_decode(values, nulls, &row->b);

	/* releases by kind; spent but not counted: charged before the column existed */
	d = column(s, BC_PLD, &isnull);
	dp_pld_state_decode(d, isnull, &row->pld);
	if (isnull && (row->b.epsilon_spent > 0 || row->b.delta_spent > 0))
		row->pld.saturated = true;
	d = column(s, BC_PLD_FRONTIER, &isnull);
	dp_pld_frontier_decode(d, isnull, &row->frontier);

	d = column(s, BC_WINDOW_LENGTH, &isnull);
	if (!isnull)
	{
		Datum		tz = column(s, BC_WINDOW_TIME_ZONE, &isnull);
		char	   *zone;

		if (isnull)
			malformed("A budget's window has no time zone.");
		zone = TextDatumGetCString(tz);
		if (strlen(zone) > DP_WINDOW_TZ_MAX)
			malformed("A budget's time zone name is too long.");
		row->has_window = true;
		row->window_length = *DatumGetIntervalP(d);
		strlcpy(row->time_zone, zone, sizeof(row->time_zone));
		d = column(s, BC_WINDOW_START, &isnull);
		row->has_window_start = !isnull;
		if (!isnull)
			row->window_start = DatumGetTimestampTz(d);
	}
	row->has_lifetime = s->att[BC_LIFETIME_EPSILON_LIMIT] != InvalidAttrNumber &&
		!s->slot->tts_isnull[s->att[BC_LIFETIME_EPSILON_LIMIT] - 1];
	if (row->has_lifetime)
	{
		row->lifetime_epsilon_limit = float_or(s, BC_LIFETIME_EPSILON_LIMIT, 0);
		row->lifetime_delta_limit = float_or(s, BC_LIFETIME_DELTA_LIMIT, 0);
	}
	/* without the columns, the lifetime is the budget's one window */
	row->lifetime_epsilon_spent = float_or(s, BC_LIFETIME_EPSILON_SPENT, row->b.epsilon_spent);
	row->lifetime_delta_spent = float_or(s, BC_LIFETIME_DELTA_SPENT, row->b.delta_spent);
	if (!(row->lifetime_epsilon_spent >= 0) || !(row->lifetime_delta_spent >= 0))
		malformed("A lifetime amount spent is NaN or negative.");

	row->tid = s->slot->tts_tid;
	if (s->for_update)
		row->tuple = ExecCopySlotHeapTuple(s->slot);
}

/* the cache entry of (indexoid, key), created if create */
static LatestVersion *
latest_version(Oid indexoid, Oid key, bool create)
{
	LatestVersionKey k;

	if (latest_versions == NULL)
	{
		HASHCTL		ctl;

		if (!create)
			return NULL;
		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(LatestVersionKey);
		ctl.entrysize = sizeof(LatestVersion);
		ctl.hcxt = TopMemoryContext;
		latest_versions = hash_create("dp_agg latest budget row versions", 64, &ctl,
									  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	memset(&k, 0, sizeof(k));
	k.indexoid = indexoid;
	k.key = key;
	return hash_search(latest_versions, &k, create ? HASH_ENTER : HASH_FIND, NULL);
}

/* remember where the latest version of (indexoid, key) is */
static void
remember_version(const DpBudgetStore *s, Oid indexoid, Oid key, ItemPointer tid)
{
	LatestVersion *v;

	if (!OidIsValid(indexoid) || !ItemPointerIsValid(tid))
		return;
	v = latest_version(indexoid, key, true);
	v->relfilenode = s->rel->rd_rel->relfilenode;
	ItemPointerCopy(tid, &v->tid);
}

/*
 * The row of key at its cached TID, locked as fetch locks it; false (and
 * nothing locked) when the hint does not hold: then fetch's index path
 * decides.
 */
static bool
fetch_latest(DpBudgetStore *s, Oid indexoid, Oid key, AttrNumber keyatt)
{
	LatestVersion *v = latest_version(indexoid, key, false);
	SnapshotData dirty;
	ItemPointerData tid;
	TM_FailureData tmfd;
	Datum		d;
	bool		isnull;

	if (v == NULL || keyatt == InvalidAttrNumber ||
		v->relfilenode != s->rel->rd_rel->relfilenode)
		return false;
	ItemPointerCopy(&v->tid, &tid);
	/* a VACUUM may have truncated the table below it */
	if (ItemPointerGetBlockNumber(&tid) >= RelationGetNumberOfBlocks(s->rel))
		return false;
	InitDirtySnapshot(dirty);
	if (!table_tuple_fetch_row_version(s->rel, &tid, &dirty, s->slot))
		return false;			/* gone, pruned, or replaced by a committed version */
	if (TransactionIdIsValid(dirty.xmin) || TransactionIdIsValid(dirty.xmax))
		return false;			/* being changed: the index path waits for it */
	d = slot_getattr(s->slot, keyatt, &isnull);
	if (isnull || DatumGetObjectId(d) != key)
		return false;			/* the line pointer holds another row now */
	return table_tuple_lock(s->rel, &tid, GetActiveSnapshot(), s->slot,
							GetCurrentCommandId(false), LockTupleExclusive,
							LockWaitBlock, 0, &tmfd) == TM_Ok;
}

/*
 * Find the row whose indexed column is key; for update, lock it as SELECT
 * ... FOR UPDATE does: the latest committed version, after waiting for a
 * transaction that is changing it, so that nothing commits a change to it
 * before this transaction ends.
 */
static bool
fetch(DpBudgetStore *s, Oid indexoid, Oid key, DpBudgetRow *row)
{
	Relation	idx;
	ScanKeyData skey;
	bool		found = false;

	if (!OidIsValid(indexoid))
		return false;
	idx = index_open(indexoid, s->for_update ? RowExclusiveLock : AccessShareLock);
	ScanKeyInit(&skey, 1, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(key));
	if (!s->for_update)
	{
		IndexScanDesc scan = DP_INDEX_BEGINSCAN(s->rel, idx, GetActiveSnapshot(), 1, 0);

		index_rescan(scan, &skey, 1, NULL, 0);
		found = index_getnext_slot(scan, ForwardScanDirection, s->slot);
		index_endscan(scan);
	}
	else if (fetch_latest(s, indexoid, key,
						  indexoid == s->role_index ? s->att[BC_ROLE] : s->att[BC_RELATION]))
		found = true;
	else
	{
		for (;;)
		{
			SnapshotData dirty;
			IndexScanDesc scan;
			TransactionId wait;
			TM_FailureData tmfd;
			TM_Result	res;

			InitDirtySnapshot(dirty);
			scan = DP_INDEX_BEGINSCAN(s->rel, idx, &dirty, 1, 0);
			index_rescan(scan, &skey, 1, NULL, 0);
			found = index_getnext_slot(scan, ForwardScanDirection, s->slot);
			index_endscan(scan);
			if (!found)
				break;
			/* inserted, updated or deleted by a transaction in progress */
			wait = TransactionIdIsValid(dirty.xmin) ? dirty.xmin : dirty.xmax;
			if (TransactionIdIsValid(wait))
			{
				XactLockTableWait(wait, NULL, NULL, XLTW_None);
				continue;
			}
			res = table_tuple_lock(s->rel, &s->slot->tts_tid, GetActiveSnapshot(), s->slot,
								   GetCurrentCommandId(false), LockTupleExclusive,
								   LockWaitBlock, 0, &tmfd);
			if (res == TM_Ok)
				break;
			if (res != TM_Updated && res != TM_Deleted)
				elog(ERROR, "dp_agg: could not lock a row of dp_agg.budget (%d)", (int) res);
			/* changed since it was found: find its latest version */
		}
	}
	index_close(idx, NoLock);
	if (found)
	{
		decode(s, row);
		row->fetched_index = InvalidOid;
		if (s->for_update)
		{
			row->fetched_index = indexoid;
			row->fetched_key = key;
			remember_version(s, indexoid, key, &s->slot->tts_tid);
		}
	}
	return found;
}

/* the budget of a role (its own, or a group's), found; false if it has none */
bool
dp_budget_fetch_role(DpBudgetStore *s, Oid role, DpBudgetRow *row)
{
	return fetch(s, s->role_index, role, row);
}

/* the budget of a relation, found; false if it has none */
bool
dp_budget_fetch_relation(DpBudgetStore *s, Oid relation, DpBudgetRow *row)
{
	return fetch(s, s->relation_index, relation, row);
}

/* ---------- writing ---------- */

static Datum
jsonb_datum(const char *text)
{
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(text));
}

/* the new value of a written column; false to leave it as it is */
static bool
new_value(const DpBudgetRow *row, BudgetColumn c, bool frontier, Datum *value, bool *isnull)
{
	*isnull = false;
	switch (c)
	{
		case BC_EPSILON_SPENT:
			*value = Float8GetDatum(row->b.epsilon_spent);
			return true;
		case BC_DELTA_SPENT:
			*value = Float8GetDatum(row->b.delta_spent);
			return true;
		case BC_RDP:
			*value = dp_write_float8_array(row->b.rdp, DP_RDP_ORDERS);
			return true;
		case BC_SELECTION_EPSILON:
			*value = Float8GetDatum(row->b.selection_epsilon);
			return true;
		case BC_SELECTION_DELTA:
			*value = Float8GetDatum(row->b.selection_delta);
			return true;
		case BC_PLD:
			if (row->pld.n == 0 && !row->pld.saturated)
				*isnull = true;
			else
				*value = dp_pld_state_jsonb(&row->pld);
			return true;
		case BC_PLD_FRONTIER:
			if (!frontier)
				return false;
			*value = jsonb_datum(dp_pld_frontier_encode(&row->frontier));
			return true;
		case BC_WINDOW_START:
			*isnull = !row->has_window_start;
			*value = TimestampTzGetDatum(row->window_start);
			return row->has_window;
		case BC_LIFETIME_EPSILON_SPENT:
			*value = Float8GetDatum(row->lifetime_epsilon_spent);
			return true;
		case BC_LIFETIME_DELTA_SPENT:
			*value = Float8GetDatum(row->lifetime_delta_spent);
			return true;
		case BC_UPDATED_AT:
			*value = TimestampTzGetDatum(GetCurrentTimestamp());
			return true;
		default:
			elog(ERROR, "dp_agg: column %d of dp_agg.budget is not written", (int) c);
	}
	return false;
}

static Oid
column_type(BudgetColumn c)
{
	switch (c)
	{
		case BC_RDP:
			return FLOAT8ARRAYOID;
		case BC_PLD:
		case BC_PLD_FRONTIER:
			return JSONBOID;
		case BC_WINDOW_START:
		case BC_UPDATED_AT:
			return TIMESTAMPTZOID;
		default:
			return FLOAT8OID;
	}
}

/* the same write through SPI, for a table with triggers */
static void
write_spi(DpBudgetStore *s, const DpBudgetRow *row, bool frontier)
{
	StringInfoData sql;
	Datum		args[lengthof(written) + 1];
	Oid			types[lengthof(written) + 1];
	char		nulls[lengthof(written) + 1];
	int			n = 1;

	initStringInfo(&sql);
	appendStringInfoString(&sql, "UPDATE dp_agg.budget SET ");
	args[0] = PointerGetDatum(&row->tid);
	types[0] = TIDOID;
	nulls[0] = ' ';
	for (int i = 0; i < (int) lengthof(written); i++)
	{
		BudgetColumn c = written[i];
		bool		isnull;

		if (s->att[c] == InvalidAttrNumber || !new_value(row, c, frontier, &args[n], &isnull))
			continue;
		nulls[n] = isnull ? 'n' : ' ';
		types[n] = column_type(c);
		appendStringInfo(&sql, "%s%s = $%d", n > 1 ? ", " : "", quote_identifier(column_names[c]),
						 n + 1);
		n++;
	}
	appendStringInfoString(&sql, " WHERE ctid OPERATOR(pg_catalog.=) $1");
	if (SPI_execute_with_args(sql.data, n, types, args, nulls, false, 0) != SPI_OK_UPDATE ||
		SPI_processed != 1)
		elog(ERROR, "dp_agg: could not update a row of dp_agg.budget");
	pfree(sql.data);
}

/* can insert_index_entries fill every index of the table itself? */
static bool
plain_indexes(const ResultRelInfo *rri)
{
	for (int i = 0; i < rri->ri_NumIndices; i++)
	{
		const IndexInfo *ii = rri->ri_IndexRelationInfo[i];
		const Form_pg_index form = rri->ri_IndexRelationDescs[i]->rd_index;

		if (ii->ii_Expressions != NIL || ii->ii_Predicate != NIL || ii->ii_ExclusionOps != NULL ||
			(form->indisunique && (!form->indimmediate || !form->indisvalid)))
			return false;
	}
	return true;
}

/*
 * The index entries of a new version that could not be a HOT update, as
 * ExecInsertIndexTuples makes them, except that a unique index whose key
 * columns the write did not replace is not checked again.  The check
 * looks at every entry of the key and at the heap tuple of each, and a
 * budget row gets a new entry at almost every charge while any snapshot
 * of the database is older than its dead versions (a report, a pg_dump, a
 * session idle in a transaction: they cannot be pruned, so its page fills
 * and the updates stop being HOT): the charger's cost per charge grew with
 * the charges made since the oldest snapshot was taken (4 clients beside
 * one open REPEATABLE READ transaction: 2,925 charges/s in the first 5 s,
 * 821 after 30 s; test/bench/held_snapshot.sh, doc/performance.md).
 * Skipping it cannot let a duplicate in: the version updated was the
 * key's one live tuple and is locked by this transaction until it
 * commits, so any other insertion of the key conflicts with it, then with
 * the new version, in its own check.  That holds for a valid index only:
 * a unique index that CREATE UNIQUE INDEX CONCURRENTLY is still building
 * (or that a failed build left invalid) has not established uniqueness
 * yet, and its build adds with a check only the tuples it does not find
 * in it, so an entry made here unchecked would let a duplicate through and
 * the build succeed (test/isolation/specs/budget_index_build.spec).  A
 * table with such an index, or with one this does not know how to fill
 * (expressions, a predicate, an exclusion constraint, a deferrable unique
 * constraint), sends the whole version through ExecInsertIndexTuples, as
 * PostgreSQL does.
 */
static void
insert_index_entries(DpBudgetStore *s, TupleTableSlot *slot, const bool *replace,
					 DP_UPDATE_INDEXES_TYPE update_indexes)
{
	ResultRelInfo *rri = s->rri;

	if (!DP_UPDATE_INDEXES_ALL(update_indexes) || !plain_indexes(rri))
	{
		list_free(DP_UPDATE_INDEX_TUPLES(rri, slot, s->index_estate, update_indexes));
		return;
	}
	for (int i = 0; i < rri->ri_NumIndices; i++)
	{
		IndexInfo  *ii = rri->ri_IndexRelationInfo[i];
		Relation	index = rri->ri_IndexRelationDescs[i];
		Datum		values[INDEX_MAX_KEYS];
		bool		isnull[INDEX_MAX_KEYS];
		bool		key_unchanged = true;
		bool		unchanged = true;	/* INCLUDE columns too: the hint of index_insert */

		if (!ii->ii_ReadyForInserts)
			continue;
		for (int k = 0; k < ii->ii_NumIndexAttrs; k++)
		{
			AttrNumber	a = ii->ii_IndexAttrNumbers[k];

			if (a <= 0 || replace[a - 1])
			{
				unchanged = false;
				if (k < ii->ii_NumIndexKeyAttrs)
					key_unchanged = false;
			}
		}
		FormIndexDatum(ii, slot, s->index_estate, values, isnull);
		(void) index_insert(index, values, isnull, &slot->tts_tid, s->rel,
							index->rd_index->indisunique && !key_unchanged ? UNIQUE_CHECK_YES : UNIQUE_CHECK_NO,
							unchanged, ii);
	}
}

/*
 * Write back what a charge changes in a row read and locked by this store:
 * the amounts spent, curve, releases by kind (and with frontier the
 * frontier), window and lifetime sums.  Through SPI when the table has
 * triggers (the caller is connected to SPI).
 */
void
dp_budget_store_write(DpBudgetStore *s, const DpBudgetRow *row, bool frontier)
{
	TupleDesc	desc = RelationGetDescr(s->rel);
	Datum	   *values;
	bool	   *nulls;
	bool	   *replace;
	HeapTuple	tup;
	TupleTableSlot *slot = s->write_slot;
	DP_UPDATE_INDEXES_TYPE update_indexes;

	Assert(s->for_update && row->tuple != NULL);
	if (!s->direct_writes)
	{
		write_spi(s, row, frontier);
		return;
	}
	values = palloc0(sizeof(Datum) * desc->natts);
	nulls = palloc0(sizeof(bool) * desc->natts);
	replace = palloc0(sizeof(bool) * desc->natts);
	for (int i = 0; i < (int) lengthof(written); i++)
	{
		BudgetColumn c = written[i];
		AttrNumber	a = s->att[c];

		if (a != InvalidAttrNumber)
			replace[a - 1] = new_value(row, c, frontier, &values[a - 1], &nulls[a - 1]);
	}
	tup = heap_modify_tuple(row->tuple, desc, values, nulls, replace);
	ExecStoreHeapTuple(tup, slot, false);
	slot->tts_tableOid = RelationGetRelid(s->rel);
	if (desc->constr)
		ExecConstraints(s->rri, slot, s->estate);
	simple_table_tuple_update(s->rel, (ItemPointer) &row->tid, slot, GetActiveSnapshot(),
							  &update_indexes);
	remember_version(s, row->fetched_index, row->fetched_key, &slot->tts_tid);
	if (s->rri->ri_NumIndices > 0 && DP_UPDATE_INDEXES_NEEDED(update_indexes))
		insert_index_entries(s, slot, replace, update_indexes);
	ResetPerTupleExprContext(s->estate);
	ResetPerTupleExprContext(s->index_estate);
	ExecClearTuple(slot);
	pfree(values);
	pfree(nulls);
	pfree(replace);
}

/* ---------- windows ---------- */

/*
 * Renew the row's window if the instant at is in a later window than the
 * one it holds: its amounts spent, curve, releases by kind and sums of
 * private selections start from nothing, and the window moves to at's.
 * *end: the end of the window the row holds now.
 */
void
dp_budget_roll_window(DpBudgetRow *row, TimestampTz at, TimestampTz *end)
{
	TimestampTz start;

	if (!row->has_window)
	{
		*end = DT_NOEND;
		return;
	}
	dp_window_bounds(&row->window_length, row->time_zone, at, &start, end);
	if (row->has_window_start && row->window_start >= start)
	{
		/* the window it holds (or, the clock gone back, a later one) */
		if (row->window_start > start)
		{
			TimestampTz s2;

			dp_window_bounds(&row->window_length, row->time_zone, row->window_start, &s2, end);
		}
		return;
	}
	row->b.epsilon_spent = 0;
	row->b.delta_spent = 0;
	memset(row->b.rdp, 0, sizeof(row->b.rdp));
	row->b.selection_epsilon = 0;
	row->b.selection_delta = 0;
	memset(&row->pld, 0, sizeof(row->pld));
	row->has_window_start = true;
	row->window_start = start;
}

/* ---------- groups and caps ---------- */

/*
 * The roles a role is a member of, directly or through other roles,
 * whatever the INHERIT attribute and options of the memberships, each
 * once, nearest first (breadth first over pg_auth_members).
 */
List *
dp_role_groups(Oid role)
{
	List	   *groups = NIL;
	List	   *todo = list_make1_oid(role);

	while (todo != NIL)
	{
		Oid			member = linitial_oid(todo);
		CatCList   *list;

		todo = list_delete_first(todo);
		list = SearchSysCacheList1(AUTHMEMMEMROLE, ObjectIdGetDatum(member));
		for (int i = 0; i < list->n_members; i++)
		{
			Oid			group = ((Form_pg_auth_members) GETSTRUCT(&list->members[i]->tuple))->roleid;

			if (group != role && !list_member_oid(groups, group))
			{
				groups = lappend_oid(groups, group);
				todo = lappend_oid(todo, group);
			}
		}
		ReleaseSysCacheList(list);
	}
	return groups;
}

static const char *const cap_columns[DP_CAP_KINDS + 1] = {
	"statement_epsilon", "statement_delta", "call_epsilon", "call_delta", "role"
};

/*
 * The caps that apply to a role's statements: for each kind, the smallest
 * of the role's own and of its groups' (dp_agg.cap; none in SQL objects
 * older than 0.4).  Read with the active snapshot.
 */
void
dp_caps_of(Oid role, List *groups, DpCaps *caps)
{
	static uint64 generation = 0;
	static Oid	relid = InvalidOid;
	static AttrNumber att[DP_CAP_KINDS + 1];
	static Oid	index = InvalidOid;
	bool		fresh = generation == 0 || generation != dp_budget_catalog_generation();
	Relation	rel;
	Relation	idx;
	TupleTableSlot *slot;
	List	   *roles;
	ListCell   *lc;

	memset(caps, 0, sizeof(*caps));
	if (fresh)
		relid = catalog_relid("cap");
	if (!OidIsValid(relid))
		return;
	rel = table_open(relid, AccessShareLock);
	if (fresh || generation != dp_budget_catalog_generation())
	{
		resolve_columns(rel, cap_columns, DP_CAP_KINDS + 1, att);
		index = unique_index_on(rel, att[DP_CAP_KINDS]);
		generation = dp_budget_catalog_generation();
	}
	if (!OidIsValid(index))
		elog(ERROR, "dp_agg: dp_agg.cap has no unique index on its role");
	idx = index_open(index, AccessShareLock);
	slot = table_slot_create(rel, NULL);
	roles = lcons_oid(role, list_copy(groups));
	foreach(lc, roles)
	{
		ScanKeyData skey;
		IndexScanDesc scan;

		ScanKeyInit(&skey, 1, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(lfirst_oid(lc)));
		scan = DP_INDEX_BEGINSCAN(rel, idx, GetActiveSnapshot(), 1, 0);
		index_rescan(scan, &skey, 1, NULL, 0);
		if (index_getnext_slot(scan, ForwardScanDirection, slot))
		{
			slot_getallattrs(slot);
			for (int k = 0; k < DP_CAP_KINDS; k++)
			{
				double		v;

				if (att[k] == InvalidAttrNumber || slot->tts_isnull[att[k] - 1])
					continue;
				v = DatumGetFloat8(slot->tts_values[att[k] - 1]);
				if (isnan(v))
					ereport(ERROR,
							(errcode(ERRCODE_DATA_CORRUPTED),
							 errmsg("malformed row in dp_agg.cap"),
							 errdetail("A cap is NaN."),
							 errhint("Set the caps again with dp_agg.set_cap.")));
				if (!caps->set[k] || v < caps->cap[k])
				{
					caps->set[k] = true;
					caps->cap[k] = v;
					caps->role[k] = lfirst_oid(lc);
				}
			}
		}
		index_endscan(scan);
	}
	list_free(roles);
	ExecDropSingleTupleTableSlot(slot);
	index_close(idx, AccessShareLock);
	table_close(rel, AccessShareLock);
}
