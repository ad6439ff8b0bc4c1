/* The golden test's input for `#pragma chanflow serial_below`: fib's tasks run its serial form
 * where n < SMALL (a macro, expanded), whatever the run's depth; count's from the depth the
 * runtime picks. */
#include <cilk/cilk.h>
#include <stdio.h>

#define SMALL 12

#pragma chanflow serial_below(n < SMALL)
long fib(long n) {
  if (n < 2) return n;
  long x = cilk_spawn fib(n - 1);
  long y = fib(n - 2);
  cilk_sync;
  return x + y;
}

long count(long lo, long hi) {
  if (hi - lo < 2) return hi - lo;
  long mid = lo + (hi - lo) / 2;
  long a = cilk_spawn count(lo, mid);
  long b = count(mid, hi);
  cilk_sync;
  return a + b;
}

int main(void) {
  printf("%ld %ld\n", fib(20), count(0, 1000));
  return 0;
}
