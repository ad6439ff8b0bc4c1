/* queens.c lowered by hand to a channel-flow graph (DESIGN.md decision 8), the scheme chanflowc
 * will emit:
 *
 *   int queens(int n, int row, board b) {      queens_spawn (pre-sync, yielding), at depth d:
 *     if (n - row <= QUEENS_SERIAL_ROWS)         the base case, serially in the work-item
 *       return queens_complete(n, row, b);
 *     int count[QUEENS_MAX];                     count[] becomes the continuation's slots
 *     for (col = 0; col < n; col++) {            reserve the continuation at depth d, then one
 *       count[col] = 0;                          child at depth d + 1 (port "queens") per safe
 *       if (queens_safe(&b, row, col)) {         column, returning into slot col: a run-time
 *         board next = b; next.col[row] = col;   number of spawns (up to n, the edge's
 *         count[col] = cilk_spawn queens(...);   max_per_item)
 *       } }
 *     cilk_sync;
 *     total = sum of count[0 .. n-1];         queens_sync (post-sync), at depth d, once every
 *     return total;                              child has returned into its slot
 *   }
 *
 * The board, queens_safe and queens_complete are queens_board.h's, the text queens.c includes: the
 * graph builds it before this file. */

typedef struct {
  chanflow_task task; /* where the result goes: a slot of the parent's continuation */
  uint n;
  uint row;
  board b;
  char pad[6];
} QueensFrame;

typedef struct {
  chanflow_frame frame; /* return link and join counter, filled by the library */
  ulong count[QUEENS_MAX]; /* slot col: the solutions below column col (0 if it was unsafe) */
  uint n;
  uint pad;
} QueensCont;

typedef struct {
  uint serial_rows; /* QUEENS_SERIAL_ROWS */
} QueensArgs;

void queens_pre_sync(__global QueensFrame* f, chanflow_ctx* ctx) {
  const int n = (int)f->n;
  const int row = (int)f->row;
  const board b = f->b;
  if (n - row <= (int)CHANFLOW_ARGS(ctx, QueensArgs)->serial_rows) {
    chanflow_return(ctx, (ulong)queens_complete(n, row, b));
    return;
  }
  QueensCont cont;
  for (int col = 0; col < QUEENS_MAX; col++) cont.count[col] = 0;
  cont.n = (uint)n;
  cont.pad = 0;
  chanflow_spawn_continuation(ctx, cont);
  for (int col = 0; col < n; col++) {
    if (queens_safe(&b, row, col)) {
      QueensFrame child;
      child.task.ret = 0;
      child.task.ret_frame = 0;
      child.task.resume_port = 0;
      child.task.cont_index = 0;
      child.n = (uint)n;
      child.row = (uint)row + 1u;
      child.b = b;
      child.b.col[row] = (signed char)col;
      for (int i = 0; i < 6; i++) child.pad[i] = 0;
      chanflow_spawn_child(ctx, CHANFLOW_PORT(queens_spawn, queens), child, col);
    }
  }
}
CHANFLOW_YIELDING_KERNEL_NODE(queens_spawn, QueensFrame, queens_pre_sync)

void queens_post_sync(__global QueensCont* c, chanflow_ctx* ctx) {
  ulong total = 0;
  for (uint col = 0; col < c->n; col++) total += c->count[col];
  chanflow_return(ctx, total);
}
CHANFLOW_CONTINUATION_NODE(queens_sync, QueensCont, queens_post_sync)
