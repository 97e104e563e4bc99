/*-------------------------------------------------------------------------
 *
 * budget_api.c
 *	  SQL functions of the views of budgets: dp_agg.role_charged (does a
 *	  budget pay for a role's statements, as the charger decides it) and
 *	  dp_agg_internal.round_display (numbers a person reads).
 *
 * The views (dp_agg.my_budget, dp_agg.budgets, ...) show the budgets that
 * pay for a role's statements; which ones do is the charger's rule
 * (budget_store.c, dp_role_groups): a role's own budget, and a group's
 * budget for the group and every role that is a member of it, directly or
 * through other roles, whatever the INHERIT attribute of the memberships.
 * Being a superuser does not make a role a member of every group here, as
 * it does for pg_has_role: a superuser's statements are charged to the
 * groups it belongs to, as anyone's.
 *
 * Amounts spent are sums of doubles rounded up at every addition (a
 * release is never undercharged), so they print as 9.200000000000001 or
 * 0.7999999999999989; the views round them to 12 significant digits for
 * display.  The charger decides on the stored values, never on these.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fmgr.h"
#include "utils/acl.h"

#include "budget_api.h"

PG_FUNCTION_INFO_V1(dp_role_charged_sql);
PG_FUNCTION_INFO_V1(dp_round_display_sql);

/* the significant digits of what the views show */
#define DISPLAY_DIGITS 12

/* dp_agg.role_charged(role regrole, budget_role regrole, members boolean) */
Datum
dp_role_charged_sql(PG_FUNCTION_ARGS)
{
	Oid			role = PG_GETARG_OID(0);
	Oid			budget_role = PG_GETARG_OID(1);
	bool		members = PG_GETARG_BOOL(2);

	PG_RETURN_BOOL(role == budget_role ||
				   (members && is_member_of_role_nosuper(role, budget_role)));
}

/* dp_agg_internal.round_display(value float8): value to 12 significant digits */
Datum
dp_round_display_sql(PG_FUNCTION_ARGS)
{
	double		v = PG_GETARG_FLOAT8(0);
	char		buf[64];

	if (!isfinite(v))
		PG_RETURN_FLOAT8(v);
	snprintf(buf, sizeof(buf), "%.*g", DISPLAY_DIGITS, v);
	PG_RETURN_FLOAT8(strtod(buf, NULL));
}
