/*-------------------------------------------------------------------------
 *
 * registry.h
 *	  The tickets of running executions.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_REGISTRY_H
#define DP_AGG_REGISTRY_H

#include "fmgr.h"
#include "nodes/execnodes.h"

#include "release.h"

extern void dp_register_releases(EState *estate, List *releases);
extern List *dp_execution_releases(EState *estate);
extern const DpRelease *dp_release_for_call(FunctionCallInfo fcinfo, const char *fname);

#endif							/* DP_AGG_REGISTRY_H */
