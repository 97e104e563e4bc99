/*-------------------------------------------------------------------------
 *
 * random.h
 *	  The extension's only source of randomness: uniform bits from OpenSSL.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_RANDOM_H
#define DP_AGG_RANDOM_H

#include "c.h"

extern uint64 dp_random_u64(void);
extern uint64 dp_random_bits(int n);
extern uint64 dp_random_below(uint64 n);
extern void dp_random_fill(void *buf, size_t len);
extern void dp_random_discard(void);
extern const char *dp_openssl_error(void);

#endif							/* DP_AGG_RANDOM_H */
