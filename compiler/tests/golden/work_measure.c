/* Golden: what measures a Cilk function's work, by which its serial batches are grouped
 * (analysis/work_measure.cpp): a parameter that each spawn of the function itself makes smaller by
 * a constant step, and that its body never writes. */
#include <cilk/cilk.h>
#include <stdio.h>

/* Measured by `len` (a shift). */
long halves(const long *a, long len) {
  if (len < 2) return len ? a[0] : 0;
  long x = cilk_spawn halves(a, len >> 1);
  long y = cilk_spawn halves(a + (len >> 1), len >> 1);
  cilk_sync;
  return x + y;
}

/* Not measured: `n` is written before the spawns read it. */
long written(long n) {
  if (n < 3) return n;
  n -= 1;
  long x = cilk_spawn written(n - 1);
  long y = cilk_spawn written(n - 2);
  cilk_sync;
  return x + y;
}

/* Not measured: one spawn passes `n` on unchanged, and `k` grows. */
long climbs(long n, long k) {
  if (k > 8) return n;
  long x = cilk_spawn climbs(n, k + 1);
  long y = cilk_spawn climbs(n - 1, k + 2);
  cilk_sync;
  return x + y;
}

/* Measured by `depth`, its second parameter: `m`'s steps are not constant ones down. */
long second(long m, unsigned depth) {
  if (depth == 0) return m;
  long x = cilk_spawn second(m * 3, depth - 1);
  long y = cilk_spawn second(m + 1, depth - 1);
  cilk_sync;
  return x + y;
}

int main(void) {
  long a[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  printf("%ld %ld %ld %ld\n", halves(a, 8), written(12), climbs(5, 0), second(1, 6));
  return 0;
}
