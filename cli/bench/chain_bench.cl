/* `chanflow bench chain`'s graph: one kernel node feeding its own channel, every task spawning
 * one child until its chain is `left` levels long. `width` chains seeded at once make every level
 * `width` CEs, each level's CEs made only by the level before: the time a level adds is the
 * scheduler's latency from one level's publish to the next level's start (a narrow level, when
 * the width is small).
 *
 *   chain_link(left)   counted; a child of left - 1 spawned while left > 0 */

#define CHAIN_COUNTERS 4096u /* counters the tasks spread their additions over (a power of two) */

typedef struct {
  uint left; /* levels below this task */
  uint pad;
} ChainTask;

typedef struct {
  __global ulong* counts; /* CHAIN_COUNTERS of them */
} ChainArgs;

void chain_body(__global const ChainTask* t, chanflow_ctx* ctx) {
  const ChainTask task = *t;
  atom_add(&CHANFLOW_ARGS(ctx, ChainArgs)->counts[get_global_id(0) & (CHAIN_COUNTERS - 1u)], (ulong)1);
  if (task.left > 0) {
    const ChainTask child = {task.left - 1u, 0u};
    chanflow_spawn(ctx, CHANFLOW_PORT(chain_link, chain_tasks), child);
  }
}

CHANFLOW_KERNEL_NODE(chain_link, ChainTask, chain_body)
