/*-------------------------------------------------------------------------
 *
 * dist_token.h
 *	  Signed fragment specifications of DP statements on Citus tables.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_DIST_TOKEN_H
#define DP_AGG_DIST_TOKEN_H

#include "datatype/timestamp.h"

#define DP_NONCE_LEN 16
#define DP_SUBKEY_LEN 32		/* HMAC-SHA-256 output, bytes */
#define DP_FRAGMENT_FP_LEN 64	/* SHA-256 output, hex digits (dist_fingerprint.c) */

/*
 * What a worker needs to accumulate one DP aggregate call of a statement
 * the coordinator priced and charged: the statement's nonce, when it was
 * signed and when the signature expires, the distributed table it may read, and the
 * accumulation units (the call's kind and value type, the row grid 2^k,
 * the bounds as text of the value type, and the units' fingerprint), and
 * the fingerprint of the fragment it may be part of (its table, sampling,
 * WHERE, GROUP BY and aggregate arguments; dist_fingerprint.c).
 */
typedef struct DpFragmentSpec
{
	uint8		nonce[DP_NONCE_LEN];
	TimestampTz signed_at;		/* when the coordinator signed it */
	TimestampTz expiry;
	char	   *nspname;		/* schema and name of the distributed table */
	char	   *relname;
	int			kind;			/* DpAggKind */
	int			vclass;			/* DpValueClass */
	Oid			valtype;		/* a built-in type, InvalidOid for counts */
	int			grid_exp;
	int			sq_shift;		/* dp_var, dp_stddev: the squares' (release.c) */
	char	   *lower;			/* "" for counts */
	char	   *upper;
	uint64		fingerprint;
	char	   *placements;		/* "shard:group;" of every placement */
	char	   *fragment;		/* dist_fingerprint.c: what the fragment computes */
} DpFragmentSpec;

extern char *dp_fragment_sign(const DpFragmentSpec *spec);
extern void dp_fragment_verify(const char *text, DpFragmentSpec *spec);
extern void dp_cluster_subkey(const char *label, unsigned char *out);

#endif							/* DP_AGG_DIST_TOKEN_H */
