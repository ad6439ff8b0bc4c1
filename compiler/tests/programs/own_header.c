/* A Cilk program whose helpers, type and constants live in a header of its own (own_header.h),
 * compiled with a macro (-DSALT=...) that both its device code and its host code read. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

#include "own_header.h"

long weigh(range r) {
  if (r.hi - r.lo <= LEAF) return leaf_sum(r);
  const long mid = r.lo + (r.hi - r.lo) / 2;
  const range left = {r.lo, mid}, right = {mid, r.hi};
  long a = cilk_spawn weigh(left);
  long b = weigh(right);
  cilk_sync;
  return a + b;
}

int main(int argc, char *argv[]) {
  const long n = argc > 1 ? atol(argv[1]) : 1000;
  const range all = {0, n};
  printf("salt %d, modulus %ld: the weights of %ld items sum to %ld\n", SALT, kModulus, n, weigh(all));
  return 0;
}
