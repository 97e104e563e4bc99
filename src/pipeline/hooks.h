/*-------------------------------------------------------------------------
 *
 * hooks.h
 *	  Where dp_agg joins query processing.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_HOOKS_H
#define DP_AGG_HOOKS_H

extern void dp_hooks_init(void);

#endif							/* DP_AGG_HOOKS_H */
