/*-------------------------------------------------------------------------
 *
 * protect_check.c
 *	  Enforcing the protection of relations for untrusted roles.
 *
 * README, "Protected tables".  A role untrusted for a protected relation
 * (protect.c) reads it only through a statement that computes DP
 * aggregates over it: every scan of the relation in the plan feeds a DP
 * aggregate.  Any other statement that names it fails before it starts,
 * whether it reads the relation directly, through a view, a function's
 * query, a cursor, COPY or CREATE TABLE AS, and whatever privileges the
 * role holds.
 *
 * Two places enforce it.  At executor start (dp_protect_start, before the
 * executor's permission check) the plan is examined: it must compute DP
 * aggregates and read each protected relation only as their input.  If so,
 * its range table is accepted for the duration of the executor's start, and
 * the relations the role was granted access to (dp_agg.grant_access) are
 * checked as their owner, the way PostgreSQL checks a view's relations as
 * the view's owner (checkAsUser); both are undone right after
 * (dp_protect_end), so a cached plan never carries an owner's rights to
 * another role or execution.  The executor's permission hook
 * (dp_protect_check_rtable), which every permission check of a range table
 * calls, also COPY's, rejects any range table naming a protected relation
 * for an untrusted role unless it is the accepted one.
 *
 * An accepted statement's releases must each cost at least
 * dp_agg.protected_min_epsilon (dp_protect_check_epsilon, called when the
 * statement is priced); its expressions on rows are checked by row_seal.c
 * (the work bound of rule 6 among them).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "nodes/nodeFuncs.h"
#include "nodes/bitmapset.h"
#include "parser/parsetree.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"

#include "catalog.h"
#include "compat.h"
#include "guard.h"
#include "guc.h"
#include "protect.h"
#include "protect_check.h"
#include "release.h"

/* the range table of the statement being started, if it was accepted */
static List *accepted_rtable = NIL;

/* Is rte a protected relation the current user is not trusted for? */
static bool
untrusted_protected(RangeTblEntry *rte)
{
	return rte->rtekind == RTE_RELATION &&
		dp_relation_protected(rte->relid) &&
		!dp_role_trusted(rte->relid, GetUserId());
}

/*
 * Add to *scanned the range table indexes of the relations that the plan
 * reads with the executor's own table scans.  Other ways to read a
 * relation (foreign and custom scans) are not counted: a protected
 * relation read so is rejected.
 */
static void
collect_scans(Plan *plan, Bitmapset **scanned)
{
	ListCell   *lc;

	if (dp_plan_reads_relation(plan))
		*scanned = bms_add_member(*scanned, ((Scan *) plan)->scanrelid);
	foreach(lc, dp_plan_children(plan))
		collect_scans(lfirst(lc), scanned);
}

/*
 * An aggregate other than a DP aggregate, or than dp_agg.unit_pick, the
 * keys the fused level 1 of privacy units picks beside them.  Statements
 * that name dp_agg.unit_pick are refused at planning (guard.c, and
 * protect_guard.c for any aggregate but DP ones), so only the rewrite puts
 * it in a plan (privacy_unit.c), and the plan guard accepts it only there.
 * Its parse location, which marks it as the rewrite's in the leader, is not
 * copied into the plans of parallel workers, where this check runs too.
 */
static bool
other_aggref_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref) && dp_lookup_call(((Aggref *) node)->aggfnoid) == NULL)
		return ((Aggref *) node)->aggfnoid != dp_unit_pick_oid();
	return expression_tree_walker(node, other_aggref_walker, context);
}

/*
 * Does the aggregation node compute DP aggregates only?  The guard at
 * planning refuses other aggregates next to DP ones (protect_guard.c);
 * checked again on the plan, in case a protected relation reached it
 * unseen (as partitions and inheritance children once did, added by the
 * planner after the check).
 */
static bool
agg_only_dp(Agg *agg)
{
	return !other_aggref_walker((Node *) agg->plan.targetlist, NULL) &&
		!other_aggref_walker((Node *) agg->plan.qual, NULL);
}

/*
 * The first protected relation the current user is not trusted for that
 * the plan does not read only as the input of its DP aggregates; InvalidOid
 * if there is none.  The guard (guard.c) checks later, and rejects, a plan
 * whose DP aggregates read more than one table or a row more than once.
 */
static Oid
read_outside_dp(PlannedStmt *stmt, List *calls)
{
	Bitmapset  *dp_inputs = NULL;
	ListCell   *lc;
	Index		rti = 0;

	foreach(lc, calls)
	{
		DpPlanCall *c = lfirst(lc);

		if (c->agg != NULL && c->agg->plan.lefttree != NULL && agg_only_dp(c->agg))
			collect_scans(c->agg->plan.lefttree, &dp_inputs);
	}
	foreach(lc, stmt->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		rti++;
		/* an inheritance parent is read through its children's entries */
		if (rte->inh)
			continue;
		if (untrusted_protected(rte) && !bms_is_member(rti, dp_inputs))
			return rte->relid;
	}
	return InvalidOid;
}

/* The first protected relation of the range table the user is untrusted for. */
static Oid
first_untrusted(List *rtable)
{
	ListCell   *lc;

	foreach(lc, rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		if (untrusted_protected(rte))
			return rte->relid;
	}
	return InvalidOid;
}

/*
 * A protected relation of the plan that the current user is untrusted for
 * (InvalidOid if none): its statement runs under the rules of protected
 * relations (hooks.c, protect_settings.c).
 */
Oid
dp_protect_untrusted(PlannedStmt *stmt)
{
	if (!dp_any_protected() || stmt->commandType == CMD_UTILITY)
		return InvalidOid;
	return first_untrusted(stmt->rtable);
}

/*
 * Check as their owner the protected relations of an accepted statement
 * that the current user reads as itself and was granted access to.
 */
static void
check_granted_as_owner(PlannedStmt *stmt, DpProtectStart *st)
{
	ListCell   *lc;

	foreach(lc, stmt->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);
		Oid		   *check_as = DP_RTE_CHECK_AS_USER(stmt, rte);

		if (check_as == NULL || OidIsValid(*check_as) ||
			!untrusted_protected(rte) || !dp_role_granted(rte->relid, GetUserId()))
			continue;
		st->check_as = lappend(st->check_as, check_as);
		st->check_as_saved = lappend_oid(st->check_as_saved, *check_as);
		*check_as = dp_relation_owner(rte->relid);
	}
}

/*
 * Before the executor starts a plan (and checks its permissions): reject
 * it if it reads a protected relation the current user is not trusted for
 * otherwise than as the input of DP aggregates, or is explained (EXPLAIN,
 * EXPLAIN ANALYZE: row counts per plan node, counted with timing or alone
 * as instrument_options requests); else
 * accept it (see the file's comment).  dp_protect_end must
 * follow, also on error.
 */
void
dp_protect_start(PlannedStmt *stmt, ParamListInfo params, int eflags,
				 int instrument_options, DpProtectStart *st)
{
	Oid			relid;
	Oid			outside;

	st->check_as = NIL;
	st->check_as_saved = NIL;
	st->prev_accepted = accepted_rtable;
	st->untrusted = false;
	st->relid = InvalidOid;
	accepted_rtable = NIL;
	if (!dp_any_protected() || !OidIsValid(relid = first_untrusted(stmt->rtable)))
		return;
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		dp_reject_protected(relid, "EXPLAIN shows estimates drawn from its rows.");
	if (instrument_options & (INSTRUMENT_TIMER | INSTRUMENT_ROWS))
		dp_reject_protected(relid, "EXPLAIN ANALYZE, and auto_explain with log_analyze, show the numbers of rows read.");
	if (stmt->commandType != CMD_SELECT)
		dp_reject_protected(relid, "Only queries that compute DP aggregates over it may read it; this statement changes data.");
	outside = read_outside_dp(stmt, dp_guard_plan(stmt, false));
	if (OidIsValid(outside))
		dp_reject_protected(outside, "Only queries that compute DP aggregates over it may read it, and only as their input.");
	check_granted_as_owner(stmt, st);
	accepted_rtable = stmt->rtable;
	st->untrusted = true;
	st->relid = relid;
}

/*
 * The releases of a statement accepted for an untrusted role, when it is
 * priced: each must cost at least dp_agg.protected_min_epsilon (README,
 * "Protected tables").  A release whose error or duration depended on a
 * row would answer a question about it whatever its epsilon; the floor
 * bounds how many such questions a budget can pay for.
 */
void
dp_protect_check_epsilon(List *releases)
{
	ListCell   *lc;

	foreach(lc, releases)
	{
		DpRelease  *r = lfirst(lc);

		if (r->epsilon < dp_guc_protected_min_epsilon)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("epsilon %g of %s is below dp_agg.protected_min_epsilon", r->epsilon,
							dp_kind_name(r->call.kind)),
					 errdetail("Over a protected relation, each DP aggregate of a role not trusted for it costs at least %g.",
							   dp_guc_protected_min_epsilon),
					 errhint("Ask for a larger epsilon.")));
	}
}

/* After the executor's start, or its error: undo dp_protect_start. */
void
dp_protect_end(DpProtectStart *st)
{
	ListCell   *p;
	ListCell   *v;

	forboth(p, st->check_as, v, st->check_as_saved)
		*(Oid *) lfirst(p) = lfirst_oid(v);
	accepted_rtable = st->prev_accepted;
}

/*
 * The executor's permission hook, after PostgreSQL's own checks passed:
 * a range table naming a protected relation the current user is not
 * trusted for passes only if dp_protect_start accepted it.
 */
bool
dp_protect_check_rtable(List *rtable, bool ereport_on_violation)
{
	Oid			relid;

	if (rtable == accepted_rtable || !dp_any_protected() ||
		!OidIsValid(relid = first_untrusted(rtable)))
		return true;
	if (ereport_on_violation)
		dp_reject_protected(relid, "Only queries that compute DP aggregates over it may read it.");
	return false;
}
