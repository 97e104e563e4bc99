/*-------------------------------------------------------------------------
 *
 * domain_rows.h
 *	  Public domains: the domain's own rows added to a level's.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_DOMAIN_ROWS_H
#define DP_AGG_DOMAIN_ROWS_H

#include "nodes/parsenodes.h"

extern void dp_domain_inject(Query *query);
extern Node *dp_domain_row_filter(Query *level);

#endif							/* DP_AGG_DOMAIN_ROWS_H */
