/*-------------------------------------------------------------------------
 *
 * domain_group.h
 *	  Public domains: a level grouped by the index of its key in the domain.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_DOMAIN_GROUP_H
#define DP_AGG_DOMAIN_GROUP_H

#include "nodes/parsenodes.h"

extern void dp_domain_apply(Query *query);

#endif							/* DP_AGG_DOMAIN_GROUP_H */
