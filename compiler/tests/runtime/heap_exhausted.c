/* A Cilk function that keeps every block it allocates: with a small device heap the run stops,
 * naming the function, the request and the heap's size, and how to raise it. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

long hoard(long n) {
  if (n == 0) return 0;
  long *keep = malloc(4096 * sizeof(long));
  keep[0] = n;
  long a = cilk_spawn hoard(n - 1);
  long b = cilk_spawn hoard(n - 1);
  cilk_sync;
  return a + b + keep[0];
}

int main(int argc, char *argv[]) {
  long n = argc > 1 ? atol(argv[1]) : 12;
  printf("hoard(%ld) = %ld\n", n, hoard(n));
  return 0;
}
