/* Fibonacci, the classic Cilk benchmark (thesis Figure 4-6, fib(0) = 0 added), in OpenCilk's
 * spelling.
 *
 * chanflow compiles this file two ways: as plain C with the keywords defined away (its serial
 * elision, chanflow's `serial` implementation and the reference), and by hand into the channel-flow
 * graph of fib_cilk.cl (DESIGN.md decision 8), which chanflowc will emit from this source. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

long fib(long n) {
  if (n <= 2) return n == 0 ? 0 : 1;
  long x = cilk_spawn fib(n - 1);
  long y = cilk_spawn fib(n - 2);
  cilk_sync;
  return x + y;
}

int main(int argc, char *argv[]) {
  long n = argc > 1 ? atol(argv[1]) : 30;
  printf("fib(%ld) = %ld\n", n, fib(n));
  return 0;
}
