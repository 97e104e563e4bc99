/*-------------------------------------------------------------------------
 *
 * pld_state.c
 *	  The per-role state of 'pld' accounting: how many releases of each kind
 *	  a role has made since its last reset, in the ledger's vocabulary; the
 *	  admission of a statement by the composed privacy loss distribution
 *	  (pld.c), with the role's frontier of compositions known to fit; and
 *	  the calculator dp_agg.pld_epsilon.
 *
 * State.  A role's releases compose by the convolution of their PLDs, which
 * depends only on how many releases of each kind (mechanism, noise scale
 * and sensitivity in grid units, sampling rate) there were.  dp_agg.budget
 * keeps them in the column pld (jsonb), for every role whatever its
 * accounting (as it keeps the Renyi curve), so that a change of accounting
 * is consistent with the history:
 *	 NULL			nothing released since the last reset;
 *	 an array		one object per kind: {"mechanism", "sensitivity",
 *					"noise_scale", "rate", "count"} (grid units, grid 1);
 *	 "untracked"	more than DP_PLD_MAX_KINDS kinds, or releases charged
 *					before version 0.3: the role is admitted by its other
 *					certificates until its next reset.
 * A NULL column with amounts spent is untracked too: releases charged by a
 * library or a charger that did not know the column (an extension updated
 * while a charger ran), which therefore are not counted.
 * At most DP_PLD_MAX_KINDS objects of about 110 bytes: under 4 kB a row.
 *
 * Admission.  Composing a history by FFT takes from milliseconds to
 * seconds, far more than a charge, so the charger never composes: its work
 * per request is a comparison of counts, whatever the history.  The
 * privacy curve of a composition only grows with every release added, so
 * a history with at most as many releases of every kind as one whose
 * certificate meets the limits meets them too.  dp_agg.budget.pld_frontier
 * keeps one such composition, for the limits it was computed at, with its
 * certificate: {"epsilon", "delta", "fit": releases, "fit_epsilon"}.  When
 * it does not cover the history plus the statement (and neither do the
 * basic and Renyi certificates, which are cheaper), the charger answers
 * with the role's history, and the statement's own backend composes
 * (dp_pld_certify): outside the charger, one backend of a role at a time
 * (budget.c), interruptible.  It sends back a certificate: a composition
 * covering history + statement that meets the limits (history + m
 * repeats of the statement, so that the next m charges compose nothing),
 * or the refusal of history + statement by dp_pld_epsilon.  The charger
 * checks the certificate against the history it holds locked (another
 * statement of the role may have been charged meanwhile: then it asks
 * again) and writes the fit one as the frontier, in the charge's
 * transaction.  A statement is refused by this certificate exactly when
 * dp_pld_epsilon of history + statement exceeds the limit: the value that
 * dp_agg.pld_state_epsilon and the views report.  The frontier depends on
 * the limits only: a reset keeps it, set_budget with other limits makes it
 * stale.  It is at most DP_PLD_MAX_KINDS release objects (under 4 kB).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "calibrate.h"
#include "pld.h"
#include "pld_state.h"

/* most repeats counted at once */
#define PLD_MAX_REPEATS (INT64CONST(1) << 30)

/*
 * ranges of the calculator's arguments (the samplers' ranges,
 * doc/sql-reference.md, "Ranges")
 */
#define PLD_MIN_LAPLACE_SCALE (1.0 / 1099511627776.0)	/* 2^-40 */
#define PLD_MAX_LAPLACE_SCALE 4611686018427387904.0	/* 2^62 */
#define PLD_MIN_GAUSSIAN_SCALE (1.0 / 256.0)
#define PLD_MAX_GAUSSIAN_SCALE 281474976710656.0	/* 2^48 */
#define PLD_MAX_SENS 9007199254740992.0 /* 2^53: exact in a double */
#define PLD_MIN_RATE (1.0 / 4294967296.0)	/* 2^-32, BERNOULLI's finest */
#define PLD_MAX_RR_EPSILON 64.0	/* e^64: far beyond any use, finite in doubles */

/* ---------- the kinds of a priced call ---------- */

/*
 * The kind of one noisy release; false if it releases nothing private.
 * *exact is false for a sensitivity above 2^53 units (epsilons far beyond
 * any budget), which a double does not hold exactly: such releases are not
 * counted, and the state becomes untracked.
 */
static bool
noise_kind(const DpNoiseSpec *ns, const DpSampling *sampling, DpPldKind *k, bool *exact)
{
	*exact = (double) ns->sens_units <= PLD_MAX_SENS;
	if (ns->mechanism == DP_MECH_NONE)
		return false;
	if (ns->mechanism == DP_MECH_LAPLACE)
	{
		k->mechanism = DP_PLD_LAPLACE;
		k->scale = (double) ns->laplace.t / (double) ns->laplace.s;
	}
	else
	{
		k->mechanism = DP_PLD_GAUSSIAN;
		k->scale = ns->sigma_units;
	}
	k->sens = (double) ns->sens_units;
	k->rate = sampling->amplified ? sampling->rate : 1;
	return true;
}

/*
 * Add the releases of a priced call to state (dp_avg has a count and a
 * sum, dp_var also a sum of squares); an overflow leaves the state
 * saturated.
 */
void
dp_release_add_pld(const DpRelease *r, DpPldState *state)
{
	DpPldKind	k;
	bool		exact;

	/*
	 * Mechanisms whose PLD this state cannot describe make it untracked
	 * (basic and Renyi composition still account for them): a private
	 * selection of groups (an (epsilon, delta) mechanism, selection.c), and
	 * releases computed from one shared sample (joint.c), which are one
	 * subsampled mechanism, not several independently subsampled ones:
	 * composing them as independent would understate their loss.
	 */
	if (r->call.kind == DP_PUBLIC)
		return;					/* no noise, nothing released that depends on the rows */
	if (r->call.kind == DP_TOP_K)
	{
		/* k rounds, each e0-DP: randomized response at e0 dominates each (top_k.c) */
		k.mechanism = DP_PLD_RR;
		k.scale = dp_div_up((double) r->count.laplace.s, (double) r->count.laplace.t);
		k.sens = 1;
		k.rate = 1;
		if (k.scale > PLD_MAX_RR_EPSILON)
			state->saturated = true;	/* beyond any budget: basic composition decides */
		else
			dp_pld_state_add(state, &k, (double) r->top_k);
		if (state->saturated)
			state->n = 0;
		return;
	}
	/*
	 * A quantile tree under a privacy unit: a unit moves the counts of a
	 * level by at most c = k R in all, perhaps spread over several nodes;
	 * its Renyi DP is at most that of one shift of c per level (the Renyi
	 * divergence of the Laplace mechanism is convex in the shift), which
	 * the curve counts, but the state would compose it as a shift of c per
	 * level without that argument for the PLD: not counted by kind.
	 */
	if (r->call.kind == DP_SELECT || r->shared_sample ||
		(DP_KIND_QUANTILE(r->call.kind) && r->tree.sens_units > 1))
	{
		state->saturated = true;
		state->n = 0;
		return;
	}
	{
		const DpNoiseSpec *specs[DP_MAX_NOISES];
		int			n = dp_release_noises(r, specs, NULL);

		/* a release of r repeats: r independent releases of its kind */
		for (int i = 0; i < n; i++)
		{
			if (!noise_kind(specs[i], &r->sampling, &k, &exact))
				continue;
			if (exact)
				dp_pld_state_add(state, &k, (double) specs[i]->repeats);
			else
				state->saturated = true;
		}
	}
	if (state->saturated)
		state->n = 0;
}

void
dp_pld_state_add(DpPldState *state, const DpPldKind *kind, double count)
{
	int			n;

	if (state->saturated)
		return;
	n = dp_pld_add_term(state->terms, state->n, kind, count);
	if (n < 0)
	{
		state->saturated = true;
		state->n = 0;
	}
	else
		state->n = n;
}

/* state += other */
void
dp_pld_state_merge(DpPldState *state, const DpPldState *other)
{
	if (other->saturated)
	{
		state->saturated = true;
		state->n = 0;
	}
	for (int i = 0; i < other->n; i++)
		dp_pld_state_add(state, &other->terms[i].kind, other->terms[i].count);
}

/* ---------- the jsonb vocabulary ---------- */

/*
 * A macro, so that each message is a literal format string where it is
 * raised: the primary message, then the detail's format and arguments.
 */
#define bad_input(msg, ...) \
	ereport(ERROR, \
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE), \
			 errmsg(msg), \
			 errdetail(__VA_ARGS__), \
			 errhint("Describe releases as the ledger does: objects with \"mechanism\", " \
					 "\"sensitivity\", \"noise_scale\", \"grid\" and \"sampling\", or calls " \
					 "with \"releases\", each with an optional integer \"count\".")))

static JsonbValue *
field(JsonbContainer *obj, const char *key, JsonbValue *buf)
{
	return getKeyJsonValueFromContainer(obj, key, strlen(key), buf);
}

/* a number field, or dflt if absent or null */
static double
number_field(JsonbContainer *obj, const char *key, double dflt)
{
	JsonbValue	buf;
	JsonbValue *v = field(obj, key, &buf);

	if (v == NULL || v->type == jbvNull)
		return dflt;
	if (v->type != jbvNumeric)
		bad_input("a release description has a field that is not a number",
				  "\"%s\" must be a number.", key);
	return DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow,
											  NumericGetDatum(v->val.numeric)));
}

/* the sampling rate of an object: "rate", or "sampling": {"amplified": true, "rate": q} */
static double
sampling_rate(JsonbContainer *obj, double dflt)
{
	JsonbValue	buf,
				abuf;
	JsonbValue *s = field(obj, "sampling", &buf);
	JsonbValue *a;

	if (field(obj, "rate", &abuf) != NULL)
		return number_field(obj, "rate", 1);
	if (s == NULL)
		return dflt;
	if (s->type == jbvNull)
		return 1;
	if (s->type != jbvBinary || !JsonContainerIsObject(s->val.binary.data))
		bad_input("a release description has a malformed \"sampling\"",
				  "\"sampling\" must be null or an object.");
	a = field(s->val.binary.data, "amplified", &abuf);
	if (a == NULL || a->type != jbvBool || !a->val.boolean)
		return 1;
	return number_field(s->val.binary.data, "rate", 1);
}

static double
count_field(JsonbContainer *obj, double dflt)
{
	double		c = number_field(obj, "count", dflt);

	if (!(c >= 0 && c <= DP_PLD_MAX_COUNT && c == floor(c)))
		bad_input("a release count is out of range",
				  "\"count\" is %g; it must be an integer from 0 to 2^40.", c);
	return c;
}

/* one release object, inheriting the rate and count of its call */
static void
parse_release(JsonbContainer *obj, double rate, double count, DpPldState *state)
{
	JsonbValue	buf;
	JsonbValue *m = field(obj, "mechanism", &buf);
	char	   *mech;
	double		grid,
				sens,
				scale;
	DpPldKind	k;

	if (m == NULL || m->type != jbvString)
		bad_input("a release description has no \"mechanism\"",
				  "\"mechanism\" must be \"laplace\", \"gaussian\", \"randomized_response\" or \"none\".");
	mech = pnstrdup(m->val.string.val, m->val.string.len);
	rate = sampling_rate(obj, rate);
	count = count_field(obj, count);
	if (strcmp(mech, "none") == 0)
		return;
	if (strcmp(mech, "randomized_response") == 0)
	{
		/* top-k's rounds (top_k.c): an epsilon, sensitivity 1, never sampled */
		double		e0 = number_field(obj, "epsilon", NAN);

		if (!(e0 > 0 && e0 <= PLD_MAX_RR_EPSILON))
			bad_input("a randomized response's epsilon is out of range",
					  "\"epsilon\" is %g; it must be positive and at most %g.", e0,
					  PLD_MAX_RR_EPSILON);
		if (count == 0)
			return;
		k.mechanism = DP_PLD_RR;
		k.scale = e0;
		k.sens = 1;
		k.rate = 1;
		dp_pld_state_add(state, &k, count);
		if (state->saturated)
			bad_input("too many kinds of releases",
					  "At most %d different releases (mechanism, noise scale, sensitivity "
					  "and rate) can be composed at once.", DP_PLD_MAX_KINDS);
		return;
	}
	if (strcmp(mech, "laplace") != 0 && strcmp(mech, "gaussian") != 0)
		bad_input("a release description has an unknown mechanism",
				  "The mechanism is \"%s\"; it must be \"laplace\", \"gaussian\", \"randomized_response\" or \"none\".",
				  mech);
	k.mechanism = strcmp(mech, "laplace") == 0 ? DP_PLD_LAPLACE : DP_PLD_GAUSSIAN;
	grid = number_field(obj, "grid", 1);
	if (!(grid > 0 && isfinite(grid)))
		bad_input("a release's grid is out of range",
				  "\"grid\" is %g; it must be positive and finite.", grid);
	sens = number_field(obj, "sensitivity", NAN) / grid;
	scale = number_field(obj, "noise_scale", NAN) / grid;
	if (!(sens >= 0 && sens <= PLD_MAX_SENS && sens == floor(sens)))
		bad_input("a release's sensitivity is out of range",
				  "The sensitivity is %g grid units; it must be an integer from 0 to 2^53.",
				  sens);
	if (k.mechanism == DP_PLD_LAPLACE
		? !(scale >= PLD_MIN_LAPLACE_SCALE && scale <= PLD_MAX_LAPLACE_SCALE)
		: !(scale >= PLD_MIN_GAUSSIAN_SCALE && scale <= PLD_MAX_GAUSSIAN_SCALE))
		bad_input("a release's noise scale is out of range",
				  "The noise scale is %g grid units; it must be from 2^-40 to 2^62 "
				  "(laplace) or from 1/256 to 2^48 (gaussian).", scale);
	if (!(rate >= PLD_MIN_RATE && rate <= 1))
		bad_input("a release's sampling rate is out of range",
				  "The rate is %g; it must be from 2^-32 to 1.", rate);
	if (sens == 0 || count == 0)
		return;
	k.scale = scale;
	k.sens = sens;
	k.rate = rate;
	dp_pld_state_add(state, &k, count);
	if (state->saturated)
		bad_input("too many kinds of releases",
				  "At most %d different releases (mechanism, noise scale, sensitivity "
				  "and rate) can be composed at once.", DP_PLD_MAX_KINDS);
}

/*
 * Parse releases described in the ledger's vocabulary: an array of calls
 * (objects with "releases", whose "sampling" and "count" apply to each) or
 * of releases.
 */
static void
parse_container(JsonbContainer *root, DpPldState *state)
{
	int			n;

	memset(state, 0, sizeof(*state));
	if (!JsonContainerIsArray(root) || JsonContainerIsScalar(root))
		bad_input("releases must be a JSON array", "The argument is not an array.");
	n = JsonContainerSize(root);
	for (int i = 0; i < n; i++)
	{
		JsonbValue *v = getIthJsonbValueFromContainer(root, i);
		JsonbContainer *obj;
		JsonbValue	buf;
		JsonbValue *rel;

		if (v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data))
			bad_input("releases must be JSON objects",
					  "Element %d of the array is not an object.", i + 1);
		obj = v->val.binary.data;
		rel = field(obj, "releases", &buf);
		if (rel == NULL)
		{
			parse_release(obj, 1, 1, state);
			continue;
		}
		if (rel->type != jbvBinary || !JsonContainerIsArray(rel->val.binary.data))
			bad_input("a call's \"releases\" must be an array",
					  "Element %d of the array has a malformed \"releases\".", i + 1);
		{
			double		rate = sampling_rate(obj, 1);
			double		count = count_field(obj, 1);
			JsonbContainer *arr = rel->val.binary.data;

			for (int k = 0; k < (int) JsonContainerSize(arr); k++)
			{
				JsonbValue *r = getIthJsonbValueFromContainer(arr, k);

				if (r->type != jbvBinary || !JsonContainerIsObject(r->val.binary.data))
					bad_input("releases must be JSON objects",
							  "Release %d of element %d is not an object.", k + 1, i + 1);
				parse_release(r->val.binary.data, rate, count, state);
			}
		}
	}
}

static void
parse_releases(Jsonb *j, DpPldState *state)
{
	parse_container(&j->root, state);
}

/* a budget row's pld column (NULL: isnull) into state; ERROR if malformed */
void
dp_pld_state_decode(Datum d, bool isnull, DpPldState *state)
{
	Jsonb	   *j;

	memset(state, 0, sizeof(*state));
	if (isnull)
		return;
	j = DatumGetJsonbP(d);
	if (JsonContainerIsScalar(&j->root))
	{
		JsonbValue *v = getIthJsonbValueFromContainer(&j->root, 0);

		if (v->type == jbvString && v->val.string.len == strlen("untracked") &&
			memcmp(v->val.string.val, "untracked", v->val.string.len) == 0)
		{
			state->saturated = true;
			return;
		}
	}
	parse_releases(j, state);
}

/* the pld column of a state, as jsonb text ("" for NULL) */
char *
dp_pld_state_encode(const DpPldState *state)
{
	StringInfoData buf;

	if (state->saturated)
		return pstrdup("\"untracked\"");
	initStringInfo(&buf);
	appendStringInfoChar(&buf, '[');
	for (int i = 0; i < state->n; i++)
	{
		const DpPldTerm *t = &state->terms[i];

		if (t->kind.mechanism == DP_PLD_RR)
			appendStringInfo(&buf, "%s{\"mechanism\": \"randomized_response\", \"epsilon\": %.17g, "
							 "\"rate\": 1, \"count\": %.0f}",
							 i > 0 ? ", " : "", t->kind.scale, t->count);
		else
			appendStringInfo(&buf, "%s{\"mechanism\": \"%s\", \"sensitivity\": %.17g, "
							 "\"noise_scale\": %.17g, \"rate\": %.17g, \"count\": %.0f}",
							 i > 0 ? ", " : "",
							 t->kind.mechanism == DP_PLD_LAPLACE ? "laplace" : "gaussian",
							 t->kind.sens, t->kind.scale, t->kind.rate, t->count);
	}
	appendStringInfoChar(&buf, ']');
	return buf.data;
}

/*
 * The numeric of "%.17g" of v, as the text of encode writes it.  The
 * charger writes the pld column of every budget it charges, and the
 * sensitivities, noise scales and rates of its kinds repeat from one
 * charge to the next: the last few are remembered (bit for bit), in
 * TopMemoryContext, instead of being printed and parsed each time.
 */
#define NUMERIC_MEMO_SIZE 16

static Numeric
exact_numeric(double v)
{
	static struct
	{
		double		v;
		Numeric		n;
	}			memo[NUMERIC_MEMO_SIZE];
	static int	used = 0,
				next = 0;
	char		buf[64];
	Numeric		n;

	/*
	 * a copy in the caller's context: a jsonb being built keeps pointers to
	 * its numerics, and an entry can be evicted before it is done
	 */
	for (int i = 0; i < used; i++)
	{
		if (memcmp(&memo[i].v, &v, sizeof(v)) == 0)
		{
			n = palloc(VARSIZE(memo[i].n));
			memcpy(n, memo[i].n, VARSIZE(memo[i].n));
			return n;
		}
	}
	snprintf(buf, sizeof(buf), "%.17g", v);
	n = DatumGetNumeric(DirectFunctionCall3(numeric_in, CStringGetDatum(buf),
											ObjectIdGetDatum(InvalidOid),
											Int32GetDatum(-1)));
	if (used == NUMERIC_MEMO_SIZE)
		pfree(memo[next].n);
	else
		used++;
	memo[next].v = v;
	memo[next].n = MemoryContextAlloc(TopMemoryContext, VARSIZE(n));
	memcpy(memo[next].n, n, VARSIZE(n));
	next = (next + 1) % NUMERIC_MEMO_SIZE;
	return n;
}

/*
 * a jsonb number: v as "%.17g" (is_count: "%.0f", an integer) writes it,
 * the text of encode
 */
static void
push_number(JsonbParseState **ps, const char *key, double v, bool is_count)
{
	JsonbValue	k;
	JsonbValue	n;

	k.type = jbvString;
	k.val.string.val = (char *) key;
	k.val.string.len = strlen(key);
	(void) pushJsonbValue(ps, WJB_KEY, &k);
	/* JSON has no infinities or NaN: the text form would not parse either */
	if (!isfinite(v))
		elog(ERROR, "pld state has a non-finite %s", key);
	n.type = jbvNumeric;
	if (is_count && v == floor(v) && fabs(v) < 4503599627370496.0)
		n.val.numeric = int64_to_numeric((int64) v);	/* below 2^52: exact */
	else if (is_count)
	{
		char		buf[512];

		snprintf(buf, sizeof(buf), "%.0f", v);
		n.val.numeric = DatumGetNumeric(DirectFunctionCall3(numeric_in, CStringGetDatum(buf),
															ObjectIdGetDatum(InvalidOid),
															Int32GetDatum(-1)));
	}
	else
		n.val.numeric = exact_numeric(v);
	(void) pushJsonbValue(ps, WJB_VALUE, &n);
}

/*
 * The pld column of a state as a jsonb datum, the same value as
 * jsonb_in of dp_pld_state_encode's text, built without writing and
 * parsing the text (the charger writes it for every budget it charges).
 */
Datum
dp_pld_state_jsonb(const DpPldState *state)
{
	JsonbParseState *ps = NULL;
	JsonbValue *root;

	if (state->saturated)
	{
		JsonbValue	v;

		v.type = jbvString;
		v.val.string.val = "untracked";
		v.val.string.len = strlen("untracked");
		root = pushJsonbValue(&ps, WJB_BEGIN_ARRAY, NULL);
		ps->contVal.val.array.rawScalar = true;
		(void) pushJsonbValue(&ps, WJB_ELEM, &v);
		root = pushJsonbValue(&ps, WJB_END_ARRAY, NULL);
		return JsonbPGetDatum(JsonbValueToJsonb(root));
	}
	(void) pushJsonbValue(&ps, WJB_BEGIN_ARRAY, NULL);
	for (int i = 0; i < state->n; i++)
	{
		const DpPldTerm *t = &state->terms[i];
		JsonbValue	k;
		JsonbValue	m;

		(void) pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
		k.type = jbvString;
		k.val.string.val = "mechanism";
		k.val.string.len = strlen("mechanism");
		(void) pushJsonbValue(&ps, WJB_KEY, &k);
		m.type = jbvString;
		m.val.string.val = t->kind.mechanism == DP_PLD_RR ? "randomized_response"
			: t->kind.mechanism == DP_PLD_LAPLACE ? "laplace" : "gaussian";
		m.val.string.len = strlen(m.val.string.val);
		(void) pushJsonbValue(&ps, WJB_VALUE, &m);
		if (t->kind.mechanism == DP_PLD_RR)
		{
			/* as encode writes it: its epsilon, and a rate of 1 */
			push_number(&ps, "epsilon", t->kind.scale, false);
			push_number(&ps, "rate", 1.0, true);
		}
		else
		{
			push_number(&ps, "sensitivity", t->kind.sens, false);
			push_number(&ps, "noise_scale", t->kind.scale, false);
			push_number(&ps, "rate", t->kind.rate, false);
		}
		push_number(&ps, "count", t->count, true);
		(void) pushJsonbValue(&ps, WJB_END_OBJECT, NULL);
	}
	root = pushJsonbValue(&ps, WJB_END_ARRAY, NULL);
	return JsonbPGetDatum(JsonbValueToJsonb(root));
}

/* ---------- admission ---------- */

/* does a hold at least the releases of b, kind by kind? */
bool
dp_pld_state_covers(const DpPldState *a, const DpPldState *b)
{
	if (a->saturated || b->saturated)
		return false;
	for (int i = 0; i < b->n; i++)
	{
		bool		found = false;

		if (b->terms[i].count <= 0)
			continue;
		for (int j = 0; j < a->n && !found; j++)
			found = dp_pld_kind_equal(&a->terms[j].kind, &b->terms[i].kind) &&
				a->terms[j].count >= b->terms[i].count;
		if (!found)
			return false;
	}
	return true;
}

/* the same releases, kind by kind? */
bool
dp_pld_state_equal(const DpPldState *a, const DpPldState *b)
{
	return dp_pld_state_covers(a, b) && dp_pld_state_covers(b, a);
}

/* history plus m times stmt */
static DpPldState
repeated(const DpPldState *history, const DpPldState *stmt, double m)
{
	DpPldState	r = *history;

	for (int i = 0; i < stmt->n; i++)
		dp_pld_state_add(&r, &stmt->terms[i].kind, stmt->terms[i].count * m);
	return r;
}

DpPldState
dp_pld_state_after(const DpPldState *history, const DpPldState *stmt)
{
	DpPldState	r = repeated(history, stmt, 1);

	if (stmt->saturated)
	{
		r.saturated = true;
		r.n = 0;
	}
	return r;
}

/*
 * The certificate of a state at delta: dp_pld_epsilon, the one function
 * that admission, the views and dp_agg.pld_state_epsilon use (it composes
 * the kinds in a canonical order, so equal states get equal answers).
 * false if it is not available (untracked, or too wide a grid).
 */
bool
dp_pld_state_epsilon(const DpPldState *state, double delta, double *epsilon)
{
	if (state->saturated || !(delta > 0 && delta < 1))
		return false;
	return dp_pld_epsilon(state->terms, state->n, delta, epsilon);
}

/*
 * Is after admitted by the frontier computed for these limits: is it
 * covered by a composition F whose certificate meets them?  Why that is
 * sound: the certificate of F bounds the hockey-stick curve of F's
 * composition at the limit's epsilon (pld.c: the pessimistic
 * discretization dominates each release, Doroshenko, Ghazi, Kamath, Kumar
 * & Manurangsi 2022, Theorem 4.3; compositions of dominating pairs
 * dominate, Zhu, Dong & Wang 2022, Theorem 10; the FFT composition,
 * Koskela, Jalko & Honkela 2020, with its error bounded upwards).  The
 * releases of after are some of F's (kind by kind, at most as many), and
 * F's pair is after's pair times the pair of the releases F has more: the
 * first coordinates of F's outputs are a post-processing of them (a
 * projection), and the hockey-stick divergence never grows by
 * post-processing (the data-processing inequality of f-divergences, of
 * which it is one; for (epsilon, delta)-DP, Dwork & Roth 2014,
 * Proposition 2.1).  So after's curve is below F's, below the certificate,
 * below the limit: the composition of after's releases is
 * (epsilon_limit, delta_limit)-DP, whatever the order of its releases.
 */
bool
dp_pld_frontier_admits(const DpPldFrontier *f, double epsilon, double delta,
					   const DpPldState *after)
{
	return f->has_fit && f->epsilon == epsilon && f->delta == delta &&
		f->fit_epsilon <= epsilon && dp_pld_state_covers(&f->fit, after);
}

/* make a fit certificate the frontier (the charger, after checking it covers) */
void
dp_pld_frontier_adopt(DpPldFrontier *f, const DpPldCertificate *cert)
{
	Assert(cert->kind == DP_PLD_CERT_FIT);
	memset(f, 0, sizeof(*f));
	f->epsilon = cert->epsilon_limit;
	f->delta = cert->delta_limit;
	f->has_fit = true;
	f->fit = cert->state;
	f->fit_epsilon = cert->epsilon;
}

/*
 * Compose for the charger, in the backend whose statement it is (never in
 * the charger: its work would delay every role's charge): does history +
 * stmt meet (epsilon, delta) by the PLD certificate?
 *
 * The decision is exactly dp_pld_state_epsilon(history + stmt) <= epsilon,
 * the value the views report: a statement is refused only when that
 * certificate refuses it.  To serve the next statements without composing,
 * the fit certificate covers as many repeats m of stmt as it can: the most
 * repeats are estimated by binary lifting (dp_pld_max_repeats, one
 * composition), then the certificate of history + m stmt is computed by
 * dp_pld_epsilon itself and m is halved until it meets the limits (or is
 * 1, where history + stmt decides).  At most about log2(m) + 2
 * compositions, with interrupts honoured throughout (dp_work_step).
 */
void
dp_pld_certify(double epsilon, double delta, const DpPldState *history,
			   const DpPldState *stmt, DpPldCertificate *cert)
{
	DpPldState	after = dp_pld_state_after(history, stmt);
	int64		m = 0;
	double		e;

	memset(cert, 0, sizeof(*cert));
	cert->epsilon_limit = epsilon;
	cert->delta_limit = delta;
	cert->state = after;
	cert->kind = DP_PLD_CERT_REFUSED;
	cert->epsilon = INFINITY;
	if (after.saturated || !(delta > 0 && delta < 1))
		return;

	if (stmt->n > 0 &&
		!dp_pld_max_repeats(history->terms, history->n, stmt->terms, stmt->n,
							epsilon, delta, PLD_MAX_REPEATS, &m))
		m = 0;
	while (m > 1)
	{
		DpPldState	fit = repeated(history, stmt, (double) m);

		if (!fit.saturated && dp_pld_state_epsilon(&fit, delta, &e) && e <= epsilon)
		{
			cert->kind = DP_PLD_CERT_FIT;
			cert->state = fit;
			cert->epsilon = e;
			return;
		}
		m /= 2;
	}
	if (dp_pld_state_epsilon(&after, delta, &e))
	{
		cert->epsilon = e;
		if (e <= epsilon)
			cert->kind = DP_PLD_CERT_FIT;
	}
}

/*
 * A budget row's pld_frontier column (NULL: isnull); ERROR if malformed.
 * A frontier without "fit_epsilon" (written by version 0.3, whose "fit" was
 * not computed by dp_pld_epsilon) is ignored: the next charge composes.
 */
void
dp_pld_frontier_decode(Datum d, bool isnull, DpPldFrontier *f)
{
	Jsonb	   *j;
	JsonbValue	buf;
	JsonbValue *v;

	memset(f, 0, sizeof(*f));
	if (isnull)
		return;
	j = DatumGetJsonbP(d);
	if (!JsonContainerIsObject(&j->root))
		bad_input("a budget's pld_frontier is not an object", "It must be an object.");
	f->epsilon = number_field(&j->root, "epsilon", NAN);
	f->delta = number_field(&j->root, "delta", NAN);
	f->fit_epsilon = number_field(&j->root, "fit_epsilon", NAN);
	v = field(&j->root, "fit", &buf);
	if (v == NULL || v->type == jbvNull || isnan(f->fit_epsilon))
		return;
	if (v->type != jbvBinary)
		bad_input("a budget's pld_frontier is malformed",
				  "\"fit\" must be an array of releases.");
	parse_container(v->val.binary.data, &f->fit);
	f->has_fit = !f->fit.saturated;
}

/* the pld_frontier column of a frontier, as jsonb text */
char *
dp_pld_frontier_encode(const DpPldFrontier *f)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfo(&buf, "{\"epsilon\": %.17g, \"delta\": %.17g", f->epsilon, f->delta);
	if (f->has_fit)
		appendStringInfo(&buf, ", \"fit\": %s, \"fit_epsilon\": %.17g",
						 dp_pld_state_encode(&f->fit), f->fit_epsilon);
	appendStringInfoChar(&buf, '}');
	return buf.data;
}

/* ---------- SQL ---------- */

static Datum
epsilon_of(Jsonb *j, double delta, bool limited)
{
	DpPldState	state;
	double		epsilon;

	if (!(delta > 0 && delta < 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("delta must be greater than 0 and less than 1"),
				 errdetail("delta is %g.", delta)));
	parse_releases(j, &state);
	dp_work_limit(limited ? DP_CALCULATOR_MAX_STEPS : 0);
	if (!dp_pld_epsilon(state.terms, state.n, delta, &epsilon))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the privacy loss distribution of these releases is too wide to compose"),
				 errdetail("Its grid would need more than the bins dp_agg composes at once."),
				 errhint("Compose releases of closer noise scales, or fewer of them.")));
	dp_work_limit(0);
	return Float8GetDatum(epsilon);
}

PG_FUNCTION_INFO_V1(dp_pld_epsilon_sql);
Datum
dp_pld_epsilon_sql(PG_FUNCTION_ARGS)
{
	return epsilon_of(PG_GETARG_JSONB_P(0), PG_GETARG_FLOAT8(1), true);
}

/*
 * The epsilon of a budget's pld column at delta (NULL for a saturated
 * state): the state is bounded (DP_PLD_MAX_KINDS kinds, DP_PLD_MAX_COUNT
 * releases each), so is the work, without the calculators' step limit.
 */
PG_FUNCTION_INFO_V1(dp_pld_state_epsilon_sql);
Datum
dp_pld_state_epsilon_sql(PG_FUNCTION_ARGS)
{
	DpPldState	state;

	dp_pld_state_decode(PG_GETARG_DATUM(0), false, &state);
	if (state.saturated)
		PG_RETURN_NULL();
	return epsilon_of(PG_GETARG_JSONB_P(0), PG_GETARG_FLOAT8(1), false);
}

/*
 * dp_agg.pld_budget_epsilon(pld, pld_frontier, delta): the PLD certificate
 * of a budget row at delta, as admission uses it, for the views
 * (dp_agg.my_budget, dp_agg.spent_epsilon); never an ERROR for a history
 * too wide to compose.  NULL when there is none: an untracked state, or a
 * composition that is too wide or exceeds the calculators' work limit
 * (the views then show the other certificates).  When the frontier was
 * computed at this delta and covers the history, its certificate bounds
 * the history's curve too (dp_pld_frontier_admits): the answer is the
 * smaller of the two, so that a history the frontier admitted is shown
 * within the limits, and one it did not is shown exactly as admission
 * computed it (dp_pld_epsilon).
 */
PG_FUNCTION_INFO_V1(dp_pld_budget_epsilon_sql);
Datum
dp_pld_budget_epsilon_sql(PG_FUNCTION_ARGS)
{
	DpPldState	state;
	DpPldFrontier frontier;
	double		delta;
	double		epsilon = 0;
	volatile bool found = false;
	bool		covered;
	MemoryContext cxt = CurrentMemoryContext;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(2))
		PG_RETURN_NULL();
	delta = PG_GETARG_FLOAT8(2);
	if (!(delta > 0 && delta < 1))
		PG_RETURN_NULL();
	dp_pld_state_decode(PG_GETARG_DATUM(0), false, &state);
	if (state.saturated)
		PG_RETURN_NULL();
	dp_pld_frontier_decode(PG_ARGISNULL(1) ? (Datum) 0 : PG_GETARG_DATUM(1), PG_ARGISNULL(1),
						   &frontier);
	covered = frontier.has_fit && frontier.delta == delta &&
		dp_pld_state_covers(&frontier.fit, &state);

	/*
	 * Compose, within the calculators' work limit.  The composition only
	 * allocates memory and counts steps: an error of its limits (too many
	 * steps) is caught here and means "not available"; any other error,
	 * such as a cancel, is raised.
	 */
	PG_TRY();
	{
		dp_work_limit(DP_CALCULATOR_MAX_STEPS);
		found = dp_pld_state_epsilon(&state, delta, &epsilon);
		dp_work_limit(0);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		dp_work_limit(0);
		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		if (edata->sqlerrcode != ERRCODE_PROGRAM_LIMIT_EXCEEDED)
			PG_RE_THROW();
		FlushErrorState();
		FreeErrorData(edata);
		found = false;
	}
	PG_END_TRY();
	if (covered && (!found || frontier.fit_epsilon < epsilon))
		PG_RETURN_FLOAT8(frontier.fit_epsilon);
	if (!found)
		PG_RETURN_NULL();
	PG_RETURN_FLOAT8(epsilon);
}
