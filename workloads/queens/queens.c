/* N-queens: count the ways to place n queens on an n×n board so that no two attack each other.
 * Derived from the `queens` example distributed with MIT Cilk 5: the board prefix (the column of
 * the queen in each row placed so far) travels down the recursion, there is one spawn per safe
 * column, and the children's counts are summed after the sync. Two changes: the board is a struct
 * passed by value instead of a Cilk_alloca'd array, and the last QUEENS_SERIAL_ROWS rows are
 * counted by a non-recursive backtracking loop (the base case, thesis 4.5.1).
 *
 * chanflow compiles this file as plain C with the keywords defined away (its serial elision, the
 * `serial` implementation and the reference) and by hand into the graph of queens.cl. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

#define QUEENS_MAX 18 /* queens(18) = 666,090,624 still fits an int; queens(19) would not */
#ifndef QUEENS_SERIAL_ROWS
#define QUEENS_SERIAL_ROWS 6 /* chosen by measurement: see workloads/README.md */
#endif

typedef struct {
  signed char col[QUEENS_MAX]; /* col[r]: the column of row r's queen */
} board;

/* Whether a queen at (row, col) is safe from the queens in rows 0 .. row - 1. */
int queens_safe(const board *b, int row, int col) {
  for (int r = 0; r < row; r++) {
    int c = b->col[r];
    if (c == col || c - col == row - r || col - c == row - r) return 0;
  }
  return 1;
}

/* Counts the ways to complete board b from row `row` on, by backtracking with an explicit stack
 * (next[r]: the next column to try in row r). */
int queens_complete(int n, int row, board b) {
  int next[QUEENS_MAX + 1];
  int count = 0;
  int r = row;
  next[r] = 0;
  while (r >= row) {
    if (r == n) { /* a full board */
      count++;
      r--;
      continue;
    }
    int c = next[r];
    while (c < n && !queens_safe(&b, r, c)) c++;
    if (c == n) { /* row r is exhausted: back up */
      r--;
      continue;
    }
    b.col[r] = (signed char)c;
    next[r] = c + 1;
    r++;
    next[r] = 0;
  }
  return count;
}

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
