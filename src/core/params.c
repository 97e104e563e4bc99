/*-------------------------------------------------------------------------
 *
 * params.c
 *	  Parameters of a DP aggregate call (epsilon, delta, clamping bounds) and
 *	  of TABLESAMPLE: constants or statement parameters only, decided and
 *	  evaluated before execution so that they cannot depend on the data.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "catalog/pg_proc.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"

#include "params.h"

/* a built-in immutable function, not returning a set, of parameter forms */
static bool
call_is_parameter_form(Oid fn, bool retset, List *args)
{
	ListCell   *lc;

	if (retset || fn >= FirstGenbkiObjectId || func_volatile(fn) != PROVOLATILE_IMMUTABLE)
		return false;
	foreach(lc, args)
	{
		if (!dp_is_parameter_form(lfirst(lc)))
			return false;
	}
	return true;
}

/*
 * The element expression of an ArrayCoerceExpr: the element itself
 * (CaseTestExpr), relabelled or passed to built-in immutable functions
 */
static bool
element_cast_form(Node *expr)
{
	if (expr == NULL)
		return false;
	switch (nodeTag(expr))
	{
		case T_CaseTestExpr:
			return true;
		case T_RelabelType:
			return element_cast_form((Node *) ((RelabelType *) expr)->arg);
		case T_FuncExpr:
			{
				FuncExpr   *f = (FuncExpr *) expr;
				ListCell   *lc;

				if (f->funcretset || f->funcid >= FirstGenbkiObjectId ||
					func_volatile(f->funcid) != PROVOLATILE_IMMUTABLE || f->args == NIL ||
					!element_cast_form(linitial(f->args)))
					return false;
				for_each_from(lc, f->args, 1)
				{
					if (!dp_is_parameter_form(lfirst(lc)))
						return false;
				}
				return true;
			}
		default:
			return false;
	}
}

/*
 * Is expr a constant, a parameter of the statement, or a built-in immutable
 * function or operator of such?  Those are decided before execution and
 * cannot depend on the data.
 */
bool
dp_is_parameter_form(Node *expr)
{
	if (expr == NULL)
		return false;
	switch (nodeTag(expr))
	{
		case T_Const:
			return true;
		case T_Param:
			return ((Param *) expr)->paramkind == PARAM_EXTERN;
		case T_RelabelType:
			return dp_is_parameter_form((Node *) ((RelabelType *) expr)->arg);
		case T_FuncExpr:
			{
				FuncExpr   *f = (FuncExpr *) expr;

				return call_is_parameter_form(f->funcid, f->funcretset, f->args);
			}
		case T_OpExpr:
			{
				OpExpr	   *o = (OpExpr *) expr;

				set_opfuncid(o);
				return call_is_parameter_form(o->opfuncid, o->opretset, o->args);
			}
		case T_ArrayCoerceExpr:
			{
				/* an array of such cast element by element (numeric[] to float8[]) */
				ArrayCoerceExpr *ac = (ArrayCoerceExpr *) expr;

				return dp_is_parameter_form((Node *) ac->arg) && element_cast_form((Node *) ac->elemexpr);
			}
		case T_ArrayExpr:
			{
				/* ARRAY[...] of such (the percentiles of dp_percentile) */
				ArrayExpr  *a = (ArrayExpr *) expr;
				ListCell   *lc;

				if (a->multidims)
					return false;
				foreach(lc, a->elements)
				{
					if (!dp_is_parameter_form(lfirst(lc)))
						return false;
				}
				return true;
			}
		default:
			return false;
	}
}

/*
 * ERROR unless argument argno of a DP aggregate call is of parameter form.
 */
void
dp_check_parameter_expr(Node *expr, const DpCallInfo *info, int argno)
{
	if (!dp_is_parameter_form(expr))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s of %s must be a constant or a parameter",
						dp_arg_name(info, argno), dp_kind_name(info->kind)),
				 errdetail("Columns, sub-queries and volatile expressions would make "
						   "the noise depend on the data."),
				 errhint("Write a literal, or a $n parameter of a prepared statement.")));
}

/*
 * External parameter paramid of params: fetched through its hook if it has
 * one (workspace may then hold it), else its entry; NULL if there is no
 * such entry
 */
ParamExternData *
dp_param_extern(ParamListInfo params, int paramid, ParamExternData *workspace)
{
	if (params->paramFetch != NULL)
		return params->paramFetch(params, paramid, false, workspace);
	if (paramid > 0 && paramid <= params->numParams)
		return &params->params[paramid - 1];
	return NULL;
}

/* the value of an external parameter $n of the statement */
static void
eval_param(Param *p, ParamListInfo params, Datum *value, bool *isnull)
{
	ParamExternData *prm;
	ParamExternData prmdata;

	if (params == NULL || p->paramid <= 0 || p->paramid > params->numParams)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_PARAMETER),
				 errmsg("there is no value for parameter $%d", p->paramid)));
	prm = dp_param_extern(params, p->paramid, &prmdata);
	if (prm->ptype != p->paramtype)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("type of parameter %d (%s) does not match that when preparing the plan (%s)",
						p->paramid, format_type_be(prm->ptype),
						format_type_be(p->paramtype))));
	*value = prm->value;
	*isnull = prm->isnull;
}

/* the value of a call of function fn on args (a strict one on a NULL is NULL) */
static void
eval_call(Oid fn, List *args, Oid collation, ParamListInfo params, Datum *value, bool *isnull)
{
	ListCell   *lc;
	int			i = 0;
	FmgrInfo	flinfo;
	LOCAL_FCINFO(fcinfo, FUNC_MAX_ARGS);

	fmgr_info(fn, &flinfo);
	InitFunctionCallInfoData(*fcinfo, &flinfo, list_length(args), collation, NULL, NULL);
	foreach(lc, args)
	{
		dp_eval_parameter(lfirst(lc), params, &fcinfo->args[i].value, &fcinfo->args[i].isnull);
		if (fcinfo->args[i].isnull && flinfo.fn_strict)
		{
			*value = (Datum) 0;
			*isnull = true;
			return;
		}
		i++;
	}
	*value = FunctionCallInvoke(fcinfo);
	*isnull = fcinfo->isnull;
}

/*
 * The value of an expression of parameter form (dp_is_parameter_form),
 * given the statement's parameters: the one evaluator of the noise
 * parameters, the clamping bounds and the TABLESAMPLE percentage.
 */
void
dp_eval_parameter(Node *expr, ParamListInfo params, Datum *value, bool *isnull)
{
	switch (nodeTag(expr))
	{
		case T_Const:
			*value = ((Const *) expr)->constvalue;
			*isnull = ((Const *) expr)->constisnull;
			return;
		case T_Param:
			eval_param((Param *) expr, params, value, isnull);
			return;
		case T_RelabelType:
			dp_eval_parameter((Node *) ((RelabelType *) expr)->arg, params, value, isnull);
			return;
		case T_FuncExpr:
			{
				FuncExpr   *f = (FuncExpr *) expr;

				eval_call(f->funcid, f->args, f->inputcollid, params, value, isnull);
				return;
			}
		case T_OpExpr:
			{
				OpExpr	   *o = (OpExpr *) expr;

				set_opfuncid(o);
				eval_call(o->opfuncid, o->args, o->inputcollid, params, value, isnull);
				return;
			}
		case T_ArrayCoerceExpr:
			{
				/*
				 * the array argument evaluated here, the element casts (built-in
				 * immutable functions, element_cast_form) by the executor
				 */
				ArrayCoerceExpr *ac = copyObject((ArrayCoerceExpr *) expr);
				Datum		arg;
				bool		argnull;
				int16		typlen;
				bool		typbyval;
				ExprContext *econtext;
				ExprState  *state;
				Datum		result;

				dp_eval_parameter((Node *) ((ArrayCoerceExpr *) expr)->arg, params, &arg, &argnull);
				get_typlenbyval(exprType((Node *) ac->arg), &typlen, &typbyval);
				ac->arg = (Expr *) makeConst(exprType((Node *) ac->arg), exprTypmod((Node *) ac->arg),
											 exprCollation((Node *) ac->arg), typlen, arg, argnull,
											 typbyval);
				econtext = CreateStandaloneExprContext();
				state = ExecInitExpr((Expr *) ac, NULL);
				result = ExecEvalExprSwitchContext(state, econtext, isnull);
				get_typlenbyval(ac->resulttype, &typlen, &typbyval);
				*value = *isnull ? (Datum) 0 : datumCopy(result, typbyval, typlen);
				FreeExprContext(econtext, true);
				return;
			}
		case T_ArrayExpr:
			{
				ArrayExpr  *a = (ArrayExpr *) expr;
				int			n = list_length(a->elements);
				Datum	   *elems = palloc(sizeof(Datum) * Max(n, 1));
				bool	   *nulls = palloc(sizeof(bool) * Max(n, 1));
				int			dims[1] = {n};
				int			lbs[1] = {1};
				int16		typlen;
				bool		typbyval;
				char		typalign;
				int			i = 0;
				ListCell   *lc;

				foreach(lc, a->elements)
				{
					dp_eval_parameter(lfirst(lc), params, &elems[i], &nulls[i]);
					i++;
				}
				get_typlenbyvalalign(a->element_typeid, &typlen, &typbyval, &typalign);
				*value = PointerGetDatum(construct_md_array(elems, nulls, 1, dims, lbs,
															a->element_typeid, typlen,
															typbyval, typalign));
				*isnull = false;
				return;
			}
		default:
			elog(ERROR, "dp_agg: unexpected parameter expression %d", (int) nodeTag(expr));
	}
}
