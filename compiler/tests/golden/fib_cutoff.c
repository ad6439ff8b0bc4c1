/* The golden test's input for a serial cut-off (fib_cutoff.flags: --serial-cutoff=4): fib spawns
 * only itself, so it has a serial form, fib__serial, which its tasks from depth 4 on run;
 * sum_fibs spawns fib as well as itself, so it spawns at every depth. */
#include <cilk/cilk.h>
#include <stdio.h>

long fib(long n) {
  long x, y;
  if (n < 2) return n;
  x = cilk_spawn fib(n - 1);
  y = cilk_spawn fib(n - 2);
  cilk_sync;
  return x + y;
}

/* fib(lo) + ... + fib(hi - 1) */
long sum_fibs(long lo, long hi) {
  if (hi - lo == 1) return fib(lo);
  long mid = (lo + hi) / 2;
  long a = cilk_spawn sum_fibs(lo, mid);
  long b = sum_fibs(mid, hi);
  cilk_sync;
  return a + b;
}

int main(void) {
  printf("%ld %ld\n", fib(20), sum_fibs(0, 16));
  return 0;
}
