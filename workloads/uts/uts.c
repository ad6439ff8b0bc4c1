/* An unbalanced tree search (uts_tree.h's binomial tree, the root's child 0 heavy): counts the
 * tree's nodes, a spawn per child. The heavy child's fan-out (thousands of children) and the
 * root's are split in halves recursively, as a Cilk programmer spawns over a range, so no task
 * spawns more than two at once; a binomial node spawns its UTS_M children in a loop.
 *
 * chanflow compiles this file as plain C with the keywords defined away (its serial elision, the
 * `serial` implementation and the reference), and by hand into the graph of uts.cl. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

#include "uts_tree.h"

/* The nodes of the subtree of the binomial node whose state is `state`. */
long uts_subtree(unsigned long state) {
  long count[UTS_M];
  const unsigned n = uts_binomial_children(state);
  for (unsigned i = 0; i < n; i++) count[i] = cilk_spawn uts_subtree(uts_child(state, i));
  cilk_sync;
  long total = 1;
  for (unsigned i = 0; i < n; i++) total += count[i];
  return total;
}

/* The nodes of the subtrees of children lo .. hi - 1 of the node whose state is `parent`, each a
 * binomial node. */
long uts_children(unsigned long parent, unsigned lo, unsigned hi) {
  if (hi - lo == 1) return uts_subtree(uts_child(parent, lo));
  const unsigned mid = lo + (hi - lo) / 2;
  long a, b;
  a = cilk_spawn uts_children(parent, lo, mid);
  b = uts_children(parent, mid, hi);
  cilk_sync;
  return a + b;
}

/* Every node of the tree of `seed` whose heavy child has `heavy` children (at least 1). */
long uts_tree(unsigned long seed, unsigned heavy) {
  const unsigned long root = uts_root(seed);
  long plain, below_heavy;
  plain = cilk_spawn uts_children(root, 1, UTS_ROOT_CHILDREN);
  below_heavy = uts_children(uts_child(root, 0), 0, heavy);
  cilk_sync;
  return 2 + plain + below_heavy; /* the root, its heavy child, and what lies below them */
}

int main(int argc, char *argv[]) {
  const unsigned heavy = argc > 1 ? (unsigned)atoi(argv[1]) : 200;
  const unsigned long seed = argc > 2 ? strtoul(argv[2], 0, 10) : 1;
  if (heavy < 1) {
    fprintf(stderr, "uts: the heavy child needs at least one child\n");
    return 1;
  }
  printf("uts(%u, seed %lu) = %ld nodes\n", heavy, seed, uts_tree(seed, heavy));
  return 0;
}
