#!/usr/bin/env python3
"""Check dp_agg's error messages against PostgreSQL's error message style
guide (part of suite "graph" of test/run-suites.sh; also
`python3 test/check-messages.py`).

For every call of errmsg, errdetail, errhint and their variants in src/
(the C files and headers, in every folder):

 - The format string is literal: one or more adjacent string literals,
   string constants (#define NAME "text") and the printf length macros
   (INT64_FORMAT...).  A message assembled at run time ("%s" with a
   message built by psprintf, a variable, a conditional expression) can be
   neither translated nor checked by the compiler against its arguments.
   Inside a macro a format may also name a parameter of the macro (a macro
   pastes the literal its caller gives it); every use of that macro must
   then pass a literal there.
 - The primary message (errmsg) starts with a lower-case letter and does
   not end with a period; a detail or hint starts with an upper-case
   letter (or a name spelled as the system spells it) and ends with a
   period: complete sentences.
 - errmsg_internal and errdetail_internal (messages nobody translates), and
   a format that is only "%s" (a message formed elsewhere), are accepted
   only where the allow-list below names the file and the message or
   argument, with the reason (a can't-happen state, a relayed message).

Prints one line per problem and last "messages: N calls, M problems";
exits 1 if there is any problem.
"""
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(TOP, "src")

PRIMARY = {"errmsg", "errmsg_plural", "errmsg_internal"}
SENTENCE = {"errdetail", "errdetail_plural", "errdetail_internal",
            "errdetail_log", "errdetail_log_plural", "errhint",
            "errhint_plural"}
INTERNAL = {"errmsg_internal", "errdetail_internal"}
FORMAT_MACROS = {"INT64_FORMAT", "UINT64_FORMAT", "INT64_MODIFIER",
                 "PRId64", "PRIu64", "PRIx64"}

# The arguments of SQL functions and other names that start a detail in
# lower case, as they are spelled.
NAMES = {"epsilon", "delta", "k", "n", "order", "orders", "rdp", "rate",
         "draws", "steps", "scale", "sigma", "sigmas", "sensitivity",
         "confidence", "mechanism", "part", "lower", "dp_agg"}

# errmsg_internal and errdetail_internal (can't-happen states), and "%s"
# formats (a message formed elsewhere): (file name, in whichever folder of
# src/; start of the message or the argument given to "%s") -> why it is
# allowed.
ALLOW = {
    ("dist_exec.c", "why"):
        "the reason dp_fragment_fingerprint gives, one of the literal sentences "
        "of dist_fingerprint.c",
    ("dist_price.c", "why"):
        "the reason dp_fragment_fingerprint gives, one of the literal sentences "
        "of dist_fingerprint.c",
    ("dist_worker.c", "why"):
        "the reason dp_fragment_fingerprint gives, one of the literal sentences "
        "of dist_fingerprint.c",
    ("budget.c", "reply->message"):
        "the error the charger process met, relayed as it formed it",
    ("budget.c", "reply.message"):
        "the error the charger met while folding the journal for a reader, "
        "relayed as it formed it",
    ("protect_guard.c", "detail"):
        "check_function chooses its detail among literal sentences by the "
        "kind of the function refused (to become literal formats where raised)",
    ("row_trap.c", "dp_agg: a call on the rows of a protected relation failed"):
        "the error a trapped call on the rows is turned into, caught by the "
        "trap itself",
}

TOKEN = re.compile(r"""
    (?P<comment>/\*.*?\*/|//[^\n]*)
  | (?P<string>"(?:\\.|[^"\\\n])*")
  | (?P<char>'(?:\\.|[^'\\\n])*')
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>[0-9][A-Za-z0-9_.]*)
  | (?P<newline>\\?\n)
  | (?P<space>[ \t\r\f]+)
  | (?P<punct>.)
""", re.S | re.X)


def tokens(text):
    """(kind, value, line) of a C file; directives marked by kind 'hash'."""
    out = []
    line = 1
    at_line_start = True
    for m in TOKEN.finditer(text):
        kind = m.lastgroup
        value = m.group()
        if kind == "newline":
            if value == "\n":
                out.append(("eol", value, line))
                at_line_start = True
            line += 1
            continue
        if kind in ("comment", "space"):
            line += value.count("\n")
            continue
        if kind == "punct" and value == "#" and at_line_start:
            kind = "hash"
        at_line_start = False
        out.append((kind, value, line))
    return out


def unquote(lit):
    return bytes(lit[1:-1], "utf-8").decode("unicode_escape")


class Arg:
    """One argument of a call: its tokens."""

    def __init__(self, toks):
        self.toks = toks


def split_args(toks, i):
    """toks[i] is '('; return (list of argument token lists, index after ')')."""
    depth = 0
    args = [[]]
    j = i
    while j < len(toks):
        kind, value, _ = toks[j]
        if kind == "eol":
            j += 1
            continue
        if value in "([{" and kind == "punct":
            depth += 1
            if depth > 1:
                args[-1].append(toks[j])
        elif value in ")]}" and kind == "punct":
            depth -= 1
            if depth == 0:
                return args, j + 1
            args[-1].append(toks[j])
        elif value == "," and kind == "punct" and depth == 1:
            args.append([])
        else:
            args[-1].append(toks[j])
        j += 1
    return args, j


def main():
    files = []
    for root, _dirs, names in os.walk(SRC):
        for n in sorted(names):
            if n.endswith((".c", ".h")):
                files.append(os.path.join(root, n))
    files.sort()

    parsed = {}
    string_consts = {}      # NAME -> text of #define NAME "..."
    for path in files:
        with open(path, encoding="utf-8") as f:
            toks = tokens(f.read())
        parsed[path] = toks
        for k, (kind, value, _) in enumerate(toks):
            if kind == "hash" and k + 2 < len(toks) and toks[k + 1][1] == "define":
                name = toks[k + 2][1]
                body = []
                m = k + 3
                while m < len(toks) and toks[m][0] != "eol":
                    body.append(toks[m])
                    m += 1
                if body and all(t[0] == "string" or t[1] in FORMAT_MACROS for t in body) \
                        and any(t[0] == "string" for t in body):
                    string_consts[name] = "".join(unquote(t[1]) for t in body if t[0] == "string")

    problems = []
    calls = [0]
    # macro name -> {parameter position: [(function, template)]}: the
    # formats a macro builds from its parameters ('\0' where one goes)
    templates = {}
    macros = {}             # macro name -> parameter names

    def literal_text(arg, params):
        """The text of a literal format, None if it is not literal.  Within
        a macro, the macro's parameters give '\0' and their positions."""
        text = []
        used = []
        for kind, value, _ in arg:
            if kind == "string":
                text.append(unquote(value))
            elif kind == "ident" and value in string_consts:
                text.append(string_consts[value])
            elif kind == "ident" and value in FORMAT_MACROS:
                text.append("%ld")
            elif kind == "ident" and params is not None and value in params:
                used.append(params.index(value))
                text.append("\0")
            else:
                return None, []
        if not text:
            return None, []
        return "".join(text), used

    def macro_at(toks, k):
        """(name, parameters) of the #define toks[k] is in, or None."""
        j = k
        while j > 0 and toks[j - 1][0] != "eol":
            j -= 1
        if toks[j][0] == "hash" and j + 2 < len(toks) and toks[j + 1][1] == "define":
            name = toks[j + 2][1]
            if j + 3 < len(toks) and toks[j + 3][1] == "(" and toks[j + 3][2] == toks[j + 2][2]:
                args, _ = split_args(toks, j + 3)
                return name, ["__VA_ARGS__" if a and a[0][1] == "." else (a[0][1] if a else "")
                              for a in args]
            return name, []
        return None

    def scope(rel, name):
        """A macro of a .c file is its own; one of a header is everyone's."""
        return (None, name) if rel.endswith(".h") else (rel, name)

    def format_args(func, args):
        """The argument that is the format of a call of func."""
        return args[0] if args else []

    # pass 1: the message calls themselves
    for path in files:
        toks = parsed[path]
        rel = os.path.relpath(path, TOP)
        for k, (kind, value, line) in enumerate(toks):
            if not (kind == "ident" and (value in PRIMARY or value in SENTENCE)
                    and k + 1 < len(toks) and toks[k + 1][1] == "("):
                continue
            args, _ = split_args(toks, k + 1)
            if args == [[]]:
                continue
            calls[0] += 1
            macro = macro_at(toks, k)
            params = macro[1] if macro else None
            fmt = format_args(value, args)
            text, used = literal_text(fmt, params)
            where = "%s:%d" % (rel, line)
            if text is None:
                problems.append("%s: %s(...) has a format that is not a literal string: %s"
                                % (where, value, " ".join(t[1] for t in fmt)))
                continue
            if used:
                key = scope(rel, macro[0])
                macros[key] = params
                for pos in used:
                    templates.setdefault(key, {}).setdefault(pos, []).append((value, text, where))
                continue
            check_text(problems, where, rel, value, text, args)
            if value.endswith("_plural") and len(args) > 1 \
                    and literal_text(args[1], params)[0] is None:
                problems.append("%s: %s(...) has a plural format that is not a literal string: %s"
                                % (where, value, " ".join(t[1] for t in args[1])))

    # pass 2: the uses of macros that paste parameters into formats; a use
    # inside another macro that passes its own parameter on makes that
    # macro one too (to a fixed point)
    changed = True
    seen = set()
    while changed:
        changed = False
        for path in files:
            toks = parsed[path]
            rel = os.path.relpath(path, TOP)
            for k, (kind, value, line) in enumerate(toks):
                if kind != "ident":
                    continue
                mkey = (rel, value) if (rel, value) in templates else (None, value)
                if mkey not in templates:
                    continue
                if k > 0 and toks[k - 1][1] == "define":
                    continue
                if k + 1 >= len(toks) or toks[k + 1][1] != "(":
                    continue
                args, _ = split_args(toks, k + 1)
                params = macros[mkey]
                macro = macro_at(toks, k)
                for pos, uses in list(templates[mkey].items()):
                    if params[pos] == "__VA_ARGS__":
                        arg = args[pos] if pos < len(args) else []
                        rest = args[pos:]
                    else:
                        arg = args[pos] if pos < len(args) else []
                        rest = [arg]
                    text, used = literal_text(arg, macro[1] if macro else None)
                    key = (rel, k, pos)
                    where = "%s:%d" % (rel, line)
                    if text is None:
                        if key not in seen:
                            seen.add(key)
                            problems.append("%s: %s(...) argument %d is not a literal string: %s"
                                            % (where, value, pos + 1, " ".join(t[1] for t in arg)))
                        continue
                    for func, template, _ in uses:
                        full = template.replace("\0", text, 1)
                        if used:
                            entry = (func, full, where)
                            okey = scope(rel, macro[0])
                            lst = templates.setdefault(okey, {}).setdefault(used[0], [])
                            if entry not in lst:
                                lst.append(entry)
                                macros[okey] = macro[1]
                                changed = True
                        elif key not in seen or True:
                            if (key, func, full) not in seen:
                                seen.add((key, func, full))
                                check_text(problems, where, rel, func, full, rest)
                                calls[0] += 1

    for p in problems:
        print(p)
    print("messages: %d calls, %d problems" % (calls[0], len(problems)))
    return 1 if problems else 0


def check_text(problems, where, rel, func, text, args):
    """Style of one literal message."""
    if func in INTERNAL or text == "%s":
        # a message formed elsewhere, or one nobody translates: only where
        # the allow-list says why
        arg = "".join(t[1] for t in args[1]) if text == "%s" and len(args) > 1 else text
        if not any(os.path.basename(rel) == f and (arg.startswith(start) or text.startswith(start))
                   for (f, start) in ALLOW):
            problems.append("%s: %s(\"%s\"%s) is a message formed elsewhere or not translated, "
                            "and not in the allow-list of test/check-messages.py"
                            % (where, func, text, ", " + arg if text == "%s" else ""))
        return
    first_word = re.match(r"[^ ,:;]*", text).group()
    if func in PRIMARY:
        if first_word[:1].isupper() and not is_name(first_word):
            problems.append("%s: %s(\"%s\") starts with a capital letter" % (where, func, text))
        if text.endswith(".") and not text.endswith("..."):
            problems.append("%s: %s(\"%s\") ends with a period" % (where, func, text))
    else:
        if first_word[:1].islower() and not is_name(first_word):
            problems.append("%s: %s(\"%s\") is not a sentence: it starts with a lower-case letter"
                            % (where, func, text))
        if not text.rstrip().endswith((".", ".)", "?")):
            problems.append("%s: %s(\"%s\") is not a sentence: it does not end with a period"
                            % (where, func, text))


def is_name(word):
    """A word written as the system spells it (an SQL name, a setting, an
    argument, a proper name): its case is not the sentence's."""
    return (any(c in word for c in "_.()[]|%\"'")
            or word in NAMES
            or re.match(r"[A-Z]{2}|[A-Z][a-z]+[A-Z]", word) is not None)


if __name__ == "__main__":
    sys.exit(main())
