/*-------------------------------------------------------------------------
 *
 * dist_fingerprint.c
 *	  The fingerprint of what a fragment of a DP statement on a Citus table
 *	  computes.
 *
 * A worker computes partial states for a fragment whose specification the
 * coordinator signed (dist_token.c).  The fragment's text is visible on the
 * worker (pg_stat_activity shows it to the role it runs as: the analyst
 * whose statement it is, on a table that is not protected), so without more, an analyst who can log in to a worker could send it
 * again within its expiry with another WHERE or GROUP BY and learn,
 * uncharged and exactly, what its rows yield besides the sealed states: the
 * groups present, and whether any row passes a filter.  So the signature
 * also covers this fingerprint: SHA-256 (FIPS 180-4) of a canonical form of
 * everything that decides which rows and groups the fragment yields and
 * what it accumulates: the distributed table (named by schema and name),
 * the TABLESAMPLE method and its arguments, WHERE, the GROUP BY
 * expressions with their equality operators, and the target list (group
 * keys and the partial aggregates with their arguments and FILTER, but not
 * their signed specifications, which hold the fingerprint).  The
 * coordinator computes it from the inner statement it runs through Citus,
 * a worker from the shard query it receives, mapping the shard back to its
 * table; any difference refuses the fragment.  HMAC's unforgeability
 * (Bellare, Canetti & Krawczyk 1996) and SHA-256's collision resistance
 * make a changed fragment carry a signature it cannot have.
 *
 * Citus writes the shard queries itself, by deparsing the coordinator's
 * statement, and parses them again on the worker; the canonical form keeps
 * only what survives that round trip and decides the result:
 * - expressions are checked as written, then simplified as the planner
 *   does (eval_const_expressions: constant folding of the built-in
 *   immutable functions, the implicit casts Citus's deparser folds or
 *   shows, AND/OR flattening; a missing WHERE is WHERE true, as Citus
 *   writes it);
 * - parameters are replaced by their values (Citus sends values, not
 *   parameters): on the coordinator the values the statement runs with; on
 *   a worker only values fixed for the plan (PARAM_FLAG_CONST, a custom
 *   plan), so a generic plan of a fragment with parameters is refused;
 * - columns by attribute name (not number), constants by type, typmod,
 *   collation and the bytes of their value (exact, unlike an output text
 *   that depends on settings such as extra_float_digits), functions and
 *   operators by OID (the same extension and catalogs on every node), node
 *   tags and the fields that change a result; no locations, aliases,
 *   output names or cast formats.
 * A function or operator the fingerprint names must be built in and
 * immutable: a stable one (current_setting, now) depends on the session
 * that evaluates it, which on a worker is the replayer's, and a
 * user-defined one can be replaced on a worker by its owner under the same
 * OID, or, marked immutable, return another value each time the planner
 * folds it (so user-defined functions are refused before anything is
 * folded, SQL functions included); the few immutable built-ins whose
 * result depends on a setting (float and bytea output) are refused too.  Any other construct is refused: the statement fails before it is
 * charged (dist_price.c), saying so.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <openssl/evp.h>

#include "access/transam.h"
#include "catalog/pg_proc.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "dist_fingerprint.h"
#include "dist_plan.h"
#include "params.h"
#include "random.h"

#define DP_FP_VERSION "dpq1"		/* of the canonical form below */

typedef struct Canon
{
	StringInfoData s;
	Oid			relid;			/* the one relation the fragment reads */
	const char *why;			/* the first construct that cannot be bound */
} Canon;

static void canon_node(Canon *c, Node *node);

static void
unbindable(Canon *c, const char *why)
{
	if (c->why == NULL)
		c->why = why;
}

/*
 * Built-in functions marked immutable whose result depends on a setting of
 * the session that evaluates it (float4out and float8out on
 * extra_float_digits, byteaout on bytea_output): on a worker that session
 * may be the replayer's.
 */
static const Oid session_dependent[] = {F_FLOAT4OUT, F_FLOAT8OUT, F_BYTEAOUT};

/* a function the fingerprint may name by OID: built in and immutable */
static void
canon_func(Canon *c, Oid funcid)
{
	if (funcid >= FirstNormalObjectId)
		unbindable(c, "It calls a function that is not built in.");
	else if (func_volatile(funcid) != PROVOLATILE_IMMUTABLE)
		unbindable(c, "It calls a function that is not immutable, whose result depends on the session that evaluates it.");
	for (size_t i = 0; i < lengthof(session_dependent); i++)
		if (funcid == session_dependent[i])
			unbindable(c, "It converts a float or bytea to text, which depends on settings of the session that evaluates it (extra_float_digits, bytea_output).");
	appendStringInfo(&c->s, "f%u,", funcid);
}

static void
canon_list(Canon *c, List *args)
{
	ListCell   *lc;

	appendStringInfoChar(&c->s, '[');
	foreach(lc, args)
		canon_node(c, lfirst(lc));
	appendStringInfoChar(&c->s, ']');
}

/* a constant: type, typmod, collation and the bytes of its value, in hex */
static void
canon_const(Canon *c, Const *k)
{
	const char *data;
	Size		len;
	char		byval[sizeof(Datum)];
	char	   *hex;

	appendStringInfo(&c->s, "C%u,%d,%u,", k->consttype, k->consttypmod, k->constcollid);
	if (k->constisnull)
	{
		appendStringInfoString(&c->s, "null)");
		return;
	}
	if (k->constbyval)
	{
		store_att_byval(byval, k->constvalue, k->constlen);
		data = byval;
		len = k->constlen;
	}
	else if (k->constlen == -1)
	{
		struct varlena *v = PG_DETOAST_DATUM_PACKED(k->constvalue);

		data = VARDATA_ANY(v);
		len = VARSIZE_ANY_EXHDR(v);
	}
	else if (k->constlen == -2)
	{
		data = DatumGetCString(k->constvalue);
		len = strlen(data);
	}
	else
	{
		data = DatumGetPointer(k->constvalue);
		len = k->constlen;
	}
	hex = palloc(2 * len + 1);
	hex[hex_encode(data, len, hex)] = '\0';
	appendStringInfo(&c->s, "%s)", hex);
}

static void
canon_var(Canon *c, Var *v)
{
	if (v->varlevelsup != 0 || v->varno != 1 || v->varattno <= 0)
	{
		unbindable(c, "It names a whole row, a system column or a column of another query level.");
		return;
	}
	appendStringInfo(&c->s, "V%s)", quote_identifier(get_attname(c->relid, v->varattno, false)));
}

/* an operator, with the function that implements it */
static void
canon_op(Canon *c, char tag, Oid opno, Oid inputcollid, List *args)
{
	if (opno >= FirstNormalObjectId)
		unbindable(c, "It uses an operator that is not built in.");
	appendStringInfo(&c->s, "%c%u,%u,", tag, opno, inputcollid);
	canon_func(c, get_opcode(opno));
	canon_list(c, args);
}

/* the I/O functions a CoerceViaIO calls */
static void
canon_coerce_io(Canon *c, CoerceViaIO *io)
{
	Oid			out;
	Oid			in;
	Oid			ioparam;
	bool		varlena;

	getTypeOutputInfo(exprType((Node *) io->arg), &out, &varlena);
	getTypeInputInfo(io->resulttype, &in, &ioparam);
	appendStringInfo(&c->s, "I%u,%u,", io->resulttype, io->resultcollid);
	canon_func(c, out);
	canon_func(c, in);
	canon_node(c, (Node *) io->arg);
}

/*
 * A partial aggregate dp_agg_internal.sum(spec [, value]): its value and FILTER,
 * not its specification (which holds the fingerprint).  Any other
 * aggregate is named by its OID with all its arguments, and never matches
 * a fragment the coordinator signed.
 */
static void
canon_aggref(Canon *c, Aggref *a)
{
	List	   *args = a->args;

	if (a->aggdistinct != NIL || a->aggorder != NIL || a->agglevelsup != 0)
		unbindable(c, "It has an aggregate with DISTINCT or ORDER BY, or of an outer query.");
	if (dp_is_partial_sum(a))
		args = list_delete_first(list_copy(args));
	/*
	 * Not its input collation: the parser derives it from the specification
	 * (text), and dp_agg's accumulation does not depend on it.
	 */
	appendStringInfo(&c->s, "A%u,%d,", a->aggfnoid, a->aggstar);
	canon_list(c, args);
	canon_node(c, (Node *) a->aggfilter);
}

static void
canon_case(Canon *c, CaseExpr *ce)
{
	ListCell   *lc;

	/* the number of branches keeps the form unambiguous */
	appendStringInfo(&c->s, "K%u,%u,%d,", ce->casetype, ce->casecollid, list_length(ce->args));
	canon_node(c, (Node *) ce->arg);
	foreach(lc, ce->args)
	{
		CaseWhen   *w = lfirst_node(CaseWhen, lc);

		canon_node(c, (Node *) w->expr);
		canon_node(c, (Node *) w->result);
	}
	canon_node(c, (Node *) ce->defresult);
}

static void
canon_node(Canon *c, Node *node)
{
	if (node == NULL)
	{
		appendStringInfoString(&c->s, "N)");
		return;
	}
	check_stack_depth();
	switch (nodeTag(node))
	{
		case T_Var:
			canon_var(c, (Var *) node);
			break;
		case T_Const:
			canon_const(c, (Const *) node);
			break;
		case T_OpExpr:
			canon_op(c, 'O', ((OpExpr *) node)->opno, ((OpExpr *) node)->inputcollid,
					 ((OpExpr *) node)->args);
			break;
		case T_DistinctExpr:
			canon_op(c, 'D', ((DistinctExpr *) node)->opno,
					 ((DistinctExpr *) node)->inputcollid, ((DistinctExpr *) node)->args);
			break;
		case T_NullIfExpr:
			canon_op(c, 'U', ((NullIfExpr *) node)->opno, ((NullIfExpr *) node)->inputcollid,
					 ((NullIfExpr *) node)->args);
			break;
		case T_ScalarArrayOpExpr:
			{
				ScalarArrayOpExpr *sa = (ScalarArrayOpExpr *) node;

				canon_op(c, sa->useOr ? 'Y' : 'L', sa->opno, sa->inputcollid, sa->args);
				break;
			}
		case T_FuncExpr:
			{
				FuncExpr   *f = (FuncExpr *) node;

				appendStringInfo(&c->s, "F%u,%d,%u,", f->funcresulttype, f->funcvariadic,
								 f->inputcollid);
				canon_func(c, f->funcid);
				canon_list(c, f->args);
				break;
			}
		case T_BoolExpr:
			appendStringInfo(&c->s, "B%d,", (int) ((BoolExpr *) node)->boolop);
			canon_list(c, ((BoolExpr *) node)->args);
			break;
		case T_NullTest:
			appendStringInfo(&c->s, "T%d,%d,", (int) ((NullTest *) node)->nulltesttype,
							 ((NullTest *) node)->argisrow);
			canon_node(c, (Node *) ((NullTest *) node)->arg);
			break;
		case T_BooleanTest:
			appendStringInfo(&c->s, "b%d,", (int) ((BooleanTest *) node)->booltesttype);
			canon_node(c, (Node *) ((BooleanTest *) node)->arg);
			break;
		case T_RelabelType:
			appendStringInfo(&c->s, "R%u,%d,%u,", ((RelabelType *) node)->resulttype,
							 ((RelabelType *) node)->resulttypmod,
							 ((RelabelType *) node)->resultcollid);
			canon_node(c, (Node *) ((RelabelType *) node)->arg);
			break;
		case T_CoerceViaIO:
			canon_coerce_io(c, (CoerceViaIO *) node);
			break;
		case T_CaseExpr:
			canon_case(c, (CaseExpr *) node);
			break;
		case T_CaseTestExpr:
			appendStringInfoString(&c->s, "t)");
			break;
		case T_CoalesceExpr:
			appendStringInfo(&c->s, "Q%u,%u,", ((CoalesceExpr *) node)->coalescetype,
							 ((CoalesceExpr *) node)->coalescecollid);
			canon_list(c, ((CoalesceExpr *) node)->args);
			break;
		case T_ArrayExpr:
			appendStringInfo(&c->s, "H%u,%u,%d,", ((ArrayExpr *) node)->array_typeid,
							 ((ArrayExpr *) node)->element_typeid,
							 ((ArrayExpr *) node)->multidims);
			canon_list(c, ((ArrayExpr *) node)->elements);
			break;
		case T_Aggref:
			canon_aggref(c, (Aggref *) node);
			break;
		case T_List:
			canon_list(c, (List *) node);
			break;
		case T_TargetEntry:
			canon_node(c, (Node *) ((TargetEntry *) node)->expr);
			break;
		case T_Param:
			unbindable(c, "It has a parameter without a value fixed for the plan.");
			break;
		default:
			unbindable(c, "It has an expression of a kind dp_agg does not bind to its fragments.");
			appendStringInfo(&c->s, "?%d)", (int) nodeTag(node));
			break;
	}
}

typedef struct ParamBind
{
	ParamListInfo params;
	bool		any;			/* every value, not only those fixed for the plan */
} ParamBind;

/* external parameters replaced by their values, where known */
static Node *
bind_params(Node *node, ParamBind *b)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Param) && ((Param *) node)->paramkind == PARAM_EXTERN && b->params != NULL)
	{
		Param	   *p = (Param *) node;
		ParamExternData *prm = NULL;
		ParamExternData prmdata;

		if (p->paramid > 0 && p->paramid <= b->params->numParams)
			prm = dp_param_extern(b->params, p->paramid, &prmdata);
		if (prm != NULL && prm->ptype == p->paramtype &&
			(b->any || (prm->pflags & PARAM_FLAG_CONST) != 0))
		{
			int16		len;
			bool		byval;

			get_typlenbyval(p->paramtype, &len, &byval);
			return (Node *) makeConst(p->paramtype, p->paramtypmod, p->paramcollid, len,
									  prm->isnull ? (Datum) 0 : datumCopy(prm->value, byval, len),
									  prm->isnull, byval);
		}
		return node;
	}
	return expression_tree_mutator(node, bind_params, b);
}

/*
 * An expression as the planner would simplify it, parameters bound.  It is
 * checked as written first, so that only built-in immutable functions are
 * folded: a user-defined function marked immutable could return another
 * value when the planner folds it again after this check.
 */
static void
canon_expr(Canon *c, Node *node, ParamBind *b)
{
	Canon		check;
	Node	   *bound = bind_params(node, b);

	memset(&check, 0, sizeof(check));
	initStringInfo(&check.s);
	check.relid = c->relid;
	canon_node(&check, bound);
	if (check.why != NULL)
	{
		unbindable(c, check.why);
		return;
	}
	canon_node(c, eval_const_expressions(NULL, bound));
}

/* position of the target entry with sort/group reference ref, 0 if none */
static int
tle_position(List *tlist, Index ref)
{
	ListCell   *lc;

	foreach(lc, tlist)
		if (lfirst_node(TargetEntry, lc)->ressortgroupref == ref)
			return foreach_current_index(lc) + 1;
	return 0;
}

/*
 * The canonical form of a fragment into c->s, or c->why set.  Every node
 * is written as a tag, its fields and its children, each child's form
 * delimited in turn (lists in brackets), so that the form of two different
 * fragments differ.
 */
static void
canon_query(Canon *c, Query *q, const char *nspname, const char *relname, ParamBind *b)
{
	RangeTblEntry *rte;
	ListCell   *lc;

	if (q->commandType != CMD_SELECT || q->utilityStmt != NULL || q->cteList != NIL ||
		q->hasSubLinks || q->setOperations != NULL || q->hasWindowFuncs || q->hasTargetSRFs ||
		q->groupingSets != NIL || q->havingQual != NULL || q->sortClause != NIL ||
		q->distinctClause != NIL || q->limitCount != NULL || q->limitOffset != NULL ||
		q->rowMarks != NIL || q->windowClause != NIL || list_length(q->rtable) != 1 ||
		list_length(q->jointree->fromlist) != 1 ||
		!IsA(linitial(q->jointree->fromlist), RangeTblRef) ||
		linitial_node(RangeTblRef, q->jointree->fromlist)->rtindex != 1)
	{
		unbindable(c, "It is not one SELECT of aggregates reading one table directly, with WHERE and GROUP BY only.");
		return;
	}
	rte = linitial_node(RangeTblEntry, q->rtable);
	if (rte->rtekind != RTE_RELATION)
	{
		unbindable(c, "It reads something else than a table.");
		return;
	}
	c->relid = rte->relid;

	appendStringInfo(&c->s, "%s:R%s.%s)", DP_FP_VERSION, quote_identifier(nspname),
					 quote_identifier(relname));
	if (rte->tablesample != NULL)
	{
		if (rte->tablesample->tsmhandler >= FirstNormalObjectId)
			unbindable(c, "It samples the table with a method that is not built in.");
		appendStringInfo(&c->s, "S%u,", rte->tablesample->tsmhandler);
		canon_expr(c, (Node *) rte->tablesample->args, b);
		canon_expr(c, (Node *) rte->tablesample->repeatable, b);
	}
	appendStringInfoString(&c->s, "W");
	canon_expr(c, q->jointree->quals != NULL ? q->jointree->quals : makeBoolConst(true, false), b);
	foreach(lc, q->targetList)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);

		appendStringInfo(&c->s, "E%d,", tle->resjunk);
		canon_expr(c, (Node *) tle->expr, b);
	}
	foreach(lc, q->groupClause)
	{
		SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);

		if (sgc->eqop >= FirstNormalObjectId)
			unbindable(c, "It groups with an equality operator that is not built in.");
		appendStringInfo(&c->s, "G%d,%u)", tle_position(q->targetList, sgc->tleSortGroupRef),
						 sgc->eqop);
	}
}

/*
 * The fingerprint of fragment q reading a shard of (or the table)
 * nspname.relname, as 64 hex digits; NULL with *why set if q cannot be
 * bound.  params: the statement's parameters; bind_all: every parameter's
 * value (the coordinator, which runs the statement now), else only values
 * fixed for the plan (a worker).
 */
char *
dp_fragment_fingerprint(Query *q, const char *nspname, const char *relname,
						ParamListInfo params, bool bind_all, const char **why)
{
	Canon		c;
	ParamBind	b = {params, bind_all};
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char	   *hex;

	memset(&c, 0, sizeof(c));
	initStringInfo(&c.s);
	canon_query(&c, q, nspname, relname, &b);
	*why = c.why;
	if (c.why != NULL)
		return NULL;
	if (EVP_Digest(c.s.data, c.s.len, md, &mdlen, EVP_sha256(), NULL) != 1 ||
		mdlen != DP_FRAGMENT_FP_LEN / 2)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not compute the fingerprint of a fragment of a DP statement"),
				 errdetail("OpenSSL's SHA-256 failed: %s.", dp_openssl_error()),
				 errhint("Nothing was released.")));
	hex = palloc(DP_FRAGMENT_FP_LEN + 1);
	hex_encode((const char *) md, mdlen, hex);
	hex[DP_FRAGMENT_FP_LEN] = '\0';
	return hex;
}
