/*-------------------------------------------------------------------------
 *
 * budget.c
 *	  Privacy budgets: the price of a statement and its durable charge.
 *
 * The principal charged is the current role (current_user) when the
 * statement starts, the role privilege checks use: inside a SECURITY
 * DEFINER function that is the function's owner, after SET ROLE the role
 * set.  The price is the sum of the epsilons and of the deltas of the DP
 * aggregate calls the plan finalizes (price.c).  The charge is committed
 * by the charger (charger.c) to every budget that pays for the statement
 * (the role's, its groups', those of the relations it reads) before the
 * executor reads a row; if it is not confirmed, the statement fails.
 *
 * The request carries what the charger needs to find those budgets and
 * to apply the caps: the relations the plan reads (its range table) and
 * their ancestors, and the largest price of one call.  Its detail is
 * converted to jsonb here, in the statement's own backend, and kept for
 * the next statement of the same shape: parsing it was a sixth of the
 * charger's work, and the charger serves every backend.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>
#include <sys/resource.h>

#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "parser/parsetree.h"
#include "replication/syncrep.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "budget.h"
#include "budget_store.h"
#include "calibrate.h"
#include "charge_request.h"
#include "compat.h"
#include "describe.h"
#include "guc.h"
#include "inheritance.h"
#include "journal.h"
#include "lease.h"
#include "pld_state.h"
#include "price.h"
#include "release_rdp.h"

static void memberships_changed(Datum arg, int cacheid, uint32 hashvalue);

void
dp_budget_init(void)
{
	dp_budget_store_init();
	dp_charger_init();
	dp_lease_init();
	CacheRegisterSyscacheCallback(AUTHMEMMEMROLE, memberships_changed, (Datum) 0);
	CacheRegisterSyscacheCallback(AUTHOID, memberships_changed, (Datum) 0);
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

/* the tables the charger locks, in this order (lock_from) */
static const char *const charger_tables[] = {"budget", "journal", "ledger"};

/*
 * Does this transaction hold a lock of one of the tables the charger locks
 * (it locks rows of dp_agg.budget, deletes the journal rows it folds and
 * appends to dp_agg.ledger), from from[i] up for charger_tables[i]?  Its
 * name, or NULL.
 */
static const char *
lock_from(const LOCKMODE *from)
{
	Oid			nsp = get_namespace_oid("dp_agg", true);

	if (!OidIsValid(nsp))
		return NULL;
	for (size_t i = 0; i < lengthof(charger_tables); i++)
	{
		Oid			relid = get_relname_relid(charger_tables[i], nsp);
		LOCKTAG		tag;

		if (!OidIsValid(relid))
			continue;
		SET_LOCKTAG_RELATION(tag, MyDatabaseId, relid);
		for (LOCKMODE mode = from[i]; mode <= AccessExclusiveLock; mode++)
		{
			if (DP_LOCK_HELD_BY_ME(&tag, mode))
				return charger_tables[i];
		}
	}
	return NULL;
}

/*
 * A lock that could conflict with the charger's (set_budget, reset_budget,
 * SELECT ... FOR UPDATE, LOCK, a DBA's DELETE): the table's name, or NULL.
 */
static const char *
conflicting_lock(void)
{
	static const LOCKMODE from[] = {RowShareLock, RowShareLock, RowShareLock};

	return lock_from(from);
}

/*
 * A transaction that holds such a lock would wait for the charger while the
 * charger waits for it, unseen by the deadlock detector: refuse before
 * asking.
 */
static void
check_no_catalog_locks(void)
{
	const char *table = conflicting_lock();

	if (table != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("DP aggregates cannot release values in a transaction that locks dp_agg.%s",
						table),
				 errdetail("The charge would wait for this transaction to end. "
						   "Nothing was charged or released."),
				 errhint("Commit or roll back the changes to budgets first.")));
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
 * The detail as jsonb.  A backend that runs the same statement again (the
 * usual case: the same query with the same noise) reuses the last one.
 */
static const char *
detail_jsonb(const StringInfo detail, int *len)
{
	static char *last_text = NULL;
	static char *last_jsonb = NULL;

	if (last_text == NULL || strcmp(last_text, detail->data) != 0)
	{
		Datum		j = DirectFunctionCall1(jsonb_in, CStringGetDatum(detail->data));
		struct varlena *v = PG_DETOAST_DATUM(j);

		if (last_text != NULL)
		{
			pfree(last_text);
			pfree(last_jsonb);
		}
		last_text = MemoryContextStrdup(TopMemoryContext, detail->data);
		last_jsonb = MemoryContextAlloc(TopMemoryContext, VARSIZE(v));
		memcpy(last_jsonb, v, VARSIZE(v));
	}
	*len = VARSIZE(last_jsonb);
	return last_jsonb;
}

/*
 * The relations the plan reads (tables, partitions, materialized views and
 * foreign tables of its range table, each once, views expanded) and their
 * ancestors that it does not name: the budgets of both pay.
 */
void
dp_statement_relations(PlannedStmt *stmt, List **read, List **ancestors)
{
	ListCell   *lc;

	*read = NIL;
	*ancestors = NIL;
	foreach(lc, stmt->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		if (rte->rtekind == RTE_RELATION &&
			(rte->relkind == RELKIND_RELATION || rte->relkind == RELKIND_PARTITIONED_TABLE ||
			 rte->relkind == RELKIND_MATVIEW || rte->relkind == RELKIND_FOREIGN_TABLE))
			*read = list_append_unique_oid(*read, rte->relid);
	}
	foreach(lc, *read)
	{
		List	   *up = dp_relation_ancestors(lfirst_oid(lc), false);
		ListCell   *lc2;

		foreach(lc2, up)
		{
			if (!list_member_oid(*read, lfirst_oid(lc2)))
				*ancestors = list_append_unique_oid(*ancestors, lfirst_oid(lc2));
		}
	}
}

static void
append_oids(StringInfo buf, List *oids)
{
	ListCell   *lc;

	foreach(lc, oids)
	{
		Oid			o = lfirst_oid(lc);

		appendBinaryStringInfo(buf, (const char *) &o, sizeof(Oid));
	}
}

/*
 * The request to the charger: price (with the part its private selections
 * cost, and the largest price of one call), statement text (without
 * trailing semicolons and spaces), description, Renyi DP curve, releases
 * by kind (for 'pld' accounting) and the relations read, in one palloc'd
 * block.
 */
static DpChargeRequest *
build_request(QueryDesc *queryDesc, List *priced, double epsilon, double delta)
{
	StringInfoData detail;
	StringInfoData buf;
	DpChargeRequest req;
	const char *query;
	int			query_len;
	const char *jsonb;
	int			jsonb_len;
	double		curve[DP_RDP_ORDERS];
	DpPldState	pld;
	ListCell   *lc;
	List	   *read;
	List	   *ancestors;

	describe_calls(&detail, priced);
	jsonb = detail_jsonb(&detail, &jsonb_len);
	query = statement_text(queryDesc, &query_len);
	if (query_len < 0)
		query_len = strlen(query);
	while (query_len > 0 && (query[query_len - 1] == ';' || isspace((unsigned char) query[query_len - 1])))
		query_len--;
	dp_statement_relations(queryDesc->plannedstmt, &read, &ancestors);

	memset(&req, 0, sizeof(req));
	memset(curve, 0, sizeof(curve));
	dp_statement_add_rdp(priced, curve);
	memset(&pld, 0, sizeof(pld));
	foreach(lc, priced)
	{
		DpRelease  *r = lfirst(lc);

		dp_release_add_pld(r, &pld);
		dp_release_add_selection(r, &req.selection_epsilon, &req.selection_delta);
		req.call_epsilon = Max(req.call_epsilon, r->epsilon);
		req.call_delta = Max(req.call_delta, r->delta);
	}

	req.role = GetUserId();
	req.epsilon = epsilon;
	req.delta = delta;
	req.query_len = query_len;
	req.detail_len = jsonb_len;
	req.n_rdp = DP_RDP_ORDERS;
	req.n_pld = pld.saturated ? -1 : pld.n;
	req.n_relations = list_length(read);
	req.n_ancestors = list_length(ancestors);
	req.n_certs = 0;
	req.certs_size = 0;
	req.copies = 1;

	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, (const char *) &req, offsetof(DpChargeRequest, data));
	appendBinaryStringInfo(&buf, query, query_len);
	appendStringInfoChar(&buf, '\0');
	appendBinaryStringInfo(&buf, jsonb, jsonb_len);
	appendBinaryStringInfo(&buf, (const char *) curve, sizeof(curve));
	appendBinaryStringInfo(&buf, (const char *) pld.terms, sizeof(DpPldTerm) * pld.n);
	append_oids(&buf, read);
	append_oids(&buf, ancestors);
	((DpChargeRequest *) buf.data)->size = buf.len;
	pfree(detail.data);
	return (DpChargeRequest *) buf.data;
}

/* the name of a role, or its OID if it has none */
static const char *
role_name(Oid role)
{
	const char *name = GetUserNameFromId(role, true);

	return name != NULL ? name : psprintf("%u", role);
}

/* the name of a budget's role or relation */
static const char *
budget_name(const DpChargeReply *reply)
{
	const char *name;

	if (reply->budget_kind != DP_BUDGET_RELATION)
		return role_name(reply->budget_subject);
	name = get_rel_name(reply->budget_subject);
	return name != NULL ? name : psprintf("%u", reply->budget_subject);
}

/* ERROR: a budget that pays for the statement cannot pay for it */
static void
report_exhausted(const DpChargeReply *reply, double epsilon, double delta,
				 double selection_delta)
{
	const char *name = budget_name(reply);
	DpBudgetKind kind = (DpBudgetKind) reply->budget_kind;
	const char *renews = reply->has_window ? pstrdup(timestamptz_to_str(reply->window_end)) : "";

	if (reply->lifetime)
		ereport(ERROR,
				(errcode(ERRCODE_DP_BUDGET_EXHAUSTED),
				 kind == DP_BUDGET_RELATION
				 ? errmsg("lifetime privacy budget of relation \"%s\" is exhausted", name)
				 : kind == DP_BUDGET_GROUP
				 ? errmsg("lifetime privacy budget of group \"%s\" is exhausted", name)
				 : errmsg("lifetime privacy budget of role \"%s\" is exhausted", name),
				 errdetail("The statement costs epsilon %g and delta %g; "
						   "the budget has epsilon %g and delta %g left over its lifetime. "
						   "Nothing was charged or released.",
						   epsilon, delta, reply->epsilon_remaining, reply->delta_remaining),
				 errhint("The lifetime limit does not renew: spend less per statement, "
						 "or ask for a larger lifetime limit.")));
	ereport(ERROR,
			(errcode(ERRCODE_DP_BUDGET_EXHAUSTED),
			 kind == DP_BUDGET_RELATION
			 ? errmsg("privacy budget of relation \"%s\" is exhausted", name)
			 : kind == DP_BUDGET_GROUP
			 ? errmsg("privacy budget of group \"%s\" is exhausted", name)
			 : errmsg("privacy budget of role \"%s\" is exhausted", name),
			 isfinite(reply->pld_composed)
			 ? errdetail("The statement costs epsilon %g and delta %g; "
						 "the budget has epsilon %g and delta %g left by basic composition, "
						 "Renyi composition would reach epsilon %g, and the privacy loss "
						 "distribution epsilon %g (at delta %g). "
						 "Nothing was charged or released.",
						 epsilon, delta, reply->epsilon_remaining, reply->delta_remaining,
						 reply->composed, reply->pld_composed, reply->delta_limit)
			 : reply->renyi && !isnan(reply->composed)
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
			  * the delta of a private selection the budget cannot pay: say
			  * where it comes from
			  */
			 selection_delta > 0 && reply->delta_remaining < delta
			 ? errhint("The private selection of the GROUP BY keys costs delta %g "
					   "(dp_agg.selection_delta): group by keys with a public domain, "
					   "which need no selection, or ask for a budget with a delta.",
					   selection_delta)
			 : reply->has_window
			 ? errhint("The budget renews at %s. Spend less per statement (a smaller epsilon, "
					   "fewer DP aggregates), or ask for a larger budget.", renews)
			 : errhint("Spend less per statement (a smaller epsilon, fewer DP aggregates), "
					   "or ask for a larger budget.")));
}

/* ERROR: the statement, or one of its calls, is above a cap of the role */
static void
report_capped(const DpChargeReply *reply)
{
	const char *whose = role_name(reply->cap_role);

	switch ((DpCapKind) reply->cap_kind)
	{
		case DP_CAP_STATEMENT_EPSILON:
			ereport(ERROR,
					(errcode(ERRCODE_DP_CAP_EXCEEDED),
					 errmsg("the statement costs epsilon %g, more than the cap of %g per statement",
							reply->asked, reply->cap),
					 errdetail("The cap is that of role \"%s\" (dp_agg.my_caps). "
							   "Nothing was charged or released.", whose),
					 errhint("Spend less in one statement: a smaller epsilon, or fewer DP aggregates.")));
			break;
		case DP_CAP_STATEMENT_DELTA:
			ereport(ERROR,
					(errcode(ERRCODE_DP_CAP_EXCEEDED),
					 errmsg("the statement costs delta %g, more than the cap of %g per statement",
							reply->asked, reply->cap),
					 errdetail("The cap is that of role \"%s\" (dp_agg.my_caps). "
							   "Nothing was charged or released.", whose),
					 errhint("Spend less in one statement: a smaller delta, or fewer Gaussian releases.")));
			break;
		case DP_CAP_CALL_EPSILON:
			ereport(ERROR,
					(errcode(ERRCODE_DP_CAP_EXCEEDED),
					 errmsg("a DP aggregate call costs epsilon %g, more than the cap of %g per call",
							reply->asked, reply->cap),
					 errdetail("The cap is that of role \"%s\" (dp_agg.my_caps). "
							   "Nothing was charged or released.", whose),
					 errhint("Give each call a smaller epsilon (its argument or dp_agg.epsilon; "
							 "for the private selection of groups, dp_agg.selection_epsilon).")));
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_DP_CAP_EXCEEDED),
					 errmsg("a DP aggregate call costs delta %g, more than the cap of %g per call",
							reply->asked, reply->cap),
					 errdetail("The cap is that of role \"%s\" (dp_agg.my_caps). "
							   "Nothing was charged or released.", whose),
					 errhint("Give each call a smaller delta (its argument or dp_agg.delta; "
							 "for the private selection of groups, dp_agg.selection_delta).")));
			break;
	}
}

/* ERROR with the charger's reason for not charging the statement of role */
static void
report_refusal(Oid role, const DpChargeReply *reply, double epsilon, double delta,
			   double selection_delta)
{
	const char *rolename = role_name(role);

	switch (reply->result)
	{
		case DP_CHARGE_DENIED:
			report_exhausted(reply, epsilon, delta, selection_delta);
			break;
		case DP_CHARGE_CAPPED:
			report_capped(reply);
			break;
		case DP_CHARGE_NO_BUDGET:
			ereport(ERROR,
					(errcode(ERRCODE_DP_NO_BUDGET),
					 errmsg("role \"%s\" has no privacy budget", rolename),
					 errdetail("Nothing was charged or released."),
					 errhint("A privacy budget is given with dp_agg.set_budget('%s', epsilon, delta), "
							 "or shared by the members of a group with dp_agg.set_group_budget.",
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
		memcpy(stmt.terms, DP_REQUEST_PLD(req), sizeof(DpPldTerm) * req->n_pld);
	}
	return stmt;
}

/*
 * The request again, carrying a PLD certificate for the budget the reply
 * names (replacing any it carried for that budget before).
 */
static DpChargeRequest *
with_certificate(DpChargeRequest *req, const DpChargeReply *reply, const DpPldCertificate *cert)
{
	const char *certs = DP_REQUEST_CERTS(req);
	Size		base = certs - (const char *) req;
	StringInfoData buf;
	DpChargeCert c;
	int			n = 0;
	Size		off = 0;

	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, (const char *) req, base);
	for (int i = 0; i < req->n_certs; i++)
	{
		Size		len;

		memcpy(&c, certs + off, sizeof(c));
		len = sizeof(c) + sizeof(DpPldTerm) * c.n;
		if (c.budget_kind != reply->budget_kind || c.budget_subject != reply->budget_subject)
		{
			appendBinaryStringInfo(&buf, certs + off, len);
			n++;
		}
		off += len;
	}
	memset(&c, 0, sizeof(c));
	c.budget_kind = reply->budget_kind;
	c.budget_subject = reply->budget_subject;
	c.kind = cert->kind;
	c.n = cert->state.n;
	c.epsilon_limit = cert->epsilon_limit;
	c.delta_limit = cert->delta_limit;
	c.epsilon = cert->epsilon;
	appendBinaryStringInfo(&buf, (const char *) &c, sizeof(c));
	appendBinaryStringInfo(&buf, (const char *) cert->state.terms, sizeof(DpPldTerm) * cert->state.n);
	n++;
	((DpChargeRequest *) buf.data)->size = buf.len;
	((DpChargeRequest *) buf.data)->n_certs = n;
	((DpChargeRequest *) buf.data)->certs_size = buf.len - base;
	pfree(req);
	return (DpChargeRequest *) buf.data;
}

/*
 * Compositions for a budget run one at a time (in the backends of the
 * statements it pays for, never in the charger): a budget's statements can
 * keep at most one CPU busy composing, and a backend waiting here finds,
 * when its turn comes, the frontier the one before it computed.  A
 * transaction-level lock on an advisory tag of dp_agg's own (field4 is
 * neither 1 nor 2, the user-level advisory locks'), keyed by the budget's
 * role or relation and its kind, released when the backend turns to
 * another budget (it holds one at a time: two backends can never wait for
 * each other's), at the end of the charge, or by the abort of the
 * (sub)transaction.  Waiting for it is interruptible.
 */
#define DP_COMPOSE_LOCK_FIELD4 0x4450

static void
compose_lock_tag(LOCKTAG *tag, int32 kind, Oid subject)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, subject, (uint32) kind, DP_COMPOSE_LOCK_FIELD4);
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
 * PLD certificate of a budget can decide, compose it here (under that
 * budget's composition lock) and ask again with it.  The charger checks it
 * against the history it holds, which other statements may have grown
 * meanwhile (then it asks again), and may then ask for another budget of
 * the statement's.
 */
static DpChargeRequest *
charge_round_trips(DpChargeRequest *req, DpChargeReply *reply)
{
	LOCKTAG		tag;
	bool		locked = false;
	int32		locked_kind = 0;
	Oid			locked_subject = InvalidOid;
	int			compositions = 0;
	int			rounds = 0;
	DpPldState	seen = {0};		/* the history the last composition was for */

	for (;;)
	{
		DpPldState	stmt;
		DpPldCertificate cert;
		MemoryContext cxt,
					old;

		dp_charger_submit(req, reply);
		if (reply->result != DP_CHARGE_NEED_PLD)
			break;
		if (++compositions > DP_MAX_COMPOSITIONS || ++rounds > 4 * DP_MAX_COMPOSITIONS)
			ereport(ERROR,
					(errcode(ERRCODE_DP_CHARGE_FAILED),
					 errmsg("could not charge the privacy budget of role \"%s\"",
							GetUserNameFromId(req->role, false)),
					 errdetail("Other statements kept changing the history of its budgets while "
							   "this one composed their privacy loss distributions. "
							   "Nothing was charged or released."),
					 errhint("Run the statement again.")));
		if (!locked || locked_kind != reply->budget_kind || locked_subject != reply->budget_subject)
		{
			/* maybe another backend is composing for the budget: ask after it */
			if (locked)
				LockRelease(&tag, ExclusiveLock, false);
			compose_lock_tag(&tag, reply->budget_kind, reply->budget_subject);
			(void) LockAcquire(&tag, ExclusiveLock, false, false);
			locked = true;
			locked_kind = reply->budget_kind;
			locked_subject = reply->budget_subject;
			memset(&seen, 0, sizeof(seen));
			compositions--;
			continue;
		}
		stmt = request_releases(req);
		lower_priority();
		cxt = AllocSetContextCreate(CurrentMemoryContext, "dp_agg composition",
									ALLOCSET_DEFAULT_SIZES);
		old = MemoryContextSwitchTo(cxt);
		dp_work_limit(0);
		cert.kind = DP_PLD_CERT_NONE;
		if (seen.n > 0)
		{
			/*
			 * The history grew while we composed (other statements of the
			 * budget, admitted without composing): compose with room for
			 * as much growth again, four times, so that the certificate
			 * still covers the history when it reaches the charger.  A
			 * refusal is only ever computed on the exact history (below).
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
		req = with_certificate(req, reply, &cert);
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
 * Prepaid statements (dp_agg.prepay, which only a superuser sets: for the
 * sessions of a login role, ALTER ROLE ... SET; the session's setting
 * applies to whichever role a statement charges, also after SET ROLE).  A
 * session that repeats a DP statement may pay for several at once: when a
 * statement's request to the charger is identical, byte for byte, to the
 * last one this backend had charged (the role, the price, the query text,
 * the description of the releases, the relations read), the request asks
 * the budgets to pay for up to dp_agg.prepay statements (charger.c,
 * prepay: each decided as a request of its own, at most half of what the
 * budgets would still admit, and none when a window of theirs ends before
 * they would expire).  The next identical statements then run without
 * asking the charger: the charge that paid for them was durable before
 * the first of them released anything (wait_durable), so each is still
 * paid for, durably, before it releases anything.  They may run for
 * dp_agg.prepay_time from the moment the request was sent, and only while
 * dp_agg.prepay is above 1, so that a DBA's change of limits applies to
 * them after at most that long (a prepaid statement is one charged before
 * the change, as a statement that was running then).  What is prepaid and
 * not run is spent, not refunded (as the charge of a statement that
 * failed): a session gives up the rest when it charges any other
 * statement, when it disconnects, or when the time runs out, at most
 * dp_agg.prepay - 1 statements each time.  The ledger's row of such a
 * charge counts its statements (its column statements; its epsilon, delta
 * and curve are their sums).
 */
static DpChargeRequest *prepaid_request = NULL; /* the last request charged */
static int	prepaid_left = 0;	/* statements paid for with it, not run yet */
static TimestampTz prepaid_until = 0;

/*
 * Charges on leased budgets (dp_agg.lease_time; lease.c, and the charger's
 * side in charge_lease.c).  When the charger charges a statement alone
 * and leases every budget that paid for it, its reply names the leases; the
 * backend keeps them with the request.  The next statement whose request is
 * identical, byte for byte (the role, the price, the query text, the
 * description of its releases, the relations read: so the same budgets pay
 * for it), is charged on the leases while they hold: decided and added to
 * them under their locks (dp_lease_charge), journaled (journal.c), and the
 * WAL flushed to its journal row before the statement reads a row.  The
 * charger folds the journal into dp_agg.budget and dp_agg.ledger later.  A
 * lease that has ended or was recalled, a budget that refuses, or a
 * journal the backend cannot write right now (locked by a DDL statement,
 * or new in this transaction) sends the statement to the charger, which
 * decides it as always (and says why it refuses).  Not with synchronous
 * replication, whose wait stays in the charger (charger.c, "Group commit").
 */
static DpChargeRequest *leased_request = NULL;
static DpLeaseRef leased[DP_LEASE_MAX_BUDGETS];
static int	n_leased = 0;
static TimestampTz leased_until = 0;
static int64 leased_shape = 0;

static void
forget_leases(void)
{
	n_leased = 0;
	if (leased_request != NULL)
		pfree(leased_request);
	leased_request = NULL;
}

/*
 * A change of roles or of memberships (seen by this backend when its
 * transaction starts, or when it takes a lock): the budgets that pay for
 * its statements may have changed (a group joined or left): forget the
 * leases, the charger names them again.  A statement already charged on
 * them was charged before the change, as one running at that moment.
 */
static void
memberships_changed(Datum arg, int cacheid, uint32 hashvalue)
{
	n_leased = 0;
}

/* the leases of a request the charger charged, kept for the next identical one */
static void
keep_leases(const DpChargeRequest *asked, const DpChargeReply *reply)
{
	forget_leases();
	if (reply->result != DP_CHARGE_OK || reply->n_leases <= 0 ||
		reply->n_leases > DP_LEASE_MAX_BUDGETS || reply->copies != 1)
		return;
	leased_request = MemoryContextAlloc(TopMemoryContext, asked->size);
	memcpy(leased_request, asked, asked->size);
	memcpy(leased, reply->leases, sizeof(DpLeaseRef) * reply->n_leases);
	n_leased = reply->n_leases;
	leased_until = reply->lease_until;
	leased_shape = reply->ledger_id;
}

/* charge the request on its leases; false if it must go to the charger */
static bool
charge_on_leases(const DpChargeRequest *req)
{
	TimestampTz now;
	Oid			relid;
	Relation	rel;
	DpChargeAmounts a;
	double		curve[DP_RDP_ORDERS];
	DpPldState	stmt;
	DpJournalEntry e;
	DpLeaseVerdict verdict;
	volatile XLogRecPtr journal_lsn = InvalidXLogRecPtr;

	if (n_leased == 0 || leased_request->size != req->size ||
		memcmp(leased_request, req, req->size) != 0)
		return false;
	now = GetCurrentTimestamp();
	if (!(now < leased_until) || dp_guc_lease_ms <= 0 || IsInParallelMode() ||
		RecoveryInProgress() || (SyncRepStandbyNames != NULL && SyncRepStandbyNames[0] != '\0'))
	{
		forget_leases();
		return false;
	}
	/* the journal, opened before anything is decided: never wait for it */
	relid = dp_journal_relid();
	if (!OidIsValid(relid) || !ConditionalLockRelationOid(relid, RowExclusiveLock))
		return false;
	rel = table_open(relid, NoLock);
	if (!dp_journal_usable(rel))
	{
		table_close(rel, RowExclusiveLock);
		return false;
	}
	a.epsilon = req->epsilon;
	a.delta = req->delta;
	a.selection_epsilon = req->selection_epsilon;
	a.selection_delta = req->selection_delta;
	memcpy(curve, DP_REQUEST_CURVE(req), sizeof(curve));
	stmt = request_releases(req);

	memset(&e, 0, sizeof(e));
	verdict = dp_lease_charge(leased, n_leased, &a, curve, &stmt, now, &e.seq);
	if (verdict != DP_LEASE_CHARGED)
	{
		table_close(rel, RowExclusiveLock);
		forget_leases();
		return false;
	}
	e.at = now;
	e.role = req->role;
	e.shape = leased_shape;
	e.epsilon = a.epsilon;
	e.delta = a.delta;
	e.selection_epsilon = a.selection_epsilon;
	e.selection_delta = a.selection_delta;
	e.n_budgets = n_leased;
	for (int i = 0; i < n_leased; i++)
	{
		e.budgets[i] = leased[i].budget_id;
	}
	e.releases_len = req->n_pld < 0 ? -1 : (int) (sizeof(DpPldTerm) * req->n_pld);
	e.releases = DP_REQUEST_PLD(req);
	PG_TRY();
	{
		journal_lsn = dp_journal_append_entry(rel, &e);
		dp_lease_journaled();
	}
	PG_FINALLY();
	{
		dp_lease_landed();
	}
	PG_END_TRY();
	/*
	 * The row is written whatever becomes of the transaction: the lock is
	 * not needed until its end, and would make this transaction's next DP
	 * statements look like a DBA's change of the journal (conflicting_lock)
	 */
	table_close(rel, RowExclusiveLock);
	/* durable before the statement reads a row */
	XLogFlush(journal_lsn);
	return true;
}

/* charge a request, wait until the charge is durable, or ERROR */
static void
charge_durably(DpChargeRequest *req, DpChargeReply *reply, double epsilon, double delta)
{
	req = charge_round_trips(req, reply);
	if (reply->result != DP_CHARGE_OK)
		report_refusal(req->role, reply, epsilon, delta, req->selection_delta);
	wait_durable(reply->commit_lsn);
}

/*
 * Charge a request durably, or ERROR; returns the request as it was asked
 * (before the round trips add certificates), in TopMemoryContext, to
 * compare the next one with.  prepay: ask for dp_agg.prepay statements.
 */
static DpChargeRequest *
charge_kept(DpChargeRequest *req, DpChargeReply *reply, double epsilon, double delta, bool prepay)
{
	DpChargeRequest *asked = MemoryContextAlloc(TopMemoryContext, req->size);

	memcpy(asked, req, req->size);
	if (prepay)
	{
		req->copies = dp_guc_prepay;
		req->prepay_ms = dp_guc_prepay_ms;
	}
	PG_TRY();
	{
		charge_durably(req, reply, epsilon, delta);
	}
	PG_CATCH();
	{
		pfree(asked);
		PG_RE_THROW();
	}
	PG_END_TRY();
	return asked;
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
	DpChargeRequest *asked;
	DpChargeReply *reply;
	bool		repeat;
	TimestampTz asking;

	if (priced == NIL)
		return;					/* partial aggregation only: nothing released here */
	check_can_release();
	check_no_catalog_locks();

	req = build_request(queryDesc, priced, epsilon, delta);
	reply = palloc(sizeof(DpChargeReply));
	if (dp_guc_prepay <= 1)
	{
		/* every statement charged alone; nothing prepaid is run */
		prepaid_left = 0;
		if (charge_on_leases(req))
			return;
		forget_leases();
		asked = charge_kept(req, reply, epsilon, delta, false);
		keep_leases(asked, reply);
		pfree(asked);
		return;
	}
	forget_leases();

	repeat = prepaid_request != NULL && prepaid_request->size == req->size &&
		memcmp(prepaid_request, req, req->size) == 0;
	asking = GetCurrentTimestamp();
	if (repeat && prepaid_left > 0 && asking < prepaid_until)
	{
		prepaid_left--;
		return;					/* paid for, durably, by the last charge */
	}
	prepaid_left = 0;			/* what is left of another statement's is given up */

	asked = charge_kept(req, reply, epsilon, delta, repeat);

	if (prepaid_request != NULL)
		pfree(prepaid_request);
	prepaid_request = asked;
	prepaid_left = Max(reply->copies - 1, 0);
	prepaid_until = Min(TimestampTzPlusMilliseconds(asking, dp_guc_prepay_ms), reply->prepaid_until);
}

/*
 * Could a fold wait for this transaction?  The charger's fold takes
 * RowExclusiveLock on dp_agg.budget, dp_agg.ledger and the journal, locks
 * rows of dp_agg.budget and deletes journal rows: a lock of one of those
 * tables from ShareLock up, or row locks of the budget or the journal
 * (this transaction holds a lock that lets it lock rows, and an xid, which
 * a row lock needs), would make it wait for a transaction that waits for
 * it, unseen by the deadlock detector.
 */
static bool
fold_could_wait(void)
{
	static const LOCKMODE rows[] = {RowShareLock, RowShareLock, ShareLock};
	static const LOCKMODE tables[] = {ShareLock, ShareLock, ShareLock};

	return lock_from(TransactionIdIsValid(GetTopTransactionIdIfAny()) ? rows : tables) != NULL;
}

/*
 * Ask the charger to fold the whole journal of this database into
 * dp_agg.budget and dp_agg.ledger (charge_batch.c, "Folding"), and wait; true if
 * it did.  Nothing to do when no charge decided on a lease may be left
 * unfolded; not done (false) where it would see nothing or could wait for
 * this transaction: in a background worker (the charger itself reads the
 * tables), in parallel mode or recovery, or if fold_could_wait.
 */
bool
dp_fold_journal(void)
{
	DpChargeRequest *req;
	DpChargeReply reply;
	Size		size;
	Jsonb	   *empty;

	if (!dp_lease_available() || DP_AM_BACKGROUND_WORKER() || IsInParallelMode() || RecoveryInProgress() ||
		!OidIsValid(dp_journal_relid()))
		return false;
	if (!dp_lease_unfolded())
		return true;
	if (fold_could_wait())
		return false;
	/* a request that charges nothing (copies 0): only the fold */
	empty = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum("[]")));
	size = offsetof(DpChargeRequest, data) + 1 + VARSIZE(empty) + sizeof(double) * DP_RDP_ORDERS;
	req = palloc0(size);
	req->size = size;
	req->role = GetUserId();
	req->copies = 0;
	req->query_len = 0;
	req->detail_len = VARSIZE(empty);
	req->n_rdp = DP_RDP_ORDERS;
	memcpy(DP_REQUEST_DETAIL(req), empty, VARSIZE(empty));
	dp_charger_submit(req, &reply);
	pfree(req);
	if (reply.result != DP_CHARGE_OK)
	{
		ereport(WARNING,
				(errmsg("could not fold the journal of privacy budget charges"),
				 errdetail("%s", reply.message),
				 errhint("dp_agg.budget and dp_agg.ledger may lag the charges of the last %d ms.",
						 dp_guc_lease_ms)));
		return false;
	}
	return true;
}

/*
 * Fold on read.  dp_agg.budget and dp_agg.ledger lag the journal by the
 * charges decided on leases since the charger last folded them.  So before
 * a statement that reads one of them, or the journal (directly or through
 * a view: the planned statement's range table), the backend folds the
 * journal (dp_fold_journal): a READ COMMITTED statement, whose snapshot is
 * taken after planning, then sees every charge journaled before it was
 * planned.  So do dp_agg.preview, and reset_budget before it resets.  Not
 * with a transaction snapshot already taken (REPEATABLE READ,
 * SERIALIZABLE), which would not see it.  A statement that cannot fold
 * reads the tables as they are, up to dp_agg.lease_time behind.
 */
void
dp_fold_for_readers(PlannedStmt *stmt)
{
	Oid			nsp = InvalidOid;
	Oid			tables[3];
	bool		reads = false;
	ListCell   *lc;

	if (!dp_lease_available() || stmt == NULL || (IsolationUsesXactSnapshot() && FirstSnapshotSet) ||
		!dp_lease_maybe_unfolded())
		return;
	foreach(lc, stmt->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		if (rte->rtekind != RTE_RELATION)
			continue;
		if (!OidIsValid(nsp))
		{
			nsp = get_namespace_oid("dp_agg", true);
			if (!OidIsValid(nsp))
				return;
			tables[0] = get_relname_relid("budget", nsp);
			tables[1] = get_relname_relid("ledger", nsp);
			tables[2] = dp_journal_relid();
		}
		for (int i = 0; i < 3; i++)
			reads |= OidIsValid(tables[i]) && rte->relid == tables[i];
	}
	if (reads)
		(void) dp_fold_journal();
}
