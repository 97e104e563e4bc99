/*-------------------------------------------------------------------------
 *
 * row_rules.c
 *	  Which functions, types and expressions may be evaluated on the rows
 *	  of protected relations, and how.
 *
 * doc/guard.md, "Protected tables": nothing on the row path can fail or
 * report.  A function may be called on the rows of a protected relation, in a
 * statement of a role untrusted for it, if it is built in, not volatile,
 * does not return a set, and is either LEAKPROOF, in the list below (the
 * everyday functions of analysts), or allowed by a DBA
 * (dp_agg.allowed_function, checked by the callers).  Every such call is
 * evaluated through a trap (row_trap.c) that turns its failure into NULL,
 * unless it cannot fail at all (dp_row_never_fails).
 *
 * The list names the C functions (pg_proc.prosrc of language internal), so
 * that every SQL name and operator of one implementation is covered.  What
 * it holds was reviewed for the trap: each computes a value from its
 * arguments and the session's settings, without side effects, without
 * running queries (no SPI, no active snapshot) and without holding a lock
 * or buffer when it raises an error; what it allocates is memory and the
 * caches of fmgr (fn_extra), which the trap resets after a failure.  Its
 * work is bounded by its arguments' sizes: functions whose output size an
 * argument sets (lpad, rpad) take that argument from the statement
 * (dp_row_size_arg, counted in the work bound), and repeat is not here.
 * Regular expressions and LIKE take their patterns from the statement
 * (dp_row_fixed_from), so a pattern is compiled once, and patterns with
 * back-references, which PostgreSQL's engine matches by backtracking, are
 * refused (dp_row_pattern_backrefs).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/transam.h"
#include "catalog/pg_language.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"
#include "utils/typcache.h"
#include "utils/tuplestore.h"

#include "compat.h"
#include "protect.h"
#include "row_compare.h"
#include "row_rules.h"

PG_FUNCTION_INFO_V1(dp_row_functions);

/* what a listed function is */
#define ROW_NEVER_FAILS	0x01	/* cannot fail for any argument: no trap */
#define ROW_FIXED1		0x02	/* arguments from the second on come from the
								 * statement (patterns, sizes) */
#define ROW_FIXED0		0x04	/* every argument comes from the statement */
#define ROW_REGEX		0x08	/* the second argument is a regular expression */
#define ROW_SIZE1		0x10	/* the second argument is an output size */
#define ROW_ANY_IO		0x20	/* calls the output functions of its
								 * arguments' types (VARIADIC "any") */
#define ROW_DIVISION	0x40	/* integer division or remainder: fails only
								 * for a divisor of 0 or -1 */

typedef struct RowFunction
{
	const char *name;			/* prosrc; a signature for SQL functions */
	int			flags;
} RowFunction;

/*
 * The everyday built-ins (doc/guard.md, "Protected tables", "What may be
 * computed on rows").  Names of C functions, so one entry covers every
 * SQL name and operator of one implementation; versions that lack a name
 * simply never match it.
 */
static const RowFunction row_functions[] = {
	/* integer arithmetic, bit operations, casts */
	{"int2pl", 0}, {"int2mi", 0}, {"int2mul", 0}, {"int2div", ROW_DIVISION}, {"int2mod", ROW_DIVISION},
	{"int2um", 0}, {"int2up", ROW_NEVER_FAILS}, {"int2abs", 0},
	{"int2larger", ROW_NEVER_FAILS}, {"int2smaller", ROW_NEVER_FAILS},
	{"int2and", ROW_NEVER_FAILS}, {"int2or", ROW_NEVER_FAILS}, {"int2xor", ROW_NEVER_FAILS},
	{"int2not", ROW_NEVER_FAILS}, {"int2shl", ROW_NEVER_FAILS}, {"int2shr", ROW_NEVER_FAILS},
	{"int4pl", 0}, {"int4mi", 0}, {"int4mul", 0}, {"int4div", ROW_DIVISION}, {"int4mod", ROW_DIVISION},
	{"int4um", 0}, {"int4up", ROW_NEVER_FAILS}, {"int4abs", 0}, {"int4inc", 0},
	{"int4larger", ROW_NEVER_FAILS}, {"int4smaller", ROW_NEVER_FAILS},
	{"int4and", ROW_NEVER_FAILS}, {"int4or", ROW_NEVER_FAILS}, {"int4xor", ROW_NEVER_FAILS},
	{"int4not", ROW_NEVER_FAILS}, {"int4shl", ROW_NEVER_FAILS}, {"int4shr", ROW_NEVER_FAILS},
	{"int4gcd", 0}, {"int4lcm", 0},
	{"int8pl", 0}, {"int8mi", 0}, {"int8mul", 0}, {"int8div", ROW_DIVISION}, {"int8mod", ROW_DIVISION},
	{"int8um", 0}, {"int8up", ROW_NEVER_FAILS}, {"int8abs", 0}, {"int8inc", 0},
	{"int8larger", ROW_NEVER_FAILS}, {"int8smaller", ROW_NEVER_FAILS},
	{"int8and", ROW_NEVER_FAILS}, {"int8or", ROW_NEVER_FAILS}, {"int8xor", ROW_NEVER_FAILS},
	{"int8not", ROW_NEVER_FAILS}, {"int8shl", ROW_NEVER_FAILS}, {"int8shr", ROW_NEVER_FAILS},
	{"int8gcd", 0}, {"int8lcm", 0},
	{"int24pl", 0}, {"int24mi", 0}, {"int24mul", 0}, {"int24div", ROW_DIVISION},
	{"int42pl", 0}, {"int42mi", 0}, {"int42mul", 0}, {"int42div", ROW_DIVISION},
	{"int48pl", 0}, {"int48mi", 0}, {"int48mul", 0}, {"int48div", ROW_DIVISION},
	{"int84pl", 0}, {"int84mi", 0}, {"int84mul", 0}, {"int84div", ROW_DIVISION},
	{"int28pl", 0}, {"int28mi", 0}, {"int28mul", 0}, {"int28div", ROW_DIVISION},
	{"int82pl", 0}, {"int82mi", 0}, {"int82mul", 0}, {"int82div", ROW_DIVISION},
	{"int4_bool", ROW_NEVER_FAILS}, {"bool_int4", ROW_NEVER_FAILS},
	{"i2toi4", ROW_NEVER_FAILS}, {"i4toi2", 0}, {"int28", ROW_NEVER_FAILS}, {"int82", 0},
	{"int48", ROW_NEVER_FAILS}, {"int84", 0},
	{"i2tod", ROW_NEVER_FAILS}, {"i2tof", ROW_NEVER_FAILS}, {"i4tod", ROW_NEVER_FAILS},
	{"i4tof", ROW_NEVER_FAILS}, {"i8tod", ROW_NEVER_FAILS}, {"i8tof", ROW_NEVER_FAILS},
	{"dtoi2", 0}, {"dtoi4", 0}, {"dtoi8", 0}, {"ftoi2", 0}, {"ftoi4", 0}, {"ftoi8", 0},
	{"ftod", ROW_NEVER_FAILS}, {"dtof", 0},
	{"int2_numeric", ROW_NEVER_FAILS}, {"int4_numeric", ROW_NEVER_FAILS},
	{"int8_numeric", ROW_NEVER_FAILS},
	{"numeric_int2", 0}, {"numeric_int4", 0}, {"numeric_int8", 0},
	{"float4_numeric", 0}, {"float8_numeric", 0}, {"numeric_float4", 0}, {"numeric_float8", 0},
	{"numeric", 0},

	/* floating point arithmetic and functions */
	{"float4pl", 0}, {"float4mi", 0}, {"float4mul", 0}, {"float4div", 0},
	{"float4um", ROW_NEVER_FAILS}, {"float4up", ROW_NEVER_FAILS}, {"float4abs", ROW_NEVER_FAILS},
	{"float4larger", ROW_NEVER_FAILS}, {"float4smaller", ROW_NEVER_FAILS},
	{"float8pl", 0}, {"float8mi", 0}, {"float8mul", 0}, {"float8div", 0},
	{"float8um", ROW_NEVER_FAILS}, {"float8up", ROW_NEVER_FAILS}, {"float8abs", ROW_NEVER_FAILS},
	{"float8larger", ROW_NEVER_FAILS}, {"float8smaller", ROW_NEVER_FAILS},
	{"float48pl", 0}, {"float48mi", 0}, {"float48mul", 0}, {"float48div", 0},
	{"float84pl", 0}, {"float84mi", 0}, {"float84mul", 0}, {"float84div", 0},
	{"dround", 0}, {"dtrunc", 0}, {"dceil", 0}, {"dfloor", 0}, {"dsign", 0},
	{"dsqrt", 0}, {"dcbrt", 0}, {"dpow", 0}, {"dexp", 0}, {"dlog1", 0}, {"dlog10", 0},
	{"radians", 0}, {"degrees", 0},
	{"dsin", 0}, {"dcos", 0}, {"dtan", 0}, {"dcot", 0}, {"dasin", 0}, {"dacos", 0},
	{"datan", 0}, {"datan2", 0}, {"dsind", 0}, {"dcosd", 0}, {"dtand", 0}, {"dcotd", 0},
	{"dasind", 0}, {"dacosd", 0}, {"datand", 0}, {"datan2d", 0},
	{"width_bucket_float8", 0}, {"width_bucket_numeric", 0}, {"width_bucket_array", 0},

	/* numeric */
	{"numeric_add", 0}, {"numeric_sub", 0}, {"numeric_mul", 0}, {"numeric_div", 0},
	{"numeric_div_trunc", 0}, {"numeric_mod", 0}, {"numeric_uminus", ROW_NEVER_FAILS},
	{"numeric_uplus", ROW_NEVER_FAILS}, {"numeric_abs", ROW_NEVER_FAILS},
	{"numeric_round", 0}, {"numeric_trunc", 0}, {"numeric_ceil", 0}, {"numeric_floor", 0},
	{"numeric_sign", 0}, {"numeric_sqrt", 0}, {"numeric_power", 0}, {"numeric_exp", 0},
	{"numeric_ln", 0}, {"numeric_log", 0},
	{"numeric_larger", ROW_NEVER_FAILS}, {"numeric_smaller", ROW_NEVER_FAILS},
	{"numeric_cmp", ROW_NEVER_FAILS},
	{"numeric_eq", ROW_NEVER_FAILS}, {"numeric_ne", ROW_NEVER_FAILS},
	{"numeric_lt", ROW_NEVER_FAILS}, {"numeric_le", ROW_NEVER_FAILS},
	{"numeric_gt", ROW_NEVER_FAILS}, {"numeric_ge", ROW_NEVER_FAILS},
	{"numeric_scale", 0}, {"numeric_min_scale", 0}, {"numeric_trim_scale", 0},
	{"numeric_inc", 0}, {"numeric_gcd", 0}, {"numeric_lcm", 0},

	/* text */
	{"lower", 0}, {"upper", 0}, {"initcap", 0}, {"textcat", 0},
	{"text_substr", 0}, {"text_substr_no_len", 0}, {"text_left", 0}, {"text_right", 0},
	{"textlen", ROW_NEVER_FAILS}, {"textoctetlen", ROW_NEVER_FAILS}, {"textpos", 0},
	{"replace_text", 0}, {"btrim", 0}, {"btrim1", 0}, {"ltrim", 0}, {"ltrim1", 0},
	{"rtrim", 0}, {"rtrim1", 0},
	{"lpad", ROW_FIXED1 | ROW_SIZE1}, {"rpad", ROW_FIXED1 | ROW_SIZE1},
	{"split_part", 0}, {"text_reverse", 0}, {"translate", 0},
	{"to_hex32", 0}, {"to_hex64", 0}, {"md5_text", 0}, {"ascii", 0}, {"chr", 0},
	{"text_starts_with", 0}, {"text_concat", ROW_ANY_IO}, {"text_concat_ws", ROW_ANY_IO},
	{"quote_literal", 0}, {"quote_ident", 0}, {"textoverlay", 0}, {"textoverlay_no_len", 0},
	{"text_larger", 0}, {"text_smaller", 0},
	{"text_pattern_lt", 0}, {"text_pattern_le", 0}, {"text_pattern_gt", 0},
	{"text_pattern_ge", 0}, {"bttext_pattern_cmp", 0},
	{"bpchar", 0}, {"varchar", 0}, {"bpcharlen", ROW_NEVER_FAILS}, {"bpcharoctetlen", ROW_NEVER_FAILS},
	{"bpchar_larger", 0}, {"bpchar_smaller", 0}, {"text_name", 0}, {"name_text", 0},
	{"bpchar_name", 0}, {"name_bpchar", 0}, {"char_bpchar", 0}, {"booltext", ROW_NEVER_FAILS},

	/* LIKE, ILIKE, SIMILAR TO and regular expressions, patterns from the statement */
	{"textlike", ROW_FIXED1}, {"textnlike", ROW_FIXED1}, {"texticlike", ROW_FIXED1},
	{"texticnlike", ROW_FIXED1}, {"bpcharlike", ROW_FIXED1}, {"bpcharnlike", ROW_FIXED1},
	{"bpchariclike", ROW_FIXED1}, {"bpcharicnlike", ROW_FIXED1},
	{"namelike", ROW_FIXED1}, {"namenlike", ROW_FIXED1}, {"nameiclike", ROW_FIXED1},
	{"nameicnlike", ROW_FIXED1}, {"like_escape", ROW_FIXED0},
	{"similar_to_escape_1", ROW_FIXED0}, {"similar_to_escape_2", ROW_FIXED0},
	{"similar_escape", ROW_FIXED0},
	{"textregexeq", ROW_FIXED1 | ROW_REGEX}, {"textregexne", ROW_FIXED1 | ROW_REGEX},
	{"texticregexeq", ROW_FIXED1 | ROW_REGEX}, {"texticregexne", ROW_FIXED1 | ROW_REGEX},
	{"nameregexeq", ROW_FIXED1 | ROW_REGEX}, {"nameregexne", ROW_FIXED1 | ROW_REGEX},
	{"nameicregexeq", ROW_FIXED1 | ROW_REGEX}, {"nameicregexne", ROW_FIXED1 | ROW_REGEX},
	{"textregexsubstr", ROW_FIXED1 | ROW_REGEX},
	{"textregexreplace_noopt", ROW_FIXED1 | ROW_REGEX},
	{"textregexreplace", ROW_FIXED1 | ROW_REGEX},
	{"textregexreplace_extended", ROW_FIXED1 | ROW_REGEX},
	{"textregexreplace_extended_no_n", ROW_FIXED1 | ROW_REGEX},
	{"textregexreplace_extended_no_flags", ROW_FIXED1 | ROW_REGEX},
	{"regexp_match", ROW_FIXED1 | ROW_REGEX}, {"regexp_match_no_flags", ROW_FIXED1 | ROW_REGEX},
	{"regexp_like", ROW_FIXED1 | ROW_REGEX}, {"regexp_like_no_flags", ROW_FIXED1 | ROW_REGEX},
	{"regexp_count", ROW_FIXED1 | ROW_REGEX}, {"regexp_count_no_start", ROW_FIXED1 | ROW_REGEX},
	{"regexp_count_no_flags", ROW_FIXED1 | ROW_REGEX},
	{"regexp_instr", ROW_FIXED1 | ROW_REGEX}, {"regexp_instr_no_start", ROW_FIXED1 | ROW_REGEX},
	{"regexp_instr_no_n", ROW_FIXED1 | ROW_REGEX},
	{"regexp_instr_no_endoption", ROW_FIXED1 | ROW_REGEX},
	{"regexp_instr_no_flags", ROW_FIXED1 | ROW_REGEX},
	{"regexp_instr_no_subexpr", ROW_FIXED1 | ROW_REGEX},
	{"regexp_substr", ROW_FIXED1 | ROW_REGEX}, {"regexp_substr_no_start", ROW_FIXED1 | ROW_REGEX},
	{"regexp_substr_no_n", ROW_FIXED1 | ROW_REGEX},
	{"regexp_substr_no_flags", ROW_FIXED1 | ROW_REGEX},
	{"regexp_substr_no_subexpr", ROW_FIXED1 | ROW_REGEX},

	/* dates and times */
	{"timestamp_trunc", 0}, {"timestamptz_trunc", 0}, {"timestamptz_trunc_zone", 0},
	{"interval_trunc", 0},
	{"timestamp_part", 0}, {"timestamptz_part", 0}, {"interval_part", 0}, {"time_part", 0},
	{"timetz_part", 0}, {"extract_date", 0}, {"extract_timestamp", 0},
	{"extract_timestamptz", 0}, {"extract_interval", 0}, {"extract_time", 0},
	{"extract_timetz", 0},
	{"make_date", 0}, {"make_time", 0}, {"make_timestamp", 0}, {"make_timestamptz", 0},
	{"make_timestamptz_at_timezone", 0}, {"make_interval", 0},
	{"date_pli", 0}, {"date_mii", 0}, {"date_mi", 0}, {"date_pl_interval", 0},
	{"date_mi_interval", 0}, {"timestamp_pl_interval", 0}, {"timestamp_mi_interval", 0},
	{"timestamptz_pl_interval", 0}, {"timestamptz_mi_interval", 0},
	{"timestamptz_pl_interval_at_zone", 0}, {"timestamptz_mi_interval_at_zone", 0},
	{"timestamp_mi", 0}, {"interval_pl", 0}, {"interval_mi", 0}, {"interval_um", 0},
	{"interval_mul", 0}, {"interval_div", 0}, {"mul_d_interval", 0},
	{"timestamp_age", 0}, {"timestamptz_age", 0},
	{"interval_justify_days", 0}, {"interval_justify_hours", 0},
	{"interval_justify_interval", 0},
	{"date_timestamp", 0}, {"timestamp_date", 0}, {"timestamptz_date", 0},
	{"date_timestamptz", 0}, {"timestamp_timestamptz", 0}, {"timestamptz_timestamp", 0},
	{"datetime_timestamp", 0}, {"datetimetz_timestamptz", 0}, {"timestamp_time", 0},
	{"timestamptz_time", 0}, {"timestamptz_timetz", 0},
	{"timestamptz_zone", 0}, {"timestamp_zone", 0}, {"timestamptz_izone", 0},
	{"timestamp_izone", 0}, {"float8_timestamptz", 0}, {"to_timestamp", 0}, {"to_date", 0},
	{"timestamp_to_char", 0}, {"timestamptz_to_char", 0}, {"interval_to_char", 0},
	{"int4_to_char", 0}, {"int8_to_char", 0}, {"float4_to_char", 0}, {"float8_to_char", 0},
	{"numeric_to_char", 0}, {"numeric_to_number", 0},
	{"timestamp_bin", 0}, {"timestamptz_bin", 0},
	{"date_finite", ROW_NEVER_FAILS}, {"timestamp_finite", ROW_NEVER_FAILS},
	{"interval_finite", ROW_NEVER_FAILS},
	{"date_larger", ROW_NEVER_FAILS}, {"date_smaller", ROW_NEVER_FAILS},
	{"timestamp_larger", ROW_NEVER_FAILS}, {"timestamp_smaller", ROW_NEVER_FAILS},
	{"interval_larger", 0}, {"interval_smaller", 0},
	{"time_pl_interval", 0}, {"time_mi_interval", 0}, {"time_mi_time", 0},
	{"timetz_pl_interval", 0}, {"timetz_mi_interval", 0},
	{"timestamp_scale", 0}, {"timestamptz_scale", 0}, {"interval_scale", 0},
	{"time_scale", 0}, {"timetz_scale", 0},
	{"now", ROW_NEVER_FAILS}, {"statement_timestamp", ROW_NEVER_FAILS},

	/* arrays */
	{"array_length", ROW_NEVER_FAILS}, {"array_lower", ROW_NEVER_FAILS},
	{"array_upper", ROW_NEVER_FAILS}, {"array_ndims", ROW_NEVER_FAILS},
	{"array_cardinality", ROW_NEVER_FAILS},
	{"arraycontains", 0}, {"arraycontained", 0}, {"arrayoverlap", 0},
	{"array_position", 0}, {"array_position_start", 0},
	{"array_to_text", ROW_ANY_IO}, {"array_to_text_null", ROW_ANY_IO},
	{"text_to_array", 0}, {"text_to_array_null", 0},
	{"array_eq", 0}, {"array_ne", 0}, {"array_lt", 0}, {"array_gt", 0}, {"array_le", 0},
	{"array_ge", 0}, {"btarraycmp", 0}, {"array_larger", 0}, {"array_smaller", 0},

	/* JSON */
	{"jsonb_object_field", 0}, {"jsonb_object_field_text", 0}, {"jsonb_array_element", 0},
	{"jsonb_array_element_text", 0}, {"jsonb_extract_path", 0},
	{"jsonb_extract_path_text", 0}, {"jsonb_typeof", 0}, {"jsonb_array_length", 0},
	{"jsonb_contains", 0}, {"jsonb_contained", 0}, {"jsonb_exists", 0},
	{"jsonb_exists_any", 0}, {"jsonb_exists_all", 0},
	{"jsonb_eq", 0}, {"jsonb_ne", 0}, {"jsonb_lt", 0}, {"jsonb_gt", 0}, {"jsonb_le", 0},
	{"jsonb_ge", 0}, {"jsonb_cmp", 0},
	{"jsonb_numeric", 0}, {"jsonb_int2", 0}, {"jsonb_int4", 0}, {"jsonb_int8", 0},
	{"jsonb_float4", 0}, {"jsonb_float8", 0}, {"jsonb_bool", 0},
	{"json_object_field", 0}, {"json_object_field_text", 0}, {"json_array_element", 0},
	{"json_array_element_text", 0}, {"json_extract_path", 0}, {"json_extract_path_text", 0},
	{"json_typeof", 0}, {"json_array_length", 0},
};

/*
 * Built-in functions in SQL that the planner inlines into calls of the
 * list above (their bodies are checked again once inlined, row_seal.c).
 */
static const RowFunction row_sql_functions[] = {
	{"lpad(text,integer)", ROW_FIXED1 | ROW_SIZE1},
	{"rpad(text,integer)", ROW_FIXED1 | ROW_SIZE1},
	{"date_part(text,date)", 0},
	{"round(numeric)", 0}, {"trunc(numeric)", 0}, {"log(numeric)", 0}, {"log10(numeric)", 0},
	{"bit_length(text)", 0},
	{"\"substring\"(text,text,text)", ROW_FIXED1},
	{"age(timestamp without time zone)", 0}, {"age(timestamp with time zone)", 0},
	{"timestamptz(date,time without time zone)", 0},
	{"integer_pl_date(integer,date)", 0}, {"interval_pl_date(interval,date)", 0},
	{"interval_pl_timestamp(interval,timestamp without time zone)", 0},
	{"interval_pl_timestamptz(interval,timestamp with time zone)", 0},
	{"timedate_pl(time without time zone,date)", 0},
	{"interval_pl_time(interval,time without time zone)", 0},
};

/*
 * LEAKPROOF functions that fail nevertheless, at every call: starts_with
 * (the operator ^@) with a nondeterministic collation.
 */
static const Oid fails_anyway[] = {F_STARTS_WITH};

/* the functions with a soft version (row_trap.c) */
#define SOFT_NAME(f, name, op, a, b, r) {F_##f, #name},
static const struct
{
	Oid			funcid;
	const char *name;
}			soft_names[] = {
	DP_ROW_SOFT_FUNCS(SOFT_NAME)
};

/*
 * The name of the soft version of a function in the schema dp_agg
 * (row_int4pl for int4pl), or NULL if it has none.
 */
const char *
dp_row_soft_name(Oid funcid)
{
	for (size_t i = 0; i < lengthof(soft_names); i++)
		if (soft_names[i].funcid == funcid)
			return psprintf("row_%s", soft_names[i].name);
	return NULL;
}

/* the list entries of the functions looked up so far (built-ins never change) */
typedef struct RowFunctionEntry
{
	Oid			funcid;
	const RowFunction *function;
} RowFunctionEntry;

static HTAB *row_function_cache = NULL;

static const RowFunction *lookup_row_function(Oid funcid);

/* The list entry of a built-in function; NULL if it has none. */
static const RowFunction *
row_function(Oid funcid)
{
	RowFunctionEntry *e;
	bool		found;

	if (funcid >= FirstNormalObjectId)
		return NULL;
	if (row_function_cache == NULL)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(RowFunctionEntry);
		row_function_cache = hash_create("dp_agg functions on rows", 256, &ctl,
										 HASH_ELEM | HASH_BLOBS);
	}
	e = hash_search(row_function_cache, &funcid, HASH_FIND, NULL);
	if (e != NULL)
		return e->function;
	/* looked up before the entry is made: an error leaves no entry */
	{
		const RowFunction *f = lookup_row_function(funcid);

		e = hash_search(row_function_cache, &funcid, HASH_ENTER, &found);
		e->function = f;
		return f;
	}
}

static const RowFunction *
lookup_row_function(Oid funcid)
{
	HeapTuple	tup;
	Form_pg_proc proc;
	const RowFunction *found = NULL;

	if (funcid >= FirstNormalObjectId)
		return NULL;
	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	if (!HeapTupleIsValid(tup))
		return NULL;
	proc = (Form_pg_proc) GETSTRUCT(tup);
	if (proc->prolang == INTERNALlanguageId)
	{
		bool		isnull;
		Datum		src = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosrc, &isnull);
		char	   *name = isnull ? NULL : TextDatumGetCString(src);

		for (size_t i = 0; name != NULL && i < lengthof(row_functions); i++)
			if (strcmp(row_functions[i].name, name) == 0)
				found = &row_functions[i];
	}
	else if (proc->prolang == SQLlanguageId && proc->pronamespace == PG_CATALOG_NAMESPACE)
	{
		StringInfoData sig;

		/* name(type,type), the types as format_type_be writes them */
		initStringInfo(&sig);
		appendStringInfo(&sig, "%s(", quote_identifier(NameStr(proc->proname)));
		for (int i = 0; i < proc->pronargs; i++)
			appendStringInfo(&sig, "%s%s", i > 0 ? "," : "",
							 format_type_be(proc->proargtypes.values[i]));
		appendStringInfoChar(&sig, ')');
		for (size_t i = 0; i < lengthof(row_sql_functions); i++)
			if (strcmp(row_sql_functions[i].name, sig.data) == 0)
				found = &row_sql_functions[i];
	}
	ReleaseSysCache(tup);
	return found;
}

static int
row_flags(Oid funcid)
{
	const RowFunction *f = row_function(funcid);

	return f == NULL ? 0 : f->flags;
}

/* Is the function in the list of everyday built-ins? */
bool
dp_row_curated(Oid funcid)
{
	return row_function(funcid) != NULL;
}

/*
 * May the function be called on the rows of a protected relation?  Built
 * in, not volatile, no set, and LEAKPROOF, listed or allowed by a DBA; a
 * plain C function (language internal), which the trap can call, or one of
 * the listed SQL functions the planner inlines.
 */
DpRowRefusal
dp_row_function_refusal(Oid funcid)
{
	HeapTuple	tup;
	Form_pg_proc proc;
	DpRowRefusal result = DP_ROW_ALLOWED;

	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for function %u", funcid);
	proc = (Form_pg_proc) GETSTRUCT(tup);
	if (proc->provolatile == PROVOLATILE_VOLATILE)
		result = DP_ROW_VOLATILE;
	else if (funcid >= FirstNormalObjectId)
		result = DP_ROW_NOT_BUILT_IN;
	else if (proc->proretset ||
			 !heap_attisnull(tup, Anum_pg_proc_proconfig, NULL))
		result = DP_ROW_NOT_TRAPPABLE;
	else if (proc->prolang == SQLlanguageId)
		result = row_function(funcid) != NULL ? DP_ROW_ALLOWED : DP_ROW_NOT_LISTED;
	else if (proc->prolang != INTERNALlanguageId)
		result = DP_ROW_NOT_TRAPPABLE;
	else if (!proc->proleakproof && row_function(funcid) == NULL &&
			 !dp_function_allowed(funcid))
		result = DP_ROW_NOT_LISTED;
	ReleaseSysCache(tup);
	return result;
}

/*
 * Can a call of this allowed function not fail for any argument, so that it
 * needs no trap?  Listed as such; an integer division or remainder by a
 * constant other than 0 and -1 (int4div fails only for those); or
 * LEAKPROOF on arguments without a
 * collation: PostgreSQL's LEAKPROOF functions raise no error that depends on
 * their arguments, and the ones that fail for every argument do so through
 * their collation (none, or nondeterministic for starts_with), which a
 * collatable argument brings.
 */
/* The same, from the argument types only (no constant divisor known). */
static bool
never_fails_types(Oid funcid, int flags, int nargs, const Oid *argtypes)
{
	if (flags & ROW_NEVER_FAILS)
		return true;
	if (funcid >= FirstNormalObjectId || !get_func_leakproof(funcid))
		return false;
	for (int i = 0; i < nargs; i++)
		if (type_is_collatable(argtypes[i]))
			return false;
	for (size_t i = 0; i < lengthof(fails_anyway); i++)
		if (fails_anyway[i] == funcid)
			return false;
	return true;
}

bool
dp_row_never_fails(Oid funcid, List *args)
{
	int			flags = row_flags(funcid);
	Oid			argtypes[FUNC_MAX_ARGS];
	int			nargs = 0;
	ListCell   *lc;

	if (flags & ROW_NEVER_FAILS)
		return true;
	if ((flags & ROW_DIVISION) && list_length(args) == 2 && IsA(lsecond(args), Const))
	{
		Const	   *d = lsecond(args);
		int64		divisor;

		if (d->constisnull)
			return true;
		divisor = d->consttype == INT2OID ? DatumGetInt16(d->constvalue)
			: d->consttype == INT4OID ? DatumGetInt32(d->constvalue)
			: DatumGetInt64(d->constvalue);
		return divisor != 0 && divisor != -1;
	}
	foreach(lc, args)
		if (nargs < FUNC_MAX_ARGS)
			argtypes[nargs++] = exprType(lfirst(lc));
	return never_fails_types(funcid, flags, nargs, argtypes);
}

/*
 * The first argument that must come from the statement (a pattern, an
 * escape, an output size), not vary from one row to the next; -1 if every
 * argument may vary.
 */
int
dp_row_fixed_from(Oid funcid)
{
	int			flags = row_flags(funcid);

	if (flags & ROW_FIXED0)
		return 0;
	if (flags & ROW_FIXED1)
		return 1;
	return -1;
}

/* Is the second argument a regular expression? */
bool
dp_row_is_regex(Oid funcid)
{
	return (row_flags(funcid) & ROW_REGEX) != 0;
}

/* The argument that sets the size of the output (lpad, rpad), or -1. */
int
dp_row_size_arg(Oid funcid)
{
	return (row_flags(funcid) & ROW_SIZE1) ? 1 : -1;
}

/* Does the function call the output functions of its arguments' types? */
bool
dp_row_any_io(Oid funcid)
{
	return (row_flags(funcid) & ROW_ANY_IO) != 0;
}

static bool
fixed_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var) || IsA(node, CaseTestExpr) || IsA(node, Aggref) ||
		IsA(node, SubLink) || IsA(node, SubPlan) || IsA(node, WindowFunc) ||
		IsA(node, PlaceHolderVar) || IsA(node, GroupingFunc))
		return true;
	return expression_tree_walker(node, fixed_walker, context);
}

/*
 * Does the expression come from the statement (constants and parameters
 * only), so that it is the same for every row?
 */
bool
dp_row_expr_fixed(Node *node)
{
	return !fixed_walker(node, NULL) && !contain_volatile_functions(node);
}

/*
 * Could a regular expression hold a back-reference (\1 to \9)?  With one,
 * PostgreSQL's engine matches by backtracking, in time exponential in the
 * pattern for some inputs.  Conservative: any backslash followed by a
 * digit other than 0 counts.
 */
bool
dp_row_pattern_backrefs(const char *pattern, int len)
{
	for (int i = 0; i + 1 < len; i++)
		if (pattern[i] == '\\' && pattern[i + 1] >= '1' && pattern[i + 1] <= '9')
			return true;
	return false;
}

static bool type_io_ok(Oid typid, int depth);

/*
 * Are the functions a domain's constraints call allowed on rows?  They run
 * inside the trap of the cast (row_seal.c): they must not be volatile, nor
 * the analyst's code.
 */
static bool
domain_walker(Node *node, void *context)
{
	Oid			funcid = InvalidOid;

	if (node == NULL)
		return false;
	if (IsA(node, FuncExpr))
		funcid = ((FuncExpr *) node)->funcid;
	else if (IsA(node, OpExpr) || IsA(node, DistinctExpr) || IsA(node, NullIfExpr))
	{
		set_opfuncid((OpExpr *) node);
		funcid = ((OpExpr *) node)->opfuncid;
	}
	else if (IsA(node, ScalarArrayOpExpr))
	{
		set_sa_opfuncid((ScalarArrayOpExpr *) node);
		funcid = ((ScalarArrayOpExpr *) node)->opfuncid;
	}
	else if (IsA(node, SubLink) || IsA(node, NextValueExpr))
		return true;
	else if (IsA(node, CoerceViaIO))
	{
		CoerceViaIO *c = (CoerceViaIO *) node;

		if (!type_io_ok(exprType((Node *) c->arg), 1) || !type_io_ok(c->resulttype, 1))
			return true;
	}
	if (OidIsValid(funcid) && dp_row_function_refusal(funcid) != DP_ROW_ALLOWED)
		return true;
	return expression_tree_walker(node, domain_walker, context);
}

/* May a cast to the domain (and its base domains) be evaluated on rows? */
bool
dp_row_domain_ok(Oid typid)
{
	DomainConstraintRef *ref;
	ListCell   *lc;

	if (get_typtype(typid) != TYPTYPE_DOMAIN)
		return true;
	ref = palloc(sizeof(DomainConstraintRef));
	InitDomainConstraintRef(typid, ref, CurrentMemoryContext, false);
	foreach(lc, ref->constraints)
	{
		DomainConstraintState *c = lfirst(lc);

		if (domain_walker((Node *) c->check_expr, NULL))
			return false;
	}
	return true;
}

/*
 * Are a type's output and input functions built into PostgreSQL, also
 * those of its elements and fields, and its domains' constraints allowed
 * (casts through text, row_seal.c)?
 */
static bool
type_io_ok(Oid typid, int depth)
{
	HeapTuple	tup;
	Form_pg_type typ;
	bool		ok;

	if (depth > 8)
		return false;
	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(typid));
	if (!HeapTupleIsValid(tup))
		return false;
	typ = (Form_pg_type) GETSTRUCT(tup);
	ok = dp_row_builtin_c(typ->typinput) && dp_row_builtin_c(typ->typoutput);
	if (ok && typ->typtype == TYPTYPE_DOMAIN)
		ok = dp_row_domain_ok(typid) && type_io_ok(typ->typbasetype, depth + 1);
	else if (ok && OidIsValid(typ->typelem) && IsTrueArrayType(typ))
		ok = type_io_ok(typ->typelem, depth + 1);
	else if (ok && typ->typtype == TYPTYPE_COMPOSITE)
	{
		TupleDesc	desc = lookup_rowtype_tupdesc_copy(typid, -1);

		for (int i = 0; ok && i < desc->natts; i++)
			if (!TupleDescAttr(desc, i)->attisdropped)
				ok = type_io_ok(TupleDescAttr(desc, i)->atttypid, depth + 1);
	}
	else if (ok && typ->typtype == TYPTYPE_RANGE)
		ok = type_io_ok(get_range_subtype(typid), depth + 1);
	else if (ok && typ->typtype == TYPTYPE_MULTIRANGE)
		ok = type_io_ok(get_multirange_range(typid), depth + 1);
	else if (typ->typtype == TYPTYPE_PSEUDO)
		ok = false;				/* record, unknown: no fixed input */
	ReleaseSysCache(tup);
	return ok;
}

bool
dp_row_type_io_ok(Oid typid)
{
	return type_io_ok(typid, 0);
}

/*
 * May values of the type be compared inside the trap (GREATEST, LEAST)?
 * Its default btree comparison is a built-in C function.
 */
bool
dp_row_comparable(Oid typid)
{
	return dp_row_builtin_c(lookup_type_cache(typid, TYPECACHE_CMP_PROC)->cmp_proc);
}

/*
 * dp_agg.row_functions() returns table (function regprocedure, evaluation
 * text): every built-in function allowed on the rows of protected relations
 * (LEAKPROOF, listed above, or allowed by a DBA), and how a call is
 * evaluated: 'never fails' (called as is), or 'trapped' (a call that fails
 * yields NULL).  Calls that are trapped in general may be called as is when
 * they cannot fail on their constant arguments (a division by 7).
 */
Datum
dp_row_functions(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	rel;
	SysScanDesc scan;
	HeapTuple	tup;

	InitMaterializedSRF(fcinfo, 0);
	rel = table_open(ProcedureRelationId, AccessShareLock);
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_proc proc = (Form_pg_proc) GETSTRUCT(tup);
		Datum		values[2];
		bool		nulls[2] = {false, false};

		if (proc->oid >= FirstNormalObjectId ||
			dp_row_function_refusal(proc->oid) != DP_ROW_ALLOWED)
			continue;
		values[0] = ObjectIdGetDatum(proc->oid);
		values[1] = CStringGetTextDatum(never_fails_types(proc->oid, row_flags(proc->oid),
														  proc->pronargs,
														  proc->proargtypes.values)
										? "never fails" : "trapped");
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return (Datum) 0;
}
