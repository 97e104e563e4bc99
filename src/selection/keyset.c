/*-------------------------------------------------------------------------
 *
 * keyset.c
 *	  The key set of a public domain: its keys, carried in a plan as one
 *	  bytea constant, and the index of a row's key in it.
 *
 * doc/units-and-groups.md, "Public group keys".  A DP statement whose GROUP BY
 * keys have a public domain groups its rows by the index of their key in the
 * domain (public_domain.c): dp_agg_internal.domain_index(keyset, key, ...) is that
 * index, NULL for a key outside the domain, and dp_agg_internal.domain_key(keyset,
 * index, column, NULL::type) the domain's own key of an index, which the
 * statement releases (never a row's spelling of it: 1.0 and 1.00 are equal
 * numerics, and a group would otherwise show the spelling of whichever of
 * its rows came first).
 *
 * The constant is made at planning from the domain's keys, each in its
 * type's binary send format: a header (a magic number, the number of
 * columns, of hashed columns and of keys; each column's type, typmod and
 * collation), then for each key and column a null flag and the value's
 * length and bytes.  Nothing in it is trusted when it is read: the values
 * are decoded by their types' binary receive functions, which validate
 * their input as COPY BINARY does, into datums, and the hash table of the
 * hashed columns is built from them, with the type's default hash function
 * and equality (the GROUP BY's, public_domain.c checks); so a constant
 * written by hand in a statement can only fail to decode.
 *
 * Opening a key set takes time in its size.  So that this time does not
 * depend on the rows (opened at the first row that reaches the key, it
 * would tell whether any row does), the executor's start opens the key
 * sets of a plan before any row is read and registers them by the address
 * of their constant (domain_exec.c, dp_keyset_register); the functions
 * find them there, and open a key set themselves only when it is not
 * registered (a statement written by hand).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "compat.h"
#include "keyset.h"

PG_FUNCTION_INFO_V1(dp_domain_index);
PG_FUNCTION_INFO_V1(dp_domain_key);

#define KEYSET_MAGIC 0x44504b31	/* "DPK1" */
/* most columns of a key set (the GROUP BY keys and the listed columns) */
#define KEYSET_MAX_COLUMNS 64
/* the hash of a NULL key column */
#define KEYSET_NULL_HASH 0x9e3779b9

struct DpKeysetBuilder
{
	int			ncols;
	int			nhashed;
	int			ntuples;
	DpKeysetColumn *cols;
	FmgrInfo   *send;
	StringInfoData tuples;
};

struct DpKeyset
{
	int			ncols;
	int			nhashed;
	int			ntuples;
	DpKeysetColumn *cols;
	Datum	   *values;			/* ntuples * ncols */
	bool	   *nulls;
	int16	   *typlen;
	bool	   *typbyval;
	FmgrInfo   *hash;			/* per hashed column */
	FmgrInfo   *eq;
	uint32	   *hashes;			/* per key */
	int32	   *slots;			/* key index + 1, 0 empty */
	uint32		mask;
	int			duplicate;		/* a key equal to an earlier one, or -1 */
};

/* ---------- types ---------- */

/*
 * Can a key of this type be in a key set: a binary send and receive
 * function, a default hash function and equality, and no nondeterministic
 * collation (equal strings of different bytes would be one group with the
 * spelling of its first row)?
 */
bool
dp_keyset_type_ok(Oid type, Oid collation)
{
	TypeCacheEntry *tc;
	HeapTuple	tup;
	bool		io;

	if (get_typlen(type) == -2)
		return false;
	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(type));
	if (!HeapTupleIsValid(tup))
		return false;
	io = OidIsValid(((Form_pg_type) GETSTRUCT(tup))->typsend) &&
		OidIsValid(((Form_pg_type) GETSTRUCT(tup))->typreceive);
	ReleaseSysCache(tup);
	if (!io)
		return false;
	tc = lookup_type_cache(type, TYPECACHE_HASH_PROC | TYPECACHE_EQ_OPR);
	if (!OidIsValid(tc->hash_proc) || !OidIsValid(tc->eq_opr))
		return false;
	return !OidIsValid(collation) || get_collation_isdeterministic(collation);
}

/* ---------- building, at planning ---------- */

DpKeysetBuilder *
dp_keyset_begin(int ncols, int nhashed, const DpKeysetColumn *cols)
{
	DpKeysetBuilder *b = palloc0(sizeof(DpKeysetBuilder));

	if (ncols < 1 || ncols > KEYSET_MAX_COLUMNS || nhashed < 1 || nhashed > ncols)
		elog(ERROR, "dp_agg: key set of %d columns, %d hashed", ncols, nhashed);
	b->ncols = ncols;
	b->nhashed = nhashed;
	b->cols = palloc(sizeof(DpKeysetColumn) * ncols);
	memcpy(b->cols, cols, sizeof(DpKeysetColumn) * ncols);
	b->send = palloc0(sizeof(FmgrInfo) * ncols);
	for (int i = 0; i < ncols; i++)
	{
		Oid			sendfn;
		bool		varlena;

		if (!dp_keyset_type_ok(cols[i].type, cols[i].collation))
			elog(ERROR, "dp_agg: type %s cannot be a public key", format_type_be(cols[i].type));
		getTypeBinaryOutputInfo(cols[i].type, &sendfn, &varlena);
		fmgr_info(sendfn, &b->send[i]);
	}
	initStringInfo(&b->tuples);
	return b;
}

void
dp_keyset_add(DpKeysetBuilder *b, const Datum *values, const bool *nulls)
{
	if (b->ntuples >= DP_KEYSET_MAX_KEYS)
		elog(ERROR, "dp_agg: key set of more than %d keys", DP_KEYSET_MAX_KEYS);
	for (int i = 0; i < b->ncols; i++)
	{
		uint8		isnull = nulls[i] ? 1 : 0;

		appendBinaryStringInfo(&b->tuples, (char *) &isnull, 1);
		if (!nulls[i])
		{
			bytea	   *v = SendFunctionCall(&b->send[i], values[i]);
			int32		len = VARSIZE(v) - VARHDRSZ;

			appendBinaryStringInfo(&b->tuples, (char *) &len, sizeof(len));
			appendBinaryStringInfo(&b->tuples, VARDATA(v), len);
		}
	}
	b->ntuples++;
}

int
dp_keyset_count(const DpKeysetBuilder *b)
{
	return b->ntuples;
}

/*
 * The key set as a bytea; *duplicate is the number of a key equal (in its
 * hashed columns) to an earlier one, -1 if there is none.
 */
bytea *
dp_keyset_finish(DpKeysetBuilder *b, int *duplicate)
{
	StringInfoData s;
	uint32		magic = KEYSET_MAGIC;
	bytea	   *result;
	DpKeyset   *ks;

	initStringInfo(&s);
	appendStringInfoSpaces(&s, VARHDRSZ);
	appendBinaryStringInfo(&s, (char *) &magic, sizeof(magic));
	appendBinaryStringInfo(&s, (char *) &b->ncols, sizeof(int));
	appendBinaryStringInfo(&s, (char *) &b->nhashed, sizeof(int));
	appendBinaryStringInfo(&s, (char *) &b->ntuples, sizeof(int));
	for (int i = 0; i < b->ncols; i++)
	{
		appendBinaryStringInfo(&s, (char *) &b->cols[i].type, sizeof(Oid));
		appendBinaryStringInfo(&s, (char *) &b->cols[i].typmod, sizeof(int32));
		appendBinaryStringInfo(&s, (char *) &b->cols[i].collation, sizeof(Oid));
	}
	appendBinaryStringInfo(&s, b->tuples.data, b->tuples.len);
	result = (bytea *) s.data;
	SET_VARSIZE(result, s.len);
	ks = dp_keyset_open(result, CurrentMemoryContext);
	*duplicate = ks->duplicate;
	return result;
}

/* ---------- reading ---------- */

static void
corrupt(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
			 errmsg("invalid key set of a public domain")));
}

/* len bytes at *p, within end */
static const char *
take(const char **p, const char *end, size_t len)
{
	const char *r = *p;

	if (len > (size_t) (end - *p))
		corrupt();
	*p += len;
	return r;
}

/* the hash of a key's hashed columns */
static uint32
key_hash(const DpKeyset *ks, const Datum *values, const bool *nulls)
{
	uint32		h = 0;

	for (int i = 0; i < ks->nhashed; i++)
	{
		uint32		c = nulls[i] ? KEYSET_NULL_HASH
			: DatumGetUInt32(FunctionCall1Coll(&ks->hash[i], ks->cols[i].collation, values[i]));

		h = hash_combine(h, c);
	}
	return h;
}

static bool
key_equal(const DpKeyset *ks, int index, const Datum *values, const bool *nulls)
{
	const Datum *kv = &ks->values[index * ks->ncols];
	const bool *kn = &ks->nulls[index * ks->ncols];

	for (int i = 0; i < ks->nhashed; i++)
	{
		if (kn[i] || nulls[i])
		{
			if (kn[i] != nulls[i])
				return false;
			continue;
		}
		if (!DatumGetBool(FunctionCall2Coll(&ks->eq[i], ks->cols[i].collation, kv[i], values[i])))
			return false;
	}
	return true;
}

/* the index of a key, -1 if it is not in the set */
int
dp_keyset_lookup(const DpKeyset *ks, const Datum *values, const bool *nulls)
{
	uint32		h = key_hash(ks, values, nulls);

	for (uint32 i = h & ks->mask;; i = (i + 1) & ks->mask)
	{
		int32		slot = ks->slots[i];

		if (slot == 0)
			return -1;
		if (ks->hashes[slot - 1] == h && key_equal(ks, slot - 1, values, nulls))
			return slot - 1;
	}
}

/* the number of keys of a key set, from its header alone */
int
dp_keyset_header_keys(bytea *raw)
{
	const char *p = VARDATA_ANY(raw);
	const char *end = p + VARSIZE_ANY_EXHDR(raw);
	uint32		magic;
	int			ntuples;

	memcpy(&magic, take(&p, end, sizeof(magic)), sizeof(magic));
	(void) take(&p, end, 2 * sizeof(int));
	memcpy(&ntuples, take(&p, end, sizeof(int)), sizeof(int));
	if (magic != KEYSET_MAGIC || ntuples < 0 || ntuples > DP_KEYSET_MAX_KEYS)
		corrupt();
	return ntuples;
}

/*
 * Decode a key set into cxt: every value through its type's receive
 * function, then the hash table of the hashed columns (see the file's
 * comment).
 */
DpKeyset *
dp_keyset_open(bytea *raw, MemoryContext cxt)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(cxt);
	DpKeyset   *ks = palloc0(sizeof(DpKeyset));
	const char *p = VARDATA_ANY(raw);
	const char *end = p + VARSIZE_ANY_EXHDR(raw);
	uint32		magic;
	FmgrInfo   *recv;
	Oid		   *ioparam;
	uint32		nslots = 8;

	memcpy(&magic, take(&p, end, sizeof(magic)), sizeof(magic));
	memcpy(&ks->ncols, take(&p, end, sizeof(int)), sizeof(int));
	memcpy(&ks->nhashed, take(&p, end, sizeof(int)), sizeof(int));
	memcpy(&ks->ntuples, take(&p, end, sizeof(int)), sizeof(int));
	if (magic != KEYSET_MAGIC || ks->ncols < 1 || ks->ncols > KEYSET_MAX_COLUMNS ||
		ks->nhashed < 1 || ks->nhashed > ks->ncols ||
		ks->ntuples < 0 || ks->ntuples > DP_KEYSET_MAX_KEYS)
		corrupt();
	ks->cols = palloc(sizeof(DpKeysetColumn) * ks->ncols);
	ks->typlen = palloc(sizeof(int16) * ks->ncols);
	ks->typbyval = palloc(sizeof(bool) * ks->ncols);
	ks->hash = palloc0(sizeof(FmgrInfo) * ks->nhashed);
	ks->eq = palloc0(sizeof(FmgrInfo) * ks->nhashed);
	recv = palloc0(sizeof(FmgrInfo) * ks->ncols);
	ioparam = palloc(sizeof(Oid) * ks->ncols);
	for (int i = 0; i < ks->ncols; i++)
	{
		DpKeysetColumn *c = &ks->cols[i];
		Oid			recvfn;

		memcpy(&c->type, take(&p, end, sizeof(Oid)), sizeof(Oid));
		memcpy(&c->typmod, take(&p, end, sizeof(int32)), sizeof(int32));
		memcpy(&c->collation, take(&p, end, sizeof(Oid)), sizeof(Oid));
		if (!dp_keyset_type_ok(c->type, c->collation))
			corrupt();
		get_typlenbyval(c->type, &ks->typlen[i], &ks->typbyval[i]);
		getTypeBinaryInputInfo(c->type, &recvfn, &ioparam[i]);
		fmgr_info(recvfn, &recv[i]);
		if (i < ks->nhashed)
		{
			TypeCacheEntry *tc = lookup_type_cache(c->type, TYPECACHE_HASH_PROC | TYPECACHE_EQ_OPR);

			fmgr_info(tc->hash_proc, &ks->hash[i]);
			fmgr_info(get_opcode(tc->eq_opr), &ks->eq[i]);
		}
	}
	/* each value takes at least its null flag: no allocation beyond the input's size */
	if ((int64) ks->ntuples * ks->ncols > (int64) (end - p))
		corrupt();
	ks->values = palloc(sizeof(Datum) * Max(ks->ntuples, 1) * ks->ncols);
	ks->nulls = palloc(sizeof(bool) * Max(ks->ntuples, 1) * ks->ncols);
	for (int t = 0; t < ks->ntuples; t++)
	{
		for (int i = 0; i < ks->ncols; i++)
		{
			int			at = t * ks->ncols + i;
			uint8		isnull = *(const uint8 *) take(&p, end, 1);
			int32		len;
			StringInfoData buf;

			if (isnull > 1)
				corrupt();
			ks->nulls[at] = isnull;
			ks->values[at] = (Datum) 0;
			if (isnull)
				continue;
			memcpy(&len, take(&p, end, sizeof(len)), sizeof(len));
			if (len < 0)
				corrupt();
			initStringInfo(&buf);
			appendBinaryStringInfo(&buf, take(&p, end, len), len);
			ks->values[at] = ReceiveFunctionCall(&recv[i], &buf, ioparam[i], ks->cols[i].typmod);
			pfree(buf.data);
		}
		CHECK_FOR_INTERRUPTS();
	}
	if (p != end)
		corrupt();

	while (nslots < 2 * (uint32) ks->ntuples)
		nslots *= 2;
	ks->mask = nslots - 1;
	ks->slots = palloc0(sizeof(int32) * nslots);
	ks->hashes = palloc(sizeof(uint32) * Max(ks->ntuples, 1));
	ks->duplicate = -1;
	for (int t = 0; t < ks->ntuples; t++)
	{
		const Datum *v = &ks->values[t * ks->ncols];
		const bool *n = &ks->nulls[t * ks->ncols];

		if (ks->duplicate < 0 && dp_keyset_lookup(ks, v, n) >= 0)
		{
			ks->duplicate = t;
			continue;
		}
		ks->hashes[t] = key_hash(ks, v, n);
		for (uint32 i = ks->hashes[t] & ks->mask;; i = (i + 1) & ks->mask)
		{
			if (ks->slots[i] == 0)
			{
				ks->slots[i] = t + 1;
				break;
			}
		}
	}
	MemoryContextSwitchTo(oldcxt);
	return ks;
}

int
dp_keyset_size(const DpKeyset *ks)
{
	return ks->ntuples;
}

int
dp_keyset_columns(const DpKeyset *ks)
{
	return ks->ncols;
}

int
dp_keyset_hashed(const DpKeyset *ks)
{
	return ks->nhashed;
}

const DpKeysetColumn *
dp_keyset_column(const DpKeyset *ks, int col)
{
	return &ks->cols[col];
}

/* the value of column col of key index (a datum of the key set's memory) */
Datum
dp_keyset_value(const DpKeyset *ks, int index, int col, bool *isnull)
{
	if (index < 0 || index >= ks->ntuples || col < 0 || col >= ks->ncols)
		elog(ERROR, "dp_agg: key %d, column %d of a key set of %d keys", index, col, ks->ntuples);
	*isnull = ks->nulls[index * ks->ncols + col];
	return ks->values[index * ks->ncols + col];
}

/* ---------- key sets opened at the executor's start ---------- */

typedef struct Registered
{
	const void *datum;			/* the key set constant's bytes */
	DpKeyset   *ks;
	struct Registered *next;
	MemoryContextCallback callback;
} Registered;

static Registered *registered = NULL;

static void
unregister(void *arg)
{
	for (Registered **p = &registered; *p != NULL; p = &(*p)->next)
	{
		if (*p == arg)
		{
			*p = (*p)->next;
			return;
		}
	}
}

/*
 * Register a key set opened for the constant at datum, for as long as cxt
 * lives (an execution's: domain_exec.c).
 */
void
dp_keyset_register(const void *datum, DpKeyset *ks, MemoryContext cxt)
{
	Registered *r = MemoryContextAllocZero(cxt, sizeof(Registered));

	r->datum = datum;
	r->ks = ks;
	r->callback.func = unregister;
	r->callback.arg = r;
	MemoryContextRegisterResetCallback(cxt, &r->callback);
	r->next = registered;
	registered = r;
}

/* ---------- the SQL functions ---------- */

typedef struct CallCache
{
	const void *datum;
	DpKeyset   *ks;
	bool		checked;		/* the argument types were checked */
	Datum	   *values;
	bool	   *nulls;
} CallCache;

/* the key set of argument 0, opened once per call site */
static CallCache *
call_keyset(FunctionCallInfo fcinfo)
{
	CallCache  *cc = (CallCache *) fcinfo->flinfo->fn_extra;
	bytea	   *raw;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the key set of a public domain must not be NULL")));
	raw = PG_GETARG_BYTEA_PP(0);
	if (cc != NULL && cc->datum == (const void *) raw)
		return cc;
	if (cc == NULL)
		cc = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(CallCache));
	cc->datum = raw;
	cc->checked = false;
	cc->ks = NULL;
	for (Registered *r = registered; r != NULL; r = r->next)
		if (r->datum == (const void *) raw)
			cc->ks = r->ks;
	if (cc->ks == NULL)
		cc->ks = dp_keyset_open(raw, fcinfo->flinfo->fn_mcxt);
	if (cc->values == NULL)
	{
		cc->values = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(Datum) * KEYSET_MAX_COLUMNS);
		cc->nulls = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(bool) * KEYSET_MAX_COLUMNS);
	}
	fcinfo->flinfo->fn_extra = cc;
	return cc;
}

static void
mismatch(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("the keys do not match the key set of the public domain")));
}

/*
 * dp_agg_internal.domain_index(keyset bytea, VARIADIC "any") returns integer: the
 * index of the key (the hashed columns, in order) in the key set, NULL if
 * it is not there
 */
Datum
dp_domain_index(PG_FUNCTION_ARGS)
{
	CallCache  *cc = call_keyset(fcinfo);
	const DpKeyset *ks = cc->ks;
	int			index;

	if (!cc->checked)
	{
		if (PG_NARGS() != ks->nhashed + 1)
			mismatch();
		for (int i = 0; i < ks->nhashed; i++)
			if (get_fn_expr_argtype(fcinfo->flinfo, i + 1) != ks->cols[i].type)
				mismatch();
		cc->checked = true;
	}
	for (int i = 0; i < ks->nhashed; i++)
	{
		cc->nulls[i] = PG_ARGISNULL(i + 1);
		cc->values[i] = cc->nulls[i] ? (Datum) 0 : PG_GETARG_DATUM(i + 1);
	}
	index = dp_keyset_lookup(ks, cc->values, cc->nulls);
	if (index < 0)
		PG_RETURN_NULL();
	PG_RETURN_INT32(index);
}

/*
 * dp_agg_internal.domain_key(keyset bytea, index integer, col integer, anyelement)
 * returns anyelement: column col of key index of the key set (the last
 * argument, a NULL of the column's type, gives the result its type)
 */
Datum
dp_domain_key(PG_FUNCTION_ARGS)
{
	CallCache  *cc = call_keyset(fcinfo);
	const DpKeyset *ks = cc->ks;
	int32		index,
				col;
	bool		isnull;
	Datum		v;

	if (PG_ARGISNULL(1))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(2))
		mismatch();
	index = PG_GETARG_INT32(1);
	col = PG_GETARG_INT32(2);
	if (col < 0 || col >= ks->ncols ||
		get_fn_expr_rettype(fcinfo->flinfo) != ks->cols[col].type)
		mismatch();
	if (index < 0 || index >= ks->ntuples)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("key %d is not in the key set of the public domain", index)));
	v = dp_keyset_value(ks, index, col, &isnull);
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(datumCopy(v, ks->typbyval[col], ks->typlen[col]));
}
