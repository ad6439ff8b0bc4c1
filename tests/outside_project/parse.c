/* The second file of the outside project's Cilk program: host code only. */
#include <stdlib.h>

#include "tree.h"

int parse_depth(int argc, char *argv[]) { return argc > 1 ? atoi(argv[1]) : 12; }
