/*-------------------------------------------------------------------------
 *
 * row_compare.h
 *	  The comparisons the executor makes on rows itself, outside any
 *	  expression: checked before the first row.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_ROW_COMPARE_H
#define DP_AGG_ROW_COMPARE_H

#include "nodes/plannodes.h"

extern bool dp_row_builtin_c(Oid funcid);
extern void dp_row_add_collation(Oid collation, List **collations);
extern void dp_row_check_node(Plan *plan, Oid relid, List **collations);
extern void dp_row_check_equality(Oid eqop, Oid collation, bool hashed, Oid relid,
								  List **collations, const char *what);
extern void dp_row_check_ordering(Oid sortop, Oid collation, Oid relid,
								  List **collations, const char *what);

#endif							/* DP_AGG_ROW_COMPARE_H */
