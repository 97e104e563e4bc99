/*-------------------------------------------------------------------------
 *
 * catalog.h
 *	  Which aggregates are dp_agg's, and what each one is.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_CATALOG_H
#define DP_AGG_CATALOG_H

/*
 * The schemas of the extension: DP_SCHEMA holds what users call, the
 * catalog tables and views and the types; DP_INTERNAL_SCHEMA (since 0.4)
 * the internal functions and aggregates.  Before 0.4 both were DP_SCHEMA:
 * look internal functions up with dp_internal_function.
 */
#define DP_SCHEMA "dp_agg"
#define DP_INTERNAL_SCHEMA "dp_agg_internal"

/* which aggregate */
typedef enum DpAggKind
{
	DP_COUNT_STAR,
	DP_COUNT,
	DP_SUM,
	DP_AVG,
	DP_SELECT,					/* the private selection of a group (selection.c) */
	DP_VAR,						/* dp_var: population variance */
	DP_STDDEV,					/* dp_stddev: its square root */
	DP_PERCENTILE,				/* dp_percentile: quantiles (quantile_tree.c) */
	DP_MEDIAN,					/* dp_median: the quantile 0.5 */
	DP_BOUNDS,					/* dp_bounds: clamping bounds (auto_bounds.c) */
	DP_PUBLIC,					/* a group of a public domain (public_domain.c) */
	DP_TOP_K					/* the count of a group for top-k (top_k.c) */
} DpAggKind;

#define DP_KIND_MAX DP_TOP_K

/* kinds whose values are clamped to bounds and summed: sums and moments */
#define DP_KIND_SUMS(kind) \
	((kind) == DP_SUM || (kind) == DP_AVG || (kind) == DP_VAR || (kind) == DP_STDDEV)
/* kinds that also sum squares (the variance, and its root) */
#define DP_KIND_SQUARES(kind) ((kind) == DP_VAR || (kind) == DP_STDDEV)
/* kinds released from a quantile tree */
#define DP_KIND_QUANTILE(kind) ((kind) == DP_PERCENTILE || (kind) == DP_MEDIAN)

/* how values are accumulated */
typedef enum DpValueClass
{
	DP_VALUE_NONE,				/* counts */
	DP_VALUE_INT,				/* smallint, integer, bigint */
	DP_VALUE_FLOAT,				/* real, double precision */
	DP_VALUE_NUMERIC
} DpValueClass;

/*
 * Privacy units (privacy_unit.c): the internal aggregates of a rewritten
 * statement are DP aggregates of their own level.
 */
typedef enum DpUnitLevel
{
	DP_UNIT_NONE,				/* dp_count, dp_sum, dp_avg */
	DP_UNIT_BOUND,				/* dp_agg_internal.unit_bound_*: per (unit, group) */
	DP_UNIT_RELEASE,			/* dp_agg_internal.unit_release_*: per group, noisy */
	DP_UNIT_PICK				/* dp_agg_internal.unit_pick_bound_*: per unit, its group
								 * of smallest priority (k = 1, unit_pick.c) */
} DpUnitLevel;

/*
 * The parse location of the internal aggregates and window function that
 * the rewrite of privacy units makes (privacy_unit.c).  The parser gives
 * locations >= -1 only, so a node carrying this one was made by the
 * rewrite, never written by an analyst (nor inlined from a function): the
 * plan guard accepts the internal functions only with it (plan_units.c).
 */
#define DP_UNIT_LOCATION (-0x5eed)

/*
 * The mark of a lookup table (lookup_join.c): a relation joined to the
 * input of DP aggregates on a unique key of its own, so that each input
 * row matches at most one of its rows.  The planner hook sets it on the
 * relation's range table entry after checking the join, in the field
 * ctelevelsup, which PostgreSQL reads for references to CTEs only: the
 * parser, the rewriter and stored rules never set it on a relation (nor
 * write it out for one), so an analyst cannot forge it, and the planner
 * copies it into the plan's range table and into the entries of the
 * relation's partitions.  Parallel workers' plans do not carry it; the
 * leader checks the plan (plan_input.c).  The mark is the OID of the unique
 * index the join looks the relation up by (never 0), which the executor's
 * start checks against the statement's snapshot (lookup_join.c).
 */
#define DP_LOOKUP_MARK(index) ((Index) (index))
#define DP_RTE_IS_LOOKUP(rte) \
	((rte)->rtekind == RTE_RELATION && (rte)->ctelevelsup != 0)
#define DP_LOOKUP_INDEX(rte) ((Oid) (rte)->ctelevelsup)

/*
 * The parse location of the nodes the rewrite of public domains makes
 * (public_domain.c, key_list.c): domain_index, domain_key, the domain's
 * generate_series, the FILTER that keeps the domain's rows out of the DP
 * aggregates, dp_public.
 */
#define DP_DOMAIN_LOCATION (-0x5ee0)

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
	int			p_arg;			/* dp_percentile: the percentile(s) */
	bool		p_array;		/* ... given as an array: one value each */
	int			k_arg;			/* dp_select: max_groups_contributed; dp_top_k: k */
	DpUnitLevel unit;			/* which level of a rewrite, if any */
} DpCallInfo;

/* the error-bar functions analysts call on a DP aggregate (error_bars.c) */
typedef enum DpErrorBar
{
	DP_BAR_NONE,
	DP_BAR_LOW,					/* dp_interval_low */
	DP_BAR_HIGH,				/* dp_interval_high */
	DP_BAR_LOWER,				/* dp_lower_bound */
	DP_BAR_UPPER,				/* dp_upper_bound */
	DP_BAR_SCALE				/* dp_noise_scale */
} DpErrorBar;

extern void dp_catalog_init(void);
extern const DpCallInfo *dp_lookup_call(Oid aggfnoid);
extern bool dp_extension_present(void);
extern bool dp_extension_member(Oid funcid);
extern Oid	dp_internal_function(const char *name, int nargs, const Oid *argtypes,
								 bool missing_ok);
extern Oid	dp_select_aggregate(void);
extern const char *dp_kind_name(DpAggKind kind);
extern const char *dp_arg_name(const DpCallInfo *info, int argno);
extern Oid	dp_unit_keep_oid(void);
extern Oid	dp_unit_pick_oid(void);
extern Oid	dp_unit_priority_oid(void);
extern Oid	dp_row_call_oid(void);
extern Oid	dp_row_eval_oid(void);
extern Oid	dp_row_function_oid(const char *name);
extern Oid	dp_relation_statistic_oid(bool is_volatile);
extern Oid	dp_statistics_visible_oid(void);
extern DpErrorBar dp_error_bar_function(Oid funcid);
extern Oid	dp_estimate_type(void);
extern Oid	dp_estimate_part_oid(void);
extern Oid	dp_estimate_scale_oid(void);
extern Oid	dp_unit_sampled_oid(void);
extern Oid	dp_unit_scan_oid(void);
extern Oid	dp_public_aggregate(void);
extern Oid	dp_domain_index_oid(void);
extern Oid	dp_domain_key_oid(void);
extern Oid	dp_top_k_aggregate(void);
extern Oid	dp_top_k_rank_oid(void);

#endif							/* DP_AGG_CATALOG_H */
