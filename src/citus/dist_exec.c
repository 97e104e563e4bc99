/*-------------------------------------------------------------------------
 *
 * dist_exec.c
 *	  DP statements on Citus tables: price, distributed run, fragments.
 *
 * On the coordinator (dist_plan.c made the outer statement):
 *
 * - dp_dist_protect_start, at executor start before anything else, checks
 *   that the current user may read the Citus table (a grant or SELECT),
 *   and, on a protected table it is not trusted for, the rules of
 *   protect_check.c on the inner statement (doc/citus.md, "Protected Citus
 *   tables").
 * - dp_dist_price, at executor start, finds the dist_run scan of the plan,
 *   checks the inner statement it carries (the guard's query check, one
 *   Citus table, group keys and DP calls only) and that no partial state
 *   can leave the plan except into dist_release, and makes a ticket for
 *   every DP call of the inner statement, priced like any other (so the one
 *   durable charge, before any fragment is sent, covers them, and the
 *   ledger records the user's statement).
 * - dist_run, when the scan starts, draws the statement's random nonce,
 *   replaces each DP call of the inner statement by the partial aggregate
 *   dp_agg.sum with its signed specification (dist_token.c), which holds
 *   the fingerprint of the fragment (dist_fingerprint.c), and runs it
 *   through Citus, once: as the table's owner on a protected table the
 *   current user is not trusted for (inner_run_as).  With a privacy unit,
 *   it bounds each unit's contribution from the exact states of its groups
 *   (bound_units).  It gives each group's states a serial number.
 *   With private group keys it decides each group once, from the exact
 *   count of its rows combined over the workers (the rows of a call
 *   without FILTER, or the partial state of the selection call dp_select,
 *   accumulated as dp_count(*)'s), or of its units, with the
 *   mechanism of a local statement (selection_mechanism.c: the optimal one
 *   of Desfontaines, Voss, Gipson & Mandayam 2022, Theorem 1, for k = 1),
 *   and returns the selected groups only, without that count: a group it
 *   suppresses releases nothing.  With a public domain (its key set the
 *   second argument of dist_run), it returns one row per key of the
 *   domain instead: each group of the domain with the domain's own keys,
 *   and a row of empty states for each key that no worker returned.
 * - dp_dist_slot finds, for dist_release, the ticket of a state (by its
 *   nonce: a state of another statement has none) and the slot where its
 *   release is kept, so a group's release is drawn once however often the
 *   outer plan evaluates it.
 *
 * On a worker (any node that receives a fragment):
 *
 * - dp_dist_check_fragment_query, at planning, recomputes the fingerprint
 *   of a query with partial sums (dist_fingerprint.c) and refuses it if it
 *   differs from the one its signatures cover, and
 *   dp_dist_check_fragment_plan checks that the plan has no other partial
 *   sums (from an inlined SQL function).
 * - dp_dist_fragment_releases, at executor start, finds the partial
 *   aggregates dp_agg.sum(spec [, value]) of the plan, checks each signature, its expiry and that the plan reads shards of the
 *   signed table only, and makes tickets that accumulate and never
 *   release; never under EXPLAIN ANALYZE.  Nothing is charged on a worker.
 *
 * Sampling: TABLESAMPLE BERNOULLI (p) on a distributed table reaches every
 * shard's fragment; each shard is read by one scan, whose BERNOULLI keeps
 * each row independently with the same probability q (a fresh seed per
 * scan without REPEATABLE), and the shards are disjoint, so every row of
 * the table is kept independently with probability q: the Poisson
 * subsampling the amplification theorems assume (Balle, Barthe & Gaboardi
 * 2018, Theorem 8; Steinke 2022, Theorem 29).  The price is computed on the
 * coordinator as for a local table read once.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "access/parallel.h"
#include "executor/executor.h"
#include "executor/tstoreReceiver.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/clauses.h"
#include "parser/parsetree.h"
#include "tcop/tcopprot.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/tuplesort.h"
#include "utils/datum.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "catalog.h"
#include "compat.h"
#include "describe.h"
#include "dist_catalog.h"
#include "dist_exec.h"
#include "dist_fingerprint.h"
#include "dist_plan.h"
#include "dist_replay.h"
#include "dist_session.h"
#include "dist_token.h"
#include "grid.h"
#include "guard.h"
#include "guc.h"
#include "inheritance.h"
#include "keyset.h"
#include "price.h"
#include "protect.h"
#include "protect_check.h"
#include "public_domain.h"
#include "row_seal.h"
#include "random.h"
#include "registry.h"
#include "selection_mechanism.h"
#include "unit_catalog.h"

PG_FUNCTION_INFO_V1(dp_dist_run);

/* ---------- the coordinator's price ---------- */

typedef struct StateCheck
{
	Oid			state_type;
	Oid			run_oid;
} StateCheck;

static void
state_escapes(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("partial states of DP aggregates may only be released by dp_agg_internal.dist_release"),
			 errdetail("A partial state is exact: it must never reach a client.")));
}

/* partial states flow from the dist_run scan into dist_release only */
static bool
state_walker(Node *node, StateCheck *c)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
	{
		Var		   *v = (Var *) node;

		if (v->vartype == c->state_type || v->varattno == InvalidAttrNumber)
			state_escapes();
		return false;
	}
	if (IsA(node, FuncExpr))
	{
		FuncExpr   *f = (FuncExpr *) node;

		if (f->funcid == c->run_oid || dp_is_dist_function(f->funcid, "dist_run"))
			state_escapes();
		if (dp_is_dist_function(f->funcid, "dist_release"))
		{
			if (list_length(f->args) != 3 || !IsA(linitial(f->args), Var))
				state_escapes();
			return expression_tree_walker((Node *) list_delete_first(list_copy(f->args)),
										  state_walker, c);
		}
	}
	return expression_tree_walker(node, state_walker, c);
}

/* the dist_run call a plan node scans, or NULL */
static FuncExpr *
run_of_scan(Plan *plan)
{
	RangeTblFunction *rtf;

	if (!IsA(plan, FunctionScan) || list_length(((FunctionScan *) plan)->functions) != 1)
		return NULL;
	rtf = linitial_node(RangeTblFunction, ((FunctionScan *) plan)->functions);
	if (!IsA(rtf->funcexpr, FuncExpr) ||
		!dp_is_dist_function(((FuncExpr *) rtf->funcexpr)->funcid, "dist_run"))
		return NULL;
	return (FuncExpr *) rtf->funcexpr;
}

static void
collect_runs(Plan *plan, List **runs)
{
	FuncExpr   *run;
	ListCell   *lc;

	if (plan == NULL)
		return;
	run = run_of_scan(plan);
	if (run != NULL)
		*runs = lappend(*runs, run);
	foreach(lc, dp_plan_children(plan))
		collect_runs(lfirst(lc), runs);
}

/*
 * Every expression of the plan but the dist_run calls of its scans: a
 * state may pass through a node below the top as a bare column (the
 * planner evaluates the volatile dist_release after a sort), and is used
 * by dist_release only.
 */
static void
check_states(Plan *plan, StateCheck *c, bool top)
{
	ListCell   *lc;

	if (plan == NULL)
		return;
	foreach(lc, plan->targetlist)
	{
		Expr	   *e = lfirst_node(TargetEntry, lc)->expr;

		if (top || !IsA(e, Var) || ((Var *) e)->varattno == InvalidAttrNumber)
			(void) state_walker((Node *) e, c);
	}
	(void) state_walker((Node *) plan->qual, c);
	if (IsA(plan, FunctionScan) && run_of_scan(plan) == NULL)
		(void) state_walker((Node *) ((FunctionScan *) plan)->functions, c);
	foreach(lc, dp_plan_children(plan))
		check_states(lfirst(lc), c, false);
}

static void
bad_inner(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("dp_agg_internal.dist_run runs only the statements dp_agg's planner makes")));
}

static bool
is_group_key(Query *q, Index ref)
{
	ListCell   *lc;

	foreach(lc, q->groupClause)
		if (lfirst_node(SortGroupClause, lc)->tleSortGroupRef == ref)
			return true;
	return false;
}

/*
 * The inner statement of a dist_run scan, of the shape the rewrite makes,
 * and its privacy unit's k (the second argument), 0 without a unit.
 */
static Query *
inner_query(FuncExpr *run, int *unit_groups)
{
	Const	   *arg = linitial(run->args);
	Query	   *inner;
	RangeTblEntry *rte;

	*unit_groups = 0;
	if (list_length(run->args) < 1 || list_length(run->args) > 2 || !IsA(arg, Const) ||
		arg->constisnull)
		bad_inner();
	if (list_length(run->args) == 2)
	{
		/*
		 * the k of a privacy unit, or the key set of a public domain
		 * (dist_plan.c): a constant
		 */
		Const	   *second = lsecond(run->args);

		if (!IsA(second, Const) || second->constisnull)
			bad_inner();
		if (second->consttype == INT4OID)
		{
			*unit_groups = DatumGetInt32(second->constvalue);
			if (*unit_groups < 1 || *unit_groups > DP_MAX_UNIT_BOUND)
				bad_inner();
		}
		else if (second->consttype != BYTEAOID)
			bad_inner();
	}
	inner = (Query *) stringToNode(TextDatumGetCString(arg->constvalue));
	if (!IsA(inner, Query) || inner->commandType != CMD_SELECT || inner->havingQual != NULL ||
		list_length(inner->rtable) != 1 || !inner->hasAggs)
		bad_inner();
	rte = linitial_node(RangeTblEntry, inner->rtable);
	if (rte->rtekind != RTE_RELATION || !dp_is_citus_table(rte->relid))
		bad_inner();
	return inner;
}

/*
 * The inner statement of a dist_run scan, checked; with a privacy unit,
 * its first column is the unit column of the table's unit now (the plan
 * was made again if it changed: privacy_unit.c's catalog resets the plan
 * cache), and k is not above the relation's for a role untrusted for it
 * (privacy_unit.c refuses the same at planning).
 */
static Query *
inner_of(FuncExpr *run, int *unit_groups)
{
	Query	   *inner = inner_query(run, unit_groups);
	RangeTblEntry *rte = linitial_node(RangeTblEntry, inner->rtable);
	DpUnit		unit;
	bool		has_unit = dp_unit_of_read(rte->relid, !rte->inh, &unit);
	ListCell   *lc;

	if (has_unit != (*unit_groups > 0))
		bad_inner();
	if (has_unit)
	{
		TargetEntry *first = linitial_node(TargetEntry, inner->targetList);

		if (first->resname == NULL || strcmp(first->resname, DP_DIST_UNIT_COLUMN) != 0 ||
			!IsA(first->expr, Var) || ((Var *) first->expr)->varattno != unit.attnum)
			bad_inner();
		if (*unit_groups > unit.max_groups && dp_relation_protected(rte->relid) &&
			!dp_role_trusted(rte->relid, GetUserId()))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("dp_agg.max_groups_contributed %d exceeds the %d of relation \"%s\"",
							*unit_groups, unit.max_groups, get_rel_name(rte->relid)),
					 errdetail("Roles untrusted for a protected relation may lower the bounds of its privacy unit, not raise them."),
					 errhint("SET dp_agg.max_groups_contributed to at most %d, or to 0.",
							 unit.max_groups)));
	}
	dp_guard_query(inner);
	foreach(lc, inner->targetList)
	{
		TargetEntry *tle = lfirst(lc);

		if (IsA(tle->expr, Aggref) && dp_lookup_call(((Aggref *) tle->expr)->aggfnoid) != NULL)
			continue;
		/* a group key, with no aggregate in it */
		if (tle->ressortgroupref == 0 || contain_agg_clause((Node *) tle->expr) ||
			!is_group_key(inner, tle->ressortgroupref))
			bad_inner();
	}
	return inner;
}

/* ---------- protection and permissions of the Citus table ---------- */

/*
 * The role the inner statement of a DP statement on a Citus table runs as:
 * the table's owner when the table is protected and the current user is
 * not trusted for it (doc/citus.md, "Citus"), InvalidOid to run it as the
 * current user.  Citus connects to the workers as the user the statement
 * runs as, so the fragments then run as the owner there: the workers refuse
 * the untrusted role any read of the table and its shards
 * (dist_protect.c), and the role cannot see the fragments in
 * pg_stat_activity (only roles with the privileges of a backend's user
 * see its statements).  Whether the role may read the table at all was
 * checked before the charge (check_inner_access), and the inner statement
 * calls built-in immutable functions only (dist_fingerprint.c): nothing
 * the role wrote runs with the owner's rights.
 */
static Oid
inner_run_as(Oid relid)
{
	if (dp_relation_protected(relid) && !dp_role_trusted(relid, GetUserId()))
		return dp_relation_owner(relid);
	return InvalidOid;
}

/* Has the relation row-level security enabled? */
static bool
row_security_enabled(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	bool		enabled;

	if (!HeapTupleIsValid(tup))
		return false;
	enabled = ((Form_pg_class) GETSTRUCT(tup))->relrowsecurity;
	ReleaseSysCache(tup);
	return enabled;
}

/*
 * May the current user read what the inner statement reads, before the
 * charge: a grant of access to the protected table (dp_agg.grant_access),
 * or SELECT on the table or on every column the statement reads, as
 * PostgreSQL's own check would require.  For a role untrusted for a
 * protected table, also no row-level security: the inner statement runs
 * as the table's owner, whom the policies would not restrict.
 */
static void
check_inner_access(Query *inner, bool run_as_owner)
{
	RangeTblEntry *rte = linitial_node(RangeTblEntry, inner->rtable);
	Oid			relid = rte->relid;
	Oid			user = GetUserId();
	Bitmapset  *cols = DP_QUERY_RTE_SELECTED_COLS(inner, rte);
	int			col = -1;

	if (run_as_owner && row_security_enabled(relid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("DP statements on protected Citus table \"%s\" with row-level security are not supported",
						get_rel_name(relid)),
				 errdetail("Their fragments run on the workers as the table's owner, whom the policies would not restrict."),
				 errhint("Disable row-level security on the table, or protect a table holding only the rows the role may see.")));
	if (run_as_owner)
	{
		Oid			owner = dp_relation_owner(relid);
		HeapTuple	tup = SearchSysCache1(AUTHOID, ObjectIdGetDatum(owner));
		bool		login = HeapTupleIsValid(tup) && ((Form_pg_authid) GETSTRUCT(tup))->rolcanlogin;

		if (HeapTupleIsValid(tup))
			ReleaseSysCache(tup);
		if (!login)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the owner of protected Citus table \"%s\" cannot log in",
							get_rel_name(relid)),
					 errdetail("The fragments of a DP statement of a role not trusted for the table run on the workers as its owner, and Citus connects to them as that role."),
					 errhint("ALTER ROLE %s LOGIN (Citus needs it for the table's DDL too).",
							 quote_identifier(GetUserNameFromId(owner, false)))));
	}
	if (run_as_owner && dp_role_granted(relid, user))
		return;
	if (pg_class_aclcheck(relid, user, ACL_SELECT) == ACLCHECK_OK)
		return;
	while ((col = bms_next_member(cols, col)) >= 0)
	{
		AttrNumber	attno = col + FirstLowInvalidHeapAttributeNumber;

		if (attno == InvalidAttrNumber ||
			pg_attribute_aclcheck(relid, attno, user, ACL_SELECT) != ACLCHECK_OK)
			aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, get_rel_name(relid));
	}
	if (cols == NULL)
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, get_rel_name(relid));
}

/*
 * At executor start, before the charge and before PostgreSQL's own checks
 * (hooks.c): for each dist_run scan of the plan, the current user may read
 * its Citus table (check_inner_access), and, when the table is protected
 * and the user is not trusted for it, the rules protect_check.c applies to
 * the plan of a local statement apply to the inner statement (no EXPLAIN,
 * the bound on the work per row).  Returns the first such table the user
 * is untrusted for (its releases must then each cost the floor on epsilon,
 * and the settings of untrusted statements apply), InvalidOid if none.
 */
Oid
dp_dist_protect_start(PlannedStmt *stmt, ParamListInfo params, int eflags,
					  int instrument_options)
{
	List	   *runs = NIL;
	ListCell   *lc;
	Oid			untrusted = InvalidOid;

	if (stmt->commandType == CMD_UTILITY || !dp_extension_present())
		return InvalidOid;
	collect_runs(stmt->planTree, &runs);
	foreach(lc, stmt->subplans)
		collect_runs(lfirst(lc), &runs);
	foreach(lc, runs)
	{
		int			unit_groups;
		Query	   *inner = inner_query(lfirst(lc), &unit_groups);
		Oid			relid = linitial_node(RangeTblEntry, inner->rtable)->relid;
		bool		as_owner = OidIsValid(inner_run_as(relid));

		if (as_owner)
		{
			dp_protect_start_inner(inner, relid, params, eflags, instrument_options);
			/* nothing traps a call on the workers: none may fail on rows */
			dp_row_refuse_failing(inner, relid);
			if (!OidIsValid(untrusted))
				untrusted = relid;
		}
		if (!(eflags & EXEC_FLAG_EXPLAIN_ONLY))
		{
			check_inner_access(inner, as_owner);
			/* nothing else of the transaction runs as the owner (dist_session.c) */
			if (as_owner)
				dp_dist_session_run_as_owner();
		}
	}
	return untrusted;
}

/*
 * The fragments of the inner statement can be bound to it
 * (dist_fingerprint.c); checked before the charge, so that a statement
 * whose fragments a worker could not match fails before it costs anything.
 */
static void
check_bindable(Query *inner, ParamListInfo params)
{
	const char *why;

	if (dp_fragment_fingerprint(inner, "", "", params, true, &why) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("this DP statement on a Citus table cannot be bound to its fragments"),
				 errdetail("%s", why),
				 errhint("On a Citus table, write WHERE, GROUP BY, TABLESAMPLE and the arguments of DP aggregates with built-in immutable functions and operators, columns, constants and parameters.")));
}

/*
 * The private selection of an inner statement's groups: present when it
 * has GROUP BY and the keys are private (dist_plan.c put it there at
 * planning), with the k of its privacy unit (1 when rows are the units);
 * absent when they are the keys of a public domain (dist_run's key set).  A plan made
 * with dp_agg.group_keys = 'public' and run after it changed is refused, as
 * the guard refuses a local one (guard.c), not run without selection.
 */
static void
check_inner_selection(Query *inner, List *tickets, int unit_groups, bool public_domain)
{
	bool		selected = public_domain;
	ListCell   *lc;

	foreach(lc, tickets)
	{
		const DpRelease *r = lfirst(lc);

		if (r->call.kind != DP_SELECT)
			continue;
		if (selected || list_length(inner->groupClause) <= (unit_groups > 0 ? 1 : 0) ||
			r->selection.max_groups != Max(unit_groups, 1) || public_domain)
			bad_inner();
		selected = true;
	}
	if (!selected && list_length(inner->groupClause) > (unit_groups > 0 ? 1 : 0) &&
		dp_guc_group_keys == DP_GROUP_KEYS_PRIVATE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("GROUP BY keys of a DP statement are released only by private selection"),
				 errdetail("This plan of a DP statement on a Citus table releases its groups without a private selection: it was made with dp_agg.group_keys = 'public'."),
				 errhint("Prepare the statement again, or SET dp_agg.group_keys = 'public' if the group keys are public knowledge.")));
}

/*
 * Tickets of the DP calls of the dist_run scans of a plan (NIL if it has
 * none), finalized on the coordinator; ERROR on a Citus worker.
 */
List *
dp_dist_price(PlannedStmt *stmt, ParamListInfo params)
{
	StateCheck	c;
	List	   *runs = NIL;
	List	   *releases = NIL;
	ListCell   *lc;
	Oid			argtype = TEXTOID;

	if (stmt->commandType == CMD_UTILITY || !dp_extension_present())
		return NIL;
	collect_runs(stmt->planTree, &runs);
	foreach(lc, stmt->subplans)
		collect_runs(lfirst(lc), &runs);
	if (runs == NIL)
		return NIL;
	c.state_type = dp_dist_state_type();
	c.run_oid = dp_dist_func("dist_run", 1, &argtype);
	check_states(stmt->planTree, &c, true);
	foreach(lc, stmt->subplans)
		check_states(lfirst(lc), &c, true);
	if (dp_guc_citus_worker)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("DP aggregates are not allowed on a Citus worker"),
				 errdetail("Budgets are kept and charged on the coordinator only; a worker computes partial states for signed fragments only."),
				 errhint("Connect to the coordinator.")));

	foreach(lc, runs)
	{
		FuncExpr   *run = lfirst(lc);
		int			unit_groups;
		Query	   *inner = inner_of(run, &unit_groups);
		/* the second argument is the k of a unit, or a public domain's key set */
		bool		public_domain = list_length(run->args) == 2 && unit_groups == 0;
		RangeTblEntry *rte = linitial_node(RangeTblEntry, inner->rtable);
		int			unit_rows = unit_groups > 0 ? dp_price_unit_rows(rte->relid) : 0;
		List	   *tickets = NIL;
		ListCell   *lc2;

		check_bindable(inner, params);

		foreach(lc2, inner->targetList)
		{
			TargetEntry *tle = lfirst(lc2);
			DpSampling	sampling = dp_no_sampling;
			DpCallInfo	info;
			DpRelease  *r;

			if (!IsA(tle->expr, Aggref))
				continue;
			if (rte->tablesample != NULL)
			{
				sampling.sampled = true;
				sampling.tablesample = rte->tablesample;
				sampling.nscans = 1;
			}
			info = *dp_lookup_call(((Aggref *) tle->expr)->aggfnoid);
			/* released per group of bounded units, as level 3 of privacy_unit.c */
			if (unit_groups > 0 && info.kind != DP_SELECT)
				info.unit = DP_UNIT_RELEASE;
			r = dp_release_create((Aggref *) tle->expr, (Aggref *) tle->expr, &info, true,
								  &sampling, params, unit_groups, unit_rows);
			/* partial states hold counts and sums only: no bins, no tree */
			if (r->auto_bounds)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("DP aggregates without bounds are not supported on a Citus table"),
						 errdetail("The partial states of a Citus table hold clamped sums, for bounds known when the statement is signed."),
						 errhint("Give the clamping bounds; dp_bounds on a local copy of a sample can suggest them.")));
			dp_plan_halfwidths(r);
			r->agg_node = run;
			tickets = lappend(tickets, r);
		}
		dp_price_selection_shares(tickets);
		check_inner_selection(inner, tickets, unit_groups, public_domain);
		releases = list_concat(releases, tickets);
		/* a public domain's keys: recorded as on a local table, at no price */
		if (public_domain)
		{
			Const	   *ks = lsecond(run->args);
			Aggref	   *pub;
			DpRelease  *r;

			if (!IsA(ks, Const) || ks->constisnull)
				bad_inner();
			pub = dp_domain_public_call(dp_keyset_header_keys(DatumGetByteaPP(ks->constvalue)));
			r = dp_release_create(pub, pub, dp_lookup_call(pub->aggfnoid), true, &dp_no_sampling,
								  params, 0, 0);
			releases = lappend(releases, r);
		}
	}
	return releases;
}

/* ---------- the coordinator's run ---------- */

typedef struct DistRun
{
	uint8		nonce[DP_NONCE_LEN];
	EState	   *estate;
	const void *run;			/* the dist_run call */
	const DpRelease **tickets;
	const DpRelease **units;	/* what each call's partial state accumulates */
	int			ncalls;
	int			select;			/* the call of the private selection, or -1 */
	int			unit_groups;	/* privacy units: k, 0 if rows are the units */
	int			rows_from;		/* the call whose rows the selection counts, or -1 */
	HTAB	   *slots;
	MemoryContext cxt;
	struct DistRun *next;
	MemoryContextCallback callback;
} DistRun;

static DistRun *runs = NULL;

static void
forget_run(void *arg)
{
	for (DistRun **p = &runs; *p != NULL; p = &(*p)->next)
	{
		if (*p == arg)
		{
			*p = (*p)->next;
			return;
		}
	}
}

/*
 * The private selection's state is the exact number of the group's rows
 * (each row one unit), accumulated as dp_count(*)'s by the workers.
 */
static char *bound_text(const DpRelease *r, bool upper);

/*
 * The units of a call's partial state: its ticket's, but for the private
 * selection (below) and for a call over privacy units: the workers then
 * accumulate the rows of each (unit, group) exactly, in the grid and
 * bounds of the ticket but without the unit's bounds, which dist_run
 * applies (bound_units).
 */
static const DpRelease *
partial_units(const DpRelease *r)
{
	DpCallInfo	info;

	if (r->call.kind != DP_SELECT && r->unit_groups > 0)
	{
		Datum		lower = (Datum) 0;
		Datum		upper = (Datum) 0;

		info = r->call;
		info.unit = DP_UNIT_NONE;
		info.lower_arg = info.upper_arg = info.epsilon_arg = info.delta_arg = info.k_arg = -1;
		if (r->call.kind == DP_SUM || r->call.kind == DP_AVG ||
			r->call.kind == DP_VAR || r->call.kind == DP_STDDEV)
		{
			Oid			typinput,
						typioparam;

			/* as a worker reads the bounds of a specification (fragment_release) */
			getTypeInputInfo(r->call.valtype, &typinput, &typioparam);
			lower = OidInputFunctionCall(typinput, bound_text(r, false), typioparam, -1);
			upper = OidInputFunctionCall(typinput, bound_text(r, true), typioparam, -1);
		}
		return dp_release_for_fragment(&info, lower, upper, r->row_grid_exp, r->sq_shift);
	}
	if (r->call.kind != DP_SELECT)
		return r;
	memset(&info, 0, sizeof(info));
	info.kind = DP_COUNT_STAR;
	info.vclass = DP_VALUE_NONE;
	info.valtype = InvalidOid;
	info.lower_arg = info.upper_arg = info.epsilon_arg = info.delta_arg = info.k_arg = -1;
	return dp_release_for_fragment(&info, (Datum) 0, (Datum) 0, 0, 0);
}

static DistRun *
new_run(EState *estate, const void *run_expr, List *tickets, int unit_groups)
{
	DistRun    *dr;
	HASHCTL		ctl;
	int			i = 0;
	ListCell   *lc;

	for (dr = runs; dr != NULL; dr = dr->next)
		if (dr->estate == estate && dr->run == run_expr)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("the distributed part of a DP statement cannot run twice"),
					 errdetail("It was priced and charged for one run.")));

	dr = MemoryContextAllocZero(estate->es_query_cxt, sizeof(DistRun));
	dp_random_fill(dr->nonce, DP_NONCE_LEN);
	dr->estate = estate;
	dr->run = run_expr;
	dr->cxt = estate->es_query_cxt;
	dr->ncalls = list_length(tickets);
	dr->tickets = MemoryContextAlloc(dr->cxt, sizeof(DpRelease *) * dr->ncalls);
	dr->units = MemoryContextAlloc(dr->cxt, sizeof(DpRelease *) * dr->ncalls);
	dr->select = -1;
	dr->rows_from = -1;
	dr->unit_groups = unit_groups;
	foreach(lc, tickets)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(dr->cxt);

		dr->tickets[i] = lfirst(lc);
		dr->units[i] = partial_units(dr->tickets[i]);
		MemoryContextSwitchTo(oldcxt);
		if (dr->tickets[i]->call.kind == DP_SELECT)
			dr->select = i;
		i++;
	}
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = offsetof(DpDistSlot, done);
	ctl.entrysize = sizeof(DpDistSlot);
	ctl.hcxt = dr->cxt;
	dr->slots = hash_create("dp_agg releases", 64, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	dr->callback.func = forget_run;
	dr->callback.arg = dr;
	MemoryContextRegisterResetCallback(dr->cxt, &dr->callback);
	dr->next = runs;
	runs = dr;
	return dr;
}

static char *
bound_text(const DpRelease *r, bool upper)
{
	switch (r->call.vclass)
	{
		case DP_VALUE_INT:
			return psprintf(INT64_FORMAT, upper ? r->upper_int : r->lower_int);
		case DP_VALUE_FLOAT:
			return float8out_internal(upper ? r->upper_float : r->lower_float);
		case DP_VALUE_NUMERIC:
			return DatumGetCString(DirectFunctionCall1(numeric_out,
													   NumericGetDatum(upper ? r->upper_num : r->lower_num)));
		case DP_VALUE_NONE:
			break;
	}
	return "";
}

/*
 * Sign the specification of a partial call made by partial_call, for a
 * fragment with the given fingerprint.
 */
static void
sign_call(DistRun *dr, const DpRelease *r, Aggref *p, Oid relid, char *fragment,
		  char *placements)
{
	DpFragmentSpec spec;
	Const	   *text = castNode(Const, linitial_node(TargetEntry, p->args)->expr);

	memset(&spec, 0, sizeof(spec));
	memcpy(spec.nonce, dr->nonce, DP_NONCE_LEN);
	spec.nspname = get_namespace_name(get_rel_namespace(relid));
	spec.relname = get_rel_name(relid);
	spec.kind = r->call.kind;
	spec.vclass = r->call.vclass;
	spec.valtype = r->call.valtype;
	spec.grid_exp = r->row_grid_exp;
	spec.sq_shift = r->sq_shift;
	spec.lower = bound_text(r, false);
	spec.upper = bound_text(r, true);
	spec.fingerprint = r->fingerprint;
	spec.placements = placements;
	spec.fragment = fragment;
	text->constvalue = CStringGetTextDatum(dp_fragment_sign(&spec));
	text->constisnull = false;
}

/*
 * dp_agg.sum(<spec> [, value]) for one DP call; the specification is a
 * NULL placeholder until sign_call signs it (the fingerprint of the
 * fragment, which the specification holds, is computed without it).
 */
static Aggref *
partial_call(Aggref *orig, const DpRelease *r)
{
	Aggref	   *p = makeNode(Aggref);
	Node	   *value = NULL;
	Oid			argtypes[2] = {TEXTOID, InvalidOid};
	Const	   *text = makeNullConst(TEXTOID, -1, DEFAULT_COLLATION_OID);

	if (r->call.kind == DP_COUNT)
	{
		NullTest   *nt = makeNode(NullTest);

		nt->arg = linitial_node(TargetEntry, orig->args)->expr;
		nt->nulltesttype = IS_NOT_NULL;
		nt->location = -1;
		value = (Node *) nt;
	}
	else if (r->call.kind != DP_COUNT_STAR)
		value = (Node *) linitial_node(TargetEntry, orig->args)->expr;

	p->aggtype = dp_dist_state_type();
	p->inputcollid = orig->inputcollid;
	p->args = list_make1(makeTargetEntry((Expr *) text, 1, NULL, false));
	p->aggargtypes = list_make1_oid(TEXTOID);
	if (value != NULL)
	{
		argtypes[1] = exprType(value);
		p->args = lappend(p->args, makeTargetEntry((Expr *) value, 2, NULL, false));
		p->aggargtypes = lappend_oid(p->aggargtypes, argtypes[1]);
	}
	p->aggfnoid = dp_dist_func("sum", value != NULL ? 2 : 1, argtypes);
	p->aggfilter = orig->aggfilter;
	p->aggkind = AGGKIND_NORMAL;
	p->aggsplit = AGGSPLIT_SIMPLE;
	p->aggno = -1;
	p->aggtransno = -1;
	p->location = -1;
	return p;
}

/*
 * Citus's settings that print the commands it sends to the workers to the
 * client (any role can set them): off while a fragment is sent, so that a
 * signed fragment is not shown to the analyst.  The states it yields are
 * sealed anyway (dist_state.c); this keeps the signatures out of sight.
 */
static const char *const citus_log_settings[] = {
	"citus.log_remote_commands",
	"citus.log_intermediate_results",
	"citus.log_local_commands",
};

/*
 * The settings above off until the returned nest level is closed, and no
 * message below WARNING sent to the client meanwhile: debug_print_plan
 * would show the signed fragments, and trace_sort the number of rows the
 * coordinator combines (groups before their selection).
 */
static int
quiet_citus_logs(void)
{
	int			level = NewGUCNestLevel();

	for (size_t i = 0; i < lengthof(citus_log_settings); i++)
		if (GetConfigOption(citus_log_settings[i], true, false) != NULL)
			(void) set_config_option(citus_log_settings[i], "off", PGC_USERSET, PGC_S_SESSION,
									 GUC_ACTION_SAVE, true, 0, false);
	if (client_min_messages < WARNING)
		(void) set_config_option("client_min_messages", "warning", PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	return level;
}

/*
 * Run the inner statement through Citus into a tuplestore, as the role
 * run_as if it is valid (inner_run_as): planned and run as that role, so
 * that Citus connects to the workers as it.
 */
static Tuplestorestate *
run_inner(Query *inner, EState *estate, Oid run_as, TupleDesc *desc)
{
	Tuplestorestate *store = tuplestore_begin_heap(false, false, work_mem);
	DestReceiver *dest = CreateDestReceiver(DestTuplestore);
	PlannedStmt *stmt;
	QueryDesc  *qd;
	int			guc_level = quiet_citus_logs();
	Oid			save_userid;
	int			save_sec_context;

	SetTuplestoreDestReceiverParams(dest, store, CurrentMemoryContext, false, NULL, NULL);
	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	if (OidIsValid(run_as))
		SetUserIdAndSecContext(run_as, save_sec_context | SECURITY_LOCAL_USERID_CHANGE);
	dp_dist_set_inner(true);
	PG_TRY();
	{
		stmt = pg_plan_query(inner, estate->es_sourceText, 0, estate->es_param_list_info);
		qd = CreateQueryDesc(stmt, estate->es_sourceText, GetActiveSnapshot(), InvalidSnapshot,
							 dest, estate->es_param_list_info, NULL, 0);
		ExecutorStart(qd, 0);
		*desc = CreateTupleDescCopy(qd->tupDesc);
		DP_EXECUTOR_RUN(qd);
		ExecutorFinish(qd);
		ExecutorEnd(qd);
		FreeQueryDesc(qd);
	}
	PG_FINALLY();
	{
		dp_dist_set_inner(false);
		SetUserIdAndSecContext(save_userid, save_sec_context);
	}
	PG_END_TRY();
	/* on an error the transaction's abort restores the settings */
	AtEOXact_GUC(true, guc_level);
	dest->rDestroy(dest);
	return store;
}

/* a row of the inner statement, its states checked and numbered */
static void
number_states(DistRun *dr, TupleDesc desc, Datum *values, bool *nulls, uint64 serial)
{
	int			first = desc->natts - dr->ncalls;

	for (int i = 0; i < dr->ncalls; i++)
	{
		const DpRelease *r = dr->units[i];
		DpDistState *st;

		if (nulls[first + i])
			st = dp_dist_state_new(CurrentMemoryContext, r->call.kind, dr->nonce, r->fingerprint);
		else
		{
			st = dp_dist_state_copy((DpDistState *) PG_DETOAST_DATUM(values[first + i]));
			if (memcmp(st->nonce, dr->nonce, DP_NONCE_LEN) != 0 ||
				st->fingerprint != r->fingerprint || st->kind != r->call.kind)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("a partial state of a DP aggregate belongs to another statement"),
						 errdetail("A worker returned a state with another nonce or other units.")));
		}
		st->serial = serial;
		values[first + i] = PointerGetDatum(st);
		nulls[first + i] = false;
	}
}

/*
 * The private selection of a group of the inner statement, decided once
 * (each row of the inner statement is one group, its states combined over
 * the workers); true without selection.  Its exact count is removed from
 * the row, which carries the states of the group's releases only.
 */
static bool
selected(DistRun *dr, TupleDesc desc, Datum *values, bool *nulls)
{
	int			first = desc->natts - dr->ncalls;
	int			col = first + dr->select;
	int64		n;

	if (dr->select < 0)
		return true;
	if (dr->rows_from >= 0)
		n = ((const DpDistState *) DatumGetPointer(values[first + dr->rows_from]))->rows;
	else
		n = ((const DpDistState *) DatumGetPointer(values[col]))->count;
	values[col] = (Datum) 0;
	nulls[col] = true;
	return dp_selection_draw(&dr->tickets[dr->select]->selection, n);
}

/* ---------- privacy units: each unit bounded once, on the coordinator ---------- */

/*
 * A unit's contribution to one group, bounded as level 1 of privacy_unit.c
 * bounds it (aggregates.c, dp_unit_bound_*_final): at most R rows counted,
 * a sum's total clamped to [lower, upper], an average's (and a variance's)
 * c = min(m, R) of its m rows at the unit's own mean (dp_scale_total).  The state is the exact state of the unit's
 * rows in the group (one row of the inner statement), in place.
 */
static void
bound_contribution(DpDistState *st, const DpRelease *ticket)
{
	int64		rows = st->count;

	st->count = Min(rows, (int64) ticket->unit_rows);
	switch (ticket->call.kind)
	{
		case DP_COUNT_STAR:
		case DP_COUNT:
			st->sum = 0;
			st->sumsq = 0;
			break;
		case DP_SUM:
			st->sum = Max(st->sum, (int128) ticket->lo_units);
			st->sum = Min(st->sum, (int128) ticket->hi_units);
			st->sumsq = 0;
			break;
		default:
			/* dp_avg, dp_var, dp_stddev: c rows' worth at the unit's mean */
			if (rows > st->count)
			{
				st->sum = dp_scale_total(st->sum, st->count, rows);
				st->sumsq = dp_scale_total(st->sumsq, st->count, rows);
			}
			break;
	}
}

/* a state of the run for call i, checked (NULL: an empty one) */
static DpDistState *
checked_state(DistRun *dr, int i, Datum value, bool isnull)
{
	const DpRelease *r = dr->units[i];
	DpDistState *st;

	if (isnull)
		return dp_dist_state_new(CurrentMemoryContext, r->call.kind, dr->nonce, r->fingerprint);
	st = dp_dist_state_copy((DpDistState *) PG_DETOAST_DATUM(value));
	if (memcmp(st->nonce, dr->nonce, DP_NONCE_LEN) != 0 ||
		st->fingerprint != r->fingerprint || st->kind != r->call.kind)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("a partial state of a DP aggregate belongs to another statement"),
				 errdetail("A worker returned a state with another nonce or other units.")));
	return st;
}

/* equality of two values by a GROUP BY clause's operator, NULLs equal */
static bool
keys_equal(FmgrInfo *eq, Oid collation, Datum a, bool anull, Datum b, bool bnull)
{
	if (anull || bnull)
		return anull && bnull;
	return DatumGetBool(FunctionCall2Coll(eq, collation, a, b));
}

typedef struct UnitRow
{
	uint64		priority;
	MinimalTuple tuple;
} UnitRow;

/*
 * The groups a unit keeps: at most k of its rows (one per group, the
 * inner statement groups by unit and keys), those of the k smallest
 * priorities drawn from the CSPRNG for each row: a uniform k-subset of the
 * unit's groups, chosen from its own rows and fresh randomness only, as the
 * proof of doc/units-and-groups.md requires (Wilson et al. 2020, section 3).
 * Ties (probability about 2^-64) are broken by order of arrival.
 */
static void
keep_row(UnitRow *kept, int *nkept, int k, TupleTableSlot *slot)
{
	uint64		p;
	int			worst = 0;

	dp_random_fill((uint8 *) &p, sizeof(p));
	if (*nkept < k)
	{
		kept[*nkept].priority = p;
		kept[*nkept].tuple = ExecCopySlotMinimalTuple(slot);
		(*nkept)++;
		return;
	}
	for (int i = 1; i < *nkept; i++)
		if (kept[i].priority > kept[worst].priority)
			worst = i;
	if (p < kept[worst].priority)
	{
		pfree(kept[worst].tuple);
		kept[worst].priority = p;
		kept[worst].tuple = ExecCopySlotMinimalTuple(slot);
	}
}

typedef struct GroupSums
{
	int64	   *count;			/* per call */
	int128	   *sum;
	int64		units;
} GroupSums;

/* one output row: the keys, and each call's state from the sums */
static void
put_group(DistRun *dr, Tuplestorestate *out, TupleDesc outdesc, Datum *keys, bool *keynulls,
		  int ngroups, GroupSums *g)
{
	Datum	   *values = palloc(sizeof(Datum) * outdesc->natts);
	bool	   *nulls = palloc0(sizeof(bool) * outdesc->natts);

	for (int j = 0; j < ngroups; j++)
	{
		values[j] = keys[j];
		nulls[j] = keynulls[j];
	}
	for (int i = 0; i < dr->ncalls; i++)
	{
		const DpRelease *r = dr->units[i];
		DpDistState *st = dp_dist_state_new(CurrentMemoryContext, r->call.kind, dr->nonce,
											r->fingerprint);

		if (i == dr->select)
			st->count = g->units;
		else
		{
			st->count = g->count[i];
			st->sum = g->sum[i];
		}
		values[ngroups + i] = PointerGetDatum(st);
	}
	tuplestore_putvalues(out, outdesc, values, nulls);
}

/*
 * The rows of the inner statement of a DP statement over privacy units
 * (unit, keys..., the exact state of each call for the unit's rows in the
 * group, combined over the shards by Citus) into the rows dist_run returns
 * (keys..., the state of each call, the number of units for the private
 * selection): each unit's rows are sorted together, it keeps at most k
 * groups (keep_row), each contribution is bounded (bound_contribution),
 * and the bounded contributions are added per group, sorted by the keys.
 * Each unit is bounded once, from all its rows, wherever Citus found them:
 * on the unit's one shard when the unit is the distribution column, on
 * several otherwise (doc/citus.md, "Citus").
 */
static Tuplestorestate *
bound_units(DistRun *dr, Query *inner, TupleDesc rawdesc, Tuplestorestate *raw,
			TupleDesc outdesc)
{
	int			ngroups = outdesc->natts - dr->ncalls;
	int			nstates = rawdesc->natts - 1 - ngroups;
	SortGroupClause *unit_gc = linitial_node(SortGroupClause, inner->groupClause);
	Oid			unit_coll = exprCollation((Node *) linitial_node(TargetEntry, inner->targetList)->expr);
	bool		nulls_first = false;
	FmgrInfo	unit_eq;
	FmgrInfo   *key_eq = palloc(sizeof(FmgrInfo) * Max(ngroups, 1));
	Oid		   *key_coll = palloc(sizeof(Oid) * Max(ngroups, 1));
	Tuplesortstate *byunit;
	Tuplesortstate *bygroup = NULL;
	TupleTableSlot *rslot = MakeSingleTupleTableSlot(rawdesc, &TTSOpsMinimalTuple);
	TupleTableSlot *oslot = MakeSingleTupleTableSlot(outdesc, &TTSOpsMinimalTuple);
	Tuplestorestate *out = tuplestore_begin_heap(false, false, work_mem);
	UnitRow    *kept = palloc(sizeof(UnitRow) * dr->unit_groups);
	int			nkept = 0;
	Datum		prev_unit = (Datum) 0;
	bool		have_unit = false;
	MinimalTuple last_row = NULL;
	GroupSums	g;

	if (nstates != dr->ncalls - (dr->select >= 0 ? 1 : 0) || nstates < 1 ||
		list_length(inner->groupClause) != ngroups + 1)
		bad_inner();
	fmgr_info(get_opcode(unit_gc->eqop), &unit_eq);
	g.count = palloc0(sizeof(int64) * dr->ncalls);
	g.sum = palloc0(sizeof(int128) * dr->ncalls);
	g.units = 0;

	for (int j = 0; j < ngroups; j++)
	{
		SortGroupClause *gc = list_nth_node(SortGroupClause, inner->groupClause, j + 1);

		key_coll[j] = exprCollation((Node *) list_nth_node(TargetEntry, inner->targetList, j + 1)->expr);
		fmgr_info(get_opcode(gc->eqop), &key_eq[j]);
	}

	/* the bounded rows, sorted by the keys (no sort without GROUP BY) */
	if (ngroups > 0)
	{
		AttrNumber *attnums = palloc(sizeof(AttrNumber) * ngroups);
		Oid		   *sortops = palloc(sizeof(Oid) * ngroups);
		bool	   *nullsfirst = palloc(sizeof(bool) * ngroups);

		for (int j = 0; j < ngroups; j++)
		{
			SortGroupClause *gc = list_nth_node(SortGroupClause, inner->groupClause, j + 1);

			attnums[j] = j + 1;
			sortops[j] = gc->sortop;
			nullsfirst[j] = gc->nulls_first;
		}
		bygroup = tuplesort_begin_heap(outdesc, ngroups, attnums, sortops, key_coll, nullsfirst,
									   work_mem, NULL, TUPLESORT_NONE);
	}

	/*
	 * The rows sorted by unit, then keys, their states checked: the rows of
	 * a unit are together, and two rows of one unit and group (which
	 * Citus's GROUP BY never returns) would be found side by side.
	 */
	{
		AttrNumber *attnums = palloc(sizeof(AttrNumber) * (ngroups + 1));
		Oid		   *sortops = palloc(sizeof(Oid) * (ngroups + 1));
		Oid		   *colls = palloc(sizeof(Oid) * (ngroups + 1));
		bool	   *nullsfirst = palloc(sizeof(bool) * (ngroups + 1));

		for (int j = 0; j <= ngroups; j++)
		{
			SortGroupClause *gc = list_nth_node(SortGroupClause, inner->groupClause, j);

			attnums[j] = j + 1;
			sortops[j] = gc->sortop;
			colls[j] = j == 0 ? unit_coll : key_coll[j - 1];
			nullsfirst[j] = j == 0 ? nulls_first : gc->nulls_first;
		}
		byunit = tuplesort_begin_heap(rawdesc, ngroups + 1, attnums, sortops, colls, nullsfirst,
									  work_mem, NULL, TUPLESORT_NONE);
	}
	while (tuplestore_gettupleslot(raw, true, false, rslot))
	{
		slot_getallattrs(rslot);
		if (rslot->tts_isnull[0])
			bad_inner();		/* the inner statement leaves out rows of no unit */
		for (int i = 0; i < nstates; i++)
			(void) checked_state(dr, i, rslot->tts_values[1 + ngroups + i],
								 rslot->tts_isnull[1 + ngroups + i]);
		tuplesort_puttupleslot(byunit, rslot);
	}
	tuplestore_end(raw);
	tuplesort_performsort(byunit);

	/* each unit: the groups it keeps, bounded */
	for (;;)
	{
		bool		more = tuplesort_gettupleslot(byunit, true, true, rslot, NULL);

		if (more)
			slot_getallattrs(rslot);
		if (have_unit && (!more || !keys_equal(&unit_eq, unit_coll, prev_unit, false,
											   rslot->tts_values[0], false)))
		{
			for (int n = 0; n < nkept; n++)
			{
				TupleTableSlot *kslot = MakeSingleTupleTableSlot(rawdesc, &TTSOpsMinimalTuple);

				ExecStoreMinimalTuple(kept[n].tuple, kslot, true);
				slot_getallattrs(kslot);
				ExecClearTuple(oslot);
				for (int j = 0; j < ngroups; j++)
				{
					oslot->tts_values[j] = kslot->tts_values[1 + j];
					oslot->tts_isnull[j] = kslot->tts_isnull[1 + j];
				}
				for (int i = 0; i < dr->ncalls; i++)
				{
					DpDistState *st;

					if (i == dr->select)
					{
						st = dp_dist_state_new(CurrentMemoryContext, dr->units[i]->call.kind,
											   dr->nonce, dr->units[i]->fingerprint);
						st->count = 1;	/* one unit */
					}
					else
					{
						st = checked_state(dr, i, kslot->tts_values[1 + ngroups + i],
										   kslot->tts_isnull[1 + ngroups + i]);
						bound_contribution(st, dr->tickets[i]);
					}
					if (bygroup == NULL)
					{
						g.count[i] += st->count;
						g.sum[i] += st->sum;
					}
					oslot->tts_values[ngroups + i] = PointerGetDatum(st);
					oslot->tts_isnull[ngroups + i] = false;
				}
				if (bygroup != NULL)
				{
					ExecStoreVirtualTuple(oslot);
					tuplesort_puttupleslot(bygroup, oslot);
				}
				else
					g.units++;
				ExecDropSingleTupleTableSlot(kslot);
			}
			nkept = 0;
			have_unit = false;
		}
		if (!more)
			break;
		if (!have_unit)
		{
			prev_unit = datumCopy(rslot->tts_values[0], TupleDescAttr(rawdesc, 0)->attbyval,
								  TupleDescAttr(rawdesc, 0)->attlen);
			have_unit = true;
		}
		else
		{
			/* the unit's previous row (sorted by keys): another group */
			bool		same = true;
			TupleTableSlot *pslot = MakeSingleTupleTableSlot(rawdesc, &TTSOpsMinimalTuple);

			ExecStoreMinimalTuple(last_row, pslot, false);
			slot_getallattrs(pslot);
			for (int j = 0; same && j < ngroups; j++)
				same = keys_equal(&key_eq[j], key_coll[j], pslot->tts_values[1 + j],
								  pslot->tts_isnull[1 + j], rslot->tts_values[1 + j],
								  rslot->tts_isnull[1 + j]);
			ExecDropSingleTupleTableSlot(pslot);
			if (same)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("a privacy unit's group came twice from the workers"),
						 errdetail("Each unit is bounded from one state per group; nothing was released.")));
		}
		if (last_row != NULL)
			pfree(last_row);
		last_row = ExecCopySlotMinimalTuple(rslot);
		keep_row(kept, &nkept, dr->unit_groups, rslot);
		CHECK_FOR_INTERRUPTS();
	}
	tuplesort_end(byunit);

	if (bygroup == NULL)
	{
		/* without GROUP BY, one group, released whatever its units */
		put_group(dr, out, outdesc, NULL, NULL, 0, &g);
		return out;
	}

	/* each group: the sum of its units' bounded contributions */
	tuplesort_performsort(bygroup);
	{
		Datum	   *keys = palloc(sizeof(Datum) * ngroups);
		bool	   *keynulls = palloc(sizeof(bool) * ngroups);
		bool		have_group = false;

		for (;;)
		{
			bool		more = tuplesort_gettupleslot(bygroup, true, true, oslot, NULL);
			bool		same = more && have_group;

			if (more)
				slot_getallattrs(oslot);
			for (int j = 0; same && j < ngroups; j++)
				same = keys_equal(&key_eq[j], key_coll[j], keys[j], keynulls[j],
								  oslot->tts_values[j], oslot->tts_isnull[j]);
			if (have_group && !same)
			{
				put_group(dr, out, outdesc, keys, keynulls, ngroups, &g);
				memset(g.count, 0, sizeof(int64) * dr->ncalls);
				memset(g.sum, 0, sizeof(int128) * dr->ncalls);
				g.units = 0;
				have_group = false;
			}
			if (!more)
				break;
			if (!have_group)
			{
				for (int j = 0; j < ngroups; j++)
				{
					Form_pg_attribute att = TupleDescAttr(outdesc, j);

					keynulls[j] = oslot->tts_isnull[j];
					keys[j] = keynulls[j] ? (Datum) 0 :
						datumCopy(oslot->tts_values[j], att->attbyval, att->attlen);
				}
				have_group = true;
			}
			for (int i = 0; i < dr->ncalls; i++)
			{
				const DpDistState *st = (const DpDistState *) DatumGetPointer(oslot->tts_values[ngroups + i]);

				if (i == dr->select)
					continue;
				g.count[i] += st->count;
				g.sum[i] += st->sum;
			}
			g.units++;
			CHECK_FOR_INTERRUPTS();
		}
	}
	tuplesort_end(bygroup);
	ExecDropSingleTupleTableSlot(rslot);
	ExecDropSingleTupleTableSlot(oslot);
	return out;
}

/*
 * A group of the inner statement with a public domain (dist_plan.c): true
 * if its keys (the first columns) are a key of the domain, which then
 * replaces them (the domain's own values, whatever the workers' spelling
 * of an equal value) and is marked seen
 */
static bool
domain_key(DpKeyset *ks, bool *seen, Datum *values, bool *nulls)
{
	int			index = dp_keyset_lookup(ks, values, nulls);

	if (index < 0 || seen[index])
		return false;
	seen[index] = true;
	for (int c = 0; c < dp_keyset_hashed(ks); c++)
		values[c] = dp_keyset_value(ks, index, c, &nulls[c]);
	return true;
}

Datum
dp_dist_run(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const void *run_expr = fcinfo->flinfo->fn_expr;
	EState	   *estate;
	List	   *tickets = NIL;
	ListCell   *lc;
	DistRun    *dr;
	Query	   *inner;
	Oid			relid;
	int			call = 0;
	Tuplestorestate *raw;
	Tuplestorestate *out;
	TupleTableSlot *slot;
	TupleDesc	desc;
	TupleDesc	rawdesc;
	MemoryContext oldcxt;
	uint64		serial = 0;
	char	   *fragment;
	const char *why;
	int			ncalls;
	Datum	   *values;
	bool	   *nulls;
	Oid			run_as;
	char	   *placements;
	DpKeyset   *ks = NULL;
	bool	   *seen = NULL;
	int			unit_groups = 0;
	bytea	   *keyset = NULL;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo) ||
		!(rsinfo->allowedModes & SFRM_Materialize) || rsinfo->expectedDesc == NULL ||
		rsinfo->econtext == NULL || rsinfo->econtext->ecxt_estate == NULL)
		bad_inner();
	estate = rsinfo->econtext->ecxt_estate;
	foreach(lc, dp_execution_releases(estate))
	{
		DpRelease  *r = lfirst(lc);

		if (r->agg_node == run_expr)
			tickets = lappend(tickets, r);
	}
	if (tickets == NIL)
		bad_inner();

	/* the second argument: the k of a privacy unit, or a public domain's key set */
	if (PG_NARGS() > 1 && get_fn_expr_argtype(fcinfo->flinfo, 1) == INT4OID)
		unit_groups = PG_GETARG_INT32(1);
	else if (PG_NARGS() > 1 && !PG_ARGISNULL(1))
	{
		if (get_fn_expr_argtype(fcinfo->flinfo, 1) != BYTEAOID)
			bad_inner();
		keyset = PG_GETARG_BYTEA_PP(1);
	}
	dr = new_run(estate, run_expr, tickets, unit_groups);
	inner = (Query *) stringToNode(text_to_cstring(PG_GETARG_TEXT_PP(0)));
	relid = linitial_node(RangeTblEntry, inner->rtable)->relid;
	ncalls = dr->ncalls;
	if (dr->select >= 0)
	{
		/*
		 * The selection counts the group's rows (each row a unit): every
		 * call without FILTER sees them all, and its state counts them
		 * (rows); with privacy units it counts units, which dist_run knows
		 * once it has bounded them.  Then the workers need not count it (it
		 * is the last column, dist_plan.c).
		 */
		if (dr->select != dr->ncalls - 1 ||
			!IsA(llast_node(TargetEntry, inner->targetList)->expr, Aggref))
			bad_inner();
		foreach(lc, inner->targetList)
		{
			TargetEntry *tle = lfirst(lc);

			if (dr->unit_groups == 0 && dr->rows_from < 0 && IsA(tle->expr, Aggref) &&
				((Aggref *) tle->expr)->aggfilter == NULL && call < dr->select)
				dr->rows_from = call;
			if (IsA(tle->expr, Aggref))
				call++;
		}
		call = 0;
		if (dr->unit_groups > 0 || dr->rows_from >= 0)
		{
			inner->targetList = list_delete_last(inner->targetList);
			ncalls--;
		}
	}
	foreach(lc, inner->targetList)
	{
		TargetEntry *tle = lfirst(lc);

		if (IsA(tle->expr, Aggref))
		{
			if (call >= dr->ncalls)
				bad_inner();
			tle->expr = (Expr *) partial_call((Aggref *) tle->expr, dr->units[call]);
			call++;
		}
	}
	if (call != ncalls)
		bad_inner();
	fragment = dp_fragment_fingerprint(inner, get_namespace_name(get_rel_namespace(relid)),
									   get_rel_name(relid), estate->es_param_list_info, true,
									   &why);
	if (fragment == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("this DP statement on a Citus table cannot be bound to its fragments"),
				 errdetail("%s", why)));
	call = 0;
	placements = dp_citus_placements(relid);
	foreach(lc, inner->targetList)
	{
		TargetEntry *tle = lfirst(lc);

		if (IsA(tle->expr, Aggref))
			sign_call(dr, dr->units[call++], (Aggref *) tle->expr, relid, fragment, placements);
	}

	/* the key set of a public domain: opened before any row is read */
	if (keyset != NULL)
	{
		ks = dp_keyset_open(keyset, estate->es_query_cxt);
		if (dp_keyset_hashed(ks) > rsinfo->expectedDesc->natts - dr->ncalls)
			bad_inner();
		seen = palloc0(sizeof(bool) * Max(dp_keyset_size(ks), 1));
	}


	/*
	 * As the owner if the current user is untrusted now (a cursor may be
	 * fetched by another role than the one that opened it): its
	 * transaction then propagates no SET command (dist_session.c).
	 */
	run_as = inner_run_as(relid);
	if (OidIsValid(run_as))
		dp_dist_session_run_as_owner();
	raw = run_inner(inner, estate, run_as, &rawdesc);

	desc = rsinfo->expectedDesc;
	if (dr->unit_groups > 0)
	{
		raw = bound_units(dr, inner, rawdesc, raw, desc);
		rawdesc = desc;
	}
	else if (rawdesc->natts != desc->natts - (ncalls < dr->ncalls ? 1 : 0))
		bad_inner();
	oldcxt = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	out = tuplestore_begin_heap(false, false, work_mem);
	MemoryContextSwitchTo(oldcxt);
	slot = MakeSingleTupleTableSlot(rawdesc, &TTSOpsMinimalTuple);
	values = palloc(sizeof(Datum) * desc->natts);
	nulls = palloc(sizeof(bool) * desc->natts);
	while (tuplestore_gettupleslot(raw, true, false, slot))
	{
		slot_getallattrs(slot);
		/* the selection's column, last, when the workers did not count it */
		values[desc->natts - 1] = (Datum) 0;
		nulls[desc->natts - 1] = true;
		memcpy(values, slot->tts_values, sizeof(Datum) * rawdesc->natts);
		memcpy(nulls, slot->tts_isnull, sizeof(bool) * rawdesc->natts);
		number_states(dr, desc, values, nulls, ++serial);
		if (ks != NULL && !domain_key(ks, seen, values, nulls))
		{
			ExecClearTuple(slot);
			continue;
		}
		if (selected(dr, desc, values, nulls))
			tuplestore_putvalues(out, desc, values, nulls);
		ExecClearTuple(slot);
	}
	ExecDropSingleTupleTableSlot(slot);
	tuplestore_end(raw);
	/* every key of the domain no worker returned: empty states */
	if (ks != NULL)
	{
		for (int i = 0; i < dp_keyset_size(ks); i++)
		{
			if (seen[i])
				continue;
			for (int c = 0; c < desc->natts; c++)
			{
				values[c] = (Datum) 0;
				nulls[c] = true;
			}
			for (int c = 0; c < dp_keyset_hashed(ks); c++)
				values[c] = dp_keyset_value(ks, i, c, &nulls[c]);
			number_states(dr, desc, values, nulls, ++serial);
			tuplestore_putvalues(out, desc, values, nulls);
		}
	}

	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = out;
	rsinfo->setDesc = desc;
	return (Datum) 0;
}

/* ---------- the coordinator's releases ---------- */

/*
 * The ticket of a partial state's call and the slot of its release for
 * the state's group; ERROR if the state belongs to no running statement.
 */
const DpRelease *
dp_dist_slot(const DpDistState *st, int call, DpDistSlot **slot, MemoryContext *cxt)
{
	DpDistSlot	key;
	bool		found;

	for (DistRun *dr = runs; dr != NULL; dr = dr->next)
	{
		if (memcmp(dr->nonce, st->nonce, DP_NONCE_LEN) != 0)
			continue;
		if (call < 0 || call >= dr->ncalls || call == dr->select ||
			st->fingerprint != dr->units[call]->fingerprint || st->serial == 0)
			break;
		memset(&key, 0, sizeof(key));
		key.serial = st->serial;
		key.call = call;
		*slot = hash_search(dr->slots, &key, HASH_ENTER, &found);
		if (!found)
			(*slot)->done = false;
		*cxt = dr->cxt;
		return dr->tickets[call];
	}
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("dp_agg_internal.dist_release releases only the states of the statement being run"),
			 errdetail("This state was not made by a priced and charged DP statement.")));
	return NULL;				/* keep compiler quiet */
}

/* ---------- fragments on a worker ---------- */

typedef struct FragmentWalk
{
	List	   *found;			/* of a plan: pairs (Aggref, spec); of a query: specs */
} FragmentWalk;

static bool
fragment_walker(Node *node, FragmentWalk *w)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		Aggref	   *a = (Aggref *) node;
		Node	   *spec = NULL;

		/* dp_agg.sum(spec [, value]); not dp_agg.sum(dist_state), which adds states */
		if (dp_is_partial_sum(a))
			spec = (Node *) linitial_node(TargetEntry, a->args)->expr;
		if (spec != NULL)
			w->found = lappend(w->found, list_make2(a, spec));
		return false;
	}
	return expression_tree_walker(node, fragment_walker, w);
}

static void
walk_fragment(Plan *plan, FragmentWalk *w)
{
	ListCell   *lc;

	if (plan == NULL)
		return;
	(void) fragment_walker((Node *) plan->targetlist, w);
	(void) fragment_walker((Node *) plan->qual, w);
	foreach(lc, dp_plan_children(plan))
		walk_fragment(lfirst(lc), w);
}

/*
 * The plan reads shards of the signed table and nothing else (no function,
 * sub-query or list of values that could read rows another way), each on
 * the node group that held it when the statement was signed (not after a
 * shard move), and, for a partitioned table, the partitions of those shards
 * (the planner adds them; each is a shard of a partition, co-located with
 * its parent's shard).
 */
static void
check_shards(PlannedStmt *stmt, const DpFragmentSpec *spec)
{
	ListCell   *lc;
	int			group = -1;
	List	   *shards = NIL;
	List	   *others = NIL;

	foreach(lc, stmt->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);
		char	   *relname;
		char	   *placement;
		int64		shardid;

		if (rte->rtekind != RTE_RELATION)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("a signed fragment of a DP statement may read shards of \"%s.%s\" only",
							spec->nspname, spec->relname),
					 errdetail("The fragment reads something else than a table.")));
		relname = get_rel_name(rte->relid);
		if (strcmp(get_namespace_name(get_rel_namespace(rte->relid)), spec->nspname) != 0 ||
			!dp_citus_shard_name_of(relname, spec->relname, &shardid))
		{
			others = lappend_oid(others, rte->relid);
			continue;
		}
		if (group < 0)
			group = dp_citus_local_group();
		placement = psprintf(";" INT64_FORMAT ":%d;", shardid, group);
		if (strstr(psprintf(";%s", spec->placements), placement) == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("a signed fragment of a DP statement names another node for shard \"%s\"",
							relname),
					 errdetail("The coordinator signed it for the node that held the shard then (group %d is this node).",
							   group)));
		shards = lappend_oid(shards, rte->relid);
	}
	if (shards == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("a signed fragment of a DP statement must read a shard of \"%s.%s\"",
						spec->nspname, spec->relname)));
	foreach(lc, others)
	{
		ListCell   *lc2;
		bool		partition = false;

		foreach(lc2, dp_relation_ancestors(lfirst_oid(lc), true))
			partition |= list_member_oid(shards, lfirst_oid(lc2));
		if (!partition)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("a signed fragment of a DP statement may read shards of \"%s.%s\" only",
							spec->nspname, spec->relname),
					 errdetail("The fragment reads \"%s\".", get_rel_name(lfirst_oid(lc)))));
	}
}

/* the signed specification of a partial sum, checked and parsed */
static void
verify_spec_arg(Node *spec_expr, DpFragmentSpec *spec)
{
	if (!IsA(spec_expr, Const) || ((Const *) spec_expr)->constisnull ||
		((Const *) spec_expr)->consttype != TEXTOID)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("dp_agg_internal.sum needs a signed specification as a constant")));
	dp_fragment_verify(TextDatumGetCString(((Const *) spec_expr)->constvalue), spec);
}

static bool
query_fragment_walker(Node *node, FragmentWalk *w)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, query_fragment_walker, w, 0);
	if (IsA(node, Aggref) && dp_is_partial_sum((Aggref *) node))
		w->found = lappend(w->found, linitial_node(TargetEntry, ((Aggref *) node)->args)->expr);
	return expression_tree_walker(node, query_fragment_walker, w);
}

/* a macro, so that the detail is a literal format string where it is raised */
#define fragment_changed(...) \
	ereport(ERROR, \
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE), \
			 errmsg("a signed fragment of a DP statement differs from the fragment the coordinator signed"), \
			 errdetail(__VA_ARGS__), \
			 errhint("Only the coordinator of the Citus cluster sends fragments with DP aggregates.")))

/*
 * On a worker, at planning (before anything is read): a query with partial
 * sums is the fragment their signatures cover.  Its fingerprint
 * (dist_fingerprint.c) is computed with the shard it reads named as the
 * signed table, and with the parameter values fixed for this plan only;
 * it must equal the one in every signature.  Returns the specifications
 * checked (NIL if the query has no partial sum), for
 * dp_dist_check_fragment_plan.  The executor checks the signatures again
 * with the shards and nodes (dp_dist_fragment_releases).
 */
List *
dp_dist_check_fragment_query(Query *q, ParamListInfo params)
{
	FragmentWalk w = {NIL};
	DpFragmentSpec spec;
	const char *nspname;
	const char *relname;
	char	   *fragment;
	const char *why;
	ListCell   *lc;
	int64		shardid;

	if (!dp_extension_present())
		return NIL;
	(void) query_fragment_walker((Node *) q, &w);
	if (w.found == NIL)
		return NIL;
	verify_spec_arg(linitial(w.found), &spec);

	/* the shard is named as its table; anything else by its own name */
	nspname = relname = "";
	if (list_length(q->rtable) == 1 && linitial_node(RangeTblEntry, q->rtable)->rtekind == RTE_RELATION)
	{
		Oid			relid = linitial_node(RangeTblEntry, q->rtable)->relid;

		nspname = get_namespace_name(get_rel_namespace(relid));
		relname = get_rel_name(relid);
		if (strcmp(nspname, spec.nspname) == 0 &&
			dp_citus_shard_name_of(relname, spec.relname, &shardid))
			relname = spec.relname;
	}
	fragment = dp_fragment_fingerprint(q, nspname, relname, params, false, &why);
	if (fragment == NULL)
		fragment_changed("%s", why);
	foreach(lc, w.found)
	{
		verify_spec_arg(lfirst(lc), &spec);
		if (strcmp(spec.fragment, fragment) != 0)
			fragment_changed("Its table, sampling, WHERE, GROUP BY or aggregate arguments differ from those the coordinator signed.");
	}

	/*
	 * No message below WARNING goes back to Citus while the fragment runs
	 * (until the transaction ends): settings the coordinator's session
	 * propagated (citus.propagate_set_commands) could otherwise make this
	 * session report what it reads (trace_sort counts the rows it sorts),
	 * and Citus relays a worker's messages to the client.
	 */
	if (client_min_messages < WARNING)
		(void) set_config_option("client_min_messages", "warning", PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_LOCAL, true, 0, false);
	return w.found;
}

/*
 * After planning, on a worker: every partial sum of the plan is one of the
 * query's, checked above.  The planner inlines SQL functions, so a
 * fragment in a function's body would reach the plan without having been
 * checked as a query.
 */
void
dp_dist_check_fragment_plan(PlannedStmt *stmt, List *checked)
{
	FragmentWalk w = {NIL};
	ListCell   *lc;

	walk_fragment(stmt->planTree, &w);
	foreach(lc, stmt->subplans)
		walk_fragment(lfirst(lc), &w);
	foreach(lc, w.found)
	{
		Node	   *spec = lsecond((List *) lfirst(lc));
		ListCell   *lc2;
		bool		seen = false;

		foreach(lc2, checked)
			if (equal(spec, lfirst(lc2)))
				seen = true;
		if (!seen)
			fragment_changed("It reaches the plan through a function the planner inlined, not as the query sent.");
	}
}

static void
claim_shards(PlannedStmt *stmt, const uint8 *nonce, TimestampTz signed_at, TimestampTz expiry)
{
	ListCell   *lc;

	foreach(lc, stmt->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		if (rte->rtekind == RTE_RELATION)
			dp_replay_claim(nonce, rte->relid, signed_at, expiry);
	}
}

/*
 * The partial aggregate a specification is given to takes the arguments
 * its kind and value type need (the transition function reads the value
 * as the specification's type): a specification moved to another call of
 * its fragment must not make it read a value as another type.
 */
static void
check_call_types(Aggref *aggref, const DpFragmentSpec *spec)
{
	int			nargs = list_length(aggref->args);
	Oid			valtype = InvalidOid;
	bool		ok;

	if (nargs == 2)
		valtype = exprType((Node *) lsecond_node(TargetEntry, aggref->args)->expr);

	switch ((DpAggKind) spec->kind)
	{
		case DP_COUNT_STAR:
			ok = nargs == 1;
			break;
		case DP_COUNT:
			ok = nargs == 2 && valtype == BOOLOID;
			break;
		default:
			ok = nargs == 2 && valtype == spec->valtype;
			break;
	}
	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("a signed specification of a DP aggregate is given to a call of another type"),
				 errdetail("The specification is for another kind of call or another value type."),
				 errhint("Only the coordinator of the Citus cluster sends fragments with DP aggregates.")));
}

static DpRelease *
fragment_release(PlannedStmt *stmt, Aggref *aggref, Node *spec_expr, TimestampTz *signed_at,
				 TimestampTz *expiry)
{
	DpFragmentSpec spec;
	DpCallInfo	info;
	Datum		lower = (Datum) 0;
	Datum		upper = (Datum) 0;
	DpRelease  *r;
	uint8	   *nonce;

	verify_spec_arg(spec_expr, &spec);
	check_shards(stmt, &spec);
	check_call_types(aggref, &spec);
	*signed_at = spec.signed_at;
	*expiry = spec.expiry;

	memset(&info, 0, sizeof(info));
	info.kind = (DpAggKind) spec.kind;
	info.vclass = (DpValueClass) spec.vclass;
	info.valtype = spec.valtype;
	info.lower_arg = info.upper_arg = info.epsilon_arg = info.delta_arg = -1;
	if (DP_KIND_SUMS(spec.kind))
	{
		Oid			typinput,
					typioparam;

		getTypeInputInfo(spec.valtype, &typinput, &typioparam);
		lower = OidInputFunctionCall(typinput, spec.lower, typioparam, -1);
		upper = OidInputFunctionCall(typinput, spec.upper, typioparam, -1);
	}
	r = dp_release_for_fragment(&info, lower, upper, spec.grid_exp, spec.sq_shift);
	if (r->fingerprint != spec.fingerprint)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the units of a signed fragment differ on this node"),
				 errdetail("The coordinator and this worker compute the accumulation units differently."),
				 errhint("Install the same version of dp_agg on every node.")));
	nonce = palloc(DP_NONCE_LEN);
	memcpy(nonce, spec.nonce, DP_NONCE_LEN);
	r->dist_nonce = nonce;
	r->aggref = aggref;
	r->finalize = false;
	return r;
}

/*
 * Tickets of the partial sums of a fragment (NIL if it has none),
 * each signature checked; they accumulate and never release.  A fragment
 * is not run under EXPLAIN ANALYZE (instrument_options): the row counts of
 * its plan nodes would tell how many rows of the shard pass its filter.
 */
List *
dp_dist_fragment_releases(PlannedStmt *stmt, int instrument_options)
{
	FragmentWalk w = {NIL};
	List	   *releases = NIL;
	ListCell   *lc;
	TimestampTz signed_at;
	TimestampTz expiry;

	if (stmt->commandType == CMD_UTILITY || !dp_extension_present())
		return NIL;
	walk_fragment(stmt->planTree, &w);
	foreach(lc, stmt->subplans)
		walk_fragment(lfirst(lc), &w);
	if (w.found != NIL && (instrument_options & (INSTRUMENT_TIMER | INSTRUMENT_ROWS)))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("a signed fragment of a DP statement cannot be run under EXPLAIN ANALYZE"),
				 errdetail("EXPLAIN ANALYZE, and auto_explain with log_analyze, show how many rows of the shard pass the fragment's filter."),
				 errhint("Explain the DP statement on the coordinator.")));
	foreach(lc, w.found)
	{
		List	   *pair = lfirst(lc);
		DpRelease  *r = fragment_release(stmt, linitial(pair), lsecond(pair), &signed_at,
										 &expiry);

		/* one claim per statement and shard (its calls share the nonce) */
		if (releases == NIL && !IsParallelWorker())
			claim_shards(stmt, r->dist_nonce, signed_at, expiry);
		else if (releases != NIL &&
				 memcmp(r->dist_nonce, ((DpRelease *) linitial(releases))->dist_nonce,
						DP_NONCE_LEN) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("a fragment of a DP statement mixes signatures of different statements")));
		releases = lappend(releases, r);
	}
	return releases;
}
