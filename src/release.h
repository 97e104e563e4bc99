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

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "nodes/execnodes.h"
#include "nodes/params.h"
#include "nodes/parsenodes.h"
#include "nodes/primnodes.h"
#include "utils/numeric.h"

#include "noise.h"

/* which aggregate */
typedef enum DpAggKind
{
	DP_COUNT_STAR,
	DP_COUNT,
	DP_SUM,
	DP_AVG
} DpAggKind;

/* how values are accumulated */
typedef enum DpValueClass
{
	DP_VALUE_NONE,				/* counts */
	DP_VALUE_INT,				/* smallint, integer, bigint */
	DP_VALUE_FLOAT,				/* real, double precision */
	DP_VALUE_NUMERIC
} DpValueClass;

typedef enum DpMechanism
{
	DP_MECH_NONE,				/* sensitivity 0: nothing to hide */
	DP_MECH_LAPLACE,
	DP_MECH_GAUSSIAN
} DpMechanism;

/* What the catalog says about a DP aggregate: its kind and argument layout. */
typedef struct DpCallInfo
{
	Oid			aggfnoid;
	DpAggKind	kind;
	DpValueClass vclass;
	Oid			valtype;		/* type of the value (InvalidOid for count) */
	int			nargs;
	int			lower_arg;		/* argument positions, -1 when absent */
	int			upper_arg;
	int			epsilon_arg;
	int			delta_arg;
} DpCallInfo;

/* How a table is sampled, as far as privacy is concerned. */
typedef struct DpSampling
{
	bool		sampled;		/* TABLESAMPLE present */
	bool		amplified;		/* the release takes credit for it */
	const char *method;			/* "bernoulli", "system", ... */
	double		rate;			/* inclusion probability of a row */
	const char *why_not;		/* when sampled but not amplified */
	/* from the plan, resolved when the statement is priced */
	TableSampleClause *tablesample;
	int			nscans;			/* scans that read the table */
} DpSampling;

/* One noisy release (a count, or a sum): exact sampler parameters. */
typedef struct DpNoiseSpec
{
	DpMechanism mechanism;
	double		epsilon;		/* what it costs */
	double		delta;
	double		base_epsilon;	/* what the noise is calibrated to */
	double		base_delta;
	int			grid_exp;		/* released value = units * 2^grid_exp */
	uint64		sens_units;		/* sensitivity in units */
	double		sensitivity;	/* sens_units * 2^grid_exp */
	double		noise_scale;	/* Laplace scale or sigma, value units */
	double		sigma_units;	/* Gaussian: sigma in grid units */
	const char *calibration;	/* under sampling: "amplified" or "renyi" */
	DpLaplaceParam laplace;
	DpGaussianParam gaussian;
} DpNoiseSpec;

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
	DpSampling	sampling;

	uint64		fingerprint;	/* identifies the accumulation units */
} DpRelease;

extern const DpCallInfo *dp_lookup_call(Oid aggfnoid);
extern bool dp_extension_present(void);
extern const char *dp_kind_name(DpAggKind kind);
extern const char *dp_mechanism_name(DpMechanism mech);

extern bool dp_is_parameter_form(Node *expr);
extern void dp_check_parameter_expr(Node *expr, const DpCallInfo *info, int argno);
extern DpRelease *dp_release_create(Aggref *aggref, Aggref *args_from,
									const DpCallInfo *info, bool finalize,
									const DpSampling *sampling, ParamListInfo params);
extern List *dp_priced_releases(List *releases, double *epsilon, double *delta);
extern void dp_release_describe(StringInfo buf, const DpRelease *r);
extern void dp_release_add_rdp(const DpRelease *r, double *curve);
extern void dp_sampling_describe(StringInfo buf, const DpRelease *r, const DpNoiseSpec *ns);
extern double dp_release_halfwidth(const DpRelease *r, const DpNoiseSpec *ns, double confidence);

extern void dp_register_releases(EState *estate, List *releases);
extern const DpRelease *dp_release_for_call(FunctionCallInfo fcinfo, const char *fname);

extern int128 dp_noise_draw(const DpNoiseSpec *spec);

extern void dp_release_init(void);

#endif							/* DP_AGG_RELEASE_H */
