/*-------------------------------------------------------------------------
 *
 * protect.h
 *	  Protected relations: which are, who may read them, who is trusted.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_PROTECT_H
#define DP_AGG_PROTECT_H

#include "compat.h"

/* the detail of a refusal on a Citus worker (dist_protect.c) */
#define DP_PROTECTED_ON_WORKER "On a Citus worker only roles trusted for a protected table read it or its shards: run DP statements on the coordinator, which sends their fragments to the workers as the table's owner."

extern void dp_protect_init(void);
extern bool dp_any_protected(void);
extern bool dp_relation_protected(Oid relid);
extern bool dp_relation_has_children(Oid relid);
extern bool dp_role_granted(Oid relid, Oid roleid);
extern bool dp_function_allowed(Oid funcid);
extern Oid	dp_allowed_function_oid(const char *signature);
extern Oid	dp_untrusted_protected(Oid roleid);
extern Oid	dp_untrusted_in_tree(Oid relid, Oid roleid);
extern Oid	dp_relation_owner(Oid relid);
extern uint64 dp_catalog_execute(const char *catalog, const char *sql, int nargs,
								 Oid *argtypes, Datum *values);
extern bool dp_role_trusted(Oid relid, Oid roleid);

/*
 * The refusal of a statement that reads a protected relation otherwise
 * than as the input of DP aggregates, at planning (protect_guard.c) or at
 * executor start (protect_check.c): one message for both.  A macro, so that
 * the detail is a literal string where it is raised (the caller includes
 * utils/lsyscache.h).
 */
#define dp_reject_protected(relid, detail) \
	ereport(ERROR, \
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE), \
			 errmsg("relation \"%s\" is protected", get_rel_name(relid)), \
			 errdetail(detail), \
			 errhint("Query it with DP aggregates such as dp_count, dp_sum and dp_avg; see \"Protected tables\" in dp_agg's doc/guard.md.")))

#endif							/* DP_AGG_PROTECT_H */
