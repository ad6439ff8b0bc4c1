/* A Cilk program built by the outside project with chanflow_add_cilk_executable: counts the nodes
 * of a complete binary tree of the given depth. Two files (this one and parse.c) and a header of
 * its own (tree.h). */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

#include "tree.h"

long nodes(int depth) {
  if (depth == 0) return leaf_nodes();
  long left = cilk_spawn nodes(depth - 1);
  long right = cilk_spawn nodes(depth - 1);
  cilk_sync;
  return left + right + 1;
}

int main(int argc, char *argv[]) {
  int depth = parse_depth(argc, argv);
  printf("nodes(%d) = %ld\n", depth, nodes(depth));
  return 0;
}
