/*-------------------------------------------------------------------------
 *
 * joint.h
 *	  Joint calibration of the Gaussian releases of a statement.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_JOINT_H
#define DP_AGG_JOINT_H

#include "nodes/pg_list.h"

#include "release.h"

extern void dp_joint_calibrate(List *priced, List *releases);

#endif							/* DP_AGG_JOINT_H */
