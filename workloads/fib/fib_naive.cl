/* The thesis' Figure 4-5: naive Fibonacci as one kernel node feeding its own channel.
 * Every task n > 2 spawns n-1 and n-2; every base case adds 1 to the result. */

typedef struct {
  uint n;
} FibObj;

typedef struct {
  __global uint* result;
} FibArgs;

void fib_body(__global const FibObj* task, chanflow_ctx* ctx) {
  if (task->n <= 2) {
    atomic_inc(CHANFLOW_ARGS(ctx, FibArgs)->result);
    return;
  }
  const FibObj a = {task->n - 1};
  const FibObj b = {task->n - 2};
  chanflow_spawn(ctx, CHANFLOW_PORT(fib_kernel, fib_tasks), a);
  chanflow_spawn(ctx, CHANFLOW_PORT(fib_kernel, fib_tasks), b);
}

CHANFLOW_KERNEL_NODE(fib_kernel, FibObj, fib_body)
