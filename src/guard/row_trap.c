/*-------------------------------------------------------------------------
 *
 * row_trap.c
 *	  The trap: on the rows of a protected relation, a call that fails
 *	  yields NULL, and nothing it raises reaches the client.
 *
 * doc/guard.md, "Protected tables", "Nothing on the row path can fail or
 * report".  In a statement of a role untrusted for a protected relation,
 * the plan's calls of allowed built-in functions go through
 * dp_agg_internal.row_call, and the expressions that can fail otherwise than by a
 * call (casts through text and to domains, GREATEST, row comparisons,
 * subscripts...) through dp_agg_internal.row_eval (row_seal.c rewrites the plan).
 * Both take internal and return internal, so no SQL statement can call
 * them; the planner's FuncExpr names the callee.
 *
 * How a call is trapped (trap_enter ... trap_catch), without a subtransaction:
 *   - an error context callback is pushed for the call: every message the
 *     callee raises, of any level, passes through it before being emitted.
 *     Unless it must reach the caller, the callback raises an error of its
 *     own at once: a notice or a warning is never emitted, and an error is
 *     replaced;
 *   - an error must reach the caller when it says something about the
 *     session rather than the arguments (query cancel, statement timeout,
 *     termination, lost connection, transaction rollback, disk full,
 *     corruption: swallowable), when it was raised while interrupts were
 *     held off (an LWLock, a buffer's content lock) or in a critical
 *     section, or when it did not pass through the callback at all (an
 *     error a parallel worker sent, rethrown with the worker's context
 *     stack): then it is rethrown, and the transaction's abort cleans up
 *     as for any error;
 *   - otherwise the error is flushed, the interrupt holdoff counts that
 *     errfinish cleared are restored, and what the callee acquired is
 *     released, as the abort of a subtransaction would: its resources
 *     (buffer pins, cache references, snapshots, files, locks) were
 *     registered with a resource owner of the call's own, which is
 *     released and deleted; its memory is in the caller's per-tuple context
 *     or in the call's own context (fn_extra and its caches), which is
 *     reset, so the next row starts from a fresh state and no row's value
 *     depends on another's.
 * The callees are the allowed functions (row_rules.c): computations that
 * run no query and keep no state but caches.
 *
 * Errors that can happen once per call rather than per row (permissions,
 * a collation's locale) are checked before the first row, at executor
 * start (row_seal.c).
 *
 * Integer and floating-point arithmetic have soft versions here, which
 * test the conditions under which PostgreSQL's functions raise their
 * errors (overflow, underflow, division by zero) and return NULL instead,
 * without the cost of a trap.
 *
 * A few date and time functions that analysts call on every row
 * (date_trunc, date_part and extract of a timestamp, a date as a
 * timestamp) fail only for a unit they do not know, or for a value near
 * the ends of the timestamp range, where the result would leave it.  They
 * are called without the trap when the value lies well inside that range
 * (years 1 to about 190,000) and the unit is one with which a call of the
 * same node has already succeeded on such a value: then they cannot fail.
 * Any other call is trapped (callee_domain).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_proc.h"
#include "common/int.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "nodes/params.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/syscache.h"

#include "compat.h"
#include "row_compare.h"
#include "row_rules.h"

PG_FUNCTION_INFO_V1(dp_row_call);
PG_FUNCTION_INFO_V1(dp_row_eval);

/* ---------- the trap ---------- */

/* What a trapped callee may leave behind, released after a failure. */
typedef struct Trap
{
	MemoryContext cxt;			/* the callee's own state (fn_extra, caches) */
	ResourceOwner owner;		/* what it acquires while it runs */
} Trap;

/* One trapped call, on the C stack. */
typedef struct TrapFrame
{
	ErrorContextCallback callback;
	MemoryContext caller_cxt;
	ResourceOwner caller_owner;
	uint32		holdoff;		/* InterruptHoldoffCount at the call */
	uint32		cancel_holdoff; /* QueryCancelHoldoffCount at the call */
	volatile bool seen;			/* a message passed through the callback */
	volatile bool rethrow;		/* ... and must reach the caller */
} TrapFrame;

/* the error the callback raises is on its way: other frames let it pass */
static bool trap_throwing = false;

/*
 * May an error of this SQLSTATE be turned into NULL?  Not those that tell
 * about the session, the server or the transaction rather than about the
 * call's arguments.
 */
static bool
swallowable(int sqlerrcode)
{
	switch (ERRCODE_TO_CATEGORY(sqlerrcode))
	{
		case ERRCODE_OPERATOR_INTERVENTION: /* 57: cancel, timeouts, shutdown */
		case ERRCODE_TRANSACTION_ROLLBACK:	/* 40: serialization, deadlock */
		case ERRCODE_SYSTEM_ERROR:	/* 58: I/O */
		case ERRCODE_CONNECTION_EXCEPTION:	/* 08 */
		case ERRCODE_INVALID_TRANSACTION_STATE: /* 25 */
		case ERRCODE_CONFIG_FILE_ERROR: /* F0 */
			return false;
		case ERRCODE_INSUFFICIENT_RESOURCES:	/* 53: all but memory */
			return sqlerrcode == ERRCODE_OUT_OF_MEMORY;
		default:
			break;
	}
	return sqlerrcode != ERRCODE_LOCK_NOT_AVAILABLE &&
		sqlerrcode != ERRCODE_DATA_CORRUPTED &&
		sqlerrcode != ERRCODE_INDEX_CORRUPTED;
}

/*
 * Every message raised during a trapped call, before errfinish emits it (or,
 * for an error, before it longjmps): decide whether it must reach the
 * caller; if not, raise an error in its place, so that nothing is emitted.
 */
static void
trap_callback(void *arg)
{
	TrapFrame  *f = arg;

	if (trap_throwing || f->seen)
		return;
	f->seen = true;
	if (InterruptHoldoffCount != f->holdoff ||
		QueryCancelHoldoffCount != f->cancel_holdoff ||
		CritSectionCount != 0 || !swallowable(geterrcode()))
	{
		f->rethrow = true;
		return;
	}
	trap_throwing = true;
	ereport(ERROR,
			(errcode(ERRCODE_DATA_EXCEPTION),
			 errmsg_internal("dp_agg: a call on the rows of a protected relation failed")));
}

/* After a failure: release what the callee acquired, drop its state. */
static void
trap_reset(Trap *t)
{
	if (t->owner != NULL)
	{
		ResourceOwnerRelease(t->owner, RESOURCE_RELEASE_BEFORE_LOCKS, false, false);
		ResourceOwnerRelease(t->owner, RESOURCE_RELEASE_LOCKS, false, false);
		ResourceOwnerRelease(t->owner, RESOURCE_RELEASE_AFTER_LOCKS, false, false);
		ResourceOwnerDelete(t->owner);
		t->owner = NULL;
	}
	MemoryContextReset(t->cxt);
}

/*
 * A trapped call, written out in each caller (call_trapped, eval_trapped;
 * a function that calls setjmp cannot be inlined):
 *
 *		trap_enter(t, &frame);
 *		PG_TRY();
 *		{
 *			trap_push(t, &frame);
 *			... the callee ...
 *			trap_pop(&frame);
 *		}
 *		PG_CATCH();
 *		{
 *			trap_catch(t, &frame);		(rethrows what must reach the caller)
 *			failed = true;
 *		}
 *		PG_END_TRY();
 *		if (failed)
 *			trap_reset(t);
 */
static inline void
trap_enter(Trap *t, TrapFrame *f)
{
	f->caller_cxt = CurrentMemoryContext;
	f->caller_owner = CurrentResourceOwner;
	if (t->owner == NULL && f->caller_owner != NULL)
		t->owner = ResourceOwnerCreate(f->caller_owner, "dp_agg row call");
	f->holdoff = InterruptHoldoffCount;
	f->cancel_holdoff = QueryCancelHoldoffCount;
	f->seen = false;
	f->rethrow = false;
	trap_throwing = false;
}

static inline void
trap_push(Trap *t, TrapFrame *f)
{
	f->callback.callback = trap_callback;
	f->callback.arg = f;
	f->callback.previous = error_context_stack;
	error_context_stack = &f->callback;
	if (t->owner != NULL)
		CurrentResourceOwner = t->owner;
}

static inline void
trap_pop(TrapFrame *f)
{
	CurrentResourceOwner = f->caller_owner;
	error_context_stack = f->callback.previous;
}

/*
 * In PG_CATCH: rethrow what must reach the caller (see the file's comment);
 * else flush the error and restore what errfinish changed.
 */
static void
trap_catch(TrapFrame *f)
{
	MemoryContextSwitchTo(f->caller_cxt);
	CurrentResourceOwner = f->caller_owner;
	trap_throwing = false;
	if (!f->seen || f->rethrow)
		PG_RE_THROW();
	FlushErrorState();
	InterruptHoldoffCount = f->holdoff;
	QueryCancelHoldoffCount = f->cancel_holdoff;
}

/* ---------- soft arithmetic ---------- */

typedef enum SoftOp
{
	SOFT_NONE,
	SOFT_ADD,
	SOFT_SUB,
	SOFT_MUL,
	SOFT_DIV,
	SOFT_MOD,
	SOFT_NEG,
	SOFT_ABS
} SoftOp;

/*
 * A function with a soft version: its operation and the types of its
 * arguments and result, 's' smallint, 'i' integer, 'l' bigint, 'f' real,
 * 'd' double precision.
 */
typedef struct SoftFunc
{
	Oid			funcid;
	SoftOp		op;
	char		a;
	char		b;
	char		r;
} SoftFunc;

#define SOFT_ENTRY(f, name, op, a, b, r) {F_##f, op, a, b, r},
static const SoftFunc soft_funcs[] = {
	DP_ROW_SOFT_FUNCS(SOFT_ENTRY)
};

static const SoftFunc *
soft_func(Oid funcid)
{
	for (size_t i = 0; i < lengthof(soft_funcs); i++)
		if (soft_funcs[i].funcid == funcid)
			return &soft_funcs[i];
	return NULL;
}

static pg_attribute_always_inline int64
int_arg(Datum d, char type)
{
	switch (type)
	{
		case 's':
			return DatumGetInt16(d);
		case 'i':
			return DatumGetInt32(d);
		default:
			return DatumGetInt64(d);
	}
}

/*
 * An integer operation of PostgreSQL (int.c, int8.c) on 64-bit integers,
 * with overflow checks: false where PostgreSQL raises an error (out of
 * range, division by zero).  Division and remainder truncate toward zero in
 * C as in PostgreSQL; x % -1 is 0, and INT64_MIN / -1 overflows.
 */
static pg_attribute_always_inline bool
soft_int(const SoftFunc *s, Datum x, Datum y, Datum *result)
{
	int64		a = int_arg(x, s->a);
	int64		b = s->op == SOFT_NEG || s->op == SOFT_ABS ? 0 : int_arg(y, s->b);
	int64		r;

	switch (s->op)
	{
		case SOFT_ADD:
			if (pg_add_s64_overflow(a, b, &r))
				return false;
			break;
		case SOFT_SUB:
			if (pg_sub_s64_overflow(a, b, &r))
				return false;
			break;
		case SOFT_MUL:
			if (pg_mul_s64_overflow(a, b, &r))
				return false;
			break;
		case SOFT_DIV:
			if (b == 0)
				return false;
			if (b == -1)
			{
				if (a == PG_INT64_MIN)
					return false;
				r = -a;
			}
			else
				r = a / b;
			break;
		case SOFT_MOD:
			if (b == 0)
				return false;
			r = b == -1 ? 0 : a % b;
			break;
		case SOFT_NEG:
		case SOFT_ABS:
			if (a == PG_INT64_MIN)
				return false;
			r = s->op == SOFT_NEG || a < 0 ? -a : a;
			break;
		default:
			return false;
	}
	switch (s->r)
	{
		case 's':
			if (r < PG_INT16_MIN || r > PG_INT16_MAX)
				return false;
			*result = Int16GetDatum((int16) r);
			return true;
		case 'i':
			if (r < PG_INT32_MIN || r > PG_INT32_MAX)
				return false;
			*result = Int32GetDatum((int32) r);
			return true;
		default:
			*result = Int64GetDatum(r);
			return true;
	}
}

/*
 * A floating-point operation: false exactly where float4_pl ... float8_div
 * (utils/float.h) raise overflow, underflow or division by zero.
 */
static pg_attribute_always_inline bool
soft_float8(SoftOp op, float8 a, float8 b, float8 *result)
{
	float8		r;

	switch (op)
	{
		case SOFT_ADD:
			r = a + b;
			if (isinf(r) && !isinf(a) && !isinf(b))
				return false;
			break;
		case SOFT_SUB:
			r = a - b;
			if (isinf(r) && !isinf(a) && !isinf(b))
				return false;
			break;
		case SOFT_MUL:
			r = a * b;
			if (isinf(r) && !isinf(a) && !isinf(b))
				return false;
			if (r == 0.0 && a != 0.0 && b != 0.0)
				return false;
			break;
		case SOFT_DIV:
			if (b == 0.0 && !isnan(a))
				return false;
			r = a / b;
			if (isinf(r) && !isinf(a))
				return false;
			if (r == 0.0 && a != 0.0 && !isinf(b))
				return false;
			break;
		default:
			return false;
	}
	*result = r;
	return true;
}

static pg_attribute_always_inline bool
soft_float4(SoftOp op, float4 a, float4 b, float4 *result)
{
	float4		r;

	switch (op)
	{
		case SOFT_ADD:
			r = a + b;
			if (isinf(r) && !isinf(a) && !isinf(b))
				return false;
			break;
		case SOFT_SUB:
			r = a - b;
			if (isinf(r) && !isinf(a) && !isinf(b))
				return false;
			break;
		case SOFT_MUL:
			r = a * b;
			if (isinf(r) && !isinf(a) && !isinf(b))
				return false;
			if (r == 0.0f && a != 0.0f && b != 0.0f)
				return false;
			break;
		case SOFT_DIV:
			if (b == 0.0f && !isnan(a))
				return false;
			r = a / b;
			if (isinf(r) && !isinf(a))
				return false;
			if (r == 0.0f && a != 0.0f && !isinf(b))
				return false;
			break;
		default:
			return false;
	}
	*result = r;
	return true;
}

static pg_attribute_always_inline bool
soft_call(const SoftFunc *s, FunctionCallInfo fcinfo, Datum *result)
{
	Datum		x = fcinfo->args[0].value;
	Datum		y = s->op == SOFT_NEG || s->op == SOFT_ABS ? (Datum) 0 : fcinfo->args[1].value;

	if (s->r == 's' || s->r == 'i' || s->r == 'l')
		return soft_int(s, x, y, result);
	if (s->r == 'f')
	{
		float4		r;

		if (!soft_float4(s->op, DatumGetFloat4(x), DatumGetFloat4(y), &r))
			return false;
		*result = Float4GetDatum(r);
		return true;
	}
	else
	{
		float8		a = s->a == 'f' ? (float8) DatumGetFloat4(x) : DatumGetFloat8(x);
		float8		b = s->b == 'f' ? (float8) DatumGetFloat4(y) : DatumGetFloat8(y);
		float8		r;

		if (!soft_float8(s->op, a, b, &r))
			return false;
		*result = Float8GetDatum(r);
		return true;
	}
}

/*
 * The soft versions as functions of their own, dp_agg_internal.row_int4pl and so
 * on: the seal puts them in place of the operator's function
 * (row_seal.c), so that trapped arithmetic costs no more than PostgreSQL's
 * (a JIT compiler inlines them as it inlines int4pl).
 */
#define SOFT_DEFINE(f, name, op, a, b, r) \
PG_FUNCTION_INFO_V1(dp_row_soft_##name); \
Datum \
dp_row_soft_##name(PG_FUNCTION_ARGS) \
{ \
	static const SoftFunc s = {F_##f, op, a, b, r}; \
	Datum		result; \
 \
	if (!soft_call(&s, fcinfo, &result)) \
		PG_RETURN_NULL(); \
	return result; \
}
DP_ROW_SOFT_FUNCS(SOFT_DEFINE)

/* ---------- dp_agg_internal.row_call: a function call ---------- */

/* The state of one dp_agg_internal.row_call in a plan (its fn_extra). */
typedef struct RowCall
{
	Trap		trap;
	FmgrInfo	callee;			/* fn_mcxt: trap.cxt */
	short		nargs;			/* the callee's arguments */
	bool		strict;
	const SoftFunc *soft;		/* a soft version, or NULL */
	/* a date or time function that cannot fail inside a domain, or NULL */
	const struct DomainFunc *domain;
	char	   *unit;			/* fn_mcxt: a unit known good, or NULL */
	int			unit_len;
	bool		unit_const;		/* the unit is a constant of the plan */
} RowCall;

/* ---------- date and time functions inside their domain ---------- */

/*
 * Well inside the range of timestamps (4714 BC to 294276 AD): from
 * 0001-01-01 to about 190,000 AD, in days and in microseconds from
 * 2000-01-01.  Truncating a timestamp of this range to a millennium, or
 * moving it by a time zone's offset, stays inside the range of timestamps.
 */
#define DOMAIN_FIRST_DAY	INT64CONST(-730119)
#define DOMAIN_LAST_DAY		INT64CONST(69000000)

typedef struct DomainFunc
{
	const char *prosrc;
	short		nargs;
	bool		unit;			/* its first argument is a unit (text) */
	char		value;			/* its last argument: 't' timestamp[tz], 'd' date */
} DomainFunc;

/*
 * The functions (by their C name) that raise an error for nothing but a
 * unit they do not know or support, and a value outside the range of
 * timestamps or a result outside it (timestamp.c, date.c, of PostgreSQL
 * 15 to 18).
 */
static const DomainFunc domain_funcs[] = {
	{"timestamp_trunc", 2, true, 't'},
	{"timestamptz_trunc", 2, true, 't'},
	{"timestamp_part", 2, true, 't'},
	{"timestamptz_part", 2, true, 't'},
	{"extract_timestamp", 2, true, 't'},
	{"extract_timestamptz", 2, true, 't'},
	{"date_timestamp", 1, false, 'd'},
	{"date_timestamptz", 1, false, 'd'},
};

/* The entry of a built-in C function (row_call_init checked that it is). */
static const DomainFunc *
callee_domain(Oid callee, short nargs)
{
	HeapTuple	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(callee));
	const DomainFunc *found = NULL;
	bool		isnull;
	char	   *prosrc;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for function %u", callee);
	prosrc = TextDatumGetCString(SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosrc, &isnull));
	ReleaseSysCache(tup);
	for (size_t i = 0; i < lengthof(domain_funcs); i++)
		if (domain_funcs[i].nargs == nargs && strcmp(domain_funcs[i].prosrc, prosrc) == 0)
			found = &domain_funcs[i];
	pfree(prosrc);
	return found;
}

/* The unit of a call, in place, if it is plain text (not toasted). */
static inline bool
unit_bytes(Datum d, char **data, int *len)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(d);

	if (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v))
		return false;
	*data = VARDATA_ANY(v);
	*len = VARSIZE_ANY_EXHDR(v);
	return true;
}

/* Does the call's value lie inside the domain? */
static pg_attribute_always_inline bool
value_in_domain(const DomainFunc *d, FunctionCallInfo fcinfo)
{
	Datum		v = fcinfo->args[d->nargs - 1].value;

	if (d->value == 'd')
		return DatumGetDateADT(v) >= DOMAIN_FIRST_DAY && DatumGetDateADT(v) <= DOMAIN_LAST_DAY;
	return DatumGetInt64(v) >= DOMAIN_FIRST_DAY * USECS_PER_DAY &&
		DatumGetInt64(v) <= DOMAIN_LAST_DAY * USECS_PER_DAY;
}

/* May this call be made without the trap? */
static pg_attribute_always_inline bool
in_domain(const RowCall *rc, FunctionCallInfo fcinfo)
{
	if (rc->domain->unit)
	{
		char	   *data;
		int			len;

		if (rc->unit == NULL)
			return false;
		if (rc->unit_const)		/* the same on every row */
			return value_in_domain(rc->domain, fcinfo);
		if (!unit_bytes(fcinfo->args[0].value, &data, &len) || len != rc->unit_len)
			return false;
		/* a few bytes: cheaper than a call of memcmp */
		for (int i = 0; i < len; i++)
			if (data[i] != rc->unit[i])
				return false;
	}
	return value_in_domain(rc->domain, fcinfo);
}

/*
 * After a call in the trap succeeded: if its value lay inside the domain,
 * its unit is one the function knows and supports for such values.
 */
static void
remember_unit(RowCall *rc, FunctionCallInfo fcinfo)
{
	char	   *data;
	int			len;

	if (rc->unit != NULL || !rc->domain->unit || !value_in_domain(rc->domain, fcinfo) ||
		!unit_bytes(fcinfo->args[0].value, &data, &len))
		return;
	rc->unit = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, Max(len, 1));
	memcpy(rc->unit, data, len);
	rc->unit_len = len;
}

/*
 * The callee of a dp_agg_internal.row_call and its own fn_expr.  A FuncExpr names it
 * in its last argument (row_seal.c); an operator node (OpExpr,
 * DistinctExpr, NullIfExpr, ScalarArrayOpExpr) in its operator.
 */
static Node *
callee_expr(Node *expr, Oid *callee, short *nargs)
{
	if (expr != NULL && IsA(expr, FuncExpr))
	{
		FuncExpr   *f = (FuncExpr *) expr;
		FuncExpr   *c = makeNode(FuncExpr);
		Const	   *k = list_length(f->args) >= 1 ? llast(f->args) : NULL;

		if (k == NULL || !IsA(k, Const) || k->consttype != OIDOID || k->constisnull)
			elog(ERROR, "dp_agg: malformed call of dp_agg_internal.row_call");
		*c = *f;
		c->funcid = DatumGetObjectId(k->constvalue);
		c->args = list_copy_head(f->args, list_length(f->args) - 1);
		*callee = c->funcid;
		*nargs = list_length(c->args);
		return (Node *) c;
	}
	if (expr != NULL && (IsA(expr, OpExpr) || IsA(expr, DistinctExpr) || IsA(expr, NullIfExpr)))
	{
		OpExpr	   *c = copyObject((OpExpr *) expr);

		c->opfuncid = get_opcode(c->opno);
		*callee = c->opfuncid;
		*nargs = list_length(c->args);
		return (Node *) c;
	}
	if (expr != NULL && IsA(expr, ScalarArrayOpExpr))
	{
		ScalarArrayOpExpr *c = copyObject((ScalarArrayOpExpr *) expr);

		c->opfuncid = get_opcode(c->opno);
		*callee = c->opfuncid;
		*nargs = 2;
		return (Node *) c;
	}
	elog(ERROR, "dp_agg: dp_agg_internal.row_call called outside a plan");
	return NULL;
}

static RowCall *
row_call_init(FunctionCallInfo fcinfo)
{
	FmgrInfo   *flinfo = fcinfo->flinfo;
	MemoryContext old = MemoryContextSwitchTo(flinfo->fn_mcxt);
	RowCall    *rc = palloc0(sizeof(RowCall));
	Oid			callee;
	Node	   *expr = callee_expr(flinfo->fn_expr, &callee, &rc->nargs);

	/* only what row_seal.c traps: built-in C functions that return no set */
	if (!dp_row_builtin_c(callee) || get_func_retset(callee) ||
		func_volatile(callee) == PROVOLATILE_VOLATILE)
		elog(ERROR, "dp_agg: dp_agg_internal.row_call of function %u", callee);
	rc->trap.cxt = AllocSetContextCreate(flinfo->fn_mcxt, "dp_agg row call",
										 ALLOCSET_SMALL_SIZES);
	fmgr_info_cxt(callee, &rc->callee, rc->trap.cxt);
	fmgr_info_set_expr(expr, &rc->callee);
	rc->strict = rc->callee.fn_strict;
	rc->soft = soft_func(callee);
	rc->domain = rc->soft == NULL ? callee_domain(callee, rc->nargs) : NULL;
	rc->unit_const = rc->domain != NULL && rc->domain->unit && IsA(expr, FuncExpr) &&
		IsA(linitial(((FuncExpr *) expr)->args), Const);
	MemoryContextSwitchTo(old);
	flinfo->fn_extra = rc;
	return rc;
}

/*
 * The callee in the trap: its value, or false if it failed.  (Apart from
 * dp_row_call, whose locals would otherwise be live across the setjmp.)
 */
static bool
call_trapped(RowCall *rc, FunctionCallInfo fcinfo, Datum *value)
{
	FmgrInfo   *flinfo = fcinfo->flinfo;
	short		nargs = fcinfo->nargs;
	TrapFrame	frame;
	volatile bool failed = false;

	/* the callee sees its own FmgrInfo and arguments in the same fcinfo */
	fcinfo->flinfo = &rc->callee;
	fcinfo->nargs = rc->nargs;
	fcinfo->isnull = false;
	trap_enter(&rc->trap, &frame);
	PG_TRY();
	{
		trap_push(&rc->trap, &frame);
		*value = FunctionCallInvoke(fcinfo);
		trap_pop(&frame);
	}
	PG_CATCH();
	{
		fcinfo->flinfo = flinfo;
		fcinfo->nargs = nargs;
		trap_catch(&frame);
		failed = true;
	}
	PG_END_TRY();
	fcinfo->flinfo = flinfo;
	fcinfo->nargs = nargs;
	if (failed)
	{
		trap_reset(&rc->trap);
		rc->callee.fn_extra = NULL; /* was in trap.cxt, now reset */
	}
	return !failed;
}

/* The callee, outside the trap: it cannot fail (in_domain). */
static pg_attribute_always_inline Datum
call_direct(RowCall *rc, FunctionCallInfo fcinfo)
{
	FmgrInfo   *flinfo = fcinfo->flinfo;
	short		nargs = fcinfo->nargs;
	Datum		result;

	fcinfo->flinfo = &rc->callee;
	fcinfo->nargs = rc->nargs;
	fcinfo->isnull = false;
	result = FunctionCallInvoke(fcinfo);
	fcinfo->flinfo = flinfo;
	fcinfo->nargs = nargs;
	return result;
}

/* Every call but the fast path of dp_row_call. */
static pg_noinline Datum
row_call_slow(FunctionCallInfo fcinfo)
{
	RowCall    *rc = fcinfo->flinfo->fn_extra;
	Datum		result;

	if (rc == NULL)
		rc = row_call_init(fcinfo);
	if (rc->strict)
		for (int i = 0; i < rc->nargs; i++)
			if (fcinfo->args[i].isnull)
				PG_RETURN_NULL();
	if (rc->soft != NULL)
	{
		if (soft_call(rc->soft, fcinfo, &result))
			return result;
		PG_RETURN_NULL();
	}
	if (rc->domain != NULL && in_domain(rc, fcinfo))
		return call_direct(rc, fcinfo);
	if (!call_trapped(rc, fcinfo, &result))
		PG_RETURN_NULL();
	if (rc->domain != NULL && !fcinfo->isnull)
		remember_unit(rc, fcinfo);
	return result;
}

/*
 * dp_agg_internal.row_call(internal) returns internal: the callee applied to the
 * arguments, NULL if it fails.  The fast path, a date or time function
 * inside its domain (one or two arguments, strict), takes no stack frame
 * of its own beyond the callee's.
 */
Datum
dp_row_call(PG_FUNCTION_ARGS)
{
	RowCall    *rc = fcinfo->flinfo->fn_extra;

	if (likely(rc != NULL) && rc->domain != NULL &&
		!fcinfo->args[0].isnull && !(rc->nargs > 1 && fcinfo->args[1].isnull) &&
		in_domain(rc, fcinfo))
		return call_direct(rc, fcinfo);
	return row_call_slow(fcinfo);
}

/* ---------- dp_agg_internal.row_eval: an expression ---------- */

/*
 * The state of one dp_agg_internal.row_eval in a plan.  Its FuncExpr's arguments
 * are the expression's inputs, evaluated by the caller, then the
 * expression (nodeToString) in which Params 1..n stand for the inputs.
 */
typedef struct RowEval
{
	Trap		trap;
	Expr	   *expr;			/* fn_mcxt */
	ParamListInfo params;		/* fn_mcxt */
	ExprState  *state;			/* trap.cxt; NULL until built, and after a failure */
	ExprContext *econtext;		/* trap.cxt */
	/* one evaluation */
	Datum		result;
	bool		isnull;
} RowEval;

static RowEval *
row_eval_init(FunctionCallInfo fcinfo)
{
	FmgrInfo   *flinfo = fcinfo->flinfo;
	FuncExpr   *f = (FuncExpr *) flinfo->fn_expr;
	MemoryContext old = MemoryContextSwitchTo(flinfo->fn_mcxt);
	RowEval    *re = palloc0(sizeof(RowEval));
	Const	   *k;
	int			n;
	ListCell   *lc;

	if (f == NULL || !IsA(f, FuncExpr) || list_length(f->args) < 1 ||
		!IsA(llast(f->args), Const) || ((Const *) llast(f->args))->consttype != TEXTOID)
		elog(ERROR, "dp_agg: dp_agg_internal.row_eval called outside a plan");
	k = llast(f->args);
	re->expr = stringToNode(TextDatumGetCString(k->constvalue));
	n = list_length(f->args) - 1;
	re->params = makeParamList(n);
	re->params->numParams = n;
	foreach(lc, f->args)
	{
		int			i = foreach_current_index(lc);

		if (i >= n)
			break;
		re->params->params[i].ptype = exprType(lfirst(lc));
		re->params->params[i].pflags = PARAM_FLAG_CONST;
	}
	re->trap.cxt = AllocSetContextCreate(flinfo->fn_mcxt, "dp_agg row expression",
										 ALLOCSET_SMALL_SIZES);
	MemoryContextSwitchTo(old);
	flinfo->fn_extra = re;
	return re;
}

static void
eval_expr(RowEval *re)
{
	/* built in the trap: its errors are the row's too */
	if (re->state == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(re->trap.cxt);

		re->econtext = CreateStandaloneExprContext();
		re->econtext->ecxt_param_list_info = re->params;
		re->state = ExecInitExpr(re->expr, NULL);
		MemoryContextSwitchTo(old);
	}
	re->result = ExecEvalExpr(re->state, re->econtext, &re->isnull);
}

/* The expression in the trap: false if it failed. */
static bool
eval_trapped(RowEval *re)
{
	TrapFrame	frame;
	volatile bool failed = false;

	trap_enter(&re->trap, &frame);
	PG_TRY();
	{
		trap_push(&re->trap, &frame);
		eval_expr(re);
		trap_pop(&frame);
	}
	PG_CATCH();
	{
		trap_catch(&frame);
		failed = true;
	}
	PG_END_TRY();
	if (failed)
	{
		trap_reset(&re->trap);
		re->state = NULL;		/* was in trap.cxt, now reset */
		re->econtext = NULL;
	}
	return !failed;
}

/*
 * dp_agg_internal.row_eval(internal) returns internal: the expression's value for
 * these inputs, NULL if it fails.
 */
Datum
dp_row_eval(PG_FUNCTION_ARGS)
{
	RowEval    *re = fcinfo->flinfo->fn_extra;

	if (re == NULL)
		re = row_eval_init(fcinfo);
	for (int i = 0; i < re->params->numParams; i++)
	{
		re->params->params[i].value = fcinfo->args[i].value;
		re->params->params[i].isnull = fcinfo->args[i].isnull;
	}
	if (!eval_trapped(re))
		PG_RETURN_NULL();
	fcinfo->isnull = re->isnull;
	return re->result;
}
