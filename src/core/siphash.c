/*-------------------------------------------------------------------------
 *
 * siphash.c
 *	  SipHash-2-4 (Aumasson & Bernstein 2012, "SipHash: a fast short-input
 *	  PRF", INDOCRYPT 2012), written from the paper's specification.
 *
 * The priorities of privacy units (unit_pick.c) are SipHash-2-4 values
 * under a key drawn fresh for each execution: a pseudorandom function, so
 * the priorities of the distinct inputs of one execution behave as
 * independent uniform 64-bit numbers (the paper, section 1 and the
 * security claims of section 4).  Section 2 of the paper: the key is two
 * little-endian 64-bit words k0, k1; the message is read as little-endian
 * 64-bit words, the last one holding the remaining bytes and, in its top
 * byte, the length modulo 256; each word takes c = 2 rounds
 * (compression), and d = 4 rounds follow (finalization).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "siphash.h"

/* the initialization constants of the paper, section 2 */
#define SIP_INIT0 UINT64CONST(0x736f6d6570736575)
#define SIP_INIT1 UINT64CONST(0x646f72616e646f6d)
#define SIP_INIT2 UINT64CONST(0x6c7967656e657261)
#define SIP_INIT3 UINT64CONST(0x7465646279746573)

/* SipHash-c-d with c = 2, d = 4 */
#define SIP_C_ROUNDS 2
#define SIP_D_ROUNDS 4

#define ROTL64(x, b) (((x) << (b)) | ((x) >> (64 - (b))))

typedef struct SipState
{
	uint64		v0,
				v1,
				v2,
				v3;
} SipState;

/* SipRound, figure 2.1 of the paper */
static inline void
sip_round(SipState *s)
{
	s->v0 += s->v1;
	s->v1 = ROTL64(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = ROTL64(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = ROTL64(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = ROTL64(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = ROTL64(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = ROTL64(s->v2, 32);
}

/* n bytes (n <= 8) as a little-endian word */
static inline uint64
read_le(const uint8 *p, size_t n)
{
	uint64		w = 0;

	for (size_t i = 0; i < n; i++)
		w |= (uint64) p[i] << (8 * i);
	return w;
}

static inline void
compress(SipState *s, uint64 m)
{
	s->v3 ^= m;
	for (int i = 0; i < SIP_C_ROUNDS; i++)
		sip_round(s);
	s->v0 ^= m;
}

/* SipHash-2-4 of len bytes under a 16-byte key */
uint64
dp_siphash24(const uint8 *key, const uint8 *msg, size_t len)
{
	uint64		k0 = read_le(key, 8);
	uint64		k1 = read_le(key + 8, 8);
	SipState	s = {k0 ^ SIP_INIT0, k1 ^ SIP_INIT1, k0 ^ SIP_INIT2, k1 ^ SIP_INIT3};
	size_t		full = len - len % 8;

	for (size_t i = 0; i < full; i += 8)
		compress(&s, read_le(msg + i, 8));
	compress(&s, read_le(msg + full, len - full) | ((uint64) (len & 0xff) << 56));
	s.v2 ^= 0xff;
	for (int i = 0; i < SIP_D_ROUNDS; i++)
		sip_round(&s);
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

/* a key read once, for the SipHash-2-4 of many one-word messages */
void
dp_siphash_key(const uint8 *key, DpSipKey *k)
{
	k->k0 = read_le(key, 8);
	k->k1 = read_le(key + 8, 8);
}

/*
 * SipHash-2-4 of the 8-byte message whose little-endian reading is m: the
 * same as dp_siphash24 of those bytes (checked by dp_siphash_self_check),
 * one compression of m and one of the length block.
 */
static inline uint64
sip_word(const DpSipKey *k, uint64 m)
{
	SipState	s = {k->k0 ^ SIP_INIT0, k->k1 ^ SIP_INIT1, k->k0 ^ SIP_INIT2, k->k1 ^ SIP_INIT3};

	compress(&s, m);
	compress(&s, (uint64) 8 << 56);
	s.v2 ^= 0xff;
	for (int i = 0; i < SIP_D_ROUNDS; i++)
		sip_round(&s);
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

uint64
dp_siphash24_word(const DpSipKey *k, uint64 m)
{
	return sip_word(k, m);
}

/*
 * SipHash-2-4 of the 8 n bytes that are the little-endian words m[0..n-1]:
 * the same as dp_siphash24 of those bytes (checked by
 * dp_siphash_self_check), without writing them out.
 */
uint64
dp_siphash24_words(const DpSipKey *k, const uint64 *m, int n)
{
	SipState	s = {k->k0 ^ SIP_INIT0, k->k1 ^ SIP_INIT1, k->k0 ^ SIP_INIT2, k->k1 ^ SIP_INIT3};

	for (int i = 0; i < n; i++)
		compress(&s, m[i]);
	compress(&s, (uint64) ((8 * n) & 0xff) << 56);
	s.v2 ^= 0xff;
	for (int i = 0; i < SIP_D_ROUNDS; i++)
		sip_round(&s);
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

/*
 * dp_siphash24_word of n words m[i] into out[i] (out may be m), in a loop
 * without a branch: the processor overlaps the rounds of successive words
 * (each word's rounds are a chain of dependent additions and rotations).
 */
void
dp_siphash24_word_batch(const DpSipKey *k, const uint64 *m, uint64 *out, int n)
{
	for (int i = 0; i < n; i++)
		out[i] = sip_word(k, m[i]);
}

/*
 * The test vector of the paper, appendix A: key 00 01 .. 0f, message
 * 00 01 .. 0e (15 bytes), SipHash-2-4 = 0xa129ca6149be45e5; and the
 * one-word variant against the general one on the vector's first 8 bytes,
 * the variant of words on 0, 1 and 2 words, and the batch of one-word
 * hashes on 7 words.
 */
#define SIP_VECTOR_LEN 15
#define SIP_VECTOR_OUT UINT64CONST(0xa129ca6149be45e5)

bool
dp_siphash_self_check(void)
{
	uint8		key[DP_SIPHASH_KEY_LEN];
	uint8		msg[SIP_VECTOR_LEN];
	uint8		words_msg[2 * 8];
	uint64		words[2];
	DpSipKey	k;

	for (int i = 0; i < DP_SIPHASH_KEY_LEN; i++)
		key[i] = (uint8) i;
	for (int i = 0; i < SIP_VECTOR_LEN; i++)
		msg[i] = (uint8) i;
	dp_siphash_key(key, &k);
	for (int i = 0; i < 2 * 8; i++)
		words_msg[i] = (uint8) (0xa5 ^ (i * 37));
	for (int i = 0; i < 2; i++)
		words[i] = read_le(words_msg + 8 * i, 8);
	if (dp_siphash24(key, msg, SIP_VECTOR_LEN) != SIP_VECTOR_OUT ||
		dp_siphash24_word(&k, read_le(msg, 8)) != dp_siphash24(key, msg, 8) ||
		dp_siphash24_words(&k, words, 1) != dp_siphash24(key, words_msg, 8) ||
		dp_siphash24_words(&k, words, 2) != dp_siphash24(key, words_msg, 16) ||
		dp_siphash24_words(&k, words, 0) != dp_siphash24(key, words_msg, 0))
		return false;
	/* the hashes of a batch are those of each word */
	{
		uint64		batch[7];
		uint64		out[7];

		for (int i = 0; i < 7; i++)
			batch[i] = read_le(msg + i, 8);
		dp_siphash24_word_batch(&k, batch, out, 7);
		for (int i = 0; i < 7; i++)
			if (out[i] != dp_siphash24(key, msg + i, 8))
				return false;
	}
	return true;
}
