/*-------------------------------------------------------------------------
 *
 * estimators.h
 *	  The statistics of dp_avg, dp_var and dp_stddev, and the error bars of
 *	  released values.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_ESTIMATORS_H
#define DP_AGG_ESTIMATORS_H

#include "release.h"

/* an error bar: a 95% interval and the scale of the noise */
typedef struct DpInterval
{
	double		low;
	double		high;
	double		scale;
} DpInterval;

extern double dp_noise_variance(const DpNoiseSpec *ns);
extern void dp_bounds_double(const DpRelease *r, double *lower, double *upper);
extern double dp_avg_estimate(const DpRelease *r, double n, double c, double m, DpInterval *iv);
extern double dp_var_estimate(const DpRelease *r, double n, double c, double q, DpInterval *iv);
extern double dp_stddev_estimate(const DpRelease *r, double n, double c, double q,
								  DpInterval *iv);
extern void dp_noise_interval(const DpRelease *r, const DpNoiseSpec *ns, double value,
							  DpInterval *iv);

#endif							/* DP_AGG_ESTIMATORS_H */
