// A program whose compiled form gives a wrong answer and says so, exiting 1, where its serial
// elision prints the right one: the compiled soak must count every run of it as a failure (a
// wrong result), never as a refusal, whatever the runtime prints on stderr (CHANFLOW_STATS=1
// closes each run with a "chanflow: " line).
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

long sum(long lo, long hi) {
  if (hi - lo == 1) {
#ifdef __chanflowc__
    return lo + 1;  // the mistake only the compiled form makes
#else
    return lo;
#endif
  }
  long mid = lo + (hi - lo) / 2;
  long a = cilk_spawn sum(lo, mid);
  long b = sum(mid, hi);
  cilk_sync;
  return a + b;
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 100;
  long s = sum(0, n);
  if (s != n * (n - 1) / 2) {
    printf("NOT summed: %ld\n", s);
    return 1;
  }
  printf("summed: %ld\n", s);
  return 0;
}
