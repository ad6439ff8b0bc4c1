/* A helper that calls itself deeper than its explicit stack holds (64 frames unless chanflowc is
 * given --helper-stack): the run stops, naming the helper, the bound and the flag that raises it. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

static long depth(long n) {
  if (n == 0) return 0;
  return 1 + depth(n - 1);
}

long measure(long n) { return depth(n); }

int main(int argc, char *argv[]) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  long d = cilk_spawn measure(n);
  cilk_sync;
  printf("depth(%ld) = %ld\n", n, d);
  return 0;
}
