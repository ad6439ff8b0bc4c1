/* Recursions whose calls each sit in an if, after a base case that returns, as cholesky's
 * mul_and_subT spawns a quadrant only where both operands have one: a Cilk function (run as its
 * serial form below the serial depth) and a helper that calls itself. A path from the top reaches
 * the code after a call without making one, so their explicit stacks resume through the top of the
 * pass (PoCL 3.1's kernel compiler recursed without end on the direct form).
 * usage: conditional_calls DEPTH */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

/* The quadrants of a sparse quadtree: node id has child q where (id * 7 + q) % 5 != 0. */
static int has_child(long id, int q) { return (id * 7 + q) % 5 != 0; }

long weight(int depth, long id) {
  if (depth == 0) return id % 9 + 1;
  long w0 = 0, w1 = 0, w2 = 0, w3 = 0;
  depth--;
  if (has_child(id, 0)) w0 = cilk_spawn weight(depth, id * 4 + 0);
  if (has_child(id, 1)) w1 = cilk_spawn weight(depth, id * 4 + 1);
  cilk_sync;
  if (has_child(id, 2)) w2 = cilk_spawn weight(depth, id * 4 + 2);
  if (has_child(id, 3) && w0 >= 0) w3 = cilk_spawn weight(depth, id * 4 + 3);
  cilk_sync;
  return w0 + 2 * w1 + 3 * w2 + 4 * w3;
}

static long leaves(int depth, long id) {
  if (depth == 0) return 1;
  long n = 0;
  if (has_child(id, 0)) n += leaves(depth - 1, id * 4 + 0);
  if (has_child(id, 3)) n += leaves(depth - 1, id * 4 + 3);
  return n;
}

long count(int depth) {
  long a = cilk_spawn leaves(depth, 1);
  long b = leaves(depth, 2);
  cilk_sync;
  return a + b;
}

int main(int argc, char **argv) {
  const int depth = argc > 1 ? atoi(argv[1]) : 7;
  printf("weight(%d) = %ld\n", depth, weight(depth, 1));
  printf("leaves(%d) = %ld\n", depth + 4, count(depth + 4));
  return 0;
}
