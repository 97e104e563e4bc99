/*-------------------------------------------------------------------------
 *
 * charger_shmem.h
 *	  What backends and chargers exchange: the charge requests and replies,
 *	  and the shared memory they travel through (request slots, charger
 *	  slots).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_CHARGER_SHMEM_H
#define DP_AGG_CHARGER_SHMEM_H

#include "access/xlogdefs.h"
#include "datatype/timestamp.h"
#include "storage/condition_variable.h"
#include "storage/dsm.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/spin.h"

#include "pld_state.h"

typedef enum DpChargeResult
{
	DP_CHARGE_NONE = 0,
	DP_CHARGE_OK,				/* committed: the statement may release */
	DP_CHARGE_DENIED,			/* a budget cannot pay; nothing written */
	DP_CHARGE_NO_BUDGET,		/* no budget of the role or of a group pays
								 * for it; nothing written */
	DP_CHARGE_FAILED,			/* an error; nothing committed */
	DP_CHARGE_NEED_PLD,			/* only the PLD certificate of a budget can
								 * decide: compose its history + statement
								 * (dp_pld_certify) and ask again with the
								 * certificate; nothing written */
	DP_CHARGE_CAPPED			/* above a cap of the role; nothing written */
} DpChargeResult;

/* the most budgets one statement charged by a lease may pay from */
#define DP_LEASE_MAX_BUDGETS 8

/* a budget the charger leased (lease.c): where it is in shared memory */
typedef struct DpLeaseRef
{
	int32		slot;
	Oid			dboid;
	Oid			budget_rel;		/* dp_agg.budget */
	int64		budget_id;
	uint64		changes;		/* DBA's changes of budgets and caps counted
								 * when it was granted (lease.c) */
} DpLeaseRef;

typedef struct DpChargeReply
{
	DpChargeResult result;
	int64		ledger_id;
	/* DENIED, NEED_PLD: the budget concerned (a DpBudgetKind and its role or relation) */
	int32		budget_kind;
	Oid			budget_subject;
	bool		lifetime;		/* DENIED by its lifetime limit */
	bool		has_window;		/* it renews: the window charged */
	TimestampTz window_start;
	TimestampTz window_end;
	double		epsilon_remaining;	/* in the window (lifetime: over it) */
	double		delta_remaining;
	double		composed;		/* Renyi-composed epsilon after (NaN if none) */
	double		pld_composed;	/* DENIED by the PLD certificate: its epsilon
								 * after (Infinity: not available; NaN: none) */
	bool		renyi;			/* the budget uses Renyi accounting */
	/* CAPPED: the cap (a DpCapKind), whose, and what the statement asks */
	int32		cap_kind;
	Oid			cap_role;
	double		cap;
	double		asked;
	char		message[512];
	/* OK: the backend flushes the WAL to here before it releases anything */
	XLogRecPtr	commit_lsn;
	/* OK: the statements charged (1 + those prepaid), and until when the
	 * prepaid ones may be used (the end of the first window to end among the
	 * budgets charged; DT_NOEND if none has a window) */
	int32		copies;
	TimestampTz prepaid_until;
	/*
	 * OK: the budgets of the charge, leased (sorted by slot) until
	 * lease_until, for the backend's next identical statements; n_leases 0:
	 * none leased.  shape: the ledger row that describes the statement.
	 */
	int32		n_leases;
	DpLeaseRef	leases[DP_LEASE_MAX_BUDGETS];
	TimestampTz lease_until;
	/* NEED_PLD: the limits and the budget's releases by kind, to compose */
	double		epsilon_limit;
	double		delta_limit;
	DpPldState	history;
} DpChargeReply;

/*
 * What a backend sends: the price (and the part of it that private
 * selections cost, accounted beside the curve), the largest price of one
 * of its calls (for the caps), then in data: the query text
 * (NUL-terminated), the detail (a jsonb varlena of detail_len bytes), the
 * statement's Renyi DP curve (n_rdp doubles), its releases by kind for
 * 'pld' accounting (n_pld DpPldTerm; n_pld -1: more kinds than a state
 * holds), the relations it read (n_relations Oids) and their ancestors
 * (n_ancestors Oids: the budgets of both pay), and the PLD certificates
 * the backend composed after DP_CHARGE_NEED_PLD answers (n_certs of them
 * in certs_size bytes, each a DpChargeCert followed by its terms).  All
 * unaligned.
 */
typedef struct DpChargeRequest
{
	uint32		size;			/* of the whole request */
	Oid			role;
	double		epsilon;
	double		delta;
	double		selection_epsilon;	/* of epsilon and delta: the private */
	double		selection_delta;	/* selections of GROUP BY keys */
	double		call_epsilon;	/* the largest price of one of its calls */
	double		call_delta;
	int32		copies;			/* statements to charge: 1, or up to
								 * DP_PREPAY_MAX with dp_agg.prepay; 0: none,
								 * only fold the journal (charge_batch.c,
								 * "Folding") */
	int32		prepay_ms;		/* copies > 1: how long they may run
								 * (dp_agg.prepay_time) */
	int32		query_len;
	int32		detail_len;
	int32		n_rdp;
	int32		n_pld;
	int32		n_relations;
	int32		n_ancestors;
	int32		n_certs;
	int32		certs_size;
	char		data[FLEXIBLE_ARRAY_MEMBER];
} DpChargeRequest;

/* a PLD certificate composed for one budget, in a request */
typedef struct DpChargeCert
{
	int32		budget_kind;	/* DpBudgetKind */
	Oid			budget_subject;
	int32		kind;			/* DpPldCertKind */
	int32		n;				/* DpPldTerm that follow */
	double		epsilon_limit;	/* the limits it was computed for */
	double		delta_limit;
	double		epsilon;		/* its dp_pld_epsilon at delta_limit */
} DpChargeCert;

/* where each part of a request's data starts */
#define DP_REQUEST_DETAIL(r)	((r)->data + (r)->query_len + 1)
#define DP_REQUEST_CURVE(r)		(DP_REQUEST_DETAIL(r) + (r)->detail_len)
#define DP_REQUEST_PLD(r)		(DP_REQUEST_CURVE(r) + sizeof(double) * (r)->n_rdp)
#define DP_REQUEST_RELATIONS(r) (DP_REQUEST_PLD(r) + sizeof(DpPldTerm) * Max((r)->n_pld, 0))
#define DP_REQUEST_ANCESTORS(r) (DP_REQUEST_RELATIONS(r) + sizeof(Oid) * (r)->n_relations)
#define DP_REQUEST_CERTS(r)		(DP_REQUEST_ANCESTORS(r) + sizeof(Oid) * (r)->n_ancestors)

typedef enum RequestState
{
	REQ_IDLE = 0,
	REQ_WRITING,
	REQ_PENDING,
	REQ_TAKEN,
	REQ_DONE,
	REQ_ORPHANED
} RequestState;

typedef enum ChargerState
{
	CHARGER_FREE = 0,
	CHARGER_STARTING,
	CHARGER_RUNNING
} ChargerState;

/*
 * Requests up to this size travel in the slot itself: a dynamic shared
 * memory segment per statement (create, attach, detach: several system
 * calls and page faults on each side) was a large part of the cost of a
 * charge.  A request holds the query text, the detail, the Renyi curve
 * (DP_RDP_ORDERS doubles) and the releases by kind (a few DpPldTerm).
 */
#define CHARGE_INLINE_SIZE 8192

typedef struct RequestSlot
{
	slock_t		mutex;			/* protects state, seq, dboid, charger */
	RequestState state;
	uint64		seq;			/* of the request in the slot */
	Oid			dboid;
	uint64		charger;		/* TAKEN: generation of the charger */
	ConditionVariable cv;		/* the backend waits here */
	/* owned by whoever the state names (see the head comment) */
	DpChargeReply reply;
	dsm_handle	handle;			/* DSM_HANDLE_INVALID: the request is inline */
	uint32		inline_size;
	char		inline_data[CHARGE_INLINE_SIZE];
} RequestSlot;

typedef struct ChargerSlot
{
	ChargerState state;
	Oid			dboid;
	uint64		generation;		/* of the charger claimed into it */
	Latch	   *latch;			/* RUNNING: the charger's */
	Latch	   *starter;		/* STARTING: the launching backend's */
} ChargerSlot;

typedef struct DpChargerShared
{
	LWLock	   *lock;			/* protects the charger slots */
	uint64		next_generation;
	int			n_chargers;
	int			n_requests;
	/* ChargerSlot[n_chargers], then RequestSlot[n_requests] */
} DpChargerShared;

/* what a launching backend tells its charger, in bgw_extra */
typedef struct ChargerStart
{
	int			slot;
	uint64		generation;
} ChargerStart;

/* the shared memory, attached at startup (charger_shmem.c) */
extern DpChargerShared *dp_charger_shared;
extern ChargerSlot *dp_charger_slots;
extern RequestSlot *dp_request_slots;

extern void dp_charger_init(void);
extern void dp_charger_wake_pending(Oid dboid);
extern bool dp_charger_running(uint64 generation);
extern bool dp_charger_release_slot(int i, uint64 generation, bool only_starting);

#endif							/* DP_AGG_CHARGER_SHMEM_H */
