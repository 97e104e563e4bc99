/*-------------------------------------------------------------------------
 *
 * relcache_watch.h
 *	  One relcache invalidation callback for every session cache of dp_agg.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_RELCACHE_WATCH_H
#define DP_AGG_RELCACHE_WATCH_H


typedef void (*DpRelcacheWatcher) (Oid relid);

extern void dp_relcache_watch(DpRelcacheWatcher watcher);

#endif							/* DP_AGG_RELCACHE_WATCH_H */
