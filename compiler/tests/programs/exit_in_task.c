/* exit and abort in device code, as classic programs call them on an error path (cholesky's
 * "matrix is probably not numerically stable" then exit(9)): the process ends with that status,
 * having printed what it printed before the run, and what device code printed with fprintf to
 * stdout (OpenCL C's printf).
 * usage: exit_in_task N [BAD [abort]]: the walk's helper exits with status 3 (or aborts) where it
 * meets BAD. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int aborts;

static long leaf(int n, int bad) {
  if (n == bad) {
    if (aborts) abort();
    exit(3);
  }
  return n % 3 + 1;
}

long walk(int n, int bad, int top) {
  if (n == top) fprintf(stdout, "walk(%d) starts on the device\n", n);  /* once, between main's lines */
  if (n < 0) fprintf(stderr, "walk(%d): negative\n", n);                 /* never */
  if (n < 2) return leaf(n, bad);
  long a = cilk_spawn walk(n - 1, bad, top);
  long b = walk(n - 2, bad, top);
  cilk_sync;
  if (a + b < 0) exit(4);  /* never: a Cilk function's own exit */
  return a + b + leaf(n, bad);
}

int main(int argc, char **argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 20;
  const int bad = argc > 2 ? atoi(argv[2]) : -1;
  aborts = argc > 3 && strcmp(argv[3], "abort") == 0;
  setvbuf(stdout, NULL, _IOLBF, 0);  /* abort discards a buffer: each line is out before it */
  printf("walking %d\n", n);
  printf("walk(%d) = %ld\n", n, walk(n, bad, n));
  return 0;
}
