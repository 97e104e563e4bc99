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
#include <sys/resource.h>

#include "access/xact.h"
#include "access/xlog.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "catalog/namespace.h"
#include "storage/lock.h"
#include "utils/memutils.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"

#include "budget.h"
#include "calibrate.h"
#include "charger.h"
#include "compat.h"
#include "describe.h"
#include "guc.h"
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
	req->cert_kind = DP_PLD_CERT_NONE;
	req->n_cert = 0;
	req->cert_epsilon_limit = req->cert_delta_limit = req->cert_epsilon = 0;
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
			if (isfinite(reply->pld_composed))
				ereport(ERROR,
						(errcode(ERRCODE_DP_BUDGET_EXHAUSTED),
						 errmsg("privacy budget of role \"%s\" is exhausted", rolename),
						 errdetail("The statement costs epsilon %g and delta %g; "
								   "the budget has epsilon %g and delta %g left by basic composition, "
								   "Renyi composition would reach epsilon %g, and the privacy loss "
								   "distribution epsilon %g (at delta %g). "
								   "Nothing was charged or released.",
								   epsilon, delta, reply->epsilon_remaining, reply->delta_remaining,
								   reply->composed, reply->pld_composed, reply->delta_limit),
						 errhint("Spend less per statement (a smaller epsilon, fewer DP aggregates), "
								 "or ask for a larger budget.")));
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

/* the releases by kind of a request (as the charger reads them) */
static DpPldState
request_releases(const DpChargeRequest *req)
{
	DpPldState	stmt;

	memset(&stmt, 0, sizeof(stmt));
	if (req->n_pld < 0)
		stmt.saturated = true;
	else
	{
		stmt.n = req->n_pld;
		memcpy(stmt.terms, req->data + req->query_len + 1 + req->detail_len + 1 +
			   sizeof(double) * DP_RDP_ORDERS, sizeof(DpPldTerm) * req->n_pld);
	}
	return stmt;
}

/* the request again, carrying a PLD certificate (replacing any before) */
static DpChargeRequest *
with_certificate(DpChargeRequest *req, const DpPldCertificate *cert)
{
	Size		base = req->size - sizeof(DpPldTerm) * req->n_cert;
	DpChargeRequest *r = palloc(base + sizeof(DpPldTerm) * cert->state.n);

	memcpy(r, req, base);
	memcpy((char *) r + base, cert->state.terms, sizeof(DpPldTerm) * cert->state.n);
	r->size = base + sizeof(DpPldTerm) * cert->state.n;
	r->cert_kind = cert->kind;
	r->n_cert = cert->state.n;
	r->cert_epsilon_limit = cert->epsilon_limit;
	r->cert_delta_limit = cert->delta_limit;
	r->cert_epsilon = cert->epsilon;
	pfree(req);
	return r;
}

/*
 * Compositions for a role run one at a time (in the backends of its
 * statements, never in the charger): a role's statements can keep at most
 * one CPU busy composing, and a backend waiting here finds, when its turn
 * comes, the frontier the one before it computed.  A transaction-level
 * lock on an advisory tag of dp_agg's own (field4 is neither 1 nor 2, the
 * user-level advisory locks'), released at the end of the charge or by
 * the abort of the (sub)transaction.  Waiting for it is interruptible.
 */
#define DP_COMPOSE_LOCK_FIELD4 0x4450

static void
compose_lock_tag(LOCKTAG *tag, Oid role)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, role, 0, DP_COMPOSE_LOCK_FIELD4);
}

/* history + times x (the growth from before to history, kind by kind) */
static DpPldState
grown(const DpPldState *before, const DpPldState *history, double times)
{
	DpPldState	r = *history;

	for (int i = 0; i < history->n; i++)
	{
		double		was = 0;

		for (int j = 0; j < before->n; j++)
			if (dp_pld_kind_equal(&before->terms[j].kind, &history->terms[i].kind))
				was = before->terms[j].count;
		if (history->terms[i].count > was)
			dp_pld_state_add(&r, &history->terms[i].kind,
							 times * (history->terms[i].count - was));
	}
	return r;
}

/*
 * Before a backend composes for the first time: lower its CPU priority to
 * nice dp_agg.composition_nice (never raise it), so that under CPU
 * contention a role's compositions yield to other roles' statements.  A
 * process cannot raise its own priority again, so the backend keeps it
 * until it exits.  Best effort: a failure leaves the priority as it is.
 */
static void
lower_priority(void)
{
	static bool done = false;
	int			now;

	if (done || dp_guc_composition_nice <= 0)
		return;
	done = true;
	errno = 0;
	now = getpriority(PRIO_PROCESS, 0);
	if (errno == 0 && now < dp_guc_composition_nice)
		(void) setpriority(PRIO_PROCESS, 0, dp_guc_composition_nice);
}

/* how often a backend composes for one charge before it gives up */
#define DP_MAX_COMPOSITIONS 8

/*
 * The round trips of one charge: while the charger answers that only the
 * PLD certificate can decide, compose it here (under the role's
 * composition lock) and ask again with it.  The charger checks it against
 * the history it holds, which other statements of the role may have grown
 * meanwhile (then it asks again).
 */
static DpChargeRequest *
charge_round_trips(DpChargeRequest *req, DpChargeReply *reply)
{
	LOCKTAG		tag;
	bool		locked = false;
	int			compositions = 0;
	DpPldState	seen = {0};	/* the history the last composition was for */

	for (;;)
	{
		DpPldState	stmt;
		DpPldCertificate cert;
		MemoryContext cxt,
					old;

		dp_charger_submit(req, reply);
		if (reply->result != DP_CHARGE_NEED_PLD)
			break;
		if (!locked)
		{
			/* maybe another backend of the role is composing: ask after it */
			compose_lock_tag(&tag, req->role);
			(void) LockAcquire(&tag, ExclusiveLock, false, false);
			locked = true;
			continue;
		}
		if (++compositions > DP_MAX_COMPOSITIONS)
			ereport(ERROR,
					(errcode(ERRCODE_DP_CHARGE_FAILED),
					 errmsg("could not charge the privacy budget of role \"%s\"",
							GetUserNameFromId(req->role, false)),
					 errdetail("Other statements of the role kept changing its history while "
							   "this one composed its privacy loss distribution. "
							   "Nothing was charged or released."),
					 errhint("Run the statement again.")));
		stmt = request_releases(req);
		lower_priority();
		cxt = AllocSetContextCreate(CurrentMemoryContext, "dp_agg composition",
									ALLOCSET_DEFAULT_SIZES);
		old = MemoryContextSwitchTo(cxt);
		dp_work_limit(0);
		cert.kind = DP_PLD_CERT_NONE;
		if (compositions > 1)
		{
			/*
			 * The history grew while we composed (other statements of the
			 * role, admitted without composing): compose with room for as
			 * much growth again, four times, so that the certificate still
			 * covers the history when it reaches the charger.  A refusal
			 * is only ever computed on the exact history (below).
			 */
			DpPldState	padded = grown(&seen, &reply->history, 4);

			if (!padded.saturated)
				dp_pld_certify(reply->epsilon_limit, reply->delta_limit, &padded, &stmt, &cert);
		}
		if (cert.kind != DP_PLD_CERT_FIT)
			dp_pld_certify(reply->epsilon_limit, reply->delta_limit, &reply->history, &stmt,
						   &cert);
		seen = reply->history;
		MemoryContextSwitchTo(old);
		MemoryContextDelete(cxt);
		req = with_certificate(req, &cert);
	}
	if (locked)
		LockRelease(&tag, ExclusiveLock, false);
	return req;
}

/*
 * Wait until the charge is durable: the charger committed it without
 * flushing (charger.c, "Group commit"); flush the WAL up to its commit
 * here, before the statement reads a row.
 */
static void
wait_durable(XLogRecPtr lsn)
{
	if (!XLogRecPtrIsInvalid(lsn))
		XLogFlush(lsn);
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
	DpChargeReply *reply;

	if (priced == NIL)
		return;					/* partial aggregation only: nothing released here */
	check_can_release();
	check_no_catalog_locks();

	req = build_request(queryDesc, priced, epsilon, delta);
	reply = palloc(sizeof(DpChargeReply));
	req = charge_round_trips(req, reply);
	if (reply->result != DP_CHARGE_OK)
		report_refusal(req->role, reply, epsilon, delta, req->selection_delta);
	wait_durable(reply->commit_lsn);
}
