/*-------------------------------------------------------------------------
 *
 * dist_units.c
 *	  DP statements on Citus tables: privacy units bounded on the coordinator.
 *
 * With a privacy unit, the inner statement groups by the unit and the
 * keys, and the workers return the exact state of each (unit, group),
 * combined over the shards by Citus.  dist_run (dist_exec.c) bounds each
 * unit's contribution here, once, from all its rows wherever Citus found
 * them, as the three levels of a local rewrite do (privacy_unit.c): the
 * groups a unit keeps, the bound of each contribution, and their sum per
 * group.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/tuplesort.h"
#include "utils/tuplestore.h"

#include "catalog.h"
#include "dist_inner.h"
#include "dist_state.h"
#include "dist_token.h"
#include "dist_units.h"
#include "grid.h"
#include "random.h"
#include "release.h"

/* ---------- privacy units: each unit bounded once, on the coordinator ---------- */

/*
 * A unit's contribution to one group, bounded as level 1 of privacy_unit.c
 * bounds it (unit_aggregates.c, dp_unit_bound_*_final): at most R rows counted,
 * a sum's total clamped to [lower, upper], an average's (and a variance's)
 * c = min(m, R) of its m rows at the unit's own mean (dp_scale_total).  The state is the exact state of the unit's
 * rows in the group (one row of the inner statement), in place.
 */
static void
bound_contribution(DpDistState *st, const DpRelease *ticket)
{
	int64		rows = st->count;

	st->count = Min(rows, (int64) ticket->unit_rows);
	switch (ticket->call.kind)
	{
		case DP_COUNT_STAR:
		case DP_COUNT:
			st->sum = 0;
			st->sumsq = 0;
			break;
		case DP_SUM:
			st->sum = Max(st->sum, (int128) ticket->lo_units);
			st->sum = Min(st->sum, (int128) ticket->hi_units);
			st->sumsq = 0;
			break;
		default:
			/* dp_avg, dp_var, dp_stddev: c rows' worth at the unit's mean */
			if (rows > st->count)
			{
				st->sum = dp_scale_total(st->sum, st->count, rows);
				st->sumsq = dp_scale_total(st->sumsq, st->count, rows);
			}
			break;
	}
}

/* a state of the run for call i, checked (NULL: an empty one) */
DpDistState *
dp_dist_checked_state(DistRun *dr, int i, Datum value, bool isnull)
{
	const DpRelease *r = dr->units[i];
	DpDistState *st;

	if (isnull)
		return dp_dist_state_new(CurrentMemoryContext, r->call.kind, dr->nonce, r->fingerprint);
	st = dp_dist_state_copy((DpDistState *) PG_DETOAST_DATUM(value));
	if (memcmp(st->nonce, dr->nonce, DP_NONCE_LEN) != 0 ||
		st->fingerprint != r->fingerprint || st->kind != r->call.kind)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("a partial state of a DP aggregate belongs to another statement"),
				 errdetail("A worker returned a state with another nonce or other units.")));
	return st;
}

/* equality of two values by a GROUP BY clause's operator, NULLs equal */
static bool
keys_equal(FmgrInfo *eq, Oid collation, Datum a, bool anull, Datum b, bool bnull)
{
	if (anull || bnull)
		return anull && bnull;
	return DatumGetBool(FunctionCall2Coll(eq, collation, a, b));
}

typedef struct UnitRow
{
	uint64		priority;
	MinimalTuple tuple;
} UnitRow;

/*
 * The groups a unit keeps: at most k of its rows (one per group, the
 * inner statement groups by unit and keys), those of the k smallest
 * priorities drawn from the CSPRNG for each row: a uniform k-subset of the
 * unit's groups, chosen from its own rows and fresh randomness only, as the
 * proof of doc/units-and-groups.md requires (Wilson et al. 2020, section 3).
 * Ties (probability about 2^-64) are broken by order of arrival.
 */
static void
keep_row(UnitRow *kept, int *nkept, int k, TupleTableSlot *slot)
{
	uint64		p;
	int			worst = 0;

	dp_random_fill((uint8 *) &p, sizeof(p));
	if (*nkept < k)
	{
		kept[*nkept].priority = p;
		kept[*nkept].tuple = ExecCopySlotMinimalTuple(slot);
		(*nkept)++;
		return;
	}
	for (int i = 1; i < *nkept; i++)
		if (kept[i].priority > kept[worst].priority)
			worst = i;
	if (p < kept[worst].priority)
	{
		pfree(kept[worst].tuple);
		kept[worst].priority = p;
		kept[worst].tuple = ExecCopySlotMinimalTuple(slot);
	}
}

typedef struct GroupSums
{
	int64	   *count;			/* per call */
	int128	   *sum;
	int64		units;
} GroupSums;

/* one output row: the keys, and each call's state from the sums */
static void
put_group(DistRun *dr, Tuplestorestate *out, TupleDesc outdesc, Datum *keys, bool *keynulls,
		  int ngroups, GroupSums *g)
{
	Datum	   *values = palloc(sizeof(Datum) * outdesc->natts);
	bool	   *nulls = palloc0(sizeof(bool) * outdesc->natts);

	for (int j = 0; j < ngroups; j++)
	{
		values[j] = keys[j];
		nulls[j] = keynulls[j];
	}
	for (int i = 0; i < dr->ncalls; i++)
	{
		const DpRelease *r = dr->units[i];
		DpDistState *st = dp_dist_state_new(CurrentMemoryContext, r->call.kind, dr->nonce,
											r->fingerprint);

		if (i == dr->select)
			st->count = g->units;
		else
		{
			st->count = g->count[i];
			st->sum = g->sum[i];
		}
		values[ngroups + i] = PointerGetDatum(st);
	}
	tuplestore_putvalues(out, outdesc, values, nulls);
}

/*
 * The rows of the inner statement of a DP statement over privacy units
 * (unit, keys..., the exact state of each call for the unit's rows in the
 * group, combined over the shards by Citus) into the rows dist_run returns
 * (keys..., the state of each call, the number of units for the private
 * selection): each unit's rows are sorted together, it keeps at most k
 * groups (keep_row), each contribution is bounded (bound_contribution),
 * and the bounded contributions are added per group, sorted by the keys.
 * Each unit is bounded once, from all its rows, wherever Citus found them:
 * on the unit's one shard when the unit is the distribution column, on
 * several otherwise (doc/citus.md, "Citus").
 */
Tuplestorestate *
dp_dist_bound_units(DistRun *dr, Query *inner, TupleDesc rawdesc, Tuplestorestate *raw,
					TupleDesc outdesc)
{
	int			ngroups = outdesc->natts - dr->ncalls;
	int			nstates = rawdesc->natts - 1 - ngroups;
	SortGroupClause *unit_gc = linitial_node(SortGroupClause, inner->groupClause);
	Oid			unit_coll = exprCollation((Node *) linitial_node(TargetEntry, inner->targetList)->expr);
	bool		nulls_first = false;
	FmgrInfo	unit_eq;
	FmgrInfo   *key_eq = palloc(sizeof(FmgrInfo) * Max(ngroups, 1));
	Oid		   *key_coll = palloc(sizeof(Oid) * Max(ngroups, 1));
	Tuplesortstate *byunit;
	Tuplesortstate *bygroup = NULL;
	TupleTableSlot *rslot = MakeSingleTupleTableSlot(rawdesc, &TTSOpsMinimalTuple);
	TupleTableSlot *oslot = MakeSingleTupleTableSlot(outdesc, &TTSOpsMinimalTuple);
	Tuplestorestate *out = tuplestore_begin_heap(false, false, work_mem);
	UnitRow    *kept = palloc(sizeof(UnitRow) * dr->unit_groups);
	int			nkept = 0;
	Datum		prev_unit = (Datum) 0;
	bool		have_unit = false;
	MinimalTuple last_row = NULL;
	GroupSums	g;

	if (nstates != dr->ncalls - (dr->select >= 0 ? 1 : 0) || nstates < 1 ||
		list_length(inner->groupClause) != ngroups + 1)
		dp_dist_bad_inner();
	fmgr_info(get_opcode(unit_gc->eqop), &unit_eq);
	g.count = palloc0(sizeof(int64) * dr->ncalls);
	g.sum = palloc0(sizeof(int128) * dr->ncalls);
	g.units = 0;

	for (int j = 0; j < ngroups; j++)
	{
		SortGroupClause *gc = list_nth_node(SortGroupClause, inner->groupClause, j + 1);

		key_coll[j] = exprCollation((Node *) list_nth_node(TargetEntry, inner->targetList, j + 1)->expr);
		fmgr_info(get_opcode(gc->eqop), &key_eq[j]);
	}

	/* the bounded rows, sorted by the keys (no sort without GROUP BY) */
	if (ngroups > 0)
	{
		AttrNumber *attnums = palloc(sizeof(AttrNumber) * ngroups);
		Oid		   *sortops = palloc(sizeof(Oid) * ngroups);
		bool	   *nullsfirst = palloc(sizeof(bool) * ngroups);

		for (int j = 0; j < ngroups; j++)
		{
			SortGroupClause *gc = list_nth_node(SortGroupClause, inner->groupClause, j + 1);

			attnums[j] = j + 1;
			sortops[j] = gc->sortop;
			nullsfirst[j] = gc->nulls_first;
		}
		bygroup = tuplesort_begin_heap(outdesc, ngroups, attnums, sortops, key_coll, nullsfirst,
									   work_mem, NULL, TUPLESORT_NONE);
	}

	/*
	 * The rows sorted by unit, then keys, their states checked: the rows of
	 * a unit are together, and two rows of one unit and group (which
	 * Citus's GROUP BY never returns) would be found side by side.
	 */
	{
		AttrNumber *attnums = palloc(sizeof(AttrNumber) * (ngroups + 1));
		Oid		   *sortops = palloc(sizeof(Oid) * (ngroups + 1));
		Oid		   *colls = palloc(sizeof(Oid) * (ngroups + 1));
		bool	   *nullsfirst = palloc(sizeof(bool) * (ngroups + 1));

		for (int j = 0; j <= ngroups; j++)
		{
			SortGroupClause *gc = list_nth_node(SortGroupClause, inner->groupClause, j);

			attnums[j] = j + 1;
			sortops[j] = gc->sortop;
			colls[j] = j == 0 ? unit_coll : key_coll[j - 1];
			nullsfirst[j] = j == 0 ? nulls_first : gc->nulls_first;
		}
		byunit = tuplesort_begin_heap(rawdesc, ngroups + 1, attnums, sortops, colls, nullsfirst,
									  work_mem, NULL, TUPLESORT_NONE);
	}
	while (tuplestore_gettupleslot(raw, true, false, rslot))
	{
		slot_getallattrs(rslot);
		if (rslot->tts_isnull[0])
			dp_dist_bad_inner();	/* the inner statement leaves out rows of no unit */
		for (int i = 0; i < nstates; i++)
			(void) dp_dist_checked_state(dr, i, rslot->tts_values[1 + ngroups + i],
										 rslot->tts_isnull[1 + ngroups + i]);
		tuplesort_puttupleslot(byunit, rslot);
	}
	tuplestore_end(raw);
	tuplesort_performsort(byunit);

	/* each unit: the groups it keeps, bounded */
	for (;;)
	{
		bool		more = tuplesort_gettupleslot(byunit, true, true, rslot, NULL);

		if (more)
			slot_getallattrs(rslot);
		if (have_unit && (!more || !keys_equal(&unit_eq, unit_coll, prev_unit, false,
											   rslot->tts_values[0], false)))
		{
			for (int n = 0; n < nkept; n++)
			{
				TupleTableSlot *kslot = MakeSingleTupleTableSlot(rawdesc, &TTSOpsMinimalTuple);

				ExecStoreMinimalTuple(kept[n].tuple, kslot, true);
				slot_getallattrs(kslot);
				ExecClearTuple(oslot);
				for (int j = 0; j < ngroups; j++)
				{
					oslot->tts_values[j] = kslot->tts_values[1 + j];
					oslot->tts_isnull[j] = kslot->tts_isnull[1 + j];
				}
				for (int i = 0; i < dr->ncalls; i++)
				{
					DpDistState *st;

					if (i == dr->select)
					{
						st = dp_dist_state_new(CurrentMemoryContext, dr->units[i]->call.kind,
											   dr->nonce, dr->units[i]->fingerprint);
						st->count = 1;	/* one unit */
					}
					else
					{
						st = dp_dist_checked_state(dr, i, kslot->tts_values[1 + ngroups + i],
													   kslot->tts_isnull[1 + ngroups + i]);
						bound_contribution(st, dr->tickets[i]);
					}
					if (bygroup == NULL)
					{
						g.count[i] += st->count;
						g.sum[i] += st->sum;
					}
					oslot->tts_values[ngroups + i] = PointerGetDatum(st);
					oslot->tts_isnull[ngroups + i] = false;
				}
				if (bygroup != NULL)
				{
					ExecStoreVirtualTuple(oslot);
					tuplesort_puttupleslot(bygroup, oslot);
				}
				else
					g.units++;
				ExecDropSingleTupleTableSlot(kslot);
			}
			nkept = 0;
			have_unit = false;
		}
		if (!more)
			break;
		if (!have_unit)
		{
			prev_unit = datumCopy(rslot->tts_values[0], TupleDescAttr(rawdesc, 0)->attbyval,
								  TupleDescAttr(rawdesc, 0)->attlen);
			have_unit = true;
		}
		else
		{
			/* the unit's previous row (sorted by keys): another group */
			bool		same = true;
			TupleTableSlot *pslot = MakeSingleTupleTableSlot(rawdesc, &TTSOpsMinimalTuple);

			ExecStoreMinimalTuple(last_row, pslot, false);
			slot_getallattrs(pslot);
			for (int j = 0; same && j < ngroups; j++)
				same = keys_equal(&key_eq[j], key_coll[j], pslot->tts_values[1 + j],
								  pslot->tts_isnull[1 + j], rslot->tts_values[1 + j],
								  rslot->tts_isnull[1 + j]);
			ExecDropSingleTupleTableSlot(pslot);
			if (same)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("a privacy unit's group came twice from the workers"),
						 errdetail("Each unit is bounded from one state per group; nothing was released.")));
		}
		if (last_row != NULL)
			pfree(last_row);
		last_row = ExecCopySlotMinimalTuple(rslot);
		keep_row(kept, &nkept, dr->unit_groups, rslot);
		CHECK_FOR_INTERRUPTS();
	}
	tuplesort_end(byunit);

	if (bygroup == NULL)
	{
		/* without GROUP BY, one group, released whatever its units */
		put_group(dr, out, outdesc, NULL, NULL, 0, &g);
		return out;
	}

	/* each group: the sum of its units' bounded contributions */
	tuplesort_performsort(bygroup);
	{
		Datum	   *keys = palloc(sizeof(Datum) * ngroups);
		bool	   *keynulls = palloc(sizeof(bool) * ngroups);
		bool		have_group = false;

		for (;;)
		{
			bool		more = tuplesort_gettupleslot(bygroup, true, true, oslot, NULL);
			bool		same = more && have_group;

			if (more)
				slot_getallattrs(oslot);
			for (int j = 0; same && j < ngroups; j++)
				same = keys_equal(&key_eq[j], key_coll[j], keys[j], keynulls[j],
								  oslot->tts_values[j], oslot->tts_isnull[j]);
			if (have_group && !same)
			{
				put_group(dr, out, outdesc, keys, keynulls, ngroups, &g);
				memset(g.count, 0, sizeof(int64) * dr->ncalls);
				memset(g.sum, 0, sizeof(int128) * dr->ncalls);
				g.units = 0;
				have_group = false;
			}
			if (!more)
				break;
			if (!have_group)
			{
				for (int j = 0; j < ngroups; j++)
				{
					Form_pg_attribute att = TupleDescAttr(outdesc, j);

					keynulls[j] = oslot->tts_isnull[j];
					keys[j] = keynulls[j] ? (Datum) 0 :
						datumCopy(oslot->tts_values[j], att->attbyval, att->attlen);
				}
				have_group = true;
			}
			for (int i = 0; i < dr->ncalls; i++)
			{
				const DpDistState *st = (const DpDistState *) DatumGetPointer(oslot->tts_values[ngroups + i]);

				if (i == dr->select)
					continue;
				g.count[i] += st->count;
				g.sum[i] += st->sum;
			}
			g.units++;
			CHECK_FOR_INTERRUPTS();
		}
	}
	tuplesort_end(bygroup);
	ExecDropSingleTupleTableSlot(rslot);
	ExecDropSingleTupleTableSlot(oslot);
	return out;
}

