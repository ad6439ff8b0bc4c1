/* N-queens: count the ways to place n queens on an n×n board so that no two attack each other.
 * Derived from the `queens` example distributed with MIT Cilk 5: the board prefix (the column of
 * the queen in each row placed so far) travels down the recursion, there is one spawn per safe
 * column, and the children's counts are summed after the sync. Two changes: the board is a struct
 * passed by value instead of a Cilk_alloca'd array, and the last QUEENS_SERIAL_ROWS rows are
 * counted by a non-recursive backtracking loop (the base case, thesis 4.5.1), in queens_board.h with
 * the board and its safety check: the device code of the hand-built graph is built from it too.
 *
 * chanflow compiles this file as plain C with the keywords defined away (its serial elision, the
 * `serial` implementation and the reference) and by hand into the graph of queens.cl. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef QUEENS_SERIAL_ROWS
#define QUEENS_SERIAL_ROWS 6 /* chosen by measurement: see workloads/README.md */
#endif

#include "queens_board.h" /* the board, queens_safe and queens_complete */

int queens(int n, int row, board b) {
  if (n - row <= QUEENS_SERIAL_ROWS) return queens_complete(n, row, b);
  int count[QUEENS_MAX];
  for (int col = 0; col < n; col++) {
    count[col] = 0;
    if (queens_safe(&b, row, col)) {
      board next = b;
      next.col[row] = (signed char)col;
      count[col] = cilk_spawn queens(n, row + 1, next);
    }
  }
  cilk_sync;
  int total = 0;
  for (int col = 0; col < n; col++) total += count[col];
  return total;
}

/* All solutions of the n×n board (1 <= n <= QUEENS_MAX). */
int queens_solutions(int n) {
  board empty = {{0}};
  return queens(n, 0, empty);
}

int main(int argc, char *argv[]) {
  int n = argc > 1 ? atoi(argv[1]) : 13;
  if (n < 1 || n > QUEENS_MAX) {
    fprintf(stderr, "queens: n must be 1 to %d\n", QUEENS_MAX);
    return 1;
  }
  printf("queens(%d) = %d\n", n, queens_solutions(n));
  return 0;
}
