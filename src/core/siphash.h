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

/* a key read for dp_siphash24_word */
typedef struct DpSipKey
{
	uint64		k0,
				k1;
} DpSipKey;

extern uint64 dp_siphash24(const uint8 *key, const uint8 *msg, size_t len);
extern void dp_siphash_key(const uint8 *key, DpSipKey *k);
extern uint64 dp_siphash24_word(const DpSipKey *k, uint64 m);
extern void dp_siphash24_word_batch(const DpSipKey *k, const uint64 *m, uint64 *out, int n);
extern uint64 dp_siphash24_words(const DpSipKey *k, const uint64 *m, int n);
extern bool dp_siphash_self_check(void);

#endif							/* DP_AGG_SIPHASH_H */
