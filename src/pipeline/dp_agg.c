/*-------------------------------------------------------------------------
 *
 * dp_agg.c
 *	  dp_agg: differentially private aggregates for PostgreSQL.
 *
 * This file only loads the extension.  Without shared_preload_libraries the
 * library still loads (so that CREATE EXTENSION and the calibration
 * functions work) but installs no hooks, so no release can be priced and
 * every DP aggregate fails closed with a hint.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"

#include "budget.h"
#include "catalog.h"
#include "dist_protect.h"
#include "dist_replay.h"
#include "dist_session.h"
#include "domain_catalog.h"
#include "guc.h"
#include "hooks.h"
#include "inheritance.h"
#include "insert_drain.h"
#include "protect.h"
#include "siphash.h"
#include "unit_catalog.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	dp_guc_init();
	dp_catalog_init();
	/* the priorities of privacy units rest on it (unit_pick.c) */
	if (!dp_siphash_self_check())
		elog(ERROR, "dp_agg: SipHash-2-4 fails the test vector of its paper");
	if (!process_shared_preload_libraries_in_progress)
		return;
	dp_preloaded = true;
	dp_inheritance_init();
	dp_protect_init();
	dp_dist_protect_init();
	dp_dist_session_init();
	dp_unit_catalog_init();
	dp_domain_catalog_init();
	dp_hooks_init();
	dp_insert_drain_init();
	dp_budget_init();
	dp_replay_init();
}
