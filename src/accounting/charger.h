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

#include "charger_shmem.h"

extern PGDLLEXPORT void dp_charger_main(Datum arg);

#endif							/* DP_AGG_CHARGER_H */
