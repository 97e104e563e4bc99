/*-------------------------------------------------------------------------
 *
 * dist_session.c
 *	  Citus: what a transaction sends to the workers besides dp_agg's
 *	  fragments, when they run as a protected table's owner.
 *
 * dp_agg runs the inner statement of a DP statement on a protected Citus
 * table as the table's owner when the current role is not trusted for it
 * (dist_access.c), so Citus opens connections to the workers as the owner,
 * in the role's transaction.  Citus also sends, on every connection of a
 * transaction, the SET commands the session propagates
 * (citus.propagate_set_commands = 'local', which any role may set): the
 * text of the statement that held them, which for a query string of
 * several statements is all of it, run as the connection's user.  On a
 * connection of the owner, that would run the role's own SQL as the owner.
 * So a utility hook notes whether the transaction has run a SET command
 * Citus propagates, and
 *   - a DP statement on a protected Citus table that would run as its
 *     owner is refused in such a transaction (before its charge);
 *   - such a SET command is refused in a transaction that has run one.
 * Both marks last until the transaction ends (a savepoint rolled back
 * keeps them: fail closed).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "nodes/parsenodes.h"
#include "tcop/utility.h"
#include "utils/guc.h"

#include "dist_session.h"

static ProcessUtility_hook_type prev_ProcessUtility = NULL;
static bool sets_propagated = false;	/* Citus has SET commands to send */
static bool owner_ran = false;	/* a fragment ran as a table's owner */

static void
forget_marks(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PARALLEL_ABORT)
		sets_propagated = owner_ran = false;
}

/* does Citus propagate SET commands now (citus.propagate_set_commands)? */
static bool
citus_propagates_sets(void)
{
	const char *mode = GetConfigOption("citus.propagate_set_commands", true, false);

	return mode != NULL && strcmp(mode, "none") != 0;
}

/*
 * Would Citus propagate this SET command (its ShouldPropagateSetCommand,
 * without the settings it excludes: fail closed)?  SET LOCAL, RESET,
 * RESET ALL and SET TRANSACTION, while citus.propagate_set_commands is on.
 */
static bool
propagated(VariableSetStmt *stmt)
{
	if (!citus_propagates_sets())
		return false;
	switch (stmt->kind)
	{
		case VAR_SET_VALUE:
		case VAR_SET_CURRENT:
		case VAR_SET_DEFAULT:
			return stmt->is_local;
		case VAR_SET_MULTI:
			return stmt->name != NULL && strcmp(stmt->name, "TRANSACTION") == 0;
		default:
			return true;
	}
}

static void
dist_ProcessUtility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
					ProcessUtilityContext context, ParamListInfo params,
					QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	if (IsA(pstmt->utilityStmt, VariableSetStmt) &&
		propagated((VariableSetStmt *) pstmt->utilityStmt))
	{
		if (owner_ran)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("SET commands cannot be propagated to the workers in this transaction"),
					 errdetail("It ran a DP statement on a protected Citus table, whose fragments run on the workers as the table's owner; Citus would run this statement's text there as the owner too."),
					 errhint("SET citus.propagate_set_commands = 'none', or start a new transaction.")));
		sets_propagated = true;
	}
	if (prev_ProcessUtility)
		prev_ProcessUtility(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest,
							qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params, queryEnv,
								dest, qc);
}

/* called from _PG_init while preloading */
void
dp_dist_session_init(void)
{
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = dist_ProcessUtility;
	RegisterXactCallback(forget_marks, NULL);
}

/*
 * Before the charge of a DP statement whose fragments will run as a
 * table's owner: refused if the transaction has SET commands for Citus to
 * send; then marked, so that no later one is.
 */
void
dp_dist_session_run_as_owner(void)
{
	if (sets_propagated)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("DP statements on protected Citus tables cannot run in a transaction that propagates SET commands"),
				 errdetail("Their fragments run on the workers as the table's owner, and Citus would run there, as the owner, the statements that held this transaction's SET commands (citus.propagate_set_commands)."),
				 errhint("Run the statement in a transaction without SET LOCAL, or SET citus.propagate_set_commands = 'none' before the transaction.")));
	owner_ran = true;
}
