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
 * compiled (their number, text or enforcement) or when any function or
 * type changed since (compiling inlines SQL functions: a CHECK calling one
 * that CREATE OR REPLACE FUNCTION changed must run the new body, as an
 * INSERT would), and everything is dropped after an error
 * (dp_write_cache_forget, from the charger's error recovery).  What is
 * compiled for the indexes (predicates, expressions) belongs to the batch
 * (dp_write_open_indexes): kept in the cache, a partial index's predicate
 * compiled at every batch grew it without bound.  Only a table nothing is
 * attached to is written this way (dp_write_direct_possible); the others
 * go through SPI.  The writers also share the form of the float8[]
 * columns they fill.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_trigger.h"
#include "utils/reltrigger.h"

#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "nodes/makefuncs.h"
#include "utils/array.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "compat.h"
#include "write_cache.h"

/*
 * Can the charger write rel's rows itself, doing all that an INSERT or an
 * UPDATE of it would?  Only for a plain table with nothing attached that
 * the executor or the rewriter would act on: triggers (which also carry
 * foreign keys and deferrable constraints), rules (an ON INSERT DO ALSO
 * rule of an audit), the bound of a partition (checked by the executor of
 * a statement on the partition), stored generated columns.  Anything else
 * is written through SPI, so that nothing is skipped.
 */
bool
dp_write_direct_possible(Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);
	bool		triggers = false;

	/* dp_agg's own statement trigger that recalls leases (lease.c) is for others' writes */
	if (rel->trigdesc != NULL)
		for (int i = 0; i < rel->trigdesc->numtriggers; i++)
		{
			Trigger    *t = &rel->trigdesc->triggers[i];

			if (strcmp(t->tgname, DP_RECALL_TRIGGER) != 0 || TRIGGER_FOR_ROW(t->tgtype))
				triggers = true;
		}
	return rel->rd_rel->relkind == RELKIND_RELATION &&
		!rel->rd_rel->relispartition &&
		!triggers &&
		rel->rd_rules == NULL &&
		!(desc->constr && desc->constr->has_generated_stored);
}

/* changes of functions and types since the process started */
static uint64 function_generation = 1;
static bool function_watch = false;

static void
functions_changed(Datum arg, int cacheid, uint32 hashvalue)
{
	function_generation++;
}

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
	c->enforced = NULL;
}

/* are these the constraints compiled? */
static bool
same_checks(const DpWriteCache *c, TupleConstr *constr)
{
	int			n = constr ? constr->num_check : 0;

	if (n != c->ncheck || c->functions != function_generation)
		return false;
	for (int i = 0; i < n; i++)
		if (strcmp(constr->check[i].ccbin, c->ccbin[i]) != 0 ||
			DP_CHECK_ENFORCED(&constr->check[i]) != c->enforced[i])
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

	if (!function_watch)
	{
		CacheRegisterSyscacheCallback(PROCOID, functions_changed, (Datum) 0);
		CacheRegisterSyscacheCallback(TYPEOID, functions_changed, (Datum) 0);
		function_watch = true;
	}
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
		c->enforced = palloc(sizeof(bool) * Max(c->ncheck, 1));
		for (int i = 0; i < c->ncheck; i++)
		{
			c->ccbin[i] = pstrdup(constr->check[i].ccbin);
			c->enforced[i] = DP_CHECK_ENFORCED(&constr->check[i]);
		}
		c->functions = function_generation;
		MemoryContextSwitchTo(old);
	}
	InitResultRelInfo(c->rri, rel, 0, NULL, 0);
	DP_RRI_CHECK_EXPRS(c->rri) = compiled;	/* NULL: ExecConstraints compiles */
	*estate = c->estate;
	*rri = c->rri;
}

/*
 * Open the indexes of a result relation for this batch, with the executor
 * state their entries are made in (ExecInsertIndexTuples compiles index
 * predicates and expressions in it), in the current memory context: both
 * go when the batch ends, or with it if it fails.
 */
EState *
dp_write_open_indexes(ResultRelInfo *rri)
{
	ExecOpenIndices(rri, false);
	return CreateExecutorState();
}

void
dp_write_close_indexes(ResultRelInfo *rri, EState *index_estate)
{
	ExecCloseIndices(rri);
	FreeExecutorState(index_estate);
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
