/*-------------------------------------------------------------------------
 *
 * top_k.c
 *	  Top-k: the k groups of a DP statement with the most units, chosen by
 *	  peeling report noisy max.
 *
 * doc/units-and-groups.md, "Top-k".  A DP statement with GROUP BY may ask for
 * its k largest groups by a condition of its HAVING:
 *
 *   SELECT dept, dp_count(*) FROM visits GROUP BY dept HAVING dp_agg.top_k(5)
 *
 * releases (the DP aggregates of) the 5 groups with the most units (rows,
 * or privacy units), chosen by a private mechanism; the other groups
 * release nothing.  The candidates are the statement's groups as they are
 * released without top-k: every key of a public domain (public_domain.c),
 * or the groups the private selection releases (selection.c), so that a
 * key is never a candidate because a row has it.
 *
 * The mechanism is peeling report noisy max: k rounds, each adding fresh
 * discrete Laplace noise of scale b = k / epsilon to every remaining
 * candidate's count of units and taking the largest, ties broken by a
 * uniformly random order drawn for the round (Dwork & Roth 2014, Claim
 * 3.9, report noisy max; the k rounds composed, Theorem 3.16).  Each round
 * is (1/b)-DP for counts of units, which grow (or shrink) by at most one
 * each when a unit is added (or removed), however many groups the unit is
 * in: fix every noise but candidate i's and the order; i wins exactly when
 * its noise Z reaches a threshold r; in the neighbour, every other count
 * moves by at most one the other way and i's by at most one, so i still
 * wins when Z >= r + 1, and the discrete Laplace has
 * P[Z >= r + 1] >= e^(-1/b) P[Z >= r] at every integer r (with
 * p = e^(-1/b): the ratio is p for r >= 0, and
 * (1 + p - p^s) / (1 + p - p^(s+1)) >= p for r = -s < 0).  So the k
 * rounds are epsilon-DP (basic composition), the price of the statement's
 * dp_top_k call; under Renyi accounting each round adds min(e0, alpha e0^2
 * / 2) with e0 = 1/b (Bun & Steinke 2016, Proposition 3.3), under PLD
 * accounting the privacy loss distribution of randomized response at e0,
 * which dominates every e0-DP mechanism (Kairouz, Oh & Viswanath 2015,
 * Theorem 2.1; pld.c).  The noise is drawn by the exact samplers of the
 * aggregates and compared as integers: the work of a round depends on the
 * number of candidates and on the noise, never on the counts.
 *
 * The rewrite, after those of public domains, privacy units and private
 * selection: the level L with the condition becomes
 *
 *   SELECT <L's columns> FROM
 *     (SELECT s.*, dp_agg_internal.top_k_rank(s.h) OVER () AS r FROM
 *        (SELECT <L's columns>, dp_agg_internal.dp_top_k(NULL::internal, k, epsilon) AS h
 *         FROM ... GROUP BY ... HAVING <selection>) s) w
 *   WHERE w.r IS NOT NULL  <L's ORDER BY, DISTINCT, LIMIT>
 *
 * dp_top_k is a DP aggregate (priced, charged, of the internal type no SQL
 * expression has): it counts the group's input rows (its units at level 3
 * of privacy units; not the rows of a public domain), and its final
 * function keeps the count in the execution's store and returns a handle
 * to it, which tells nothing about it.  The window function ranks all the
 * groups at once, with the mechanism and the price of dp_top_k's ticket,
 * once per execution, and returns each group's rank, NULL outside the k.
 * The exact counts never leave the store.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/namespace.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "windowapi.h"

#include "calibrate.h"
#include "catalog.h"
#include "compat.h"
#include "domain_rows.h"
#include "noise.h"
#include "noise_param.h"
#include "public_domain.h"
#include "random.h"
#include "release.h"
#include "rewrite_nodes.h"
#include "top_k.h"

/* most noise draws of one call of top_k_sample (half a calculator call's steps) */
#define TOP_K_SAMPLE_MAX_DRAWS (DP_CALCULATOR_MAX_STEPS / 2)
/* most counts, and runs (its argument draws), of one call of top_k_sample */
#define TOP_K_SAMPLE_MAX_COUNTS 1000
#define TOP_K_SAMPLE_MAX_RUNS 1000000

PG_FUNCTION_INFO_V1(dp_top_k_condition);
PG_FUNCTION_INFO_V1(dp_top_k_rank);
PG_FUNCTION_INFO_V1(dp_top_k_sample);

#define HINT_TOP_K "Write HAVING dp_agg.top_k(k) in a DP statement with GROUP BY; see \"Top-k\" in dp_agg's doc/units-and-groups.md."

/* ---------- the mechanism ---------- */

/*
 * Peeling report noisy max (the file's comment): ranks[i] is 1..k for the
 * candidate chosen in that round, 0 for the others.  Every round draws one
 * noise per remaining candidate and a uniformly random order, whatever the
 * counts.
 */
void
dp_top_k_rank_groups(const int64 *counts, int n, int k, DpLaplaceParam param, int32 *ranks)
{
	int		   *remaining = palloc(sizeof(int) * Max(n, 1));
	int			left = n;

	for (int i = 0; i < n; i++)
	{
		remaining[i] = i;
		ranks[i] = 0;
	}
	for (int round = 1; round <= k && left > 0; round++)
	{
		int			best = -1;
		int128		best_score = 0;

		/* a uniformly random order of the remaining candidates (Fisher-Yates) */
		for (int i = left - 1; i > 0; i--)
		{
			int			j = (int) dp_random_below((uint64) i + 1);
			int			tmp = remaining[i];

			remaining[i] = remaining[j];
			remaining[j] = tmp;
		}
		/* the first largest noisy count in that order */
		for (int i = 0; i < left; i++)
		{
			int128		score = (int128) counts[remaining[i]] + dp_sample_discrete_laplace(param);

			if (best < 0 || score > best_score)
			{
				best = i;
				best_score = score;
			}
			CHECK_FOR_INTERRUPTS();
		}
		ranks[remaining[best]] = round;
		remaining[best] = remaining[--left];
	}
	pfree(remaining);
}

/* ---------- the store of an execution's counts ---------- */

typedef struct Store
{
	const DpRelease *ticket;
	uint32		id;				/* random, in the handles */
	int64	   *counts;
	int			n;
	int			cap;
	int32	   *ranks;			/* once ranked */
	struct Store *next;
	MemoryContextCallback callback;
} Store;

static Store *stores = NULL;

static void
forget_store(void *arg)
{
	for (Store **p = &stores; *p != NULL; p = &(*p)->next)
	{
		if (*p == arg)
		{
			*p = (*p)->next;
			return;
		}
	}
}

/*
 * The handle of a group's count, kept in the store of its ticket (for as
 * long as the ticket's execution): a random number of the store and the
 * count's index.
 */
int64
dp_top_k_handle(const DpRelease *r, int64 count)
{
	Store	   *st;
	MemoryContext cxt = GetMemoryChunkContext((void *) r);

	for (st = stores; st != NULL; st = st->next)
		if (st->ticket == r)
			break;
	if (st == NULL)
	{
		st = MemoryContextAllocZero(cxt, sizeof(Store));
		st->ticket = r;
		do
			st->id = (uint32) (dp_random_u64() & 0x7fffffff);
		while (st->id == 0);
		st->cap = 64;
		st->counts = MemoryContextAlloc(cxt, sizeof(int64) * st->cap);
		st->callback.func = forget_store;
		st->callback.arg = st;
		MemoryContextRegisterResetCallback(cxt, &st->callback);
		st->next = stores;
		stores = st;
	}
	if (st->ranks != NULL)
		elog(ERROR, "dp_agg: a group counted for top-k after the ranking");
	if (st->n == st->cap)
	{
		st->cap *= 2;
		st->counts = repalloc(st->counts, sizeof(int64) * st->cap);
	}
	st->counts[st->n] = count;
	return ((int64) st->id << 32) | st->n++;
}

/* ---------- the window function ---------- */

static void
bad_handle(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("dp_agg_internal.top_k_rank ranks the groups of a DP statement's top-k only"),
			 errhint(HINT_TOP_K)));
}

/* what a partition of the window function keeps: its groups' stores */
typedef struct RankState
{
	bool		done;
	Store	   *store;			/* NULL for a partition without groups */
	int32	   *index;			/* each row's index in the store */
} RankState;

/*
 * dp_agg_internal.top_k_rank(bigint) returns integer, a window function over the
 * groups of a DP statement with top-k: the group's rank, NULL outside the
 * k chosen (the file's comment).  The candidates are the groups it sees:
 * those the statement releases without top-k (the store also holds the
 * counts of groups that its HAVING dropped, a private selection's or a
 * public domain's, whose final functions ran before the condition).  They
 * are ranked once per execution, however often the window function is
 * evaluated.
 */
Datum
dp_top_k_rank(PG_FUNCTION_ARGS)
{
	WindowObject winobj = PG_WINDOW_OBJECT();
	RankState  *rs = WinGetPartitionLocalMemory(winobj, sizeof(RankState));
	int64		pos = WinGetCurrentPosition(winobj);
	int32		rank;

	if (!rs->done)
	{
		int64		nrows = WinGetPartitionRowCount(winobj);

		rs->index = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(int32) * Max(nrows, 1));
		for (int64 i = 0; i < nrows; i++)
		{
			bool		isnull,
						isout;
			int64		h = DatumGetInt64(WinGetFuncArgInPartition(winobj, 0, (int) i, WINDOW_SEEK_HEAD,
																  false, &isnull, &isout));
			Store	   *s;

			if (isnull || isout)
				bad_handle();
			for (s = stores; s != NULL; s = s->next)
				if (s->id == (uint32) (h >> 32))
					break;
			if (s == NULL || (rs->store != NULL && s != rs->store) ||
				(h & 0xffffffff) >= (uint64) s->n)
				bad_handle();
			rs->store = s;
			rs->index[i] = (int32) (h & 0xffffffff);
		}
		if (rs->store != NULL && rs->store->ranks == NULL)
		{
			Store	   *st = rs->store;
			int64	   *counts = palloc(sizeof(int64) * nrows);
			int32	   *ranks = palloc(sizeof(int32) * nrows);

			/* each group once: its count among the candidates */
			st->ranks = MemoryContextAllocZero(GetMemoryChunkContext(st), sizeof(int32) * st->n);
			for (int64 i = 0; i < nrows; i++)
			{
				if (st->ranks[rs->index[i]] != 0)
					bad_handle();
				st->ranks[rs->index[i]] = -1;
				counts[i] = st->counts[rs->index[i]];
			}
			dp_top_k_rank_groups(counts, (int) nrows, st->ticket->top_k,
								 st->ticket->count.laplace, ranks);
			for (int64 i = 0; i < nrows; i++)
				st->ranks[rs->index[i]] = ranks[i];
		}
		rs->done = true;
	}
	if (rs->store == NULL)
		PG_RETURN_NULL();
	rank = rs->store->ranks[rs->index[pos]];
	if (rank <= 0)
		PG_RETURN_NULL();
	PG_RETURN_INT32(rank);
}

/* dp_agg.top_k(k [, epsilon]) outside a HAVING the rewrite takes it from */
Datum
dp_top_k_condition(PG_FUNCTION_ARGS)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("dp_agg.top_k is a condition of the HAVING of a DP statement with GROUP BY"),
			 errdetail("It chooses the k groups with the most units; it has no value of its own."),
			 errhint(HINT_TOP_K)));
	PG_RETURN_NULL();
}

/*
 * dp_agg.top_k_sample(counts bigint[], k integer, epsilon float8, draws
 * integer) returns SETOF integer[]: the ranks the mechanism gives the
 * counts in each of draws runs, for tests and audits (the statistical
 * suite compares their frequencies with the mechanism's exact
 * probabilities)
 */
Datum
dp_top_k_sample(PG_FUNCTION_ARGS)
{
	ArrayType  *a = PG_GETARG_ARRAYTYPE_P(0);
	int32		k = PG_GETARG_INT32(1);
	double		epsilon = PG_GETARG_FLOAT8(2);
	int32		draws = PG_GETARG_INT32(3);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int64	   *counts;
	int32	   *ranks;
	Datum	   *out;
	DpLaplaceParam param;

	deconstruct_array(a, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &elems, &nulls, &n);
	if (n < 1 || n > TOP_K_SAMPLE_MAX_COUNTS || k < 1 || k > n || !(epsilon > 0) || !isfinite(epsilon) ||
		draws < 1 || draws > TOP_K_SAMPLE_MAX_RUNS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("top_k_sample takes 1 to %d counts, k from 1 to their number, a positive epsilon and 1 to %d draws",
						TOP_K_SAMPLE_MAX_COUNTS, TOP_K_SAMPLE_MAX_RUNS)));
	/* noise draws: k n - k (k - 1) / 2 per run, as the calculators' steps */
	if ((int64) draws * ((int64) k * n - (int64) k * (k - 1) / 2) > TOP_K_SAMPLE_MAX_DRAWS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the computation exceeds the work limit of one call"),
				 errdetail("One call of top_k_sample may draw at most %lld noise values, k n - k (k - 1) / 2 per run.",
						   (long long) TOP_K_SAMPLE_MAX_DRAWS),
				 errhint("Ask for fewer draws in one call.")));
	counts = palloc(sizeof(int64) * n);
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("the counts of top_k_sample must not be NULL")));
		counts[i] = DatumGetInt64(elems[i]);
	}
	param = dp_laplace_param((double) k / epsilon);
	ranks = palloc(sizeof(int32) * n);
	out = palloc(sizeof(Datum) * n);
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	for (int d = 0; d < draws; d++)
	{
		Datum		v;
		bool		isnull = false;

		dp_top_k_rank_groups(counts, n, k, param, ranks);
		for (int i = 0; i < n; i++)
			out[i] = Int32GetDatum(ranks[i]);
		v = PointerGetDatum(construct_array(out, n, INT4OID, 4, true, TYPALIGN_INT));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &v, &isnull);
	}
	return (Datum) 0;
}

/* ---------- the rewrite ---------- */

/* the levels whose HAVING asked for top-k, and their call */
typedef struct TopKLevel
{
	Query	   *q;
	int			k;
	Const	   *epsilon;		/* float8, NULL for the default */
} TopKLevel;

typedef struct Context
{
	List	   *levels;
} Context;

static Context *current = NULL;

void *
dp_top_k_begin(void)
{
	Context    *saved = current;

	current = palloc0(sizeof(Context));
	return saved;
}

void
dp_top_k_end(void *saved)
{
	current = (Context *) saved;
}

/* is funcid dp_agg.top_k (either form)? */
static bool
is_top_k(Oid funcid)
{
	char	   *name;

	if (funcid < FirstNormalObjectId)
		return false;
	name = get_func_name(funcid);
	return name != NULL && strcmp(name, "top_k") == 0 &&
		get_func_namespace(funcid) == get_namespace_oid("dp_agg", true);
}

static bool
top_k_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, FuncExpr) && is_top_k(((FuncExpr *) node)->funcid))
		return true;
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, top_k_walker, context, 0);
	return expression_tree_walker(node, top_k_walker, context);
}

static void
misplaced(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("dp_agg.top_k is a condition of the HAVING of a DP statement with GROUP BY"),
			 errdetail("It must be one of the conditions joined by AND in the HAVING of the level that groups the rows."),
			 errhint(HINT_TOP_K)));
}

static Const *
folded(Node *node)
{
	Node	   *n = eval_const_expressions(NULL, copyObject(node));

	return IsA(n, Const) ? (Const *) n : NULL;
}

static void
prepare_level(Query *q)
{
	List	   *conds = NIL;
	List	   *kept = NIL;
	ListCell   *lc;
	FuncExpr   *call = NULL;

	if (q->havingQual == NULL)
		return;
	if (IsA(q->havingQual, BoolExpr) && ((BoolExpr *) q->havingQual)->boolop == AND_EXPR)
		conds = ((BoolExpr *) q->havingQual)->args;
	else
		conds = list_make1(q->havingQual);
	foreach(lc, conds)
	{
		Node	   *c = lfirst(lc);

		if (IsA(c, FuncExpr) && is_top_k(((FuncExpr *) c)->funcid))
		{
			if (call != NULL)
				misplaced();
			call = (FuncExpr *) c;
		}
		else
			kept = lappend(kept, c);
	}
	if (call == NULL)
		return;
	{
		TopKLevel  *l = palloc0(sizeof(TopKLevel));
		Const	   *k = folded(linitial(call->args));

		if (q->groupClause == NIL || q->groupingSets != NIL || !q->hasAggs)
			misplaced();
		if (k == NULL || k->constisnull || k->consttype != INT4OID ||
			DatumGetInt32(k->constvalue) < 1 || DatumGetInt32(k->constvalue) > DP_TOP_K_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("k of dp_agg.top_k must be a constant from 1 to %d", DP_TOP_K_MAX),
					 errdetail("The price and the noise of top-k depend on k: it is decided from the statement alone."),
					 errhint(HINT_TOP_K)));
		l->q = q;
		l->k = DatumGetInt32(k->constvalue);
		if (list_length(call->args) > 1)
		{
			Const	   *e = folded(lsecond(call->args));

			if (e == NULL || e->constisnull || e->consttype != FLOAT8OID ||
				!(DatumGetFloat8(e->constvalue) > 0) || !isfinite(DatumGetFloat8(e->constvalue)))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("epsilon of dp_agg.top_k must be a positive finite constant"),
						 errdetail("The price of top-k is decided from the statement alone."),
						 errhint("Omit epsilon to use dp_agg.selection_epsilon, or its default.")));
			l->epsilon = e;
		}
		q->havingQual = kept == NIL ? NULL : (Node *) make_ands_explicit(kept);
		current->levels = lappend(current->levels, l);
	}
}

static void
prepare_walk(Query *q)
{
	ListCell   *lc;

	foreach(lc, q->cteList)
		prepare_walk(castNode(Query, lfirst_node(CommonTableExpr, lc)->ctequery));
	foreach(lc, q->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		if (rte->rtekind == RTE_SUBQUERY)
			prepare_walk(rte->subquery);
	}
	prepare_level(q);
	/* anywhere else in the level (a sub-link, the output, WHERE): misplaced */
	if (top_k_walker((Node *) q->targetList, NULL) || top_k_walker(q->havingQual, NULL) ||
		top_k_walker((Node *) q->jointree, NULL))
		misplaced();
}

/*
 * Before the guards: take the conditions dp_agg.top_k(k [, epsilon]) out of
 * the HAVING of the statement's levels (the file's comment).
 */
void
dp_top_k_prepare(Query *query)
{
	if (current == NULL || query->commandType == CMD_UTILITY || !dp_extension_present())
		return;
	prepare_walk(query);
}

/* dp_agg_internal.dp_top_k(NULL::internal, k, epsilon) */
static Aggref *
make_top_k(TopKLevel *l)
{
	Aggref	   *a = makeNode(Aggref);

	a->aggfnoid = dp_top_k_aggregate();
	a->aggtype = INT8OID;
	a->aggargtypes = list_make3_oid(INTERNALOID, INT4OID, FLOAT8OID);
	a->args = list_make3(makeTargetEntry((Expr *) makeConst(INTERNALOID, -1, InvalidOid,
															SIZEOF_DATUM, (Datum) 0, true, true),
										 1, NULL, false),
						 makeTargetEntry((Expr *) makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
															Int32GetDatum(l->k), false, true),
										 2, NULL, false),
						 makeTargetEntry((Expr *) (l->epsilon != NULL ? (Node *) l->epsilon
												   : (Node *) makeNullConst(FLOAT8OID, -1, InvalidOid)),
										 3, NULL, false));
	/* the rows of a public domain are not counted */
	a->aggfilter = (Expr *) dp_domain_row_filter(l->q);
	a->aggkind = AGGKIND_NORMAL;
	a->aggsplit = AGGSPLIT_SIMPLE;
	a->aggno = -1;
	a->aggtransno = -1;
	a->location = DP_DOMAIN_LOCATION;
	return a;
}

static void
rewrite_level(TopKLevel *l)
{
	Query	   *q = l->q;
	Query	   *s = makeNode(Query);
	Query	   *w = dp_new_select();
	WindowFunc *wf = makeNode(WindowFunc);
	WindowClause *wc = makeNode(WindowClause);
	NullTest   *nt = makeNode(NullTest);
	RangeTblRef *ref;
	List	   *tlist = NIL;
	ListCell   *lc;
	int			n;
	int			i;

	if (!OidIsValid(dp_top_k_aggregate()) || !OidIsValid(dp_top_k_rank_oid()))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("top-k needs dp_agg version 0.4"),
				 errdetail("The installed SQL objects of dp_agg are older than its library."),
				 errhint("Run ALTER EXTENSION dp_agg UPDATE.")));

	/* s: the aggregation as it is, its columns all output, and the count's handle */
	*s = *q;
	s->sortClause = NIL;
	s->distinctClause = NIL;
	s->hasDistinctOn = false;
	s->limitCount = NULL;
	s->limitOffset = NULL;
	s->limitOption = DP_LIMIT_OPTION_NONE;
	s->targetList = NIL;
	foreach(lc, q->targetList)
	{
		TargetEntry *t = copyObject(lfirst_node(TargetEntry, lc));

		t->resjunk = false;
		if (t->resname == NULL)
			t->resname = psprintf("c%d", t->resno);
		s->targetList = lappend(s->targetList, t);
	}
	n = list_length(s->targetList);
	s->targetList = lappend(s->targetList,
							makeTargetEntry((Expr *) make_top_k(l), n + 1, pstrdup("dp_top_k"), false));

	/* w: the rank of each group among all of them */
	w->rtable = list_make1(dp_subquery_rte(s, "dp_top_k_groups", true));
	ref = makeNode(RangeTblRef);
	ref->rtindex = 1;
	w->jointree = makeFromExpr(list_make1(ref), NULL);
	i = 0;
	foreach(lc, s->targetList)
	{
		TargetEntry *t = lfirst(lc);

		i++;
		w->targetList = lappend(w->targetList,
								makeTargetEntry((Expr *) makeVarFromTargetEntry(1, t), i,
												pstrdup(t->resname), false));
	}
	wf->winfnoid = dp_top_k_rank_oid();
	wf->wintype = INT4OID;
	wf->args = list_make1(makeVar(1, n + 1, INT8OID, -1, InvalidOid, 0));
	wf->winref = 1;
	wf->location = DP_DOMAIN_LOCATION;
	w->targetList = lappend(w->targetList,
							makeTargetEntry((Expr *) wf, n + 2, pstrdup("dp_top_k_rank"), false));
	wc->frameOptions = FRAMEOPTION_DEFAULTS;
	wc->winref = 1;
	w->windowClause = list_make1(wc);
	w->hasWindowFuncs = true;

	/* q: the chosen groups, as q released them, in q's order */
	i = 0;
	foreach(lc, q->targetList)
	{
		TargetEntry *t = lfirst_node(TargetEntry, lc);
		TargetEntry *nt2;

		i++;
		nt2 = makeTargetEntry((Expr *) makeVar(1, i, exprType((Node *) t->expr),
											   exprTypmod((Node *) t->expr),
											   exprCollation((Node *) t->expr), 0),
							  t->resno, t->resname, t->resjunk);
		nt2->ressortgroupref = t->ressortgroupref;
		nt2->resorigtbl = t->resorigtbl;
		nt2->resorigcol = t->resorigcol;
		tlist = lappend(tlist, nt2);
	}
	nt->arg = (Expr *) makeVar(1, n + 2, INT4OID, -1, InvalidOid, 0);
	nt->nulltesttype = IS_NOT_NULL;
	nt->argisrow = false;
	nt->location = -1;
	q->targetList = tlist;
	q->rtable = list_make1(dp_subquery_rte(w, "dp_top_k", true));
#ifdef DP_HAVE_RTEPERMINFO
	q->rteperminfos = NIL;
#endif
	ref = makeNode(RangeTblRef);
	ref->rtindex = 1;
	q->jointree = makeFromExpr(list_make1(ref), (Node *) nt);
	q->cteList = NIL;
	q->hasRecursive = false;
	q->hasAggs = false;
	q->hasWindowFuncs = false;
	q->hasSubLinks = false;
	q->hasTargetSRFs = false;
	q->groupClause = NIL;
	q->groupingSets = NIL;
	q->havingQual = NULL;
	q->windowClause = NIL;
	q->rowMarks = NIL;
}

/* did the statement ask for top-k? */
bool
dp_top_k_requested(void)
{
	return current != NULL && current->levels != NIL;
}

/*
 * After the rewrites of public domains, privacy units and private
 * selection: wrap each level that asked for top-k (the file's comment).
 */
void
dp_top_k_rewrite(Query *query)
{
	ListCell   *lc;

	if (current == NULL)
		return;
	foreach(lc, current->levels)
		rewrite_level(lfirst(lc));
}
