/* A recursion that misses its base case: the run must say which function recursed how deep. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

long down(long n) {
  long a, b;
  a = cilk_spawn down(n - 1);
  b = down(n - 2);
  cilk_sync;
  return a + b;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 10;
  printf("%ld\n", down(n));
  return 0;
}
