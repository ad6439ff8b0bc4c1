/* <math.h> and abs in Cilk functions and their helpers, with the arguments C converts: an int to
 * exp's double (heat's `exp(-2 * (t))` with t = 0), a float to sqrt's double, sinf and fabsf on
 * floats, ldexp's int, fmod and pow on mixed types; and abs, labs and llabs whose results a
 * difference and a comparison with 0 read as signed (OpenCL C's abs returns an unsigned type).
 * Double results are printed to 12 significant digits, float ones to 6: OpenCL C's math functions
 * may differ from glibc's by a few units in the last place, which these digits do not show, while
 * a function computed in float where C computes it in double changes the eighth digit. */
#include <cilk/cilk.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double wave(int t, float x) { return exp(-2 * (t)) * sin(x) + sqrt(x) + ldexp(x, t % 4); }

static float narrow(float x) { return sinf(x) * fabsf(x - 2.0f) + floorf(x * 0.5f); }

static long spread(int a, int b, long c) {
  /* negative when b's distance from 0 passes a's: read as signed, as C's abs gives it */
  long d = abs(a) - abs(b);
  if (d < 0) d = -2 * d;
  return d + labs(c - 1000) - llabs(-3LL) + (abs(a - b) < 0 ? 1000000 : 0);
}

double mix(int lo, int hi) {
  if (hi - lo <= 4) {
    double s = 0;
    for (int i = lo; i < hi; i++)
      s += wave(i % 3, (float)i * 0.25f) + spread(i - 50, 100 - i, i * 7) * 1e-3 +
           fmod(i * 1.5, 7) + pow(i % 5, 0.5f) + atan2(i, 10) + fmax(i, 3.5) + cbrt(i) + log1p(i) + round(i * 0.3);
    return s;
  }
  int mid = lo + (hi - lo) / 2;
  double a = cilk_spawn mix(lo, mid);
  double b = mix(mid, hi);
  cilk_sync;
  return a + b;
}

float narrow_sum(int n) {
  if (n < 4) return narrow((float)n + 0.5f);
  float a = cilk_spawn narrow_sum(n - 1);
  float b = narrow_sum(n - 2);
  cilk_sync;
  return a + b;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 200;
  printf("mix(0, %d) = %.12g\n", n, mix(0, n));
  printf("narrow_sum(12) = %.5g\n", narrow_sum(12));
  printf("wave(0, 0.5) = %.12g, narrow(7) = %.6g, spread(-5, 9, 3) = %ld\n", wave(0, 0.5f), narrow(7), spread(-5, 9, 3));
  return 0;
}
