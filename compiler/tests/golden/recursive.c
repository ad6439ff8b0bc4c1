/* Golden: helpers that call themselves, on explicit stacks (a call in a loop, calls inside an
 * expression with a local array kept across them, a pointer returned from a call in `return`). */
#include <cilk/cilk.h>

static void quick(long *low, long *high) {
  while (high - low >= 2) {
    long pivot = low[(high - low) / 2];
    long *i = low, *j = high;
    while (i <= j) {
      while (*i < pivot) i++;
      while (*j > pivot) j--;
      if (i <= j) {
        long t = *i;
        *i++ = *j;
        *j-- = t;
      }
    }
    quick(low, j);
    low = i;
  }
}

static long walk(long x, int depth) {
  int d[2] = {(int)(x & 7), (int)(x >> 3 & 7)};
  if (depth == 0) return d[0] + d[1];
  return d[0] * walk(x + 1, depth - 1) + walk(x + d[1], depth - 1);
}

static long *lower_bound(long *lo, long *hi, long v) {
  if (hi <= lo) return lo;
  long *mid = lo + (hi - lo) / 2;
  if (*mid < v) return lower_bound(mid + 1, hi, v);
  return lower_bound(lo, mid, v);
}

long sorted_rank(long *a, long n, long v, int depth) {
  long w = cilk_spawn sorted_rank(a, n / 2, v, depth - 1);
  quick(a, a + n - 1);
  cilk_sync;
  return w + walk(v, depth) + (lower_bound(a, a + n, v) - a);
}

int main(void) {
  long a[4] = {3, 1, 2, 0};
  return (int)sorted_rank(a, 4, 2, 1);
}
