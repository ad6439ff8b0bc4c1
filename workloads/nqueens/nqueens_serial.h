/* N-queens on bitmasks (GTaP's formulation, arXiv 2604.05982): a row's attacked columns are three
 * masks, the columns taken and the two diagonals shifted one column per row. The serial completion
 * below the rows that spawn, with an explicit stack instead of recursion (a GPU work-item has no
 * stack to recurse on). Plain C that OpenCL C also accepts: nqueens.c includes it (its serial
 * elision and chanflowc's device code), the hand-built graph builds it before nqueens.cl, and the
 * oneTBB versions call it through the elision. */
#ifndef NQUEENS_SERIAL_H
#define NQUEENS_SERIAL_H

#define NQUEENS_MAX 18 /* nqueens(18) = 666,090,624 still fits an int */

/* The columns of row `row` no queen above attacks, given the masks down to it. */
unsigned nqueens_open(int n, unsigned cols, unsigned left, unsigned right) {
  return ((1u << n) - 1u) & ~(cols | left | right);
}

/* Counts the ways to complete a board from row `row` on: each level of the stack holds its row's
 * masks and the open columns it has yet to try. */
int nqueens_complete(int n, int row, unsigned cols, unsigned left, unsigned right) {
  unsigned c[NQUEENS_MAX], l[NQUEENS_MAX], r[NQUEENS_MAX], open[NQUEENS_MAX];
  const int rows = n - row;
  if (rows <= 0) return 1; /* a full board */
  int count = 0;
  int top = 0;
  c[0] = cols;
  l[0] = left;
  r[0] = right;
  open[0] = nqueens_open(n, cols, left, right);
  while (top >= 0) {
    const unsigned o = open[top];
    if (o == 0u) { /* this row is exhausted: back up */
      top--;
      continue;
    }
    const unsigned bit = o & (0u - o); /* the lowest open column */
    open[top] = o ^ bit;
    if (top + 1 == rows) { /* the last row: a full board */
      count++;
      continue;
    }
    c[top + 1] = c[top] | bit;
    l[top + 1] = (l[top] | bit) << 1;
    r[top + 1] = (r[top] | bit) >> 1;
    top++;
    open[top] = nqueens_open(n, c[top], l[top], r[top]);
  }
  return count;
}

#endif /* NQUEENS_SERIAL_H */
