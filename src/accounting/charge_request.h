/*-------------------------------------------------------------------------
 *
 * charge_request.h
 *	  The backend's side of a charge: submit a request to the charger of
 *	  the database and wait for its reply.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_CHARGE_REQUEST_H
#define DP_AGG_CHARGE_REQUEST_H

#include "charger_shmem.h"

extern void dp_charger_submit(const DpChargeRequest *req, DpChargeReply *reply);

#endif							/* DP_AGG_CHARGE_REQUEST_H */
