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
#include "key_list.h"

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

/*
 * The levels of the statement being planned, shared with the rewrites
 * that group by the domain's index (domain_group.c) and add its rows
 * (domain_rows.c)
 */
/* a DP query level with GROUP BY */
typedef struct DpDomainLevel
{
	Query	   *q;
	DpKeyList  *list;			/* its key list (key_list.c), or NULL */
	int		   *list_col;		/* each list column's key set column, or -1 */
	bool		public;
	DpDomain	domain;
	List	   *consumed;		/* the WHERE conjuncts the domain replaces */
	FuncExpr   *gi;				/* domain_index(...) of the keys */
	bool		applied;
} DpDomainLevel;

typedef struct DpDomainContext
{
	List	   *levels;			/* DpDomainLevel * */
} DpDomainContext;

typedef void (*DpDomainLevelFn) (Query *q);

/*
 * Replace, outside the level's aggregates, every expression equal to one
 * of keys by its replacement.
 */
typedef struct DpDomainReplace
{
	List	   *from;
	List	   *to;
} DpDomainReplace;

extern DpDomainContext *dp_domain_current;
extern DpDomainLevel *dp_domain_find_level(Query *q);
extern void dp_domain_walk_levels(Query *q, DpDomainLevelFn fn);
extern List *dp_domain_conjuncts(Node *quals);
extern bool dp_domain_row_source(Query *q, bool below, Index *rti);
extern Node *dp_domain_replace_mutator(Node *node, DpDomainReplace *r);

extern void *dp_domain_begin(void);
extern void dp_domain_end(void *saved);
extern void dp_domain_prepare(Query *query);
extern void dp_domain_resolve(Query *query);
extern const DpDomain *dp_domain_of_level(Query *level);
extern bool dp_domain_level_public(Query *level);
extern Aggref *dp_domain_public_call(int nkeys);

#endif							/* DP_AGG_PUBLIC_DOMAIN_H */
