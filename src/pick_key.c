/*-------------------------------------------------------------------------
 *
 * pick_key.c
 *	  The key of the priorities that choose each privacy unit's group:
 *	  drawn from the CSPRNG for each execution, passed to parallel workers.
 *
 * README, "Privacy units".  The fused path of the rewrite (privacy_unit.c,
 * k = 1) gives each (unit, group) the priority SipHash-2-4 under this key
 * (unit_pick.c); a unit's group is the one of smallest priority.  The
 * leader draws a 128-bit key from random.c when a statement over privacy
 * units starts (hooks.c) and sets the internal setting
 * dp_agg.unit_pick_key to it; PostgreSQL copies the leader's settings into
 * each parallel worker when Gather starts it, so leader and workers give
 * every (unit, group) the same priority.  The functions read the key once
 * per execution.
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
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/guc.h"

#include "guc.h"
#include "pick_key.h"
#include "random.h"

/* Draw a fresh key and make it the value of dp_agg.unit_pick_key. */
void
dp_pick_key_renew(void)
{
	uint8		key[DP_SIPHASH_KEY_LEN];
	char		hex[DP_PICK_KEY_HEX_LEN + 1];

	StaticAssertStmt(DP_PICK_KEY_HEX_LEN == 2 * DP_SIPHASH_KEY_LEN,
					 "two hexadecimal digits per key byte");
	dp_random_fill(key, sizeof(key));
	for (int i = 0; i < DP_SIPHASH_KEY_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", key[i]);
	explicit_bzero(key, sizeof(key));
	(void) set_config_option(DP_PICK_KEY_SETTING, hex, PGC_SUSET, PGC_S_SESSION,
							 GUC_ACTION_SET, true, ERROR, false);
	explicit_bzero(hex, sizeof(hex));
}

static int
hex_digit(char c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

/* The key of this execution; an error if there is none (fail closed). */
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
				 errhint("dp_agg.unit_priority runs only in statements rewritten by dp_agg.")));
	for (int i = 0; i < DP_SIPHASH_KEY_LEN; i++)
		key[i] = (uint8) (hex_digit(hex[2 * i]) * 16 + hex_digit(hex[2 * i + 1]));
}
