/* The golden test's input for device memory: alloca'd copies passed to children from a loop that
 * resumes in its middle (entered at its head), malloc and free around a sync, memcpy between
 * address spaces, a helper that grows a calloc'd table with realloc (it takes the heap's
 * environment), and a helper whose alloca'd block is released at each of its returns. */
#include <alloca.h>
#include <cilk/cilk.h>
#include <stdlib.h>
#include <string.h>

static long *grow(long *t, long n) {
  long *u = realloc(t, 2 * n * sizeof(long));
  memset(u + n, 0, n * sizeof(long));
  return u;
}

static long scratch_sum(const long *v, long n) {
  long *s = alloca(n * sizeof(long));
  memcpy(s, v, n * sizeof(long));
  if (n == 1) return s[0];
  long total = 0;
  for (long i = 0; i < n; i++) total += s[i];
  return total;
}

long walk(long depth, const long *path) {
  if (depth == 0) return scratch_sum(path, 1);
  long *counts = calloc(2, sizeof(long));
  counts = grow(counts, 2);
  for (long k = 0; k < depth; k++) {
    long *next = alloca(sizeof(long));
    long here[1] = {k};
    memcpy(next, here, sizeof(long));
    counts[k % 4] = cilk_spawn walk(depth - 1, next);
  }
  cilk_sync;
  long r = scratch_sum(counts, 4);
  free(counts);
  return r;
}
