/* The golden test's input for a serial cut-off (fib_cutoff.flags: --serial-cutoff=4): fib spawns
 * only itself, so it has a serial form, fib__serial, which its tasks from depth 4 on run;
 * sum_fibs's form calls fib's; fib_into hands its children its locals' addresses, so it spawns at
 * every depth. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

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

void fib_into(long n, long *out) {
  long x, y;
  if (n < 2) {
    *out = n;
    return;
  }
  cilk_spawn fib_into(n - 1, &x);
  fib_into(n - 2, &y);
  cilk_sync;
  *out = x + y;
}

int main(void) {
  long *f = malloc(sizeof *f);
  fib_into(16, f);
  printf("%ld %ld %ld\n", fib(20), sum_fibs(0, 16), *f);
  free(f);
  return 0;
}
