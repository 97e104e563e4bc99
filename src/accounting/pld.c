/*-------------------------------------------------------------------------
 *
 * pld.c
 *	  Privacy loss distributions (PLDs) of dp_agg's releases: a pessimistic
 *	  discretization of each kind of release, their composition by FFT,
 *	  and the epsilon of a composition at a delta.
 *
 * Definitions.  A pair of distributions (P, Q) has the hockey-stick curve
 * delta(eps) = sup_S P(S) - e^eps Q(S).  A PLD is a distribution of losses
 * omega (under P) with delta(eps) = E[(1 - e^(eps - L))_+] + omega(+inf);
 * the PLD of a composition is the convolution of the PLDs (Meiser &
 * Mohammadi 2018, "Tight on budget?", Theorem 1; Koskela, Jalko & Honkela
 * 2020, "Computing tight differential privacy guarantees using FFT",
 * Theorem 5; Sommer, Meiser & Mohammadi 2019).  A pair (P', Q') dominates
 * (P, Q) if its curve is above at every eps; the composition of dominating
 * pairs dominates the composition (Zhu, Dong & Wang 2022, "Optimal
 * accounting of differential privacy via characteristic function",
 * Theorem 10).
 *
 * Release kinds.  dp_agg adds to a count or a sum, in grid units, a
 * discrete Laplace or discrete Gaussian noise X; neighbours shift the sum
 * by at most the sensitivity D (an integer).  Both noises are symmetric
 * and their likelihood ratio is monotone, so the worst pair is (X, X + D)
 * and delta(eps) is that of a half-line, in closed form for the Laplace
 * (laplace_delta) and as Canonne, Kamath & Steinke 2020, Theorem 7 for the
 * Gaussian (dp_discrete_gaussian_delta, never understated).  Under Poisson
 * sampling at rate q (TABLESAMPLE BERNOULLI) the remove neighbour is
 * ((1-q)A + qB, A) and the add neighbour (A, (1-q)A + qB), A = X,
 * B = X + D; their curves are, exactly (the supremum is rewritten with
 * the same optimal set):
 *	 remove: q H_{e^tau}(B||A), e^tau = (e^eps - 1 + q)/q
 *	 add:	 g H_{e^s}(A||B), g = 1 - e^eps (1-q), e^s = q e^eps / g
 * and we take the larger of the two at each eps, which is symmetric:
 * delta(-eps) = 1 - e^-eps + e^-eps delta(eps) (H_x(P||Q) = 1 - x +
 * x H_{1/x}(Q||P); add and remove are each other's reverse).
 *
 * Discretization ("connect the dots", Doroshenko, Ghazi, Kamath, Kumar &
 * Manurangsi 2022, Theorem 4.3 and section 4).  On the grid eps_j = j h,
 * |j| <= J, we evaluate upper bounds U_j of delta(eps_j) and take the PLD
 * whose curve, as a function of x = e^eps, is the piecewise-linear
 * interpolation of the U_j, continued by the chord to (x, delta) = (0, 1)
 * below the grid and constant (omega(+inf) = U_J) above it.  As
 * H_x(P||Q) is convex in x, every chord lies above the curve: the
 * discrete pair dominates, at every eps.  The masses are the jumps of the
 * slopes, omega_j = x_j (s_j - s_{j-1}); they are non-negative because
 * the U_j are made convex first (each U_j raised, if needed, onto the
 * line through the points above it: this only raises the curve).  J is
 * the first point where delta <= PLD_TAIL; the bottom point takes the
 * mass left, so omega sums to 1.  There is no drift from rounding losses
 * to the grid: the curve is exact at the grid points.
 *
 * Composition.  A PLD is kept tilted: t_i = p_i exp(lambda l_i - c),
 * l_i = i h, normalised to sum 1, with c its log-normaliser; tilting
 * commutes with convolution, and lambda (the saddle point of the target,
 * from the cumulant generating function of the kinds' PLDs) makes the
 * losses that decide delta near the target epsilon the largest entries, so that the float
 * FFT of Debian's libkissfft (single precision: kiss_fft_scalar is float)
 * is accurate where it matters.  Every convolution carries an explicit
 * error bound, in the l2 norm (e2) of the tilted vector, from Higham, "Accuracy and Stability of Numerical Algorithms",
 * 2nd ed., Theorem 24.2 (fft_error), or gamma_n for a direct product in
 * double.  delta is then bounded by the computed value plus e2 times the
 * l2 norm of its weights (pld_delta_bound), so errors only overstate it.
 *
 * Truncation.  Top bins go to +inf with their computed mass plus e2 (an
 * upper bound of the true mass: e2 bounds every entry's error): the losses
 * only grow.  Bottom bins move up to the first kept bin, which gets a
 * Chernoff bound of their true mass (truncate_pld): the losses only grow.
 * delta(eps) = E[(1 - e^(eps - L))_+] + omega(+inf) is non-decreasing in
 * L, and sums of stochastically larger independent losses are larger, so
 * the certificate is never below the composition of the dominating pairs.
 *
 * The curves of the releases and their discretization (connect the dots)
 * are in pld_release.c; this file composes them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include <kiss_fft.h>

#include "calibrate.h"
#include "pld.h"
#include "pld_release.h"

/* grid step: a power of 2 between these, about PLD_BINS_PER_SD per standard deviation */
#define PLD_MIN_STEP_LOG2 (-17)
#define PLD_MAX_STEP_LOG2 (-7)
#define PLD_BINS_PER_SD_LAPLACE 24.0
#define PLD_BINS_PER_SD_GAUSSIAN 16.0
/* largest FFT; beyond, the certificate is not available */
#define PLD_MAX_FFT_LOG2 20
/* the bulk of a vector: its entries at least this times its largest (convolve_split) */
#define PLD_BULK 1e-4
/* products of lengths below this are convolved directly, in double */
#define PLD_DIRECT_MAX_WORK 33554432.0
/* truncation: tilted mass left below the first bin; +inf mass per truncation / delta */
#define PLD_TRUNC_LOW 1e-13
#define PLD_TRUNC_HIGH 1e-7
/* one step of bounded work per this many multiply-adds */
#define PLD_OPS_PER_STEP 1024.0
/* largest tilt */
#define PLD_MAX_LAMBDA 64.0

/* unit roundoff of the FFT's scalar type and of double */
#define KISS_U ((sizeof(kiss_fft_scalar) == sizeof(float) ? FLT_EPSILON : DBL_EPSILON) / 2)
#define DBL_U (DBL_EPSILON / 2)

/* tilts of the Chernoff bounds of the lower tails (truncate_pld) */
#define PLD_CHERNOFF_THETAS 40
#define PLD_CHERNOFF_THETA0 (1.0 / 64)
#define PLD_CHERNOFF_RATIO 1.2
/* kinds composed at once: a history and a statement */
#define PLD_MAX_ALL_KINDS (2 * DP_PLD_MAX_KINDS)

/*
 * The discrete PLD of one kind of release, untilted, with log E[e^(-theta L)]
 * at the tilts theta_k = PLD_CHERNOFF_THETA0 PLD_CHERNOFF_RATIO^k.
 */
typedef struct KindPld
{
	double	   *omega;
	int			J;
	double		inf;
	double		var;			/* of its finite losses: the grid step */
	double		kneg[PLD_CHERNOFF_THETAS];
} KindPld;

typedef struct PldCtx
{
	double		h;				/* grid step */
	double		lambda;			/* tilt */
	double		eps_t;			/* target epsilon */
	double		inf_budget;		/* +inf mass one truncation may add */
	const KindPld *kinds;		/* the kinds counted in Pld.counts */
	int			nkinds;
} PldCtx;

/* a PLD on the grid: p_i = t[i] exp(c - lambda (lo + i) h), plus mass at +inf */
typedef struct Pld
{
	int64		lo;
	int			n;
	double	   *t;
	double		c;
	double		e2;				/* l2 bound of the error of t (so also a sup bound) */
	double		inf;			/* mass at +inf (an upper bound) */
	double		counts[PLD_MAX_ALL_KINDS];	/* releases of each kind of the context */
} Pld;

/* ---------- bounded work ---------- */

static void
work(double ops)
{
	for (double s = 0; s < ops; s += PLD_OPS_PER_STEP)
		dp_work_step();
}

/* the tilted PLD of one release */
static void
omega_to_pld(const double *omega, int J, double inf, int kind, const PldCtx *ctx, Pld *p)
{
	int			n = 2 * J + 1;
	double		top = -INFINITY,
				sum = 0;

	memset(p->counts, 0, sizeof(p->counts));
	p->counts[kind] = 1;
	p->lo = -J;
	p->n = n;
	p->t = palloc(sizeof(double) * n);
	for (int i = 0; i < n; i++)
		if (omega[i] > 0)
			top = Max(top, log(omega[i]) + ctx->lambda * (i - J) * ctx->h);
	for (int i = 0; i < n; i++)
	{
		p->t[i] = omega[i] > 0 ? exp(log(omega[i]) + ctx->lambda * (i - J) * ctx->h - top) : 0;
		sum += p->t[i];
	}
	for (int i = 0; i < n; i++)
		p->t[i] /= sum;
	p->c = top + log(sum);
	/* the rounding of exp, log and the sums: a few ulps of each entry (sum 1) */
	p->e2 = 16 * n * DBL_U;
	p->inf = inf;
}

/* ---------- convolution ---------- */

static kiss_fft_cfg fft_cfgs[2][PLD_MAX_FFT_LOG2 + 1];

static kiss_fft_cfg
fft_cfg(int log2n, int inverse)
{
	if (fft_cfgs[inverse][log2n] == NULL)
	{
		fft_cfgs[inverse][log2n] = kiss_fft_alloc(1 << log2n, inverse, NULL, NULL);
		if (fft_cfgs[inverse][log2n] == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory"),
					 errdetail("Failed to allocate an FFT of %d points.", 1 << log2n)));
	}
	return fft_cfgs[inverse][log2n];
}

/*
 * Error bound of z = a * b computed by FFTs of nfft points in the scalar
 * type of kissfft, after Higham, Theorem 24.2: a radix-2 FFT computed with
 * twiddles of error mu has ||y^ - y||_2 <= kappa ||y||_2, kappa =
 * L eta / (1 - L eta), L = log2 n, eta = mu + gamma_4 (sqrt 2 + mu).
 * kissfft's twiddles are cos and sin in double rounded to float
 * (mu <= 2u), and its radix-4 butterflies do the work of two radix-2
 * levels with at most 6 operations in a chain: we use gamma_6 and double
 * kappa, and add u for the inputs rounded to float.  With A = F a
 * (||A||_2 = sqrt(n) ||a||_2, ||A||_inf <= ||a||_1):
 *	 ||A^ (.) B^ - A (.) B||_2 <= dA ||b||_1 + (||a||_1 + dA) dB
 * plus the rounding of the complex products (sqrt 2 gamma_2, Higham
 * Lemma 3.5), then the inverse transform (kappa again) and the division
 * by n.  The result is a bound of the l2 norm of the error.
 */
static double
fft_error(int log2n, double a2, double b2, double sa, double sb)
{
	double		u = KISS_U;
	double		L = log2n;
	double		mu = 2 * u;
	double		g2 = 2 * u / (1 - 2 * u);
	double		g6 = 6 * u / (1 - 6 * u);
	double		eta = mu + g6 * (M_SQRT2 + mu);
	double		kappa = 2 * (L * eta / (1 - L * eta)) + u;
	double		rn = sqrt(ldexp(1.0, log2n));
	double		A2 = rn * a2,
				B2 = rn * b2;
	double		dA = kappa * A2,
				dB = kappa * B2;
	double		D = dA * sb + (sa + dA) * dB + M_SQRT2 * g2 * (A2 + dA) * (sb + dB);
	double		C2 = Min(A2 * sb, sa * B2) + D;
	double		back = (kappa * C2 + D) / rn;
	double		e2 = back * (1 + 2 * u) + u * (Min(a2 * sb, sa * b2) + back);

	return e2 * 1.01;
}

static int
ceil_log2(int n)
{
	int			l = 0;

	while ((1 << l) < n)
		l++;
	return l;
}

/* the squared l2 norm and the l1 norm of a vector */
static void
norms(const double *a, int n, double *l2sq, double *l1)
{
	*l2sq = 0;
	*l1 = 0;
	for (int i = 0; i < n; i++)
	{
		*l2sq += a[i] * a[i];
		*l1 += fabs(a[i]);
	}
}

/* the transform of a (na values, zero-padded to 2^log2n) */
static kiss_fft_cpx *
forward(const double *a, int na, int log2n)
{
	int			nfft = 1 << log2n;
	kiss_fft_cpx *in = palloc0(sizeof(kiss_fft_cpx) * nfft);
	kiss_fft_cpx *out = palloc(sizeof(kiss_fft_cpx) * nfft);

	for (int i = 0; i < na; i++)
		in[i].r = (kiss_fft_scalar) a[i];
	kiss_fft(fft_cfg(log2n, 0), in, out);
	pfree(in);
	return out;
}

/*
 * out[0 .. na+nb-2] += a1 * b1 + a2 * b2 by kissfft (a1, a2 of na values,
 * b1, b2 of nb; a2 may be NULL); the l2 error bound: fft_error of each
 * product (the inverse transform of the sum errs at most as much as the
 * two), plus the rounding of the sum of the products (u |C1| + u |C2|).
 */
static double
convolve_fft(const double *a1, const double *b1, const double *a2, const double *b2,
			 int na, int nb, double *out)
{
	int			nout = na + nb - 1;
	int			log2n = ceil_log2(nout);
	int			nfft = 1 << log2n;
	kiss_fft_cpx *fa,
			   *fb,
			   *res;
	double		err = 0;

	if (log2n > PLD_MAX_FFT_LOG2)
		elog(ERROR, "dp_agg: an FFT of 2^%d points", log2n);
	work(5.0 * nfft * log2n * (a2 ? 5 : 3));
	res = palloc0(sizeof(kiss_fft_cpx) * nfft);
	for (int pair = 0; pair < (a2 ? 2 : 1); pair++)
	{
		const double *a = pair == 0 ? a1 : a2;
		const double *b = pair == 0 ? b1 : b2;
		double		a2sq,
					sa,
					b2sq,
					sb;

		norms(a, na, &a2sq, &sa);
		norms(b, nb, &b2sq, &sb);
		fa = forward(a, na, log2n);
		fb = forward(b, nb, log2n);
		for (int i = 0; i < nfft; i++)
		{
			kiss_fft_scalar re = fa[i].r * fb[i].r - fa[i].i * fb[i].i;
			kiss_fft_scalar im = fa[i].r * fb[i].i + fa[i].i * fb[i].r;

			res[i].r += re;
			res[i].i += im;
		}
		pfree(fa);
		pfree(fb);
		err += fft_error(log2n, sqrt(a2sq) * (1 + DBL_U * na), sqrt(b2sq) * (1 + DBL_U * nb),
						 sa * (1 + DBL_U * na), sb * (1 + DBL_U * nb));
		/* the sum of the products: |C| <= ||a||_1 ||b||_1 at each of n frequencies */
		if (a2)
			err += KISS_U * sa * sb * 1.01;
	}
	fa = palloc(sizeof(kiss_fft_cpx) * nfft);
	kiss_fft(fft_cfg(log2n, 1), res, fa);
	for (int i = 0; i < nout; i++)
		out[i] += (double) fa[i].r / nfft;
	pfree(fa);
	pfree(res);
	return err;
}

/*
 * out = a * b directly in double: each sum of m products within gamma_m of
 * the sum of their absolute values, so the l2 error within
 * gamma_m ||a||_1 ||b||_2 (Young's inequality).
 */
static double
convolve_direct(const double *a, int na, const double *b, int nb, double *out)
{
	int			m = Min(na, nb) + 1;
	double		g = m * DBL_U / (1 - m * DBL_U);
	double		sa = 0,
				b2 = 0;

	work((double) na * nb);
	memset(out, 0, sizeof(double) * (na + nb - 1));
	for (int i = 0; i < na; i++)
	{
		sa += fabs(a[i]);
		for (int j = 0; j < nb; j++)
			out[i + j] += a[i] * b[j];
	}
	for (int j = 0; j < nb; j++)
		b2 += b[j] * b[j];
	return g * sa * sqrt(b2) * (1 + 8 * DBL_U);
}

/* the sum of a vector (its entries are >= 0), rounded up */
static double
vec_sum(const Pld *p)
{
	double		sum = 0;

	for (int i = 0; i < p->n; i++)
		sum += p->t[i];
	return sum * (1 + DBL_U * p->n);
}

/*
 * Move the negligible bins at both ends: the top ones to +inf, the bottom
 * ones up to the first kept bin, each with its computed value plus e2 (so
 * with at least its true mass), then normalise.
 */
static void
truncate_pld(Pld *p, const PldCtx *ctx)
{
	int			top = p->n;
	int			bottom = 0;
	double		moved = 0,
				sum = 0,
				mx = 0;

	for (int i = 0; i < p->n; i++)
		p->t[i] = Max(p->t[i], 0);	/* true masses are >= 0: this only reduces the error */

	/* top: losses above the target, while the +inf mass added is within budget */
	while (top > 1)
	{
		double		l = (p->lo + top - 1) * ctx->h;
		double		m = (p->t[top - 1] + p->e2) * exp(p->c - ctx->lambda * l);

		if (l <= ctx->eps_t || moved + m > ctx->inf_budget)
			break;
		moved += m;
		top--;
	}
	p->inf = dp_add_up(p->inf, moved * (1 + 4 * DBL_U));

	/*
	 * bottom: the largest cut whose moved mass is negligible.  The true
	 * vector is stochastically larger than the composition of the kinds'
	 * PLDs it counts (every move so far was upwards), so its mass below l
	 * is at most the Chernoff bound min over theta of exp(K(-theta) +
	 * theta l), K the cumulant generating function of that composition;
	 * moved to the cut, its tilted mass is that times exp(lambda l - c).
	 * The cut bin gets this bound (at least the true mass), the bins
	 * below (computed values with their errors) are dropped.
	 */
	{
		double		kneg[PLD_CHERNOFF_THETAS];
		int			lo_i = 0,
					hi_i = top - 1;
		double		moved_at = 0;

		for (int t = 0; t < PLD_CHERNOFF_THETAS; t++)
		{
			kneg[t] = 0;
			for (int k = 0; k < ctx->nkinds; k++)
				if (p->counts[k] > 0)
					kneg[t] += p->counts[k] * ctx->kinds[k].kneg[t];
		}
		/* the bound at bin i is increasing in i: bisection for the last below PLD_TRUNC_LOW */
		while (hi_i - lo_i > 1)
		{
			int			mid = lo_i + (hi_i - lo_i) / 2;
			double		l = (p->lo + mid) * ctx->h;
			double		b = INFINITY;
			double		theta = PLD_CHERNOFF_THETA0;

			for (int t = 0; t < PLD_CHERNOFF_THETAS; t++, theta *= PLD_CHERNOFF_RATIO)
				b = Min(b, kneg[t] + theta * l);
			b = exp(b + ctx->lambda * l - p->c);
			if (l < ctx->eps_t && b <= PLD_TRUNC_LOW)
			{
				lo_i = mid;
				moved_at = b;
			}
			else
				hi_i = mid;
		}
		if (moved_at > 0)
		{
			bottom = lo_i;
			p->t[bottom] += moved_at * (1 + 8 * DBL_U);
			memmove(p->t, p->t + bottom, sizeof(double) * (top - bottom));
			p->lo += bottom;
		}
	}
	p->n = top - bottom;

	for (int i = 0; i < p->n; i++)
	{
		sum += p->t[i];
		mx = Max(mx, p->t[i]);
	}
	if (!(sum > 0))
		elog(ERROR, "dp_agg: a privacy loss distribution lost its mass");
	for (int i = 0; i < p->n; i++)
		p->t[i] /= sum;
	p->c += log(sum);
	p->e2 = p->e2 / sum + 2 * DBL_U * mx / sum * sqrt((double) p->n);
}

/* the bins [*first, *last] of the entries at least PLD_BULK times the largest */
static void
bulk(const Pld *p, int *first, int *last)
{
	double		mx = 0;

	for (int i = 0; i < p->n; i++)
		mx = Max(mx, p->t[i]);
	*first = 0;
	while (*first < p->n - 1 && p->t[*first] < PLD_BULK * mx)
		(*first)++;
	*last = p->n - 1;
	while (*last > *first && p->t[*last] < PLD_BULK * mx)
		(*last)--;
}

/*
 * out = a * b for long vectors.  The error of an FFT grows with the l2
 * norms of its inputs, which a narrow peak makes large (the early powers
 * of a release); so when both bulks (bulk()) are narrow, their product is
 * computed directly in double and only the products involving the tails
 * (small norms) by FFT: a * b = a_bulk * b_bulk + a_tail * b +
 * a_bulk * b_tail.  Wide, smooth vectors have small norms: one FFT.
 */
static double
convolve_split(const Pld *a, const Pld *b, double *out)
{
	int			a0,
				a1,
				b0,
				b1;
	double	   *atail,
			   *abulk,
			   *btail,
			   *tmp,
				err;
	int			nba,
				nbb;

	bulk(a, &a0, &a1);
	bulk(b, &b0, &b1);
	nba = a1 - a0 + 1;
	nbb = b1 - b0 + 1;
	if ((double) nba * nbb > PLD_DIRECT_MAX_WORK)
		return convolve_fft(a->t, b->t, NULL, NULL, a->n, b->n, out);

	tmp = palloc(sizeof(double) * (nba + nbb - 1));
	err = convolve_direct(a->t + a0, nba, b->t + b0, nbb, tmp);
	for (int i = 0; i < nba + nbb - 1; i++)
		out[a0 + b0 + i] += tmp[i];
	pfree(tmp);
	atail = palloc(sizeof(double) * a->n);
	abulk = palloc0(sizeof(double) * a->n);
	btail = palloc(sizeof(double) * b->n);
	memcpy(atail, a->t, sizeof(double) * a->n);
	memset(atail + a0, 0, sizeof(double) * nba);
	memcpy(abulk + a0, a->t + a0, sizeof(double) * nba);
	memcpy(btail, b->t, sizeof(double) * b->n);
	memset(btail + b0, 0, sizeof(double) * nbb);
	err += convolve_fft(atail, b->t, abulk, btail, a->n, b->n, out);
	pfree(atail);
	pfree(abulk);
	pfree(btail);
	/* the sum of the two parts: a relative u of each entry (sum <= 1) */
	return err + 2 * DBL_U;
}

/* z = a * b; false if it would need too many bins */
static bool
convolve(const Pld *a, const Pld *b, Pld *z, const PldCtx *ctx)
{
	int			n = a->n + b->n - 1;
	double		f2,
				sa = vec_sum(a),
				sb = vec_sum(b);

	if (n > PLD_MAX_BINS)
	{
		return false;
	}
	z->t = palloc0(sizeof(double) * n);
	if ((double) a->n * b->n <= PLD_DIRECT_MAX_WORK)
		f2 = convolve_direct(a->t, a->n, b->t, b->n, z->t);
	else
		f2 = convolve_split(a, b, z->t);
	z->lo = a->lo + b->lo;
	z->n = n;
	z->c = a->c + b->c;
	for (int k = 0; k < PLD_MAX_ALL_KINDS; k++)
		z->counts[k] = a->counts[k] + b->counts[k];

	/*
	 * (t + e) * (t' + e') - t * t' = e * t' + t * e' + e * e', in l2 by
	 * Young's inequality: ||e * t'||_2 <= ||e||_2 ||t'||_1, and ||e'||_1 <=
	 * sqrt(n') ||e'||_2.
	 */
	z->e2 = f2 + a->e2 * sb + b->e2 * sa + a->e2 * b->e2 * sqrt((double) b->n);
	z->e2 *= 1 + 8 * DBL_U;

	/* 1 - (1 - inf_a)(1 - inf_b) <= inf_a + inf_b */
	z->inf = dp_add_up(a->inf, b->inf);
	truncate_pld(z, ctx);
	return true;
}

/* ---------- composition ---------- */


/* the PLD of count releases of one kind, by squaring; false if too wide */
static bool
power(const KindPld *kp, double count, const PldCtx *ctx, Pld *out, bool *have)
{
	Pld			base;
	double		m = count;

	omega_to_pld(kp->omega, kp->J, kp->inf, (int) (kp - ctx->kinds), ctx, &base);
	truncate_pld(&base, ctx);
	while (m >= 1)
	{
		if (fmod(m, 2) == 1)
		{
			if (!*have)
			{
				*out = base;
				out->t = palloc(sizeof(double) * base.n);
				memcpy(out->t, base.t, sizeof(double) * base.n);
				*have = true;
			}
			else
			{
				Pld			z;

				if (!convolve(out, &base, &z, ctx))
					return false;
				pfree(out->t);
				*out = z;
			}
		}
		m = floor(m / 2);
		if (m >= 1)
		{
			Pld			z;

			if (!convolve(&base, &base, &z, ctx))
				return false;
			pfree(base.t);
			base = z;
		}
	}
	pfree(base.t);
	return true;
}

/*
 * The upper bound of delta(eps) of a composed PLD: the computed value
 * sum_i w_i t_i with w_i = (1 - e^(eps - l_i))_+ exp(c - lambda l_i), the
 * +inf mass, and the error: |sum_i w_i err_i| <= ||w||_2 e2
 * (Cauchy-Schwarz).
 */
static double
pld_delta_bound(const Pld *p, const PldCtx *ctx, double eps)
{
	double		d = 0,
				w2 = 0;

	for (int i = p->n - 1; i >= 0; i--)
	{
		double		l = (p->lo + i) * ctx->h;
		double		w;

		if (l <= eps)
			break;
		w = -expm1(eps - l) * exp(p->c - ctx->lambda * l);
		d += p->t[i] * w;
		w2 += w * w;
	}
	return (d + sqrt(w2) * p->e2) * (1 + 8 * DBL_U * p->n) + p->inf;
}

/* smallest eps >= 0 (to 2^-40 relative) with pld_delta_bound <= delta; false if none */
static bool
pld_epsilon_of(const Pld *p, const PldCtx *ctx, double delta, double *eps)
{
	double		lo = 0,
				hi = Max((p->lo + p->n) * ctx->h, 0) + 1;

	if (pld_delta_bound(p, ctx, 0) <= delta)
	{
		*eps = 0;
		return true;
	}
	if (pld_delta_bound(p, ctx, hi) > delta)
		return false;
	for (int i = 0; i < 100 && hi - lo > hi * 1e-12; i++)
	{
		double		mid = (lo + hi) / 2;

		dp_work_step();
		if (pld_delta_bound(p, ctx, mid) <= delta)
			hi = mid;
		else
			lo = mid;
	}
	*eps = hi;
	return true;
}

/* log E[e^(-theta L)] of a kind's finite losses at the Chernoff tilts */
static void
kind_chernoff(KindPld *kp, double h)
{
	double		theta = PLD_CHERNOFF_THETA0;

	for (int t = 0; t < PLD_CHERNOFF_THETAS; t++, theta *= PLD_CHERNOFF_RATIO)
	{
		double		top = -INFINITY,
					sum = 0;

		for (int j = 0; j <= 2 * kp->J; j++)
			if (kp->omega[j] > 0)
				top = Max(top, -theta * (j - kp->J) * h);
		for (int j = 0; j <= 2 * kp->J; j++)
			sum += kp->omega[j] * exp(-theta * (j - kp->J) * h - top);
		/* rounded up: a relative 2^-40 */
		kp->kneg[t] = (top + log(sum)) + fabs(top + log(sum)) * 1e-12 + 1e-12;
	}
}

/* the discrete PLDs of the kinds of terms, on the grid of step h */
static bool
build_kinds_at(const DpPldTerm *terms, int n, double h, int dir, KindPld *kinds)
{
	for (int i = 0; i < n; i++)
	{
		kinds[i].omega = NULL;
		if (terms[i].count <= 0)
			continue;
		if (!dp_pld_kind_omega(&terms[i].kind, h, dir, &kinds[i].omega, &kinds[i].J, &kinds[i].inf))
			return false;
		kinds[i].var = dp_pld_omega_variance(kinds[i].omega, kinds[i].J, h);
		kind_chernoff(&kinds[i], h);
	}
	return true;
}

/*
 * The discrete PLDs of the kinds of terms on a grid of about
 * PLD_BINS_PER_SD steps per standard deviation of the narrowest kind's
 * loss, measured on a coarse grid first; *h is the step chosen.
 */
static bool
build_kinds(const DpPldTerm *terms, int n, int dir, KindPld *kinds, double *h)
{
	double		sd = INFINITY;
	int			e;

	*h = ldexp(1.0, PLD_MAX_STEP_LOG2);
	if (!build_kinds_at(terms, n, *h, dir, kinds))
		return false;
	for (int i = 0; i < n; i++)
		if (kinds[i].omega != NULL)
			sd = Min(sd, sqrt(kinds[i].var) /
					 (terms[i].kind.mechanism != DP_PLD_GAUSSIAN
					  ? PLD_BINS_PER_SD_LAPLACE : PLD_BINS_PER_SD_GAUSSIAN));
	if (!isfinite(sd) || sd <= 0)
		return true;
	(void) frexp(sd, &e);
	e = Max(Min(e - 1, PLD_MAX_STEP_LOG2), PLD_MIN_STEP_LOG2);
	if (e == PLD_MAX_STEP_LOG2)
		return true;
	for (int i = 0; i < n; i++)
		if (kinds[i].omega != NULL)
			pfree(kinds[i].omega);
	*h = ldexp(1.0, e);
	return build_kinds_at(terms, n, *h, dir, kinds);
}

/*
 * The cumulant generating function K(lambda) = log E[e^(lambda L)] of the
 * finite losses of the composition, and its derivative (the mean of the
 * tilted law): the saddle point of a target eps solves K'(lambda) = eps,
 * and K(lambda) - lambda eps is the log of the Chernoff bound of delta.
 */
static void
cgf(const DpPldTerm *terms, int n, const KindPld *kinds, double h, double lambda,
	double *k0, double *k1)
{
	*k0 = 0;
	*k1 = 0;
	for (int i = 0; i < n; i++)
	{
		double		top = -INFINITY,
					sum = 0,
					lsum = 0;
		int			J = kinds[i].J;

		if (kinds[i].omega == NULL)
			continue;
		for (int j = 0; j <= 2 * J; j++)
			if (kinds[i].omega[j] > 0)
				top = Max(top, lambda * (j - J) * h);
		for (int j = 0; j <= 2 * J; j++)
		{
			double		w = kinds[i].omega[j] * exp(lambda * (j - J) * h - top);

			sum += w;
			lsum += w * (j - J) * h;
		}
		*k0 += terms[i].count * (top + log(sum));
		*k1 += terms[i].count * lsum / sum;
	}
}

/* the tilt whose tilted mean is eps (bisection on the increasing K') */
static double
saddle_lambda(const DpPldTerm *terms, int n, const KindPld *kinds, double h, double eps)
{
	double		lo = 0,
				hi = PLD_MAX_LAMBDA;

	for (int i = 0; i < 40; i++)
	{
		double		mid = (lo + hi) / 2,
					k0,
					k1;

		dp_work_step();
		cgf(terms, n, kinds, h, mid, &k0, &k1);
		if (k1 < eps)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/*
 * A first guess of the epsilon at delta: the Chernoff bound
 * min over lambda of (K(lambda) - log delta) / lambda, on a grid of tilts.
 */
static double
chernoff_epsilon(const DpPldTerm *terms, int n, const KindPld *kinds, double h, double delta)
{
	double		best = INFINITY;

	for (double lambda = 1.0 / 64; lambda <= PLD_MAX_LAMBDA; lambda *= 1.125)
	{
		double		k0,
					k1;

		dp_work_step();
		cgf(terms, n, kinds, h, lambda, &k0, &k1);
		best = Min(best, (k0 - log(delta)) / lambda);
	}
	return Max(best, 0);
}

/* compose terms (their kinds built) into *out; false if too wide */
static bool
compose(const DpPldTerm *terms, int n, const KindPld *kinds, const PldCtx *ctx, Pld *out)
{
	bool		have = false;

	for (int i = 0; i < n; i++)
	{
		Pld			part;
		bool		have_part = false;

		if (kinds[i].omega == NULL)
			continue;
		if (!power(&kinds[i], terms[i].count, ctx, &part, &have_part))
			return false;
		if (!have)
		{
			*out = part;
			have = true;
		}
		else
		{
			Pld			z;

			if (!convolve(out, &part, &z, ctx))
				return false;
			pfree(out->t);
			pfree(part.t);
			*out = z;
		}
	}
	if (!have)
	{
		/* nothing released: the loss is 0 */
		out->lo = 0;
		out->n = 1;
		out->t = palloc(sizeof(double));
		out->t[0] = 1;
		out->c = 0;
		out->e2 = 0;
		out->inf = 0;
		memset(out->counts, 0, sizeof(out->counts));
	}
	return true;
}

/* ---------- the interface ---------- */

bool
dp_pld_kind_equal(const DpPldKind *a, const DpPldKind *b)
{
	return a->mechanism == b->mechanism && a->scale == b->scale &&
		a->sens == b->sens && a->rate == b->rate;
}

/*
 * Add count releases of kind to terms[0..n-1]; the new number of terms, or
 * -1 if a new kind would exceed DP_PLD_MAX_KINDS.
 */
int
dp_pld_add_term(DpPldTerm *terms, int n, const DpPldKind *kind, double count)
{
	for (int i = 0; i < n; i++)
	{
		if (dp_pld_kind_equal(&terms[i].kind, kind))
		{
			terms[i].count += count;
			return n;
		}
	}
	if (n >= DP_PLD_MAX_KINDS)
		return -1;
	terms[n].kind = *kind;
	terms[n].count = count;
	return n + 1;
}

/*
 * The certificate's epsilon at delta of the composition of terms; false if
 * it is not available (too wide a grid).  Tilted at the saddle point of
 * the Chernoff bound's epsilon, then at the first answer; both are upper
 * bounds, the smaller is returned.
 */
static bool
epsilon_dir(const DpPldTerm *terms, int n, double delta, int dir, double *epsilon)
{
	KindPld		kinds[DP_PLD_MAX_KINDS];
	double		h,
				guess;
	bool		found = false;

	Assert(n <= DP_PLD_MAX_KINDS);
	if (!build_kinds(terms, n, dir, kinds, &h))
		return false;
	guess = chernoff_epsilon(terms, n, kinds, h, delta);
	*epsilon = INFINITY;
	for (int pass = 0; pass < 2; pass++)
	{
		PldCtx		ctx = {h, saddle_lambda(terms, n, kinds, h, guess), guess,
		PLD_TRUNC_HIGH * delta, kinds, n};
		Pld			p;
		double		e;

		if (!compose(terms, n, kinds, &ctx, &p))
			return found;
		if (pld_epsilon_of(&p, &ctx, delta, &e))
		{
			found = true;
			*epsilon = Min(*epsilon, e);
			guess = e;
		}
		pfree(p.t);
	}
	return found;
}

/* the canonical order of terms: by kind, then count */
static int
term_cmp(const void *pa, const void *pb)
{
	const DpPldTerm *a = pa;
	const DpPldTerm *b = pb;

	if (a->kind.mechanism != b->kind.mechanism)
		return a->kind.mechanism < b->kind.mechanism ? -1 : 1;
	if (a->kind.scale != b->kind.scale)
		return a->kind.scale < b->kind.scale ? -1 : 1;
	if (a->kind.sens != b->kind.sens)
		return a->kind.sens < b->kind.sens ? -1 : 1;
	if (a->kind.rate != b->kind.rate)
		return a->kind.rate < b->kind.rate ? -1 : 1;
	if (a->count != b->count)
		return a->count < b->count ? -1 : 1;
	return 0;
}

/* the directions of neighbours to compose: both if a release is sampled */
static int
directions(const DpPldTerm *terms, int n)
{
	for (int i = 0; i < n; i++)
		if (terms[i].count > 0 && terms[i].kind.rate < 1)
			return 2;
	return 1;
}

/*
 * The certificate's epsilon at delta of the composition of terms; false if
 * it is not available.  The neighbouring relation is the same for every
 * release (one row added, or one removed), so each direction is composed
 * on its own and the larger epsilon is the answer.
 */
bool
dp_pld_epsilon(const DpPldTerm *terms, int n, double delta, double *epsilon)
{
	DpPldTerm	sorted[DP_PLD_MAX_KINDS];

	/*
	 * in a canonical order: the rounding of a composition depends on the
	 * order of its convolutions, and one state must get one answer
	 * wherever it is asked (admission, the views, pld_state_epsilon)
	 */
	if (n > DP_PLD_MAX_KINDS)
		return false;
	memcpy(sorted, terms, sizeof(DpPldTerm) * n);
	qsort(sorted, n, sizeof(DpPldTerm), term_cmp);
	*epsilon = 0;
	for (int dir = 0; dir < directions(sorted, n); dir++)
	{
		double		e;

		if (!epsilon_dir(sorted, n, delta, dir, &e))
			return false;
		*epsilon = Max(*epsilon, e);
	}
	return true;
}

/*
 * The largest m <= cap such that history plus m times stmt meets
 * (epsilon, delta) by this certificate (0 if none; false if the
 * certificate is not available).  Binary lifting: the history is composed
 * once, then stmt^(2^k) for decreasing k is tried on the accumulated
 * composition, kept when it still meets the target.  The true curves grow
 * with every release added, so every m below the answer meets the target
 * too.  The tilt is the saddle point at epsilon of the m that the
 * Chernoff bound admits.
 */
static bool
max_repeats_dir(const DpPldTerm *history, int nh, const DpPldTerm *stmt, int ns,
				double epsilon, double delta, int64 cap, int dir, int64 *repeats)
{
	DpPldTerm	all[2 * DP_PLD_MAX_KINDS];
	KindPld		kinds[2 * DP_PLD_MAX_KINDS];
	KindPld    *skinds = kinds + nh;
	double		h,
				lo = 0,
				hi = (double) cap;
	PldCtx		ctx;
	Pld			acc;
	Pld			powers[64];
	int			npow = 0;
	int64		m = 0;
	bool		admits;

	memcpy(all, history, sizeof(DpPldTerm) * nh);
	memcpy(all + nh, stmt, sizeof(DpPldTerm) * ns);
	if (!build_kinds(all, nh + ns, dir, kinds, &h))
		return false;

	/* the m the Chernoff bound admits, by bisection */
	while (hi - lo > 1)
	{
		double		mid = floor((lo + hi) / 2);

		for (int i = 0; i < ns; i++)
			all[nh + i].count = stmt[i].count * mid;
		if (chernoff_epsilon(all, nh + ns, kinds, h, delta) <= epsilon)
			lo = mid;
		else
			hi = mid;
	}
	for (int i = 0; i < ns; i++)
		all[nh + i].count = stmt[i].count * Max(lo, 1);
	ctx.h = h;
	ctx.lambda = saddle_lambda(all, nh + ns, kinds, h, epsilon);
	ctx.eps_t = epsilon;
	ctx.inf_budget = PLD_TRUNC_HIGH * delta;
	ctx.kinds = kinds;
	ctx.nkinds = nh + ns;

	if (!compose(history, nh, kinds, &ctx, &acc))
		return false;
	if (pld_delta_bound(&acc, &ctx, epsilon) > delta)
	{
		*repeats = 0;
		return true;
	}
	/* stmt, stmt^2, stmt^4, ... while within cap and the target */
	if (!compose(stmt, ns, skinds, &ctx, &powers[0]))
		return false;
	npow = 1;
	while (npow < 62 && (INT64CONST(1) << npow) <= cap)
	{
		Pld			z;
		Pld			trial;

		if (!convolve(&acc, &powers[npow - 1], &trial, &ctx))
			return false;
		admits = pld_delta_bound(&trial, &ctx, epsilon) <= delta;
		pfree(trial.t);
		if (!admits)
			break;
		if (!convolve(&powers[npow - 1], &powers[npow - 1], &z, &ctx))
			return false;
		powers[npow++] = z;
	}
	for (int k = npow - 1; k >= 0; k--)
	{
		Pld			trial;

		if (m + (INT64CONST(1) << k) > cap)
			continue;
		if (!convolve(&acc, &powers[k], &trial, &ctx))
			return false;
		if (pld_delta_bound(&trial, &ctx, epsilon) <= delta)
		{
			pfree(acc.t);
			acc = trial;
			m += INT64CONST(1) << k;
		}
		else
			pfree(trial.t);
	}
	*repeats = m;
	return true;
}

/*
 * The largest m <= cap such that history plus m times stmt meets
 * (epsilon, delta) by this certificate, in both directions of neighbours
 * (0 if none; false if the certificate is not available).
 */
bool
dp_pld_max_repeats(const DpPldTerm *history, int nh, const DpPldTerm *stmt, int ns,
				   double epsilon, double delta, int64 cap, int64 *repeats)
{
	int			ndir = Max(directions(history, nh), directions(stmt, ns));

	*repeats = cap;
	for (int dir = 0; dir < ndir && *repeats > 0; dir++)
	{
		int64		m;

		if (!max_repeats_dir(history, nh, stmt, ns, epsilon, delta, *repeats, dir, &m))
			return false;
		*repeats = Min(*repeats, m);
	}
	return true;
}
