/*-------------------------------------------------------------------------
 *
 * protect_settings.h
 *	  No setting reports on the execution of an untrusted role's statement
 *	  over a protected relation.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_PROTECT_SETTINGS_H
#define DP_AGG_PROTECT_SETTINGS_H

#include "nodes/plannodes.h"

extern void dp_settings_check(PlannedStmt *stmt, Oid relid);
extern int	dp_settings_force(void);
extern void dp_settings_restore(int nest_level);
extern void dp_settings_note_untrusted(void);

#endif							/* DP_AGG_PROTECT_SETTINGS_H */
