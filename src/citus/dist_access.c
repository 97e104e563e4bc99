/*-------------------------------------------------------------------------
 *
 * dist_access.c
 *	  DP statements on Citus tables: who may run them, and as whom.
 *
 * On the coordinator (dist_plan.c made the outer statement):
 *
 * - dp_dist_protect_start, at executor start before anything else, checks
 *   that the current user may read the Citus table (a grant or SELECT),
 *   and, on a protected table it is not trusted for, the rules of
 *   protect_check.c on the inner statement (doc/citus.md, "Protected Citus
 *   tables").
 *
 * The inner statement runs as the table's owner when the table is
 * protected and the current user is not trusted for it (dp_dist_run_as),
 * so the checks a local statement gets from PostgreSQL and from
 * protect_check.c are made here, before the charge.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "catalog.h"
#include "compat.h"
#include "dist_access.h"
#include "dist_inner.h"
#include "dist_session.h"
#include "protect.h"
#include "protect_check.h"
#include "row_seal.h"

/*
 * The role the inner statement of a DP statement on a Citus table runs as:
 * the table's owner when the table is protected and the current user is
 * not trusted for it (doc/citus.md, "Citus"), InvalidOid to run it as the
 * current user.  Citus connects to the workers as the user the statement
 * runs as, so the fragments then run as the owner there: the workers refuse
 * the untrusted role any read of the table and its shards
 * (dist_protect.c), and the role cannot see the fragments in
 * pg_stat_activity (only roles with the privileges of a backend's user
 * see its statements).  Whether the role may read the table at all was
 * checked before the charge (check_inner_access), and the inner statement
 * calls built-in immutable functions only (dist_fingerprint.c): nothing
 * the role wrote runs with the owner's rights.
 */
Oid
dp_dist_run_as(Oid relid)
{
	if (dp_relation_protected(relid) && !dp_role_trusted(relid, GetUserId()))
		return dp_relation_owner(relid);
	return InvalidOid;
}

/* Has the relation row-level security enabled? */
static bool
row_security_enabled(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	bool		enabled;

	if (!HeapTupleIsValid(tup))
		return false;
	enabled = ((Form_pg_class) GETSTRUCT(tup))->relrowsecurity;
	ReleaseSysCache(tup);
	return enabled;
}

/*
 * May the current user read what the inner statement reads, before the
 * charge: a grant of access to the protected table (dp_agg.grant_access),
 * or SELECT on the table or on every column the statement reads, as
 * PostgreSQL's own check would require.  For a role untrusted for a
 * protected table, also no row-level security: the inner statement runs
 * as the table's owner, whom the policies would not restrict.
 */
static void
check_inner_access(Query *inner, bool run_as_owner)
{
	RangeTblEntry *rte = linitial_node(RangeTblEntry, inner->rtable);
	Oid			relid = rte->relid;
	Oid			user = GetUserId();
	Bitmapset  *cols = DP_QUERY_RTE_SELECTED_COLS(inner, rte);
	int			col = -1;

	if (run_as_owner && row_security_enabled(relid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("DP statements on protected Citus table \"%s\" with row-level security are not supported",
						get_rel_name(relid)),
				 errdetail("Their fragments run on the workers as the table's owner, whom the policies would not restrict."),
				 errhint("Disable row-level security on the table, or protect a table holding only the rows the role may see.")));
	if (run_as_owner)
	{
		Oid			owner = dp_relation_owner(relid);
		HeapTuple	tup = SearchSysCache1(AUTHOID, ObjectIdGetDatum(owner));
		bool		login = HeapTupleIsValid(tup) && ((Form_pg_authid) GETSTRUCT(tup))->rolcanlogin;

		if (HeapTupleIsValid(tup))
			ReleaseSysCache(tup);
		if (!login)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the owner of protected Citus table \"%s\" cannot log in",
							get_rel_name(relid)),
					 errdetail("The fragments of a DP statement of a role not trusted for the table run on the workers as its owner, and Citus connects to them as that role."),
					 errhint("ALTER ROLE %s LOGIN (Citus needs it for the table's DDL too).",
							 quote_identifier(GetUserNameFromId(owner, false)))));
	}
	if (run_as_owner && dp_role_granted(relid, user))
		return;
	if (pg_class_aclcheck(relid, user, ACL_SELECT) == ACLCHECK_OK)
		return;
	while ((col = bms_next_member(cols, col)) >= 0)
	{
		AttrNumber	attno = col + FirstLowInvalidHeapAttributeNumber;

		if (attno == InvalidAttrNumber ||
			pg_attribute_aclcheck(relid, attno, user, ACL_SELECT) != ACLCHECK_OK)
			aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, get_rel_name(relid));
	}
	if (cols == NULL)
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, get_rel_name(relid));
}

/*
 * At executor start, before the charge and before PostgreSQL's own checks
 * (hooks.c): for each dist_run scan of the plan, the current user may read
 * its Citus table (check_inner_access), and, when the table is protected
 * and the user is not trusted for it, the rules protect_check.c applies to
 * the plan of a local statement apply to the inner statement (no EXPLAIN,
 * the bound on the work per row).  Returns the first such table the user
 * is untrusted for (its releases must then each cost the floor on epsilon,
 * and the settings of untrusted statements apply), InvalidOid if none.
 */
Oid
dp_dist_protect_start(PlannedStmt *stmt, ParamListInfo params, int eflags,
					  int instrument_options)
{
	List	   *runs = NIL;
	ListCell   *lc;
	Oid			untrusted = InvalidOid;

	if (stmt->commandType == CMD_UTILITY || !dp_extension_present())
		return InvalidOid;
	dp_dist_collect_runs(stmt->planTree, &runs);
	foreach(lc, stmt->subplans)
		dp_dist_collect_runs(lfirst(lc), &runs);
	foreach(lc, runs)
	{
		int			unit_groups;
		Query	   *inner = dp_dist_inner_query(lfirst(lc), &unit_groups);
		Oid			relid = linitial_node(RangeTblEntry, inner->rtable)->relid;
		bool		as_owner = OidIsValid(dp_dist_run_as(relid));

		if (as_owner)
		{
			dp_protect_start_inner(inner, relid, params, eflags, instrument_options);
			/* nothing traps a call on the workers: none may fail on rows */
			dp_row_refuse_failing(inner, relid);
			if (!OidIsValid(untrusted))
				untrusted = relid;
		}
		if (!(eflags & EXEC_FLAG_EXPLAIN_ONLY))
		{
			check_inner_access(inner, as_owner);
			/* nothing else of the transaction runs as the owner (dist_session.c) */
			if (as_owner)
				dp_dist_session_run_as_owner();
		}
	}
	return untrusted;
}

