/*-------------------------------------------------------------------------
 *
 * guc.h
 *	  Settings of dp_agg.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_GUC_H
#define DP_AGG_GUC_H

/* true when loaded from shared_preload_libraries (set by _PG_init) */
extern bool dp_preloaded;

/* dp_agg.group_keys */
typedef enum DpGroupKeys
{
	DP_GROUP_KEYS_PRIVATE,		/* released through private selection */
	DP_GROUP_KEYS_PUBLIC		/* released as they are (public knowledge) */
} DpGroupKeys;

extern double dp_guc_delta;
extern int	dp_guc_group_keys;

/*
 * The defaults of the private selection of GROUP BY keys
 * (doc/units-and-groups.md, "Private group keys"): its share of a statement's
 * epsilon while dp_agg.selection_epsilon is unset, and dp_agg.selection_delta
 */
#define DP_DEFAULT_SELECTION_SHARE 0.5
#define DP_DEFAULT_SELECTION_DELTA "1e-7"
extern double dp_guc_selection_share;
extern int	dp_guc_max_public_keys;
extern int	dp_guc_charger_idle_ms;
extern int	dp_guc_composition_nice;
extern int	dp_guc_prepay;
extern int	dp_guc_prepay_ms;
extern int	dp_guc_max_leases;
extern int	dp_guc_lease_ms;

/*
 * The most statements one charge may pay for (dp_agg.prepay): the
 * statement and identical ones its session may run without asking again
 * (budget.c, "Prepaid statements").
 */
#define DP_PREPAY_MAX 64

extern int	dp_guc_max_databases;
extern double dp_guc_protected_min_epsilon;
extern int	dp_guc_protected_max_row_work;
extern char *dp_guc_stats_trusted_role;

/* DP statements on Citus tables */
extern char *dp_guc_cluster_key_file;
extern bool dp_guc_citus_worker;
extern int	dp_guc_fragment_ttl_s;

/* privacy units */
/*
 * Largest bound on the groups or rows of one privacy unit (2^16, the
 * CHECK of dp_agg.privacy_unit): k * R <= 2^32 keeps sensitivities in
 * grid units far inside 64 bits (release.c).
 */
#define DP_MAX_UNIT_BOUND 65536
extern int	dp_guc_max_rows_contributed;
extern int	dp_guc_max_rows_contributed_limit;
extern int	dp_guc_max_groups_contributed;
/* the key of the priorities of privacy units (pick_key.c), hexadecimal */
#define DP_PICK_KEY_SETTING "dp_agg.unit_pick_key"
#define DP_PICK_KEY_HEX_LEN 32
extern char *dp_guc_unit_pick_key;
/* the key of the samples of privacy units (pick_key.c), hexadecimal, never shown */
#define DP_SAMPLE_KEY_SETTING "dp_agg.unit_sample_key"
extern char *dp_guc_unit_sample_key;

extern void dp_guc_init(void);
extern bool dp_guc_epsilon(double *epsilon);
extern bool dp_guc_selection_epsilon(double *epsilon);
extern bool dp_guc_selection_delta(double *delta);

#endif							/* DP_AGG_GUC_H */
