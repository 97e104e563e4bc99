/*-------------------------------------------------------------------------
 *
 * charger.c
 *	  The charger: commits budget charges durably, outside the transactions
 *	  of the statements it charges.
 *
 * A statement that releases DP values must be paid for before the first
 * value is computed, by a write that survives whatever the statement's own
 * transaction does afterwards (ROLLBACK, an error, a crash).  A backend
 * cannot commit a write of its own in the middle of a transaction, so each
 * database gets a charger: a background worker, started on demand, that
 * takes charge requests from backends, applies them to dp_agg.budget and
 * dp_agg.ledger in its own transaction with synchronous commit, and only
 * then answers.  A backend that gets no positive answer releases nothing.
 *
 * Shared memory holds one request slot per backend (indexed like PGPROCs)
 * and one charger slot per database with a charger (dp_agg.max_databases).
 *
 * Request slots.  Each is a small state machine under its own spinlock;
 * whoever the state names owns the request body and the reply, and touches
 * them without any lock:
 *
 *	IDLE -> WRITING		the backend: it writes the body
 *	WRITING -> PENDING	the backend publishes it and sets the charger's latch
 *	PENDING -> TAKEN	the charger: it copies the body out, charges, and
 *						writes the reply
 *	TAKEN -> DONE		the charger publishes the reply
 *	TAKEN -> ORPHANED	the charger exits (its exit callback) before replying
 *	DONE, ORPHANED -> IDLE	the backend has read the outcome
 *	WRITING, PENDING -> IDLE	the backend gives up (an error, a cancel, exit)
 *
 * A backend that gives up while its request is TAKEN leaves it TAKEN, and
 * the next request from that slot (the same backend or a new one with the
 * same PGPROC) waits until the charger lets go, so the charger never copies
 * a body being rewritten nor writes a reply into someone else's request.
 * Each request gets a sequence number and each charger a generation
 * (unique since the server started); a TAKEN slot records the generation
 * of the charger holding it.  Backends wait on their slot's condition
 * variable, which is broadcast whenever the state of the slot changes in a
 * way the backend must see: a reply, the holding charger's exit, the
 * database's charger exiting or failing to start while the request is
 * PENDING.
 *
 * Charger slots.  FREE -> STARTING (claimed by the backend that launches
 * the charger) -> RUNNING (the charger registered its latch) -> FREE (the
 * charger retires when idle, or its exit callback runs).  They are changed
 * and read under one LWLock, held only to read or write a few words: no
 * system call, allocation or copy of a request happens under it.  Liveness
 * is "the slot holds this generation and is RUNNING", which a recycled PID
 * cannot fake: only the charger's own exit callback or retirement frees
 * its slot, and a process that dies without running its exit callbacks
 * makes the postmaster reinitialize shared memory.
 *
 * Serialization.  One charger per database decides the requests of a batch
 * in arrival order, against each role's budget row read once under a row
 * lock (FOR UPDATE), so no interleaving of sessions can spend past a limit;
 * the row lock also orders charges against the DBA's set_budget and
 * reset_budget.
 *
 * Failure.  If the charger dies while it holds a request, the backend
 * cannot know whether the charge committed and fails with an error (an
 * over-charge, never an under-charge).  An idle charger exits after
 * dp_agg.charger_idle_timeout, so that DROP DATABASE is not blocked.
 *
 * Files.  The requests, replies and slots are in charger_shmem.c, the
 * backend's side (launch, submit, wait) in charge_request.c, the rows of
 * the ledger in charge_ledger.c; this file is the charger's side: it
 * decides and charges each batch, and runs the worker.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/heapam.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/sequence.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "replication/syncrep.h"
#include "storage/condition_variable.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "admission.h"
#include "budget_charge.h"
#include "budget_row.h"
#include "budget_store.h"
#include "calibrate.h"
#include "charger.h"
#include "charger_shmem.h"
#include "charge_batch.h"
#include "charge_lease.h"
#include "charge_ledger.h"
#include "compat.h"
#include "guc.h"
#include "journal.h"
#include "lease.h"
#include "pld_state.h"

/* ---------- the charger's side ---------- */

typedef struct TakenRequest
{
	int			slot;
	dsm_handle	handle;
	DpChargeRequest *req;		/* copied from the slot, or NULL */
	DpChargeReply reply;
} TakenRequest;

static void set_message(DpChargeReply *reply, const char *msg);
static void charger_commit_mode(void);
static bool backend_flushes;

/* the releases by kind of a request */
static void
request_pld(const DpChargeRequest *req, DpPldState *stmt)
{
	memset(stmt, 0, sizeof(*stmt));
	if (req->n_pld < 0)
		stmt->saturated = true;
	else
	{
		stmt->n = req->n_pld;
		memcpy(stmt->terms, DP_REQUEST_PLD(req), sizeof(DpPldTerm) * req->n_pld);
	}
}

/*
 * The PLD certificate a request carries for a budget; false if it carries
 * none for it.
 */
static bool
request_cert(const DpChargeRequest *req, const DpBudgetRow *row, DpPldCertificate *cert)
{
	const char *p = DP_REQUEST_CERTS(req);

	for (int i = 0; i < req->n_certs; i++)
	{
		DpChargeCert c;

		memcpy(&c, p, sizeof(c));
		if (c.budget_kind == (int32) row->kind && c.budget_subject == row->subject &&
			(c.kind == DP_PLD_CERT_FIT || c.kind == DP_PLD_CERT_REFUSED))
		{
			memset(cert, 0, sizeof(*cert));
			cert->kind = (DpPldCertKind) c.kind;
			cert->epsilon_limit = c.epsilon_limit;
			cert->delta_limit = c.delta_limit;
			cert->epsilon = c.epsilon;
			cert->state.n = c.n;
			memcpy(cert->state.terms, p + sizeof(c), sizeof(DpPldTerm) * c.n);
			return true;
		}
		p += sizeof(c) + sizeof(DpPldTerm) * c.n;
	}
	return false;
}

/*
 * Histories the PLD certificate refused, as backends composed them
 * (dp_pld_certify): a statement whose history + statement is one of them
 * is refused without asking its backend to compose again (a role whose
 * budget is exhausted, cycling through statement shapes, composes each
 * shape once).  Exact states, not hashes: a refusal here is exactly that
 * of dp_pld_epsilon.  A small ring in the charger's memory, keyed by the
 * budget (its kind and its role or relation); the certificate of a state
 * depends on nothing else, so an entry never goes stale, it only stops
 * being asked for.
 */
#define REFUSED_RING 64

typedef struct RefusedHistory
{
	DpBudgetKind kind;
	Oid			subject;
	double		epsilon;
	double		delta;
	DpPldState	after;
	double		certificate;	/* its dp_pld_epsilon (Infinity: not available) */
} RefusedHistory;

static RefusedHistory *refused_ring = NULL;
static int	refused_next = 0;
static int	refused_count = 0;

/* is after known to be refused for this budget?  *certificate: its epsilon */
static bool
pld_refused(const DpBudgetRow *row, const DpPldState *after, double *certificate)
{
	for (int i = 0; i < refused_count; i++)
	{
		RefusedHistory *r = &refused_ring[i];

		if (r->kind == row->kind && r->subject == row->subject &&
			r->epsilon == row->b.epsilon_limit && r->delta == row->b.delta_limit &&
			dp_pld_state_equal(&r->after, after))
		{
			*certificate = r->certificate;
			return true;
		}
	}
	return false;
}

static void
remember_refused(const DpBudgetRow *row, const DpPldState *after, double certificate)
{
	RefusedHistory *r;
	double		known;

	if (pld_refused(row, after, &known))
		return;
	if (refused_ring == NULL)
		refused_ring = MemoryContextAlloc(TopMemoryContext, sizeof(RefusedHistory) * REFUSED_RING);
	r = &refused_ring[refused_next];
	refused_next = (refused_next + 1) % REFUSED_RING;
	refused_count = Min(refused_count + 1, REFUSED_RING);
	r->kind = row->kind;
	r->subject = row->subject;
	r->epsilon = row->b.epsilon_limit;
	r->delta = row->b.delta_limit;
	r->after = *after;
	r->certificate = certificate;
}

/*
 * The budgets that pay for a request, each once: the role's own (or its
 * group's, if the role is a group), those of the groups it is a member of
 * (nearest first), those of the relations it read and of their ancestors.
 * *role_paid: one of them is a role's or a group's (a relation's budget
 * alone does not let a role release).
 */
static List *
applicable(Batch *batch, const DpChargeRequest *req, RoleInfo *ri, bool *role_paid)
{
	List	   *set = NIL;
	BudgetState *st;
	ListCell   *lc;
	Oid			rel;

	*role_paid = false;
	st = dp_batch_budget(batch, false, req->role);
	if (st != NULL)
	{
		set = lappend(set, st);
		*role_paid = true;
	}
	foreach(lc, ri->groups)
	{
		st = dp_batch_budget(batch, false, lfirst_oid(lc));
		if (st != NULL && st->row.kind == DP_BUDGET_GROUP && !list_member_ptr(set, st))
		{
			set = lappend(set, st);
			*role_paid = true;
		}
	}
	for (int i = 0; i < req->n_relations + req->n_ancestors; i++)
	{
		memcpy(&rel, DP_REQUEST_RELATIONS(req) + sizeof(Oid) * i, sizeof(Oid));
		st = dp_batch_budget(batch, true, rel);
		if (st != NULL && !list_member_ptr(set, st))
			set = lappend(set, st);
	}
	return set;
}

/* is the request within the role's caps?  If not, the reply says which */
static bool
within_caps(const DpChargeRequest *req, const DpCaps *caps, DpChargeReply *reply)
{
	const double asked[DP_CAP_KINDS] = {req->epsilon, req->delta, req->call_epsilon, req->call_delta};

	for (int k = 0; k < DP_CAP_KINDS; k++)
	{
		if (caps->set[k] && !(asked[k] <= caps->cap[k]))
		{
			reply->result = DP_CHARGE_CAPPED;
			reply->cap_kind = k;
			reply->cap_role = caps->role[k];
			reply->cap = caps->cap[k];
			reply->asked = asked[k];
			return false;
		}
	}
	return true;
}

/* what a request charges each budget that pays for it */
static DpChargeAmounts
request_amounts(const DpChargeRequest *req)
{
	DpChargeAmounts a;

	a.epsilon = req->epsilon;
	a.delta = req->delta;
	a.selection_epsilon = req->selection_epsilon;
	a.selection_delta = req->selection_delta;
	return a;
}

typedef enum Admission
{
	ADMIT,
	REFUSE,
	ASK_PLD						/* only a composition can decide */
} Admission;

/* how one budget decided, for the reply and the charge */
typedef struct Verdict
{
	Admission	admission;
	bool		lifetime;		/* REFUSE: by the lifetime limit */
	double		composed;
	double		pld_composed;
	bool		adopt;			/* ADMIT by cert: it becomes the frontier */
	DpPldCertificate cert;
} Verdict;

/*
 * Does one budget admit the request?  Cheapest first, none composing: the
 * lifetime sums; the basic sums; for 'pld' budgets the frontier (a
 * composition known to fit that covers history + statement) or the
 * certificate the request carries; the Renyi certificate; for 'pld'
 * budgets a refusal known for exactly history + statement.  Otherwise
 * the statement's backend must compose (ASK_PLD).  The work is a few
 * comparisons of at most DP_PLD_MAX_KINDS kinds, whatever the history.
 */
static void
admits(BudgetState *st, const DpChargeRequest *req, const double *curve,
	   const DpPldState *stmt, Verdict *v)
{
	DpBudgetRow *row = &st->row;
	DpBudget   *b = &row->b;
	bool		ask = false;
	DpChargeAmounts amounts = request_amounts(req);

	memset(v, 0, sizeof(*v));
	v->composed = NAN;
	v->pld_composed = NAN;
	v->admission = REFUSE;
	if (!dp_budget_lifetime_admits(row, &amounts))
	{
		v->lifetime = true;
		return;
	}
	if (row->pld_accounting)
	{
		DpBudget	basic = *b;
		DpPldState	after;
		DpPldCertificate cert;

		basic.renyi = false;
		v->admission = ADMIT;
		if (dp_budget_row_admits(&basic, &amounts, curve, &v->composed))
			return;
		after = dp_pld_state_after(&row->pld, stmt);
		if (!after.saturated && b->delta_limit > 0)
		{
			if (stmt->n == 0)
				return;			/* no noisy release to compose */
			if (dp_pld_frontier_admits(&row->frontier, b->epsilon_limit, b->delta_limit, &after))
				return;
			if (request_cert(req, row, &cert) &&
				cert.epsilon_limit == b->epsilon_limit && cert.delta_limit == b->delta_limit)
			{
				if (cert.kind == DP_PLD_CERT_FIT && cert.epsilon <= b->epsilon_limit &&
					dp_pld_state_covers(&cert.state, &after))
				{
					v->adopt = true;
					v->cert = cert;
					return;
				}
				if (cert.kind == DP_PLD_CERT_REFUSED && dp_pld_state_equal(&cert.state, &after))
					remember_refused(row, &after, cert.epsilon);
			}
			ask = !pld_refused(row, &after, &v->pld_composed);
		}
		v->admission = REFUSE;
	}
	if (dp_budget_row_admits(b, &amounts, curve, &v->composed))
		v->admission = ADMIT;
	else if (ask)
		v->admission = ASK_PLD;
}

/* the reply's account of the budget that decided */
static void
describe_budget(const BudgetState *st, const Verdict *v, DpChargeReply *reply)
{
	const DpBudgetRow *row = &st->row;

	reply->budget_kind = row->kind;
	reply->budget_subject = row->subject;
	reply->renyi = row->b.renyi;
	reply->lifetime = v->lifetime;
	reply->composed = v->composed;
	reply->pld_composed = v->pld_composed;
	reply->epsilon_limit = row->b.epsilon_limit;
	reply->delta_limit = row->b.delta_limit;
	reply->has_window = row->has_window && row->has_window_start;
	reply->window_start = row->window_start;
	reply->window_end = st->window_end;
	if (v->lifetime)
	{
		reply->epsilon_remaining = Max(row->lifetime_epsilon_limit - row->lifetime_epsilon_spent, 0);
		reply->delta_remaining = Max(row->lifetime_delta_limit - row->lifetime_delta_spent, 0);
	}
	else
	{
		reply->epsilon_remaining = Max(row->b.epsilon_limit - row->b.epsilon_spent, 0);
		reply->delta_remaining = Max(row->b.delta_limit - row->b.delta_spent, 0);
	}
}

/* charge one budget that admitted the request */
static void
charge_budget(BudgetState *st, const DpChargeRequest *req, const double *curve,
			  const DpPldState *stmt, const Verdict *v)
{
	DpBudgetRow *row = &st->row;
	DpChargeAmounts amounts = request_amounts(req);

	if (v->adopt)
	{
		dp_pld_frontier_adopt(&row->frontier, &v->cert);
		st->frontier_dirty = true;
	}
	dp_budget_row_add(row, &amounts, curve, stmt);
	st->dirty = true;			/* charged */
}

/* until when the statements prepaid to these budgets may run: the first window end */
static TimestampTz
prepaid_until(List *set)
{
	TimestampTz until = DT_NOEND;
	ListCell   *lc;

	foreach(lc, set)
	{
		BudgetState *st = lfirst(lc);

		if (st->row.has_window && st->window_end < until)
			until = st->window_end;
	}
	return until;
}

/*
 * Decide one more statement against every budget of an admitted request
 * and, if each admits it, charge it to each: as if an identical request
 * arrived right after (by the same certificates, none composing, the same
 * caps, the same directed rounding).
 */
static bool
charge_again(BudgetState **budgets, int n, const DpChargeRequest *req, const double *curve,
			 const DpPldState *stmt)
{
	Verdict    *v = palloc(sizeof(Verdict) * n);
	bool		ok = true;

	for (int i = 0; i < n && ok; i++)
	{
		admits(budgets[i], req, curve, stmt, &v[i]);
		ok = v[i].admission == ADMIT;
	}
	if (ok)
		for (int i = 0; i < n; i++)
			charge_budget(budgets[i], req, curve, stmt, &v[i]);
	pfree(v);
	return ok;
}

/*
 * Prepaid statements (dp_agg.prepay; the backend's side is in budget.c).
 * A request for copies > 1 asks its budgets to pay, beside the statement,
 * for up to copies - 1 identical statements that its backend may then run
 * without asking.  Each is decided and charged by charge_again, so the
 * budgets end exactly where that many requests in a row would have left
 * them.  A prepayment takes at most half of what the budgets would still
 * admit: on scratch copies of them, up to 2 (copies - 1) more statements
 * are decided, and if m are admitted, min(copies - 1, m / 2) are charged;
 * so the last statements a budget can pay for are never held by one
 * session from the role's others (or from the other members of a group).
 * Nothing is prepaid when a window of the budgets ends before the
 * prepaid statements would expire (prepay_ms from now, the instant the
 * charge is decided; the backend counts them from before it asked): what
 * a window pays for is run in that window, and a session does not take,
 * in a window's last moments, statements it would have no time to run.
 * Returns how many were charged beyond the statement.
 */
static int
prepay(List *set, const DpChargeRequest *req, const double *curve, const DpPldState *stmt,
	   TimestampTz now)
{
	int			want = req->copies - 1;
	int			n = list_length(set);
	BudgetState *scratch;
	BudgetState **real;
	BudgetState **sim;
	int			admitted = 0;
	int			granted;
	int			i = 0;
	ListCell   *lc;

	if (want <= 0 || n == 0 || req->prepay_ms <= 0 ||
		prepaid_until(set) < TimestampTzPlusMilliseconds(now, req->prepay_ms))
		return 0;
	scratch = palloc(sizeof(BudgetState) * n);
	real = palloc(sizeof(BudgetState *) * n);
	sim = palloc(sizeof(BudgetState *) * n);
	foreach(lc, set)
	{
		real[i] = lfirst(lc);
		scratch[i] = *real[i];
		sim[i] = &scratch[i];
		i++;
	}
	while (admitted < 2 * want && charge_again(sim, n, req, curve, stmt))
		admitted++;
	granted = Min(want, admitted / 2);
	for (i = 0; i < granted; i++)
		if (!charge_again(real, n, req, curve, stmt))
			elog(ERROR, "dp_agg charger: a budget refused a prepaid statement it admitted on its copy");
	pfree(scratch);
	pfree(real);
	pfree(sim);
	return granted;
}

/*
 * Decide one request against every budget that pays for it (in memory)
 * and, if all of them admit it, charge each and append it to the ledger:
 * atomically, since the batch commits or rolls back as a whole, and
 * nothing of a refused request is written anywhere.  Each budget is first
 * renewed if the request falls in a later window than the one it holds;
 * the instant is the charger's clock when it decides, which the ledger
 * records as at: a statement charged at 23:59:59 of a daily window counts
 * in that day, whenever it releases.  Refused before anything is charged,
 * in this order: no budget of the role or of a group (NO_BUDGET), a cap
 * (CAPPED), a budget that cannot pay by any cheap certificate (DENIED,
 * naming the first such budget), a 'pld' budget that only a composition
 * can decide (NEED_PLD: its backend composes, and asks again).  Once it
 * is charged, the statements it prepays, if any (prepay), are charged
 * after it, and its one ledger row records them all.
 */
static void
charge_one(const DpChargeRequest *req, Batch *batch, LedgerWriter *ledger, DpChargeReply *reply,
		   List **charged)
{
	double		curve[DP_RDP_ORDERS];
	DpPldState	stmt;
	RoleInfo   *ri = dp_batch_role(batch, req->role);
	bool		role_paid;
	List	   *set = applicable(batch, req, ri, &role_paid);
	TimestampTz now = GetCurrentTimestamp();
	Verdict    *verdicts;
	int			i;
	ListCell   *lc;
	int			refused = -1;
	int			asked = -1;
	int			copies;

	reply->composed = NAN;
	reply->pld_composed = NAN;
	if (!role_paid)
	{
		reply->result = DP_CHARGE_NO_BUDGET;
		return;
	}
	if (!dp_budget_store_has(&batch->store, "selection_epsilon") &&
		(req->selection_epsilon != 0 || req->selection_delta != 0))
	{
		/* the selection needs 0.3 objects, checked before: fail closed */
		reply->result = DP_CHARGE_FAILED;
		set_message(reply, "The SQL objects of dp_agg are older than version 0.3 and cannot record a private selection.");
		return;
	}
	if (!within_caps(req, &ri->caps, reply))
		return;
	memcpy(curve, DP_REQUEST_CURVE(req), sizeof(curve));
	request_pld(req, &stmt);

	verdicts = palloc(sizeof(Verdict) * list_length(set));
	i = 0;
	foreach(lc, set)
	{
		BudgetState *st = lfirst(lc);

		dp_budget_roll_window(&st->row, now, &st->window_end);
		admits(st, req, curve, &stmt, &verdicts[i]);
		if (verdicts[i].admission == REFUSE && refused < 0)
			refused = i;
		if (verdicts[i].admission == ASK_PLD && asked < 0)
			asked = i;
		i++;
	}
	if (refused >= 0 || asked >= 0)
	{
		int			which = refused >= 0 ? refused : asked;
		BudgetState *st = list_nth(set, which);

		describe_budget(st, &verdicts[which], reply);
		if (refused >= 0)
			reply->result = DP_CHARGE_DENIED;
		else
		{
			reply->result = DP_CHARGE_NEED_PLD;
			reply->history = st->row.pld;
		}
		return;
	}

	i = 0;
	foreach(lc, set)
		charge_budget(lfirst(lc), req, curve, &stmt, &verdicts[i++]);
	copies = 1 + (ledger->statements ? prepay(set, req, curve, &stmt, now) : 0);
	reply->ledger_id = dp_ledger_append(ledger, req, curve, set, copies);
	reply->result = DP_CHARGE_OK;
	if (copies == 1)
	{
		*charged = set;
		dp_batch_remember_shape(reply->ledger_id, curve);
	}
	reply->copies = copies;
	reply->prepaid_until = prepaid_until(set);
	if (set != NIL)
		describe_budget(linitial(set), &verdicts[0], reply);
}

/*
 * A checked copy of a request of at most avail bytes at src, in the current
 * memory context; NULL if it is malformed.
 */
static DpChargeRequest *
copy_request(const char *src, Size avail)
{
	DpChargeRequest head;
	DpChargeRequest *req;
	const char *certs;
	Size		certs_size = 0;

	if (avail < offsetof(DpChargeRequest, data))
		return NULL;
	memcpy(&head, src, offsetof(DpChargeRequest, data));
	if (head.size < offsetof(DpChargeRequest, data) + 1 || head.size > avail ||
		head.copies < 0 || head.copies > DP_PREPAY_MAX || head.prepay_ms < 0 ||
		head.query_len < 0 || head.detail_len < (int32) VARHDRSZ || head.n_rdp != DP_RDP_ORDERS ||
		head.n_pld < -1 || head.n_pld > DP_PLD_MAX_KINDS ||
		head.n_relations < 0 || head.n_relations > (int32) (MaxAllocSize / sizeof(Oid)) ||
		head.n_ancestors < 0 || head.n_ancestors > (int32) (MaxAllocSize / sizeof(Oid)) ||
		head.n_certs < 0 || head.certs_size < 0 ||
		offsetof(DpChargeRequest, data) + (Size) head.query_len + 1 + (Size) head.detail_len +
		sizeof(double) * DP_RDP_ORDERS + sizeof(DpPldTerm) * (Size) Max(head.n_pld, 0) +
		sizeof(Oid) * ((Size) head.n_relations + (Size) head.n_ancestors) +
		(Size) head.certs_size != head.size)
		return NULL;
	req = palloc(head.size);
	memcpy(req, src, head.size);
	req->data[req->query_len] = '\0';
	/* the detail is one uncompressed jsonb varlena of exactly its length */
	{
		char	   *copy = palloc(req->detail_len);

		memcpy(copy, DP_REQUEST_DETAIL(req), req->detail_len);
		if (VARATT_IS_EXTENDED(copy) || VARSIZE(copy) != (Size) req->detail_len)
			return NULL;
		pfree(copy);
	}
	/* the certificates fill their bytes exactly */
	certs = DP_REQUEST_CERTS(req);
	for (int i = 0; i < req->n_certs; i++)
	{
		DpChargeCert c;

		if (certs_size + sizeof(c) > (Size) req->certs_size)
			return NULL;
		memcpy(&c, certs + certs_size, sizeof(c));
		if (c.n < 0 || c.n > DP_PLD_MAX_KINDS)
			return NULL;
		certs_size += sizeof(c) + sizeof(DpPldTerm) * c.n;
	}
	if (certs_size != (Size) req->certs_size)
		return NULL;
	return req;
}

/* the request of a taken slot; NULL if the backend has gone or it is malformed */
static DpChargeRequest *
read_request(TakenRequest *t)
{
	dsm_segment *seg;
	DpChargeRequest *req;

	if (t->handle == DSM_HANDLE_INVALID)
		return t->req;
	seg = dsm_attach(t->handle);
	if (seg == NULL)
		return NULL;
	req = copy_request(dsm_segment_address(seg), dsm_segment_map_length(seg));
	dsm_detach(seg);
	return req;
}

static void
set_message(DpChargeReply *reply, const char *msg)
{
	strlcpy(reply->message, msg, sizeof(reply->message));
}

/*
 * The first batch of a charger folds every journal row (a crash leaves rows
 * that no lease remembers), and so does one after charges were journaled
 * while the charger was idle (dp_charger_main, dp_lease_unfolded).
 */
static bool fold_everything = true;

/*
 * Charge a batch in one transaction: each budget row is locked (as SELECT
 * ... FOR UPDATE locks it) and read once, its lease recalled and the
 * journal folded into it (charge_batch.c, "Folding"), the requests are decided in
 * arrival order against the budgets in memory, each admitted one appends
 * its ledger row, and each budget is written once; one commit makes them
 * all durable (charger_commit_mode).  Then the budgets are leased again
 * (charge_lease.c).  If anything fails, the transaction is rolled back and
 * the requests are retried one at a time, so that a request that cannot
 * be charged fails alone.  The replies are final only after this returns.
 * n may be 0: only a fold.
 */
static void
process_batch(TakenRequest *batch, int n)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	/* what outlives the transaction: the leases to grant, the error's text */
	MemoryContext cxt = AllocSetContextCreate(oldcxt, "dp_agg charger batch",
											  ALLOCSET_DEFAULT_SIZES);
	volatile bool failed = false;
	List	  **charged = MemoryContextAllocZero(cxt, sizeof(List *) * Max(n, 1));
	uint64		changes = dp_lease_changes();	/* before any row is read */

	charger_commit_mode();
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PG_TRY();
	{
		Batch		b;
		LedgerWriter ledger;
		PendingLeases *pending = NULL;
		Oid			budget_rel;
		bool		folded_all;

		memset(&b, 0, sizeof(b));
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "dp_agg charger: SPI_connect failed");
		PushActiveSnapshot(GetTransactionSnapshot());
		pgstat_report_activity(STATE_RUNNING, "charging privacy budgets");
		if (!dp_budget_store_open(&b.store, true))
			elog(ERROR, "dp_agg charger: dp_agg.budget does not exist");
		budget_rel = RelationGetRelid(b.store.rel);
		dp_ledger_open(&ledger);
		if (fold_everything)
		{
			/* (once per charger: the leases of databases dropped since are freed) */
			dp_lease_reclaim_dropped();
			b.fold_all = true;
			dp_batch_fold(&b);
			b.fold_all = false;
			b.folded_all = true;
		}
		for (int i = 0; i < n; i++)
		{
			DpChargeRequest *req = read_request(&batch[i]);

			memset(&batch[i].reply, 0, sizeof(DpChargeReply));
			if (req == NULL)
			{
				batch[i].reply.result = DP_CHARGE_FAILED;
				set_message(&batch[i].reply, "the request was abandoned");
				continue;
			}
			if (req->copies == 0)
			{
				/*
				 * A reader of the tables asks them folded (dp_fold_journal).
				 * It waits for the fold, and may hold a lock that a
				 * transaction holding a budget row's lock waits for: a cycle
				 * the deadlock detector cannot see.  So the batch waits at
				 * most a second for a lock from here on; if it fails, its
				 * requests are tried alone, and the reader reads the tables
				 * as they are.
				 */
				(void) set_config_option("lock_timeout", "1000", PGC_SUSET, PGC_S_SESSION,
										 GUC_ACTION_LOCAL, true, 0, false);
				if (!b.folded_all)
				{
					b.fold_all = true;
					dp_batch_fold(&b);
					b.fold_all = false;
					b.folded_all = true;
				}
				batch[i].reply.result = DP_CHARGE_OK;
				continue;
			}
			charge_one(req, &b, &ledger, &batch[i].reply, &charged[i]);
		}
		dp_ledger_close(&ledger);
		dp_batch_write(&b);
		dp_budget_store_close(&b.store);
		pending = dp_leases_to_grant(&b, charged, n, cxt, dp_leasing(backend_flushes));
		folded_all = b.folded_all;
		SPI_finish();
		PopActiveSnapshot();
		CommitTransactionCommand();
		if (folded_all)
		{
			fold_everything = false;
			dp_lease_db_folded();
		}
		/* where the backends of the charges wait for the WAL to be flushed */
		for (int i = 0; i < n; i++)
			batch[i].reply.commit_lsn = backend_flushes ? XactLastCommitEnd : InvalidXLogRecPtr;
		{
			DpChargeReply **replies = MemoryContextAlloc(cxt, sizeof(DpChargeReply *) * Max(n, 1));

			for (int i = 0; i < n; i++)
				replies[i] = &batch[i].reply;
			dp_grant_leases(budget_rel, pending, replies, n, changes);
		}
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		dp_ledger_forget();		/* look the ledger's sequence up again, recompile */
		dp_budget_store_forget();
		for (int i = 0; i < n; i++)
		{
			batch[i].reply.result = DP_CHARGE_FAILED;
			set_message(&batch[i].reply, edata->detail == NULL ? edata->message :
						psprintf("%s: %s", edata->message, edata->detail));
		}
		ereport(LOG,
				(errmsg("dp_agg charger could not commit %d charges: %s", n, edata->message)));
		FreeErrorData(edata);
		failed = true;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(oldcxt);
	MemoryContextDelete(cxt);
	pgstat_report_activity(STATE_IDLE, NULL);

	if (failed && n > 1)
	{
		for (int i = 0; i < n; i++)
			process_batch(&batch[i], 1);
	}
}

/* ---------- the charger's life ---------- */

static Oid	my_dboid = InvalidOid;
static ChargerStart my_start = {-1, 0};

/*
 * Exit callback: fail the requests we hold (the backends cannot know
 * whether their charges committed), give our slot back, and wake the
 * backends waiting for a charger so that they start another.  Runs after
 * the transaction was aborted (on_shmem_exit callbacks follow the
 * before_shmem_exit ones), on every exit that does not reinitialize shared
 * memory.
 */
static void
charger_exit(int code, Datum arg)
{
	for (int i = 0; i < dp_charger_shared->n_requests; i++)
	{
		RequestSlot *s = &dp_request_slots[i];
		bool		orphaned = false;

		SpinLockAcquire(&s->mutex);
		if (s->state == REQ_TAKEN && s->charger == my_start.generation)
		{
			s->state = REQ_ORPHANED;
			orphaned = true;
		}
		SpinLockRelease(&s->mutex);
		if (orphaned)
			ConditionVariableBroadcast(&s->cv);
	}
	if (dp_charger_release_slot(my_start.slot, my_start.generation, false))
		dp_charger_wake_pending(my_dboid);
}

/*
 * Turn our STARTING slot RUNNING and wake the backend that launched us;
 * false if the slot is no longer ours (the launch was given up).
 */
static bool
register_charger(void)
{
	ChargerSlot *c = &dp_charger_slots[my_start.slot];
	Latch	   *starter = NULL;
	bool		ok = false;

	LWLockAcquire(dp_charger_shared->lock, LW_EXCLUSIVE);
	if (c->generation == my_start.generation && c->state == CHARGER_STARTING)
	{
		c->state = CHARGER_RUNNING;
		c->latch = MyLatch;
		starter = c->starter;
		c->starter = NULL;
		ok = true;
	}
	LWLockRelease(dp_charger_shared->lock);
	if (starter != NULL)
		SetLatch(starter);
	return ok;
}

/*
 * Take every PENDING request of our database, copying inline bodies out
 * after the slot is ours; returns how many.
 */
static int
take_requests(TakenRequest *batch, MemoryContext cxt)
{
	int			n = 0;

	for (int i = 0; i < dp_charger_shared->n_requests; i++)
	{
		RequestSlot *s = &dp_request_slots[i];
		bool		taken = false;

		SpinLockAcquire(&s->mutex);
		if (s->state == REQ_PENDING && s->dboid == my_dboid)
		{
			s->state = REQ_TAKEN;
			s->charger = my_start.generation;
			taken = true;
		}
		SpinLockRelease(&s->mutex);
		if (!taken)
			continue;
		batch[n].slot = i;
		batch[n].handle = s->handle;
		batch[n].req = NULL;
		if (s->handle == DSM_HANDLE_INVALID)
		{
			MemoryContext old = MemoryContextSwitchTo(cxt);

			batch[n].req = copy_request(s->inline_data, Min(s->inline_size, CHARGE_INLINE_SIZE));
			MemoryContextSwitchTo(old);
		}
		memset(&batch[n].reply, 0, sizeof(DpChargeReply));
		n++;
	}
	return n;
}

/* publish the replies of a processed batch and wake their backends */
static void
reply_all(TakenRequest *batch, int n)
{
	for (int i = 0; i < n; i++)
	{
		RequestSlot *s = &dp_request_slots[batch[i].slot];

		s->reply = batch[i].reply;	/* ours while TAKEN */
		SpinLockAcquire(&s->mutex);
		Assert(s->state == REQ_TAKEN && s->charger == my_start.generation);
		s->state = REQ_DONE;
		SpinLockRelease(&s->mutex);
		ConditionVariableBroadcast(&s->cv);
	}
}

/*
 * Give our slot back if no request of our database is pending; true if we
 * did (the caller exits).  Checked under the lock that backends take to
 * find us after publishing a request, so that none is left behind: a
 * backend that publishes later finds no charger and starts one.
 */
static bool
retire(void)
{
	bool		pending = false;

	LWLockAcquire(dp_charger_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < dp_charger_shared->n_requests && !pending; i++)
	{
		SpinLockAcquire(&dp_request_slots[i].mutex);
		pending = dp_request_slots[i].state == REQ_PENDING && dp_request_slots[i].dboid == my_dboid;
		SpinLockRelease(&dp_request_slots[i].mutex);
	}
	if (!pending && dp_charger_slots[my_start.slot].generation == my_start.generation)
	{
		dp_charger_slots[my_start.slot].state = CHARGER_FREE;
		dp_charger_slots[my_start.slot].latch = NULL;
	}
	LWLockRelease(dp_charger_shared->lock);
	return !pending;
}

/*
 * Group commit.  A charge must be durable before its statement releases
 * anything, but the charger need not wait for the WAL flush itself: it
 * commits each batch asynchronously (the commit record is in the WAL
 * buffers, the transaction visible) and tells each backend the commit's
 * end, which the backend flushes (XLogFlush) before it goes on, so that
 * the charger takes the next batch while the disk writes the last.
 * XLogFlush is PostgreSQL's own group commit: the backends waiting for
 * one flush are served by one fsync.  Nothing is released before its charge
 * is on disk, as before; and since the WAL is flushed in order, a crash can
 * only lose a suffix of the charges, never one that a later charge
 * counted on (any charge decided after a lost one is lost with it), and
 * only charges whose statements released nothing.  With synchronous
 * replication (synchronous_standby_names set), the charger commits
 * synchronously as it always did: the wait for the standby stays in the
 * process that cannot be cancelled.
 */
static bool backend_flushes = false;

static void
charger_commit_mode(void)
{
	bool		flushes = SyncRepStandbyNames == NULL || SyncRepStandbyNames[0] == '\0';

	if (flushes != backend_flushes)
	{
		SetConfigOption("synchronous_commit", flushes ? "off" : "on", PGC_SUSET, PGC_S_OVERRIDE);
		backend_flushes = flushes;
	}
}

/* settings of the charger's own session: durability is the point */
static void
charger_settings(void)
{
	SetConfigOption("synchronous_commit", "on", PGC_SUSET, PGC_S_OVERRIDE);
	backend_flushes = false;
	SetConfigOption("default_transaction_read_only", "off", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("default_transaction_isolation", "read committed", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("statement_timeout", "0", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("search_path", "pg_catalog", PGC_SUSET, PGC_S_OVERRIDE);
}

void
dp_charger_main(Datum arg)
{
	TakenRequest *batch;
	MemoryContext batch_cxt;
	TimestampTz idle_since;
	TimestampTz fold_tried = 0;

	my_dboid = DatumGetObjectId(arg);
	memcpy(&my_start, MyBgworkerEntry->bgw_extra, sizeof(my_start));
	if (my_start.slot < 0 || my_start.slot >= dp_charger_shared->n_chargers)
		elog(FATAL, "dp_agg charger: started for slot %d of %d", my_start.slot, dp_charger_shared->n_chargers);
	on_shmem_exit(charger_exit, (Datum) 0);

	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(my_dboid, InvalidOid, 0);
	charger_settings();
	if (!register_charger())
		proc_exit(0);

	batch = MemoryContextAlloc(TopMemoryContext, sizeof(TakenRequest) * dp_charger_shared->n_requests);
	batch_cxt = AllocSetContextCreate(TopMemoryContext, "dp_agg charger batch",
									  ALLOCSET_DEFAULT_SIZES);
	idle_since = GetCurrentTimestamp();

	for (;;)
	{
		int			n;

		CHECK_FOR_INTERRUPTS();
		MemoryContextReset(batch_cxt);
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		n = take_requests(batch, batch_cxt);
		if (n > 0)
		{
			process_batch(batch, n);
			reply_all(batch, n);
			idle_since = GetCurrentTimestamp();
			continue;
		}
		/*
		 * Charges were journaled since the last fold of every row, and no
		 * lease is in use any more: fold them, so that the tables do not lag
		 * (and the charger does not retire before).
		 */
		if (dp_lease_unfolded() && !dp_lease_any_valid() &&
			TimestampDifferenceExceeds(fold_tried, GetCurrentTimestamp(), Max(dp_guc_lease_ms, 100)))
		{
			fold_everything = true;
			process_batch(batch, 0);
			fold_tried = idle_since = GetCurrentTimestamp();
			continue;
		}
		if (TimestampDifferenceExceeds(idle_since, GetCurrentTimestamp(), dp_guc_charger_idle_ms) &&
			!dp_lease_unfolded() && retire())
			proc_exit(0);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 dp_lease_unfolded() || dp_lease_any_valid() ?
						 Min(dp_guc_charger_idle_ms, Max(dp_guc_lease_ms, 100)) :
						 dp_guc_charger_idle_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}
