/* Results into struct fields, structs passed by value, and one helper called with a pointer to a
 * private local and with a pointer into main's memory (two copies, one per address space). */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  long lo;
  long hi;
} range;

typedef struct {
  long count;
  long weight;
} stats;

long weigh(const long *values, long n) {
  long w = 0;
  for (long i = 0; i < n; i++) w += values[i] % 7;
  return w;
}

long count_range(range r, const long *data) {
  long width = r.hi - r.lo;
  if (width <= 64) {
    long local[4] = {r.lo, r.hi, width, 3};
    return weigh(local, 4) + weigh(data + r.lo, width);
  }
  stats s;
  range left = {r.lo, r.lo + width / 2};
  range right = {r.lo + width / 2, r.hi};
  s.count = cilk_spawn count_range(left, data);
  s.weight = cilk_spawn count_range(right, data);
  cilk_sync;
  return s.count + s.weight;
}

int main(int argc, char *argv[]) {
  long n = argc > 1 ? atol(argv[1]) : 20000;
  long *data = malloc(n * sizeof(long));
  for (long i = 0; i < n; i++) data[i] = (i * 31) % 101;
  range all = {0, n};
  printf("count_range = %ld\n", count_range(all, data));
  free(data);
  return 0;
}
