/*-------------------------------------------------------------------------
 *
 * siphash.h
 *	  SipHash-2-4, a keyed pseudorandom function of short inputs.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_SIPHASH_H
#define DP_AGG_SIPHASH_H

#include "c.h"

/* the length of a SipHash key in bytes */
#define DP_SIPHASH_KEY_LEN 16

extern uint64 dp_siphash24(const uint8 *key, const uint8 *msg, size_t len);
extern bool dp_siphash_self_check(void);

#endif							/* DP_AGG_SIPHASH_H */
