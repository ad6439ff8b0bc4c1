/* Every statement before (and between) spawns is not idempotent: each call bumps its own cell,
 * before its first spawn and between its spawns, also in a spawning loop. A task whose body ran
 * twice (a yield that re-ran it) shows in the sums and in the cells counted wrong. Run at tiny
 * capacities, where tasks yield. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

long visit(long *cells, long id, long n) {
  cells[id] += 1;
  if (n < 2) return 1;
  long a, b;
  a = cilk_spawn visit(cells, 2 * id + 1, n - 1);
  cells[id] += 10;
  b = cilk_spawn visit(cells, 2 * id + 2, n - 2);
  cells[id] += 100;
  cilk_sync;
  return a + b;
}

/* Calls in the subtree (k <= 3: the results go into a local array, which bounds the loop). */
long fan(long *cells, long id, long k, long depth) {
  long sub[3];
  cells[id] += 1;
  if (depth == 0) return 1;
  for (long i = 0; i < k; i++) {
    cells[id] += 1000;
    sub[i] = cilk_spawn fan(cells, id * k + i + 1, k, depth - 1);
  }
  cilk_sync;
  long calls = 1;
  for (long i = 0; i < k; i++) calls += sub[i];
  return calls;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 16;
  long k = argc > 2 ? atol(argv[2]) : 4, depth = argc > 3 ? atol(argv[3]) : 6;
  if (k > 3) k = 3;
  long size = 2L << n;
  long *cells = calloc(size, sizeof(long));
  long leaves = visit(cells, 0, n);
  long sum = 0, wrong = 0;
  for (long i = 0; i < size; ++i) {
    sum += cells[i];
    if (cells[i] != 0 && cells[i] != 1 && cells[i] != 111) ++wrong;
  }
  printf("visit: leaves %ld sum %ld cells wrong %ld\n", leaves, sum, wrong);
  free(cells);
  if (k == 0) return 0;
  long fan_size = 1;
  for (long d = 0; d <= depth; ++d) fan_size = fan_size * k + 1;
  long *fans = calloc(fan_size, sizeof(long));
  long calls = fan(fans, 0, k, depth);
  sum = wrong = 0;
  for (long i = 0; i < fan_size; ++i) {
    sum += fans[i];
    if (fans[i] != 0 && fans[i] != 1 && fans[i] != 1 + 1000 * k) ++wrong;
  }
  printf("fan: calls %ld sum %ld cells wrong %ld\n", calls, sum, wrong);
  free(fans);
  return 0;
}
