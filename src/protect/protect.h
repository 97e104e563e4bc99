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
extern Oid	dp_relation_owner(Oid relid);
extern uint64 dp_catalog_execute(const char *catalog, const char *sql, int nargs,
								 Oid *argtypes, Datum *values);
extern bool dp_role_trusted(Oid relid, Oid roleid);
DP_NORETURN extern void dp_reject_protected(Oid relid, const char *detail);

#endif							/* DP_AGG_PROTECT_H */
