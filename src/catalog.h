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
} DpCallInfo;

extern void dp_catalog_init(void);
extern const DpCallInfo *dp_lookup_call(Oid aggfnoid);
extern bool dp_extension_present(void);
extern Oid	dp_select_aggregate(void);
extern const char *dp_kind_name(DpAggKind kind);
extern const char *dp_arg_name(const DpCallInfo *info, int argno);

#endif							/* DP_AGG_CATALOG_H */
