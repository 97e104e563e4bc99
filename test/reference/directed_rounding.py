#!/usr/bin/env python3
"""The directed rounding of src/noise/calibrate.h against libm.

dp_add_up, dp_mul_up, dp_mul_down and dp_div_up round one operation toward
+infinity (or zero) by moving the nearest result one step when its exact
error shows it on the wrong side; the step is taken on the bits of the
double (dp_next_up), not by nextafter().  Every price, Renyi DP curve and
charge goes through them, so a wrong step would understate a privacy cost.

This compiles the header's inline functions as the extension does
(-ffp-contract=off, as the Makefile sets) and compares them, bit for bit,
with the same operations stepped by libm's nextafter() on random doubles of
every kind (any bit pattern, so NaNs, infinities, subnormals and both
zeros; small integers times powers of two, whose products and sums are often
exact; uniform values; the extremes of the exponent range), and checks
the direction of each result against exact arithmetic on fractions.

    python3 test/reference/directed_rounding.py --check

Environment: PG_CONFIG (for the server's headers), CC (cc).
"""
import math
import os
import subprocess
import sys
import tempfile
from fractions import Fraction

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# what the C harnesses of test/reference share (grid_rounding.py too): the
# server's headers first, then the header tested, then libc's printf and a
# seeded splitmix64 generator of 64-bit words
HEAD = r"""
#include "postgres.h"
#include <stdio.h>
#include <stdlib.h>
"""

RNG = r"""
#undef printf
#undef fprintf
static uint64 state = SEED;
static uint64 next64(void)
{ uint64 z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL; z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31); }
"""

HARNESS = HEAD + '#include "calibrate.h"\n#define SEED 0x9e3779b97f4a7c15ULL\n' + RNG + r"""

static double o_add_up(double a, double b)
{ double s = a + b, bb = s - a, err = (a - (s - bb)) + (b - bb);
  if (err > 0 && isfinite(s)) s = nextafter(s, INFINITY); return s; }
static double o_mul_up(double a, double b)
{ double p = a * b; if (isfinite(p) && fma(a, b, -p) > 0) p = nextafter(p, INFINITY); return p; }
static double o_mul_down(double a, double b)
{ double p = a * b; if (isfinite(p) && fma(a, b, -p) < 0) p = nextafter(p, 0.0); return p; }
static double o_div_up(double a, double b)
{ double q = a / b; if (isfinite(q) && fma(-q, b, a) > 0) q = nextafter(q, INFINITY); return q; }

static double any_double(void)
{ uint64 u = next64(); double x;
  switch (u % 6) {
    case 0: u = next64(); memcpy(&x, &u, 8); return x;                /* any bits */
    case 1: return ldexp((double) (next64() % 4096), (int) (next64() % 2200) - 1100);
    case 2: return ((double) (next64() >> 11) / 9007199254740992.0) * ((next64() & 1) ? 1 : -1);
    case 3: u = next64() & 0x800fffffffffffffULL; memcpy(&x, &u, 8); return x;  /* subnormal */
    case 4: return ldexp((double) (next64() >> 11), (int) (next64() % 2150) - 1127);
    default: return (next64() & 1) ? 0.0 : -0.0; } }
static int same(double a, double b) { return memcmp(&a, &b, 8) == 0 || (isnan(a) && isnan(b)); }

#define SAMPLE 100000
int main(int argc, char **argv)
{
  long n = atol(argv[1]), bad = 0;
  for (long i = 0; i < n; i++) {
    double a = any_double(), b = any_double(), pa = fabs(a), pb = fabs(b);
    /* nextafter() where the fma error is exact (the header's DP_EXACT_ERROR_MIN) */
    int wide = (pa * pb >= 0x1p-950 || pa == 0 || pb == 0) && isfinite(pa * pb);
    if (!same(o_add_up(a, b), dp_add_up(a, b))) bad++;
    if (wide && !same(o_mul_up(pa, pb), dp_mul_up(pa, pb))) bad++;
    if (wide && !same(o_mul_down(pa, pb), dp_mul_down(pa, pb))) bad++;
    if (pb > 0 && (pa >= 0x1p-950 || pa == 0) && pa / pb >= 0x1p-950 && isfinite(pa / pb)
        && !same(o_div_up(pa, pb), dp_div_up(pa, pb))) bad++;
    if (i < SAMPLE && isfinite(a) && isfinite(b))   /* a sample for the exact check */
      printf("%a %a %a %a %a %a\n", a, b, dp_add_up(a, b), dp_mul_up(pa, pb),
             dp_mul_down(pa, pb), pb > 0 ? dp_div_up(pa, pb) : 0.0);
  }
  fprintf(stderr, "mismatches %ld of %ld\n", bad, n);
  return bad != 0;
}
"""


def build(tmp, source=None, name="rounding"):
    """compile a harness as the extension is compiled (-ffp-contract=off, the
    Makefile's), against the server's headers and src/noise; the executable"""
    pg_config = os.environ.get("PG_CONFIG", "pg_config")
    inc = subprocess.run([pg_config, "--includedir-server"], capture_output=True, text=True,
                         check=True).stdout.strip()
    src = os.path.join(tmp, name + ".c")
    exe = os.path.join(tmp, name)
    with open(src, "w") as f:
        f.write(HARNESS if source is None else source)
    subprocess.run([os.environ.get("CC", "cc"), "-O2", "-ffp-contract=off", "-I", inc,
                    "-I", os.path.join(TOP, "src", "noise"), "-o", exe, src, "-lm"], check=True)
    return exe


def directed(exact, up):
    """the double nearest to exact on its upper (up) or lower side"""
    big = Fraction(sys.float_info.max)
    if exact > big:
        return math.inf if up else sys.float_info.max
    if exact < -big:
        return -sys.float_info.max if up else -math.inf
    c = float(exact)                    # int / int: correctly rounded
    if up and Fraction(c) < exact:
        c = math.nextafter(c, math.inf)
    if not up and Fraction(c) > exact:
        c = math.nextafter(c, -math.inf)
    return c


def exact_direction(lines):
    """each sampled result against exact arithmetic: the directed rounding
    of the exact value, or one step beyond it where the result is so small
    that the header steps without looking (DP_EXACT_ERROR_MIN)"""
    checked = 0
    for line in lines:
        a, b, s, mu, md, q = (float.fromhex(x) for x in line.split())
        fa, fb = Fraction(a), Fraction(b)
        pa, pb = abs(fa), abs(fb)
        checks = [(s, fa + fb, True, False), (mu, pa * pb, True, False),
                  (md, pa * pb, False, False)]
        if pb > 0:
            # a quotient steps without looking when its dividend is tiny too
            checks.append((q, pa / pb, True, pa < 2 ** -940))
        for got, exact, up, tiny_input in checks:
            want = directed(exact, up)
            if math.isinf(want) or math.isinf(got):
                if not up and math.isinf(got):
                    sys.exit(f"rounded down to infinity: {line}")
                continue
            beyond = math.nextafter(want, math.inf if up else -math.inf)
            tiny = tiny_input or abs(want) < 2.0 ** -940
            if got != want and not (tiny and got == beyond):
                sys.exit(f"{line}: got {got!r}, the directed rounding is {want!r}")
            checked += 1
    return checked


if __name__ == "__main__":
    n = 20_000_000 if "--check" in sys.argv else 1_000_000
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(tmp)
        out = subprocess.run([exe, str(n)], capture_output=True, text=True)
        print(out.stderr.strip())
        if out.returncode != 0:
            sys.exit("dp_agg's directed rounding differs from nextafter()")
        checked = exact_direction(out.stdout.splitlines())
        print(f"-- worst: 0 mismatches in {n} x 4 operations; {checked} results checked exactly")
