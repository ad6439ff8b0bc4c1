/* Cilk Fibonacci (thesis Figure 4-6) lowered by hand to a channel-flow graph (Figures 4-9, 4-10),
 * the scheme chanflowc emits (DESIGN.md decision 8):
 *
 *   int fib(int n) {                 fib_spawn (pre-sync, yielding), at depth d:
 *     if (n <= 2) return 1;            base case: store 1 in the parent's result slot
 *     int x = spawn fib(n - 1);        reserve the continuation at depth d (port 0), then the
 *     int y = spawn fib(n - 2);        two children at depth d + 1 (port 1), each returning
 *     sync;                            into one slot of that continuation
 *     return x + y;                  fib_sync (post-sync), at depth d: store x + y in the
 *   }                                  parent's slot, once no work is left deeper
 */

typedef struct {
  chanflow_task task; /* ret: the parent's result slot */
  uint n;
  uint pad;
} FibFrame;

typedef struct {
  ulong ret; /* the parent's result slot */
  ulong x;   /* slot 0 */
  ulong y;   /* slot 1 */
} FibCont;

void fib_pre_sync(__global FibFrame* f, chanflow_ctx* ctx) {
  if (f->n <= 2) {
    *(__global ulong*)f->task.ret = f->n == 0 ? 0ul : 1ul;
    return;
  }
  const FibCont cont = {f->task.ret, 0ul, 0ul};
  chanflow_spawn(ctx, 0, cont);
  const FibFrame a = {{0ul, 0u, 0u}, f->n - 1, 0u};
  const FibFrame b = {{0ul, 0u, 0u}, f->n - 2, 0u};
  chanflow_spawn_child(ctx, 1, a, 0);
  chanflow_spawn_child(ctx, 1, b, 1);
}
CHANFLOW_YIELDING_KERNEL_NODE(fib_spawn, FibFrame, fib_pre_sync)

void fib_post_sync(__global FibCont* c, chanflow_ctx* ctx) {
  (void)ctx;
  *(__global ulong*)c->ret = c->x + c->y;
}
CHANFLOW_KERNEL_NODE(fib_sync, FibCont, fib_post_sync)
