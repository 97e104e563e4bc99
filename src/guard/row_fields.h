/*-------------------------------------------------------------------------
 *
 * row_fields.h
 *	  Every expression of a plan node, and how the executor evaluates it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_ROW_FIELDS_H
#define DP_AGG_ROW_FIELDS_H

#include "nodes/plannodes.h"

typedef enum DpRowFieldKind
{
	DP_ROW_FIELD_ROWS,			/* evaluated for rows: trapped */
	DP_ROW_FIELD_INDEX,			/* index conditions: operands trapped */
	DP_ROW_FIELD_FIXED,			/* evaluated once a scan: reads no row */
	DP_ROW_FIELD_PARAMS,		/* a nested loop's parameters: Vars */
	DP_ROW_FIELD_NONE			/* not supported: empty */
} DpRowFieldKind;

typedef struct DpRowField
{
	Node	  **field;			/* the field in the plan node */
	DpRowFieldKind kind;
	const char *what;			/* for messages: "a join condition" */
} DpRowField;

#define DP_ROW_MAX_FIELDS 8

extern int	dp_row_fields(Plan *plan, DpRowField *fields);
extern bool dp_row_fixed(Node *expr);

#endif							/* DP_AGG_ROW_FIELDS_H */
