/* `#pragma chanflow serial_below(EXPR)`: a Cilk function's tasks run its serial form where EXPR
 * of its parameters holds, at any depth; the other function's from the run's depth. The output
 * is the serial elision's whatever the condition, depth or capacity.
 * usage: serial_below N (fib of 0..N, and a count over 0..N*1000 cut at ranges under 64) */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

#pragma chanflow serial_below(n < 16 && n % 3 != 0)
long fib(long n) {
  if (n < 2) return n;
  long x = cilk_spawn fib(n - 1);
  long y = fib(n - 2);
  cilk_sync;
  return x + y;
}

#pragma chanflow serial_below((hi - lo) < 64)
long count(long lo, long hi) {
  if (hi - lo < 2) return (hi - lo) * (lo % 7);
  long mid = lo + (hi - lo) / 2;
  long a = cilk_spawn count(lo, mid);
  long b = count(mid, hi);
  cilk_sync;
  return a + b;
}

long sum_fibs(long n) {
  if (n < 0) return 0;
  long a = cilk_spawn fib(n);
  long b = sum_fibs(n - 1);
  cilk_sync;
  return a + b;
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 20;
  printf("sum of fib(0..%ld) = %ld\n", n, sum_fibs(n));
  printf("count = %ld\n", count(0, n * 1000));
  return 0;
}
