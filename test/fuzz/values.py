"""The argument values of the fuzz test, by SQL type, as SQL expressions.

Each type has two lists:

  * FULL: every value that each argument takes once, the others held at a
    valid base value (one factor at a time);
  * PAIRS: a smaller set of representatives (every kind of extreme at least
    once) from which a pairwise covering set of calls is built: every pair
    of values of every two arguments occurs in some call.

Base values (a call that is expected to succeed) come from the argument's
name (BASE_BY_NAME), else from its type (BASE_BY_TYPE): so a new function
is fuzzed without any change here, and better once its argument names are
listed.
"""

FLOAT8_MAX = "1.7976931348623157e308"

# double precision: 0, +-tiny, +-huge, the integer limits, NaN, +-Infinity,
# NULL, and a few ordinary values that make other arguments valid.
FLOAT8_FULL = [
    "0", "-0", "5e-324", "-5e-324", "1e-300", "-1e-300", "1e-18", "-1e-18",
    "1e17", "-1e17", "1e300", "-1e300", FLOAT8_MAX, "-" + FLOAT8_MAX,
    "2147483647", "-2147483648", "9223372036854775807", "-9223372036854775808",
    "NaN", "Infinity", "-Infinity", "1", "0.5", "0.95", "1e-6", "1.0000001",
    None,
]
FLOAT8_PAIRS = [
    "0", "5e-324", "1e-18", "-1e-18", "1e17", "1e300", FLOAT8_MAX,
    "-" + FLOAT8_MAX, "NaN", "Infinity", "-Infinity", "0.5", "1e-6", None,
]

REAL_FULL = ["0", "1e-45", "-1e-45", "1e-38", "3.4028235e38", "-3.4028235e38",
             "NaN", "Infinity", "-Infinity", "1", "10", None]
REAL_PAIRS = ["0", "1e-45", "3.4028235e38", "-3.4028235e38", "NaN", "Infinity",
              "-Infinity", "10", None]

INT2_FULL = ["0", "1", "-1", "10", "32767", "-32768", None]
INT4_FULL = ["0", "1", "-1", "10", "1000", "100000", "2147483647", "-2147483648", None]
INT8_FULL = ["0", "1", "-1", "10", "2147483648", "9223372036854775807",
             "-9223372036854775808", None]

NUMERIC_FULL = [
    "0", "-0", "1.5", "-1.5", "1e-300", "-1e-300", "1e-16383", "1e17",
    "1e300", "-1e300", "9.99e131071", "-9.99e131071",
    "123456789012345678901234567890.123456789", "NaN", "Infinity",
    "-Infinity", None,
]
NUMERIC_PAIRS = ["0", "1e-16383", "1e300", "-9.99e131071", "NaN", "Infinity", "-Infinity", "1.5", None]

# Text: empty, garbage, valid mechanism and accounting names, statements
# for preview (valid, invalid, extreme), and a 100,000-character string.
TEXT_FULL = [
    "", "garbage", "laplace", "gaussian", "LAPLACE", "laplace ", "basic", "rdp",
    "SELECT dp_count(*) FROM fz.t",
    "SELECT dp_count(i, 1e-18) FROM fz.t",
    "SELECT dp_sum(f, -1.7976931348623157e308, 1.7976931348623157e308, 1e-300, 0.999999) FROM fz.t",
    "SELECT dp_avg(n, -9.99e131071, 9.99e131071, 1e17) FROM fz.t",
    "SELECT 1",
    "SELECT dp_count(i, 1) FROM fz.t; SELECT 1",
    "SELECT (",
    None,
]
TEXT_EXPRESSIONS = ["repeat('x', 100000)"]
TEXT_PAIRS = ["", "garbage", "laplace", "gaussian", "rdp",
              "SELECT dp_count(i, 1e-18) FROM fz.t", None]

# double precision[]: NULL, empty, NULL elements, 2-D, 100,000 elements
# (ordinary, extreme and NULL ones).
N_BIG = 100000
FLOAT8_ARRAY_EXPRESSIONS = [
    "NULL::float8[]",
    "'{}'::float8[]",
    "'{2}'::float8[]",
    "'{2,4,8}'::float8[]",
    "'{2,NULL,8}'::float8[]",
    "'{{2,3},{4,5}}'::float8[]",
    "'{1.0000001,NaN,Infinity,-Infinity,5e-324,1e300}'::float8[]",
    "'{0,-1,1}'::float8[]",
    "'{0,0.25,0.5,0.75,1}'::float8[]",
    "'{0.9,0.1,0.5,0.5}'::float8[]",
    "array_fill(2::float8, ARRAY[%d])" % N_BIG,
    "array_fill(%s::float8, ARRAY[%d])" % (FLOAT8_MAX, N_BIG),
    "array_fill(1.0000001::float8, ARRAY[%d])" % N_BIG,
    "array_fill('NaN'::float8, ARRAY[%d])" % N_BIG,
    "array_fill(NULL::float8, ARRAY[%d])" % N_BIG,
    "array_cat(array_fill(1e300::float8, ARRAY[%d]), ARRAY[5e-324::float8])" % (N_BIG - 1),
]
FLOAT8_ARRAY_PAIRS = [0, 1, 4, 5, 6, 11, 14, 8]     # indices into the list above

# regrole: the current role, another existing role, a name that does not
# exist (an input error), OIDs of no role, NULL.
OTHER_ROLE = "dp_fuzz_other"
REGROLE_EXPRESSIONS = [
    "current_user::regrole",
    "'%s'::regrole" % OTHER_ROLE,
    "'dp_fuzz_no_such_role'::regrole",
    "0::oid::regrole",
    "4294967295::oid::regrole",
    "NULL::regrole",
]

# types no function takes today, so that a new function is fuzzed at once
REGCLASS_EXPRESSIONS = [
    "'fz.t'::regclass",
    "'pg_class'::regclass",
    "'fz.dp_fuzz_no_such_table'::regclass",
    "0::oid::regclass",
    "4294967295::oid::regclass",
    "NULL::regclass",
]
REGPROCEDURE_EXPRESSIONS = [
    "'pg_catalog.int4eq(integer, integer)'::regprocedure",
    "'pg_catalog.float8abs(double precision)'::regprocedure",
    "'pg_catalog.random()'::regprocedure",
    "'dp_agg.protect(regclass)'::regprocedure",
    "0::oid::regprocedure",
    "4294967295::oid::regprocedure",
    "NULL::regprocedure",
]
# bytea: the key sets of public domains (keyset.c), which must only fail to
# decode: empty, short, a header alone, a header announcing 10,000,000 keys
# of 64 columns, or of one int4 column, with no data, a valid set of three
# int4 keys, the same with a byte more, 100,000 bytes of 0xff, NULL
KEYSET_INT4_3 = ("314b504401000000010000000300000017000000ffffffff00000000"
                 "000400000000000001000400000000000002000400000000000005")
BYTEA_EXPRESSIONS = [
    "'\\x'::bytea",
    "'\\x00'::bytea",
    "'\\x314b5044'::bytea",
    "'\\x314b50444000000040000000809698000000000000000000'::bytea",
    "'\\x314b5044010000000100000080969800' || '\\x17000000ffffffff00000000'::bytea",
    "'\\x%s'::bytea" % KEYSET_INT4_3,
    "'\\x%s00'::bytea" % KEYSET_INT4_3,
    "decode(repeat('ff', 100000), 'hex')",
    "NULL::bytea",
]
# bigint[]: the counts of top_k_sample
BIGINT_ARRAY_EXPRESSIONS = [
    "NULL::bigint[]",
    "'{}'::bigint[]",
    "'{6,4,4,0}'::bigint[]",
    "'{1,NULL,3}'::bigint[]",
    "'{{1,2},{3,4}}'::bigint[]",
    "'{9223372036854775807,-9223372036854775808,0}'::bigint[]",
    "array_fill(1::bigint, ARRAY[1000])",
    "array_fill(1::bigint, ARRAY[%d])" % N_BIG,
]
BOOLEAN_EXPRESSIONS = ["true", "false", "NULL::boolean"]
JSONB_EXPRESSIONS = ["'{}'::jsonb", "'null'::jsonb", "'[]'::jsonb", "'{\"epsilon\": 1e400}'::jsonb",
                     "(SELECT jsonb_agg(g) FROM generate_series(1, %d) g)" % N_BIG, "NULL::jsonb"]


def _lit(values, sqltype):
    return ["NULL::%s" % sqltype if v is None else "'%s'::%s" % (v.replace("'", "''"), sqltype)
            for v in values]


def _by_index(exprs, idx):
    return [exprs[i] for i in idx]


# type name (format_type) -> (full list, pairwise list), SQL expressions
TYPES = {
    "double precision": (_lit(FLOAT8_FULL, "float8"), _lit(FLOAT8_PAIRS, "float8")),
    "real": (_lit(REAL_FULL, "real"), _lit(REAL_PAIRS, "real")),
    "smallint": (_lit(INT2_FULL, "int2"), _lit(INT2_FULL, "int2")),
    "integer": (_lit(INT4_FULL, "int4"), _lit(INT4_FULL, "int4")),
    "bigint": (_lit(INT8_FULL, "int8"), _lit(INT8_FULL, "int8")),
    "numeric": (_lit(NUMERIC_FULL, "numeric"), _lit(NUMERIC_PAIRS, "numeric")),
    "text": (_lit(TEXT_FULL, "text") + TEXT_EXPRESSIONS, _lit(TEXT_PAIRS, "text")),
    "double precision[]": (FLOAT8_ARRAY_EXPRESSIONS,
                           _by_index(FLOAT8_ARRAY_EXPRESSIONS, FLOAT8_ARRAY_PAIRS)),
    "regrole": (REGROLE_EXPRESSIONS, REGROLE_EXPRESSIONS),
    "regclass": (REGCLASS_EXPRESSIONS, REGCLASS_EXPRESSIONS),
    "regprocedure": (REGPROCEDURE_EXPRESSIONS, REGPROCEDURE_EXPRESSIONS),
    "boolean": (BOOLEAN_EXPRESSIONS, BOOLEAN_EXPRESSIONS),
    "jsonb": (JSONB_EXPRESSIONS, JSONB_EXPRESSIONS),
    "bytea": (BYTEA_EXPRESSIONS, BYTEA_EXPRESSIONS),
    "bigint[]": (BIGINT_ARRAY_EXPRESSIONS, BIGINT_ARRAY_EXPRESSIONS),
}

# valid values by argument name, then by type
BASE_BY_NAME = {
    "epsilon": "1::float8",
    "delta": "1e-6::float8",
    "sensitivity": "1::float8",
    "sigma": "1::float8",
    "rate": "0.5::float8",
    "noise_multiplier": "1::float8",
    "confidence": "0.95::float8",
    "noise_scale": "1::float8",
    "scale": "1::float8",
    "n": "1000::int4",
    "steps": "10::int4",
    "k": "0::int4",
    "value": "1.5::numeric",
    "mechanism": "'laplace'::text",
    "accounting": "'basic'::text",
    "query": "'SELECT dp_count(*) FROM fz.t'::text",
    "role": "'%s'::regrole" % OTHER_ROLE,
    "orders": "'{2,4,8}'::float8[]",
    "rdp": "'{0.1,0.2,0.3}'::float8[]",
}
BASE_BY_TYPE = {
    "double precision": "1::float8",
    "real": "1::real",
    "smallint": "1::int2",
    "integer": "1::int4",
    "bigint": "1::int8",
    "numeric": "1::numeric",
    "text": "'laplace'::text",
    "double precision[]": "'{2,4,8}'::float8[]",
    "regrole": "current_user::regrole",
    "regclass": "'fz.t'::regclass",
    "regprocedure": "'pg_catalog.float8abs(double precision)'::regprocedure",
    "boolean": "true",
    "jsonb": "'{}'::jsonb",
    "bytea": "'\\x%s'::bytea" % KEYSET_INT4_3,
    "bigint[]": "'{6,4,4,0}'::bigint[]",
}

# base fractions of the quantile aggregates, by the type of p
P_BASE = {"double precision": "0.5::float8", "double precision[]": "'{0.1,0.5,0.9}'::float8[]"}

# base bounds of the aggregates (lower, upper), by the value's type
AGG_BOUNDS = {
    "smallint": ("0::int2", "10::int2"),
    "integer": ("0::int4", "10::int4"),
    "bigint": ("0::int8", "10::int8"),
    "real": ("0::real", "10::real"),
    "double precision": ("0::float8", "10::float8"),
    "numeric": ("0::numeric", "10::numeric"),
}

# The table the aggregates run over: one column per type, a few ordinary
# rows, the extremes of every type, and a row of NULLs.
TABLE_SQL = """
CREATE SCHEMA fz;
CREATE TABLE fz.t (s smallint, i integer, b bigint, r real, f double precision,
                   n numeric, x text);
INSERT INTO fz.t VALUES
  (1, 1, 1, 1, 1, 1, 'a'), (2, 2, 2, 2, 2, 2, 'b'), (3, 3, 3, 3, 3, 3, 'c'),
  (32767, 2147483647, 9223372036854775807, 3.4028235e38, 1.7976931348623157e308,
   9.99e131071, repeat('x', 10000)),
  (-32768, -2147483648, -9223372036854775808, -3.4028235e38, -1.7976931348623157e308,
   -9.99e131071, ''),
  (0, 0, 0, 'NaN', 'NaN', 'NaN', 'NaN'),
  (0, 0, 0, 'Infinity', 'Infinity', 'Infinity', 'Infinity'),
  (0, 0, 0, '-Infinity', '-Infinity', '-Infinity', '-Infinity'),
  (0, 0, 0, 1e-45, 5e-324, 1e-16383, NULL),
  (NULL, NULL, NULL, NULL, NULL, NULL, NULL);
CREATE TABLE fz.empty (LIKE fz.t);
"""

# column of fz.t holding each type (anyelement: every column)
COLUMNS = {"smallint": "s", "integer": "i", "bigint": "b", "real": "r",
           "double precision": "f", "numeric": "n", "text": "x"}


def full(sqltype):
    return TYPES[sqltype][0] if sqltype in TYPES else ["NULL::%s" % sqltype]


def pairs(sqltype):
    return TYPES[sqltype][1] if sqltype in TYPES else ["NULL::%s" % sqltype]


def base(name, sqltype):
    if name in BASE_BY_NAME and sqltype in TYPES and \
            BASE_BY_NAME[name].endswith("::" + _cast_name(sqltype)):
        return BASE_BY_NAME[name]
    return BASE_BY_TYPE.get(sqltype, "NULL::%s" % sqltype)


def _cast_name(sqltype):
    return {"double precision": "float8", "integer": "int4", "smallint": "int2",
            "bigint": "int8", "double precision[]": "float8[]"}.get(sqltype, sqltype)
