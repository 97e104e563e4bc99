/*-------------------------------------------------------------------------
 *
 * estimate.c
 *	  dp_agg.estimate: a released value with its error bar, as one datum.
 *
 * When a statement asks for the error bar of a DP aggregate
 * (dp_interval_low(dp_avg(...)) and the like, error_bars.c), the planner
 * hook makes that aggregate return a dp_agg.estimate instead of its value:
 * the value, the ends of its 95% interval, the clamping bounds it used and
 * the scale of its noise, all computed by its final function from the one
 * noise it drew.  Every use of the aggregate in the statement then reads a
 * part of that datum (dp_agg_internal.estimate_part), so the value and its error
 * bar come from the same release and cost nothing more (post-processing).
 *
 * The datum lives inside one statement: it is made by final functions and
 * read by estimate_part.  Its text form is for display only; it cannot be
 * entered (the input function refuses), so no estimate exists that a DP
 * aggregate did not make.
 *
 * Binary form (a varlena): version, the value type's OID, flags (which
 * bounds are NULL), the noise scale, then the value, the interval's low
 * and high ends and the lower and upper bounds, each as its length and
 * bytes (by-value types as a Datum).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/float.h"
#include "utils/lsyscache.h"

#include "compat.h"
#include "estimate.h"

PG_FUNCTION_INFO_V1(dp_estimate_in);
PG_FUNCTION_INFO_V1(dp_estimate_out);
PG_FUNCTION_INFO_V1(dp_estimate_part_sql);
PG_FUNCTION_INFO_V1(dp_estimate_scale_sql);
PG_FUNCTION_INFO_V1(dp_interval_outside);

#define DP_ESTIMATE_VERSION 1

/* header of the binary form */
typedef struct EstimateHeader
{
	int32		vl_len_;
	uint32		version;
	Oid			typid;
	uint32		nulls;			/* bit i: datum i is NULL */
	double		scale;
} EstimateHeader;

static void
bad_estimate(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("invalid dp_agg.estimate")));
}

/* bytes of one datum of the type, NULL: none */
static Size
datum_bytes(Datum d, bool isnull, int16 typlen, bool typbyval)
{
	if (isnull)
		return 0;
	if (typbyval)
		return sizeof(Datum);
	return datumGetSize(d, typbyval, typlen);
}

/* the datum of the estimate, in CurrentMemoryContext */
Datum
dp_estimate_make(const DpEstimate *e)
{
	int16		typlen;
	bool		typbyval;
	Size		size = sizeof(EstimateHeader);
	Datum		d[DP_ESTIMATE_PARTS];
	EstimateHeader *h;
	char	   *p;

	get_typlenbyval(e->typid, &typlen, &typbyval);
	if (!typbyval && typlen != -1)
		elog(ERROR, "dp_agg: estimates of type %u are not supported", e->typid);
	for (int i = 0; i < DP_ESTIMATE_PARTS; i++)
	{
		/* flat, uncompressed copies of varlena values */
		d[i] = (e->isnull[i] || typbyval) ? e->datum[i]
			: PointerGetDatum(PG_DETOAST_DATUM_COPY(e->datum[i]));
		size += sizeof(uint32) + datum_bytes(d[i], e->isnull[i], typlen, typbyval);
	}
	h = palloc0(size);
	SET_VARSIZE(h, size);
	h->version = DP_ESTIMATE_VERSION;
	h->typid = e->typid;
	h->scale = e->scale;
	p = (char *) h + sizeof(EstimateHeader);
	for (int i = 0; i < DP_ESTIMATE_PARTS; i++)
	{
		uint32		n = (uint32) datum_bytes(d[i], e->isnull[i], typlen, typbyval);

		if (e->isnull[i])
			h->nulls |= 1u << i;
		memcpy(p, &n, sizeof(uint32));
		p += sizeof(uint32);
		if (n == 0)
			continue;
		if (typbyval)
			memcpy(p, &d[i], sizeof(Datum));
		else
			memcpy(p, DatumGetPointer(d[i]), n);
		p += n;
	}
	return PointerGetDatum(h);
}

/* read an estimate; its varlena datums point into the datum's memory */
void
dp_estimate_read(Datum datum, DpEstimate *e)
{
	EstimateHeader *h = (EstimateHeader *) PG_DETOAST_DATUM(datum);
	Size		size = VARSIZE(h);
	const char *p = (const char *) h + sizeof(EstimateHeader);
	const char *end = (const char *) h + size;
	int16		typlen;
	bool		typbyval;

	if (size < sizeof(EstimateHeader) || h->version != DP_ESTIMATE_VERSION ||
		(h->nulls & ~((1u << DP_ESTIMATE_PARTS) - 1)) != 0)
		bad_estimate();
	get_typlenbyval(h->typid, &typlen, &typbyval);
	e->typid = h->typid;
	e->scale = h->scale;
	for (int i = 0; i < DP_ESTIMATE_PARTS; i++)
	{
		uint32		n;

		if (end - p < (ptrdiff_t) sizeof(uint32))
			bad_estimate();
		memcpy(&n, p, sizeof(uint32));
		p += sizeof(uint32);
		e->isnull[i] = (h->nulls & (1u << i)) != 0;
		if (e->isnull[i] != (n == 0) || end - p < (ptrdiff_t) n ||
			(n > 0 && typbyval && n != sizeof(Datum)) ||
			(n > 0 && !typbyval && (n < VARHDRSZ || VARSIZE_ANY(p) != n)))
			bad_estimate();
		if (n == 0)
			e->datum[i] = (Datum) 0;
		else if (typbyval)
			memcpy(&e->datum[i], p, sizeof(Datum));
		else
		{
			/* aligned copy: p need not be aligned */
			char	   *copy = palloc(n);

			memcpy(copy, p, n);
			e->datum[i] = PointerGetDatum(copy);
		}
		p += n;
	}
	if (p != end)
		bad_estimate();
}

/* dp_agg_internal.estimate_in: estimates are made by DP aggregates only */
Datum
dp_estimate_in(PG_FUNCTION_ARGS)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("dp_agg.estimate values cannot be entered"),
			 errdetail("An estimate is made by a DP aggregate for the error bars of its release."),
			 errhint("Use dp_interval_low, dp_interval_high, dp_noise_scale, dp_lower_bound or dp_upper_bound on a DP aggregate.")));
	PG_RETURN_NULL();
}

static char *
datum_text(const DpEstimate *e, int i)
{
	Oid			out;
	bool		varlena;

	if (e->isnull[i])
		return "NULL";
	getTypeOutputInfo(e->typid, &out, &varlena);
	return OidOutputFunctionCall(out, e->datum[i]);
}

/* dp_agg_internal.estimate_out: (value, low, high, noise scale, lower, upper) */
Datum
dp_estimate_out(PG_FUNCTION_ARGS)
{
	DpEstimate	e;

	dp_estimate_read(PG_GETARG_DATUM(0), &e);
	PG_RETURN_CSTRING(psprintf("(%s, %s, %s, %s, %s, %s)",
							   datum_text(&e, DP_ESTIMATE_VALUE),
							   datum_text(&e, DP_ESTIMATE_LOW),
							   datum_text(&e, DP_ESTIMATE_HIGH),
							   float8out_internal(e.scale),
							   datum_text(&e, DP_ESTIMATE_LOWER),
							   datum_text(&e, DP_ESTIMATE_UPPER)));
}

/*
 * dp_agg_internal.estimate_part(estimate, part, NULL::type): a part of an estimate
 * (0 the value, 1 and 2 the interval's ends, 3 and 4 the bounds), of the
 * type of the third argument, which must be the estimate's
 */
Datum
dp_estimate_part_sql(PG_FUNCTION_ARGS)
{
	DpEstimate	e;
	int32		part;
	Oid			type = get_fn_expr_argtype(fcinfo->flinfo, 2);

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	part = PG_GETARG_INT32(1);
	if (part < 0 || part >= DP_ESTIMATE_PARTS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("part of an estimate must be from 0 to %d", DP_ESTIMATE_PARTS - 1),
				 errdetail("part is %d.", part)));
	dp_estimate_read(PG_GETARG_DATUM(0), &e);
	if (type != e.typid)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("estimate of type %s read as %s",
						format_type_be(e.typid), format_type_be(type))));
	if (e.isnull[part])
		PG_RETURN_NULL();
	PG_RETURN_DATUM(e.datum[part]);
}

/* dp_agg_internal.estimate_scale(estimate): the scale of its noise */
Datum
dp_estimate_scale_sql(PG_FUNCTION_ARGS)
{
	DpEstimate	e;

	dp_estimate_read(PG_GETARG_DATUM(0), &e);
	PG_RETURN_FLOAT8(e.scale);
}

/*
 * dp_interval_low and the other error-bar functions, when the planner hook
 * could not give them a DP aggregate's estimate (error_bars.c replaces
 * every call it can): their argument is not a release.
 */
Datum
dp_interval_outside(PG_FUNCTION_ARGS)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("error bars are given for the result of a DP aggregate only"),
			 errdetail("The argument is not a DP aggregate of this statement, nor a column of a sub-query that is one."),
			 errhint("Write dp_interval_low(dp_avg(...)) next to the aggregate, or apply it to a sub-query's column that holds a DP aggregate.")));
	PG_RETURN_NULL();
}
