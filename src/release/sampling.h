/*-------------------------------------------------------------------------
 *
 * sampling.h
 *	  TABLESAMPLE and privacy amplification by subsampling.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_SAMPLING_H
#define DP_AGG_SAMPLING_H

#include "nodes/params.h"
#include "nodes/parsenodes.h"
#include "nodes/pathnodes.h"
#include "nodes/plannodes.h"

/* How a table is sampled, as far as privacy is concerned. */
typedef struct DpSampling
{
	bool		sampled;		/* TABLESAMPLE present */
	bool		amplified;		/* the release takes credit for it */
	const char *method;			/* "bernoulli", "system", ... */
	double		rate;			/* inclusion probability of a row */
	const char *why_not;		/* when sampled but not amplified */
	/* from the plan, resolved when the statement is priced */
	TableSampleClause *tablesample;
	int			nscans;			/* scans that sample the table */
	/* privacy units sampled whole (unit_sample.c): the scans' filter */
	bool		units;
	FuncExpr   *unit_filter;	/* dp_agg_internal.unit_sampled(unit, percent, method) */
} DpSampling;

/* the methods of a sample of units, the third argument of its filter */
#define DP_UNIT_SAMPLE_SECURE_BERNOULLI 0
#define DP_UNIT_SAMPLE_BERNOULLI 1

extern bool dp_is_unit_scan(TableSampleClause *tsc);
extern const DpSampling dp_no_sampling;

extern void dp_check_tablesample(TableSampleClause *tsc);
extern uint64 dp_bernoulli_cutoff(float4 percent);
extern void dp_bernoulli_sample_size(PlannerInfo *root, RelOptInfo *baserel, List *paramexprs,
									 BlockNumber *pages, double *tuples);
extern FuncExpr *dp_unit_sample_filter(Plan *scan);
extern bool dp_is_secure_bernoulli(Oid handler);
extern void dp_sampling_of_input(PlannedStmt *stmt, List *scans, DpSampling *sampling);
extern void dp_sampling_resolve(DpSampling *sampling, ParamListInfo params);
extern double dp_sampling_base_epsilon(double epsilon, const DpSampling *sampling);

#endif							/* DP_AGG_SAMPLING_H */
