/* nodes.c's own header: a helper its device code calls, and what parse.c (host code only) offers. */
#ifndef TREE_H
#define TREE_H

#ifndef LEAF_NODES
#define LEAF_NODES 1 /* nodes a leaf counts (the build may say otherwise: -DLEAF_NODES=...) */
#endif

static long leaf_nodes(void) { return LEAF_NODES; }

/* The depth asked for on the command line (parse.c). */
int parse_depth(int argc, char *argv[]);

#endif
