/* Cilk Fibonacci (thesis Figure 4-6) lowered by hand to a channel-flow graph (Figures 4-9, 4-10),
 * the scheme chanflowc emits (DESIGN.md decision 8):
 *
 *   int fib(int n) {                 fib_spawn (pre-sync, yielding), at depth d:
 *     if (n <= 2) return 1;            base case: return 1 into the parent's slot
 *     int x = spawn fib(n - 1);        reserve the continuation at depth d, then the two
 *     int y = spawn fib(n - 2);        children at depth d + 1 (port "fib"), each returning
 *     sync;                            into one slot of that continuation
 *     return x + y;                  fib_sync (post-sync), at depth d: return x + y, once
 *   }                                  both children have returned into its slots
 */

/* FibFrame and FibCont: fib_types.h, which the graph builds before this file. */

void fib_pre_sync(__global FibFrame* f, chanflow_ctx* ctx) {
  if (f->n <= 2) {
    chanflow_return(ctx, f->n == 0 ? 0ul : 1ul);
    return;
  }
  const FibCont cont = {CHANFLOW_FRAME_INIT, 0ul, 0ul};
  chanflow_spawn_continuation(ctx, cont);
  const FibFrame a = {{0ul, 0ul, 0u, 0u}, f->n - 1, 0u};
  const FibFrame b = {{0ul, 0ul, 0u, 0u}, f->n - 2, 0u};
  chanflow_spawn_child(ctx, CHANFLOW_PORT(fib_spawn, fib), a, 0);
  chanflow_spawn_child(ctx, CHANFLOW_PORT(fib_spawn, fib), b, 1);
}
CHANFLOW_YIELDING_KERNEL_NODE(fib_spawn, FibFrame, fib_pre_sync)

void fib_post_sync(__global FibCont* c, chanflow_ctx* ctx) { chanflow_return(ctx, c->x + c->y); }
CHANFLOW_CONTINUATION_NODE(fib_sync, FibCont, fib_post_sync)
