/*-------------------------------------------------------------------------
 *
 * dist_worker.c
 *	  DP statements on Citus tables: the signed fragments on a worker.
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
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "catalog/pg_type.h"
#include "executor/instrument.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"

#include "catalog.h"
#include "dist_catalog.h"
#include "dist_fingerprint.h"
#include "dist_plan.h"
#include "dist_replay.h"
#include "dist_token.h"
#include "dist_worker.h"
#include "inheritance.h"
#include "plan_nodes.h"
#include "release.h"

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
