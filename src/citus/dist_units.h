/*-------------------------------------------------------------------------
 *
 * dist_units.h
 *	  DP statements on Citus tables: privacy units bounded on the coordinator.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_DIST_UNITS_H
#define DP_AGG_DIST_UNITS_H

#include "nodes/parsenodes.h"
#include "utils/hsearch.h"
#include "utils/tuplestore.h"

#include "dist_state.h"
#include "dist_token.h"
#include "release.h"

/*
 * One run of dist_run (dist_exec.c), for the releases it keeps and the
 * bounding of its units (here).
 */
typedef struct DistRun
{
	uint8		nonce[DP_NONCE_LEN];
	EState	   *estate;
	const void *run;			/* the dist_run call */
	const DpRelease **tickets;
	const DpRelease **units;	/* what each call's partial state accumulates */
	int			ncalls;
	int			select;			/* the call of the private selection, or -1 */
	int			unit_groups;	/* privacy units: k, 0 if rows are the units */
	int			rows_from;		/* the call whose rows the selection counts, or -1 */
	HTAB	   *slots;
	MemoryContext cxt;
	struct DistRun *next;
	MemoryContextCallback callback;
} DistRun;

extern DpDistState *dp_dist_checked_state(DistRun *dr, int i, Datum value, bool isnull);
extern Tuplestorestate *dp_dist_bound_units(DistRun *dr, Query *inner, TupleDesc rawdesc,
											Tuplestorestate *raw, TupleDesc outdesc);

#endif							/* DP_AGG_DIST_UNITS_H */
