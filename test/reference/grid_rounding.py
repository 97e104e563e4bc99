#!/usr/bin/env python3
"""The rounding of a double row to its grid (src/noise/grid.h) against libm.

dp_round_float rounds every double row of dp_sum and dp_avg to the grid of
its release with dp_llrint, which on x86-64 is the instruction cvtsd2si
inline (what glibc's llrint runs) and elsewhere llrint itself.  The sums
are exact only if this rounding is llrint's, for every input: this compiles
the header as the extension does and compares dp_llrint and dp_round_float
with llrint, bit for bit, on random bit patterns (NaNs, infinities,
subnormals, both zeros), values near integers and halves (ties to even),
and magnitudes from 2^52 to beyond 2^63 (where the result is the integer
indefinite, INT64_MIN, for both).

    python3 test/reference/grid_rounding.py --check

Environment: PG_CONFIG (for the server's headers), CC (cc).
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from directed_rounding import HEAD, RNG, build  # noqa: E402  (the shared harness)

HARNESS = HEAD + '#include "grid.h"\n#define SEED 0x2545f4914f6cdd1dULL\n' + RNG + r"""
static double any_double(void)
{ uint64 u = next64(); double x; int64 i = (int64) (next64() >> 12) - (INT64CONST(1) << 51);
  switch (u % 6) {
    case 0: u = next64(); memcpy(&x, &u, 8); return x;                     /* any bits */
    case 1: return (double) i + 0.5;                                       /* ties */
    case 2: return nextafter((double) i + 0.5, (next64() & 1) ? INFINITY : -INFINITY);
    case 3: return ldexp((double) (next64() >> 11), (int) (next64() % 14)) * ((next64() & 1) ? 1 : -1); /* 2^52..2^66 */
    case 4: return ((double) (next64() >> 11) / 9007199254740992.0 - 0.5) * 1e6;
    default: { static const double s[] = {0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, INFINITY, -INFINITY, NAN,
                 9223372036854775807.0, -9223372036854775808.0, 4503599627370495.5, 1e-320};
               return s[next64() % (sizeof(s) / sizeof(s[0]))]; } } }

int main(int argc, char **argv)
{
  long n = atol(argv[1]), bad = 0;
  for (long i = 0; i < n; i++) {
    double x = any_double();
    int k = (int) (next64() % 40) - 20;
    double mult = ldexp(1.0, -k);
    if (dp_llrint(x) != llrint(x)) bad++;
    if (dp_round_float(x, mult, k) != llrint(x * mult)) bad++;
    if (dp_round_float(x, 0, k) != llrint(ldexp(x, -k))) bad++;
  }
  fprintf(stderr, "mismatches %ld of %ld x 3\n", bad, n);
  return bad != 0;
}
"""

if __name__ == "__main__":
    n = 50_000_000 if "--check" in sys.argv else 1_000_000
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(tmp, HARNESS, "grid")
        out = subprocess.run([exe, str(n)], capture_output=True, text=True)
        print(out.stderr.strip())
        if out.returncode != 0:
            sys.exit("dp_agg's rounding to the grid differs from llrint()")
        print(f"-- worst: 0 mismatches in {n} x 3 roundings")
