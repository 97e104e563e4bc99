/*-------------------------------------------------------------------------
 *
 * bins.c
 *	  Derived bin domains: the keys a GROUP BY expression can take, given
 *	  the constants of its statement.
 *
 * doc/units-and-groups.md, "Public group keys".  A GROUP BY key whose possible
 * values follow from the statement alone needs no private selection: the
 * statement releases every one of them (public_domain.c).  Derived here, only
 * where the set is provably the set of values the key can take for any rows,
 * as constants of the key's type, ascending:
 *
 *   - a boolean: false, true;
 *   - an enum: its labels (the catalog is public), in their order;
 *   - width_bucket(x, lo, hi, n) with constant lo <> hi (finite) and n > 0:
 *     0 .. n + 1 (values below lo, the n buckets, values from hi up);
 *     width_bucket(x, thresholds) with a constant array: 0 .. its length;
 *   - date_trunc(unit, x), unit a constant from second to millennium, with
 *     both bounds of a range on x (or on the date x is cast from) among the
 *     conjuncts of the WHERE: every truncation point from the truncation of
 *     the lower bound to the upper bound;
 *   - integer bands x / c * c and x / c (c a positive constant), and x
 *     itself, for an integer x with both bounds among the conjuncts of the
 *     WHERE: each band any integer of the range falls in.
 *
 * Parameters of prepared statements are not constants here: a statement
 * has the same domain in its custom and generic plans.  NULL is a key too
 * unless the key is never NULL (dp_bins_never_null): the caller adds it.
 * A range that admits more than max_keys keys gives no domain (the keys are
 * then selected privately, as for any other GROUP BY).
 *
 * Truncation points are enumerated with the truncation function itself,
 * stepping from one point by at least the shortest length the unit has
 * (a day of 22 hours covers the daylight saving shifts of every time zone)
 * and then by at most the shortest of an hour and the unit, until the
 * truncation moves: the first point past the step is never skipped.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/stratnum.h"
#include "catalog/pg_enum.h"
#include "catalog/pg_type.h"
#include "common/int.h"
#include "datatype/timestamp.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/scansup.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/datetime.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/catcache.h"
#include "utils/numeric.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "bins.h"
#include "compat.h"

/* ---------- expressions and constants ---------- */

/*
 * A copy of an expression with its immutable functions of constants
 * folded (no parameter values: they are not constants here).
 */
Node *
dp_bins_simplify(Node *node)
{
	return eval_const_expressions(NULL, copyObject(node));
}

static Node *
strip(Node *node)
{
	while (node != NULL && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	return node;
}

/* the non-NULL constant an expression folds to, or NULL */
static Const *
constant(Node *node)
{
	Node	   *n = strip(dp_bins_simplify(node));

	if (n == NULL || !IsA(n, Const) || ((Const *) n)->constisnull)
		return NULL;
	return (Const *) n;
}

/* does the expression match key, up to relabeling? */
static bool
same(Node *a, Node *b)
{
	return equal(strip(a), strip(b));
}

static bool
is_int_type(Oid type)
{
	return type == INT2OID || type == INT4OID || type == INT8OID;
}

static bool
int_value(Const *c, int64 *v)
{
	if (c == NULL)
		return false;
	switch (c->consttype)
	{
		case INT2OID:
			*v = DatumGetInt16(c->constvalue);
			return true;
		case INT4OID:
			*v = DatumGetInt32(c->constvalue);
			return true;
		case INT8OID:
			*v = DatumGetInt64(c->constvalue);
			return true;
		default:
			return false;
	}
}

static Const *
make_key(Oid type, Datum value)
{
	int16		typlen;
	bool		typbyval;

	get_typlenbyval(type, &typlen, &typbyval);
	return makeConst(type, -1, InvalidOid, typlen, value, false, typbyval);
}

/* an integer of the key's type */
static Const *
int_key(Oid type, int64 v)
{
	switch (type)
	{
		case INT2OID:
			return make_key(type, Int16GetDatum((int16) v));
		case INT4OID:
			return make_key(type, Int32GetDatum((int32) v));
		default:
			return make_key(type, Int64GetDatum(v));
	}
}

/* ---------- ranges of the WHERE ---------- */

/*
 * The comparisons of x with a constant among the conjuncts: for each, the
 * btree strategy of "x op c" (commuted when the constant is on the left)
 * and the constant.  Equality is both bounds.
 */
typedef struct Bound
{
	int			strategy;
	Const	   *value;
} Bound;

static List *
bounds_of(Node *x, List *quals)
{
	List	   *result = NIL;
	ListCell   *lc;

	foreach(lc, quals)
	{
		Node	   *q = lfirst(lc);
		OpExpr	   *op;
		Node	   *l,
				   *r;
		bool		commuted;
		Const	   *c;
		List	   *interps;
		ListCell   *lc2;

		if (!IsA(q, OpExpr) || list_length(((OpExpr *) q)->args) != 2)
			continue;
		op = (OpExpr *) q;
		l = linitial(op->args);
		r = lsecond(op->args);
		if (same(l, x) && (c = constant(r)) != NULL)
			commuted = false;
		else if (same(r, x) && (c = constant(l)) != NULL)
			commuted = true;
		else
			continue;
		interps = DP_OP_BTREE_STRATEGIES(op->opno);
		foreach(lc2, interps)
		{
			Bound	   *b;
			int			s = lfirst_int(lc2);

			if (s < BTLessStrategyNumber || s > BTGreaterStrategyNumber)
				continue;
			if (commuted)
				s = BTMaxStrategyNumber + 1 - s;
			b = palloc(sizeof(Bound));
			b->strategy = s;
			b->value = c;
			result = lappend(result, b);
			break;
		}
	}
	return result;
}

/*
 * The range [*lo, *hi] of an integer-valued x (integers, dates and
 * timestamps as their int64 count of units): strict bounds move by one
 * unit; false unless both ends are bounded.  value converts a bound's
 * constant (false: not a usable bound).
 */
typedef bool (*BoundValue) (Const *c, int64 *v);

static bool
range_of(Node *x, List *quals, BoundValue value, int64 *lo, int64 *hi)
{
	bool		has_lo = false,
				has_hi = false;
	ListCell   *lc;

	foreach(lc, bounds_of(x, quals))
	{
		Bound	   *b = lfirst(lc);
		int64		v;

		if (!value(b->value, &v))
			continue;
		switch (b->strategy)
		{
			case BTLessStrategyNumber:
				if (v == PG_INT64_MIN)
					return false;
				v--;
				/* FALLTHROUGH */
			case BTLessEqualStrategyNumber:
				*hi = has_hi ? Min(*hi, v) : v;
				has_hi = true;
				break;
			case BTEqualStrategyNumber:
				*hi = has_hi ? Min(*hi, v) : v;
				*lo = has_lo ? Max(*lo, v) : v;
				has_hi = has_lo = true;
				break;
			case BTGreaterStrategyNumber:
				if (v == PG_INT64_MAX)
					return false;
				v++;
				/* FALLTHROUGH */
			case BTGreaterEqualStrategyNumber:
				*lo = has_lo ? Max(*lo, v) : v;
				has_lo = true;
				break;
		}
	}
	return has_lo && has_hi;
}

/* ---------- booleans and enums ---------- */

static List *
bool_keys(void)
{
	return list_make2(make_key(BOOLOID, BoolGetDatum(false)), make_key(BOOLOID, BoolGetDatum(true)));
}

static int
enum_order_cmp(const ListCell *a, const ListCell *b)
{
	float4		x = ((Form_pg_enum) GETSTRUCT((HeapTuple) lfirst(a)))->enumsortorder;
	float4		y = ((Form_pg_enum) GETSTRUCT((HeapTuple) lfirst(b)))->enumsortorder;

	return x < y ? -1 : x > y ? 1 : 0;
}

static List *
enum_keys(Oid type)
{
	CatCList   *list = SearchSysCacheList1(ENUMTYPOIDNAME, ObjectIdGetDatum(type));
	List	   *tuples = NIL;
	List	   *keys = NIL;
	ListCell   *lc;

	for (int i = 0; i < list->n_members; i++)
		tuples = lappend(tuples, &list->members[i]->tuple);
	list_sort(tuples, enum_order_cmp);
	foreach(lc, tuples)
		keys = lappend(keys, make_key(type, ObjectIdGetDatum(((Form_pg_enum) GETSTRUCT((HeapTuple) lfirst(lc)))->oid)));
	ReleaseSysCacheList(list);
	return keys;
}

/* ---------- width_bucket ---------- */

static bool
finite_bound(Const *c)
{
	if (c->consttype == FLOAT8OID)
		return isfinite(DatumGetFloat8(c->constvalue));
	if (c->consttype == NUMERICOID)
	{
		Numeric		n = DatumGetNumeric(c->constvalue);

		return !numeric_is_nan(n) && !numeric_is_inf(n);
	}
	return false;
}

/* 0 .. n + 1, or 0 .. len for the thresholds form; false if not constant */
static bool
width_bucket_keys(FuncExpr *f, int max_keys, List **keys)
{
	int64		last;

	if (f->funcid == F_WIDTH_BUCKET_FLOAT8_FLOAT8_FLOAT8_INT4 ||
		f->funcid == F_WIDTH_BUCKET_NUMERIC_NUMERIC_NUMERIC_INT4)
	{
		Const	   *lo = constant(lsecond(f->args));
		Const	   *hi = constant(lthird(f->args));
		Const	   *n = constant(lfourth(f->args));

		if (lo == NULL || hi == NULL || n == NULL || !finite_bound(lo) || !finite_bound(hi) ||
			DatumGetInt32(n->constvalue) <= 0)
			return false;
		if (lo->consttype == FLOAT8OID
			? DatumGetFloat8(lo->constvalue) == DatumGetFloat8(hi->constvalue)
			: DatumGetInt32(DirectFunctionCall2(numeric_cmp, lo->constvalue, hi->constvalue)) == 0)
			return false;
		last = (int64) DatumGetInt32(n->constvalue) + 1;
	}
	else if (f->funcid == F_WIDTH_BUCKET_ANYCOMPATIBLE_ANYCOMPATIBLEARRAY)
	{
		Const	   *t = constant(lsecond(f->args));
		ArrayType  *a;

		if (t == NULL)
			return false;
		a = DatumGetArrayTypeP(t->constvalue);
		/* width_bucket refuses multidimensional thresholds and NULLs in them */
		if (ARR_NDIM(a) > 1 || array_contains_nulls(a))
			return false;
		last = ARR_NDIM(a) == 0 ? 0 : ARR_DIMS(a)[0];
	}
	else
		return false;
	if (last + 1 > max_keys)
		return false;
	*keys = NIL;
	for (int64 i = 0; i <= last; i++)
		*keys = lappend(*keys, int_key(INT4OID, i));
	return true;
}

/* ---------- date_trunc ---------- */

/* a timestamp bound of x's type: the constant's type or a date */
static bool
timestamp_bound(Const *c, int64 *v)
{
	switch (c->consttype)
	{
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			*v = DatumGetInt64(c->constvalue);
			return !TIMESTAMP_NOT_FINITE(*v);
		default:
			return false;
	}
}

static bool
date_bound(Const *c, int64 *v)
{
	DateADT		d;

	if (c->consttype != DATEOID)
		return false;
	d = DatumGetDateADT(c->constvalue);
	if (DATE_NOT_FINITE(d))
		return false;
	*v = d;
	return true;
}

/* the shortest length of a unit, in microseconds (see the file's comment) */
static int64
unit_min_length(int unit)
{
	switch (unit)
	{
		case DTK_SECOND:
			return USECS_PER_SEC;
		case DTK_MINUTE:
			return USECS_PER_MINUTE;
		case DTK_HOUR:
			return USECS_PER_HOUR / 2;
		case DTK_DAY:
			return 22 * USECS_PER_HOUR;
		case DTK_WEEK:
			return 7 * 22 * USECS_PER_HOUR;
		case DTK_MONTH:
			return 27 * USECS_PER_DAY;
		case DTK_QUARTER:
			return 88 * USECS_PER_DAY;
		case DTK_YEAR:
			return 364 * USECS_PER_DAY;
		case DTK_DECADE:
			return 10 * 364 * USECS_PER_DAY;
		case DTK_CENTURY:
			return 100 * 364 * USECS_PER_DAY;
		case DTK_MILLENNIUM:
			return 1000 * 364 * USECS_PER_DAY;
		default:
			return 0;
	}
}

/* the truncation of t, by the statement's own function */
static int64
truncate_ts(FuncExpr *f, Const *unit, Const *zone, int64 t)
{
	Datum		r;

	if (zone != NULL)
		r = OidFunctionCall3(f->funcid, unit->constvalue, Int64GetDatum(t), zone->constvalue);
	else
		r = OidFunctionCall2(f->funcid, unit->constvalue, Int64GetDatum(t));
	return DatumGetInt64(r);
}

/* the largest timestamps enumerated: far inside the type's range */
#define TS_LIMIT (INT64CONST(100000) * 366 * USECS_PER_DAY)

static bool
date_trunc_keys(FuncExpr *f, List *quals, int max_keys, List **keys)
{
	Const	   *unit;
	Const	   *zone = NULL;
	Node	   *x;
	char	   *units;
	int			type,
				val;
	int64		step,
				quantum,
				lo = 0,
				hi = 0,
				k;
	bool		ranged;
	Oid			tstype = exprType((Node *) f);

	if (f->funcid != F_DATE_TRUNC_TEXT_TIMESTAMP && f->funcid != F_DATE_TRUNC_TEXT_TIMESTAMPTZ &&
		f->funcid != F_DATE_TRUNC_TEXT_TIMESTAMPTZ_TEXT)
		return false;
	unit = constant(linitial(f->args));
	x = lsecond(f->args);
	if (f->funcid == F_DATE_TRUNC_TEXT_TIMESTAMPTZ_TEXT &&
		(zone = constant(lthird(f->args))) == NULL)
		return false;
	if (unit == NULL)
		return false;
	units = downcase_truncate_identifier(TextDatumGetCString(unit->constvalue),
										 strlen(TextDatumGetCString(unit->constvalue)), false);
	type = DecodeUnits(0, units, &val);
	if (type != UNITS || (step = unit_min_length(val)) == 0)
		return false;
	quantum = Min(step, USECS_PER_HOUR);

	/* a range on x itself, or on the date x is cast from */
	ranged = range_of(x, quals, timestamp_bound, &lo, &hi);
	if (!ranged && IsA(strip(x), FuncExpr) &&
		(((FuncExpr *) strip(x))->funcid == F_TIMESTAMP_DATE ||
		 ((FuncExpr *) strip(x))->funcid == F_TIMESTAMPTZ_DATE))
	{
		FuncExpr   *cast = (FuncExpr *) strip(x);
		int64		dlo,
					dhi;
		int			overflow = 0;

		if (!range_of(linitial(cast->args), quals, date_bound, &dlo, &dhi) ||
			dlo < -TS_LIMIT / USECS_PER_DAY || dhi > TS_LIMIT / USECS_PER_DAY)
			return false;
		if (cast->funcid == F_TIMESTAMP_DATE)
		{
			lo = date2timestamp_opt_overflow((DateADT) dlo, &overflow);
			hi = date2timestamp_opt_overflow((DateADT) dhi, &overflow);
		}
		else
		{
			lo = date2timestamptz_opt_overflow((DateADT) dlo, &overflow);
			hi = date2timestamptz_opt_overflow((DateADT) dhi, &overflow);
		}
		if (overflow != 0)
			return false;
		ranged = true;
	}
	if (!ranged || lo > hi || lo < -TS_LIMIT || hi > TS_LIMIT || tstype == InvalidOid)
		return false;

	*keys = NIL;
	k = truncate_ts(f, unit, zone, lo);
	while (k <= hi)
	{
		int64		t = k + step;
		int64		next;

		if (list_length(*keys) >= max_keys)
			return false;
		*keys = lappend(*keys, make_key(tstype, Int64GetDatum(k)));
		while ((next = truncate_ts(f, unit, zone, t)) <= k)
		{
			t += quantum;
			CHECK_FOR_INTERRUPTS();
		}
		k = next;
	}
	return true;
}

/* ---------- integer bands ---------- */

static bool
is_int_div(Oid funcid)
{
	return funcid == F_INT2DIV || funcid == F_INT4DIV || funcid == F_INT8DIV ||
		funcid == F_INT24DIV || funcid == F_INT42DIV || funcid == F_INT48DIV ||
		funcid == F_INT84DIV || funcid == F_INT28DIV || funcid == F_INT82DIV;
}

static bool
is_int_mul(Oid funcid)
{
	return funcid == F_INT2MUL || funcid == F_INT4MUL || funcid == F_INT8MUL ||
		funcid == F_INT24MUL || funcid == F_INT42MUL || funcid == F_INT48MUL ||
		funcid == F_INT84MUL || funcid == F_INT28MUL || funcid == F_INT82MUL;
}

/* x / c with a positive constant c: x and c */
static bool
int_division(Node *e, Node **x, int64 *c)
{
	OpExpr	   *op;

	e = strip(e);
	if (!IsA(e, OpExpr) || list_length(((OpExpr *) e)->args) != 2)
		return false;
	op = (OpExpr *) e;
	set_opfuncid(op);
	if (!is_int_div(op->opfuncid) || !int_value(constant(lsecond(op->args)), c) || *c <= 0)
		return false;
	*x = linitial(op->args);
	return is_int_type(exprType(*x));
}

/*
 * The bands of an integer key: x, x / c or x / c * c (or c * (x / c)), with
 * the band's divisor and whether the key is multiplied back.
 */
static bool
int_band(Node *e, Node **x, int64 *c, bool *times)
{
	Node	   *s = strip(e);

	*times = false;
	if (int_division(s, x, c))
		return true;
	if (IsA(s, OpExpr) && list_length(((OpExpr *) s)->args) == 2)
	{
		OpExpr	   *op = (OpExpr *) s;
		int64		m;

		set_opfuncid(op);
		if (is_int_mul(op->opfuncid))
		{
			Node	   *l = linitial(op->args);
			Node	   *r = lsecond(op->args);

			if (int_division(l, x, c) && int_value(constant(r), &m) && m == *c)
				return (*times = true);
			if (int_division(r, x, c) && int_value(constant(l), &m) && m == *c)
				return (*times = true);
		}
	}
	*x = s;
	*c = 1;
	return is_int_type(exprType(s));
}

/* v / c as C divides (toward zero) */
static int64
band_of(int64 v, int64 c)
{
	return v / c;
}

/* the first integer after the band of v */
static bool
band_end(int64 v, int64 c, int64 *next)
{
	int64		b = band_of(v, c);
	int64		r;

	/* band b > 0 is [b c, b c + c - 1], band 0 [-(c - 1), c - 1], b < 0 [b c - c + 1, b c] */
	if (b > 0)
	{
		if (pg_mul_s64_overflow(b + 1, c, &r))
			return false;
	}
	else if (b == 0)
		r = c;
	else
	{
		if (pg_mul_s64_overflow(b, c, &r) || pg_add_s64_overflow(r, 1, &r))
			return false;
	}
	*next = r;
	return true;
}

static bool
int_bound(Const *c, int64 *v)
{
	return int_value(c, v);
}

static bool
band_keys(Node *key, List *quals, int max_keys, List **keys)
{
	Node	   *x;
	int64		c,
				lo,
				hi,
				v;
	bool		times;
	Oid			type = exprType(key);

	if (!is_int_type(type) || !int_band(key, &x, &c, &times) ||
		!range_of(x, quals, int_bound, &lo, &hi) || lo > hi)
		return false;
	*keys = NIL;
	for (v = lo;;)
	{
		int64		next;

		if (list_length(*keys) >= max_keys)
			return false;
		*keys = lappend(*keys, int_key(type, times ? band_of(v, c) * c : band_of(v, c)));
		if (!band_end(v, c, &next) || next > hi)
			break;
		v = next;
		CHECK_FOR_INTERRUPTS();
	}
	return true;
}

/* ---------- the domain of a key ---------- */

/*
 * The keys a GROUP BY expression can take given the conjuncts of its
 * WHERE (quals, in the same terms), ascending, without NULL; false if
 * none is derived (see the file's comment).  *source names the rule.
 */
bool
dp_bins_domain(Node *key, List *quals, int max_keys, List **keys, const char **source)
{
	Oid			type = exprType(key);
	Node	   *s = strip(key);

	if (type == BOOLOID)
	{
		*keys = bool_keys();
		*source = "boolean";
		return max_keys >= 2;
	}
	if (type_is_enum(type))
	{
		*keys = enum_keys(type);
		*source = "enum";
		return list_length(*keys) <= max_keys;
	}
	if (IsA(s, FuncExpr) && width_bucket_keys((FuncExpr *) s, max_keys, keys))
	{
		*source = "width_bucket";
		return true;
	}
	if (IsA(s, FuncExpr) && date_trunc_keys((FuncExpr *) s, quals, max_keys, keys))
	{
		*source = "date_trunc";
		return true;
	}
	if (band_keys(key, quals, max_keys, keys))
	{
		*source = "range";
		return true;
	}
	return false;
}

/* ---------- NULL ---------- */

/*
 * Functions that return NULL only for a NULL argument (strict, and never
 * NULL otherwise): those of the derived domains.  Comparison operators
 * (with a btree interpretation) are too.  Other strict functions may
 * return NULL for values (jsonb ->> a missing key), so NULL stays a key.
 */
static bool
null_only_if_null(Oid funcid)
{
	return is_int_div(funcid) || is_int_mul(funcid) ||
		funcid == F_WIDTH_BUCKET_FLOAT8_FLOAT8_FLOAT8_INT4 ||
		funcid == F_WIDTH_BUCKET_NUMERIC_NUMERIC_NUMERIC_INT4 ||
		funcid == F_WIDTH_BUCKET_ANYCOMPATIBLE_ANYCOMPATIBLEARRAY ||
		funcid == F_DATE_TRUNC_TEXT_TIMESTAMP || funcid == F_DATE_TRUNC_TEXT_TIMESTAMPTZ ||
		funcid == F_DATE_TRUNC_TEXT_TIMESTAMPTZ_TEXT ||
		funcid == F_TIMESTAMP_DATE || funcid == F_TIMESTAMPTZ_DATE ||
		funcid == F_FLOAT8_INT2 || funcid == F_FLOAT8_INT4 || funcid == F_FLOAT8_INT8 ||
		funcid == F_INT4_NUMERIC || funcid == F_INT8_NUMERIC || funcid == F_INT2_NUMERIC;
}

/* is the Var one that a strict conjunct, or IS NOT NULL, requires? */
static bool
required_by_quals(Node *v, List *quals)
{
	ListCell   *lc;

	foreach(lc, quals)
	{
		Node	   *q = lfirst(lc);
		List	   *args = NIL;
		ListCell   *lc2;

		if (IsA(q, NullTest) && ((NullTest *) q)->nulltesttype == IS_NOT_NULL &&
			!((NullTest *) q)->argisrow && same((Node *) ((NullTest *) q)->arg, v))
			return true;
		if (IsA(q, OpExpr))
		{
			set_opfuncid((OpExpr *) q);
			if (func_strict(((OpExpr *) q)->opfuncid))
				args = ((OpExpr *) q)->args;
		}
		else if (IsA(q, FuncExpr) && func_strict(((FuncExpr *) q)->funcid))
			args = ((FuncExpr *) q)->args;
		else if (IsA(q, ScalarArrayOpExpr))
		{
			set_sa_opfuncid((ScalarArrayOpExpr *) q);
			if (func_strict(((ScalarArrayOpExpr *) q)->opfuncid))
				args = list_make1(linitial(((ScalarArrayOpExpr *) q)->args));
		}
		foreach(lc2, args)
			if (same(lfirst(lc2), v))
				return true;
	}
	return false;
}

/*
 * Is the expression never NULL for the rows that pass the conjuncts: a
 * non-NULL constant, a column declared NOT NULL (of relation relid, read
 * as varno), an expression a strict conjunct requires, or a strict
 * function of such?
 */
bool
dp_bins_never_null(Node *expr, List *quals, Oid relid, Index varno)
{
	Node	   *e = strip(expr);

	if (e == NULL)
		return false;
	if (required_by_quals(e, quals))
		return true;
	if (IsA(e, Const))
		return !((Const *) e)->constisnull;
	if (IsA(e, Var))
	{
		Var		   *v = (Var *) e;
		HeapTuple	tup;
		bool		notnull = false;

		if (!OidIsValid(relid) || v->varno != (int) varno || v->varlevelsup != 0 || v->varattno <= 0)
			return false;
		tup = SearchSysCache2(ATTNUM, ObjectIdGetDatum(relid), Int16GetDatum(v->varattno));
		if (HeapTupleIsValid(tup))
		{
			notnull = ((Form_pg_attribute) GETSTRUCT(tup))->attnotnull;
			ReleaseSysCache(tup);
		}
		return notnull;
	}
	if (IsA(e, FuncExpr) || IsA(e, OpExpr))
	{
		List	   *args;
		ListCell   *lc;

		if (IsA(e, FuncExpr))
		{
			if (!null_only_if_null(((FuncExpr *) e)->funcid))
				return false;
			args = ((FuncExpr *) e)->args;
		}
		else
		{
			set_opfuncid((OpExpr *) e);
			if (!null_only_if_null(((OpExpr *) e)->opfuncid) &&
				DP_OP_BTREE_STRATEGIES(((OpExpr *) e)->opno) == NIL)
				return false;
			args = ((OpExpr *) e)->args;
		}
		foreach(lc, args)
			if (!dp_bins_never_null(lfirst(lc), quals, relid, varno))
				return false;
		return true;
	}
	return false;
}
