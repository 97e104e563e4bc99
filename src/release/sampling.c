/*-------------------------------------------------------------------------
 *
 * sampling.c
 *	  TABLESAMPLE and privacy amplification by subsampling.
 *
 * When the one table of a DP aggregate is read with TABLESAMPLE BERNOULLI
 * (p) and no REPEATABLE, each row is kept independently with probability
 * q = p/100: Poisson subsampling.  A release that is (epsilon0, delta0)-DP
 * on the sample is then (ln(1 + q (e^epsilon0 - 1)), q delta0)-DP on the
 * table for add/remove neighbours (Steinke 2022, "Composition of
 * Differential Privacy & Privacy Amplification by Subsampling", Theorem 29
 * and section 6.2), so the noise can be calibrated to the weaker
 * base guarantee and the release still costs what was asked.  Gaussian
 * releases may also use the Renyi DP of the sampled Gaussian (release.c).
 *
 * No credit is taken, and the release is priced and calibrated as if the
 * table were read whole, for REPEATABLE (the analyst can fix the sample and
 * compute it again), for SYSTEM (a row's inclusion is tied to its
 * page-mates), for any other method, or when the table is read in several
 * parts.  The rate is the one BERNOULLI actually applies: the probability
 * that a 32-bit hash falls below rint(2^32 p / 100), which is exact in a
 * double.
 *
 * BERNOULLI decides with a hash of the row's position and a seed drawn from
 * PostgreSQL's internal (not cryptographic) random generator.  The stricter
 * method dp_agg.secure_bernoulli draws each row's coin from the extension's
 * CSPRNG (random.c) and cannot be made repeatable.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/relscan.h"
#include "access/tsmapi.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "calibrate.h"
#include "catalog.h"
#include "params.h"
#include "random.h"
#include "sampling.h"

PG_FUNCTION_INFO_V1(dp_secure_bernoulli_handler);

const DpSampling dp_no_sampling = {false, false, NULL, 1.0, NULL, NULL, 0, false, NULL};

/* The sampling percentage must be decided before execution. */
void
dp_check_tablesample(TableSampleClause *tsc)
{
	ListCell   *lc;

	if (dp_is_unit_scan(tsc))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("TABLESAMPLE dp_agg_internal.unit_scan runs only in statements rewritten by dp_agg"),
				 errdetail("It reads the rows of the privacy units the sample of one statement keeps."),
				 errhint("Write TABLESAMPLE dp_agg.secure_bernoulli (p) on a relation with a privacy unit (see \"Subsampling\" in dp_agg's doc/sampling.md).")));

	foreach(lc, tsc->args)
	{
		if (!dp_is_parameter_form(lfirst(lc)))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("the TABLESAMPLE percentage of a DP aggregate must be a constant or a parameter"),
					 errdetail("A percentage computed from the data would make the noise depend on the data.")));
	}
}

/*
 * The filter by which a scan keeps the rows of the units of a sample
 * (privacy_unit.c puts it in the scans of the relation with the unit, as
 * a conjunct of their quals), NULL if it has none.  Identified by the
 * function alone: the guard (plan_units.c) checks in the leader that it is in
 * its place, with its argument the scan's unit column.
 */
FuncExpr *
dp_unit_sample_filter(Plan *scan)
{
	Oid			fn = dp_unit_sampled_oid();
	ListCell   *lc;

	if (!OidIsValid(fn))
		return NULL;
	foreach(lc, scan->qual)
	{
		if (IsA(lfirst(lc), FuncExpr) && ((FuncExpr *) lfirst(lc))->funcid == fn)
			return (FuncExpr *) lfirst(lc);
	}
	return NULL;
}

/*
 * How the one table of a DP aggregate is read (from the plan): the scans of
 * a sample (SampleScan nodes; lookup tables are never sampled), or the
 * filter of a sample of units.
 */
void
dp_sampling_of_input(PlannedStmt *stmt, List *scans, DpSampling *sampling)
{
	ListCell   *lc;

	*sampling = dp_no_sampling;
	sampling->nscans = 0;
	foreach(lc, scans)
	{
		FuncExpr   *filter = dp_unit_sample_filter(lfirst(lc));

		if (IsA(lfirst(lc), SampleScan) &&
			!dp_is_unit_scan(((SampleScan *) lfirst(lc))->tablesample))
		{
			sampling->sampled = true;
			sampling->tablesample = ((SampleScan *) lfirst(lc))->tablesample;
			sampling->nscans++;
		}
		if (filter != NULL)
		{
			sampling->sampled = true;
			sampling->units = true;
			sampling->unit_filter = filter;
		}
	}
}

/*
 * Is the clause the internal TABLESAMPLE dp_agg_internal.unit_scan of a
 * sample of units (unit_sample.c)?  Its scan reads the rows of the
 * condition in its filter, which the guard checks (plan_units.c); it is not
 * a sample of rows.
 */
bool
dp_is_unit_scan(TableSampleClause *tsc)
{
	return tsc != NULL && OidIsValid(dp_unit_scan_oid()) &&
		tsc->tsmhandler == dp_unit_scan_oid();
}

/* Is the handler dp_agg.secure_bernoulli? */
bool
dp_is_secure_bernoulli(Oid handler)
{
	HeapTuple	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(handler));
	bool		result = false;

	if (HeapTupleIsValid(tup))
	{
		Form_pg_proc proc = (Form_pg_proc) GETSTRUCT(tup);
		bool		isnull;
		Datum		src = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosrc, &isnull);
		Datum		bin = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_probin, &isnull);

		result = proc->prolang == ClanguageId && !isnull &&
			strcmp(TextDatumGetCString(src), "dp_secure_bernoulli_handler") == 0 &&
			strcmp(TextDatumGetCString(bin), "$libdir/dp_agg") == 0;
		ReleaseSysCache(tup);
	}
	return result;
}

/*
 * The cutoff BERNOULLI (and secure_bernoulli, and a sample of units) apply
 * for p: a row (a unit) is kept if a uniform 32-bit value is below it.
 */
uint64
dp_bernoulli_cutoff(float4 percent)
{
	double		p = percent;

	if (isnan(p) || p < 0 || p > 100)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TABLESAMPLE_ARGUMENT),
				 errmsg("sample percentage must be between 0 and 100")));
	/* as tsm_bernoulli */
	return (uint64) rint(((double) PG_UINT32_MAX + 1) * p / 100);
}

/* the inclusion probability of that cutoff, exact in a double */
static double
bernoulli_rate(float4 percent)
{
	return ldexp((double) dp_bernoulli_cutoff(percent), -32);
}

/*
 * The rate of a Bernoulli sample of percentage percent (a constant or a
 * parameter, evaluated now with params), and whether its releases take
 * credit for it: not at a rate of 0
 */
static void
resolve_rate(DpSampling *s, Node *percent, ParamListInfo params)
{
	Datum		value;
	bool		isnull;

	dp_eval_parameter(percent, params, &value, &isnull);
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TABLESAMPLE_ARGUMENT),
				 errmsg("TABLESAMPLE parameter cannot be null")));
	s->rate = bernoulli_rate(DatumGetFloat4(value));
	if (s->rate == 0)
		s->why_not = "a sampling rate of 0 reads nothing to amplify";
	else
		s->amplified = true;
}

/*
 * A sample of privacy units (unit_sample.c): each unit is kept, with all
 * its rows, with the probability q of BERNOULLI's cutoff for the
 * percentage, independently of the other units' rows, and no one can tell
 * which were kept (the key of the sample is secret, drawn from the CSPRNG
 * for each execution).  The releases, whose sensitivities are those of a
 * unit, are then amplified at the level of units as releases over a
 * Poisson sample of rows are at the level of rows (Steinke 2022, Theorem
 * 29; for add/remove neighbours the argument needs only that the unit
 * that differs be kept with probability q whatever the others: its rows
 * are in the sample together or not at all).  The percentage is a
 * constant or a parameter, evaluated now.
 */
static void
resolve_units(DpSampling *s, ParamListInfo params)
{
	FuncExpr   *f = s->unit_filter;
	Node	   *percent;
	Node	   *method;

	if (list_length(f->args) != 3 || !IsA(lthird(f->args), Const) ||
		((Const *) lthird(f->args))->constisnull)
		elog(ERROR, "dp_agg: malformed filter of a sample of units");
	percent = lsecond(f->args);
	method = lthird(f->args);
	s->method = DatumGetInt32(((Const *) method)->constvalue) == DP_UNIT_SAMPLE_BERNOULLI
		? "bernoulli" : "secure_bernoulli";
	s->amplified = false;
	s->rate = 1.0;
	if (!dp_is_parameter_form(percent))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the TABLESAMPLE percentage of a DP aggregate must be a constant or a parameter"),
				 errdetail("A percentage computed from the data would make the noise depend on the data.")));
	resolve_rate(s, percent, params);
	if (!s->amplified)
		s->rate = 1.0;
}

/*
 * Resolve the sampling of a DP aggregate call when the statement is priced:
 * the method, the rate, and whether the release takes credit for it.
 */
void
dp_sampling_resolve(DpSampling *s, ParamListInfo params)
{
	TableSampleClause *tsc = s->tablesample;
	bool		bernoulli,
				secure;

	if (s->sampled && s->units)
	{
		resolve_units(s, params);
		return;
	}
	if (!s->sampled || tsc == NULL)
		return;
	secure = dp_is_secure_bernoulli(tsc->tsmhandler);
	bernoulli = tsc->tsmhandler == F_BERNOULLI;
	s->method = secure ? "secure_bernoulli" : get_func_name(tsc->tsmhandler);
	s->amplified = false;
	s->rate = 1.0;

	/*
	 * Without amplification a release over a sample is as private as over
	 * the table only if sampling is a 1-stable transformation (McSherry
	 * 2009, "Privacy Integrated Queries", Theorem 2): a row's inclusion may
	 * not depend on the other rows.  BERNOULLI decides each row, SYSTEM each
	 * page, alone; SYSTEM_ROWS (n) reads rows until it has n, so removing
	 * one lets another in (a sum with bounds of both signs moves by twice
	 * its sensitivity), and SYSTEM_TIME reads for as long as the others
	 * take.  Methods we cannot vouch for are refused.
	 */
	if (!bernoulli && !secure && tsc->tsmhandler != F_SYSTEM)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("TABLESAMPLE %s is not allowed under DP aggregates", s->method),
				 errdetail("Whether it reads a row may depend on the other rows, so one row could change a release by more than its sensitivity."),
				 errhint("Use TABLESAMPLE BERNOULLI, SYSTEM or dp_agg.secure_bernoulli.")));
	if (!bernoulli && !secure)
		s->why_not = "SYSTEM samples whole pages: a row's inclusion is tied to its page-mates";
	else if (tsc->repeatable != NULL)
		s->why_not = "REPEATABLE lets the sample be fixed and computed again";
	else if (s->nscans != 1)
		s->why_not = "the table is read in several parts";
	else
	{
		/* a constant or a parameter, evaluated now */
		dp_check_tablesample(tsc);
		resolve_rate(s, linitial(tsc->args), params);
	}
	if (!s->amplified)
		s->rate = 1.0;
}

/* the epsilon a Laplace release is calibrated to */
double
dp_sampling_base_epsilon(double epsilon, const DpSampling *sampling)
{
	if (!sampling->amplified)
		return epsilon;
	return dp_base_epsilon(epsilon, sampling->rate);
}

/* ---------- the TABLESAMPLE method dp_agg.secure_bernoulli ---------- */

/*
 * As BERNOULLI (PostgreSQL's tsm_bernoulli): the percentage the planner
 * assumes when it is not a constant, and the percentage from which
 * page-at-a-time visibility checks pay off.
 */
#define SB_DEFAULT_PERCENT 10
#define SB_PAGEMODE_PERCENT 25

typedef struct SecureBernoulliState
{
	uint64		cutoff;			/* keep a row if a random uint32 is below */
	OffsetNumber lt;			/* last tuple returned from current block */
} SecureBernoulliState;

/*
 * The estimate of a Bernoulli sample of its first parameter's percentage
 * (secure_bernoulli, and the scan of a sample of units, unit_sample.c):
 * every page is read, that share of the tuples kept
 */
void
dp_bernoulli_sample_size(PlannerInfo *root, RelOptInfo *baserel, List *paramexprs,
						 BlockNumber *pages, double *tuples)
{
	Node	   *pctnode = (Node *) linitial(paramexprs);
	float4		percent = SB_DEFAULT_PERCENT;

	pctnode = estimate_expression_value(root, pctnode);
	if (IsA(pctnode, Const) && !((Const *) pctnode)->constisnull)
	{
		percent = DatumGetFloat4(((Const *) pctnode)->constvalue);
		if (!(percent >= 0 && percent <= 100))
			percent = SB_DEFAULT_PERCENT;
	}
	*pages = baserel->pages;	/* every page is read */
	*tuples = clamp_row_est(baserel->tuples * percent / 100);
}

static void
sb_initsamplescan(SampleScanState *node, int eflags)
{
	node->tsm_state = palloc0(sizeof(SecureBernoulliState));
}

static void
sb_beginsamplescan(SampleScanState *node, Datum *params, int nparams, uint32 seed)
{
	SecureBernoulliState *st = (SecureBernoulliState *) node->tsm_state;
	double		percent = DatumGetFloat4(params[0]);

	st->cutoff = (uint64) ldexp(bernoulli_rate((float4) percent), 32);
	st->lt = InvalidOffsetNumber;
	node->use_bulkread = true;
	node->use_pagemode = (percent >= SB_PAGEMODE_PERCENT);
}

/* one independent coin per tuple offset, from the CSPRNG */
static OffsetNumber
sb_nextsampletuple(SampleScanState *node, BlockNumber blockno, OffsetNumber maxoffset)
{
	SecureBernoulliState *st = (SecureBernoulliState *) node->tsm_state;
	OffsetNumber tupoffset = st->lt;

	for (tupoffset = (tupoffset == InvalidOffsetNumber) ? FirstOffsetNumber : tupoffset + 1;
		 tupoffset <= maxoffset; tupoffset++)
	{
		uint32		coin;

		dp_random_fill(&coin, sizeof(coin));
		if (coin < st->cutoff)
			break;
	}
	if (tupoffset > maxoffset)
		tupoffset = InvalidOffsetNumber;
	st->lt = tupoffset;
	return tupoffset;
}

Datum
dp_secure_bernoulli_handler(PG_FUNCTION_ARGS)
{
	TsmRoutine *tsm = makeNode(TsmRoutine);

	tsm->parameterTypes = list_make1_oid(FLOAT4OID);
	tsm->repeatable_across_queries = false;
	tsm->repeatable_across_scans = false;
	tsm->SampleScanGetSampleSize = dp_bernoulli_sample_size;
	tsm->InitSampleScan = sb_initsamplescan;
	tsm->BeginSampleScan = sb_beginsamplescan;
	tsm->NextSampleBlock = NULL;
	tsm->NextSampleTuple = sb_nextsampletuple;
	tsm->EndSampleScan = NULL;
	PG_RETURN_POINTER(tsm);
}
