/*-------------------------------------------------------------------------
 *
 * guard_messages.h
 *	  The refusals of the guard, shared by its query and plan checks.
 *
 * The guard refuses a construct at planning (guard.c) and again on the
 * plan (plan_guard.c, plan_input.c, plan_units.c), with the same message
 * in both places.  The plan_reject forms refuse only when the walk
 * validates the plan (w->validate): a walk that only finds the DP calls
 * of a plan raises nothing.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_GUARD_MESSAGES_H
#define DP_AGG_GUARD_MESSAGES_H

/*
 * ERROR with a complete message.  Macros, so that every message is one
 * literal format string where it is raised (translatable, and checked by
 * test/check-messages.py); reject_fmt takes a format and its arguments.
 */
#define GUARD_HINT "See \"What the guard accepts\" in dp_agg's doc/guard.md."
#define reject_msg(message, detail) \
	ereport(ERROR, \
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED), \
			 errmsg(message), \
			 errdetail(detail), \
			 errhint(GUARD_HINT)))
#define reject_fmt(detail, ...) \
	ereport(ERROR, \
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED), \
			 errmsg(__VA_ARGS__), \
			 errdetail(detail), \
			 errhint(GUARD_HINT)))

/* ERROR naming a construct ("joins are") */
#define reject(construct, detail) \
	reject_msg(construct " not allowed in a statement with DP aggregates", detail)

/* ERROR naming a row source where a DP aggregate reads or around a DP sub-query */
#define reject_source(dp_here, things, detail) \
	do { \
		if (dp_here) \
			reject_msg(things " in the FROM of a DP aggregate are not allowed", detail); \
		else \
			reject_msg(things " around a DP sub-query are not allowed", detail); \
	} while (0)

#define DETAIL_TWICE "A row could feed a DP aggregate more than once, or a DP aggregate be evaluated more often than it was charged."
#define DETAIL_DATA "The result of a DP aggregate would depend on other rows than its own, so its noise would not hide a row."

#define plan_reject(w, construct, detail) \
	do { \
		if ((w)->validate) \
			reject(construct, detail); \
	} while (0)

#define plan_reject_msg(w, message, detail) \
	do { \
		if ((w)->validate) \
			reject_msg(message, detail); \
	} while (0)

#define plan_reject_fmt(w, detail, ...) \
	do { \
		if ((w)->validate) \
			reject_fmt(detail, __VA_ARGS__); \
	} while (0)

/*
 * The internal functions of privacy units, made only by their rewrite.
 * A macro, as the messages above.
 */
#define reject_internal() \
	reject_msg("internal functions of dp_agg are not allowed in statements", \
			   "dp_agg_internal.unit_bound_*, dp_agg_internal.unit_release_*, dp_agg_internal.unit_keep, dp_agg_internal.unit_pick*, dp_agg_internal.unit_priority and dp_agg_internal.unit_sampled are made by the rewrite of privacy units only, dp_agg_internal.dp_public by the rewrite of public domains, dp_agg_internal.dp_top_k and dp_agg_internal.top_k_rank by that of top-k.")

/* dp_agg.unit_sampled out of its place (plan_units.c, plan_guard.c) */
#define reject_sample_filter() \
	ereport(ERROR, \
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED), \
			 errmsg("dp_agg_internal.unit_sampled is allowed only as the filter of the sample of a privacy unit rewrite"), \
			 errdetail("It decides which privacy units the sample of one statement keeps: anywhere else it would show them."), \
			 errhint("Write TABLESAMPLE dp_agg.secure_bernoulli (p) on the relation with the privacy unit.")))

#endif							/* DP_AGG_GUARD_MESSAGES_H */
