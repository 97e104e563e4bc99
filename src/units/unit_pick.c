/*-------------------------------------------------------------------------
 *
 * unit_pick.c
 *	  The fused path of privacy units with k = 1: the priority of a
 *	  (unit, group) and the aggregate that keeps the key of the smallest.
 *
 * doc/units-and-groups.md, "Privacy units".  When each unit contributes to one
 * group (max_groups_contributed = 1), privacy_unit.c fuses levels 1 and 2 of
 * the rewrite into one aggregation by unit:
 *
 *   SELECT g, dp_agg_internal.unit_release_dp_sum(s, l, u)
 *   FROM (SELECT dp_agg_internal.unit_pick(g, p) AS g,
 *                dp_agg_internal.unit_pick_bound_dp_sum(x, l, u, p) AS s
 *         FROM t WHERE w AND u IS NOT NULL GROUP BY u) level1
 *   GROUP BY g
 *
 * with p = dp_agg_internal.unit_priority(u, g).  The priority is SipHash-2-4
 * (Aumasson & Bernstein 2012, siphash.c) under the key of the execution
 * (pick_key.c), of the 64-bit extended hashes of the unit and of each
 * group key (a NULL key hashes to a constant): for a fixed unit, the
 * priorities of its distinct groups behave as independent uniform 64-bit
 * numbers, so the group of smallest priority is a uniform choice among
 * the unit's groups, independent across units and executions.
 * dp_agg_internal.unit_pick(key, p) keeps the key of the row of smallest p, and
 * dp_agg_internal.unit_pick_bound_* (unit_aggregates.c) the contribution of the rows of
 * smallest p: both see the same rows in the same order, so they agree.
 *
 * Whatever the priorities, each unit is one row of level 1, so it
 * contributes one bounded contribution to one group: the sensitivity
 * argument does not depend on the hash (doc/units-and-groups.md,
 * "Sensitivity").  Equal priorities of two groups of a unit (a collision of
 * the 64-bit hashes or of SipHash, probability about 2^-64 per pair) merge
 * their rows into one contribution released in one group.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "nodes/primnodes.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "catalog.h"
#include "pick_key.h"
#include "siphash.h"

PG_FUNCTION_INFO_V1(dp_unit_priority);
PG_FUNCTION_INFO_V1(dp_unit_pick_key_trans);
PG_FUNCTION_INFO_V1(dp_unit_pick_key_combine);
PG_FUNCTION_INFO_V1(dp_unit_pick_key_serialize);
PG_FUNCTION_INFO_V1(dp_unit_pick_key_deserialize);
PG_FUNCTION_INFO_V1(dp_unit_pick_key_final);

/*
 * The hash of a NULL group key: any constant (the key of the execution
 * makes its priority as random as any other's).
 */
#define NULL_KEY_HASH UINT64CONST(0x9e3779b97f4a7c15)

#define HINT_REWRITE_ONLY "The rewrite of privacy units makes its calls (see \"Privacy units\" in dp_agg's doc/units-and-groups.md)."

/* ---------- dp_agg_internal.unit_priority(unit, keys...) ---------- */

/*
 * The rewrite evaluates the priority of each row twice, with the same
 * arguments: in dp_agg_internal.unit_pick's arguments and in the bounding
 * aggregate's.  So the call sites of an execution share a memo of the last
 * priority (PriorityMemo), keyed by everything the value is a function of:
 * the execution's key and the arguments' hashes; and each hash of a
 * by-value argument is kept with the argument, its hash function and
 * collation.  A pure function's memo: equal inputs, equal output.  Up to
 * MEMO_MAX_ARGS arguments (a unit and its group keys); more are computed
 * every time.
 *
 * A call site reads only what another one wrote: in the rewrite the first
 * call of each row computes and the second reads, whatever the rows are.
 * So the work per row does not depend on the data (consecutive rows of
 * one unit or of one group would otherwise be cheaper): the memo adds no
 * signal to the statement's timing.
 */
#define MEMO_MAX_ARGS 8

typedef struct PriorityMemo
{
	bool		valid;			/* priority is that of key and message */
	const struct PriorityCache *writer; /* the call site that wrote it */
	int			nargs;
	DpSipKey	key;
	uint64		message[MEMO_MAX_ARGS];	/* the arguments' hashes */
	int64		priority;
	/* by-value arguments: the hash of value under hashfn and collation */
	bool		arg_valid[MEMO_MAX_ARGS];
	Oid			arg_hashfn[MEMO_MAX_ARGS];
	Oid			arg_collation[MEMO_MAX_ARGS];
	Datum		arg_value[MEMO_MAX_ARGS];
} PriorityMemo;

/* the memo of the execution whose memory holds it, and that memory */
static PriorityMemo *current_memo = NULL;
static MemoryContext current_memo_cxt = NULL;

/*
 * How an argument is hashed: by its hash_extended function through fmgr,
 * or, for hashint2extended, hashint4extended and hashint8extended, by the
 * same arithmetic inline (inline_hash, checked against the function when
 * the call site is set up: choose_arg_hash).
 */
typedef enum ArgHash
{
	ARG_HASH_FMGR,
	ARG_HASH_INT2,
	ARG_HASH_INT4,
	ARG_HASH_INT8
} ArgHash;

/* what one call site needs, kept for the execution in fn_extra */
typedef struct PriorityCache
{
	DpSipKey	sipkey;			/* the execution's key */
	int			nargs;
	FmgrInfo   *hash;			/* each argument's hash_extended function */
	Oid		   *collation;		/* each argument's collation */
	ArgHash    *how;			/* how each argument is hashed */
	bool	   *byval;			/* each argument's type is passed by value */
	uint64	   *message;		/* the arguments' hashes */
	PriorityMemo *memo;			/* shared by the execution's call sites; NULL
								 * beyond MEMO_MAX_ARGS arguments */
} PriorityCache;

/* the extended hash (seed 0) of a by-value integer, as PostgreSQL's hashintNextended */
static inline uint64
inline_hash(ArgHash how, Datum d)
{
	switch (how)
	{
		case ARG_HASH_INT2:
			return hash_bytes_uint32_extended((uint32) (int32) DatumGetInt16(d), 0);
		case ARG_HASH_INT4:
			return hash_bytes_uint32_extended((uint32) DatumGetInt32(d), 0);
		case ARG_HASH_INT8:
			{
				/* the halves folded as hashint8extended does, for cross-type equality */
				int64		v = DatumGetInt64(d);
				uint32		lo = (uint32) v;
				uint32		hi = (uint32) (v >> 32);

				lo ^= v >= 0 ? hi : ~hi;
				return hash_bytes_uint32_extended(lo, 0);
			}
		case ARG_HASH_FMGR:
			break;
	}
	elog(ERROR, "dp_agg: no inline hash for this argument");
	return 0;
}

/*
 * The inline hash of a hash function, if there is one and it gives the
 * function's values on a spread of inputs (both signs, both halves, the
 * extremes); else fmgr.  The inline arithmetic is PostgreSQL's, so the
 * check is one of the code, made once per call site.
 */
static ArgHash
choose_arg_hash(FmgrInfo *hash)
{
	static const int64 probes[] = {0, 1, -1, 2, -2, 42, -42, 32767, -32768, 65535,
		PG_INT32_MAX, PG_INT32_MIN, INT64CONST(4294967296), INT64CONST(-4294967296),
	INT64CONST(0x123456789abcdef), -INT64CONST(0x123456789abcdef), PG_INT64_MAX, PG_INT64_MIN};
	ArgHash		how;

	switch (hash->fn_oid)
	{
		case F_HASHINT2EXTENDED:
			how = ARG_HASH_INT2;
			break;
		case F_HASHINT4EXTENDED:
			how = ARG_HASH_INT4;
			break;
		case F_HASHINT8EXTENDED:
			how = ARG_HASH_INT8;
			break;
		default:
			return ARG_HASH_FMGR;
	}
	for (int i = 0; i < (int) lengthof(probes); i++)
	{
		Datum		d;

		d = how == ARG_HASH_INT2 ? Int16GetDatum((int16) probes[i]) :
			how == ARG_HASH_INT4 ? Int32GetDatum((int32) probes[i]) : Int64GetDatum(probes[i]);
		if (inline_hash(how, d) !=
			DatumGetUInt64(FunctionCall2(hash, d, UInt64GetDatum(0))))
			return ARG_HASH_FMGR;
	}
	return how;
}

/* the memory of an execution goes: so does its memo */
static void
forget_memo(void *arg)
{
	if (current_memo == (PriorityMemo *) arg)
	{
		current_memo = NULL;
		current_memo_cxt = NULL;
	}
}

/* the memo of the call sites of the execution whose memory is cxt */
static PriorityMemo *
execution_memo(MemoryContext cxt)
{
	MemoryContextCallback *cb;

	if (current_memo != NULL && current_memo_cxt == cxt)
		return current_memo;
	current_memo = MemoryContextAllocZero(cxt, sizeof(PriorityMemo));
	current_memo_cxt = cxt;
	cb = MemoryContextAllocZero(cxt, sizeof(MemoryContextCallback));
	cb->func = forget_memo;
	cb->arg = current_memo;
	MemoryContextRegisterResetCallback(cxt, cb);
	return current_memo;
}

static PriorityCache *
priority_cache(FunctionCallInfo fcinfo)
{
	FmgrInfo   *flinfo = fcinfo->flinfo;
	FuncExpr   *fexpr = (FuncExpr *) flinfo->fn_expr;
	PriorityCache *pc;
	int			nargs = PG_NARGS();
	uint8		key[DP_SIPHASH_KEY_LEN];

	if (flinfo->fn_extra != NULL)
		return (PriorityCache *) flinfo->fn_extra;
	if (fexpr == NULL || !IsA(fexpr, FuncExpr) || fexpr->funcvariadic ||
		list_length(fexpr->args) != nargs)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("dp_agg_internal.unit_priority needs its arguments one by one"),
				 errdetail("It hashes each argument with the extended hash function of its type."),
				 errhint(HINT_REWRITE_ONLY)));

	/*
	 * Only the rewrite's calls, which carry its mark (catalog.h): a call an
	 * analyst wrote, in a statement the guard does not see (one without DP
	 * aggregates), would evaluate priorities under the key of a statement
	 * still running.  The mark does not reach a parallel worker's plan;
	 * its leader checked the statement.
	 */
	if (!IsParallelWorker() && fexpr->location != DP_UNIT_LOCATION)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("dp_agg_internal.unit_priority runs only in statements rewritten by dp_agg"),
				 errdetail("It is the priority of a privacy unit's group under the key of one statement."),
				 errhint(HINT_REWRITE_ONLY)));
	pc = MemoryContextAllocZero(flinfo->fn_mcxt, sizeof(PriorityCache));
	pc->nargs = nargs;
	pc->hash = MemoryContextAllocZero(flinfo->fn_mcxt, sizeof(FmgrInfo) * nargs);
	pc->collation = MemoryContextAllocZero(flinfo->fn_mcxt, sizeof(Oid) * nargs);
	pc->how = MemoryContextAllocZero(flinfo->fn_mcxt, sizeof(ArgHash) * nargs);
	pc->byval = MemoryContextAllocZero(flinfo->fn_mcxt, sizeof(bool) * nargs);
	pc->message = MemoryContextAllocZero(flinfo->fn_mcxt, sizeof(uint64) * nargs);
	for (int i = 0; i < nargs; i++)
	{
		Node	   *arg = list_nth(fexpr->args, i);
		TypeCacheEntry *tc = lookup_type_cache(exprType(arg),
											   TYPECACHE_HASH_EXTENDED_PROC_FINFO);

		/* privacy_unit.c takes the fused path only for such types */
		if (!OidIsValid(tc->hash_extended_proc_finfo.fn_oid))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("could not identify an extended hash function for type %s",
							format_type_be(exprType(arg))),
					 errdetail("The priority of a privacy unit hashes the unit and each group key."),
					 errhint(HINT_REWRITE_ONLY)));
		fmgr_info_copy(&pc->hash[i], &tc->hash_extended_proc_finfo, flinfo->fn_mcxt);
		pc->collation[i] = exprCollation(arg);
		pc->byval[i] = tc->typbyval;
		pc->how[i] = choose_arg_hash(&pc->hash[i]);
	}
	dp_pick_key_read(key);
	dp_siphash_key(key, &pc->sipkey);
	explicit_bzero(key, sizeof(key));
	if (nargs <= MEMO_MAX_ARGS)
		pc->memo = execution_memo(flinfo->fn_mcxt);
	flinfo->fn_extra = pc;
	return pc;
}

/* the extended hash (seed 0) of argument i, or the constant of NULL */
static inline uint64
arg_hash(PriorityCache *pc, FunctionCallInfo fcinfo, int i)
{
	PriorityMemo *m = pc->memo;
	Datum		d;

	if (PG_ARGISNULL(i))
		return NULL_KEY_HASH;
	d = PG_GETARG_DATUM(i);
	/* the memo's hash of a by-value argument: of equal bits, function and collation */
	if (m != NULL && m->writer != pc && pc->byval[i] && m->arg_valid[i] && m->arg_value[i] == d &&
		m->arg_hashfn[i] == pc->hash[i].fn_oid && m->arg_collation[i] == pc->collation[i])
		return m->message[i];
	if (pc->how[i] != ARG_HASH_FMGR)
		return inline_hash(pc->how[i], d);
	return DatumGetUInt64(FunctionCall2Coll(&pc->hash[i], pc->collation[i],
											d, UInt64GetDatum(0)));
}

/* the memo, written by another call site, holds the priority of pc's key and message */
static inline bool
memo_holds(const PriorityMemo *m, const PriorityCache *pc)
{
	if (!m->valid || m->writer == pc || m->nargs != pc->nargs ||
		m->key.k0 != pc->sipkey.k0 || m->key.k1 != pc->sipkey.k1)
		return false;
	for (int i = 0; i < pc->nargs; i++)
		if (m->message[i] != pc->message[i])
			return false;
	return true;
}

/*
 * dp_agg_internal.unit_priority(VARIADIC "any") returns bigint: SipHash-2-4 under
 * the execution's key of the extended hashes (seed 0) of the arguments,
 * each as 8 little-endian bytes
 */
Datum
dp_unit_priority(PG_FUNCTION_ARGS)
{
	PriorityCache *pc = priority_cache(fcinfo);
	PriorityMemo *m = pc->memo;
	int			nargs = pc->nargs;
	int64		priority;

	for (int i = 0; i < nargs; i++)
		pc->message[i] = arg_hash(pc, fcinfo, i);
	if (m == NULL)
		PG_RETURN_INT64((int64) dp_siphash24_words(&pc->sipkey, pc->message, nargs));
	if (memo_holds(m, pc))
		PG_RETURN_INT64(m->priority);
	priority = (int64) dp_siphash24_words(&pc->sipkey, pc->message, nargs);

	/* the memo, written whole once the priority is known */
	m->valid = true;
	m->writer = pc;
	m->nargs = nargs;
	m->key = pc->sipkey;
	memcpy(m->message, pc->message, sizeof(uint64) * nargs);
	m->priority = priority;
	for (int i = 0; i < MEMO_MAX_ARGS; i++)
	{
		m->arg_valid[i] = i < nargs && pc->byval[i] && !PG_ARGISNULL(i);
		if (m->arg_valid[i])
		{
			m->arg_value[i] = PG_GETARG_DATUM(i);
			m->arg_hashfn[i] = pc->hash[i].fn_oid;
			m->arg_collation[i] = pc->collation[i];
		}
	}
	PG_RETURN_INT64(priority);
}

/* ---------- dp_agg_internal.unit_pick(key anyelement, p bigint) ---------- */

static void invalid_state(void);

/* the key of the row of smallest priority seen so far */
typedef struct PickKeyState
{
	int64		p;
	Oid			type;
	int16		typlen;
	bool		typbyval;
	bool		isnull;
	Datum		value;			/* in the aggregate's memory */
} PickKeyState;

static MemoryContext
agg_memory(FunctionCallInfo fcinfo)
{
	MemoryContext aggcontext;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "dp_agg: unit_pick support function called in non-aggregate context");
	return aggcontext;
}

static PickKeyState *
new_pick_state(MemoryContext cxt, Oid type)
{
	PickKeyState *st = MemoryContextAllocZero(cxt, sizeof(PickKeyState));

	st->type = type;
	get_typlenbyval(type, &st->typlen, &st->typbyval);
	st->isnull = true;
	return st;
}

/* make (p, value) the state's key, copied into cxt */
static void
set_key(PickKeyState *st, MemoryContext cxt, int64 p, bool isnull, Datum value)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);

	if (!st->isnull && !st->typbyval)
		pfree(DatumGetPointer(st->value));
	st->p = p;
	st->isnull = isnull;
	st->value = isnull ? (Datum) 0 : datumCopy(value, st->typbyval, st->typlen);
	MemoryContextSwitchTo(old);
}

/* a call's type of keys, looked up once (fn_extra): a state is made per unit */
typedef struct PickKeyType
{
	Oid			type;
	int16		typlen;
	bool		typbyval;
} PickKeyType;

static PickKeyState *
new_call_state(FunctionCallInfo fcinfo, MemoryContext cxt)
{
	PickKeyType *kt = (PickKeyType *) fcinfo->flinfo->fn_extra;
	PickKeyState *st;

	if (kt == NULL)
	{
		kt = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(PickKeyType));
		kt->type = get_fn_expr_argtype(fcinfo->flinfo, 1);
		get_typlenbyval(kt->type, &kt->typlen, &kt->typbyval);
		fcinfo->flinfo->fn_extra = kt;
	}
	st = MemoryContextAllocZero(cxt, sizeof(PickKeyState));
	st->type = kt->type;
	st->typlen = kt->typlen;
	st->typbyval = kt->typbyval;
	st->isnull = true;
	return st;
}

/*
 * transition: a smaller priority replaces the key; an equal one keeps the
 * first.  Most rows change nothing (a unit's rows of larger priority, or
 * of its group): they return first.
 */
Datum
dp_unit_pick_key_trans(PG_FUNCTION_ARGS)
{
	MemoryContext cxt;
	PickKeyState *st = PG_ARGISNULL(0) ? NULL : (PickKeyState *) PG_GETARG_POINTER(0);
	int64		p;

	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("dp_agg_internal.unit_pick needs a priority"),
				 errdetail("The priority is dp_agg_internal.unit_priority of the unit and the group keys, never NULL."),
				 errhint(HINT_REWRITE_ONLY)));
	p = PG_GETARG_INT64(2);
	if (st != NULL && p >= st->p)
		PG_RETURN_POINTER(st);
	cxt = agg_memory(fcinfo);
	if (st == NULL)
		st = new_call_state(fcinfo, cxt);
	set_key(st, cxt, p, PG_ARGISNULL(1), PG_GETARG_DATUM(1));
	PG_RETURN_POINTER(st);
}

/* combine: the state of smaller priority; equal, the first */
Datum
dp_unit_pick_key_combine(PG_FUNCTION_ARGS)
{
	MemoryContext cxt = agg_memory(fcinfo);
	PickKeyState *s1 = PG_ARGISNULL(0) ? NULL : (PickKeyState *) PG_GETARG_POINTER(0);
	PickKeyState *s2 = PG_ARGISNULL(1) ? NULL : (PickKeyState *) PG_GETARG_POINTER(1);

	if (s2 == NULL)
	{
		if (s1 == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(s1);
	}
	if (s1 != NULL && s1->type != s2->type)
		invalid_state();
	if (s1 == NULL)
		s1 = new_pick_state(cxt, s2->type);
	else if (s2->p >= s1->p)
		PG_RETURN_POINTER(s1);
	set_key(s1, cxt, s2->p, s2->isnull, s2->value);
	PG_RETURN_POINTER(s1);
}

/*
 * Serialized state: version, isnull, p, the type's OID, then the value's
 * bytes (a by-value Datum, the fixed-length bytes, the whole varlena or the
 * C string with its terminator).
 */
#define PICK_KEY_SERIAL_VERSION 1
#define PICK_KEY_HEADER_SIZE (1 + 1 + 8 + 4)

static void
check_split(FunctionCallInfo fcinfo, bool serialize)
{
	AggState   *aggstate;

	(void) agg_memory(fcinfo);
	if (!IsA(fcinfo->context, AggState))
		elog(ERROR, "dp_agg: unit_pick support function called in non-aggregate context");
	aggstate = (AggState *) fcinfo->context;
	if (serialize ? !DO_AGGSPLIT_SERIALIZE(aggstate->aggsplit)
		: !DO_AGGSPLIT_DESERIALIZE(aggstate->aggsplit))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("dp_agg_internal.unit_pick states may only be passed between processes of one aggregation")));
}

/* the bytes of a value, and their number */
static const char *
value_bytes(const PickKeyState *st, size_t *len)
{
	if (st->isnull)
	{
		*len = 0;
		return NULL;
	}
	if (st->typbyval)
	{
		*len = sizeof(Datum);
		return (const char *) &st->value;
	}
	if (st->typlen > 0)
		*len = st->typlen;
	else if (st->typlen == -1)
	{
		struct varlena *v = PG_DETOAST_DATUM_PACKED(st->value);

		*len = VARSIZE_ANY(v);
		return (const char *) v;
	}
	else
		*len = strlen(DatumGetCString(st->value)) + 1;
	return DatumGetPointer(st->value);
}

Datum
dp_unit_pick_key_serialize(PG_FUNCTION_ARGS)
{
	PickKeyState *st;
	const char *bytes;
	size_t		len;
	bytea	   *result;
	char	   *p;
	uint8		version = PICK_KEY_SERIAL_VERSION;
	uint8		isnull;
	uint32		type;

	check_split(fcinfo, true);
	st = (PickKeyState *) PG_GETARG_POINTER(0);
	bytes = value_bytes(st, &len);
	isnull = st->isnull ? 1 : 0;
	type = st->type;
	result = (bytea *) palloc(VARHDRSZ + PICK_KEY_HEADER_SIZE + len);
	SET_VARSIZE(result, VARHDRSZ + PICK_KEY_HEADER_SIZE + len);
	p = VARDATA(result);
	memcpy(p, &version, 1);
	memcpy(p + 1, &isnull, 1);
	memcpy(p + 2, &st->p, 8);
	memcpy(p + 10, &type, 4);
	if (len > 0)
		memcpy(p + PICK_KEY_HEADER_SIZE, bytes, len);
	PG_RETURN_BYTEA_P(result);
}

static void
invalid_state(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("invalid serialized dp_agg_internal.unit_pick state")));
}

/* the value of len bytes, checked against the type, in fresh memory */
static Datum
restore_value(PickKeyState *st, const char *bytes, size_t len)
{
	char	   *copy;

	if (st->typbyval)
	{
		Datum		d;

		if (len != sizeof(Datum))
			invalid_state();
		memcpy(&d, bytes, sizeof(Datum));
		return d;
	}
	if ((st->typlen > 0 && len != (size_t) st->typlen) || len == 0)
		invalid_state();
	copy = palloc(len);
	memcpy(copy, bytes, len);
	if ((st->typlen == -1 && VARSIZE_ANY(copy) != len) ||
		(st->typlen == -2 && strnlen(copy, len) != len - 1))
		invalid_state();
	return PointerGetDatum(copy);
}

Datum
dp_unit_pick_key_deserialize(PG_FUNCTION_ARGS)
{
	bytea	   *b;
	const char *p;
	size_t		len;
	uint8		version,
				isnull;
	uint32		type;
	PickKeyState *st;

	check_split(fcinfo, false);
	b = PG_GETARG_BYTEA_PP(0);
	len = VARSIZE_ANY_EXHDR(b);
	p = VARDATA_ANY(b);
	if (len < PICK_KEY_HEADER_SIZE)
		invalid_state();
	memcpy(&version, p, 1);
	memcpy(&isnull, p + 1, 1);
	memcpy(&type, p + 10, 4);
	/* the type is checked against the call's by combine and final */
	if (version != PICK_KEY_SERIAL_VERSION || isnull > 1 ||
		!SearchSysCacheExists1(TYPEOID, ObjectIdGetDatum(type)))
		invalid_state();
	st = new_pick_state(CurrentMemoryContext, type);
	memcpy(&st->p, p + 2, 8);
	st->isnull = isnull != 0;
	len -= PICK_KEY_HEADER_SIZE;
	if (st->isnull && len != 0)
		invalid_state();
	if (!st->isnull)
		st->value = restore_value(st, p + PICK_KEY_HEADER_SIZE, len);
	PG_RETURN_POINTER(st);
}

/* final (FINALFUNC_EXTRA, for the polymorphic result): the key */
Datum
dp_unit_pick_key_final(PG_FUNCTION_ARGS)
{
	PickKeyState *st = PG_ARGISNULL(0) ? NULL : (PickKeyState *) PG_GETARG_POINTER(0);

	if (st != NULL && st->type != get_fn_expr_argtype(fcinfo->flinfo, 1))
		invalid_state();
	if (st == NULL || st->isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(st->value);
}
