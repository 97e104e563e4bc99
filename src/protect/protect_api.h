/*-------------------------------------------------------------------------
 *
 * protect_api.h
 *	  The SQL functions that administer protected relations.
 *
 * Only SQL calls them (dp_agg--0.1--0.2.sql): this header declares nothing.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_PROTECT_API_H
#define DP_AGG_PROTECT_API_H

#endif							/* DP_AGG_PROTECT_API_H */
