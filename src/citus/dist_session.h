/*-------------------------------------------------------------------------
 *
 * dist_session.h
 *	  Citus: what a transaction sends to the workers besides dp_agg's
 *	  fragments, when they run as a protected table's owner.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_DIST_SESSION_H
#define DP_AGG_DIST_SESSION_H

extern void dp_dist_session_init(void);
extern void dp_dist_session_run_as_owner(void);

#endif							/* DP_AGG_DIST_SESSION_H */
