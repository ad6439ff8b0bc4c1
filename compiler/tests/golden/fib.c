/* The golden test's input: thesis Figure 4-6's Fibonacci, as OpenCilk writes it. */
#include <cilk/cilk.h>
#include <stdio.h>

long fib(long n) {
  if (n < 2) return n;
  long x = cilk_spawn fib(n - 1);
  long y = fib(n - 2);
  cilk_sync;
  return x + y;
}

int main(void) {
  printf("%ld\n", fib(20));
  return 0;
}
