/*-------------------------------------------------------------------------
 *
 * protect_check.c
 *	  Enforcing the protection of relations for untrusted roles.
 *
 * doc/guard.md, "Protected tables".  A role untrusted for a protected relation
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
 * another role or execution.  A parallel worker accepts the part of the
 * plan its leader accepted, as its leader made the check.  The executor's
 * permission hook (dp_protect_check_rtable), which every permission check
 * of a range table calls, also COPY's, rejects any range table naming a
 * protected relation for an untrusted role unless it is the accepted one.
 *
 * An accepted statement's releases must each cost at least
 * dp_agg.protected_min_epsilon (dp_protect_check_epsilon, called when the
 * statement is priced); its expressions on rows are checked by row_seal.c
 * (the work bound of rule 6 among them), and here for the inner statement
 * of a DP statement on a Citus table (dp_protect_start_inner: the nodes
 * and the bytes of its expressions, but for the key sets of public
 * domains, whose lookup takes the same time whatever their size).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/parallel.h"
#include "catalog/pg_inherits.h"
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
#include "guc.h"
#include "params.h"
#include "plan_guard.h"
#include "plan_nodes.h"
#include "protect.h"
#include "protect_check.h"
#include "release.h"

/*
 * the range table of the statement being started, if it was accepted, or
 * if it names no protected relation the current user is untrusted for (the
 * permission hook, called within the executor's start, need not look again)
 */
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
collect_scans(PlannedStmt *stmt, Plan *plan, Bitmapset **scanned)
{
	ListCell   *lc;

	/*
	 * a lookup table joined to the input (lookup_join.c) is not its input:
	 * a protected one is refused
	 */
	if (dp_plan_reads_relation(plan) &&
		!DP_RTE_IS_LOOKUP(rt_fetch(((Scan *) plan)->scanrelid, stmt->rtable)))
		*scanned = bms_add_member(*scanned, ((Scan *) plan)->scanrelid);
	foreach(lc, dp_plan_children(plan))
		collect_scans(stmt, lfirst(lc), scanned);
}

/*
 * An aggregate other than a DP aggregate, or than dp_agg_internal.unit_pick, the
 * keys the fused level 1 of privacy units picks beside them.  Statements
 * that name dp_agg_internal.unit_pick are refused at planning (guard.c, and
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
 * if there is none.  The guard (plan_guard.c) checks later, and rejects, a plan
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
			collect_scans(stmt, c->agg->plan.lefttree, &dp_inputs);
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

/*
 * The protected relation, untrusted for the current user, that an INSERT
 * writes, or may route rows into (a partition of its target); InvalidOid
 * if there is none.  INSERT ... SELECT of a DP statement writes its
 * releases, charged as the statement is, into a table the role may write;
 * its reads are checked as a SELECT's.
 */
static Oid
insert_target_protected(PlannedStmt *stmt)
{
	ListCell   *lc;

	foreach(lc, stmt->resultRelations)
	{
		RangeTblEntry *rte = rt_fetch(lfirst_int(lc), stmt->rtable);
		ListCell   *rc;

		foreach(rc, find_all_inheritors(rte->relid, NoLock, NULL))
		{
			if (dp_relation_protected(lfirst_oid(rc)) &&
				!dp_role_trusted(lfirst_oid(rc), GetUserId()))
				return lfirst_oid(rc);
		}
	}
	return InvalidOid;
}

/*
 * A protected relation, untrusted for the current user, below a relation
 * that the statement writes (INSERT, COPY FROM, UPDATE, DELETE and MERGE
 * lock their target with RowExclusiveLock): tuple routing writes rows into
 * a protected partition of an unprotected parent, and its unique violation
 * would tell whether a key exists there.  InvalidOid if there is none; the
 * common case (no children) costs one lookup of the per-session cache.
 */
static Oid
untrusted_protected_below_target(RangeTblEntry *rte)
{
	ListCell   *lc;

	if (rte->rtekind != RTE_RELATION || rte->rellockmode < RowExclusiveLock ||
		!dp_relation_has_children(rte->relid))
		return InvalidOid;
	foreach(lc, find_all_inheritors(rte->relid, NoLock, NULL))
	{
		Oid			child = lfirst_oid(lc);

		if (dp_relation_protected(child) && !dp_role_trusted(child, GetUserId()))
			return child;
	}
	return InvalidOid;
}

/*
 * The first protected relation of the range table the user is untrusted
 * for, or that a written relation may route rows into.
 */
static Oid
first_untrusted(List *rtable, bool *routed)
{
	ListCell   *lc;

	*routed = false;
	foreach(lc, rtable)
	{
		RangeTblEntry *rte = lfirst(lc);
		Oid			below;

		if (untrusted_protected(rte))
			return rte->relid;
		if (OidIsValid(below = untrusted_protected_below_target(rte)))
		{
			*routed = true;
			return below;
		}
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
	bool		routed;

	if (!dp_any_protected() || stmt->commandType == CMD_UTILITY)
		return InvalidOid;
	return first_untrusted(stmt->rtable, &routed);
}

/*
 * Check as their owner the protected relations of an accepted statement
 * that the current user reads as itself (directly, or through a view it
 * owns) and was granted access to.
 */
static void
check_granted_as_owner(PlannedStmt *stmt, DpProtectStart *st)
{
	ListCell   *lc;

	foreach(lc, stmt->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);
		Oid		   *check_as = DP_RTE_CHECK_AS_USER(stmt, rte);

		if (check_as == NULL || (OidIsValid(*check_as) && *check_as != GetUserId()) ||
			!untrusted_protected(rte) || !dp_role_granted(rte->relid, GetUserId()))
			continue;
		st->check_as = lappend(st->check_as, check_as);
		st->check_as_saved = lappend_oid(st->check_as_saved, *check_as);
		*check_as = dp_relation_owner(rte->relid);
	}
}

/* The size of the expressions of a statement (see report_row_work). */
typedef struct RowWork
{
	int64		size;
	ParamListInfo params;
} RowWork;

/* a variable-length value's size in bytes, as evaluated (detoasted) */
static int64
value_size(int16 typlen, Datum value, bool isnull)
{
	if (isnull || typlen != -1)
		return 0;
	return (int64) toast_raw_datum_size(value);
}

static bool
row_work_walker(Node *node, RowWork *w)
{
	if (node == NULL)
		return false;
	w->size++;
	/*
	 * The key set of a public domain (public_domain.c) is looked up in a
	 * hash table built before any row is read (keyset.c): its size adds
	 * nothing to a row's work, whatever the number of keys
	 */
	if (IsA(node, FuncExpr) && ((FuncExpr *) node)->location == DP_DOMAIN_LOCATION &&
		(((FuncExpr *) node)->funcid == dp_domain_index_oid() ||
		 ((FuncExpr *) node)->funcid == dp_domain_key_oid()) &&
		((FuncExpr *) node)->args != NIL && IsA(linitial(((FuncExpr *) node)->args), Const))
		return expression_tree_walker((Node *) list_delete_first(list_copy(((FuncExpr *) node)->args)),
									  row_work_walker, w);
	if (IsA(node, Const))
		w->size += value_size(((Const *) node)->constlen, ((Const *) node)->constvalue,
							  ((Const *) node)->constisnull);
	else if (IsA(node, Param) && ((Param *) node)->paramkind == PARAM_EXTERN &&
			 w->params != NULL)
	{
		Param	   *p = (Param *) node;
		ParamExternData workspace;
		ParamExternData *prm = NULL;

		prm = dp_param_extern(w->params, p->paramid, &workspace);
		if (prm != NULL && OidIsValid(prm->ptype))
			w->size += value_size(get_typlen(prm->ptype), prm->value, prm->isnull);
	}
	return expression_tree_walker(node, row_work_walker, w);
}

/*
 * Bound the work a statement may do for one row.  An expression evaluated
 * only for some rows (under CASE WHEN, after AND) that is large, or takes
 * a large constant or parameter (md5 of a 100 MB text, a comparison with
 * every element of a large array), makes the statement's duration tell
 * whether such rows exist: one measurement, where the work of a small
 * expression is far below the noise of the timing.  The expressions of the
 * whole plan are counted once per statement, never per row: their nodes,
 * plus the bytes of their variable-length constants and parameters.
 */
static void
report_row_work(RowWork *w, Oid relid)
{
	if (w->size > dp_guc_protected_max_row_work)
		ereport(ERROR,
				(errcode(ERRCODE_STATEMENT_TOO_COMPLEX),
				 errmsg("expressions on the rows of protected relation \"%s\" are too large",
						get_rel_name(relid)),
				 errdetail("They count %lld expression nodes and bytes of constants and parameters; dp_agg.protected_max_row_work allows %d.",
						   (long long) w->size, dp_guc_protected_max_row_work),
				 errhint("Evaluated only for some rows, a large expression would make the statement's duration tell whether they exist: use smaller expressions and constants.")));
}

/* the refusals of instrumented plans (EXPLAIN, EXPLAIN ANALYZE) */
static void
check_not_explained(Oid relid, int eflags, int instrument_options)
{
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		dp_reject_protected(relid, "EXPLAIN shows estimates drawn from its rows.");
	if (instrument_options & (INSTRUMENT_TIMER | INSTRUMENT_ROWS))
		dp_reject_protected(relid, "EXPLAIN ANALYZE, and auto_explain with log_analyze, show the numbers of rows read.");
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
	bool		routed;
	Oid			outside;

	st->check_as = NIL;
	st->check_as_saved = NIL;
	st->prev_accepted = accepted_rtable;
	st->untrusted = false;
	st->relid = InvalidOid;
	accepted_rtable = NIL;
	if (!dp_any_protected() || !OidIsValid(relid = first_untrusted(stmt->rtable, &routed)))
	{
		accepted_rtable = stmt->rtable;
		return;
	}
	if (dp_guc_citus_worker)
		dp_reject_protected(relid, DP_PROTECTED_ON_WORKER);
	check_not_explained(relid, eflags, instrument_options);

	/*
	 * A parallel worker runs a part of a plan its leader accepted here (a
	 * leader starts workers only for the plan it started, after this
	 * check): the part may be a scan alone (below a Gather that an
	 * aggregation with DISTINCT reads), which taken apart feeds no DP
	 * aggregate.  Its permission check is the leader's, as the leader made
	 * it.
	 */
	if (IsParallelWorker())
	{
		check_granted_as_owner(stmt, st);
		accepted_rtable = stmt->rtable;
		st->untrusted = true;
		return;
	}
	if (stmt->commandType == CMD_INSERT && OidIsValid(insert_target_protected(stmt)))
		dp_reject_protected(insert_target_protected(stmt),
							"Only queries that compute DP aggregates over it may read it; this statement changes data.");
	if (stmt->commandType != CMD_SELECT && stmt->commandType != CMD_INSERT)
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
 * The inner statement of a DP statement on a Citus table (dist_access.c),
 * which reads protected relation relid for a role not trusted for it: the
 * plan the role runs scans no protected relation (dist_run runs the inner
 * statement through Citus), so the rules of the plan are checked on the
 * inner statement instead: no EXPLAIN, and the bound on the work per row,
 * counted on its expressions (those of the fragments the workers run).
 */
void
dp_protect_start_inner(Query *inner, Oid relid, ParamListInfo params, int eflags,
					   int instrument_options)
{
	RowWork		w = {0, params};

	check_not_explained(relid, eflags, instrument_options);
	(void) query_tree_walker(inner, row_work_walker, &w, 0);
	report_row_work(&w, relid);
}

/*
 * The releases of a statement accepted for an untrusted role, when it is
 * priced: each must cost at least dp_agg.protected_min_epsilon (doc/guard.md,
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

		/* the groups of a public domain release nothing that depends on the rows */
		if (r->call.kind == DP_PUBLIC)
			continue;
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
	bool		routed;

	if (rtable == accepted_rtable || !dp_any_protected() ||
		!OidIsValid(relid = first_untrusted(rtable, &routed)))
		return true;
	if (ereport_on_violation && routed)
		dp_reject_protected(relid, "Only queries that compute DP aggregates over it may read it; this statement changes data.");
	if (ereport_on_violation)
	{
		if (dp_guc_citus_worker)
			dp_reject_protected(relid, DP_PROTECTED_ON_WORKER);
		dp_reject_protected(relid, "Only queries that compute DP aggregates over it may read it.");
	}
	return false;
}
