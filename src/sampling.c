/*-------------------------------------------------------------------------
 *
 * sampling.c
 *	  TABLESAMPLE and privacy amplification by subsampling.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/nodeFuncs.h"

#include "sampling.h"

const DpSampling dp_no_sampling = {false, false, NULL, 1.0, NULL};

/* The sampling percentage must be decided before execution. */
void
dp_check_tablesample(TableSampleClause *tsc)
{
	ListCell   *lc;

	foreach(lc, tsc->args)
	{
		if (!dp_is_parameter_form(lfirst(lc)))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("the TABLESAMPLE percentage of a DP aggregate must be a constant or a parameter"),
					 errdetail("A percentage computed from the data would make the noise depend on the data.")));
	}
}

/* How the one table of a DP aggregate is read. */
void
dp_sampling_of_input(PlannedStmt *stmt, List *scans, DpSampling *sampling)
{
	*sampling = dp_no_sampling;
	if (list_length(scans) == 1 && IsA(linitial(scans), SampleScan))
	{
		sampling->sampled = true;
		sampling->amplified = false;
		sampling->method = "tablesample";
		sampling->why_not = "amplification by subsampling is not implemented";
	}
}

/* the epsilon the noise is calibrated to */
double
dp_sampling_base_epsilon(double epsilon, const DpSampling *sampling)
{
	return epsilon;
}
