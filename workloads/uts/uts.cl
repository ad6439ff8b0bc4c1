/* uts.c's tree search lowered by hand to a channel-flow graph: one kernel node feeding its own
 * channel (the thesis' Figure 4-5 shape), a task per node of the tree. Counting needs no join:
 * each node adds one to a counter, and the run's count is the counters' sum, so a task returns
 * nothing, depth is no level, and a tree thousands of levels deep needs one channel.
 *
 *   uts_subtree(state)          a UTS_NODE task: count it, spawn its children (uts_binomial_children)
 *   uts_children(parent, lo, hi)  a UTS_RANGE task: up to UTS_SPLIT nodes spawned, else the range
 *                                 split in UTS_SPLIT parts (the heavy child's thousands of children)
 *
 * uts_tree.h's functions are built before this file. */

#define UTS_RANGE 0u
#define UTS_NODE 1u
#define UTS_SPLIT 4u       /* a task spawns at most this many */
#define UTS_COUNTERS 4096u /* counters the nodes spread their additions over (a power of two) */

typedef struct {
  ulong state; /* the node's, or the range's parent's */
  uint lo, hi; /* UTS_RANGE: the parent's children lo .. hi - 1 */
  uint kind;
  uint pad;
} UtsTask;

typedef struct {
  __global ulong* counts; /* UTS_COUNTERS of them */
} UtsArgs;

void uts_body(__global const UtsTask* t, chanflow_ctx* ctx) {
  const UtsTask task = *t;
  if (task.kind == UTS_NODE) {
    atom_add(&CHANFLOW_ARGS(ctx, UtsArgs)->counts[get_global_id(0) & (UTS_COUNTERS - 1u)], (ulong)1);
    const uint n = uts_binomial_children(task.state);
    for (uint i = 0; i < n; i++) {
      const UtsTask child = {uts_child(task.state, i), 0u, 0u, UTS_NODE, 0u};
      chanflow_spawn(ctx, CHANFLOW_PORT(uts_kernel, uts_tasks), child);
    }
    return;
  }
  const uint count = task.hi - task.lo;
  if (count <= UTS_SPLIT) {
    for (uint i = task.lo; i < task.hi; i++) {
      const UtsTask child = {uts_child(task.state, i), 0u, 0u, UTS_NODE, 0u};
      chanflow_spawn(ctx, CHANFLOW_PORT(uts_kernel, uts_tasks), child);
    }
    return;
  }
  for (uint p = 0; p < UTS_SPLIT; p++) {
    const UtsTask part = {task.state, task.lo + (uint)((ulong)count * p / UTS_SPLIT),
                          task.lo + (uint)((ulong)count * (p + 1u) / UTS_SPLIT), UTS_RANGE, 0u};
    chanflow_spawn(ctx, CHANFLOW_PORT(uts_kernel, uts_tasks), part);
  }
}

CHANFLOW_KERNEL_NODE(uts_kernel, UtsTask, uts_body)
