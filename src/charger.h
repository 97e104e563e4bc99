/*-------------------------------------------------------------------------
 *
 * charger.h
 *	  The charger: a background worker that commits budget charges durably,
 *	  outside the transactions of the statements it charges.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_CHARGER_H
#define DP_AGG_CHARGER_H

#include "access/xlogdefs.h"
#include "datatype/timestamp.h"
#include "fmgr.h"

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

extern void dp_charger_init(void);
extern void dp_charger_submit(const DpChargeRequest *req, DpChargeReply *reply);

extern PGDLLEXPORT void dp_charger_main(Datum arg);

#endif							/* DP_AGG_CHARGER_H */
