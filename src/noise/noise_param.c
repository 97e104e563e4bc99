/*-------------------------------------------------------------------------
 *
 * noise_param.c
 *	  From a noise scale in grid units (a double) to the exact rational
 *	  parameters of the samplers (noise.c): the one conversion used by the
 *	  aggregates and by dp_agg.noise_sample.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "noise_param.h"

/* v = m 2^e with m odd, v > 0 finite */
static void
dyadic(double v, uint64 *m, int *e)
{
	int			ex;
	double		f;

	if (!(v > 0) || !isfinite(v))
		elog(ERROR, "dp_agg: noise parameter %g is not a positive finite number", v);
	f = frexp(v, &ex);

	*m = (uint64) ldexp(f, 53);
	*e = ex - 53;
	while ((*m & 1) == 0)
	{
		*m >>= 1;
		(*e)++;
	}
}

/* the discrete Laplace parameter t/s >= b */
DpLaplaceParam
dp_laplace_param(double b)
{
	DpLaplaceParam p;
	uint64		m;
	int			e;

	dyadic(b, &m, &e);
	if (e >= 0)
	{
		p.t = m << e;
		p.s = 1;
	}
	else if (e >= -63)
	{
		p.t = m;
		p.s = UINT64CONST(1) << (-e);
	}
	else
	{
		int			sh = -e - 63;

		p.t = sh >= 64 ? 1 : (m >> sh) + ((m & ((UINT64CONST(1) << sh) - 1)) != 0);
		if (p.t == 0)
			p.t = 1;
		p.s = UINT64CONST(1) << 63;
	}
	return p;
}

/* the discrete Gaussian parameter p/q = v exactly */
DpGaussianParam
dp_gaussian_param(double v)
{
	DpGaussianParam p;
	uint64		m;
	int			e;

	dyadic(v, &m, &e);
	if (e >= 0)
	{
		p.p = (uint128) m << e;
		p.q = 1;
	}
	else
	{
		p.p = m;
		p.q = (uint128) 1 << (-e);
	}
	return p;
}
