/*-------------------------------------------------------------------------
 *
 * protect_check.h
 *	  Enforcing the protection of relations for untrusted roles.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_PROTECT_CHECK_H
#define DP_AGG_PROTECT_CHECK_H

#include "nodes/params.h"
#include "nodes/plannodes.h"

/* What dp_protect_start changed, for dp_protect_end to put back. */
typedef struct DpProtectStart
{
	List	   *check_as;		/* Oid *: checkAsUser fields set to an owner */
	List	   *check_as_saved; /* their values before (OIDs) */
	List	   *prev_accepted;	/* the range table accepted before */
	bool		untrusted;		/* accepted for a role untrusted for one */
	Oid			relid;			/* ... such as this protected relation */
} DpProtectStart;

extern void dp_protect_start(PlannedStmt *stmt, ParamListInfo params, int eflags,
							 int instrument_options, DpProtectStart *st);
extern void dp_protect_start_inner(Query *inner, Oid relid, ParamListInfo params, int eflags,
								   int instrument_options);
extern void dp_protect_check_epsilon(List *releases);
extern void dp_protect_end(DpProtectStart *st);
extern bool dp_protect_check_rtable(List *rtable, bool ereport_on_violation);
extern Oid	dp_protect_untrusted(PlannedStmt *stmt);

#endif							/* DP_AGG_PROTECT_CHECK_H */
