/* A program of two files, the way the classic Cilk examples are kept: the Cilk code here, a
 * host-only options parser with varargs beside it (getoptions.c). Compiled together:
 *   chanflowc several_files.c getoptions.c -o several_files
 * The Cilk function counts, for every n below the limit, the steps of its Collatz sequence. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

#include "getoptions.h"

static long steps(long n) {
  long s = 0;
  while (n != 1) {
    n = n % 2 ? 3 * n + 1 : n / 2;
    s++;
  }
  return s;
}

/* The total steps of lo .. hi - 1. */
long total_steps(long lo, long hi) {
  if (hi - lo <= 16) {
    long t = 0;
    for (long n = lo; n < hi; n++) t += steps(n);
    return t;
  }
  long mid = lo + (hi - lo) / 2;
  long a = cilk_spawn total_steps(lo, mid);
  long b = total_steps(mid, hi);
  cilk_sync;
  return a + b;
}

int main(int argc, char *argv[]) {
  int limit = 10000, verbose = 0;
  if (!get_options(argc, argv, "-n", INT_ARG, &limit, "-v", BOOL_ARG, &verbose, (const char *)0)) return 1;
  if (limit < 2) {
    fprintf(stderr, "several_files: -n must be at least 2\n");
    return 1;
  }
  printf("the Collatz sequences of 1 .. %d take %ld steps%s\n", limit - 1, total_steps(1, limit),
         verbose ? " in all" : "");
  return 0;
}
