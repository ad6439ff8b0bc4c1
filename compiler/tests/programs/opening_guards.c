/* Recursions whose bodies open with guards (`if (C) return E;`), which chanflowc runs at each call
 * on the call's arguments so that a call they end pushes no frame: several guards in a row, two
 * parameters, an enumerator, a value converted to the result's type, `&&` in a condition, a void
 * function's bare `return;`, a guard whose condition calls a function (not run at the call: it stops
 * the run of guards), a value that calls a helper and reads a constant, calls in a loop (the form
 * that resumes through the loop's head), a plain helper that calls itself, names the body declares
 * after its guards that would hide what a guard means at the call (an enumerator, a function:
 * those guards are not run at the calls), and a chain deeper than the private frames. Each runs as its serial form below the serial
 * depth and as tasks above it; the output is the serial elision's.
 * usage: opening_guards N */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

enum { kSmall = 3 };

/* Lattice paths with steps of 1 and 2 through a grid: three guards, two parameters, an enumerator. */
long paths(int a, unsigned char b) {
  if (a < 0) return 0;
  if (a == 0 && b == 0) return 1;
  if (a + b < kSmall) return b; /* an unsigned char as the long result */
  long x = cilk_spawn paths(a - 1, b);
  long y = cilk_spawn paths(a - 2, b > 0 ? b - 1 : 0);
  cilk_sync;
  return x + y + (b & 1);
}

static int small(long n) { return n < 4; }

/* A guard that calls a function is no guard run at the call; neither is one after it. */
long stairs(long n) {
  if (small(n)) return n;
  if (n == 4) return 5;
  long x = cilk_spawn stairs(n - 1);
  long y = cilk_spawn stairs(n - 3);
  cilk_sync;
  return x + y;
}

/* A void function: `return;` ends a call with nothing to write. */
void squares(long *out, long lo, long hi) {
  if (hi <= lo) return;
  if (hi - lo == 1) {
    out[lo] = lo * lo + 1;
    return;
  }
  long mid = lo + (hi - lo) / 2;
  cilk_spawn squares(out, lo, mid);
  cilk_spawn squares(out, mid, hi);
  cilk_sync;
}

/* A helper that calls itself (no spawn), its guards in braces. */
static long binom(int n, int k) {
  if (k == 0 || k == n) {
    return 1;
  }
  return binom(n - 1, k - 1) + binom(n - 1, k);
}

long binoms(int n, int k) {
  if (k < 0) return 0;
  long b = cilk_spawn binoms(n, k - 1);
  long a = binom(n, k);
  cilk_sync;
  return a + b;
}

static const long kScale = 3;
static long leaf_weight(long id) { return id % 7 + 1; }

/* Calls in a loop, after a guard whose value calls a helper and reads a constant. */
long tree(int depth, long id) {
  if (depth == 0) return leaf_weight(id) * kScale;
  long w[4];
  for (int q = 0; q < 4; q++) {
    w[q] = 0;
    if ((id + q) % 3 != 0) w[q] = cilk_spawn tree(depth - 1, id * 4 + q);
  }
  cilk_sync;
  return w[0] + 2 * w[1] + 3 * w[2] + 4 * w[3];
}

/* Locals declared after the guards with the names the guards use. */
long shadowed(int a) {
  if (a < kSmall) return a;
  long kSmall = 100;
  long x = cilk_spawn shadowed(a - 1);
  long y = cilk_spawn shadowed(a - 2);
  cilk_sync;
  return x + y + kSmall;
}

long weighed(int depth, long id) {
  if (depth == 0) return leaf_weight(id);
  long leaf_weight = id % 5;
  long a = cilk_spawn weighed(depth - 1, id * 2);
  long b = cilk_spawn weighed(depth - 1, id * 2 + 1);
  cilk_sync;
  return a + b + leaf_weight;
}

/* Deeper than the serial form's private frames: they spill to the heap and come back. */
long chain(long n) {
  if (n <= 0) return 0;
  if (n == 1) return 1;
  long r = cilk_spawn chain(n - 1);
  cilk_sync;
  return r + n % 7;
}

int main(int argc, char **argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 16;
  printf("paths(%d, %d) = %ld\n", n, n / 3, paths(n, (unsigned char)(n / 3)));
  printf("stairs(%d) = %ld\n", n + 6, stairs(n + 6));
  const long count = 3 * n + 5;
  long *out = malloc(sizeof(long) * count);
  for (long i = 0; i < count; ++i) out[i] = -1;
  squares(out, 0, count);
  long sum = 0;
  for (long i = 0; i < count; ++i) sum += out[i] * (i + 1);
  printf("squares(%ld) = %ld\n", count, sum);
  free(out);
  printf("binoms(%d) = %ld\n", n, binoms(n, n / 2));
  printf("tree(%d) = %ld\n", n / 3 + 2, tree(n / 3 + 2, 1));
  printf("shadowed(%d) = %ld\n", n, shadowed(n));
  printf("weighed(%d) = %ld\n", n / 2, weighed(n / 2, 1));
  printf("chain(%d) = %ld\n", 20 * n, chain(20 * n));
  return 0;
}
