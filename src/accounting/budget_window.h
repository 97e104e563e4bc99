/*-------------------------------------------------------------------------
 *
 * budget_window.h
 *	  The windows of renewing budgets: which window an instant falls in.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_BUDGET_WINDOW_H
#define DP_AGG_BUDGET_WINDOW_H

#include "datatype/timestamp.h"

/* the longest time zone name a budget keeps */
#define DP_WINDOW_TZ_MAX 64

extern void dp_window_check(const Interval *length);
extern void dp_window_bounds(const Interval *length, const char *time_zone, TimestampTz at,
							 TimestampTz *start, TimestampTz *end);

#endif							/* DP_AGG_BUDGET_WINDOW_H */
