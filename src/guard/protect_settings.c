/*-------------------------------------------------------------------------
 *
 * protect_settings.c
 *	  No setting reports on the execution of an untrusted role's statement
 *	  over a protected relation.
 *
 * doc/guard.md, "Protected tables", "Settings".  Every setting a role other
 * than a superuser can change, PostgreSQL's (contexts user and superuser:
 * GRANT SET ON PARAMETER makes the latter settable too) on versions 15 to
 * 18, and those of the modules commonly loaded, is classified below by what
 * it can make the server tell about an execution:
 *   - forced: it makes the server report on the execution (trace_sort's
 *     memory of each sort, every LOG and DEBUG line through
 *     client_min_messages) or end it on a row's error (exit_on_error): while
 *     the executor runs an untrusted role's statement over a protected
 *     relation (ExecutorRun, ExecutorFinish, ExecutorEnd), it takes its quiet
 *     value, as a function's SET clause would (a GUC nest level, popped
 *     after; an error pops it with the transaction).  Nothing the role wrote
 *     runs in between (protect_guard.c refuses volatile and non-built-in
 *     functions in such statements), so nothing changes it back;
 *     When such a statement's (sub)transaction aborts, its portals are
 *     dropped without the executor's end, and the temporary files of its
 *     sorts closed (log_temp_files reports their sizes) after dp_agg's hooks
 *     returned: the abort runs with the same quiet values, set as SET LOCAL
 *     would (force_for_abort);
 *   - refused: it reports outside the executor's calls (the resource usage
 *     that log_executor_stats prints after ExecutorRun returns), or through
 *     another module's hooks that may run before dp_agg's (auto_explain's
 *     log_analyze), or fails the statement on the size of what it wrote
 *     (temp_file_limit): the statement is refused while it is set;
 *   - the others change plans (which depend on public sizes only), formats,
 *     timing, the server log (which the role cannot read), statistics (which
 *     it cannot read either, rule 5) or nothing observable.
 * A setting of a loaded module that is not classified is refused when it
 * was changed from its built-in default by anything but the server's
 * configuration; custom placeholders, which no module reads, are ignored.
 * The regression test protect_settings fails when the running version shows
 * a setting that is not classified.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/plannodes.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

#include "compat.h"
#include "protect_settings.h"

PG_FUNCTION_INFO_V1(dp_setting_classes);

typedef enum SettingClass
{
	S_INERT,					/* nothing observable */
	S_PLAN,						/* plans: from public sizes only */
	S_FORMAT,					/* values: a function of the row and it */
	S_TIMING,					/* durations */
	S_SERVER_LOG,				/* the server log only */
	S_STATISTICS,				/* statistics untrusted roles cannot read */
	S_TEMP_FILES,				/* when sorts and hashes write temporary files */
	S_FORCED,					/* its quiet value during the execution */
	S_REFUSED					/* the statement is refused unless quiet */
} SettingClass;

static const char *const class_names[] = {
	"inert", "plan", "format", "timing", "server log", "statistics",
	"temporary files", "forced", "refused"
};

typedef struct Setting
{
	const char *name;
	SettingClass class;
	const char *quiet;			/* forced, refused: accepted values, the first
								 * forced */
	const char *reason;
} Setting;

#define R_PLAN "chooses plans, which for an untrusted role depend on public sizes only (rule 5)"
#define R_FORMAT "a value computed on a row depends on the row and this setting only; a failing call yields NULL"
#define R_SESSION "defaults of the session or of objects it creates; no effect on what a statement reads"
#define R_ADMIN "administration, maintenance and storage; no effect on what a statement reads or reports"
#define R_TIMING "turns a duration into an error or a wait: it tells no more than the statement's duration, which the role measures anyway"
#define R_LOG "writes to the server log only, which the role cannot read; during the execution no LOG line reaches the client (client_min_messages is forced)"
#define R_STATS "statistics of the execution, which roles untrusted for a protected relation cannot read (rule 5)"
#define R_TEMP "whether sorts and hashes write temporary files; their sizes remain visible (doc/guard.md, threat model)"
#define R_PRINT "prints the statement or its plan, not the rows: an untrusted role's plan uses no statistics of protected relations"
#define R_PLPGSQL "PL/pgSQL does not run during an untrusted role's statement over a protected relation"
#define R_DP "dp_agg's own settings: the guard and the price read them at planning and executor start"
#define R_DEBUG_BUILD "only in builds with debugging options (LOCK_DEBUG, TRACE_SYNCSCAN, WAL_DEBUG)"

static const Setting settings[] = {
	/* forced to a quiet value while the executor runs */
	{"client_min_messages", S_FORCED, "notice,warning,error",
	"at log or debug, every LOG and DEBUG line the execution raises (trace_sort, log_temp_files, developer options) reaches the client"},
	{"trace_sort", S_FORCED, "off", "reports each sort's memory and passes, which count the rows it sorted"},
	{"trace_notify", S_FORCED, "off", "developer option: reports on notifications"},
	{"exit_on_error", S_FORCED, "off", "would end the session on an error raised by a row, before the trap could turn it into NULL"},
	{"gin_fuzzy_search_limit", S_FORCED, "0", "a GIN index scan would drop rows depending on how many others match"},
	{"composite_type_mismatch", S_FORCED, "error,disabled", "at warn, each row holding a stale composite value raises a warning"},
	{"trace_locks", S_FORCED, "off", R_DEBUG_BUILD},
	{"trace_userlocks", S_FORCED, "off", R_DEBUG_BUILD},
	{"trace_lwlocks", S_FORCED, "off", R_DEBUG_BUILD},
	{"debug_deadlocks", S_FORCED, "off", R_DEBUG_BUILD},
	{"trace_syncscan", S_FORCED, "off", R_DEBUG_BUILD},
	{"wal_debug", S_FORCED, "off", R_DEBUG_BUILD},

	/* the statement is refused unless they are quiet */
	{"log_executor_stats", S_REFUSED, "off",
	"prints the executor's resource usage (blocks written, as temporary files are) after ExecutorRun returns, out of dp_agg's reach"},
	{"log_statement_stats", S_REFUSED, "off",
	"prints the statement's resource usage (blocks written, as temporary files are) after it ran, out of dp_agg's reach"},
	{"temp_file_limit", S_REFUSED, "-1",
	"makes a statement fail when the temporary files of a sort or hash grow past the limit, which counts the rows (refused only for plans that can write temporary files)"},
	{"citus.log_remote_commands", S_REFUSED, "off",
	"prints every command the coordinator sends to the workers, the signed fragments of a DP statement included"},
	{"citus.worker_min_messages", S_REFUSED, "notice,warning,error",
	"at debug levels, relays to the client what the workers' fragments raise while they read the rows"},
	{"auto_explain.log_analyze", S_REFUSED, "off",
	"counts the rows of each plan node; auto_explain's hook may request the counts after dp_agg's check (refused only while auto_explain.log_min_duration is set)"},

	/* the server log */
	{"log_min_messages", S_SERVER_LOG, NULL, R_LOG},
	{"log_min_error_statement", S_SERVER_LOG, NULL, R_LOG},
	{"log_error_verbosity", S_SERVER_LOG, NULL, R_LOG},
	{"log_duration", S_SERVER_LOG, NULL, R_LOG},
	{"log_min_duration_statement", S_SERVER_LOG, NULL, R_LOG},
	{"log_min_duration_sample", S_SERVER_LOG, NULL, R_LOG},
	{"log_statement", S_SERVER_LOG, NULL, R_LOG},
	{"log_statement_sample_rate", S_SERVER_LOG, NULL, R_LOG},
	{"log_transaction_sample_rate", S_SERVER_LOG, NULL, R_LOG},
	{"log_parameter_max_length", S_SERVER_LOG, NULL, R_LOG},
	{"log_parameter_max_length_on_error", S_SERVER_LOG, NULL, R_LOG},
	{"log_lock_waits", S_SERVER_LOG, NULL, R_LOG},
	{"log_lock_failures", S_SERVER_LOG, NULL, R_LOG},
	{"log_replication_commands", S_SERVER_LOG, NULL, R_LOG},
	{"log_temp_files", S_SERVER_LOG, NULL, R_LOG},
	{"log_parser_stats", S_SERVER_LOG, NULL, "resource usage of parsing, which reads no row"},
	{"log_planner_stats", S_SERVER_LOG, NULL, "resource usage of planning, which reads no row of a protected relation"},
	{"log_btree_build_stats", S_SERVER_LOG, NULL, "index builds only"},
	{"backtrace_functions", S_SERVER_LOG, NULL, R_LOG},
	{"debug_print_parse", S_SERVER_LOG, NULL, R_PRINT},
	{"debug_print_rewritten", S_SERVER_LOG, NULL, R_PRINT},
	{"debug_print_plan", S_SERVER_LOG, NULL, R_PRINT},
	{"debug_pretty_print", S_SERVER_LOG, NULL, R_PRINT},
	{"auto_explain.log_min_duration", S_SERVER_LOG, NULL, R_PRINT},
	{"auto_explain.log_level", S_SERVER_LOG, NULL, R_PRINT},
	{"auto_explain.log_format", S_SERVER_LOG, NULL, R_PRINT},
	{"auto_explain.log_verbose", S_SERVER_LOG, NULL, R_PRINT},
	{"auto_explain.log_settings", S_SERVER_LOG, NULL, R_PRINT},
	{"auto_explain.log_nested_statements", S_SERVER_LOG, NULL, R_PRINT},
	{"auto_explain.log_parameter_max_length", S_SERVER_LOG, NULL, R_PRINT},
	{"auto_explain.log_options", S_SERVER_LOG, NULL, R_PRINT},
	{"auto_explain.sample_rate", S_SERVER_LOG, NULL, R_PRINT},
	{"auto_explain.log_buffers", S_SERVER_LOG, NULL, "only with log_analyze, which is refused"},
	{"auto_explain.log_wal", S_SERVER_LOG, NULL, "only with log_analyze, which is refused"},
	{"auto_explain.log_timing", S_SERVER_LOG, NULL, "only with log_analyze, which is refused"},
	{"auto_explain.log_triggers", S_SERVER_LOG, NULL, "only with log_analyze, which is refused"},

	/* statistics */
	{"track_activities", S_STATISTICS, NULL, R_STATS},
	{"track_counts", S_STATISTICS, NULL, R_STATS},
	{"track_functions", S_STATISTICS, NULL, R_STATS},
	{"track_io_timing", S_STATISTICS, NULL, R_STATS},
	{"track_wal_io_timing", S_STATISTICS, NULL, R_STATS},
	{"track_cost_delay_timing", S_STATISTICS, NULL, R_STATS},
	{"stats_fetch_consistency", S_STATISTICS, NULL, R_STATS},
	{"compute_query_id", S_STATISTICS, NULL, R_STATS},
	{"update_process_title", S_STATISTICS, NULL, "shows the statement, not its rows, in the process title"},
	{"pg_stat_statements.track", S_STATISTICS, NULL, R_STATS},
	{"pg_stat_statements.track_utility", S_STATISTICS, NULL, R_STATS},
	{"pg_stat_statements.track_planning", S_STATISTICS, NULL, R_STATS},

	/* temporary files */
	{"work_mem", S_TEMP_FILES, NULL, R_TEMP},
	{"hash_mem_multiplier", S_TEMP_FILES, NULL, R_TEMP},
	{"temp_tablespaces", S_TEMP_FILES, NULL, R_TEMP},

	/* timing */
	{"statement_timeout", S_TIMING, NULL, R_TIMING},
	{"lock_timeout", S_TIMING, NULL, R_TIMING},
	{"idle_in_transaction_session_timeout", S_TIMING, NULL, R_TIMING},
	{"idle_session_timeout", S_TIMING, NULL, R_TIMING},
	{"transaction_timeout", S_TIMING, NULL, R_TIMING},
	{"deadlock_timeout", S_TIMING, NULL, R_TIMING},
	{"client_connection_check_interval", S_TIMING, NULL, R_TIMING},
	{"tcp_keepalives_count", S_TIMING, NULL, R_TIMING},
	{"tcp_keepalives_idle", S_TIMING, NULL, R_TIMING},
	{"tcp_keepalives_interval", S_TIMING, NULL, R_TIMING},
	{"tcp_user_timeout", S_TIMING, NULL, R_TIMING},
	{"wal_sender_timeout", S_TIMING, NULL, R_TIMING},
	{"vacuum_cost_delay", S_TIMING, NULL, R_TIMING},
	{"vacuum_cost_limit", S_TIMING, NULL, R_TIMING},
	{"vacuum_cost_page_dirty", S_TIMING, NULL, R_TIMING},
	{"vacuum_cost_page_hit", S_TIMING, NULL, R_TIMING},
	{"vacuum_cost_page_miss", S_TIMING, NULL, R_TIMING},
	{"commit_delay", S_TIMING, NULL, R_TIMING},
	{"commit_siblings", S_TIMING, NULL, R_TIMING},
	{"backend_flush_after", S_TIMING, NULL, R_TIMING},
	{"effective_io_concurrency", S_TIMING, NULL, R_TIMING},
	{"maintenance_io_concurrency", S_TIMING, NULL, R_TIMING},
	{"io_combine_limit", S_TIMING, NULL, R_TIMING},
	{"debug_discard_caches", S_TIMING, NULL, R_TIMING},
	{"synchronous_commit", S_TIMING, NULL, R_TIMING},
	{"max_stack_depth", S_TIMING, NULL, "the depth of expressions is the statement's; a call that runs out of stack on a row yields NULL"},

	/* plans */
	{"enable_async_append", S_PLAN, NULL, R_PLAN},
	{"enable_bitmapscan", S_PLAN, NULL, R_PLAN},
	{"enable_distinct_reordering", S_PLAN, NULL, R_PLAN},
	{"enable_gathermerge", S_PLAN, NULL, R_PLAN},
	{"enable_group_by_reordering", S_PLAN, NULL, R_PLAN},
	{"enable_hashagg", S_PLAN, NULL, R_PLAN},
	{"enable_hashjoin", S_PLAN, NULL, R_PLAN},
	{"enable_incremental_sort", S_PLAN, NULL, R_PLAN},
	{"enable_indexonlyscan", S_PLAN, NULL, R_PLAN},
	{"enable_indexscan", S_PLAN, NULL, R_PLAN},
	{"enable_material", S_PLAN, NULL, R_PLAN},
	{"enable_memoize", S_PLAN, NULL, R_PLAN},
	{"enable_mergejoin", S_PLAN, NULL, R_PLAN},
	{"enable_nestloop", S_PLAN, NULL, R_PLAN},
	{"enable_parallel_append", S_PLAN, NULL, R_PLAN},
	{"enable_parallel_hash", S_PLAN, NULL, R_PLAN},
	{"enable_partition_pruning", S_PLAN, NULL, R_PLAN},
	{"enable_partitionwise_aggregate", S_PLAN, NULL, R_PLAN},
	{"enable_partitionwise_join", S_PLAN, NULL, R_PLAN},
	{"enable_presorted_aggregate", S_PLAN, NULL, R_PLAN},
	{"enable_self_join_elimination", S_PLAN, NULL, R_PLAN},
	{"enable_seqscan", S_PLAN, NULL, R_PLAN},
	{"enable_sort", S_PLAN, NULL, R_PLAN},
	{"enable_tidscan", S_PLAN, NULL, R_PLAN},
	{"cpu_index_tuple_cost", S_PLAN, NULL, R_PLAN},
	{"cpu_operator_cost", S_PLAN, NULL, R_PLAN},
	{"cpu_tuple_cost", S_PLAN, NULL, R_PLAN},
	{"random_page_cost", S_PLAN, NULL, R_PLAN},
	{"seq_page_cost", S_PLAN, NULL, R_PLAN},
	{"effective_cache_size", S_PLAN, NULL, R_PLAN},
	{"parallel_setup_cost", S_PLAN, NULL, R_PLAN},
	{"parallel_tuple_cost", S_PLAN, NULL, R_PLAN},
	{"parallel_leader_participation", S_PLAN, NULL, R_PLAN},
	{"max_parallel_workers", S_PLAN, NULL, R_PLAN},
	{"max_parallel_workers_per_gather", S_PLAN, NULL, R_PLAN},
	{"min_parallel_index_scan_size", S_PLAN, NULL, R_PLAN},
	{"min_parallel_table_scan_size", S_PLAN, NULL, R_PLAN},
	{"force_parallel_mode", S_PLAN, NULL, R_PLAN},
	{"debug_parallel_query", S_PLAN, NULL, R_PLAN},
	{"geqo", S_PLAN, NULL, R_PLAN},
	{"geqo_effort", S_PLAN, NULL, R_PLAN},
	{"geqo_generations", S_PLAN, NULL, R_PLAN},
	{"geqo_pool_size", S_PLAN, NULL, R_PLAN},
	{"geqo_seed", S_PLAN, NULL, R_PLAN},
	{"geqo_selection_bias", S_PLAN, NULL, R_PLAN},
	{"geqo_threshold", S_PLAN, NULL, R_PLAN},
	{"from_collapse_limit", S_PLAN, NULL, R_PLAN},
	{"join_collapse_limit", S_PLAN, NULL, R_PLAN},
	{"constraint_exclusion", S_PLAN, NULL, R_PLAN},
	{"cursor_tuple_fraction", S_PLAN, NULL, R_PLAN},
	{"plan_cache_mode", S_PLAN, NULL, "generic plans keep parameters, whose calls on rows are trapped like the rest"},
	{"recursive_worktable_factor", S_PLAN, NULL, R_PLAN},
	{"default_statistics_target", S_PLAN, NULL, R_PLAN},
	{"jit", S_PLAN, NULL, R_PLAN},
	{"jit_above_cost", S_PLAN, NULL, R_PLAN},
	{"jit_expressions", S_PLAN, NULL, R_PLAN},
	{"jit_inline_above_cost", S_PLAN, NULL, R_PLAN},
	{"jit_optimize_above_cost", S_PLAN, NULL, R_PLAN},
	{"jit_tuple_deforming", S_PLAN, NULL, R_PLAN},
	{"synchronize_seqscans", S_PLAN, NULL, "the order in which rows are read, which no DP aggregate depends on"},

	/* values: formats and locales */
	{"DateStyle", S_FORMAT, NULL, R_FORMAT},
	{"IntervalStyle", S_FORMAT, NULL, R_FORMAT},
	{"TimeZone", S_FORMAT, NULL, R_FORMAT},
	{"timezone_abbreviations", S_FORMAT, NULL, R_FORMAT},
	{"extra_float_digits", S_FORMAT, NULL, R_FORMAT},
	{"bytea_output", S_FORMAT, NULL, R_FORMAT},
	{"xmlbinary", S_FORMAT, NULL, R_FORMAT},
	{"xmloption", S_FORMAT, NULL, R_FORMAT},
	{"lc_messages", S_FORMAT, NULL, R_FORMAT},
	{"lc_monetary", S_FORMAT, NULL, R_FORMAT},
	{"lc_numeric", S_FORMAT, NULL, R_FORMAT},
	{"lc_time", S_FORMAT, NULL, R_FORMAT},
	{"client_encoding", S_FORMAT, NULL, "the encoding of results, released values only"},
	{"array_nulls", S_FORMAT, NULL, R_FORMAT},
	{"transform_null_equals", S_FORMAT, NULL, "changes how a statement is parsed, not its rows"},
	{"standard_conforming_strings", S_FORMAT, NULL, "changes how a statement is parsed, not its rows"},
	{"backslash_quote", S_FORMAT, NULL, "changes how a statement is parsed, not its rows"},
	{"escape_string_warning", S_FORMAT, NULL, "warns about the statement's text, not its rows"},
	{"quote_all_identifiers", S_FORMAT, NULL, R_FORMAT},
	{"default_text_search_config", S_FORMAT, NULL, R_FORMAT},
	{"search_path", S_FORMAT, NULL, "resolves names when the statement is parsed; dp_agg checks objects, not names"},
	{"icu_validation_level", S_FORMAT, NULL, "validates locales when collations are created"},

	/* the session and administration */
	{"citus.max_adaptive_executor_pool_size", S_INERT, NULL,
	"the number of connections a statement opens to each worker: it reports nothing (fragments are signed for one use, whatever the order they run in)"},
	{"citus.propagate_set_commands", S_INERT, NULL,
	"which SET commands Citus repeats on the workers: a DP statement on a protected Citus table refuses a transaction that propagates any (dist_session.c)"},
	{"citus.explain_all_tasks", S_INERT, NULL, "read by EXPLAIN only, which untrusted roles may not run over protected relations"},
	{"citus.explain_analyze_sort_method", S_INERT, NULL, "read by EXPLAIN only, which untrusted roles may not run over protected relations"},
	{"application_name", S_INERT, NULL, R_SESSION},
	{"check_function_bodies", S_INERT, NULL, R_SESSION},
	{"createrole_self_grant", S_INERT, NULL, R_SESSION},
	{"default_table_access_method", S_INERT, NULL, R_SESSION},
	{"default_tablespace", S_INERT, NULL, R_SESSION},
	{"default_toast_compression", S_INERT, NULL, R_SESSION},
	{"default_transaction_deferrable", S_INERT, NULL, R_SESSION},
	{"default_transaction_isolation", S_INERT, NULL, R_SESSION},
	{"default_transaction_read_only", S_INERT, NULL, R_SESSION},
	{"transaction_deferrable", S_INERT, NULL, R_SESSION},
	{"transaction_isolation", S_INERT, NULL, R_SESSION},
	{"transaction_read_only", S_INERT, NULL, R_SESSION},
	{"password_encryption", S_INERT, NULL, R_SESSION},
	{"scram_iterations", S_INERT, NULL, R_SESSION},
	{"md5_password_warnings", S_INERT, NULL, R_SESSION},
	{"row_security", S_INERT, NULL, "off makes a statement over a table with row security fail, whatever its rows"},
	{"restrict_nonsystem_relation_kind", S_INERT, NULL, R_SESSION},
	{"session_replication_role", S_INERT, NULL, "which triggers fire: a DP statement over a protected relation writes nothing"},
	{"event_triggers", S_INERT, NULL, R_ADMIN},
	{"temp_buffers", S_INERT, NULL, "temporary tables only"},
	{"maintenance_work_mem", S_INERT, NULL, R_ADMIN},
	{"logical_decoding_work_mem", S_INERT, NULL, R_ADMIN},
	{"max_parallel_maintenance_workers", S_INERT, NULL, R_ADMIN},
	{"gin_pending_list_limit", S_INERT, NULL, R_ADMIN},
	{"vacuum_buffer_usage_limit", S_INERT, NULL, R_ADMIN},
	{"vacuum_failsafe_age", S_INERT, NULL, R_ADMIN},
	{"vacuum_freeze_min_age", S_INERT, NULL, R_ADMIN},
	{"vacuum_freeze_table_age", S_INERT, NULL, R_ADMIN},
	{"vacuum_max_eager_freeze_failure_rate", S_INERT, NULL, R_ADMIN},
	{"vacuum_multixact_failsafe_age", S_INERT, NULL, R_ADMIN},
	{"vacuum_multixact_freeze_min_age", S_INERT, NULL, R_ADMIN},
	{"vacuum_multixact_freeze_table_age", S_INERT, NULL, R_ADMIN},
	{"vacuum_truncate", S_INERT, NULL, R_ADMIN},
	{"wal_compression", S_INERT, NULL, R_ADMIN},
	{"wal_consistency_checking", S_INERT, NULL, R_ADMIN},
	{"wal_init_zero", S_INERT, NULL, R_ADMIN},
	{"wal_recycle", S_INERT, NULL, R_ADMIN},
	{"wal_skip_threshold", S_INERT, NULL, R_ADMIN},
	{"allow_in_place_tablespaces", S_INERT, NULL, R_ADMIN},
	{"allow_system_table_mods", S_INERT, NULL, R_ADMIN},
	{"lo_compat_privileges", S_INERT, NULL, R_ADMIN},
	{"ignore_checksum_failure", S_INERT, NULL, "damaged pages only"},
	{"zero_damaged_pages", S_INERT, NULL, "damaged pages only"},
	{"jit_dump_bitcode", S_INERT, NULL, R_ADMIN},
	{"dynamic_library_path", S_INERT, NULL, "where modules are found; a loaded module's settings are classified here, or refused"},
	{"extension_destdir", S_INERT, NULL, R_ADMIN},
	{"extension_control_path", S_INERT, NULL, R_ADMIN},
	{"file_copy_method", S_INERT, NULL, R_ADMIN},
	{"output_plugin_libraries", S_INERT, NULL, R_ADMIN},
	{"local_preload_libraries", S_INERT, NULL, "loads modules at connection; a loaded module's settings are classified here, or refused"},
	{"session_preload_libraries", S_INERT, NULL, "loads modules at connection; a loaded module's settings are classified here, or refused"},
	{"debug_logical_replication_streaming", S_INERT, NULL, R_ADMIN},
	{"trace_lock_oidmin", S_INERT, NULL, R_DEBUG_BUILD},
	{"trace_lock_table", S_INERT, NULL, R_DEBUG_BUILD},
	{"plpgsql.check_asserts", S_INERT, NULL, R_PLPGSQL},
	{"plpgsql.extra_errors", S_INERT, NULL, R_PLPGSQL},
	{"plpgsql.extra_warnings", S_INERT, NULL, R_PLPGSQL},
	{"plpgsql.print_strict_params", S_INERT, NULL, R_PLPGSQL},
	{"plpgsql.variable_conflict", S_INERT, NULL, R_PLPGSQL},
	{"pg_trgm.similarity_threshold", S_FORMAT, NULL, R_FORMAT},
	{"pg_trgm.word_similarity_threshold", S_FORMAT, NULL, R_FORMAT},
	{"pg_trgm.strict_word_similarity_threshold", S_FORMAT, NULL, R_FORMAT},
	{"postgres_fdw.application_name", S_INERT, NULL, R_SESSION},
	{"dp_agg.epsilon", S_INERT, NULL, R_DP},
	{"dp_agg.delta", S_INERT, NULL, R_DP},
	{"dp_agg.selection_epsilon", S_INERT, NULL, R_DP},
	{"dp_agg.selection_delta", S_INERT, NULL, R_DP},
	{"dp_agg.group_keys", S_INERT, NULL, "'public' is refused over protected relations (rule 3)"},
	{"dp_agg.max_rows_contributed", S_INERT, NULL, R_DP},
	{"dp_agg.max_rows_contributed_limit", S_INERT, NULL, R_DP},
	{"dp_agg.max_groups_contributed", S_INERT, NULL, R_DP},
	{"dp_agg.protected_min_epsilon", S_INERT, NULL, R_DP},
	{"dp_agg.protected_max_row_work", S_INERT, NULL, R_DP},
	{"dp_agg.unit_pick_key", S_INERT, NULL, R_DP},
	{"dp_agg.unit_sample_key", S_INERT, NULL, R_DP},
	{"dp_agg.selection_share", S_INERT, NULL, R_DP},
	{"dp_agg.max_public_keys", S_INERT, NULL, R_DP},
	{"dp_agg.composition_nice", S_INERT, NULL, R_DP},
	{"dp_agg.prepay", S_INERT, NULL, R_DP},
	{"dp_agg.prepay_time", S_INERT, NULL, R_DP},
	{"dp_agg.lease_time", S_INERT, NULL, R_DP},
	{"dp_agg.stats_trusted_role", S_INERT, NULL, R_DP},
};

static const Setting *
find_setting(const char *name)
{
	for (size_t i = 0; i < lengthof(settings); i++)
		if (pg_strcasecmp(settings[i].name, name) == 0)
			return &settings[i];
	return NULL;
}

/* Is the setting's current value one of its quiet values? */
static bool
is_quiet(const Setting *s)
{
	const char *value = GetConfigOption(s->name, true, false);
	const char *p = s->quiet;
	size_t		len;

	if (value == NULL)
		return true;			/* not in this build */
	len = strlen(value);
	while (*p != '\0')
	{
		const char *end = strchr(p, ',');
		size_t		n = end == NULL ? strlen(p) : (size_t) (end - p);

		if (n == len && pg_strncasecmp(p, value, n) == 0)
			return true;
		if (end == NULL)
			break;
		p = end + 1;
	}
	return false;
}

/* Can the plan write temporary files (sorts, hashes, materialization)? */
static bool
may_spill(Plan *plan)
{
	if (plan == NULL)
		return false;
	switch (nodeTag(plan))
	{
		case T_Sort:
		case T_IncrementalSort:
		case T_Material:
		case T_Hash:
		case T_CteScan:
		case T_WindowAgg:
		case T_SetOp:
		case T_RecursiveUnion:
			return true;
		case T_Agg:
			if (((Agg *) plan)->aggstrategy != AGG_PLAIN)
				return true;
			break;
		default:
			break;
	}
	return may_spill(plan->lefttree) || may_spill(plan->righttree) ||
		(IsA(plan, SubqueryScan) && may_spill(((SubqueryScan *) plan)->subplan));
}

static bool
stmt_may_spill(PlannedStmt *stmt)
{
	ListCell   *lc;

	if (may_spill(stmt->planTree))
		return true;
	foreach(lc, stmt->subplans)
		if (may_spill(lfirst(lc)))
			return true;
	return false;
}

static void
refuse_setting(const char *name, const char *reason, Oid relid)
{
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("setting %s is not allowed in statements over protected relation \"%s\"",
					name, get_rel_name(relid)),
			 errdetail("The setting %s.", reason),
			 errhint("RESET %s (a superuser, if it was set for the role or the database), then run the statement again.",
					 name)));
}

/*
 * The settings of loaded modules (named module.setting) that are not
 * classified, changed from their default by the session, the role or the
 * database (not by the server's configuration): a module may read them
 * while the statement runs.  PostgreSQL's own are all classified (the
 * regression test protect_settings checks it).
 */
static void
check_unclassified(Oid relid)
{
	int			n;
	struct config_generic **vars = DP_GUC_VARIABLES(n);

	for (int i = 0; i < n; i++)
	{
		struct config_generic *v = vars[i];

		if (v->source < PGC_S_DATABASE || (v->flags & GUC_CUSTOM_PLACEHOLDER) ||
			strchr(v->name, '.') == NULL ||
			(v->context != PGC_USERSET && v->context != PGC_SUSET) ||
			find_setting(v->name) != NULL)
			continue;
		refuse_setting(v->name,
					   "belongs to a module, and dp_agg does not know whether it makes the server report on the execution",
					   relid);
	}
}

/*
 * Before an untrusted role's statement over protected relation relid runs
 * (executor start, and each ExecutorRun of a cursor): refuse it if a
 * setting of class "refused" is not quiet, or a loaded module's setting is
 * changed and not classified.
 */
void
dp_settings_check(PlannedStmt *stmt, Oid relid)
{
	for (size_t i = 0; i < lengthof(settings); i++)
	{
		const Setting *s = &settings[i];

		if (s->class != S_REFUSED || is_quiet(s))
			continue;
		if (strcmp(s->name, "temp_file_limit") == 0 && !stmt_may_spill(stmt))
			continue;
		if (strcmp(s->name, "auto_explain.log_analyze") == 0)
		{
			const char *d = GetConfigOption("auto_explain.log_min_duration", true, false);

			if (d == NULL || strcmp(d, "-1") == 0)
				continue;
		}
		refuse_setting(s->name, s->reason, relid);
	}
	check_unclassified(relid);
}

/*
 * While the executor runs an untrusted role's statement over a protected
 * relation: the settings of class "forced" at their quiet values, in a new
 * GUC nest level, as a function's SET clause does.  Returns the level for
 * dp_settings_restore, or -1 if nothing had to change.
 */
int
dp_settings_force(void)
{
	int			nest = -1;

	for (size_t i = 0; i < lengthof(settings); i++)
	{
		const Setting *s = &settings[i];
		char	   *value;

		if (s->class != S_FORCED || is_quiet(s))
			continue;
		if (nest < 0)
			nest = NewGUCNestLevel();
		value = pnstrdup(s->quiet, strcspn(s->quiet, ","));
		(void) set_config_option(s->name, value, PGC_SUSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	}
	return nest;
}

/* After the executor's call: the values before dp_settings_force. */
void
dp_settings_restore(int nest_level)
{
	if (nest_level >= 0)
		AtEOXact_GUC(true, nest_level);
}

/* ---------- the end of a transaction ---------- */

/* has a statement of an untrusted role over a protected relation started? */
static bool untrusted_in_xact = false;

/*
 * The abort of a (sub)transaction in which such a statement ran: its
 * portals are dropped without the executor's end, and their resources
 * (the temporary files of a sort, whose closing log_temp_files reports)
 * are released after dp_agg's hooks returned.  The settings of class
 * "forced" are set to their quiet values for the rest of the abort, as SET
 * LOCAL would (GUC_ACTION_LOCAL): the abort itself restores them, after
 * the release.
 */
static void
force_for_abort(void)
{
	for (size_t i = 0; i < lengthof(settings); i++)
	{
		const Setting *s = &settings[i];
		char	   *value;

		if (s->class != S_FORCED || is_quiet(s))
			continue;
		value = pnstrdup(s->quiet, strcspn(s->quiet, ","));
		(void) set_config_option(s->name, value, PGC_SUSET, PGC_S_SESSION,
								 GUC_ACTION_LOCAL, true, WARNING, false);
	}
}

static void
xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT && untrusted_in_xact)
		force_for_abort();
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_COMMIT ||
		event == XACT_EVENT_PREPARE)
		untrusted_in_xact = false;
}

static void
subxact_callback(SubXactEvent event, SubTransactionId mySubid,
				 SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB && untrusted_in_xact)
		force_for_abort();
}

/*
 * A statement of an untrusted role over a protected relation starts in this
 * transaction (hooks.c, at executor start): its abort will be quiet too.
 */
void
dp_settings_note_untrusted(void)
{
	static bool registered = false;

	if (!registered)
	{
		RegisterXactCallback(xact_callback, NULL);
		RegisterSubXactCallback(subxact_callback, NULL);
		registered = true;
	}
	untrusted_in_xact = true;
}

/*
 * dp_agg.setting_classes() returns table (name text, class text, quiet
 * text, reason text): the classification above, for doc/guard.md and the
 * regression test that checks every setting of the running version is in
 * it.
 */
Datum
dp_setting_classes(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	for (size_t i = 0; i < lengthof(settings); i++)
	{
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};

		values[0] = CStringGetTextDatum(settings[i].name);
		values[1] = CStringGetTextDatum(class_names[settings[i].class]);
		if (settings[i].quiet != NULL)
			values[2] = CStringGetTextDatum(settings[i].quiet);
		else
			nulls[2] = true;
		values[3] = CStringGetTextDatum(settings[i].reason);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
