/*-------------------------------------------------------------------------
 *
 * dist_state.c
 *	  dp_agg.dist_state: the partial state of a DP aggregate call that a
 *	  Citus worker sends to the coordinator.
 *
 * Citus distributes dp_agg_internal.sum(spec, value) as it distributes sum: each
 * worker sends its result, the state, as text (the type's output
 * function), and the coordinator reads it back (the input function) and
 * adds the states with dp_agg_internal.sum(dp_agg.dist_state).  The state holds
 * exact integers only, as DpAggState does (aggregates.h): the rows counted
 * and their clamped sum in units of the row grid, with the fingerprint of
 * those units and the nonce of the statement it belongs to, both checked
 * when states are combined and released.  The input function checks the
 * form of every field, so a damaged state is refused, never combined.
 *
 * Sealed: a state leaves its node only encrypted and authenticated with
 * AES-256-GCM (NIST SP 800-38D) under a key derived from the cluster key
 * (dist_token.c), with a fresh random 96-bit IV per value.  So whoever
 * receives a state without being a node of the cluster (an analyst who
 * logs in to a worker and sends a signed fragment again, unchanged, on a
 * shard its statement did not read) gets a value that tells
 * nothing about the rows but its fixed length (IND-CPA of GCM, McGrew &
 * Viega 2004, Theorem 1), and a state that was altered, forged or made
 * with another key is refused by the input function (GCM's authenticity,
 * same theorem).  Only nodes holding the cluster key read states, and on
 * the coordinator a state flows into dist_release only (dist_price.c).
 *
 * Text form: "dps1:" and, in hexadecimal, IV || ciphertext || 128-bit tag
 * of the plain form version:kind:nonce:fingerprint:serial:count:sum:sumsq:rows
 * (rows: every row of the group that reached the call, whatever its value,
 * which the private selection counts: dist_exec.c),
 * integers in hexadecimal of fixed width (the sum as a signed 128-bit
 * number), so that the length of a sealed state is the same for every
 * state and says nothing about its count or sum.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <inttypes.h>

#include <openssl/evp.h>

#include "utils/builtins.h"

#include "compat.h"
#include "dist_state.h"
#include "random.h"

PG_FUNCTION_INFO_V1(dp_dist_state_in);
PG_FUNCTION_INFO_V1(dp_dist_state_out);

#define DP_DIST_STATE_VERSION 2
#define DP_DIST_KIND_MIN_SQUARES 5	/* DP_VAR */
#define DP_DIST_KIND_MAX 6		/* DP_STDDEV; not DP_SELECT (4), counted as dp_count(*) */
#define DP_SEAL_PREFIX "dps1:"
#define DP_SEAL_LABEL "dp_agg dist_state sealing key 1"
#define DP_SEAL_IV_LEN 12		/* GCM's recommended IV (NIST SP 800-38D, 8.2) */
#define DP_SEAL_TAG_LEN 16		/* the full 128-bit GCM tag */
#define DP_SEAL_TEXT_MAX 256	/* longer than any plain form */

DpDistState *
dp_dist_state_new(MemoryContext cxt, int kind, const uint8 *nonce, uint64 fingerprint)
{
	DpDistState *st = MemoryContextAllocZero(cxt, sizeof(DpDistState));

	SET_VARSIZE(st, sizeof(DpDistState));
	st->version = DP_DIST_STATE_VERSION;
	st->kind = (uint8) kind;
	memcpy(st->nonce, nonce, DP_NONCE_LEN);
	st->fingerprint = fingerprint;
	return st;
}

DpDistState *
dp_dist_state_copy(const DpDistState *st)
{
	DpDistState *c = palloc(sizeof(DpDistState));

	memcpy(c, st, sizeof(DpDistState));
	c->release = NULL;
	return c;
}

/* a macro, so that the detail is a literal format string where it is raised */
#define bad_state(...) \
	ereport(ERROR, \
			(errcode(ERRCODE_DATA_CORRUPTED), \
			 errmsg("invalid partial state of a DP aggregate"), \
			 errdetail(__VA_ARGS__)))

static void
seal_error(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("could not seal a partial state of a DP aggregate"),
			 errdetail("OpenSSL's AES-256-GCM failed: %s.", dp_openssl_error()),
			 errhint("Nothing was released.")));
}

/* the sealed text of a plain form */
static char *
seal(const char *plain)
{
	unsigned char key[DP_SUBKEY_LEN];
	int			n = (int) strlen(plain);
	int			total = DP_SEAL_IV_LEN + n + DP_SEAL_TAG_LEN;
	unsigned char *buf = palloc(total);
	size_t		prefix = strlen(DP_SEAL_PREFIX);
	char	   *out = palloc(prefix + 2 * total + 1);
	EVP_CIPHER_CTX *ctx;
	int			len = 0;
	int			fin = 0;
	bool		ok;

	dp_random_fill(buf, DP_SEAL_IV_LEN);
	dp_cluster_subkey(DP_SEAL_LABEL, key);
	ctx = EVP_CIPHER_CTX_new();
	ok = ctx != NULL &&
		EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, buf) == 1 &&
		EVP_EncryptUpdate(ctx, buf + DP_SEAL_IV_LEN, &len, (const unsigned char *) plain, n) == 1 &&
		len == n &&
		EVP_EncryptFinal_ex(ctx, buf + DP_SEAL_IV_LEN + n, &fin) == 1 && fin == 0 &&
		EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, DP_SEAL_TAG_LEN,
							buf + DP_SEAL_IV_LEN + n) == 1;
	EVP_CIPHER_CTX_free(ctx);
	explicit_bzero(key, sizeof(key));
	if (!ok)
		seal_error();
	memcpy(out, DP_SEAL_PREFIX, prefix);
	hex_encode((const char *) buf, total, out + prefix);
	out[prefix + 2 * total] = '\0';
	return out;
}

/* the plain form of a sealed text; ERROR unless a node of this cluster sealed it */
static char *
unseal(const char *text)
{
	unsigned char key[DP_SUBKEY_LEN];
	size_t		prefix = strlen(DP_SEAL_PREFIX);
	size_t		hexlen = strlen(text) - Min(strlen(text), prefix);
	int			total = (int) (hexlen / 2);
	int			n = total - DP_SEAL_IV_LEN - DP_SEAL_TAG_LEN;
	unsigned char *buf;
	char	   *plain;
	EVP_CIPHER_CTX *ctx;
	int			len = 0;
	int			fin = 0;
	bool		ok;

	if (strncmp(text, DP_SEAL_PREFIX, prefix) != 0 || hexlen % 2 != 0 ||
		strspn(text + prefix, "0123456789abcdef") != hexlen || n < 1 || n > DP_SEAL_TEXT_MAX)
		bad_state("The text is not a sealed state.");
	buf = palloc(total);
	plain = palloc0(n + 1);
	hex_decode(text + prefix, hexlen, (char *) buf);
	dp_cluster_subkey(DP_SEAL_LABEL, key);
	ctx = EVP_CIPHER_CTX_new();
	ok = ctx != NULL &&
		EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, buf) == 1 &&
		EVP_DecryptUpdate(ctx, (unsigned char *) plain, &len, buf + DP_SEAL_IV_LEN, n) == 1 &&
		len == n &&
		EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, DP_SEAL_TAG_LEN,
							buf + DP_SEAL_IV_LEN + n) == 1 &&
		EVP_DecryptFinal_ex(ctx, (unsigned char *) plain + n, &fin) > 0 && fin == 0;
	EVP_CIPHER_CTX_free(ctx);
	explicit_bzero(key, sizeof(key));
	if (!ok)
		bad_state("The state was not sealed by a node of this cluster, or it was altered.");
	return plain;
}

Datum
dp_dist_state_in(PG_FUNCTION_ARGS)
{
	const char *text = unseal(PG_GETARG_CSTRING(0));
	unsigned int version,
				kind;
	char		nonce[2 * DP_NONCE_LEN + 1];
	uint64		fp,
				serial,
				count,
				sum_hi,
				sum_lo,
				sq_hi,
				sq_lo,
				rows;
	int			used = 0;
	DpDistState *st;

	if (sscanf(text, "%x:%x:%32[0-9a-f]:%" SCNx64 ":%" SCNx64 ":%" SCNx64 ":%" SCNx64 ".%" SCNx64
			   ":%" SCNx64 ".%" SCNx64 ":%" SCNx64 "%n",
			   &version, &kind, nonce, &fp, &serial, &count, &sum_hi, &sum_lo, &sq_hi, &sq_lo,
			   &rows, &used) != 11 ||
		text[used] != '\0')
		bad_state("The text is malformed.");
	if (version != DP_DIST_STATE_VERSION || kind > DP_DIST_KIND_MAX || kind == 4 ||
		strlen(nonce) != 2 * DP_NONCE_LEN || (int64) count < 0 || (int64) rows < 0 ||
		((sq_hi != 0 || sq_lo != 0) && kind < DP_DIST_KIND_MIN_SQUARES))
		bad_state("A field is out of range.");

	st = palloc0(sizeof(DpDistState));
	SET_VARSIZE(st, sizeof(DpDistState));
	st->version = (uint8) version;
	st->kind = (uint8) kind;
	hex_decode(nonce, 2 * DP_NONCE_LEN, (char *) st->nonce);
	st->fingerprint = fp;
	st->serial = serial;
	st->count = (int64) count;
	st->sum = (int128) (((uint128) sum_hi << 64) | sum_lo);
	st->sumsq = (int128) (((uint128) sq_hi << 64) | sq_lo);
	st->rows = (int64) rows;
	PG_RETURN_POINTER(st);
}

Datum
dp_dist_state_out(PG_FUNCTION_ARGS)
{
	DpDistState *st = (DpDistState *) PG_GETARG_POINTER(0);
	char		nonce[2 * DP_NONCE_LEN + 1];
	uint128		sum = (uint128) st->sum;
	uint128		sumsq = (uint128) st->sumsq;

	if (VARSIZE(st) != sizeof(DpDistState))
		bad_state("The value has the wrong size.");
	hex_encode((const char *) st->nonce, DP_NONCE_LEN, nonce);
	nonce[2 * DP_NONCE_LEN] = '\0';
	/* fixed widths: the ciphertext is as long as the plain form */
	PG_RETURN_CSTRING(seal(psprintf("%02x:%02x:%s:%016" PRIx64 ":%016" PRIx64 ":%016" PRIx64 ":%016" PRIx64 ".%016" PRIx64
									":%016" PRIx64 ".%016" PRIx64 ":%016" PRIx64,
									st->version, st->kind, nonce, st->fingerprint, st->serial,
									(uint64) st->count, (uint64) (sum >> 64), (uint64) sum,
									(uint64) (sumsq >> 64), (uint64) sumsq, (uint64) st->rows)));
}
