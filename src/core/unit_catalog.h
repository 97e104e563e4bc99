/*-------------------------------------------------------------------------
 *
 * unit_catalog.h
 *	  The privacy units of relations, and the unit of the rows a statement
 *	  reads.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_UNIT_CATALOG_H
#define DP_AGG_UNIT_CATALOG_H

#include "access/attnum.h"

/* the privacy unit of the rows read from a relation */
typedef struct DpUnit
{
	AttrNumber	attnum;			/* the unit column, in the relation read */
	char	   *column;			/* its name */
	Oid			declared_on;	/* the relation it was set on (nearest) */
	int			max_groups;		/* the smallest max_groups_contributed */
} DpUnit;

extern void dp_unit_catalog_init(void);
extern bool dp_any_privacy_unit(void);
extern bool dp_unit_of_read(Oid relid, bool only, DpUnit *unit);

#endif							/* DP_AGG_UNIT_CATALOG_H */
