/*-------------------------------------------------------------------------
 *
 * pld_release.c
 *	  The privacy loss distribution of one kind of release: its exact
 *	  delta curve (removal and addition, under Poisson sampling too) and
 *	  its pessimistic discretization on a grid ("connect the dots").
 *
 * The mathematics, with its references, is in pld.c's head comment
 * (Release kinds, Discretization); pld.c composes the distributions made
 * here.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "calibrate.h"
#include "pld_release.h"

/* delta at the top grid point of a release, sent to +inf */
#define PLD_TAIL 1e-30
/*
 * every delta is evaluated at its argument lowered by a relative
 * PLD_ARG_MARGIN: a delta curve decreases, so this overstates it by far more
 * than the rounding of its evaluation (a few ulps).  (A relative margin on
 * the values instead would bend the symmetric curves: see kind_omega.)
 */
#define PLD_ARG_MARGIN 1e-12
/* largest |loss| on a grid: exp() of it is finite */
#define PLD_MAX_LOSS 600.0

/* ---------- delta of one release ---------- */

/*
 * delta(eps) of the discrete Laplace of scale b, sensitivity d (units),
 * eps >= 0: the set {X <= c} for the largest integer c below (d - b eps)/2
 * (the loss is d/b for x <= 0, (d - 2x)/b between 0 and d).  With
 * r = e^(-1/b), P[X <= c] = 1 - r^(c+1)/(1+r), P[X <= c - d] =
 * r^(d-c)/(1+r).  Each set's value is a lower bound of the supremum, so
 * the neighbours of c are tried too (c is computed in floating point).
 */
static double
laplace_delta(double b, double d, double eps)
{
	double		r = exp(-1.0 / b);
	double		c0;
	double		best = 0;

	if (eps >= d / b)
		return 0;
	c0 = ceil((d - b * eps) / 2) - 1;
	for (double c = c0 - 1; c <= c0 + 1; c++)
	{
		double		v;

		if (c < 0 || c > d - 1)
			continue;
		v = (-expm1(eps - (d - c) / b) + r * -expm1(-c / b)) / (1 + r);
		best = Max(best, v);
	}
	return best;
}

/*
 * delta(eps) of randomized response at e0, eps >= 0: the pair (p, 1 - p),
 * (1 - p, p) with p = e^e0 / (1 + e^e0) has H_x = p - x (1 - p) for
 * 1 <= x <= e^e0, 0 beyond.  Every e0-DP mechanism is dominated by it
 * (Kairouz, Oh & Viswanath 2015, Theorem 2.1), report noisy max too.
 */
static double
rr_delta(double e0, double eps)
{
	if (eps >= e0)
		return 0;
	return (expm1(e0) - expm1(eps)) / (1 + exp(e0));
}

/* delta of the base mechanism (A, B) at s >= 0, an upper bound */
static double
base_delta_pos(const DpPldKind *k, double s)
{
	double		d;

	s = Max(s - PLD_ARG_MARGIN * (1 + s), 0);
	dp_work_step();
	if (k->mechanism == DP_PLD_LAPLACE)
		d = laplace_delta(k->scale, k->sens, s);
	else if (k->mechanism == DP_PLD_RR)
		d = rr_delta(k->scale, s);
	else
		d = dp_discrete_gaussian_delta(k->scale, s, k->sens);
	return Min(d, 1.0);
}

/*
 * 1 - x (1 - d), rounded up, for x = e^s, s < 0, and d an upper bound of a
 * delta at -s: the curve below 0 (H_x(P||Q) = 1 - x + x H_{1/x}(Q||P)).
 * Written as one product, so that it stays linear in x (margins on 1 - x
 * would bend the curve).
 */
static double
mirror_delta(double s, double d)
{
	double		x = nextafter(exp(s), 0);
	double		y = -dp_add_up(-1.0, d); /* 1 - d, rounded down */

	return Min(1.0, dp_add_up(1.0, -dp_mul_down(x, Max(y, 0))));
}

/* H_{e^s}(A||B) at any s: for s < 0, from H_{e^-s}(B||A), symmetric noise */
static double
base_delta(const DpPldKind *k, double s)
{
	if (s >= 0)
		return base_delta_pos(k, s);
	return mirror_delta(s, base_delta_pos(k, -s));
}

/* the neighbours: the row removed (the release's P has it) or added */
#define PLD_REMOVE 0
#define PLD_ADD 1

/* delta(eps), eps >= 0, of one release for one direction of neighbours */
static double
release_delta(const DpPldKind *k, double eps, int dir)
{
	double		q = k->rate;
	double		g;

	if (q >= 1)
		return base_delta(k, eps);
	if (dir == PLD_REMOVE)
		return Min(q * base_delta(k, log1p(expm1(eps) / q)), 1.0);
	g = -expm1(eps + log1p(-q));
	if (g <= 0)
		return 0;
	return Min(g * base_delta(k, eps + log(q) - log(g)), 1.0);
}

/*
 * Connect the dots on eps >= 0 for one direction: the masses w[j] at j h,
 * j = 1..J, of the PLD whose curve interpolates the (convexified) U_j, in
 * x = e^eps, with u[0] = u0; returns U_J (the mass at +inf).
 */
static double
ctd_positive(const DpPldKind *k, double h, int J, int dir, double u0, double *w)
{
	double	   *u = palloc(sizeof(double) * (J + 1));
	double	   *x = palloc(sizeof(double) * (J + 1));
	double	   *s = palloc(sizeof(double) * (J + 1));
	double		inf;

	for (int j = 0; j <= J; j++)
	{
		u[j] = j == 0 ? u0 : release_delta(k, j * h, dir);
		x[j] = exp(j * h);
	}
	/* convex in x, from the top: s[j] is the slope from point j to j + 1 */
	s[J] = 0;
	for (int j = J - 1; j >= 0; j--)
	{
		double		dx = x[j] * expm1(h);

		s[j] = (u[j + 1] - u[j]) / dx;
		if (s[j] > s[j + 1])
		{
			u[j] = u[j + 1] - s[j + 1] * dx;
			s[j] = s[j + 1];
		}
	}
	w[0] = 0;
	for (int j = 1; j <= J; j++)
		w[j] = Max(x[j] * (s[j] - s[j - 1]), 0);
	inf = u[J];
	pfree(u);
	pfree(x);
	pfree(s);
	return inf;
}

/* ---------- connect the dots ---------- */

/*
 * The discrete PLD of one release for one direction of neighbours, on the
 * grid of step h, untilted (omega[j + J] at loss j h, j = -J..J); false if
 * it needs too many bins.
 *
 * Only curves at eps >= 0 are evaluated.  The losses above 0 are the
 * connected dots of this direction's curve; those below 0 are the mirror
 * of the reverse direction's: a pair (P, Q) has omega_{P||Q}(-l) =
 * e^-l omega_{Q||P}(l), and the reverse of remove is add.  The pair
 * (P', Q') so built is genuine (the mass left goes to loss 0) and
 * dominates both ways: above 0 by the interpolation, below 0 by
 * H_x(P||Q) = 1 - x + x H_{1/x}(Q||P) and the interpolation of the
 * reverse curve.  (The masses below 0 are never computed from slopes of a
 * curve close to 1 - x, whose differences would be lost to rounding.)
 * Both curves start from the same U_0: H_1 is the total variation
 * distance, the same both ways.  Unsampled releases are symmetric: both
 * directions are the same.
 */
bool
dp_pld_kind_omega(const DpPldKind *k, double h, int dir, double **omega_out, int *J_out,
		   double *inf)
{
	int			J = 1;
	int			lo,
				hi;
	double	   *wpos,
			   *wneg,
			   *omega;
	double		rest,
				u0;

	/* the first grid point with both deltas <= PLD_TAIL: doubling, then bisection */
	while (Max(release_delta(k, J * h, PLD_REMOVE), release_delta(k, J * h, PLD_ADD)) > PLD_TAIL)
	{
		if (J >= PLD_MAX_BINS / 4 || 2.0 * J * h > PLD_MAX_LOSS)
			return false;
		J *= 2;
	}
	lo = J / 2;
	hi = J;
	while (hi - lo > 1)
	{
		int			mid = lo + (hi - lo) / 2;

		if (Max(release_delta(k, mid * h, PLD_REMOVE), release_delta(k, mid * h, PLD_ADD)) > PLD_TAIL)
			lo = mid;
		else
			hi = mid;
	}
	J = hi;
	wpos = palloc(sizeof(double) * (J + 1));
	wneg = palloc(sizeof(double) * (J + 1));
	omega = palloc0(sizeof(double) * (2 * J + 1));
	u0 = Max(release_delta(k, 0, PLD_REMOVE), release_delta(k, 0, PLD_ADD));
	*inf = ctd_positive(k, h, J, dir, u0, wpos);
	if (k->rate >= 1)
		memcpy(wneg, wpos, sizeof(double) * (J + 1));
	else
		(void) ctd_positive(k, h, J, 1 - dir, u0, wneg);
	rest = 1 - *inf;
	for (int j = J; j >= 1; j--)
	{
		omega[J + j] = wpos[j];
		omega[J - j] = wneg[j] * exp(-j * h);
		rest -= omega[J + j] + omega[J - j];
	}
	/* loss 0 takes what is left */
	if (rest < -1e-12)
		elog(ERROR, "dp_agg: a discretized privacy loss distribution has mass 1 + %g", -rest);
	omega[J] = Max(rest, 0);
	pfree(wpos);
	pfree(wneg);
	*omega_out = omega;
	*J_out = J;
	return true;
}

/* the variance of the finite losses of omega */
double
dp_pld_omega_variance(const double *omega, int J, double h)
{
	double		m = 0,
				m2 = 0,
				tot = 0;

	for (int j = -J; j <= J; j++)
	{
		tot += omega[j + J];
		m += omega[j + J] * j * h;
		m2 += omega[j + J] * (j * h) * (j * h);
	}
	m /= tot;
	return Max(m2 / tot - m * m, 0);
}
