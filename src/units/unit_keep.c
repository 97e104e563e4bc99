/*-------------------------------------------------------------------------
 *
 * unit_keep.c
 *	  dp_agg_internal.unit_keep(k): level 2 of the rewrite of privacy units, the
 *	  random choice of at most k groups per unit.
 *
 * A window function over the partition of one unit (its rows of level 1,
 * one per group it contributes to, privacy_unit.c): true for k rows of the
 * partition chosen uniformly at random among its n rows (all of them when
 * n <= k), independently for each unit and each execution.  The k-subset
 * is drawn once per partition with Floyd's algorithm (Bentley & Floyd
 * 1987, "Programming pearls: a sample of brilliance", CACM 30(9)), which
 * gives every k-subset of the n rows the same probability, from the
 * extension's CSPRNG (random.c), and kept as a bitmap in the partition's
 * memory.  Which groups a unit keeps depends only on that unit's groups
 * and fresh random bits, so removing a unit changes no other unit's
 * choice (doc/units-and-groups.md, "Privacy units").
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "windowapi.h"

#include "random.h"

PG_FUNCTION_INFO_V1(dp_unit_keep);

/* the chosen rows of one partition */
typedef struct KeepState
{
	bool		chosen;			/* the bitmap below is drawn */
	uint8		bits[FLEXIBLE_ARRAY_MEMBER];
} KeepState;

#define BIT_SET(b, i) ((b)[(i) / 8] & (1 << ((i) % 8)))
#define SET_BIT(b, i) ((b)[(i) / 8] |= (uint8) (1 << ((i) % 8)))

/* Floyd's algorithm: k distinct positions of 0..n-1, uniformly */
static void
choose(KeepState *st, uint64 n, uint64 k)
{
	for (uint64 j = n - k; j < n; j++)
	{
		uint64		t = dp_random_below(j + 1);

		if (BIT_SET(st->bits, t))
			SET_BIT(st->bits, j);
		else
			SET_BIT(st->bits, t);
	}
	st->chosen = true;
}

/* dp_agg_internal.unit_keep(max_groups integer) returns boolean, a window function */
Datum
dp_unit_keep(PG_FUNCTION_ARGS)
{
	WindowObject winobj = PG_WINDOW_OBJECT();
	int64		n = WinGetPartitionRowCount(winobj);
	int64		pos = WinGetCurrentPosition(winobj);
	bool		isnull;
	int32		k = DatumGetInt32(WinGetFuncArgCurrent(winobj, 0, &isnull));
	KeepState  *st;

	if (isnull || k < 1)
		elog(ERROR, "dp_agg: unit_keep needs a positive number of groups");
	if (n <= k)
		PG_RETURN_BOOL(true);
	st = (KeepState *) WinGetPartitionLocalMemory(winobj,
												  offsetof(KeepState, bits) + (n + 7) / 8);
	if (!st->chosen)
		choose(st, (uint64) n, (uint64) k);
	PG_RETURN_BOOL(BIT_SET(st->bits, pos) != 0);
}
