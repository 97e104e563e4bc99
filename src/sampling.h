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

#include "release.h"

extern const DpSampling dp_no_sampling;

extern void dp_check_tablesample(TableSampleClause *tsc);
extern void dp_sampling_of_input(PlannedStmt *stmt, List *scans, DpSampling *sampling);
extern void dp_sampling_resolve(DpSampling *sampling, ParamListInfo params);
extern double dp_sampling_base_epsilon(double epsilon, const DpSampling *sampling);

#endif							/* DP_AGG_SAMPLING_H */
