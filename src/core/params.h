/*-------------------------------------------------------------------------
 *
 * params.h
 *	  Parameters decided before execution: their form, and their value.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_PARAMS_H
#define DP_AGG_PARAMS_H

#include "nodes/params.h"
#include "nodes/primnodes.h"

#include "catalog.h"

extern bool dp_is_parameter_form(Node *expr);
extern void dp_check_parameter_expr(Node *expr, const DpCallInfo *info, int argno);
extern ParamExternData *dp_param_extern(ParamListInfo params, int paramid,
										ParamExternData *workspace);
extern void dp_eval_parameter(Node *expr, ParamListInfo params, Datum *value, bool *isnull);

#endif							/* DP_AGG_PARAMS_H */
