/*-------------------------------------------------------------------------
 *
 * describe.h
 *	  JSON descriptions of priced calls, and the intervals of their noise.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_DESCRIBE_H
#define DP_AGG_DESCRIBE_H

#include "lib/stringinfo.h"

#include "release.h"

/* the confidence of the intervals reported (ci95) */
#define DP_CI_CONFIDENCE 0.95

extern void dp_release_describe(StringInfo buf, const DpRelease *r);
extern void dp_selection_describe(StringInfo buf, const DpRelease *r);
extern void dp_sampling_describe(StringInfo buf, const DpRelease *r, const DpNoiseSpec *ns);
extern double dp_release_halfwidth(const DpRelease *r, const DpNoiseSpec *ns, double confidence);
extern void dp_plan_halfwidths(DpRelease *r);
extern bool dp_grid_at_release(const DpRelease *r, const DpNoiseSpec *ns);

#endif							/* DP_AGG_DESCRIBE_H */
