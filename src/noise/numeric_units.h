/*-------------------------------------------------------------------------
 *
 * numeric_units.h
 *	  Round a numeric datum to a power-of-two grid without allocating.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_NUMERIC_UNITS_H
#define DP_AGG_NUMERIC_UNITS_H

/*
 * round(v 2^-k), half away from zero, saturated at +-2^62, for a finite
 * numeric datum stored in line; false (and the caller uses numeric
 * arithmetic) for anything else or when 128-bit integers do not suffice.
 */
extern bool dp_numeric_units(Datum d, int k, int64 *units);

#endif							/* DP_AGG_NUMERIC_UNITS_H */
