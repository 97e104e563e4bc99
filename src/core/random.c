/*-------------------------------------------------------------------------
 *
 * random.c
 *	  Uniform random bits for the noise samplers, from OpenSSL's DRBG.
 *
 * This is the only source of randomness of every sampler (dist_token.c uses
 * OpenSSL for HMAC only).  There is no fallback: if OpenSSL cannot
 * deliver, the caller gets an ERROR (ERRCODE_INTERNAL_ERROR, with OpenSSL's
 * reason from dp_openssl_error, which the other users of OpenSSL report
 * their failures with too) and nothing is released.  There is no seed, and
 * nothing here can be influenced from SQL.
 *
 * Bytes are drawn with RAND_priv_bytes() (the DRBG instance OpenSSL keeps for
 * secret values) into a small per-process buffer, so that a release that
 * needs a few dozen words does not pay a library call for each.  Every byte
 * handed out is wiped from the buffer at once, and the buffer is discarded
 * whenever the process id (MyProcPid, set at every process start) changes,
 * so that a forked child never reuses its parent's bytes.  Nothing is drawn
 * before the first release of a backend, in particular nothing in the
 * postmaster.
 *
 * The samplers' small draws (a sign, a Bernoulli(1/k) trial, an integer
 * below a small n) take only the bits they need, from a word of the buffer
 * kept in a pool of unused bits (dp_random_bits): a sample of noise, drawn
 * for every group of a GROUP BY, then takes a few words instead of one per
 * draw.  Uniform bits are uniform bits: every draw keeps its exact
 * distribution.  The pool is wiped as the buffer is (bits handed out are
 * shifted out, and it is discarded with the buffer).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <openssl/err.h>
#include <openssl/rand.h>

#include "miscadmin.h"

#include "random.h"

#define DP_RANDOM_BUFSIZE 4096

static unsigned char rand_buf[DP_RANDOM_BUFSIZE];
static size_t rand_pos = DP_RANDOM_BUFSIZE;	/* empty */
static pid_t rand_pid = 0;

/* unused uniform bits (random.h): the low count bits of bits, the rest 0 */
DpBitPool	dp_bit_pool = {0, 0, 0};

/*
 * OpenSSL's reason for its first queued error, for the detail of an ERROR
 * (ERRCODE_INTERNAL_ERROR: a library that fails is not the user's doing);
 * the queue is cleared so that a later failure reports its own reason.
 */
const char *
dp_openssl_error(void)
{
	unsigned long e = ERR_get_error();
	const char *reason = e ? ERR_reason_error_string(e) : NULL;
	char		buf[256];

	ERR_clear_error();
	if (e == 0)
		return "no error was queued";
	if (reason != NULL)
		return pstrdup(reason);
	ERR_error_string_n(e, buf, sizeof(buf));
	return pstrdup(buf);
}

/*
 * Refill the buffer from OpenSSL; ERROR if it fails.
 */
static void
refill(void)
{
	if (RAND_priv_bytes(rand_buf, DP_RANDOM_BUFSIZE) != 1)
	{
		const char *why = dp_openssl_error();

		explicit_bzero(rand_buf, sizeof(rand_buf));
		rand_pos = DP_RANDOM_BUFSIZE;
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not obtain random bytes from OpenSSL"),
				 errdetail("RAND_priv_bytes failed: %s.", why),
				 errhint("Nothing was released.")));
	}
	rand_pos = 0;
	rand_pid = MyProcPid;
}

/*
 * Copy len uniform random bytes into buf.
 */
void
dp_random_fill(void *buf, size_t len)
{
	unsigned char *out = (unsigned char *) buf;

	if (rand_pid != MyProcPid)
		dp_random_discard();

	while (len > 0)
	{
		size_t		n;

		if (rand_pos >= DP_RANDOM_BUFSIZE)
			refill();
		n = Min(len, DP_RANDOM_BUFSIZE - rand_pos);
		memcpy(out, rand_buf + rand_pos, n);
		explicit_bzero(rand_buf + rand_pos, n);
		rand_pos += n;
		out += n;
		len -= n;
	}
}

/*
 * Forget any buffered bytes (also used after fork).
 */
void
dp_random_discard(void)
{
	explicit_bzero(rand_buf, sizeof(rand_buf));
	rand_pos = DP_RANDOM_BUFSIZE;
	explicit_bzero(&dp_bit_pool, sizeof(dp_bit_pool));
	rand_pid = MyProcPid;
}

uint64
dp_random_u64(void)
{
	uint64		r;

	/*
	 * The samplers draw words one at a time: take them straight from the
	 * buffer while it has one.  (A plain memset suffices to wipe the
	 * buffer: it is static, so the stores cannot be elided.)
	 */
	if (likely(rand_pid == MyProcPid && rand_pos <= DP_RANDOM_BUFSIZE - sizeof(r)))
	{
		memcpy(&r, rand_buf + rand_pos, sizeof(r));
		memset(rand_buf + rand_pos, 0, sizeof(r));
		rand_pos += sizeof(r);
		return r;
	}
	dp_random_fill(&r, sizeof(r));
	return r;
}

/*
 * dp_random_bits' other cases (random.h): 64 bits, a pool with fewer than n
 * bits, or a pool not filled by this process (discarded: it then has none).
 * The pool gives the bits it has, and a new word the rest: every bit is
 * handed out once.
 */
uint64
dp_random_bits_slow(int n)
{
	uint64		r;
	uint64		w;
	int			have;
	int			need;

	Assert(n >= 1 && n <= 64);
	if (n == 64)
		return dp_random_u64();
	if (unlikely(rand_pid != MyProcPid))
		dp_random_discard();	/* a parent's buffer and pool are not ours */
	else if (unlikely(dp_bit_pool.pid != MyProcPid))
	{
		/* this process's first bits: its buffer stays, a parent's pool goes */
		explicit_bzero(&dp_bit_pool, sizeof(dp_bit_pool));
	}
	have = dp_bit_pool.count;
	Assert(have < n);			/* else the fast path had taken them */
	/* the pool's `have` bits low, then `need` bits of a new word */
	need = n - have;
	w = dp_random_u64();
	r = dp_bit_pool.bits | ((w & ((UINT64CONST(1) << need) - 1)) << have);
	dp_bit_pool.bits = w >> need;
	dp_bit_pool.count = 64 - need;
	dp_bit_pool.pid = MyProcPid;
	return r;
}

