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
 * regular expression's pattern (README, "Protected tables", rule 6).
 */
#define DP_ROW_REGEX_WORK 8

extern DpRowRefusal dp_row_function_refusal(Oid funcid);
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
extern bool dp_row_builtin_c(Oid funcid);

#endif							/* DP_AGG_ROW_RULES_H */
