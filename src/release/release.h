/*-------------------------------------------------------------------------
 *
 * release.h
 *	  The release plan of a statement: for each DP aggregate call, the noise
 *	  it will get, decided before execution from the statement alone.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_RELEASE_H
#define DP_AGG_RELEASE_H

#include "nodes/params.h"
#include "nodes/parsenodes.h"
#include "nodes/primnodes.h"
#include "utils/numeric.h"

#include "catalog.h"
#include "noise.h"
#include "quantile_tree.h"
#include "release_noise.h"
#include "sampling.h"
#include "selection_mechanism.h"

/* the noisy releases of a call, at most this many */
#define DP_MAX_NOISES 4

/*
 * The sensitivity, in grid units, of the sums of a release whose bounds
 * are estimated: the grid is chosen from the bounds so that no sum moves by
 * more when a row is added (at most 2^40 + 2 units for the clamped value,
 * bounds rounded outward to the grid, and 1 for the rounding of the exact
 * aggregate)
 */
#define DP_AUTO_SPAN_LOG2 40
#define DP_AUTO_SENSITIVITY ((UINT64CONST(1) << DP_AUTO_SPAN_LOG2) + 3)

/*
 * The rows of each group, from a DP aggregate of an aggregation node (its
 * host) to the node's private selection, which then counts no row itself
 * (selection.c, "Fused selection"): the host's final function writes the
 * rows of the group it releases, the selection's final function, which
 * runs next for the same group, reads them.  finals and selects count the
 * calls, so that a selection that would read another group's rows fails.
 */
typedef struct DpSelectionFeed
{
	int64		rows;
	uint64		finals;
	uint64		selects;
} DpSelectionFeed;

/* The ticket of one DP aggregate call in one execution. */
typedef struct DpRelease
{
	DpCallInfo	call;
	Aggref	   *aggref;			/* the plan node it belongs to */
	const void *agg_node;		/* the Agg node that evaluates it */
	bool		finalize;		/* its final function runs (it is priced) */
	double		epsilon;		/* total price of the call */
	double		delta;

	/* per-row rounding: values become integers in units of 2^row_grid_exp */
	int			row_grid_exp;
	double		row_mult;		/* 2^-row_grid_exp, or 0 if not a normal double */
	int64		lo_units;		/* r(lower), r(upper) */
	int64		hi_units;
	int64		lower_int;		/* bounds, by value class */
	int64		upper_int;
	double		lower_float;
	double		upper_float;
	Numeric		lower_num;
	Numeric		upper_num;
	Numeric		row_mult_num;	/* 2^-row_grid_exp as numeric */

	DpNoiseSpec count;			/* dp_count, and the count of dp_avg */
	DpNoiseSpec sum;			/* dp_sum, and the centred sum of dp_avg */
	DpNoiseSpec sumsq;			/* dp_var, dp_stddev: the centred sum of squares */
	bool		squares;		/* rows also add their centred squares: */
	int			sq_shift;		/* (2 z^2 - D^2) 2^-sq_shift, rounded, */
	int64		sq_mid;			/* z = 2 r(x) - sq_mid, sq_mid = r(l) + r(u), */
	int128		sq_d2;			/* D^2 = (r(u) - r(l))^2 */
	/*
	 * Bounds left out (auto_bounds.c): a share of epsilon on a noisy
	 * histogram that estimates them; the sums are released on a grid
	 * chosen from them, their noise calibrated at price time to the
	 * canonical sensitivity DP_AUTO_SENSITIVITY units (release.c)
	 */
	bool		auto_bounds;
	DpNoiseSpec histogram;

	/* dp_percentile, dp_median: the tree (quantile_tree.c) */
	DpNoiseSpec tree;			/* its node counts: 3 repeats */
	DpTreeDomain tree_domain;	/* its leaves */
	int			npercentiles;	/* the quantiles asked, in [0, 1] */
	double	   *percentiles;
	double		tree_tau;		/* bound of the noise of a prefix */
	double		tree_tau_total; /* ... and of the noisy total */

	double		halfwidth[DP_MAX_NOISES];	/* of each release, at the
											 * confidence of the error bar
											 * (describe.c) */
	DpSampling	sampling;
	DpSelectionSpec selection;	/* dp_select: the private selection */
	bool		selection_share;	/* its epsilon is a share of the node's
									 * price (dp_agg.selection_share) */
	int64		public_keys;	/* dp_public: the keys of the public domain */
	int			top_k;			/* dp_top_k: k; its noise per round is count */
	bool		shared_sample;	/* amplified with the statement's other
								 * releases from the same sample (joint.c) */

	/*
	 * Privacy units (privacy_unit.c): a unit contributes to at most
	 * unit_groups groups, at most unit_rows rows to a count in each; 0 when
	 * rows are the units.  Set for both levels of the rewrite that have
	 * DP aggregates (catalog.h, DpUnitLevel).
	 */
	int			unit_groups;
	int			unit_rows;

	uint64		fingerprint;	/* identifies the accumulation units */
	const uint8 *dist_nonce;	/* Citus fragments: the statement's nonce */
	DpSelectionFeed *feed;		/* a fused selection's, and its host's */
} DpRelease;

extern int	dp_release_noises(const DpRelease *r, const DpNoiseSpec **specs,
							  const char **names);
extern int	dp_release_noisy(const DpRelease *r, const DpNoiseSpec **specs);
extern DpRelease *dp_release_create(Aggref *aggref, Aggref *args_from,
									const DpCallInfo *info, bool finalize,
									const DpSampling *sampling, ParamListInfo params,
									int unit_groups, int unit_rows);
extern DpRelease *dp_release_for_fragment(const DpCallInfo *info, Datum lower, Datum upper,
										  int k, int sq_shift);
extern void dp_release_tree_tails(DpRelease *r);
extern bool dp_release_auto_grid(const DpRelease *r, double lower, double upper, DpRelease *out);
extern void dp_release_plan_selection(DpRelease *r, double epsilon);
extern void dp_release_plan_top_k(DpRelease *r, double epsilon);

#endif							/* DP_AGG_RELEASE_H */
