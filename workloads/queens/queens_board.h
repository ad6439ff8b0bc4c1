/* N-queens' board and its serial helpers: one text for the three compilers that need it. queens.c
 * includes it (its serial elision on the host, and chanflowc's device code for chanflow-compiled);
 * the hand-built graph builds it before queens.cl (the device code of chanflow). Plain C that
 * OpenCL C also accepts: the board is passed by value or by a pointer to a private copy. */
#ifndef QUEENS_BOARD_H
#define QUEENS_BOARD_H

#define QUEENS_MAX 18 /* queens(18) = 666,090,624 still fits an int; queens(19) would not */

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

#endif /* QUEENS_BOARD_H */
