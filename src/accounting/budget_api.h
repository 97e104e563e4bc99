/*-------------------------------------------------------------------------
 *
 * budget_api.h
 *	  SQL functions of the views of budgets (fmgr entry points only).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_BUDGET_API_H
#define DP_AGG_BUDGET_API_H

#endif							/* DP_AGG_BUDGET_API_H */
