/*-------------------------------------------------------------------------
 *
 * guc.c
 *	  Settings of dp_agg.
 *
 * dp_agg.epsilon has no default on purpose: a release whose price was not
 * chosen by somebody is an error, not a guess.  It is a string setting so
 * that "unset" can be told from any number; the check hook accepts only
 * positive finite numbers.  dp_agg.delta defaults to 0 (pure epsilon-DP, the
 * Laplace mechanism).  Both are read when a statement is priced, never while
 * it runs.
 *
 * The private selection of GROUP BY keys (selection.c) has documented
 * defaults instead, so that a GROUP BY runs with dp_agg.epsilon alone: while
 * dp_agg.selection_epsilon is unset the selection costs the share
 * dp_agg.selection_share of the statement's epsilon (price.c), and
 * dp_agg.selection_delta is 1e-7 unless set (a DBA changes both per role
 * with ALTER ROLE ... SET).  dp_agg.group_keys says whether keys are
 * selected privately (the default) or are public knowledge.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "utils/float.h"
#include "utils/guc.h"

#include "guc.h"

static char *dp_guc_epsilon_string = NULL;
static char *dp_guc_selection_epsilon_string = NULL;
static char *dp_guc_selection_delta_string = NULL;
bool		dp_preloaded = false;
double		dp_guc_delta = 0.0;
int			dp_guc_charger_idle_ms = 2000;
int			dp_guc_composition_nice = 10;
int			dp_guc_prepay = 0;
int			dp_guc_prepay_ms = 1000;
int			dp_guc_max_databases = 8;
int			dp_guc_max_leases = 64;
int			dp_guc_lease_ms = 0;
int			dp_guc_group_keys = DP_GROUP_KEYS_PRIVATE;
double		dp_guc_selection_share = DP_DEFAULT_SELECTION_SHARE;
int			dp_guc_max_public_keys = 100000;

static const struct config_enum_entry group_keys_options[] = {
	{"private", DP_GROUP_KEYS_PRIVATE, false},
	{"public", DP_GROUP_KEYS_PUBLIC, false},
	{NULL, 0, false}
};
double		dp_guc_protected_min_epsilon = 0.01;
int			dp_guc_protected_max_row_work = 4096;
char	   *dp_guc_stats_trusted_role = NULL;
int			dp_guc_max_rows_contributed = 1;
int			dp_guc_max_rows_contributed_limit = 1;
int			dp_guc_max_groups_contributed = 0;
char	   *dp_guc_unit_pick_key = NULL;
char	   *dp_guc_unit_sample_key = NULL;

/* DP statements on Citus tables (dist_token.c, dist_plan.c) */
char	   *dp_guc_cluster_key_file = NULL;
bool		dp_guc_citus_worker = false;
int			dp_guc_fragment_ttl_s = 60;

static bool
check_epsilon(char **newval, void **extra, GucSource source)
{
	char	   *end;
	double		v;

	if (*newval == NULL || (*newval)[0] == '\0')
		return true;
	errno = 0;
	v = strtod(*newval, &end);
	while (*end == ' ')
		end++;
	if (errno != 0 || *end != '\0' || !(v > 0) || !isfinite(v))
	{
		GUC_check_errcode(ERRCODE_INVALID_PARAMETER_VALUE);
		GUC_check_errmsg("invalid value for dp_agg.epsilon: \"%s\"", *newval);
		GUC_check_errdetail("epsilon must be a positive finite number.");
		return false;
	}
	return true;
}

/*
 * dp_agg.selection_epsilon and dp_agg.selection_delta: unset (empty) or a
 * number in their range; no default, like dp_agg.epsilon.
 */
static bool
parse_setting(const char *s, double *v)
{
	char	   *end;

	errno = 0;
	*v = strtod(s, &end);
	while (*end == ' ')
		end++;
	return errno == 0 && *end == '\0' && end != s;
}

static bool
check_selection_epsilon(char **newval, void **extra, GucSource source)
{
	double		v;

	if (*newval == NULL || (*newval)[0] == '\0')
		return true;
	if (!parse_setting(*newval, &v) || !(v > 0) || !isfinite(v))
	{
		GUC_check_errcode(ERRCODE_INVALID_PARAMETER_VALUE);
		GUC_check_errmsg("invalid value for dp_agg.selection_epsilon: \"%s\"", *newval);
		GUC_check_errdetail("selection_epsilon must be a positive finite number.");
		return false;
	}
	return true;
}

static bool
check_selection_delta(char **newval, void **extra, GucSource source)
{
	double		v;

	if (*newval == NULL || (*newval)[0] == '\0')
		return true;
	if (!parse_setting(*newval, &v) || !(v > 0 && v < 1))
	{
		GUC_check_errcode(ERRCODE_INVALID_PARAMETER_VALUE);
		GUC_check_errmsg("invalid value for dp_agg.selection_delta: \"%s\"", *newval);
		GUC_check_errdetail("selection_delta must be greater than 0 and less than 1.");
		return false;
	}
	return true;
}

/* a key of privacy units: empty, or DP_PICK_KEY_HEX_LEN hexadecimal digits */
static bool
valid_unit_key(const char *v)
{
	return v == NULL || v[0] == '\0' ||
		(strlen(v) == DP_PICK_KEY_HEX_LEN &&
		 strspn(v, "0123456789abcdef") == DP_PICK_KEY_HEX_LEN);
}

/* dp_agg.unit_pick_key */
static bool
check_unit_pick_key(char **newval, void **extra, GucSource source)
{
	if (valid_unit_key(*newval))
		return true;
	GUC_check_errcode(ERRCODE_INVALID_PARAMETER_VALUE);
	GUC_check_errmsg("invalid value for %s", DP_PICK_KEY_SETTING);
	GUC_check_errdetail("The key is %d lower-case hexadecimal digits.", DP_PICK_KEY_HEX_LEN);
	return false;
}

/* dp_agg.unit_sample_key */
static bool
check_unit_sample_key(char **newval, void **extra, GucSource source)
{
	if (valid_unit_key(*newval))
		return true;
	GUC_check_errcode(ERRCODE_INVALID_PARAMETER_VALUE);
	GUC_check_errmsg("invalid value for %s", DP_SAMPLE_KEY_SETTING);
	GUC_check_errdetail("The key is %d lower-case hexadecimal digits.", DP_PICK_KEY_HEX_LEN);
	return false;
}

/*
 * SHOW, current_setting and pg_settings never show the key of a sample:
 * amplification by subsampling holds only while the sample is secret
 * (pick_key.c).  Parallel workers get the value itself, which PostgreSQL
 * copies without the show hook.
 */
static const char *
show_unit_sample_key(void)
{
	return dp_guc_unit_sample_key == NULL || dp_guc_unit_sample_key[0] == '\0' ? "" : "(secret)";
}

static bool
check_delta(double *newval, void **extra, GucSource source)
{
	if (!(*newval >= 0.0 && *newval < 1.0))
	{
		GUC_check_errcode(ERRCODE_INVALID_PARAMETER_VALUE);
		GUC_check_errdetail("delta must be at least 0 and less than 1.");
		return false;
	}
	return true;
}

void
dp_guc_init(void)
{
	DefineCustomStringVariable("dp_agg.epsilon",
							   "Privacy loss epsilon of a DP aggregate called without an epsilon argument.",
							   "Empty (the default) means unset: such calls are an error.",
							   &dp_guc_epsilon_string,
							   "",
							   PGC_USERSET,
							   0,
							   check_epsilon, NULL, NULL);

	DefineCustomRealVariable("dp_agg.delta",
							 "Privacy parameter delta of a DP aggregate called without a delta argument.",
							 "0 selects the Laplace mechanism (pure epsilon-DP), "
							 "a positive value the Gaussian mechanism.",
							 &dp_guc_delta,
							 0.0, 0.0, 1.0,
							 PGC_USERSET,
							 0,
							 check_delta, NULL, NULL);

	DefineCustomStringVariable("dp_agg.selection_epsilon",
							   "Privacy loss epsilon of the private selection of GROUP BY keys.",
							   "Empty (the default): the selection costs dp_agg.selection_share of the "
							   "statement's epsilon.",
							   &dp_guc_selection_epsilon_string,
							   "",
							   PGC_USERSET,
							   0,
							   check_selection_epsilon, NULL, NULL);

	DefineCustomStringVariable("dp_agg.selection_delta",
							   "Privacy parameter delta of the private selection of GROUP BY keys.",
							   "A group of one unit is released with probability delta; empty means unset, "
							   "and a DP statement with private GROUP BY keys is then an error.",
							   &dp_guc_selection_delta_string,
							   DP_DEFAULT_SELECTION_DELTA,
							   PGC_USERSET,
							   0,
							   check_selection_delta, NULL, NULL);

	DefineCustomRealVariable("dp_agg.selection_share",
							 "Share of a statement's epsilon that the private selection of its GROUP BY keys "
							 "costs while dp_agg.selection_epsilon is unset.",
							 "With share s, a statement whose releases cost epsilon E pays s E / (1 - s) "
							 "for the selection: E at the default 0.5.",
							 &dp_guc_selection_share,
							 DP_DEFAULT_SELECTION_SHARE, 0.01, 0.99,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("dp_agg.max_public_keys",
							"Most keys of the public domain of a DP statement's GROUP BY.",
							"Every key of a public domain is released; a domain derived from the "
							"statement's constants that has more keys leaves them to private selection.",
							&dp_guc_max_public_keys,
							100000, 1, 10000000,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomEnumVariable("dp_agg.group_keys",
							 "Whether GROUP BY keys of DP statements are selected privately or public.",
							 "private (the default) releases a group only if a noisy count of its rows "
							 "passes a threshold; public releases every group present, for keys that are "
							 "public knowledge.",
							 &dp_guc_group_keys,
							 DP_GROUP_KEYS_PRIVATE,
							 group_keys_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("dp_agg.charger_idle_timeout",
							"Time after which an idle budget charger exits.",
							"A charger stays connected to its database; DROP DATABASE "
							"waits for it to exit.",
							&dp_guc_charger_idle_ms,
							2000, 100, 3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("dp_agg.composition_nice",
							"Nice value a backend takes when it first composes privacy loss distributions.",
							"Compositions for 'pld' accounting run in the backends of the statements "
							"that need them; a lower CPU priority (a higher nice value) keeps them "
							"from taking CPU from other roles' statements when CPUs are scarce. The "
							"backend keeps it until it exits (a process cannot raise its priority "
							"again). 0 leaves the priority alone.",
							&dp_guc_composition_nice,
							10, 0, 19,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("dp_agg.prepay",
							"Statements a session may pay for at once when it repeats a DP statement.",
							"When a session charges a statement identical to the last one it charged, "
							"its budgets pay for up to this many at once, and it runs the next ones "
							"without asking the charger, within dp_agg.prepay_time and the budgets' "
							"windows. What it does not run is not refunded (at most this many minus "
							"one each time the session stops repeating). 0 or 1: every statement is "
							"charged alone.",
							&dp_guc_prepay,
							0, 0, DP_PREPAY_MAX,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("dp_agg.prepay_time",
							"How long statements prepaid with dp_agg.prepay may run after their charge.",
							"A DBA's change of a budget's limits applies to them after at most "
							"this long.",
							&dp_guc_prepay_ms,
							1000, 1, 10 * 1000,
							PGC_SUSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	/*
	 * Protected tables (doc/guard.md, "Protected tables"): settings only a
	 * superuser may change, as they limit untrusted roles.
	 */
	DefineCustomRealVariable("dp_agg.protected_min_epsilon",
							 "Smallest epsilon of a DP aggregate over a protected relation by an untrusted role.",
							 "Each statement then costs at least this much: a budget answers a bounded "
							 "number of questions, even through a side channel not yet closed.",
							 &dp_guc_protected_min_epsilon,
							 0.01, 0.0, 1e6,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("dp_agg.protected_max_row_work",
							"Largest size of the expressions an untrusted role's statement evaluates on "
							"the rows of a protected relation.",
							"Counted as expression nodes plus bytes of variable-length constants and "
							"parameters: it bounds how much longer one row can make a statement run.",
							&dp_guc_protected_max_row_work,
							4096, 16, PG_INT32_MAX,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	/*
	 * Roles trusted for statistics: they read the counters of protected
	 * relations (protect_stats.c).  PGC_SUSET: an untrusted role must not
	 * name a role of its own.
	 */
	DefineCustomStringVariable("dp_agg.stats_trusted_role",
							   "Role whose members may read the statistics that count the rows of protected relations.",
							   "Roles with its privileges read the cumulative statistics of every relation "
							   "(pg_stat_*); empty: superusers and each relation's trusted roles only.",
							   &dp_guc_stats_trusted_role,
							   "pg_read_all_stats",
							   PGC_SUSET,
							   0,
							   NULL, NULL, NULL);

	/* DP statements on Citus tables */
	DefineCustomStringVariable("dp_agg.cluster_key_file",
							   "File holding the key the nodes of a Citus cluster share to sign fragments.",
							   "Empty (the default): DP statements on Citus tables are refused.",
							   &dp_guc_cluster_key_file,
							   "",
							   PGC_SIGHUP,
							   GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);

	DefineCustomBoolVariable("dp_agg.citus_worker",
							 "This node is a Citus worker: it refuses every DP aggregate but signed fragments.",
							 NULL,
							 &dp_guc_citus_worker,
							 false,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("dp_agg.fragment_ttl",
							"How long the signature of a fragment of a DP statement stays valid.",
							"A worker refuses a fragment signed longer ago.",
							&dp_guc_fragment_ttl_s,
							60, 1, 3600,
							PGC_SIGHUP,
							GUC_UNIT_S,
							NULL, NULL, NULL);

	DefineCustomIntVariable("dp_agg.lease_time",
							"How long the charger leases a budget to the sessions that repeat a statement.",
							"A session that repeats the DP statement it last charged through the "
							"charger decides and journals the charge itself while the budgets it "
							"paid from are leased, without waiting for the charger. The charger's "
							"setting (postgresql.conf, ALTER SYSTEM, ALTER DATABASE) turns leases on "
							"and is how long one lasts; a session whose setting is 0 never charges "
							"on a lease. A DBA's change of a budget or a cap ends every lease at "
							"once; a change of group membership applies to a session at its next "
							"transaction. 0: every statement waits for the charger.",
							&dp_guc_lease_ms,
							0, 0, 10 * 1000,
							PGC_SUSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	/* a postmaster setting may only be defined while preloading */
	if (process_shared_preload_libraries_in_progress)
		DefineCustomIntVariable("dp_agg.max_databases",
								"Number of databases that can charge budgets at the same time.",
								NULL,
								&dp_guc_max_databases,
								8, 1, 1024,
								PGC_POSTMASTER,
								0,
								NULL, NULL, NULL);
	if (process_shared_preload_libraries_in_progress)
		DefineCustomIntVariable("dp_agg.max_leases",
								"Number of budgets the chargers can lease to backends at the same time.",
								"See dp_agg.lease_time. 0: no budget is leased.",
								&dp_guc_max_leases,
								64, 0, 65536,
								PGC_POSTMASTER,
								0,
								NULL, NULL, NULL);

	/*
	 * Privacy units (doc/units-and-groups.md, "Privacy units").  A role can
	 * ALTER ROLE itself SET any user setting, so the bounds a role untrusted
	 * for a protected relation may use are capped by what only superusers set:
	 * the superuser setting dp_agg.max_rows_contributed_limit and the
	 * catalog's max_groups_contributed (privacy_unit.c, release.c).
	 */
	DefineCustomIntVariable("dp_agg.max_rows_contributed",
							"Rows of one privacy unit that dp_count counts in one group.",
							"Roles untrusted for a protected relation may not exceed "
							"dp_agg.max_rows_contributed_limit.",
							&dp_guc_max_rows_contributed,
							1, 1, DP_MAX_UNIT_BOUND,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("dp_agg.max_rows_contributed_limit",
							"Largest dp_agg.max_rows_contributed of roles untrusted for a protected relation.",
							NULL,
							&dp_guc_max_rows_contributed_limit,
							1, 1, DP_MAX_UNIT_BOUND,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("dp_agg.max_groups_contributed",
							"Groups of a statement one privacy unit contributes to; 0 for its relation's setting.",
							"Roles untrusted for a protected relation may only lower the "
							"relation's max_groups_contributed (dp_agg.set_privacy_unit).",
							&dp_guc_max_groups_contributed,
							0, 0, DP_MAX_UNIT_BOUND,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	/* privacy units: the key of the priorities of their groups (pick_key.c) */
	DefineCustomStringVariable(DP_PICK_KEY_SETTING,
							   "Internal: the key of the priorities that choose the group of each privacy unit.",
							   "Drawn by dp_agg for each execution of a DP statement over privacy units and "
							   "passed to its parallel workers; privacy does not depend on its secrecy.",
							   &dp_guc_unit_pick_key,
							   "",
							   PGC_SUSET,
							   GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE | GUC_NO_RESET_ALL |
							   GUC_DISALLOW_IN_FILE | GUC_SUPERUSER_ONLY,
							   check_unit_pick_key, NULL, NULL);
	/* the key of the samples of privacy units (pick_key.c, unit_sample.c) */
	DefineCustomStringVariable(DP_SAMPLE_KEY_SETTING,
							   "Internal: the key that decides which privacy units a TABLESAMPLE keeps.",
							   "Drawn by dp_agg for each execution of a DP statement that samples privacy "
							   "units and passed to its parallel workers; never shown.",
							   &dp_guc_unit_sample_key,
							   "",
							   PGC_SUSET,
							   GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE | GUC_NO_RESET_ALL |
							   GUC_DISALLOW_IN_FILE | GUC_SUPERUSER_ONLY,
							   check_unit_sample_key, NULL, show_unit_sample_key);

	MarkGUCPrefixReserved("dp_agg");
}

/*
 * The value of dp_agg.epsilon, false if it is unset.
 */
bool
dp_guc_epsilon(double *epsilon)
{
	if (dp_guc_epsilon_string == NULL || dp_guc_epsilon_string[0] == '\0')
		return false;
	*epsilon = strtod(dp_guc_epsilon_string, NULL);
	return true;
}

/* The value of dp_agg.selection_epsilon, false if it is unset. */
bool
dp_guc_selection_epsilon(double *epsilon)
{
	if (dp_guc_selection_epsilon_string == NULL || dp_guc_selection_epsilon_string[0] == '\0')
		return false;
	*epsilon = strtod(dp_guc_selection_epsilon_string, NULL);
	return true;
}

/* The value of dp_agg.selection_delta, false if it was set to empty. */
bool
dp_guc_selection_delta(double *delta)
{
	if (dp_guc_selection_delta_string == NULL || dp_guc_selection_delta_string[0] == '\0')
		return false;
	*delta = strtod(dp_guc_selection_delta_string, NULL);
	return true;
}
