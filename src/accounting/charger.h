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
#include "fmgr.h"

#include "pld_state.h"

typedef enum DpChargeResult
{
	DP_CHARGE_NONE = 0,
	DP_CHARGE_OK,				/* committed: the statement may release */
	DP_CHARGE_DENIED,			/* the budget cannot pay; nothing written */
	DP_CHARGE_NO_BUDGET,		/* the role has no budget; nothing written */
	DP_CHARGE_FAILED,			/* an error; nothing committed */
	DP_CHARGE_NEED_PLD			/* only the PLD certificate can decide: compose
								 * history + statement (dp_pld_certify) and ask
								 * again with the certificate; nothing written */
} DpChargeResult;

typedef struct DpChargeReply
{
	DpChargeResult result;
	int64		ledger_id;
	double		epsilon_remaining;
	double		delta_remaining;
	double		composed;		/* Renyi-composed epsilon after (NaN if none) */
	double		pld_composed;	/* DENIED by the PLD certificate: its epsilon
								 * after (Infinity: not available; NaN: none) */
	bool		renyi;			/* the role uses Renyi accounting */
	char		message[512];
	/* OK: the backend flushes the WAL to here before it releases anything */
	XLogRecPtr	commit_lsn;
	/* NEED_PLD: the limits and the role's releases by kind, to compose */
	double		epsilon_limit;
	double		delta_limit;
	DpPldState	history;
} DpChargeReply;

/*
 * What a backend sends: the price (and the part of it that private
 * selections cost, accounted beside the curve), then in data the query
 * text and the detail json (each NUL-terminated), the statement's Renyi DP
 * curve (n_rdp doubles, unaligned) and its releases by kind for 'pld'
 * accounting (n_pld DpPldTerm, unaligned; n_pld -1: more kinds than a
 * state holds), then the releases of a PLD certificate the backend
 * composed after a DP_CHARGE_NEED_PLD answer (n_cert DpPldTerm, unaligned;
 * cert_kind DP_PLD_CERT_NONE: none).
 */
typedef struct DpChargeRequest
{
	uint32		size;			/* of the whole request */
	Oid			role;
	double		epsilon;
	double		delta;
	double		selection_epsilon;	/* of epsilon and delta: the private */
	double		selection_delta;	/* selections of GROUP BY keys */
	int32		query_len;
	int32		detail_len;
	int32		n_rdp;
	int32		n_pld;
	int32		cert_kind;		/* DpPldCertKind */
	int32		n_cert;
	double		cert_epsilon_limit;	/* the limits it was computed for */
	double		cert_delta_limit;
	double		cert_epsilon;	/* its dp_pld_epsilon at cert_delta_limit */
	char		data[FLEXIBLE_ARRAY_MEMBER];
} DpChargeRequest;

extern void dp_charger_init(void);
extern void dp_charger_submit(const DpChargeRequest *req, DpChargeReply *reply);

extern PGDLLEXPORT void dp_charger_main(Datum arg);

#endif							/* DP_AGG_CHARGER_H */
