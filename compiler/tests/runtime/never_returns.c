/* A task that never returns (its loop's condition never fails): under the device scheduler the
 * run must say that its launch stopped moving, and end, rather than hang. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

long count_up(long from) {
  volatile long i = from;
  while (i >= from) i = i < 1000 ? i + 1 : from; /* stays in [from, 1000] for ever */
  return i;
}

long twice(long n) {
  long a, b;
  a = cilk_spawn count_up(n);
  b = n;
  cilk_sync;
  return a + b;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1;
  printf("%ld\n", twice(n));
  return 0;
}
