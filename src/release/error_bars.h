/*-------------------------------------------------------------------------
 *
 * error_bars.h
 *	  The rewrite of the error-bar functions of a DP statement.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_ERROR_BARS_H
#define DP_AGG_ERROR_BARS_H

#include "nodes/parsenodes.h"

extern void dp_error_bars_rewrite(Query *query);

#endif							/* DP_AGG_ERROR_BARS_H */
