/*-------------------------------------------------------------------------
 *
 * dist_token.c
 *	  Signed fragment specifications of DP statements on Citus tables.
 *
 * The coordinator of a Citus cluster prices and charges a DP statement,
 * then sends each worker a fragment that computes exact partial states.  A
 * worker must compute such states only for fragments of statements the
 * coordinator charged: an analyst who can connect to a worker (Citus's own
 * marker of internal connections is an application_name anyone can set)
 * would otherwise read exact counts.  So every DP call of a fragment
 * carries its specification as text, signed with HMAC-SHA-256 (Bellare,
 * Canetti & Krawczyk 1996; RFC 2104) under a key the nodes share and no
 * analyst can read: a file named by dp_agg.cluster_key_file (a
 * superuser-only setting), readable by the server's operating-system user
 * only.  The signature covers the statement's random nonce, an expiry
 * (dp_agg.fragment_ttl after signing), the distributed table, the
 * accumulation units and the node group of every shard, so a token cannot
 * be moved to another table, to other units, to a shard's new node after a
 * shard move, or used after it expired; dist_replay.c makes it single use
 * per shard.  It also covers the fingerprint of the fragment
 * (dist_fingerprint.c: table, sampling, WHERE, GROUP BY, aggregate
 * arguments), which a worker computes again from the shard query it
 * receives, so a fragment with another filter, grouping, sampling or
 * argument is refused.  Tags are compared in constant time.  The signature
 * does not name the shards the statement reads (Citus prunes shards after
 * the coordinator signed), so the unchanged fragment sent on a shard its
 * statement did not read is accepted: the states it yields are sealed
 * (dist_state.c), which makes them useless to whoever is not a node.
 *
 * The signature also covers when it was signed, so that a node refuses
 * fragments signed before it last started (dist_replay.c: its memory of
 * the fragments it has run does not survive a restart).
 *
 * Text form, fields separated by ':' (names and bounds hex-encoded):
 *   dpf3:nonce:signed_at:expiry:schema:table:kind:vclass:valtype:k:shift:lower:upper:fingerprint:placements:fragment:tag
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <inttypes.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "access/xact.h"
#include "lib/stringinfo.h"
#include "storage/fd.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "dist_token.h"
#include "guc.h"
#include "random.h"

#define DP_TOKEN_VERSION "dpf3"
#define DP_TOKEN_FIELDS 17
#define DP_TAG_LEN 32			/* SHA-256 output, bytes */
#define DP_KEY_MIN_LEN 32		/* 256 bits, the tag's strength */
#define DP_KEY_MAX_LEN 1024

/* a macro, so that the detail is a literal format string where it is raised */
#define token_error(...) \
	ereport(ERROR, \
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE), \
			 errmsg("invalid signature of a fragment of a DP statement"), \
			 errdetail(__VA_ARGS__), \
			 errhint("Only the coordinator of the Citus cluster sends fragments with DP aggregates.")))

/*
 * The key is read from its file at most once per transaction and wiped
 * when the transaction ends: a statement that seals or opens hundreds of
 * partial states (dist_state.c) reads it once, and a new key (written on
 * every node, dp_agg.cluster_key_file reloaded) is used from the next
 * transaction on.  The key derived for sealing is kept as long.
 */
static unsigned char cached_key[DP_KEY_MAX_LEN];
static int	cached_len = 0;
static unsigned char cached_subkey[DP_SUBKEY_LEN];
static char cached_label[64] = "";
static bool wipe_registered = false;

static void
wipe_keys(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_PRE_COMMIT || event == XACT_EVENT_PARALLEL_PRE_COMMIT ||
		event == XACT_EVENT_PRE_PREPARE)
		return;
	explicit_bzero(cached_key, sizeof(cached_key));
	explicit_bzero(cached_subkey, sizeof(cached_subkey));
	cached_len = 0;
	cached_label[0] = '\0';
}

static int	read_key_file(unsigned char *key);

/* the shared key (see above); ERROR if unusable */
static const unsigned char *
read_key(int *len)
{
	if (cached_len == 0)
	{
		if (!wipe_registered)
		{
			RegisterXactCallback(wipe_keys, NULL);
			wipe_registered = true;
		}
		cached_label[0] = '\0';
		cached_len = read_key_file(cached_key);
	}
	*len = cached_len;
	return cached_key;
}

/* the shared key, read from dp_agg.cluster_key_file; ERROR if unusable */
static int
read_key_file(unsigned char *key)
{
	FILE	   *f;
	size_t		n;

	if (dp_guc_cluster_key_file == NULL || dp_guc_cluster_key_file[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("dp_agg.cluster_key_file is not set"),
				 errdetail("DP statements on Citus tables need a key the nodes share to sign their fragments."),
				 errhint("Put the same random key of at least %d bytes in a file on every node, readable by the server only, and name it in dp_agg.cluster_key_file.",
						 DP_KEY_MIN_LEN)));
	f = AllocateFile(dp_guc_cluster_key_file, PG_BINARY_R);
	if (f == NULL)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open dp_agg.cluster_key_file \"%s\": %m",
						dp_guc_cluster_key_file)));
	n = fread(key, 1, DP_KEY_MAX_LEN, f);
	FreeFile(f);
	if (n < DP_KEY_MIN_LEN)
	{
		explicit_bzero(key, DP_KEY_MAX_LEN);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("dp_agg.cluster_key_file holds a key shorter than %d bytes", DP_KEY_MIN_LEN),
				 errdetail("A short key would make fragment signatures guessable."),
				 errhint("Write at least %d random bytes into the file on every node.", DP_KEY_MIN_LEN)));
	}
	return (int) n;
}

/* the HMAC-SHA-256 tag of msg, as 64 hex digits */
static char *
tag_of(const char *msg)
{
	unsigned char tag[DP_TAG_LEN];
	unsigned int taglen = 0;
	int			keylen;
	const unsigned char *key = read_key(&keylen);
	char	   *hex = palloc(2 * DP_TAG_LEN + 1);
	unsigned char *ok;

	ok = HMAC(EVP_sha256(), key, keylen, (const unsigned char *) msg, strlen(msg), tag, &taglen);
	if (ok == NULL || taglen != DP_TAG_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not compute the signature of a fragment of a DP statement"),
				 errdetail("OpenSSL's HMAC failed: %s.", dp_openssl_error()),
				 errhint("Nothing was released.")));
	hex_encode((const char *) tag, DP_TAG_LEN, hex);
	hex[2 * DP_TAG_LEN] = '\0';
	return hex;
}

/*
 * A key for another use of the cluster key, separated by its label:
 * HMAC-SHA-256(cluster key, label), the HMAC-based derivation of HKDF's
 * expand step with one block (Krawczyk 2010, Section 3.2; RFC 5869).
 */
void
dp_cluster_subkey(const char *label, unsigned char *out)
{
	unsigned int len = 0;
	int			keylen;
	const unsigned char *key = read_key(&keylen);
	unsigned char *ok;

	if (cached_len > 0 && strcmp(cached_label, label) == 0)
	{
		memcpy(out, cached_subkey, DP_SUBKEY_LEN);
		return;
	}
	ok = HMAC(EVP_sha256(), key, keylen, (const unsigned char *) label, strlen(label), out, &len);
	if (ok != NULL && len == DP_SUBKEY_LEN && cached_len > 0 && strlen(label) < sizeof(cached_label))
	{
		memcpy(cached_subkey, out, DP_SUBKEY_LEN);
		strcpy(cached_label, label);
	}
	if (ok == NULL || len != DP_SUBKEY_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not derive a key from dp_agg.cluster_key_file"),
				 errdetail("OpenSSL's HMAC failed: %s.", dp_openssl_error()),
				 errhint("Nothing was released.")));
}

static char *
hex_of(const char *s)
{
	size_t		n = strlen(s);
	char	   *hex = palloc(2 * n + 1);

	hex_encode(s, n, hex);
	hex[2 * n] = '\0';
	return hex;
}

static char *
unhex(const char *hex)
{
	size_t		n = strlen(hex);
	char	   *s;

	if (n % 2 != 0)
		token_error("A field is not hexadecimal.");
	s = palloc(n / 2 + 1);
	hex_decode(hex, n, s);
	s[n / 2] = '\0';
	if (strlen(s) != n / 2)
		token_error("A field holds a zero byte.");
	return s;
}

/*
 * The signed text of a specification; its expiry is set here, now plus
 * dp_agg.fragment_ttl.
 */
char *
dp_fragment_sign(const DpFragmentSpec *spec)
{
	StringInfoData s;
	char		nonce[2 * DP_NONCE_LEN + 1];
	TimestampTz now = GetCurrentTimestamp();
	TimestampTz expiry = TimestampTzPlusMilliseconds(now, (int64) dp_guc_fragment_ttl_s * 1000);

	hex_encode((const char *) spec->nonce, DP_NONCE_LEN, nonce);
	nonce[2 * DP_NONCE_LEN] = '\0';
	initStringInfo(&s);
	Assert(strlen(spec->fragment) == DP_FRAGMENT_FP_LEN);
	appendStringInfo(&s, "%s:%s:" INT64_FORMAT ":" INT64_FORMAT ":%s:%s:%d:%d:%u:%d:%d:%s:%s:%016" PRIx64 ":%s:%s",
					 DP_TOKEN_VERSION, nonce, (int64) now, (int64) expiry,
					 hex_of(spec->nspname), hex_of(spec->relname),
					 spec->kind, spec->vclass, spec->valtype, spec->grid_exp, spec->sq_shift,
					 hex_of(spec->lower), hex_of(spec->upper), spec->fingerprint,
					 hex_of(spec->placements), spec->fragment);
	appendStringInfo(&s, ":%s", tag_of(s.data));
	return s.data;
}

/*
 * Check the signature and the expiry of a specification and parse it;
 * ERROR if either fails.
 */
void
dp_fragment_verify(const char *text, DpFragmentSpec *spec)
{
	char	   *copy = pstrdup(text);
	char	   *field[DP_TOKEN_FIELDS];
	char	   *p = copy;
	char	   *tag;
	int			n = 0;

	for (n = 0; n < DP_TOKEN_FIELDS; n++)
	{
		field[n] = p;
		p = strchr(p, ':');
		if (p == NULL)
			break;
		*p++ = '\0';
	}
	if (n != DP_TOKEN_FIELDS - 1 || strcmp(field[0], DP_TOKEN_VERSION) != 0 ||
		strlen(field[DP_TOKEN_FIELDS - 1]) != 2 * DP_TAG_LEN)
		token_error("The specification is malformed.");

	/* the tag covers everything before its own ':' */
	tag = tag_of(pnstrdup(text, field[DP_TOKEN_FIELDS - 1] - 1 - copy));
	if (CRYPTO_memcmp(tag, field[DP_TOKEN_FIELDS - 1], 2 * DP_TAG_LEN) != 0)
		token_error("The signature does not match the key of this node.");

	memset(spec, 0, sizeof(*spec));
	if (strlen(field[1]) != 2 * DP_NONCE_LEN)
		token_error("The nonce is malformed.");
	hex_decode(field[1], 2 * DP_NONCE_LEN, (char *) spec->nonce);
	spec->signed_at = (TimestampTz) strtoi64(field[2], NULL, 10);
	spec->expiry = (TimestampTz) strtoi64(field[3], NULL, 10);
	spec->nspname = unhex(field[4]);
	spec->relname = unhex(field[5]);
	spec->kind = atoi(field[6]);
	spec->vclass = atoi(field[7]);
	spec->valtype = (Oid) strtoul(field[8], NULL, 10);
	spec->grid_exp = atoi(field[9]);
	spec->sq_shift = atoi(field[10]);
	spec->lower = unhex(field[11]);
	spec->upper = unhex(field[12]);
	spec->fingerprint = strtou64(field[13], NULL, 16);
	spec->placements = unhex(field[14]);
	if (strlen(field[15]) != DP_FRAGMENT_FP_LEN)
		token_error("The fingerprint of the fragment is malformed.");
	spec->fragment = pstrdup(field[15]);

	if (GetCurrentTimestamp() > spec->expiry)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("the signature of a fragment of a DP statement has expired"),
				 errdetail("It was valid until %s.", timestamptz_to_str(spec->expiry)),
				 errhint("A fragment is valid for dp_agg.fragment_ttl after the coordinator signed it; the clocks of the nodes must agree.")));
}
