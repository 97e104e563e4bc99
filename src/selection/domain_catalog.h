/*-------------------------------------------------------------------------
 *
 * domain_catalog.h
 *	  Public domains declared by a DBA: the catalog dp_agg.public_domain.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_DOMAIN_CATALOG_H
#define DP_AGG_DOMAIN_CATALOG_H

#include "nodes/pg_list.h"
#include "nodes/primnodes.h"

/* a declared domain, as it applies to the rows of one relation */
typedef struct DpDeclaredDomain
{
	Oid			declared_on;	/* the relation it was declared on */
	char	   *key;			/* the key expression, as declared */
	Node	   *expr;			/* parsed over the relation read, as Var 1 */
	List	   *keys;			/* Consts of the key's type (NULL ones too) */
} DpDeclaredDomain;

extern void dp_domain_catalog_init(void);
extern bool dp_any_declared_domain(void);
extern List *dp_declared_domains(Oid relid);
extern Node *dp_domain_parse_key(Oid relid, const char *key);
extern int	dp_domain_settings_enter(void);
extern void dp_domain_settings_leave(int level);

#endif							/* DP_AGG_DOMAIN_CATALOG_H */
