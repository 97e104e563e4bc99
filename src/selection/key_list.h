/*-------------------------------------------------------------------------
 *
 * key_list.h
 *	  Lists of keys in a statement: a join of the rows to a VALUES list or
 *	  to unnest(ARRAY[...]) of constants.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_KEY_LIST_H
#define DP_AGG_KEY_LIST_H

#include "nodes/parsenodes.h"

/* a key list, once its join is rewritten away */
typedef struct DpKeyList
{
	int			ncols;
	List	   *types;			/* Const NULL of each column's type, typmod, collation */
	List	   *tuples;			/* Const ** of ncols each: the keys, in order */
	Node	  **matched;		/* per column: the row expression joined to it, or NULL */
} DpKeyList;

extern DpKeyList *dp_key_list_normalize(Query *q);
extern bool dp_key_list_placeholder(Node *node, int *col);

#endif							/* DP_AGG_KEY_LIST_H */
