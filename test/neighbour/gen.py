"""Statements for the neighbour checker: random DP statements over the
protected tables of run.py, of the shapes the guard accepts.

A statement is a list of steps (SQL texts) run one after the other in one
session, with the settings of the moment: a plain statement, a prepared
one (custom or generic plan) executed with extreme parameters, or a
cursor read in steps.  Expressions are typed trees over the columns of
the tables, constants (the extreme values of each type among them) and
parameters, through the everyday functions, operators, casts and node
kinds an analyst writes.  The generator knows nothing of what dp_agg
accepts or traps: refusals are outcomes like any other, and only a
difference between neighbours fails.
"""

import random

# The columns of the tables (run.py), by type
COLUMNS = {
    "int": ["id", "i2", "i4", "i8", "sm"],
    "num": ["n"],
    "flt": ["f4", "f8"],
    "text": ["tx", "tc"],
    "date": ["d"],
    "ts": ["ts"],
    "tstz": ["tz"],
    "iv": ["iv"],
    "bool": ["b"],
    "jsonb": ["j"],
    "arr": ["a"],
}

CONSTS = {
    "int": ["0", "1", "-1", "7", "42", "1000000", "32767", "-32768", "2147483647",
            "(-2147483648)", "9223372036854775807", "(-9223372036854775807 - 1)", "NULL::int"],
    "num": ["0", "1.5", "12.345", "1e300", "(-1e-300)", "'NaN'::numeric", "'Infinity'::numeric",
            "1e131071", "NULL::numeric"],
    "flt": ["0::float8", "2.5::float8", "1e308::float8", "'NaN'::float8", "'-Infinity'::float8",
            "5e-324::float8", "3.4e38::float4", "NULL::float8"],
    "text": ["''", "'Alice'", "'a%'", "'%z%'", "'zz'", "'-17'", "'12.5e3'", "'2024-13-45'",
             "'2024-02-29'", "'é'", "NULL::text"],
    "date": ["'2024-02-29'::date", "'infinity'::date", "'4713-01-01 BC'::date",
             "'5874897-12-31'::date", "NULL::date"],
    "ts": ["'2024-02-29 13:14:15'::timestamp", "'294276-12-31 23:59:59'::timestamp",
           "'4713-01-01 00:00:00 BC'::timestamp", "'-infinity'::timestamp", "NULL::timestamp"],
    "tstz": ["'2024-02-29 13:14:15+00'::timestamptz", "'infinity'::timestamptz"],
    "iv": ["'1 day'::interval", "'178000000 years'::interval", "'-1 microsecond'::interval",
           "'1 month -1 day'::interval", "NULL::interval"],
    "bool": ["true", "false", "NULL::boolean"],
    "jsonb": ["'{\"a\": 1}'::jsonb", "'[1, 2]'::jsonb", "'null'::jsonb"],
    "arr": ["'{1,2,3}'::int[]", "'{}'::int[]", "'{2147483647,NULL}'::int[]"],
}

# parameters of prepared statements: SQL type, a generator type, values
PARAM_TYPES = [
    ("int", "int", ["0", "1", "2147483647", "-2147483648", "NULL"]),
    ("bigint", "int", ["9223372036854775807", "-1", "0"]),
    ("numeric", "num", ["'NaN'", "1e300", "0", "'-Infinity'"]),
    ("float8", "flt", ["'Infinity'", "1e308", "0", "'NaN'"]),
    ("text", "text", ["''", "'Alice'", "'^[A-Z]'", "'2024-02-29'", "NULL"]),
    ("text_c", "text", ["'a'", "'zz'"]),
    ("text_posix", "text", ["'a'", "'Alice'"]),
    ("timestamp", "ts", ["'294276-12-31 23:59:59'", "'infinity'", "'2024-02-29'"]),
    ("date", "date", ["'5874897-12-31'", "'2024-02-29'"]),
]

TRUNC_UNITS = ["'month'", "'week'", "'day'", "'year'", "'hour'", "'decade'"]
PARTS = ["month", "year", "dow", "epoch", "day", "hour"]


class Gen:
    def __init__(self, rnd, params=None):
        self.r = rnd
        self.params = params if params is not None else []   # (index, gentype)
        # a plain statement: columns, constants and parameters compared,
        # no function (what an analyst writes first)
        self.plain = rnd.random() < 0.3

    def pick(self, seq):
        return self.r.choice(seq)

    def param(self, t):
        cands = [i for i, (gt, _) in enumerate(self.params) if gt == t]
        if cands and self.r.random() < 0.3:
            return "$%d" % (self.pick(cands) + 1)
        return None

    def leaf(self, t):
        p = self.param(t)
        if p:
            return p
        if t in COLUMNS and self.r.random() < 0.65:
            return self.pick(COLUMNS[t])
        return self.pick(CONSTS[t])

    def expr(self, t, depth=2):
        if depth <= 0 or self.r.random() < 0.3 or (self.plain and t != "bool"):
            return self.leaf(t)
        d = depth - 1
        f = getattr(self, "e_" + t)
        return f(d)

    def generic(self, t, d):
        """node kinds common to every type"""
        c = self.r.random()
        if c < 0.25:
            return "CASE WHEN %s THEN %s ELSE %s END" % (self.expr("bool", d), self.expr(t, d),
                                                        self.expr(t, d))
        if c < 0.45:
            return "COALESCE(%s, %s)" % (self.expr(t, d), self.expr(t, d))
        if c < 0.6 and t not in ("bool", "jsonb", "arr"):
            return "%s(%s, %s)" % (self.pick(["GREATEST", "LEAST"]), self.expr(t, d), self.expr(t, d))
        if c < 0.75 and t not in ("jsonb",):
            return "NULLIF(%s, %s)" % (self.expr(t, d), self.expr(t, d))
        return self.leaf(t)

    def e_int(self, d):
        x, y = self.expr("int", d), self.expr("int", d)
        return self.pick([
            "(%s + %s)" % (x, y), "(%s - %s)" % (x, y), "(%s * %s)" % (x, y),
            "(%s / %s)" % (x, y), "(%s %% %s)" % (x, y), "abs(%s)" % x, "(-%s)" % x,
            "(%s / 10 * 10)" % x,
            "length(%s)" % self.expr("text", d), "position('e' in %s)" % self.expr("text", d),
            "extract(year FROM %s)::int" % self.expr("ts", d),
            "date_part('day', %s)::int" % self.expr("date", d),
            "width_bucket(%s, 0, 100, 10)" % self.expr("flt", d),
            "(%s)::int" % self.expr("text", d), "(%s)::int2" % x, "(%s)::int8" % x,
            "(%s)::int" % self.expr("num", d), "(%s)::int" % self.expr("flt", d),
            "array_length(%s, 1)" % self.expr("arr", d), "(%s)[1]" % self.expr("arr", d),
            "cardinality(%s)" % self.expr("arr", d), "((%s)->>'a')::int" % self.expr("jsonb", d),
            "(%s)::sm" % x, "(%s - %s)" % (self.expr("date", d), self.expr("date", d)),
            self.generic("int", d)])

    def e_num(self, d):
        x, y = self.expr("num", d), self.expr("num", d)
        return self.pick([
            "(%s + %s)" % (x, y), "(%s * %s)" % (x, y), "(%s / %s)" % (x, y),
            "mod(%s, %s)" % (x, y), "round(%s, 2)" % x, "floor(%s)" % x, "ceil(%s)" % x,
            "abs(%s)" % x, "sqrt(%s)" % x, "ln(%s)" % x, "power(%s, 2)" % x,
            "(%s)::numeric" % self.expr("int", d), "(%s)::numeric" % self.expr("flt", d),
            "(%s)::numeric" % self.expr("text", d), "width_bucket(%s, 0, 100, 5)::numeric" % x,
            "extract(epoch FROM %s)" % self.expr("tstz", d), "to_number(%s, '99999')" % self.expr("text", d),
            self.generic("num", d)])

    def e_flt(self, d):
        x, y = self.expr("flt", d), self.expr("flt", d)
        return self.pick([
            "(%s + %s)" % (x, y), "(%s * %s)" % (x, y), "(%s / %s)" % (x, y),
            "sqrt(%s)" % x, "ln(%s)" % x, "exp(%s)" % x, "round(%s)" % x, "abs(%s)" % x,
            "(%s)::float8" % self.expr("int", d), "(%s)::float4" % x,
            "(%s)::float8" % self.expr("num", d), self.generic("flt", d)])

    def e_text(self, d):
        x = self.expr("text", d)
        return self.pick([
            "lower(%s)" % x, "upper(%s)" % x, "substring(%s from 2 for 3)" % x,
            "left(%s, %s)" % (x, self.expr("int", 0)), "right(%s, -1)" % x,
            "replace(%s, 'e', 'E')" % x, "trim(%s)" % x, "(%s || %s)" % (x, self.expr("text", d)),
            "concat(%s, %s)" % (x, self.expr("int", d)), "initcap(%s)" % x,
            "split_part(%s, 'l', 2)" % x, "lpad(%s, 6, '*')" % x, "md5(%s)" % x,
            "to_char(%s, 'YYYY-MM')" % self.expr("ts", d), "to_char(%s, 'FM999.99')" % self.expr("num", d),
            "(%s)::text" % self.expr("int", d), "(%s)::text" % self.expr("date", d),
            "regexp_replace(%s, '[aeiou]+', '_')" % x, "(%s)->>'b'" % self.expr("jsonb", d),
            "substring(%s from '[0-9]+')" % x, "(%s) COLLATE \"C\"" % x,
            self.generic("text", d)])

    def e_date(self, d):
        return self.pick([
            "(%s + %s)" % (self.expr("date", d), self.expr("int", d)),
            "make_date(%s, 1, 1)" % self.expr("int", d), "(%s)::date" % self.expr("ts", d),
            "(%s)::date" % self.expr("text", d), "date_trunc('month', %s)::date" % self.expr("ts", d),
            "to_date(%s, 'YYYY-MM-DD')" % self.expr("text", d), self.generic("date", d)])

    def e_ts(self, d):
        x = self.expr("ts", d)
        return self.pick([
            "date_trunc(%s, %s)" % (self.pick(TRUNC_UNITS), x), "(%s + %s)" % (x, self.expr("iv", d)),
            "(%s - %s)" % (x, self.expr("iv", d)), "(%s)::timestamp" % self.expr("date", d),
            "(%s)::timestamp" % self.expr("text", d), "date_bin('1 day', %s, '2000-01-01')" % x,
            self.generic("ts", d)])

    def e_tstz(self, d):
        x = self.expr("tstz", d)
        return self.pick(["date_trunc('day', %s)" % x, "(%s + %s)" % (x, self.expr("iv", d)),
                          self.generic("tstz", d)])

    def e_iv(self, d):
        return self.pick([
            "(%s - %s)" % (self.expr("ts", d), self.expr("ts", d)),
            "(%s * %s)" % (self.expr("iv", d), self.expr("flt", d)),
            "justify_days(%s)" % self.expr("iv", d), "age(%s, %s)" % (self.expr("ts", d), self.expr("ts", d)),
            self.generic("iv", d)])

    def e_jsonb(self, d):
        return self.pick(["(%s)->'a'" % self.expr("jsonb", d), self.generic("jsonb", d)])

    def e_arr(self, d):
        return self.pick(["ARRAY[%s, %s]" % (self.expr("int", d), self.expr("int", d)),
                          "(%s)[2:3]" % self.expr("arr", d), self.generic("arr", d)])

    def comparable(self, d):
        t = self.pick(["int", "num", "flt", "text", "date", "ts", "iv"])
        return self.expr(t, d), self.expr(t, d), t

    def e_bool(self, d):
        c = self.r.random()
        if c < 0.3:
            x, y, t = self.comparable(d)
            op = self.pick(["=", "<>", "<", "<=", ">", ">=", "IS DISTINCT FROM"])
            if t == "text" and self.r.random() < 0.3:
                y += self.pick([' COLLATE "C"', ' COLLATE "POSIX"'])
            return "(%s %s %s)" % (x, op, y)
        if c < 0.45:
            # parameters of text domains of different collations, compared:
            # the comparison's collation is undetermined (the first channel)
            cs = [i for i, (_, p) in enumerate(self.params) if p[0] == "text_c"]
            ps = [i for i, (_, p) in enumerate(self.params) if p[0] == "text_posix"]
            if cs and ps:
                return "($%d %s $%d)" % (self.pick(cs) + 1, self.pick(["=", "<", ">=", "<>"]),
                                         self.pick(ps) + 1)
        x = self.expr("text", d)
        if self.plain:
            return self.pick([
                "(%s IS NULL)" % self.expr(self.pick(list(COLUMNS)), d),
                "(%s AND %s)" % (self.expr("bool", d), self.expr("bool", d)),
                "CASE WHEN %s THEN %s ELSE %s END" % (self.extreme_pred(), self.expr("bool", d),
                                                     self.expr("bool", d)),
                "(%s IN (0, 42, -1, 2147483647))" % self.expr("int", d)])
        return self.pick([
            "(%s IS NULL)" % self.expr(self.pick(list(COLUMNS)), d),
            "(%s LIKE %s)" % (x, self.pick(["'A%'", "'%z%'", "'_l%'"])),
            "(%s ILIKE '%%E%%')" % x, "(%s ~ '^[A-Z]')" % x, "(%s ~* 'ice$')" % x,
            "(%s SIMILAR TO '%%(ic|zz)%%')" % x, "starts_with(%s, 'A')" % x,
            "(%s IN (0, 42, -1, 2147483647))" % self.expr("int", d),
            "(%s IN ('Alice', '', 'zz'))" % x,
            "(%s BETWEEN 10 AND 100)" % self.expr("int", d),
            "(NOT %s)" % self.expr("bool", d),
            "(%s AND %s)" % (self.expr("bool", d), self.expr("bool", d)),
            "(%s OR %s)" % (self.expr("bool", d), self.expr("bool", d)),
            "(%s @> ARRAY[1])" % self.expr("arr", d), "(%s ? 'a')" % self.expr("jsonb", d),
            "(%s @> '{\"a\": 1}')" % self.expr("jsonb", d),
            "((i4, i8) < (1, 2))", "(%s::sm > 0)" % self.expr("int", d),
            "(%s::text::int > 0)" % self.expr("int", d),
            self.generic("bool", d)])

    # a predicate that picks the extreme rows, to make them matter
    def extreme_pred(self):
        return self.pick(["i4 > 1000000", "i8 < -1000", "d > '3000-01-01'", "f8 = 'Infinity'",
                          "n > 1e100", "tc = 'zz'", "id >= 1000", "id = 1001"])


def aggregates(g, units):
    out = []
    for _ in range(g.r.randint(1, 3)):
        c = g.r.random()
        flt = ""
        if g.r.random() < 0.3:
            flt = " FILTER (WHERE %s)" % g.expr("bool", 2)
        if c < 0.35:
            out.append("dp_count(*)%s IS NOT NULL" % flt)
        elif c < 0.55:
            out.append("dp_count(%s)%s IS NOT NULL" % (g.expr(g.pick(list(COLUMNS)), 2), flt))
        elif c < 0.8:
            t = g.pick(["int", "num", "flt"])
            cast = "float8" if t == "flt" else "numeric"
            out.append("dp_sum((%s)::%s, 0, 100)%s > -1e300" % (g.expr(t, 2), cast, flt))
        else:
            out.append("dp_avg(%s::float8, 0, 100)%s IS NOT NULL" % (g.expr("int", 2), flt))
    return ", ".join(out)


def source(g, units):
    table = "tu" if units else "t"
    c = g.r.random()
    if c < 0.1 and not units:
        return table + " TABLESAMPLE dp_agg.secure_bernoulli (60)"
    if c < 0.15 and not units:
        return table + " TABLESAMPLE BERNOULLI (60) REPEATABLE (7)"
    if c < 0.25:
        return "(SELECT * FROM %s WHERE %s) s" % (table, g.expr("bool", 1))
    return table


def select(g, units):
    where = ""
    r = g.r.random()
    if r < 0.4:
        where = " WHERE " + g.expr("bool", 3)
    elif r < 0.7:
        where = " WHERE CASE WHEN %s THEN %s ELSE true END" % (g.extreme_pred(), g.expr("bool", 2))
    src = source(g, units)
    if g.r.random() < 0.4:
        t = g.pick(["int", "text", "date", "bool", "ts"])
        key = g.expr(t, 1)
        return "SELECT %s AS k, %s FROM %s%s GROUP BY 1" % (key, aggregates(g, units), src, where)
    return "SELECT %s FROM %s%s" % (aggregates(g, units), src, where)


def statement(rnd, units):
    """A statement: (kind, steps)."""
    c = rnd.random()
    if c < 0.35:
        # prepared: parameters of random types, extreme values
        ps = [rnd.choice(PARAM_TYPES) for _ in range(rnd.randint(1, 4))]
        if rnd.random() < 0.4:
            ps += [PARAM_TYPES[5], PARAM_TYPES[6]]   # text_c, text_posix
        g = Gen(rnd, [(p[1], p) for p in ps])
        body = select(g, units)
        used = [i for i in range(len(ps)) if ("$%d" % (i + 1)) in body]
        if not used:
            g = Gen(rnd)
            return "plain", [select(g, units)]
        n = max(used) + 1
        decl = ", ".join(ps[i][0] for i in range(n))
        steps = ["PREPARE q(%s) AS %s" % (decl, body)]
        for _ in range(2):
            args = ", ".join(rnd.choice(ps[i][2]) for i in range(n))
            steps.append("EXECUTE q(%s)" % args)
        steps.append("DEALLOCATE q")
        return "prepared", steps
    g = Gen(rnd)
    body = select(g, units)
    if c < 0.5:
        return "cursor", ["BEGIN", "DECLARE c CURSOR FOR " + body, "FETCH 1 FROM c",
                          "FETCH ALL FROM c", "CLOSE c", "COMMIT"]
    return "plain", [body]


# Settings: every setting the role can change that makes the server tell
# its client more, at its most verbose value (the server log, which the
# role cannot read, is not compared: log_min_messages and the like stay
# quiet, or the log would grow by gigabytes); the planner's choices that
# make it sort, spill and use parallel workers; and, less often, settings
# dp_agg refuses
VERBOSE = [
    "SET client_min_messages = debug5",
    "SET trace_sort = on",
    "SET trace_notify = on",
    "SET log_temp_files = 0",
    "SET log_lock_waits = on",
    "SET log_parameter_max_length_on_error = -1",
    "SET gin_fuzzy_search_limit = 1",
]
SOMETIMES = [
    ("SET log_min_duration_statement = 0", 0.3), ("SET log_duration = on", 0.2),
    ("SET log_parser_stats = on", 0.2), ("SET log_planner_stats = on", 0.2),
    ("SET debug_print_plan = on", 0.05), ("SET debug_print_parse = on", 0.03),
    ("SET debug_print_rewritten = on", 0.03), ("SET debug_pretty_print = off", 0.5),
    ("SET enable_hashagg = off", 0.5), ("SET work_mem = '64kB'", 0.5),
    ("SET hash_mem_multiplier = 1", 0.3), ("SET enable_seqscan = off", 0.15),
    ("SET jit = on; SET jit_above_cost = 0; SET jit_inline_above_cost = 0", 0.05),
    ("SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; "
     "SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0", 0.1),
    ("SET plan_cache_mode = force_generic_plan", 0.5),
    ("SET log_executor_stats = on", 0.03), ("SET log_statement_stats = on", 0.02),
    ("SET temp_file_limit = 0", 0.03),
    ("SET dp_agg.max_rows_contributed = 2", 0.3),
]
GRANTED = ["log_min_duration_statement", "log_duration", "log_temp_files", "log_lock_waits",
           "log_parser_stats", "log_planner_stats", "log_executor_stats", "log_statement_stats",
           "temp_file_limit"]


def settings(rnd):
    out = list(VERBOSE)
    for s, p in SOMETIMES:
        if rnd.random() < p:
            out.append(s)
    return out
