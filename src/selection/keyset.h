/*-------------------------------------------------------------------------
 *
 * keyset.h
 *	  The key set of a public domain: its keys, carried in a plan as one
 *	  bytea constant, and the index of a row's key in it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_KEYSET_H
#define DP_AGG_KEYSET_H

#include "fmgr.h"

/*
 * Most keys of one key set: an index is an int4, and each key costs the
 * aggregation one group.
 */
#define DP_KEYSET_MAX_KEYS 10000000

/* one column of a key set */
typedef struct DpKeysetColumn
{
	Oid			type;
	int32		typmod;
	Oid			collation;
} DpKeysetColumn;

/* an opened key set: its keys decoded, and a hash table of them */
typedef struct DpKeyset DpKeyset;

/* building a key set at planning: columns, then tuples of datums */
typedef struct DpKeysetBuilder DpKeysetBuilder;

extern DpKeysetBuilder *dp_keyset_begin(int ncols, int nhashed, const DpKeysetColumn *cols);
extern void dp_keyset_add(DpKeysetBuilder *b, const Datum *values, const bool *nulls);
extern int	dp_keyset_count(const DpKeysetBuilder *b);
extern bytea *dp_keyset_finish(DpKeysetBuilder *b, int *duplicate);
extern bool dp_keyset_type_ok(Oid type, Oid collation);

extern DpKeyset *dp_keyset_open(bytea *ks, MemoryContext cxt);
extern int	dp_keyset_header_keys(bytea *ks);
extern int	dp_keyset_size(const DpKeyset *ks);
extern int	dp_keyset_columns(const DpKeyset *ks);
extern int	dp_keyset_hashed(const DpKeyset *ks);
extern const DpKeysetColumn *dp_keyset_column(const DpKeyset *ks, int col);
extern int	dp_keyset_lookup(const DpKeyset *ks, const Datum *values, const bool *nulls);
extern Datum dp_keyset_value(const DpKeyset *ks, int index, int col, bool *isnull);

extern void dp_keyset_register(const void *datum, DpKeyset *ks, MemoryContext cxt);

#endif							/* DP_AGG_KEYSET_H */
