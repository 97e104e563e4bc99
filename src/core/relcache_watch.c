/*-------------------------------------------------------------------------
 *
 * relcache_watch.c
 *	  One relcache invalidation callback for every session cache of dp_agg.
 *
 * A backend has room for few relcache callbacks (MAX_RELCACHE_CALLBACKS,
 * 10 in PostgreSQL 15), and a preloaded extension shares them with every
 * other library loaded into the backend: Citus alone takes most of them,
 * and CREATE EXTENSION citus fails ("out of relcache_callback_list
 * slots") when they run out.  So dp_agg registers one callback, here, and
 * calls each of its caches' watchers from it, in the order they were
 * added.  Watchers are added at _PG_init only.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/inval.h"

#include "relcache_watch.h"

#define MAX_WATCHERS 8

static DpRelcacheWatcher watchers[MAX_WATCHERS];
static int	nwatchers = 0;

static void
relcache_changed(Datum arg, Oid relid)
{
	for (int i = 0; i < nwatchers; i++)
		watchers[i] (relid);
}

/* Call watcher at each relcache invalidation (InvalidOid: of every relation). */
void
dp_relcache_watch(DpRelcacheWatcher watcher)
{
	if (nwatchers == MAX_WATCHERS)
		elog(ERROR, "dp_agg: too many relcache watchers");
	if (nwatchers == 0)
		CacheRegisterRelcacheCallback(relcache_changed, (Datum) 0);
	watchers[nwatchers++] = watcher;
}
