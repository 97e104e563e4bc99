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

#include "miscadmin.h"
#include "port/pg_bitutils.h"

/*
 * The pool of unused uniform bits of the samplers' small draws (random.c's
 * head comment): the low `count` bits of `bits`, the rest 0, drawn by the
 * process `pid`.  Read and written only here and in random.c: these fast
 * paths are inline because a sample of noise, drawn at every group of a
 * GROUP BY, makes a few such draws.
 */
typedef struct DpBitPool
{
	uint64		bits;
	int			count;
	int			pid;
} DpBitPool;

extern DpBitPool dp_bit_pool;

extern uint64 dp_random_u64(void);
extern uint64 dp_random_bits_slow(int n);
extern void dp_random_fill(void *buf, size_t len);
extern void dp_random_discard(void);
extern const char *dp_openssl_error(void);

/*
 * n uniform random bits, 1 <= n <= 64, as the low bits of the result.
 * Below 64, from the pool of unused bits while it has n drawn by this
 * process; else dp_random_bits_slow takes the bits left in it and the rest
 * from a new word.
 */
static inline uint64
dp_random_bits(int n)
{
	uint64		r;

	Assert(n >= 1 && n <= 64);
	if (unlikely(n == 64 || dp_bit_pool.count < n || dp_bit_pool.pid != MyProcPid))
		return dp_random_bits_slow(n);
	r = dp_bit_pool.bits & ((UINT64CONST(1) << n) - 1);
	dp_bit_pool.bits >>= n;
	dp_bit_pool.count -= n;
	return r;
}

/*
 * Uniform integer in [0, n), n >= 1, by rejection from the fewest bits
 * that cover n - 1: exact, no modulo bias.
 */
static inline uint64
dp_random_below(uint64 n)
{
	int			bits;
	uint64		r;

	Assert(n >= 1);
	if (n == 1)
		return 0;
	bits = pg_leftmost_one_pos64(n - 1) + 1;
	do
		r = dp_random_bits(bits);
	while (r >= n);
	return r;
}

#endif							/* DP_AGG_RANDOM_H */
