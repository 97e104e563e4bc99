/*-------------------------------------------------------------------------
 *
 * budget.c
 *	  Privacy budgets: the price of a statement and its durable charge.
 *
 * The principal charged is the current role (current_user) when the
 * statement starts, the role privilege checks use: inside a SECURITY
 * DEFINER function that is the function's owner, after SET ROLE the role
 * set.  The price is the sum of the epsilons and of the deltas of the DP
 * aggregate calls the plan finalizes (price.c).  The charge is committed by the charger (charger.c) before the
 * executor reads a row; if it is not confirmed, the statement fails.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/xact.h"
#include "access/xlog.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "catalog/namespace.h"
#include "storage/lock.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"

#include "budget.h"
#include "calibrate.h"
#include "charger.h"
#include "compat.h"
#include "describe.h"
#include "pld_state.h"
#include "price.h"
#include "release_rdp.h"

void
dp_budget_init(void)
{
	dp_charger_init();
}

/* Fail closed where a charge cannot be made durable. */
static void
check_can_release(void)
{
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("DP aggregates cannot release values on a standby"),
				 errdetail("A release must first be charged durably to a privacy budget."),
				 errhint("Run the statement on the primary server.")));
	if (XactReadOnly)
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("DP aggregates cannot release values in a read-only transaction"),
				 errdetail("A release must first be charged durably to a privacy budget."),
				 errhint("Run the statement in a read-write transaction.")));
}

/*
 * The charger locks the role's row of dp_agg.budget and appends to
 * dp_agg.ledger.  A transaction that holds a lock on either table that
 * could conflict (set_budget, reset_budget, SELECT ... FOR UPDATE, LOCK)
 * would wait for the charger while the charger waits for it, unseen by the
 * deadlock detector: refuse before asking.
 */
static void
check_no_catalog_locks(void)
{
	static const char *const tables[] = {"budget", "ledger"};
	Oid			nsp = get_namespace_oid("dp_agg", true);

	if (!OidIsValid(nsp))
		return;
	for (size_t i = 0; i < lengthof(tables); i++)
	{
		Oid			relid = get_relname_relid(tables[i], nsp);
		LOCKTAG		tag;

		if (!OidIsValid(relid))
			continue;
		SET_LOCKTAG_RELATION(tag, MyDatabaseId, relid);
		for (LOCKMODE mode = RowShareLock; mode <= AccessExclusiveLock; mode++)
		{
			if (DP_LOCK_HELD_BY_ME(&tag, mode))
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("DP aggregates cannot release values in a transaction that locks dp_agg.%s",
								tables[i]),
						 errdetail("The charge would wait for this transaction to end. "
								   "Nothing was charged or released."),
						 errhint("Commit or roll back the changes to budgets first.")));
		}
	}
}

/* the text of the statement being charged */
static const char *
statement_text(QueryDesc *queryDesc, int *len)
{
	int			location = queryDesc->plannedstmt->stmt_location;
	const char *text = queryDesc->sourceText ? queryDesc->sourceText : "";

	*len = queryDesc->plannedstmt->stmt_len;
	return CleanQuerytext(text, &location, len);
}

/* the JSON array describing the priced calls, for the ledger */
static void
describe_calls(StringInfo detail, List *priced)
{
	ListCell   *lc;

	initStringInfo(detail);
	appendStringInfoChar(detail, '[');
	foreach(lc, priced)
	{
		if (lc != list_head(priced))
			appendStringInfoString(detail, ", ");
		dp_release_describe(detail, lfirst(lc));
	}
	appendStringInfoChar(detail, ']');
}

/*
 * The request to the charger: price (with the part its private selections
 * cost), statement text (without trailing semicolons and spaces),
 * description, Renyi DP curve and releases by kind (for 'pld' accounting),
 * in one palloc'd block.
 */
static DpChargeRequest *
build_request(QueryDesc *queryDesc, List *priced, double epsilon, double delta)
{
	StringInfoData detail;
	StringInfoData buf;
	DpChargeRequest *req;
	const char *query;
	int			query_len;
	double		curve[DP_RDP_ORDERS];
	DpPldState	pld;
	Size		pld_size;
	ListCell   *lc;
	double		selection_epsilon,
				selection_delta;

	describe_calls(&detail, priced);
	query = statement_text(queryDesc, &query_len);
	if (query_len < 0)
		query_len = strlen(query);
	while (query_len > 0 && (query[query_len - 1] == ';' || isspace((unsigned char) query[query_len - 1])))
		query_len--;

	memset(curve, 0, sizeof(curve));
	dp_statement_add_rdp(priced, curve);
	memset(&pld, 0, sizeof(pld));
	selection_epsilon = selection_delta = 0;
	foreach(lc, priced)
	{
		dp_release_add_pld(lfirst(lc), &pld);
		dp_release_add_selection(lfirst(lc), &selection_epsilon, &selection_delta);
	}
	pld_size = sizeof(DpPldTerm) * pld.n;

	initStringInfo(&buf);
	enlargeStringInfo(&buf, offsetof(DpChargeRequest, data) + query_len + detail.len + 2 +
					  sizeof(curve) + pld_size);
	req = (DpChargeRequest *) buf.data;
	req->size = offsetof(DpChargeRequest, data) + query_len + 1 + detail.len + 1 + sizeof(curve) +
		pld_size;
	req->role = GetUserId();
	req->epsilon = epsilon;
	req->delta = delta;
	req->selection_epsilon = selection_epsilon;
	req->selection_delta = selection_delta;
	req->query_len = query_len;
	req->detail_len = detail.len;
	req->n_rdp = DP_RDP_ORDERS;
	req->n_pld = pld.saturated ? -1 : pld.n;
	memcpy(req->data, query, query_len);
	req->data[query_len] = '\0';
	memcpy(req->data + query_len + 1, detail.data, detail.len + 1);
	memcpy(req->data + query_len + 1 + detail.len + 1, curve, sizeof(curve));
	memcpy(req->data + query_len + 1 + detail.len + 1 + sizeof(curve), pld.terms, pld_size);
	return req;
}

/* ERROR with the charger's reason for not charging role */
static void
report_refusal(Oid role, const DpChargeReply *reply, double epsilon, double delta,
			   double selection_delta)
{
	const char *rolename = GetUserNameFromId(role, true);

	if (rolename == NULL)
		rolename = psprintf("%u", role);
	switch (reply->result)
	{
		case DP_CHARGE_DENIED:
			ereport(ERROR,
					(errcode(ERRCODE_DP_BUDGET_EXHAUSTED),
					 errmsg("privacy budget of role \"%s\" is exhausted", rolename),
					 reply->renyi && !isnan(reply->composed)
					 ? errdetail("The statement costs epsilon %g and delta %g; "
								 "the budget has epsilon %g and delta %g left by basic composition, "
								 "and Renyi composition would reach epsilon %g. "
								 "Nothing was charged or released.",
								 epsilon, delta, reply->epsilon_remaining, reply->delta_remaining,
								 reply->composed)
					 : errdetail("The statement costs epsilon %g and delta %g; "
								 "the budget has epsilon %g and delta %g left. "
								 "Nothing was charged or released.",
								 epsilon, delta, reply->epsilon_remaining, reply->delta_remaining),
					 /*
					  * the delta of a private selection the budget cannot pay:
					  * say where it comes from
					  */
					 selection_delta > 0 && reply->delta_remaining < delta
					 ? errhint("The private selection of the GROUP BY keys costs delta %g "
							   "(dp_agg.selection_delta): group by keys with a public domain, "
							   "which need no selection, or ask for a budget with a delta.",
							   selection_delta)
					 : errhint("Spend less per statement (a smaller epsilon, fewer DP aggregates), "
							   "or ask for a larger budget.")));
			break;
		case DP_CHARGE_NO_BUDGET:
			ereport(ERROR,
					(errcode(ERRCODE_DP_NO_BUDGET),
					 errmsg("role \"%s\" has no privacy budget", rolename),
					 errdetail("Nothing was charged or released."),
					 errhint("A privacy budget is given with dp_agg.set_budget('%s', epsilon, delta).",
							 rolename)));
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_DP_CHARGE_FAILED),
					 errmsg("could not charge the privacy budget of role \"%s\"", rolename),
					 errdetail("%s", reply->message),
					 errhint("Nothing was released.")));
			break;
	}
}

/*
 * Charge the statement whose releases these are, or ERROR.
 */
void
dp_charge(QueryDesc *queryDesc, List *releases)
{
	double		epsilon,
				delta;
	List	   *priced = dp_priced_releases(releases, &epsilon, &delta);
	DpChargeRequest *req;
	DpChargeReply reply;

	if (priced == NIL)
		return;					/* partial aggregation only: nothing released here */
	check_can_release();
	check_no_catalog_locks();

	req = build_request(queryDesc, priced, epsilon, delta);
	dp_charger_submit(req, &reply);
	if (reply.result != DP_CHARGE_OK)
		report_refusal(req->role, &reply, epsilon, delta, req->selection_delta);
}
