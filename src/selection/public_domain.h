/*-------------------------------------------------------------------------
 *
 * public_domain.h
 *	  Public domains of GROUP BY keys: every key released, no selection.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_PUBLIC_DOMAIN_H
#define DP_AGG_PUBLIC_DOMAIN_H

#include "nodes/parsenodes.h"

#include "catalog.h"

/* the public domain of a query level's GROUP BY keys */
typedef struct DpDomain
{
	Const	   *keyset;			/* the keys (keyset.c), a bytea constant */
	int			nkeys;
	List	   *keys;			/* the GROUP BY expressions, hashed, in order */
	List	   *coltypes;		/* each column's type: a Const NULL; the keys,
								 * then a key list's other columns */
	const char *source;			/* where the keys come from, for the ledger */
} DpDomain;

extern void *dp_domain_begin(void);
extern void dp_domain_end(void *saved);
extern void dp_domain_prepare(Query *query);
extern void dp_domain_resolve(Query *query);
extern const DpDomain *dp_domain_of_level(Query *level);
extern void dp_domain_apply(Query *query);
extern void dp_domain_inject(Query *query);
extern bool dp_domain_level_public(Query *level);
extern Node *dp_domain_row_filter(Query *level);
extern Aggref *dp_domain_public_call(int nkeys);

#endif							/* DP_AGG_PUBLIC_DOMAIN_H */
