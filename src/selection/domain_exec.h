/*-------------------------------------------------------------------------
 *
 * domain_exec.h
 *	  The key sets of a DP statement's public domains, opened at the
 *	  executor's start.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_DOMAIN_EXEC_H
#define DP_AGG_DOMAIN_EXEC_H

#include "executor/execdesc.h"

extern void dp_domain_exec_open(QueryDesc *queryDesc);

#endif							/* DP_AGG_DOMAIN_EXEC_H */
