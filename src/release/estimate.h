/*-------------------------------------------------------------------------
 *
 * estimate.h
 *	  dp_agg.estimate: a released value with its error bar, as one datum.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_ESTIMATE_H
#define DP_AGG_ESTIMATE_H

#include "fmgr.h"

/* the parts of an estimate, as dp_agg_internal.estimate_part numbers them */
typedef enum DpEstimatePart
{
	DP_ESTIMATE_VALUE,
	DP_ESTIMATE_LOW,			/* the 95% interval */
	DP_ESTIMATE_HIGH,
	DP_ESTIMATE_LOWER,			/* the clamping bounds used */
	DP_ESTIMATE_UPPER,
	DP_ESTIMATE_PARTS
} DpEstimatePart;

/* an estimate: datums of one type, and the noise scale */
typedef struct DpEstimate
{
	Oid			typid;
	Datum		datum[DP_ESTIMATE_PARTS];
	bool		isnull[DP_ESTIMATE_PARTS];
	double		scale;
} DpEstimate;

extern Datum dp_estimate_make(const DpEstimate *e);
extern void dp_estimate_read(Datum datum, DpEstimate *e);

#endif							/* DP_AGG_ESTIMATE_H */
