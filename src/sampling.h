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
	int			nscans;			/* scans that read the table */
} DpSampling;

extern const DpSampling dp_no_sampling;

extern void dp_check_tablesample(TableSampleClause *tsc);
extern bool dp_is_secure_bernoulli(Oid handler);
extern void dp_sampling_of_input(PlannedStmt *stmt, List *scans, DpSampling *sampling);
extern void dp_sampling_resolve(DpSampling *sampling, ParamListInfo params);
extern double dp_sampling_base_epsilon(double epsilon, const DpSampling *sampling);

#endif							/* DP_AGG_SAMPLING_H */
