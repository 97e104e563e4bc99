/*-------------------------------------------------------------------------
 *
 * pick_key.c
 *	  The keys of an execution over privacy units: of the priorities that
 *	  choose each unit's group, and of the sample of units; drawn from the
 *	  CSPRNG for each execution, passed to parallel workers.
 *
 * doc/units-and-groups.md, "Privacy units".  The fused path of the rewrite
 * (privacy_unit.c, k = 1) gives each (unit, group) the priority SipHash-2-4
 * under this key (unit_pick.c); a unit's group is the one of smallest
 * priority.  The leader draws a 128-bit key from random.c when a statement
 * over privacy units starts (hooks.c) and sets the internal setting
 * dp_agg.unit_pick_key to it; PostgreSQL copies the leader's settings into
 * each parallel worker when Gather starts it, so leader and workers give
 * every (unit, group) the same priority.  The functions read the key once
 * per execution.
 *
 * The key lives as long as the statement that drew it: when it ends
 * (ExecutorEnd), the setting goes back to the key of a statement that
 * drew one and is still running (a cursor, or a statement around it that
 * called a function running this one), or to the empty string; when a
 * transaction or subtransaction aborts, PostgreSQL restores the setting
 * as it was when it began, and the statements that drew keys in it are
 * forgotten (the callbacks below).  So no key outlives its statement, and
 * dp_agg_internal.unit_priority evaluated after it (or in the parallel workers of
 * a later statement, which copy the leader's settings) finds none and
 * fails closed.  A parallel worker's copy ends with the worker, at the
 * end of its part of the statement.
 *
 * Privacy does not depend on the key's secrecy: for every fixed key, a
 * unit's choice is a function of that unit's own rows only, so the
 * bounded-contribution argument holds conditionally on the key; the key
 * is drawn independently of the data, so the mechanism with the key
 * published is differentially private too.  A superuser who SHOWs or SETs
 * the setting learns or chooses nothing that weakens the guarantee (a SET
 * is overwritten when the next execution starts); the freshness of the
 * key only makes the choice uniform and independent across executions.
 * Untrusted roles cannot set it (PGC_SUSET) nor read it
 * (GUC_SUPERUSER_ONLY).
 *
 * The key of the sample of units (unit_sample.c: TABLESAMPLE on a relation
 * with a privacy unit keeps a unit when SipHash-2-4 of its hash under this
 * key falls below the rate) is drawn with it, independently, and lives in
 * dp_agg.unit_sample_key the same way.  Its secrecy does matter:
 * amplification by subsampling holds because whether a unit is in the
 * sample is unknown to whoever sees the release.  So no one can read it:
 * its show hook (guc.c) hides it from SHOW, current_setting and
 * pg_settings, for superusers too; PostgreSQL passes the value itself to
 * parallel workers.  Only superusers can set it, and an execution sets its
 * own before reading a row (a superuser who sets it from inside the
 * statement chooses its sample, as a superuser can read the rows anyway).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "guc.h"
#include "pick_key.h"
#include "random.h"

/* a running statement that drew keys, newest first */
typedef struct KeyOwner
{
	const void *owner;			/* its QueryDesc */
	SubTransactionId subid;		/* the subtransaction it started in */
	char		hex[DP_PICK_KEY_HEX_LEN + 1];	/* of the priorities */
	char		sample_hex[DP_PICK_KEY_HEX_LEN + 1];	/* of the sample */
	struct KeyOwner *next;
} KeyOwner;

static KeyOwner *owners = NULL;

/* the keys of a statement (or none) become the settings' values */
static void
set_keys(KeyOwner *o)
{
	(void) set_config_option(DP_PICK_KEY_SETTING, o != NULL ? o->hex : "", PGC_SUSET,
							 PGC_S_SESSION, GUC_ACTION_SET, true, ERROR, false);
	(void) set_config_option(DP_SAMPLE_KEY_SETTING, o != NULL ? o->sample_hex : "", PGC_SUSET,
							 PGC_S_SESSION, GUC_ACTION_SET, true, ERROR, false);
}

static void
forget(KeyOwner **p)
{
	KeyOwner   *o = *p;

	*p = o->next;
	explicit_bzero(o->hex, sizeof(o->hex));
	explicit_bzero(o->sample_hex, sizeof(o->sample_hex));
	pfree(o);
}

/* a fresh key from the CSPRNG, in hexadecimal */
static void
draw_key(char *hex)
{
	uint8		key[DP_SIPHASH_KEY_LEN];

	StaticAssertStmt(DP_PICK_KEY_HEX_LEN == 2 * DP_SIPHASH_KEY_LEN,
					 "two hexadecimal digits per key byte");
	dp_random_fill(key, sizeof(key));
	for (int i = 0; i < DP_SIPHASH_KEY_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", key[i]);
	explicit_bzero(key, sizeof(key));
}

/*
 * Draw fresh keys for the statement owner and make them the values of
 * dp_agg.unit_pick_key and dp_agg.unit_sample_key until
 * dp_pick_key_release(owner).
 */
void
dp_pick_key_renew(const void *owner)
{
	KeyOwner   *o = MemoryContextAllocZero(TopMemoryContext, sizeof(KeyOwner));

	draw_key(o->hex);
	draw_key(o->sample_hex);
	o->owner = owner;
	o->subid = GetCurrentSubTransactionId();
	o->next = owners;
	owners = o;
	set_keys(o);
}

/*
 * The statement owner ends: its keys leave the settings, for the keys of
 * the newest statement still running that drew some, or none.
 */
void
dp_pick_key_release(const void *owner)
{
	KeyOwner  **p;

	for (p = &owners; *p != NULL; p = &(*p)->next)
	{
		if ((*p)->owner == owner)
		{
			forget(p);
			set_keys(owners);
			return;
		}
	}
}

/*
 * A transaction ends: its statements have ended, or abort with it (and
 * PostgreSQL then restores the setting as the transaction found it).  A
 * statement still running at commit (none should be: portals end theirs
 * before) takes its key with it.
 */
static void
pick_key_xact(XactEvent event, void *arg)
{
	bool		commit = event == XACT_EVENT_PRE_COMMIT || event == XACT_EVENT_PRE_PREPARE;

	if (owners == NULL)
		return;
	if (!commit && event != XACT_EVENT_ABORT && event != XACT_EVENT_PARALLEL_ABORT)
		return;
	while (owners != NULL)
		forget(&owners);
	if (commit)
		set_keys(NULL);
}

/* A subtransaction aborts: forget the statements that started in it. */
static void
pick_key_subxact(SubXactEvent event, SubTransactionId mySubid,
				 SubTransactionId parentSubid, void *arg)
{
	KeyOwner  **p = &owners;

	if (event != SUBXACT_EVENT_ABORT_SUB)
		return;
	while (*p != NULL)
	{
		if ((*p)->subid >= mySubid)
			forget(p);
		else
			p = &(*p)->next;
	}
}

void
dp_pick_key_init(void)
{
	RegisterXactCallback(pick_key_xact, NULL);
	RegisterSubXactCallback(pick_key_subxact, NULL);
}

static int
hex_digit(char c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

/* The key of the priorities of this execution; an error if there is none (fail closed). */
void
dp_pick_key_read(uint8 *key)
{
	const char *hex = dp_guc_unit_pick_key;

	/* the check hook admits only the empty string or the full key */
	if (hex == NULL || strlen(hex) != DP_PICK_KEY_HEX_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("no key for the priorities of privacy units"),
				 errdetail("The key is drawn when a DP statement over privacy units starts."),
				 errhint("dp_agg_internal.unit_priority runs only in statements rewritten by dp_agg.")));
	for (int i = 0; i < DP_SIPHASH_KEY_LEN; i++)
		key[i] = (uint8) (hex_digit(hex[2 * i]) * 16 + hex_digit(hex[2 * i + 1]));
}

/* The key of the sample of units of this execution; an error if there is none. */
void
dp_sample_key_read(uint8 *key)
{
	const char *hex = dp_guc_unit_sample_key;

	if (hex == NULL || strlen(hex) != DP_PICK_KEY_HEX_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("no key for the sample of privacy units"),
				 errdetail("The key is drawn when a DP statement that samples privacy units starts."),
				 errhint("dp_agg_internal.unit_sampled runs only in statements rewritten by dp_agg.")));
	for (int i = 0; i < DP_SIPHASH_KEY_LEN; i++)
		key[i] = (uint8) (hex_digit(hex[2 * i]) * 16 + hex_digit(hex[2 * i + 1]));
}
