/*-------------------------------------------------------------------------
 *
 * row_rules.h
 *	  Which functions, types and expressions may be evaluated on the rows
 *	  of protected relations, and how.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_ROW_RULES_H
#define DP_AGG_ROW_RULES_H

#include "nodes/primnodes.h"

/* Why a function may not be called on rows (dp_row_function_refusal). */
typedef enum DpRowRefusal
{
	DP_ROW_ALLOWED,
	DP_ROW_VOLATILE,			/* side effects */
	DP_ROW_NOT_BUILT_IN,		/* user-defined: could fail or show rows */
	DP_ROW_NOT_LISTED,			/* built in, neither listed nor allowed */
	DP_ROW_NOT_TRAPPABLE		/* built in, but not a plain C function */
} DpRowRefusal;

/*
 * Each row contributes at most this many units of work per byte of a
 * regular expression's pattern (doc/guard.md, "Protected tables", rule 6).
 */
#define DP_ROW_REGEX_WORK 8

/*
 * Integer and floating-point arithmetic with soft versions (row_trap.c),
 * which return NULL where PostgreSQL's function raises an error:
 * X(its F_ name in fmgroids.h, its C name, the operation, the types of its
 * arguments and result: 's' smallint, 'i' integer, 'l' bigint, 'f' real,
 * 'd' double precision).  The soft version of int4pl is the C function
 * dp_row_soft_int4pl, dp_agg_internal.row_int4pl(integer, integer) in SQL.
 */
#define DP_ROW_SOFT_FUNCS(X) \
	X(INT2PL, int2pl, SOFT_ADD, 's', 's', 's') \
	X(INT2MI, int2mi, SOFT_SUB, 's', 's', 's') \
	X(INT2MUL, int2mul, SOFT_MUL, 's', 's', 's') \
	X(INT2DIV, int2div, SOFT_DIV, 's', 's', 's') \
	X(INT2MOD, int2mod, SOFT_MOD, 's', 's', 's') \
	X(INT2UM, int2um, SOFT_NEG, 's', 's', 's') \
	X(INT2ABS, int2abs, SOFT_ABS, 's', 's', 's') \
	X(INT4PL, int4pl, SOFT_ADD, 'i', 'i', 'i') \
	X(INT4MI, int4mi, SOFT_SUB, 'i', 'i', 'i') \
	X(INT4MUL, int4mul, SOFT_MUL, 'i', 'i', 'i') \
	X(INT4DIV, int4div, SOFT_DIV, 'i', 'i', 'i') \
	X(INT4MOD, int4mod, SOFT_MOD, 'i', 'i', 'i') \
	X(INT4UM, int4um, SOFT_NEG, 'i', 'i', 'i') \
	X(INT4ABS, int4abs, SOFT_ABS, 'i', 'i', 'i') \
	X(INT8PL, int8pl, SOFT_ADD, 'l', 'l', 'l') \
	X(INT8MI, int8mi, SOFT_SUB, 'l', 'l', 'l') \
	X(INT8MUL, int8mul, SOFT_MUL, 'l', 'l', 'l') \
	X(INT8DIV, int8div, SOFT_DIV, 'l', 'l', 'l') \
	X(INT8MOD, int8mod, SOFT_MOD, 'l', 'l', 'l') \
	X(INT8UM, int8um, SOFT_NEG, 'l', 'l', 'l') \
	X(INT8ABS, int8abs, SOFT_ABS, 'l', 'l', 'l') \
	X(INT24PL, int24pl, SOFT_ADD, 's', 'i', 'i') \
	X(INT24MI, int24mi, SOFT_SUB, 's', 'i', 'i') \
	X(INT24MUL, int24mul, SOFT_MUL, 's', 'i', 'i') \
	X(INT24DIV, int24div, SOFT_DIV, 's', 'i', 'i') \
	X(INT42PL, int42pl, SOFT_ADD, 'i', 's', 'i') \
	X(INT42MI, int42mi, SOFT_SUB, 'i', 's', 'i') \
	X(INT42MUL, int42mul, SOFT_MUL, 'i', 's', 'i') \
	X(INT42DIV, int42div, SOFT_DIV, 'i', 's', 'i') \
	X(INT28PL, int28pl, SOFT_ADD, 's', 'l', 'l') \
	X(INT28MI, int28mi, SOFT_SUB, 's', 'l', 'l') \
	X(INT28MUL, int28mul, SOFT_MUL, 's', 'l', 'l') \
	X(INT28DIV, int28div, SOFT_DIV, 's', 'l', 'l') \
	X(INT82PL, int82pl, SOFT_ADD, 'l', 's', 'l') \
	X(INT82MI, int82mi, SOFT_SUB, 'l', 's', 'l') \
	X(INT82MUL, int82mul, SOFT_MUL, 'l', 's', 'l') \
	X(INT82DIV, int82div, SOFT_DIV, 'l', 's', 'l') \
	X(INT48PL, int48pl, SOFT_ADD, 'i', 'l', 'l') \
	X(INT48MI, int48mi, SOFT_SUB, 'i', 'l', 'l') \
	X(INT48MUL, int48mul, SOFT_MUL, 'i', 'l', 'l') \
	X(INT48DIV, int48div, SOFT_DIV, 'i', 'l', 'l') \
	X(INT84PL, int84pl, SOFT_ADD, 'l', 'i', 'l') \
	X(INT84MI, int84mi, SOFT_SUB, 'l', 'i', 'l') \
	X(INT84MUL, int84mul, SOFT_MUL, 'l', 'i', 'l') \
	X(INT84DIV, int84div, SOFT_DIV, 'l', 'i', 'l') \
	X(FLOAT4PL, float4pl, SOFT_ADD, 'f', 'f', 'f') \
	X(FLOAT4MI, float4mi, SOFT_SUB, 'f', 'f', 'f') \
	X(FLOAT4MUL, float4mul, SOFT_MUL, 'f', 'f', 'f') \
	X(FLOAT4DIV, float4div, SOFT_DIV, 'f', 'f', 'f') \
	X(FLOAT8PL, float8pl, SOFT_ADD, 'd', 'd', 'd') \
	X(FLOAT8MI, float8mi, SOFT_SUB, 'd', 'd', 'd') \
	X(FLOAT8MUL, float8mul, SOFT_MUL, 'd', 'd', 'd') \
	X(FLOAT8DIV, float8div, SOFT_DIV, 'd', 'd', 'd') \
	X(FLOAT48PL, float48pl, SOFT_ADD, 'f', 'd', 'd') \
	X(FLOAT48MI, float48mi, SOFT_SUB, 'f', 'd', 'd') \
	X(FLOAT48MUL, float48mul, SOFT_MUL, 'f', 'd', 'd') \
	X(FLOAT48DIV, float48div, SOFT_DIV, 'f', 'd', 'd') \
	X(FLOAT84PL, float84pl, SOFT_ADD, 'd', 'f', 'd') \
	X(FLOAT84MI, float84mi, SOFT_SUB, 'd', 'f', 'd') \
	X(FLOAT84MUL, float84mul, SOFT_MUL, 'd', 'f', 'd') \
	X(FLOAT84DIV, float84div, SOFT_DIV, 'd', 'f', 'd')

extern DpRowRefusal dp_row_function_refusal(Oid funcid);
extern const char *dp_row_soft_name(Oid funcid);
extern bool dp_row_never_fails(Oid funcid, List *args);
extern bool dp_row_curated(Oid funcid);
extern int	dp_row_fixed_from(Oid funcid);
extern bool dp_row_is_regex(Oid funcid);
extern int	dp_row_size_arg(Oid funcid);
extern bool dp_row_any_io(Oid funcid);
extern bool dp_row_expr_fixed(Node *node);
extern bool dp_row_pattern_backrefs(const char *pattern, int len);
extern bool dp_row_type_io_ok(Oid typid);
extern bool dp_row_domain_ok(Oid typid);
extern bool dp_row_comparable(Oid typid);

#endif							/* DP_AGG_ROW_RULES_H */
