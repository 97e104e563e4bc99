/*-------------------------------------------------------------------------
 *
 * catalog.h
 *	  Which aggregates are dp_agg's, and what each one is.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_CATALOG_H
#define DP_AGG_CATALOG_H

/* which aggregate */
typedef enum DpAggKind
{
	DP_COUNT_STAR,
	DP_COUNT,
	DP_SUM,
	DP_AVG,
	DP_SELECT					/* the private selection of a group (selection.c) */
} DpAggKind;

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
	DP_UNIT_BOUND,				/* dp_agg.unit_bound_*: per (unit, group) */
	DP_UNIT_RELEASE,			/* dp_agg.unit_release_*: per group, noisy */
	DP_UNIT_PICK				/* dp_agg.unit_pick_bound_*: per unit, its group
								 * of smallest priority (k = 1, unit_pick.c) */
} DpUnitLevel;

/*
 * The parse location of the internal aggregates and window function that
 * the rewrite of privacy units makes (privacy_unit.c).  The parser gives
 * locations >= -1 only, so a node carrying this one was made by the
 * rewrite, never written by an analyst (nor inlined from a function): the
 * plan guard accepts the internal functions only with it (guard.c).
 */
#define DP_UNIT_LOCATION (-0x5eed)

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
	int			k_arg;			/* dp_select: max_groups_contributed */
	DpUnitLevel unit;			/* which level of a rewrite, if any */
} DpCallInfo;

extern void dp_catalog_init(void);
extern const DpCallInfo *dp_lookup_call(Oid aggfnoid);
extern bool dp_extension_present(void);
extern bool dp_extension_member(Oid funcid);
extern Oid	dp_select_aggregate(void);
extern const char *dp_kind_name(DpAggKind kind);
extern const char *dp_arg_name(const DpCallInfo *info, int argno);
extern Oid	dp_unit_keep_oid(void);
extern Oid	dp_unit_pick_oid(void);
extern Oid	dp_unit_priority_oid(void);
extern Oid	dp_row_call_oid(void);
extern Oid	dp_row_eval_oid(void);
extern Oid	dp_row_function_oid(const char *name);

#endif							/* DP_AGG_CATALOG_H */
