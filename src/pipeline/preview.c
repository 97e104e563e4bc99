/*-------------------------------------------------------------------------
 *
 * preview.c
 *	  dp_agg.preview: the price and the error bars of a statement, before
 *	  paying.
 *
 * Noise in dp_agg does not depend on the data, so both the price and the
 * accuracy of every release are known from the statement alone.  preview
 * parses, analyses and plans the statement exactly as execution would (the
 * planner hook runs the guard), prices the plan with the same code
 * (price.c, release.c), and stops there: nothing is executed or charged.
 * A statement that preview accepts is accepted by execution at the same
 * price (as long as the settings and budget do not change in between), and
 * one it rejects is rejected with the same error.
 *
 * The planner can evaluate immutable and stable functions of constants and
 * inline SQL functions.  So that preview runs no code of the statement,
 * statements calling user-defined functions other than volatile ones
 * written in a procedural language are refused.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/dependency.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "commands/extension.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "parser/parser.h"
#include "tcop/tcopprot.h"
#include "tcop/utility.h"
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "admission.h"
#include "budget.h"
#include "budget_row.h"
#include "budget_store.h"
#include "calibrate.h"
#include "compat.h"
#include "describe.h"
#include "dist_price.h"
#include "price.h"
#include "protect_check.h"
#include "release_rdp.h"

PG_FUNCTION_INFO_V1(dp_preview);

/* ---------- no user code may run ---------- */

static bool
user_function(Oid func, void *context)
{
	HeapTuple	tup;
	bool		risky;

	if (func < FirstNormalObjectId)
		return false;
	if (getExtensionOfObject(ProcedureRelationId, func) == get_extension_oid("dp_agg", true))
		return false;
	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(func));
	if (!HeapTupleIsValid(tup))
		return false;
	/* the planner may evaluate non-volatile functions and inline SQL ones */
	risky = ((Form_pg_proc) GETSTRUCT(tup))->provolatile != PROVOLATILE_VOLATILE ||
		((Form_pg_proc) GETSTRUCT(tup))->prolang == SQLlanguageId;
	ReleaseSysCache(tup);
	if (risky)
		*(Oid *) context = func;
	return risky;
}

static bool
user_function_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (check_functions_in_node(node, user_function, context))
		return true;
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, user_function_walker, context, 0);
	return expression_tree_walker(node, user_function_walker, context);
}

/* ---------- the statement ---------- */

static PlannedStmt *
plan_statement(const char *query, bool *untrusted)
{
	List	   *raw = pg_parse_query(query);
	RawStmt    *rs;
	List	   *queries;
	Query	   *q;
	Oid			func = InvalidOid;
	PlannedStmt *stmt;
	DpProtectStart protect;

	if (list_length(raw) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("dp_agg.preview takes exactly one statement"),
				 errdetail("The text holds %d statements.", list_length(raw))));
	rs = linitial_node(RawStmt, raw);
	if (IsA(rs->stmt, SelectStmt) && ((SelectStmt *) rs->stmt)->intoClause != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("dp_agg.preview takes a SELECT statement"),
				 errdetail("SELECT INTO creates a table.")));
	if (!IsA(rs->stmt, SelectStmt))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("dp_agg.preview takes a SELECT statement"),
				 errdetail("The statement is %s.", CreateCommandName(rs->stmt))));

	queries = pg_analyze_and_rewrite_fixedparams(rs, query, NULL, 0, NULL);
	if (list_length(queries) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("dp_agg.preview takes a SELECT statement"),
				 errdetail("The statement was rewritten into %d statements.", list_length(queries))));
	q = linitial_node(Query, queries);
	if (q->commandType != CMD_SELECT || q->utilityStmt != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("dp_agg.preview takes a SELECT statement")));
	if (query_tree_walker(q, user_function_walker, &func, 0))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("dp_agg.preview does not plan statements that call function %s",
						format_procedure(func)),
				 errdetail("Planning could evaluate or inline it, and preview runs nothing."),
				 errhint("Preview the statement without the function, or run it.")));

	stmt = pg_plan_query(q, query, CURSOR_OPT_PARALLEL_OK, NULL);

	/*
	 * The same privileges as execution would check, with the same rules
	 * for protected relations (protect_check.c)
	 */
	dp_protect_start(stmt, NULL, 0, 0, &protect);
	PG_TRY();
	{
		DP_CHECK_PLAN_PERMISSIONS(stmt);
	}
	PG_FINALLY();
	{
		dp_protect_end(&protect);
	}
	PG_END_TRY();
	*untrusted = protect.untrusted;
	return stmt;
}

/*
 * The caller's budget, with SQL objects older than 0.4 (one budget per
 * role, read through dp_agg.my_budget).
 */
static void
caller_budget_0_3(double epsilon, double delta, const double *curve,
				  double selection_epsilon, double selection_delta,
				  bool *has_budget, bool *affordable)
{
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute(dp_budget_has_selection_sums()
					? "SELECT " DP_BUDGET_ROW_COLUMNS " FROM dp_agg.my_budget"
					: "SELECT " DP_BUDGET_ROW_COLUMNS_0_2 " FROM dp_agg.my_budget",
					true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read dp_agg.my_budget");
	if (SPI_processed == 1)
	{
		DpBudget	b;
		double		composed;

		dp_budget_row_decode(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, &b);
		*has_budget = true;
		*affordable = dp_budget_admits(&b, epsilon, delta, curve, selection_epsilon,
									   selection_delta, &composed);
	}
	SPI_finish();
}

/* can one budget pay, as of now (its window renewed if due, its lifetime limit)? */
static bool
budget_pays(DpBudgetRow *row, double epsilon, double delta, const double *curve,
			double selection_epsilon, double selection_delta)
{
	TimestampTz end;
	double		composed;

	dp_budget_roll_window(row, GetCurrentTimestamp(), &end);
	if (row->has_lifetime &&
		(dp_add_up(row->lifetime_epsilon_spent, epsilon) > row->lifetime_epsilon_limit ||
		 dp_add_up(row->lifetime_delta_spent, delta) > row->lifetime_delta_limit))
		return false;
	return dp_budget_admits(&row->b, epsilon, delta, curve, selection_epsilon, selection_delta,
							&composed);
}

static void read_budgets(PlannedStmt *stmt, List *priced, double epsilon, double delta,
						 const double *curve, double selection_epsilon, double selection_delta,
						 bool *has_budget, bool *affordable);

/*
 * The caller's budgets: can every budget that would pay for the statement
 * (the caller's own, its groups', those of the relations the plan reads)
 * pay for it, and is it within the caller's caps, by the charger's rules
 * (charger.c)?  has_budget is false when no budget of the role or of a
 * group would pay.  PLD certificates are not composed here (a 'pld'
 * budget is predicted by its basic and Renyi certificates).
 */
static void
caller_budget(PlannedStmt *stmt, List *priced, double epsilon, double delta, const double *curve,
			  double selection_epsilon, double selection_delta,
			  bool *has_budget, bool *affordable)
{
	bool		fresh;

	*has_budget = false;
	*affordable = false;
	/*
	 * the charges decided on leases, folded, and read with a snapshot taken
	 * after the fold (READ COMMITTED: as the statement's own would be)
	 */
	fresh = dp_fold_journal() && !IsolationUsesXactSnapshot();
	if (fresh)
		PushActiveSnapshot(GetLatestSnapshot());
	PG_TRY();
	{
		read_budgets(stmt, priced, epsilon, delta, curve, selection_epsilon, selection_delta,
					 has_budget, affordable);
	}
	PG_FINALLY();
	{
		if (fresh)
			PopActiveSnapshot();
	}
	PG_END_TRY();
}

static void
read_budgets(PlannedStmt *stmt, List *priced, double epsilon, double delta, const double *curve,
			 double selection_epsilon, double selection_delta, bool *has_budget, bool *affordable)
{
	DpBudgetStore store;
	Oid			role = GetUserId();
	List	   *groups;
	List	   *read;
	List	   *ancestors;
	DpCaps		caps;
	DpBudgetRow row;
	double		call_epsilon = 0,
				call_delta = 0;
	ListCell   *lc;
	bool		pays = true;

	if (!dp_budget_store_open(&store, false))
		return;
	if (!dp_budget_store_policies(&store))
	{
		dp_budget_store_close(&store);
		caller_budget_0_3(epsilon, delta, curve, selection_epsilon, selection_delta,
						  has_budget, affordable);
		return;
	}
	groups = dp_role_groups(role);
	if (dp_budget_fetch_role(&store, role, &row))
	{
		*has_budget = true;
		pays = budget_pays(&row, epsilon, delta, curve, selection_epsilon, selection_delta);
	}
	foreach(lc, groups)
	{
		if (dp_budget_fetch_role(&store, lfirst_oid(lc), &row) && row.kind == DP_BUDGET_GROUP)
		{
			*has_budget = true;
			pays = pays && budget_pays(&row, epsilon, delta, curve, selection_epsilon,
									   selection_delta);
		}
	}
	dp_statement_relations(stmt, &read, &ancestors);
	foreach(lc, list_concat(read, ancestors))
	{
		if (dp_budget_fetch_relation(&store, lfirst_oid(lc), &row))
			pays = pays && budget_pays(&row, epsilon, delta, curve, selection_epsilon,
									   selection_delta);
	}
	dp_budget_store_close(&store);

	foreach(lc, priced)
	{
		DpRelease  *r = lfirst(lc);

		call_epsilon = Max(call_epsilon, r->epsilon);
		call_delta = Max(call_delta, r->delta);
	}
	dp_caps_of(role, groups, &caps);
	{
		const double asked[DP_CAP_KINDS] = {epsilon, delta, call_epsilon, call_delta};

		for (int k = 0; k < DP_CAP_KINDS; k++)
			if (caps.set[k] && !(asked[k] <= caps.cap[k]))
				pays = false;
	}
	*affordable = *has_budget && pays;
}

#define PREVIEW_COLUMNS 14

/*
 * The row of a statement's private selection of groups: its price, and
 * max_groups_contributed as the sensitivity (a unit changes the count of
 * at most that many groups, each by one); Gaussian thresholding's sigma as
 * the noise scale; no grid or interval (dp_agg.selection_probability gives
 * its accuracy).  The groups of a public domain have a row of their own:
 * release "public_keys", mechanism "none", no price; so does top-k
 * (release "top_k"), with the noise scale of its rounds.
 */
static void
selection_row(ReturnSetInfo *rsinfo, int call, const DpRelease *r, double epsilon,
			  double delta, bool has_budget, bool affordable)
{
	Datum		values[PREVIEW_COLUMNS] = {0};
	bool		nulls[PREVIEW_COLUMNS] = {0};

	values[0] = Int32GetDatum(call);
	values[1] = CStringGetTextDatum(dp_kind_name(r->call.kind));
	if (r->call.kind == DP_TOP_K)
	{
		/* each of the k rounds: Laplace noise on counts of sensitivity 1 */
		values[2] = CStringGetTextDatum("top_k");
		values[3] = CStringGetTextDatum("report_noisy_max");
		values[4] = Float8GetDatum(r->epsilon);
		values[5] = Float8GetDatum(0);
		values[6] = Float8GetDatum(1);
		values[7] = Float8GetDatum(r->count.noise_scale);
	}
	else if (r->call.kind == DP_PUBLIC)
	{
		values[2] = CStringGetTextDatum("public_keys");
		values[3] = CStringGetTextDatum("none");
		values[4] = Float8GetDatum(0);
		values[5] = Float8GetDatum(0);
		nulls[6] = nulls[7] = true;
	}
	else
	{
		values[2] = CStringGetTextDatum("selection");
		values[3] = CStringGetTextDatum(dp_selection_mechanism_name(&r->selection));
		values[4] = Float8GetDatum(r->selection.epsilon);
		values[5] = Float8GetDatum(r->selection.delta);
		values[6] = Float8GetDatum((double) r->selection.max_groups);
		values[7] = Float8GetDatum(r->selection.gauss.sigma);
		nulls[7] = r->selection.kind != DP_SELECTION_GAUSSIAN;
	}
	nulls[8] = nulls[9] = nulls[10] = true;
	values[11] = Float8GetDatum(epsilon);
	values[12] = Float8GetDatum(delta);
	values[13] = BoolGetDatum(affordable);
	nulls[13] = !has_budget;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * dp_agg.preview(query text): one row per noisy release of each DP
 * aggregate call of the statement (dp_avg has two), with the statement's
 * price and whether the caller's budget can pay it.
 */
Datum
dp_preview(PG_FUNCTION_ARGS)
{
	char	   *query = text_to_cstring(PG_GETARG_TEXT_PP(0));
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	PlannedStmt *stmt;
	List	   *releases;
	List	   *priced;
	double		epsilon,
				delta;
	bool		has_budget,
				affordable;
	ListCell   *lc;
	int			call = 0;
	double		curve[DP_RDP_ORDERS];
	bool		untrusted;
	double		selection_epsilon = 0,
				selection_delta = 0;

	stmt = plan_statement(query, &untrusted);
	releases = dp_price_plan(stmt, NULL, true);
	releases = list_concat(releases, dp_dist_price(stmt, NULL));	/* Citus tables */
	/* the floor on epsilon of untrusted roles, as at execution */
	if (untrusted)
		dp_protect_check_epsilon(releases);
	priced = dp_priced_releases(releases, &epsilon, &delta);
	if (priced == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the statement has no DP aggregate"),
				 errhint("dp_agg.preview prices statements that call dp_count, dp_sum, dp_avg, dp_var, dp_stddev, dp_percentile, dp_median or dp_bounds.")));
	memset(curve, 0, sizeof(curve));
	dp_statement_add_rdp(priced, curve);
	foreach(lc, priced)
		dp_release_add_selection(lfirst(lc), &selection_epsilon, &selection_delta);
	caller_budget(stmt, priced, epsilon, delta, curve, selection_epsilon, selection_delta,
				  &has_budget, &affordable);

	InitMaterializedSRF(fcinfo, 0);
	foreach(lc, priced)
	{
		DpRelease  *r = lfirst(lc);
		const DpNoiseSpec *parts[DP_MAX_NOISES];
		const char *names[DP_MAX_NOISES];
		int			nparts;

		call++;
		if (r->call.kind == DP_SELECT || r->call.kind == DP_PUBLIC || r->call.kind == DP_TOP_K)
		{
			selection_row(rsinfo, call, r, epsilon, delta, has_budget, affordable);
			continue;
		}
		nparts = dp_release_noises(r, parts, names);
		for (int i = 0; i < nparts; i++)
		{
			const DpNoiseSpec *ns = parts[i];
			Datum		values[PREVIEW_COLUMNS];
			bool		nulls[PREVIEW_COLUMNS] = {0};
			StringInfoData sampling;

			initStringInfo(&sampling);
			dp_sampling_describe(&sampling, r, ns);

			values[0] = Int32GetDatum(call);
			values[1] = CStringGetTextDatum(dp_kind_name(r->call.kind));
			values[2] = CStringGetTextDatum(names[i]);
			values[3] = CStringGetTextDatum(dp_mechanism_name(ns->mechanism));
			values[4] = Float8GetDatum(ns->epsilon);
			values[5] = Float8GetDatum(ns->delta);
			values[6] = Float8GetDatum(ns->sensitivity);
			values[7] = Float8GetDatum(ns->noise_scale);
			values[8] = Float8GetDatum(ldexp(1.0, ns->grid_exp));
			/* bounds estimated: the grid, and the noise in its units, follow them */
			nulls[8] = nulls[10] = dp_grid_at_release(r, ns);
			values[9] = DirectFunctionCall1(jsonb_in, CStringGetDatum(sampling.data));
			values[10] = Float8GetDatum(dp_release_halfwidth(r, ns, DP_CI_CONFIDENCE));
			values[11] = Float8GetDatum(epsilon);
			values[12] = Float8GetDatum(delta);
			values[13] = BoolGetDatum(affordable);
			nulls[13] = !has_budget;
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	return (Datum) 0;
}
