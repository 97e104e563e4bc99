/*-------------------------------------------------------------------------
 *
 * budget_store.h
 *	  The rows of dp_agg.budget and dp_agg.cap, read, locked and written
 *	  without SPI; the groups a role belongs to.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_BUDGET_STORE_H
#define DP_AGG_BUDGET_STORE_H

#include "access/htup.h"
#include "datatype/timestamp.h"
#include "executor/tuptable.h"
#include "nodes/execnodes.h"
#include "nodes/pg_list.h"
#include "storage/itemptr.h"
#include "utils/relcache.h"

#include "admission.h"
#include "budget_window.h"
#include "calibrate.h"
#include "pld_state.h"

typedef enum DpBudgetKind
{
	DP_BUDGET_ROLE = 0,			/* a role's own */
	DP_BUDGET_GROUP,			/* a group's, shared by its members */
	DP_BUDGET_RELATION			/* a protected relation's */
} DpBudgetKind;

/* one row of dp_agg.budget, decoded */
typedef struct DpBudgetRow
{
	int64		id;				/* 0: SQL objects older than 0.4 */
	DpBudgetKind kind;
	Oid			subject;		/* the role, or the relation */
	DpBudget	b;				/* limits; amounts, curve and selections of
								 * the window of window_start */
	bool		pld_accounting; /* accounting 'pld' */
	DpPldState	pld;			/* releases by kind (of that window) */
	DpPldFrontier frontier;
	bool		has_window;
	Interval	window_length;
	char		time_zone[DP_WINDOW_TZ_MAX + 1];
	bool		has_window_start;
	TimestampTz window_start;
	bool		has_lifetime;	/* lifetime limits set */
	double		lifetime_epsilon_limit;
	double		lifetime_delta_limit;
	double		lifetime_epsilon_spent; /* basic sums since the last reset */
	double		lifetime_delta_spent;
	/* where it was read (dp_budget_store_write) */
	ItemPointerData tid;
	HeapTuple	tuple;
	Oid			fetched_index;	/* the unique index and key it was found by */
	Oid			fetched_key;
} DpBudgetRow;

/* the caps that apply to a role: the smallest of its own and its groups' */
typedef enum DpCapKind
{
	DP_CAP_STATEMENT_EPSILON = 0,
	DP_CAP_STATEMENT_DELTA,
	DP_CAP_CALL_EPSILON,
	DP_CAP_CALL_DELTA,
	DP_CAP_KINDS
} DpCapKind;

typedef struct DpCaps
{
	bool		set[DP_CAP_KINDS];
	double		cap[DP_CAP_KINDS];
	Oid			role[DP_CAP_KINDS];	/* the role whose cap it is */
} DpCaps;

/* dp_agg.budget, open for a batch of reads (and, for_update, writes) */
typedef struct DpBudgetStore
{
	Relation	rel;
	bool		for_update;
	bool		direct_writes;	/* false: UPDATE through SPI (triggers, rules) */
	Oid			role_index;		/* unique indexes on role, on relation */
	Oid			relation_index;
	TupleTableSlot *slot;
	TupleTableSlot *write_slot;
	EState	   *estate;			/* kept from batch to batch (write_cache.c) */
	EState	   *index_estate;	/* of this batch's index entries */
	ResultRelInfo *rri;
	AttrNumber *att;			/* of each column the store knows, 0: absent */
} DpBudgetStore;

extern void dp_budget_store_init(void);
extern uint64 dp_budget_catalog_generation(void);
extern bool dp_budget_store_open(DpBudgetStore *s, bool for_update);
extern void dp_budget_store_close(DpBudgetStore *s);
extern bool dp_budget_store_policies(const DpBudgetStore *s);
extern bool dp_budget_store_has(const DpBudgetStore *s, const char *column);
extern bool dp_budget_fetch_role(DpBudgetStore *s, Oid role, DpBudgetRow *row);
extern bool dp_budget_fetch_relation(DpBudgetStore *s, Oid relation, DpBudgetRow *row);
extern void dp_budget_store_write(DpBudgetStore *s, const DpBudgetRow *row, bool frontier);
extern void dp_budget_store_forget(void);
extern void dp_budget_roll_window(DpBudgetRow *row, TimestampTz at, TimestampTz *end);

extern List *dp_role_groups(Oid role);
extern void dp_caps_of(Oid role, List *groups, DpCaps *caps);

#endif							/* DP_AGG_BUDGET_STORE_H */
