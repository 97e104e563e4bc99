/*-------------------------------------------------------------------------
 *
 * quantile_tree.c
 *	  The quantile tree of dp_percentile and dp_median: its leaves, its
 *	  partial states, its noisy counts and the walk that reads quantiles
 *	  (with their intervals) from them.
 *
 * The mechanism is the bounded quantile tree of Google's differential
 * privacy library (its "QuantileTree", documented in "Differentially
 * private quantiles" of the library, and analysed as the hierarchical
 * histogram of Dwork, Naor, Pitassi & Rothblum 2010 and Chan, Shi & Song
 * 2011, "Private and continual release of statistics", whose noisy prefix
 * sums we use): the domain is cut into DP_TREE_LEAVES = 4096 leaves, and
 * a tree of branching factor 16 and height 3 stands above them (16 nodes
 * of 256 leaves, 256 nodes of 16 leaves, the 4096 leaves).  A row adds 1
 * to one node of each level, so the vector of the 4368 node counts has L1
 * sensitivity 3 (H = height); discrete Laplace noise of scale 3 / epsilon
 * on every node makes all of them epsilon-DP (Dwork & Roth 2014, Theorem
 * 3.6, with the discrete Laplace of Canonne, Kamath & Steinke 2020), and
 * every quantile read from them is post-processing: several percentiles of
 * one column in one call share one price.
 *
 * Memory.  A state holds up to DP_TREE_SPARSE_MAX leaf numbers (small
 * groups, the rows of one privacy unit), then the 4096 leaf counters
 * (16 kB), whatever the number of rows: internal counts are sums of leaves,
 * computed when the state is released.  Counters saturate at 2^32 - 1: a
 * row then changes a count by 0 or 1, never more, so the sensitivity
 * holds.  States combine by adding counters, so parallel workers (and
 * Citus shards) aggregate without sorting.
 *
 * Leaves.  With bounds [l, u], leaf j holds the values of
 * [l + j w, l + (j + 1) w), w = (u - l) / 4096, values clamped to [l, u].
 * Without bounds (doc/statistics.md, "Automatic bounds"), the leaves are
 * log-linear over the whole range: 2048 per sign, 16 linear leaves per power
 * of two from 2^-64 to 2^64 (a level-2 node is one power of two); values
 * beyond 2^64 in magnitude are clamped, those below 2^-64 join the leaf next
 * to 0.
 *
 * The walk.  With P(j) the number of rows in leaves 0..j-1 and
 * P~(j) = P(j) + E(j) its canonical noisy estimate (the sum of the noisy
 * counts of the at most 15 + 15 + 15 nodes that tile leaves 0..j-1), the
 * walk for a rank rho descends the tree, taking at each level the last
 * child whose start has P~ < rho; it ends at a leaf l with P~(l) < rho
 * (or l = 0) and P~(l + 1) >= rho (or l = 4095), and interpolates in it.
 * The quantile p is the walk for rho = p N~, N~ = P~(4096) the noisy total.
 * Its interval: with E(j) (45 noises at most) within +- tau for every j
 * and N~ within +- tau_N of N, which holds with probability at least 0.95
 * (Chernoff bounds of the sums of discrete Laplace noise, union bound over
 * the 4095 inner boundaries: 0.04, and 0.01 for N~), the walks for
 * rho = p N~ -+ (tau + p tau_N + 2) end at leaves whose outer edges hold
 * every value of rank in [p N - 2, p N + 2]: so percentile_cont and
 * percentile_disc of the clamped rows lie between them (the proof is in the
 * doc/statistics.md, "Quantiles").
 *
 * Timing.  Noise is drawn lazily, once per node; each walk makes exactly
 * 45 draws (a node already drawn gets a draw thrown away), the total 16:
 * the work is the same whatever the data.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"

#include "noise.h"
#include "quantile_tree.h"
#include "random.h"

#define LEVEL2_BASE DP_TREE_BRANCHING	/* 16 */
#define LEVEL3_BASE (DP_TREE_BRANCHING + DP_TREE_BRANCHING * DP_TREE_BRANCHING)	/* 272 */
#define LEAVES_PER_L1 (DP_TREE_BRANCHING * DP_TREE_BRANCHING)	/* 256 */

/* the log-linear domain: 2048 leaves per sign, exponents -64 .. 63 */
#define LOG_MIN_EXP (-64)
#define LOG_HALF (DP_TREE_LEAVES / 2)
#define LOG_SUB 16

/* ---------- leaves ---------- */

void
dp_tree_domain_bounded(DpTreeDomain *d, double lower, double upper)
{
	d->log_linear = false;
	d->lower = lower;
	d->upper = upper;
	d->scale = upper > lower ? (double) DP_TREE_LEAVES / (upper - lower) : 0;
	if (!isfinite(d->scale))
		d->scale = 0;			/* a span below the smallest double / 4096 */
}

void
dp_tree_domain_log(DpTreeDomain *d)
{
	d->log_linear = true;
	d->lower = -ldexp(1.0, -LOG_MIN_EXP);
	d->upper = ldexp(1.0, -LOG_MIN_EXP);
	d->scale = 0;
}

/* leaf of a positive value in the positive half of the log-linear domain */
static int
log_leaf(double v)
{
	int			e;
	double		f = frexp(v, &e);	/* v = f 2^e, f in [0.5, 1) */
	int			m;

	e -= 1;						/* v in [2^e, 2^(e+1)) */
	if (e < LOG_MIN_EXP || v == 0)
		return 0;
	if (e > -LOG_MIN_EXP - 1)
		return LOG_HALF - 1;
	m = (int) ((2 * f - 1) * LOG_SUB);	/* exact: f has 53 bits */
	return (e - LOG_MIN_EXP) * LOG_SUB + m;
}

/*
 * The leaf of a value (not NaN): clamped to the domain; a monotone
 * function of the value.
 */
int
dp_tree_leaf(const DpTreeDomain *d, double x)
{
	if (d->log_linear)
	{
		if (x >= 0)
			return LOG_HALF + log_leaf(x);
		return LOG_HALF - 1 - log_leaf(-x);
	}
	else
	{
		double		y = (x - d->lower) * d->scale;

		if (!(y >= 0))			/* also -Infinity (NaN never comes) */
			return 0;
		if (y >= DP_TREE_LEAVES - 1)
			return DP_TREE_LEAVES - 1;
		return (int) y;
	}
}

/* the left edge of leaf j (j = DP_TREE_LEAVES: the right end) */
double
dp_tree_edge(const DpTreeDomain *d, int j)
{
	if (d->log_linear)
	{
		int			k;

		if (j < LOG_HALF)
			return -dp_tree_edge(d, DP_TREE_LEAVES - j);
		k = j - LOG_HALF;
		if (k == 0)
			return 0;
		if (k >= LOG_HALF)
			return d->upper;
		return ldexp(1.0 + (double) (k % LOG_SUB) / LOG_SUB, k / LOG_SUB + LOG_MIN_EXP);
	}
	if (j >= DP_TREE_LEAVES)
		return d->upper;
	return d->lower + (d->upper - d->lower) * ((double) j / DP_TREE_LEAVES);
}

/* ---------- states ---------- */

void
dp_tree_init(DpTree *t)
{
	t->nsparse = 0;
	t->leaves = NULL;
}

static void
densify(DpTree *t, MemoryContext cxt)
{
	t->leaves = MemoryContextAllocZero(cxt, sizeof(uint32) * DP_TREE_LEAVES);
	for (int i = 0; i < t->nsparse; i++)
		t->leaves[t->sparse[i]]++;
	t->nsparse = -1;
}

static inline void
count_leaf(uint32 *c)
{
	/* saturating: a row changes a counter by at most 1 */
	if (*c != PG_UINT32_MAX)
		(*c)++;
}

void
dp_tree_add(DpTree *t, int leaf, MemoryContext cxt)
{
	if (t->nsparse < 0)
	{
		count_leaf(&t->leaves[leaf]);
		return;
	}
	if (t->nsparse == DP_TREE_SPARSE_MAX)
	{
		densify(t, cxt);
		count_leaf(&t->leaves[leaf]);
		return;
	}
	t->sparse[t->nsparse++] = (uint16) leaf;
}

void
dp_tree_merge(DpTree *dst, const DpTree *src, MemoryContext cxt)
{
	if (src->nsparse >= 0)
	{
		for (int i = 0; i < src->nsparse; i++)
			dp_tree_add(dst, src->sparse[i], cxt);
		return;
	}
	if (dst->nsparse >= 0)
		densify(dst, cxt);
	for (int i = 0; i < DP_TREE_LEAVES; i++)
	{
		uint64		s = (uint64) dst->leaves[i] + src->leaves[i];

		dst->leaves[i] = s > PG_UINT32_MAX ? PG_UINT32_MAX : (uint32) s;
	}
}

void
dp_tree_reset(DpTree *t)
{
	if (t->nsparse < 0)
		memset(t->leaves, 0, sizeof(uint32) * DP_TREE_LEAVES);
	else
		t->nsparse = 0;
}

/* rows in leaves 0..j-1, j = 0..DP_TREE_LEAVES */
void
dp_tree_prefix(const DpTree *t, int64 *prefix)
{
	memset(prefix, 0, sizeof(int64) * (DP_TREE_LEAVES + 1));
	if (t->nsparse >= 0)
	{
		for (int i = 0; i < t->nsparse; i++)
			prefix[t->sparse[i] + 1]++;
	}
	else
	{
		for (int i = 0; i < DP_TREE_LEAVES; i++)
			prefix[i + 1] = t->leaves[i];
	}
	for (int i = 1; i <= DP_TREE_LEAVES; i++)
		prefix[i] += prefix[i - 1];
}

/*
 * Serialized form: the number of sparse entries (-1: dense), then the
 * entries (uint16 each) or the 4096 counters (uint32 each).
 */
Size
dp_tree_serial_size(const DpTree *t)
{
	return sizeof(int32) + (t->nsparse >= 0 ? sizeof(uint16) * t->nsparse
							: sizeof(uint32) * DP_TREE_LEAVES);
}

void
dp_tree_serialize(const DpTree *t, char *p)
{
	int32		n = t->nsparse;

	memcpy(p, &n, sizeof(int32));
	p += sizeof(int32);
	if (n >= 0)
		memcpy(p, t->sparse, sizeof(uint16) * n);
	else
		memcpy(p, t->leaves, sizeof(uint32) * DP_TREE_LEAVES);
}

/* false if the bytes are not a valid serialized tree of exactly len bytes */
bool
dp_tree_deserialize(DpTree *t, const char *p, Size len, MemoryContext cxt)
{
	int32		n;

	if (len < sizeof(int32))
		return false;
	memcpy(&n, p, sizeof(int32));
	p += sizeof(int32);
	dp_tree_init(t);
	if (n >= 0)
	{
		if (n > DP_TREE_SPARSE_MAX || len != sizeof(int32) + sizeof(uint16) * n)
			return false;
		memcpy(t->sparse, p, sizeof(uint16) * n);
		for (int i = 0; i < n; i++)
		{
			if (t->sparse[i] >= DP_TREE_LEAVES)
				return false;
		}
		t->nsparse = n;
		return true;
	}
	if (n != -1 || len != sizeof(int32) + sizeof(uint32) * DP_TREE_LEAVES)
		return false;
	t->leaves = MemoryContextAlloc(cxt, sizeof(uint32) * DP_TREE_LEAVES);
	memcpy(t->leaves, p, sizeof(uint32) * DP_TREE_LEAVES);
	t->nsparse = -1;
	return true;
}

/* the rows of a state (counters are saturated: at most their sum) */
int64
dp_tree_rows(const DpTree *t)
{
	int64		n = 0;

	if (t->nsparse >= 0)
		return t->nsparse;
	for (int i = 0; i < DP_TREE_LEAVES; i++)
		n += t->leaves[i];
	return n;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a;
	uint64		y = *(const uint64 *) b;

	return x < y ? -1 : x > y;
}

/*
 * A privacy unit's bounded contribution (privacy_unit.c): k of the rows of
 * the state chosen uniformly at random without replacement (all of them
 * when it has at most k), by Floyd's algorithm (Bentley & Floyd 1987) over
 * the rows in leaf order, with the CSPRNG; their leaves go to out.
 * Returns how many.  Every row is chosen with probability k / rows, so
 * the unit counts as k rows distributed as its own rows, whatever their
 * number (doc/units-and-groups.md, "Privacy units").
 */
int
dp_tree_sample(const DpTree *t, int k, uint16 *out)
{
	int64		rows = dp_tree_rows(t);
	uint64	   *pos;
	int			n = 0;

	if (rows <= k)
	{
		/* every row */
		if (t->nsparse >= 0)
		{
			memcpy(out, t->sparse, sizeof(uint16) * t->nsparse);
			return t->nsparse;
		}
		for (int i = 0; i < DP_TREE_LEAVES; i++)
			for (uint32 c = 0; c < t->leaves[i]; c++)
				out[n++] = (uint16) i;
		return n;
	}
	/*
	 * k distinct positions of 0..rows-1 (Floyd's algorithm; membership in
	 * an open-addressing set of 2k slots, position + 1, 0 empty), sorted,
	 * then their leaves
	 */
	pos = palloc(sizeof(uint64) * k);
	{
		uint64		slots = 2 * (uint64) k;
		uint64	   *set = palloc0(sizeof(uint64) * slots);

		for (uint64 j = (uint64) (rows - k); j < (uint64) rows; j++)
		{
			uint64		x = dp_random_below(j + 1);
			uint64		h = x % slots;
			bool		seen = false;

			CHECK_FOR_INTERRUPTS();
			for (; set[h] != 0; h = (h + 1) % slots)
			{
				if (set[h] == x + 1)
				{
					seen = true;
					break;
				}
			}
			if (seen)
			{
				/* j is new: it is above every position drawn before */
				x = j;
				for (h = x % slots; set[h] != 0; h = (h + 1) % slots)
					;
			}
			set[h] = x + 1;
			pos[n++] = x;
		}
		pfree(set);
	}
	qsort(pos, n, sizeof(uint64), cmp_u64);
	if (t->nsparse >= 0)
	{
		for (int i = 0; i < n; i++)
			out[i] = t->sparse[pos[i]];
	}
	else
	{
		uint64		below = 0;
		int			leaf = 0;

		for (int i = 0; i < n; i++)
		{
			while (below + t->leaves[leaf] <= pos[i])
				below += t->leaves[leaf++];
			out[i] = (uint16) leaf;
		}
	}
	pfree(pos);
	return n;
}

/* ---------- the noisy tree ---------- */

static int
node_l1(int a)
{
	return a;
}

static int
node_l2(int a, int b)
{
	return LEVEL2_BASE + a * DP_TREE_BRANCHING + b;
}

static int
node_l3(int a, int b, int c)
{
	return LEVEL3_BASE + a * LEAVES_PER_L1 + b * DP_TREE_BRANCHING + c;
}

/* the noise of a node, drawn the first time it is needed */
static int64
noise_of(DpTreeRelease *tr, int node)
{
	if (!tr->drawn[node])
	{
		tr->noise[node] = (int64) dp_sample_discrete_laplace(tr->param);
		tr->drawn[node] = true;
	}
	return tr->noise[node];
}

/* one draw for a node: its noise, or a draw thrown away if it has one */
static void
touch(DpTreeRelease *tr, int node)
{
	if (tr->drawn[node])
		(void) dp_sample_discrete_laplace(tr->param);
	else
		(void) noise_of(tr, node);
}

/* the canonical noisy prefix P~(j) (noises of nodes already drawn, or drawn now) */
static double
noisy_prefix(DpTreeRelease *tr, int j)
{
	int			a = j / LEAVES_PER_L1;
	int			b = (j % LEAVES_PER_L1) / DP_TREE_BRANCHING;
	int			c = j % DP_TREE_BRANCHING;
	int64		e = 0;

	for (int i = 0; i < a; i++)
		e += noise_of(tr, node_l1(i));
	if (a < DP_TREE_BRANCHING)
	{
		for (int i = 0; i < b; i++)
			e += noise_of(tr, node_l2(a, i));
		for (int i = 0; i < c; i++)
			e += noise_of(tr, node_l3(a, b, i));
	}
	return (double) tr->prefix[j] + (double) e;
}

/*
 * Start the release of a tree: its prefix counts and the noisy total
 * (the 16 nodes of level 1).
 */
void
dp_tree_release_start(DpTreeRelease *tr, const DpTree *t, DpLaplaceParam param)
{
	tr->param = param;
	memset(tr->drawn, 0, sizeof(tr->drawn));
	dp_tree_prefix(t, tr->prefix);
	for (int a = 0; a < DP_TREE_BRANCHING; a++)
		touch(tr, node_l1(a));
	tr->total = noisy_prefix(tr, DP_TREE_LEAVES);
}

/*
 * The walk for rank rho (see the head comment): the leaf, and the
 * fraction of it below rho (linear interpolation between its noisy
 * prefixes).  Exactly 45 draws.
 */
static int
walk(DpTreeRelease *tr, double rho, double *frac)
{
	int			a = 0,
				b = 0,
				c = 0;
	int			leaf;
	double		lo,
				hi;

	for (int i = 0; i < DP_TREE_BRANCHING - 1; i++)
		touch(tr, node_l1(i));
	for (int i = 1; i < DP_TREE_BRANCHING; i++)
		if (noisy_prefix(tr, i * LEAVES_PER_L1) < rho)
			a = i;
	for (int i = 0; i < DP_TREE_BRANCHING - 1; i++)
		touch(tr, node_l2(a, i));
	for (int i = 1; i < DP_TREE_BRANCHING; i++)
		if (noisy_prefix(tr, a * LEAVES_PER_L1 + i * DP_TREE_BRANCHING) < rho)
			b = i;
	for (int i = 0; i < DP_TREE_BRANCHING - 1; i++)
		touch(tr, node_l3(a, b, i));
	for (int i = 1; i < DP_TREE_BRANCHING; i++)
		if (noisy_prefix(tr, a * LEAVES_PER_L1 + b * DP_TREE_BRANCHING + i) < rho)
			c = i;
	leaf = a * LEAVES_PER_L1 + b * DP_TREE_BRANCHING + c;
	lo = noisy_prefix(tr, leaf);
	hi = noisy_prefix(tr, leaf + 1);
	*frac = hi > lo ? (rho - lo) / (hi - lo) : 0.5;
	if (!(*frac >= 0))
		*frac = 0;
	if (*frac > 1)
		*frac = 1;
	return leaf;
}

/* the quantile p in [0, 1] of a released tree, and its interval */
double
dp_tree_quantile(DpTreeRelease *tr, const DpTreeDomain *d, double p,
				 double tau, double tau_total, double *low, double *high)
{
	double		frac;
	int			leaf = walk(tr, p * tr->total, &frac);
	double		left = dp_tree_edge(d, leaf);
	double		right = dp_tree_edge(d, leaf + 1);
	double		v = left + frac * (right - left);

	if (low != NULL)
	{
		double		t = tau + p * tau_total + 2;
		int			lo_leaf = walk(tr, p * tr->total - t, &frac);
		int			hi_leaf = walk(tr, p * tr->total + t, &frac);
		double		l = dp_tree_edge(d, lo_leaf);
		double		h = dp_tree_edge(d, hi_leaf + 1);

		/*
		 * a value next to a leaf's edge may have rounded into its neighbour
		 * (the conversion to double, the scaling): widen by far more
		 */
		*low = l - fabs(l) * 1e-12 - (dp_tree_edge(d, lo_leaf + 1) - l) * 1e-9;
		*high = h + fabs(h) * 1e-12 + (h - dp_tree_edge(d, hi_leaf)) * 1e-9;
		if (lo_leaf == 0)
			*low = d->lower;
		if (hi_leaf == DP_TREE_LEAVES - 1)
			*high = d->upper;
		if (*low > v)
			*low = v;
		if (*high < v)
			*high = v;
	}
	return v;
}

/* ---------- the half-widths of the prefix noise ---------- */

/*
 * log E[e^(s X)] for X discrete Laplace, P[x] proportional to q^|x|,
 * 0 <= s < -log q: (1 - q)^2 / ((1 - q e^s)(1 - q e^-s))
 */
static double
log_mgf(double lambda, double s)
{
	/* 1 - q e^x = -expm1(x - lambda), accurate when q is close to 1 */
	return 2 * log(-expm1(-lambda)) - log(-expm1(s - lambda)) - log(-expm1(-s - lambda));
}

/*
 * The smallest tau with P(|S_m| > tau) <= alpha for S_m the sum of m
 * independent discrete Laplace noises of scale b (units), by Chernoff's
 * bound P(S_m >= tau) <= E[e^(s S_m)] e^(-s tau), minimised over s in a
 * grid of (0, 1/b) (any s gives a valid bound), doubled for the two
 * tails, rounded up to an integer.
 */
double
dp_tree_tail(double b, int m, double alpha)
{
	double		lambda = 1.0 / b;
	double		target = log(alpha / 2);
	double		best = INFINITY;

	for (int i = 1; i < 1000; i++)
	{
		double		s = lambda * i / 1000.0;
		double		tau = (m * log_mgf(lambda, s) - target) / s;

		if (tau < best)
			best = tau;
	}
	/* relative margin for the rounding of the sum above */
	return ceil(best * (1 + 1e-9));
}
