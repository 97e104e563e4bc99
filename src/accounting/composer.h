/*-------------------------------------------------------------------------
 *
 * composer.h
 *	  Compositions of privacy loss distributions in a child process that
 *	  runs only on an otherwise idle CPU (composer.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_COMPOSER_H
#define DP_COMPOSER_H

#include "pld_state.h"

extern void dp_compose_certify(double epsilon, double delta, const DpPldState *history,
							   const DpPldState *stmt, DpPldCertificate *cert);

#endif							/* DP_COMPOSER_H */
