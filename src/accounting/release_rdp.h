/*-------------------------------------------------------------------------
 *
 * release_rdp.h
 *	  The Renyi DP curve of a priced call.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_RELEASE_RDP_H
#define DP_AGG_RELEASE_RDP_H

#include "nodes/pg_list.h"

#include "release.h"

extern void dp_statement_add_rdp(List *priced, double *curve);
extern void dp_release_add_selection(const DpRelease *r, double *epsilon, double *delta);

#endif							/* DP_AGG_RELEASE_RDP_H */
