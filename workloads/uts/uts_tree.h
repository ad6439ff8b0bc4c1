/* The unbalanced tree of the uts workload: one text for the three compilers that need it. uts.c
 * includes it (its serial elision on the host, and chanflowc's device code); the hand-built graph
 * builds it before uts.cl. Plain C that OpenCL C also accepts (unsigned long is 64 bits in both on
 * the hosts chanflow runs on).
 *
 * The tree is a binomial one (the UTS benchmark's T3 shape: Olivier et al., "UTS: An Unbalanced
 * Tree Search Benchmark", LCPC 2006), made more lopsided on purpose:
 * - the root has UTS_ROOT_CHILDREN children; its child 0 is the heavy one, whose fan-out is the
 *   workload's size, and the others are binomial nodes;
 * - a binomial node has UTS_M = 2 children with probability q (UTS_Q24 / 2^24 = 0.4995), else
 *   none: q·m = 0.999, so a binomial node's subtree holds 1,000 nodes on average with a heavy tail
 *   (most die at once, a few run thousands of levels deep), and the heavy child's `size` of them
 *   hold most of the tree (size 50,000, seed 1: 61.9 M nodes, 4,753 levels deep). Two children
 *   rather than T3's eight keep the tail lighter, so a size's node count varies less by seed.
 * A node is its 64-bit state; a child's state is a hash of its parent's and its index, so any
 * node's subtree can be counted anywhere, and one seed gives the same tree to every
 * implementation. */
#ifndef UTS_TREE_H
#define UTS_TREE_H

#define UTS_ROOT_CHILDREN 64
#define UTS_M 2
#define UTS_Q24 8380219UL /* round(0.4995 * 2^24) */

/* SplitMix64's finalizer (Steele, Lea and Flood, OOPSLA 2014): a bijection of 64-bit words whose
 * outputs pass as independent for neighbouring inputs. */
unsigned long uts_mix(unsigned long z) {
  z += 0x9e3779b97f4a7c15UL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9UL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebUL;
  return z ^ (z >> 31);
}

/* The state of child i of the node whose state is `state`. */
unsigned long uts_child(unsigned long state, unsigned i) {
  return uts_mix(state ^ ((unsigned long)(i + 1u) * 0xd1b54a32d192ed03UL));
}

/* How many children a binomial node has: UTS_M with probability q, else none. */
unsigned uts_binomial_children(unsigned long state) { return (uts_mix(state) >> 40) < UTS_Q24 ? UTS_M : 0u; }

/* The root's state for a seed. */
unsigned long uts_root(unsigned long seed) { return uts_mix(seed ^ 0x5555555555555555UL); }

#endif
