/* N-queens in GTaP's formulation (arXiv 2604.05982, its N-Queens benchmark): the board as three
 * bitmasks (the columns taken and the two diagonals), one spawn per open column in the first
 * NQUEENS_SPAWN_ROWS rows (GTaP's cut-off depth, 7), the rows below counted serially in the task
 * (nqueens_serial.h). workloads/queens/queens.c is the array-board formulation of MIT Cilk's
 * example; this one is the like-for-like comparison with GTaP's figures.
 *
 * chanflow compiles this file as plain C with the keywords defined away (its serial elision, the
 * `serial` implementation and the reference), by hand into the graph of nqueens.cl, and with
 * chanflowc (chanflow-compiled). */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef NQUEENS_SPAWN_ROWS
#define NQUEENS_SPAWN_ROWS 7 /* GTaP's cut-off depth */
#endif

#include "nqueens_serial.h" /* nqueens_open and nqueens_complete */

int nqueens(int n, int row, unsigned cols, unsigned left, unsigned right) {
  if (row == n) return 1;
  if (row >= NQUEENS_SPAWN_ROWS) return nqueens_complete(n, row, cols, left, right);
  int count[NQUEENS_MAX];
  const unsigned open = nqueens_open(n, cols, left, right);
  for (int col = 0; col < n; col++) {
    count[col] = 0;
    if (open & (1u << col)) {
      const unsigned bit = 1u << col;
      count[col] = cilk_spawn nqueens(n, row + 1, cols | bit, (left | bit) << 1, (right | bit) >> 1);
    }
  }
  cilk_sync;
  int total = 0;
  for (int col = 0; col < n; col++) total += count[col];
  return total;
}

/* All solutions of the n×n board (1 <= n <= NQUEENS_MAX). */
int nqueens_solutions(int n) { return nqueens(n, 0, 0u, 0u, 0u); }

int main(int argc, char *argv[]) {
  int n = argc > 1 ? atoi(argv[1]) : 13;
  if (n < 1 || n > NQUEENS_MAX) {
    fprintf(stderr, "nqueens: n must be 1 to %d\n", NQUEENS_MAX);
    return 1;
  }
  printf("nqueens(%d) = %d\n", n, nqueens_solutions(n));
  return 0;
}
