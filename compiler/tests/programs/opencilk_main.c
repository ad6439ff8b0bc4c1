/* An OpenCilk program's main as the benchmark apps write it: <cilk/cilk_api.h> for the worker
 * count, <cilk/cilk_stub.h> under -DSERIAL for a build without Cilk. Sums the digits of 1 .. n. */
#include <stdio.h>
#include <stdlib.h>

#ifdef SERIAL
#include <cilk/cilk_stub.h>
#else
#include <cilk/cilk.h>
#include <cilk/cilk_api.h>
#endif

static long digit_sum(long n) {
  long s = 0;
  for (; n > 0; n /= 10) s += n % 10;
  return s;
}

long digits(long lo, long hi) {
  if (hi - lo <= 32) {
    long s = 0;
    for (long n = lo; n < hi; n++) s += digit_sum(n);
    return s;
  }
  long mid = lo + (hi - lo) / 2;
  long a = cilk_spawn digits(lo, mid);
  long b = digits(mid, hi);
  cilk_sync;
  return a + b;
}

int main(int argc, char *argv[]) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
#ifndef SERIAL
  fprintf(stderr, "workers: %d\n", __cilkrts_get_nworkers());
#endif
  printf("the digits of 1 .. %ld sum to %ld\n", n, digits(1, n + 1));
  return 0;
}
