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

#include "fmgr.h"

typedef enum DpChargeResult
{
	DP_CHARGE_NONE = 0,
	DP_CHARGE_OK,				/* committed: the statement may release */
	DP_CHARGE_DENIED,			/* the budget cannot pay; nothing written */
	DP_CHARGE_NO_BUDGET,		/* the role has no budget; nothing written */
	DP_CHARGE_FAILED			/* an error; nothing committed */
} DpChargeResult;

typedef struct DpChargeReply
{
	DpChargeResult result;
	int64		ledger_id;
	double		epsilon_remaining;
	double		delta_remaining;
	double		composed;		/* Renyi-composed epsilon after (NaN if none) */
	bool		renyi;			/* the role uses Renyi accounting */
	char		message[512];
} DpChargeReply;

/*
 * What a backend sends: the price (and the part of it that private
 * selections cost, accounted beside the curve), then in data the query
 * text and the detail json (each NUL-terminated), the statement's Renyi DP
 * curve (n_rdp doubles, unaligned) and its releases by kind for 'pld'
 * accounting (n_pld DpPldTerm, unaligned; n_pld -1: more kinds than a
 * state holds).
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
	char		data[FLEXIBLE_ARRAY_MEMBER];
} DpChargeRequest;

extern void dp_charger_init(void);
extern void dp_charger_submit(const DpChargeRequest *req, DpChargeReply *reply);

extern PGDLLEXPORT void dp_charger_main(Datum arg);

#endif							/* DP_AGG_CHARGER_H */
