/*-------------------------------------------------------------------------
 *
 * budget_row.c
 *	  Decoding one row of dp_agg.budget into a DpBudget, rejecting
 *	  malformed rows the same way everywhere.
 *
 * The charger (which decides charges) and dp_agg.preview (which predicts
 * them) must read a budget identically, or preview could call a statement
 * affordable that the charger refuses.  The Renyi DP curve is checked
 * here too, should a row get past the table's CHECK constraints (a restore
 * of data without them): NULL means "nothing spent since the last reset"
 * (dp_agg.reset_budget writes NULL), anything else must be one dimension of
 * DP_RDP_ORDERS values, none NULL, NaN or negative (a Renyi divergence is
 * non-negative: Mironov 2017, "Renyi Differential Privacy", Definition 3).
 * The constraints budget_rdp_shape and ledger_rdp_shape test the same
 * function (dp_rdp_curve_check).  A malformed row is an error, never read
 * as zeros: zeros would admit charges the budget cannot pay.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/lsyscache.h"

#include "budget_row.h"

/* column numbers in DP_BUDGET_ROW_COLUMNS */
#define COL_EPSILON_LIMIT	1
#define COL_DELTA_LIMIT		2
#define COL_EPSILON_SPENT	3
#define COL_DELTA_SPENT		4
#define COL_RENYI			5
#define COL_RDP				6
#define COL_SELECTION_EPSILON 7
#define COL_SELECTION_DELTA	8

/* a macro, so that the detail is a literal format string where it is raised */
#define malformed(...) \
	ereport(ERROR, \
			(errcode(ERRCODE_DATA_CORRUPTED), \
			 errmsg("malformed row in dp_agg.budget"), \
			 errdetail(__VA_ARGS__), \
			 errhint("Reset the budget with dp_agg.reset_budget, which keeps the ledger.")))

/* a column that must not be NULL */
static Datum
required(const Datum *values, const bool *isnull, int col)
{
	if (isnull[col - 1])
		malformed("A limit, an amount spent or the accounting is NULL.");
	return values[col - 1];
}

/*
 * The shape of a stored Renyi DP curve: one dimension of float8, one value
 * per order, none NULL, NaN or negative (-0 and infinity pass, as float8's
 * comparisons let them).  DP_CURVE_OK, with the values in curve when it is
 * not NULL; else what is wrong, and in *where the number of values
 * (DP_CURVE_LENGTH) or the first order at fault, from 1 (DP_CURVE_VALUE).
 * One pass over the array as stored: the check constraints of dp_agg.budget
 * and dp_agg.ledger call it at every charge (rdp_curve_valid).
 */
DpCurveFault
dp_rdp_curve_check(ArrayType *a, double *curve, int *where)
{
	bits8	   *nulls;
	const char *data;

	*where = 0;
	if (ARR_NDIM(a) != 1 || ARR_ELEMTYPE(a) != FLOAT8OID)
		return DP_CURVE_SHAPE;
	if (ARR_DIMS(a)[0] != DP_RDP_ORDERS)
	{
		*where = ARR_DIMS(a)[0];
		return DP_CURVE_LENGTH;
	}
	/* the values follow the header and the NULL bitmap, if there is one */
	nulls = ARR_NULLBITMAP(a);
	data = (const char *) a + (nulls != NULL ? (Size) a->dataoffset : ARR_OVERHEAD_NONULLS(1));
	for (int i = 0; i < DP_RDP_ORDERS; i++)
	{
		double		v;

		if (nulls != NULL && (nulls[i / 8] & (1 << (i % 8))) == 0)
		{
			*where = i + 1;
			return DP_CURVE_VALUE;
		}
		memcpy(&v, data, sizeof(v));
		data += sizeof(v);
		if (!(v >= 0))			/* NaN or negative */
		{
			*where = i + 1;
			return DP_CURVE_VALUE;
		}
		if (curve != NULL)
			curve[i] = v;
	}
	return DP_CURVE_OK;
}

/* the composed Renyi DP curve: zeros if NULL */
static void
decode_curve(const Datum *values, const bool *isnull, double *curve)
{
	DpCurveFault fault;
	int			where;

	memset(curve, 0, sizeof(double) * DP_RDP_ORDERS);
	if (isnull[COL_RDP - 1])
		return;
	fault = dp_rdp_curve_check(DatumGetArrayTypeP(values[COL_RDP - 1]), curve, &where);
	if (fault == DP_CURVE_SHAPE)
		malformed("The Renyi DP curve is not a one-dimensional float8 array.");
	else if (fault == DP_CURVE_LENGTH)
		malformed("The Renyi DP curve has %d orders; dp_agg records %d.",
				  where, DP_RDP_ORDERS);
	else if (fault == DP_CURVE_VALUE)
		malformed("Order %d of the Renyi DP curve is NULL, NaN or negative.", where);
}

/* a sum of the private selections: not NULL, NaN or negative */
static double
selection_sum(const Datum *values, const bool *isnull, int col)
{
	double		v = DatumGetFloat8(required(values, isnull, col));

	if (isnan(v) || v < 0)
		malformed("A sum of the private selections is NaN or negative.");
	return v;
}

/*
 * Does dp_agg.budget have the sums of the private selections (SQL objects
 * of version 0.3 on)?  The 0.3 library still charges statements without a
 * selection for older objects.
 */
bool
dp_budget_has_selection_sums(void)
{
	Oid			nsp = get_namespace_oid("dp_agg", true);
	Oid			rel = OidIsValid(nsp) ? get_relname_relid("budget", nsp) : InvalidOid;

	return OidIsValid(rel) && get_attnum(rel, "selection_epsilon") != InvalidAttrNumber;
}

/*
 * Decode the DP_BUDGET_ROW_NCOLUMNS values of a budget, in the order of
 * DP_BUDGET_ROW_COLUMNS, or ERROR if they are malformed.
 */
void
dp_budget_values_decode(const Datum *values, const bool *isnull, DpBudget *b)
{
	b->epsilon_limit = DatumGetFloat8(required(values, isnull, COL_EPSILON_LIMIT));
	b->delta_limit = DatumGetFloat8(required(values, isnull, COL_DELTA_LIMIT));
	b->epsilon_spent = DatumGetFloat8(required(values, isnull, COL_EPSILON_SPENT));
	b->delta_spent = DatumGetFloat8(required(values, isnull, COL_DELTA_SPENT));
	b->renyi = DatumGetBool(required(values, isnull, COL_RENYI));
	decode_curve(values, isnull, b->rdp);
	b->selection_epsilon = selection_sum(values, isnull, COL_SELECTION_EPSILON);
	b->selection_delta = selection_sum(values, isnull, COL_SELECTION_DELTA);
}

/*
 * Decode a row whose first columns are DP_BUDGET_ROW_COLUMNS (or
 * DP_BUDGET_ROW_COLUMNS_0_2), or ERROR if it is malformed.
 */
void
dp_budget_row_decode(HeapTuple tup, TupleDesc desc, DpBudget *b)
{
	Datum		values[DP_BUDGET_ROW_NCOLUMNS];
	bool		isnull[DP_BUDGET_ROW_NCOLUMNS];

	if (desc->natts < DP_BUDGET_ROW_NCOLUMNS)
		elog(ERROR, "dp_agg: a budget row has %d columns, not at least %d", desc->natts,
			 DP_BUDGET_ROW_NCOLUMNS);
	for (int i = 0; i < DP_BUDGET_ROW_NCOLUMNS; i++)
		values[i] = SPI_getbinval(tup, desc, i + 1, &isnull[i]);
	dp_budget_values_decode(values, isnull, b);
}
