/*-------------------------------------------------------------------------
 *
 * dist_exec.c
 *	  DP statements on Citus tables: the coordinator's run.
 *
 * On the coordinator (dist_plan.c made the outer statement; at executor
 * start dist_access.c checked who may run its inner statement and
 * dist_price.c priced its DP calls):
 *
 * - dist_run, when the scan starts, draws the statement's random nonce,
 *   replaces each DP call of the inner statement by the partial aggregate
 *   dp_agg.sum with its signed specification (dist_token.c), which holds
 *   the fingerprint of the fragment (dist_fingerprint.c), and runs it
 *   through Citus, once: as the table's owner on a protected table the
 *   current user is not trusted for (dp_dist_run_as, dist_access.c).  With a privacy unit,
 *   it bounds each unit's contribution from the exact states of its groups
 *   (dist_units.c).  It gives each group's states a serial number.
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
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_aggregate.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/tstoreReceiver.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"

#include "catalog.h"
#include "compat.h"
#include "dist_access.h"
#include "dist_catalog.h"
#include "dist_exec.h"
#include "dist_fingerprint.h"
#include "dist_inner.h"
#include "dist_plan.h"
#include "dist_session.h"
#include "dist_state.h"
#include "dist_token.h"
#include "dist_units.h"
#include "keyset.h"
#include "random.h"
#include "registry.h"
#include "release.h"
#include "selection_mechanism.h"

PG_FUNCTION_INFO_V1(dp_dist_run);

/* ---------- the coordinator's run ---------- */

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

static char *bound_text(const DpRelease *r, bool upper);

/*
 * The units of a call's partial state: its ticket's, but for the private
 * selection (below) and for a call over privacy units: the workers then
 * accumulate the rows of each (unit, group) exactly, in the grid and
 * bounds of the ticket but without the unit's bounds, which dist_run
 * applies (dp_dist_bound_units).
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

	/*
	 * The private selection's state is the exact number of the group's rows
	 * (each row one unit), accumulated as dp_count(*)'s by the workers.
	 */
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
 * run_as if it is valid (dp_dist_run_as): planned and run as that role, so
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
		DpDistState *st = dp_dist_checked_state(dr, i, values[first + i], nulls[first + i]);

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
		dp_dist_bad_inner();
	estate = rsinfo->econtext->ecxt_estate;
	foreach(lc, dp_execution_releases(estate))
	{
		DpRelease  *r = lfirst(lc);

		if (r->agg_node == run_expr)
			tickets = lappend(tickets, r);
	}
	if (tickets == NIL)
		dp_dist_bad_inner();

	/* the second argument: the k of a privacy unit, or a public domain's key set */
	if (PG_NARGS() > 1 && get_fn_expr_argtype(fcinfo->flinfo, 1) == INT4OID)
		unit_groups = PG_GETARG_INT32(1);
	else if (PG_NARGS() > 1 && !PG_ARGISNULL(1))
	{
		if (get_fn_expr_argtype(fcinfo->flinfo, 1) != BYTEAOID)
			dp_dist_bad_inner();
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
			dp_dist_bad_inner();
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
				dp_dist_bad_inner();
			tle->expr = (Expr *) partial_call((Aggref *) tle->expr, dr->units[call]);
			call++;
		}
	}
	if (call != ncalls)
		dp_dist_bad_inner();
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
			dp_dist_bad_inner();
		seen = palloc0(sizeof(bool) * Max(dp_keyset_size(ks), 1));
	}

	/*
	 * As the owner if the current user is untrusted now (a cursor may be
	 * fetched by another role than the one that opened it): its
	 * transaction then propagates no SET command (dist_session.c).
	 */
	run_as = dp_dist_run_as(relid);
	if (OidIsValid(run_as))
		dp_dist_session_run_as_owner();
	raw = run_inner(inner, estate, run_as, &rawdesc);

	desc = rsinfo->expectedDesc;
	if (dr->unit_groups > 0)
	{
		raw = dp_dist_bound_units(dr, inner, rawdesc, raw, desc);
		rawdesc = desc;
	}
	else if (rawdesc->natts != desc->natts - (ncalls < dr->ncalls ? 1 : 0))
		dp_dist_bad_inner();
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

