/*-------------------------------------------------------------------------
 *
 * unit_sample.c
 *	  TABLESAMPLE on a relation with a privacy unit samples units: whether
 *	  a unit is in the sample of an execution.
 *
 * doc/sampling.md, "Subsampling".  On a relation whose rows have a privacy
 * unit, TABLESAMPLE dp_agg.secure_bernoulli (p), and BERNOULLI (p) without
 * REPEATABLE, keep each unit with all its rows, with probability
 * q = rint(2^32 p / 100) / 2^32 (BERNOULLI's rate, sampling.c), or drop it
 * with all its rows.  The rewrite of privacy units (privacy_unit.c) takes
 * the TABLESAMPLE clause off the relation and adds to the query level that
 * reads it the condition
 *
 *   dp_agg_internal.unit_sampled(unit, p, method)
 *
 * true when the first 32 bits of SipHash-2-4 (Aumasson & Bernstein 2012,
 * siphash.c) of the unit (an integer unit's value, another type's 64-bit
 * extended hash, hash_extended with seed 0), under the execution's key of
 * the sample (pick_key.c, drawn from the CSPRNG when the statement starts,
 * secret), are below rint(2^32 p / 100).
 * For a fixed unit and a uniformly random key, SipHash being a
 * pseudorandom function, the unit is kept with probability q; whether it
 * is depends on its own value only, never on the other rows, and all its
 * rows (equal under GROUP BY's equality, so of equal hash: privacy_unit.c
 * takes only unit types whose hash agrees with it) go together.  Two units
 * of equal hash are kept together; the amplification argument does not
 * need them independent (sampling.c).
 *
 * The function is internal: analysts' statements may not call it (the
 * guard refuses it at planning, and checks on the plan where it is), a
 * leader evaluates only the rewrite's calls (marked by their parse
 * location, catalog.h), and the key it reads exists only while a statement
 * that samples units runs.
 *
 * Reading only the rows of the sample.  The condition alone makes the scan
 * hand every row of the relation to the executor, which evaluates it on
 * each: a sample of units then costs well more than BERNOULLI, whose
 * sample scan hands over only the rows it keeps.  So on a plain heap table
 * (not partitioned, without inheritance children) whose unit is of a
 * fixed-length type, the rewrite also puts back a TABLESAMPLE clause, of
 * the internal method dp_agg_internal.unit_scan (percent, attnum): its
 * NextSampleTuple reads the unit of each tuple of the page the heap's
 * sample scan holds (pinned, and share-locked or already checked for
 * visibility when it asks: heapam_scan_sample_next_tuple) and offers only
 * the tuples whose unit the condition keeps, by the same decision under
 * the same key (unit_kept).  The condition stays in the scan's filter, so
 * the method can only skip rows that the condition drops: the statement
 * reads the rows of the condition alone.  Only tuples the scan's snapshot
 * sees are read: a tuple it does not see may be of another shape than the
 * relation's (one inserted by a transaction that added columns and rolled
 * back: read with today's descriptor, its bytes are taken for a length and
 * the read runs off the page) or still being written by another backend,
 * so the offsets decided are those the heap's page-at-a-time scan found
 * visible, under the page's share lock (rs_vistuples); a scan that is not
 * page-at-a-time (a snapshot that is not MVCC) is offered every offset
 * and the condition alone decides.  A fixed-length unit of a visible
 * tuple is never toasted, and the tuple stays as it is while the page is
 * pinned, so reading it cannot fail.  A sample scan is never parallel (the method is PARALLEL
 * RESTRICTED; no sample scan is partial): such a statement runs in one
 * process, as one over BERNOULLI does.  Elsewhere (partitions,
 * inheritance, other table access methods, units of varying length) the
 * condition alone decides, in parallel plans too.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/parallel.h"
#include "access/tsmapi.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "nodes/nodeFuncs.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/typcache.h"

#include "catalog.h"
#include "pick_key.h"
#include "sampling.h"
#include "siphash.h"

PG_FUNCTION_INFO_V1(dp_unit_sampled);
PG_FUNCTION_INFO_V1(dp_unit_scan_handler);

#define HINT_REWRITE_ONLY "The rewrite of privacy units makes its calls (see \"Subsampling\" in dp_agg's doc/sampling.md)."

/* the decision of a sample of units: the key and how a unit is hashed */
typedef struct UnitDecision
{
	DpSipKey	key;
	Oid			type;			/* the unit's type (its domain's base type) */
	FmgrInfo	hash;			/* its extended hash function */
	Oid			collation;
	float4		percent;		/* the percentage of the cutoff below */
	uint64		cutoff;
} UnitDecision;

/*
 * Only the rewrite's calls and clauses, which carry its mark (catalog.h):
 * one an analyst wrote would tell which units the sample of a statement
 * still running kept.
 */
static void
check_mark(Node *marked, bool mark_reaches, bool scan)
{
	int			location = -1;

	if (marked != NULL && IsA(marked, FuncExpr))
		location = ((FuncExpr *) marked)->location;
	else if (marked != NULL && IsA(marked, Const))
		location = ((Const *) marked)->location;
	if (marked != NULL && (!mark_reaches || location == DP_UNIT_LOCATION))
		return;
	if (scan)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("TABLESAMPLE dp_agg_internal.unit_scan runs only in statements rewritten by dp_agg"),
				 errdetail("It reads the rows of the privacy units the sample of one statement keeps."),
				 errhint("Write TABLESAMPLE dp_agg.secure_bernoulli (p) on a relation with a privacy unit (see \"Subsampling\" in dp_agg's doc/sampling.md).")));
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("dp_agg_internal.unit_sampled runs only in statements rewritten by dp_agg"),
			 errdetail("It decides which privacy units the sample of one statement keeps."),
			 errhint(HINT_REWRITE_ONLY)));
}

/*
 * Set up the decision for units of type type and collation, under this
 * execution's key of the sample, in cxt.
 */
static void
decision_init(UnitDecision *d, Oid type, Oid collation, MemoryContext cxt)
{
	TypeCacheEntry *tc;
	uint8		key[DP_SIPHASH_KEY_LEN];

	d->type = getBaseType(type);
	tc = lookup_type_cache(d->type, TYPECACHE_HASH_EXTENDED_PROC_FINFO);
	/* privacy_unit.c samples only units of such types */
	if (!OidIsValid(tc->hash_extended_proc_finfo.fn_oid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("could not identify an extended hash function for type %s",
						format_type_be(type)),
				 errdetail("The sample of privacy units hashes each unit."),
				 errhint(HINT_REWRITE_ONLY)));
	fmgr_info_copy(&d->hash, &tc->hash_extended_proc_finfo, cxt);
	d->collation = collation;
	d->percent = -1;
	dp_sample_key_read(key);
	dp_siphash_key(key, &d->key);
	explicit_bzero(key, sizeof(key));
}

static inline void
decision_percent(UnitDecision *d, float4 percent)
{
	if (percent != d->percent)
	{
		d->cutoff = dp_bernoulli_cutoff(percent);
		d->percent = percent;
	}
}

/*
 * The message of a unit: an integer's own value (equal units, equal
 * values), else its 64-bit extended hash, seed 0 (equal under the type's
 * equality, equal hashes: privacy_unit.c checks that the hash agrees with
 * the equality level 1 groups units by).
 */
static inline uint64
unit_message(UnitDecision *d, Datum unit)
{
	switch (d->type)
	{
		case INT2OID:
			return (uint64) (int64) DatumGetInt16(unit);
		case INT4OID:
			return (uint64) (int64) DatumGetInt32(unit);
		case INT8OID:
			return (uint64) DatumGetInt64(unit);
		default:
			return DatumGetUInt64(FunctionCall2Coll(&d->hash, d->collation, unit,
													UInt64GetDatum(0)));
	}
}

/* is the (non-NULL) unit in this execution's sample? */
static inline bool
unit_kept(UnitDecision *d, Datum unit)
{
	return (dp_siphash24_word(&d->key, unit_message(d, unit)) >> 32) < d->cutoff;
}

/*
 * dp_agg_internal.unit_sampled(unit anyelement, percent real, method integer)
 * returns boolean, strict: is the unit in this execution's sample?  The
 * method (DP_UNIT_SAMPLE_*) is what the statement wrote, for the ledger.
 */
Datum
dp_unit_sampled(PG_FUNCTION_ARGS)
{
	FmgrInfo   *flinfo = fcinfo->flinfo;
	UnitDecision *d = (UnitDecision *) flinfo->fn_extra;

	if (unlikely(d == NULL))
	{
		FuncExpr   *fexpr = (FuncExpr *) flinfo->fn_expr;

		/*
		 * The mark does not reach a parallel worker's plan, which the guard
		 * checks instead (plan_units.c: the function only as the filter of
		 * the scans of a sample).
		 */
		check_mark((Node *) fexpr, !IsParallelWorker(), false);
		if (!IsA(fexpr, FuncExpr))
			check_mark(NULL, true, false);
		d = MemoryContextAllocZero(flinfo->fn_mcxt, sizeof(UnitDecision));
		decision_init(d, exprType(linitial(fexpr->args)),
					  exprCollation(linitial(fexpr->args)), flinfo->fn_mcxt);
		flinfo->fn_extra = d;
	}
	decision_percent(d, PG_GETARG_FLOAT4(1));
	PG_RETURN_BOOL(unit_kept(d, PG_GETARG_DATUM(0)));
}

/* ---------- the TABLESAMPLE method dp_agg_internal.unit_scan ---------- */

typedef struct UnitScanState
{
	UnitDecision d;
	bool		ready;			/* d is set up */
	AttrNumber	attnum;			/* the unit column */
	TupleDesc	tupdesc;		/* the relation's */
	/* the current page: the offsets of its tuples the sample keeps */
	int			nkept;
	int			next;			/* the next of kept[] to offer */
	OffsetNumber kept[MaxHeapTuplesPerPage];
	/* scratch: the messages of the page's units, then their hashes */
	uint64		words[MaxHeapTuplesPerPage];
} UnitScanState;

static void
us_initsamplescan(SampleScanState *node, int eflags)
{
	node->tsm_state = palloc0(sizeof(UnitScanState));
}

/*
 * The parameters: the percentage, and the unit column's number, a constant
 * the rewrite marked (an analyst's TABLESAMPLE clause never carries the
 * mark).  The plan's guard checked that they are those of the condition in
 * the same scan's filter (plan_units.c).
 */
static void
us_beginsamplescan(SampleScanState *node, Datum *params, int nparams, uint32 seed)
{
	UnitScanState *st = (UnitScanState *) node->tsm_state;
	SampleScan *plan = (SampleScan *) node->ss.ps.plan;
	Relation	rel = node->ss.ss_currentRelation;
	Form_pg_attribute att;

	if (list_length(plan->tablesample->args) != 2)
		check_mark(NULL, true, true);
	check_mark(lsecond(plan->tablesample->args), true, true);
	st->attnum = DatumGetInt16(params[1]);
	st->tupdesc = RelationGetDescr(rel);
	if (st->attnum < 1 || st->attnum > st->tupdesc->natts ||
		rel->rd_rel->relkind != RELKIND_RELATION ||
		rel->rd_rel->relam != HEAP_TABLE_AM_OID)
		elog(ERROR, "dp_agg: unit_scan of a relation it cannot read");
	att = TupleDescAttr(st->tupdesc, st->attnum - 1);
	if (att->attisdropped || att->attlen <= 0)
		elog(ERROR, "dp_agg: unit_scan of a column it cannot read");
	if (!st->ready)
	{
		decision_init(&st->d, att->atttypid, att->attcollation, CurrentMemoryContext);
		st->ready = true;
	}
	decision_percent(&st->d, DatumGetFloat4(params[0]));
	st->next = -1;
	node->use_bulkread = true;
	node->use_pagemode = true;
}

/*
 * The tuples of a page whose units the sample keeps, in kept[], among the
 * nvisible tuples at the offsets visible[] the heap scan found visible
 * (in order).  The page is the heap scan's current buffer, pinned while
 * the scan asks for its tuples; a fixed-length unit is read in place.  A
 * NULL unit is never kept (the condition is unit IS NOT NULL AND
 * unit_sampled).  The messages of the page are hashed together
 * (dp_siphash24_word_batch): the same decision as unit_kept.
 */
static void
decide_page(UnitScanState *st, Page page, const OffsetNumber *visible, int nvisible)
{
	int			n = 0;

	for (int i = 0; i < nvisible; i++)
	{
		OffsetNumber off = visible[i];
		ItemId		id = PageGetItemId(page, off);
		HeapTupleData tuple;
		Datum		unit;
		bool		isnull;

		if (!ItemIdIsNormal(id))
			elog(ERROR, "dp_agg: unit_scan found no tuple at a visible offset");
		tuple.t_data = (HeapTupleHeader) PageGetItem(page, id);
		tuple.t_len = ItemIdGetLength(id);
		unit = heap_getattr(&tuple, st->attnum, st->tupdesc, &isnull);
		if (isnull)
			continue;
		st->kept[n] = off;
		st->words[n] = unit_message(&st->d, unit);
		n++;
	}
	/* hashed in place; kept[] compacted in place to the tuples kept */
	dp_siphash24_word_batch(&st->d.key, st->words, st->words, n);
	st->nkept = 0;
	for (int i = 0; i < n; i++)
	{
		st->kept[st->nkept] = st->kept[i];
		st->nkept += (st->words[i] >> 32) < st->d.cutoff;
	}
	st->next = 0;
}

/*
 * The next tuple of the page whose unit the sample keeps; the first call
 * of a page (the scan asks until InvalidOffsetNumber, page after page)
 * decides the whole page.
 */
static OffsetNumber
us_nextsampletuple(SampleScanState *node, BlockNumber blockno, OffsetNumber maxoffset)
{
	UnitScanState *st = (UnitScanState *) node->tsm_state;

	if (st->next < 0)
	{
		HeapScanDesc hscan = (HeapScanDesc) node->ss.ss_currentScanDesc;

		Assert(BufferGetBlockNumber(hscan->rs_cbuf) == blockno);
		if (hscan->rs_base.rs_flags & SO_ALLOW_PAGEMODE)
			decide_page(st, BufferGetPage(hscan->rs_cbuf), hscan->rs_vistuples,
						(int) hscan->rs_ntuples);
		else
		{
			/* visibility not decided yet: every offset, the condition decides */
			st->nkept = 0;
			for (OffsetNumber off = FirstOffsetNumber; off <= maxoffset; off++)
				st->kept[st->nkept++] = off;
			st->next = 0;
		}
	}
	if (st->next < st->nkept)
		return st->kept[st->next++];
	st->next = -1;
	return InvalidOffsetNumber;
}

/* dp_agg_internal.unit_scan(internal) returns tsm_handler */
Datum
dp_unit_scan_handler(PG_FUNCTION_ARGS)
{
	TsmRoutine *tsm = makeNode(TsmRoutine);

	tsm->parameterTypes = list_make2_oid(FLOAT4OID, INT2OID);
	/* a new key for each execution; the same rows for each scan of one */
	tsm->repeatable_across_queries = false;
	tsm->repeatable_across_scans = true;
	tsm->SampleScanGetSampleSize = dp_bernoulli_sample_size;
	tsm->InitSampleScan = us_initsamplescan;
	tsm->BeginSampleScan = us_beginsamplescan;
	tsm->NextSampleBlock = NULL;
	tsm->NextSampleTuple = us_nextsampletuple;
	tsm->EndSampleScan = NULL;
	PG_RETURN_POINTER(tsm);
}
