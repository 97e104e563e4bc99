/*-------------------------------------------------------------------------
 *
 * write_cache.c
 *	  The executor state of a table dp_agg writes without SPI, kept from
 *	  batch to batch with its compiled CHECK constraints.
 *
 * The charger writes the rows of dp_agg.budget (budget_store.c) and of
 * dp_agg.ledger (charge_ledger.c) itself, as UPDATE and INSERT write them,
 * a batch of charges at a time.  Compiling a table's CHECK constraints
 * from their stored node trees was a third of a small batch's work, so
 * each table keeps an executor state and a result relation whose compiled
 * constraints outlive the batch, in a memory context of their own.  They
 * are compiled again when the relation's constraints differ from those
 * compiled (their number or text), and everything is dropped after an
 * error (dp_write_cache_forget, from the charger's error recovery).  The
 * writers also share the form of the float8[] columns they fill.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "nodes/makefuncs.h"
#include "utils/array.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "compat.h"
#include "write_cache.h"

/* Drop the cache: the next open compiles the constraints again. */
void
dp_write_cache_forget(DpWriteCache *c)
{
	if (c->cxt != NULL)
		MemoryContextDelete(c->cxt);
	c->cxt = NULL;
	c->estate = NULL;
	c->rri = NULL;
	c->ncheck = 0;
	c->ccbin = NULL;
}

/* are these the constraints compiled? */
static bool
same_checks(const DpWriteCache *c, TupleConstr *constr)
{
	int			n = constr ? constr->num_check : 0;

	if (n != c->ncheck)
		return false;
	for (int i = 0; i < n; i++)
		if (strcmp(constr->check[i].ccbin, c->ccbin[i]) != 0)
			return false;
	return true;
}

/*
 * The executor state and result relation for writing rel in this batch,
 * with the constraints compiled by an earlier batch if they are still
 * rel's.  The caller opens (and closes) the indexes.
 */
void
dp_write_cache_open(DpWriteCache *c, Relation rel, EState **estate, ResultRelInfo **rri)
{
	TupleConstr *constr = RelationGetDescr(rel)->constr;
	ExprState **compiled = NULL;

	if (c->cxt != NULL && same_checks(c, constr))
		compiled = DP_RRI_CHECK_EXPRS(c->rri);
	else
	{
		MemoryContext old;

		dp_write_cache_forget(c);
		/* c->name is a string constant (AllocSetContextCreate's check) */
		c->cxt = AllocSetContextCreateInternal(TopMemoryContext, c->name,
											   ALLOCSET_DEFAULT_SIZES);
		old = MemoryContextSwitchTo(c->cxt);
		c->estate = CreateExecutorState();
		c->rri = makeNode(ResultRelInfo);
		c->ncheck = constr ? constr->num_check : 0;
		c->ccbin = palloc(sizeof(char *) * Max(c->ncheck, 1));
		for (int i = 0; i < c->ncheck; i++)
			c->ccbin[i] = pstrdup(constr->check[i].ccbin);
		MemoryContextSwitchTo(old);
	}
	InitResultRelInfo(c->rri, rel, 0, NULL, 0);
	DP_RRI_CHECK_EXPRS(c->rri) = compiled;	/* NULL: ExecConstraints compiles */
	*estate = c->estate;
	*rri = c->rri;
}

/* a float8[] datum of n values */
Datum
dp_write_float8_array(const double *v, int n)
{
	/*
	 * the array construct_array builds (one dimension from 1, no NULLs, the
	 * doubles one after the other), written at once: construct_array's
	 * copy of each element was most of the cost of the charger's rows
	 */
	Size		size = ARR_OVERHEAD_NONULLS(1) + sizeof(float8) * n;
	ArrayType  *a;

	if (n <= 0)
		return PointerGetDatum(construct_empty_array(FLOAT8OID));
	a = palloc0(size);
	SET_VARSIZE(a, size);
	a->ndim = 1;
	a->dataoffset = 0;
	a->elemtype = FLOAT8OID;
	ARR_DIMS(a)[0] = n;
	ARR_LBOUND(a)[0] = 1;
	memcpy((char *) a + ARR_OVERHEAD_NONULLS(1), v, sizeof(float8) * n);	/* its data */
	return PointerGetDatum(a);
}
