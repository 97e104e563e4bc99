/*-------------------------------------------------------------------------
 *
 * budget.c
 *	  Privacy budgets: the catalog and the durable charge.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "budget.h"

void
dp_charge(QueryDesc *queryDesc, List *releases)
{
}

void
dp_budget_init(void)
{
}
