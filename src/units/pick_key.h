/*-------------------------------------------------------------------------
 *
 * pick_key.h
 *	  The keys of an execution over privacy units (of the priorities of
 *	  their groups, of their sample), fresh for each execution.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_PICK_KEY_H
#define DP_AGG_PICK_KEY_H

#include "siphash.h"

extern void dp_pick_key_init(void);
extern void dp_pick_key_renew(const void *owner);
extern void dp_pick_key_release(const void *owner);
extern void dp_pick_key_read(uint8 *key);
extern void dp_sample_key_read(uint8 *key);

#endif							/* DP_AGG_PICK_KEY_H */
