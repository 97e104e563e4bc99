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
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "catalog.h"
#include "pick_key.h"
#include "sampling.h"
#include "siphash.h"

PG_FUNCTION_INFO_V1(dp_unit_sampled);

#define HINT_REWRITE_ONLY "The rewrite of privacy units makes its calls (see \"Subsampling\" in dp_agg's doc/sampling.md)."

/* what one call site needs, kept for the execution in fn_extra */
typedef struct SampleCache
{
	DpSipKey	key;
	Oid			type;			/* the unit's type (its domain's base type) */
	FmgrInfo	hash;			/* its extended hash function */
	Oid			collation;
	float4		percent;		/* the percentage of the cutoff below */
	uint64		cutoff;
} SampleCache;

static SampleCache *
sample_cache(FunctionCallInfo fcinfo)
{
	FmgrInfo   *flinfo = fcinfo->flinfo;
	FuncExpr   *fexpr = (FuncExpr *) flinfo->fn_expr;
	SampleCache *sc;
	TypeCacheEntry *tc;

	if (flinfo->fn_extra != NULL)
		return (SampleCache *) flinfo->fn_extra;

	/*
	 * Only the rewrite's calls: one an analyst wrote would tell which units
	 * the sample of a statement still running kept.  The mark does not
	 * reach a parallel worker's plan, which the guard checks instead
	 * (plan_units.c: the function only as the filter of the scans of a sample).
	 */
	if (fexpr == NULL || !IsA(fexpr, FuncExpr) ||
		(!IsParallelWorker() && fexpr->location != DP_UNIT_LOCATION))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("dp_agg_internal.unit_sampled runs only in statements rewritten by dp_agg"),
				 errdetail("It decides which privacy units the sample of one statement keeps."),
				 errhint(HINT_REWRITE_ONLY)));
	sc = MemoryContextAllocZero(flinfo->fn_mcxt, sizeof(SampleCache));
	sc->type = getBaseType(exprType(linitial(fexpr->args)));
	tc = lookup_type_cache(sc->type, TYPECACHE_HASH_EXTENDED_PROC_FINFO);
	/* privacy_unit.c samples only units of such types */
	if (!OidIsValid(tc->hash_extended_proc_finfo.fn_oid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("could not identify an extended hash function for type %s",
						format_type_be(exprType(linitial(fexpr->args)))),
				 errdetail("The sample of privacy units hashes each unit."),
				 errhint(HINT_REWRITE_ONLY)));
	fmgr_info_copy(&sc->hash, &tc->hash_extended_proc_finfo, flinfo->fn_mcxt);
	sc->collation = exprCollation(linitial(fexpr->args));
	sc->percent = -1;
	{
		uint8		key[DP_SIPHASH_KEY_LEN];

		dp_sample_key_read(key);
		dp_siphash_key(key, &sc->key);
		explicit_bzero(key, sizeof(key));
	}
	flinfo->fn_extra = sc;
	return sc;
}

/*
 * The message of a unit: an integer's own value (equal units, equal
 * values), else its 64-bit extended hash, seed 0 (equal under the type's
 * equality, equal hashes: privacy_unit.c checks that the hash agrees with
 * the equality level 1 groups units by).
 */
static uint64
unit_message(SampleCache *sc, Datum unit)
{
	switch (sc->type)
	{
		case INT2OID:
			return (uint64) (int64) DatumGetInt16(unit);
		case INT4OID:
			return (uint64) (int64) DatumGetInt32(unit);
		case INT8OID:
			return (uint64) DatumGetInt64(unit);
		default:
			return DatumGetUInt64(FunctionCall2Coll(&sc->hash, sc->collation, unit,
													UInt64GetDatum(0)));
	}
}

/*
 * dp_agg_internal.unit_sampled(unit anyelement, percent real, method integer)
 * returns boolean, strict: is the unit in this execution's sample?  The
 * method (DP_UNIT_SAMPLE_*) is what the statement wrote, for the ledger.
 */
Datum
dp_unit_sampled(PG_FUNCTION_ARGS)
{
	SampleCache *sc = sample_cache(fcinfo);
	float4		percent = PG_GETARG_FLOAT4(1);

	if (percent != sc->percent)
	{
		sc->cutoff = dp_bernoulli_cutoff(percent);
		sc->percent = percent;
	}
	PG_RETURN_BOOL((dp_siphash24_word(&sc->key, unit_message(sc, PG_GETARG_DATUM(0))) >> 32)
				   < sc->cutoff);
}
