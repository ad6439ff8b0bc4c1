/* nqueens.c lowered by hand to a channel-flow graph, as queens.cl lowers queens.c:
 *
 *   int nqueens(n, row, cols, left, right) {   nqueens_spawn (pre-sync, yielding), at depth d:
 *     if (row == n) return 1;                    a full board
 *     if (row >= NQUEENS_SPAWN_ROWS)             the base case, serially in the work-item
 *       return nqueens_complete(...);
 *     int count[NQUEENS_MAX];                    count[] becomes the continuation's slots
 *     for (col = 0; col < n; col++)              reserve the continuation at depth d, then one
 *       if (open & (1u << col))                  child at depth d + 1 (port "nqueens") per open
 *         count[col] = cilk_spawn nqueens(...);  column, returning into slot col
 *     cilk_sync;
 *     return sum of count[0 .. n-1];             nqueens_sync (post-sync), at depth d
 *   }
 *
 * nqueens_open and nqueens_complete are nqueens_serial.h's: the graph builds it before this file. */

typedef struct {
  chanflow_task task; /* where the result goes: a slot of the parent's continuation */
  uint n;
  uint row;
  uint cols;
  uint left;
  uint right;
  uint pad;
} NQueensFrame;

typedef struct {
  chanflow_frame frame;      /* return link and join counter, filled by the library */
  ulong count[NQUEENS_MAX]; /* slot col: the solutions below column col (0 if it was attacked) */
  uint n;
  uint pad;
} NQueensCont;

typedef struct {
  uint spawn_rows; /* NQUEENS_SPAWN_ROWS */
} NQueensArgs;

void nqueens_pre_sync(__global NQueensFrame* f, chanflow_ctx* ctx) {
  const int n = (int)f->n;
  const int row = (int)f->row;
  const uint cols = f->cols, left = f->left, right = f->right;
  if (row == n || row >= (int)CHANFLOW_ARGS(ctx, NQueensArgs)->spawn_rows) {
    chanflow_return(ctx, (ulong)nqueens_complete(n, row, cols, left, right));
    return;
  }
  NQueensCont cont;
  for (int col = 0; col < NQUEENS_MAX; col++) cont.count[col] = 0;
  cont.n = (uint)n;
  cont.pad = 0;
  chanflow_spawn_continuation(ctx, cont);
  const uint open = nqueens_open(n, cols, left, right);
  for (int col = 0; col < n; col++) {
    if (open & (1u << col)) {
      const uint bit = 1u << col;
      NQueensFrame child;
      child.task.ret = 0;
      child.task.ret_frame = 0;
      child.task.resume_port = 0;
      child.task.cont_index = 0;
      child.n = (uint)n;
      child.row = (uint)row + 1u;
      child.cols = cols | bit;
      child.left = (left | bit) << 1;
      child.right = (right | bit) >> 1;
      child.pad = 0;
      chanflow_spawn_child(ctx, CHANFLOW_PORT(nqueens_spawn, nqueens), child, col);
    }
  }
}
CHANFLOW_YIELDING_KERNEL_NODE(nqueens_spawn, NQueensFrame, nqueens_pre_sync)

void nqueens_post_sync(__global NQueensCont* c, chanflow_ctx* ctx) {
  ulong total = 0;
  for (uint col = 0; col < c->n; col++) total += c->count[col];
  chanflow_return(ctx, total);
}
CHANFLOW_CONTINUATION_NODE(nqueens_sync, NQueensCont, nqueens_post_sync)
