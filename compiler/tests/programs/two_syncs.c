/* Two syncs in one function, results into array elements, and a spawn decision that depends on
 * a synced result; children spawned in a loop with a run-time count. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

int collatz_steps(long x) {
  int steps = 0;
  while (x != 1) {
    x = x % 2 ? 3 * x + 1 : x / 2;
    steps++;
  }
  return steps;
}

long tree(int depth, long seed) {
  if (depth == 0) return collatz_steps(seed);
  long r[2];
  r[0] = cilk_spawn tree(depth - 1, seed * 2 + 1);
  cilk_sync;
  r[1] = 0;
  if (r[0] % 3 != 0) r[1] = cilk_spawn tree(depth - 1, seed * 2 + 2);
  long extra[4];
  int k = (int)(seed % 4);
  for (int i = 0; i < k; i++) extra[i] = cilk_spawn tree(depth > 2 ? depth - 2 : 0, seed + 100 + i);
  cilk_sync;
  long total = r[0] + r[1];
  for (int i = 0; i < k; i++) total += extra[i];
  return total;
}

int main(int argc, char *argv[]) {
  int depth = argc > 1 ? atoi(argv[1]) : 8;
  printf("tree(%d) = %ld\n", depth, tree(depth, 1));
  return 0;
}
