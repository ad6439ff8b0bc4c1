/* Kernel nodes for the graph suites: a two-stage pipeline, a tree grown through a channel stack,
 * and a body that breaks its edge's declared spawn limit. */

typedef struct {
  uint base;
  uint count; /* at most 8 */
} Seed;

typedef struct {
  uint id;
} Item;

typedef struct {
  __global uint* seen;
  __global uint* errors;
  uint seen_len;
  uint pad;
} SinkArgs;

void split_body(__global const Seed* s, chanflow_ctx* ctx) {
  for (uint k = 0; k < s->count; ++k) {
    const Item it = {s->base + k};
    chanflow_spawn(ctx, 0, it);
  }
}
CHANFLOW_KERNEL_NODE(split, Seed, split_body)

void sink_body(__global const Item* it, chanflow_ctx* ctx) {
  __global SinkArgs* a = CHANFLOW_ARGS(ctx, SinkArgs);
  if (it->id < a->seen_len) atomic_inc(&a->seen[it->id]);
  else atomic_inc(a->errors);
}
CHANFLOW_KERNEL_NODE(sink, Item, sink_body)

typedef struct {
  uint max_depth;
} TreeNode;

typedef struct {
  __global uint* per_level;
} TreeArgs;

/* Counts the CEs it sees per depth; spawns two children one level deeper until max_depth, or
 * until the run's serial depth (as a compiled task would run its serial form there). */
void tree_body(__global const TreeNode* node, chanflow_ctx* ctx) {
  atomic_inc(&CHANFLOW_ARGS(ctx, TreeArgs)->per_level[chanflow_depth(ctx)]);
  if (chanflow_depth(ctx) < node->max_depth && chanflow_depth(ctx) < chanflow_serial_depth(ctx)) {
    const TreeNode child = *node;
    chanflow_spawn(ctx, 0, child);
    chanflow_spawn(ctx, 0, child);
  }
}
CHANFLOW_KERNEL_NODE(tree, TreeNode, tree_body)

void overspawn_body(__global const Item* it, chanflow_ctx* ctx) {
  const Item c = {it->id};
  for (uint k = 0; k < 3; ++k) chanflow_spawn(ctx, 0, c);
}
CHANFLOW_KERNEL_NODE(overspawn, Item, overspawn_body)

/* A linear Cilk recursion, deeper than a sweep's levels: chain(n) = n + chain(n - 1),
 * chain(0) = 0, one child per call. */
typedef struct {
  chanflow_task task;
  uint n;
  uint pad;
} ChainFrame;

typedef struct {
  chanflow_frame frame;
  ulong x; /* slot 0: chain(n - 1) */
  ulong n;
} ChainCont;

void chain_pre_sync(__global ChainFrame* f, chanflow_ctx* ctx) {
  if (f->n == 0) {
    chanflow_return(ctx, 0ul);
    return;
  }
  const ChainCont cont = {CHANFLOW_FRAME_INIT, 0ul, (ulong)f->n};
  chanflow_spawn_continuation(ctx, cont);
  const ChainFrame child = {{0ul, 0ul, 0u, 0u}, f->n - 1u, 0u};
  /* Port 1: the continuation is port 0. (CHANFLOW_PORT would need a chain_spawn node in every
   * graph built from this file.) */
  chanflow_spawn_child(ctx, 1, child, 0);
}
CHANFLOW_YIELDING_KERNEL_NODE(chain_spawn, ChainFrame, chain_pre_sync)

void chain_post_sync(__global ChainCont* c, chanflow_ctx* ctx) { chanflow_return(ctx, c->x + c->n); }
CHANFLOW_CONTINUATION_NODE(chain_sync, ChainCont, chain_post_sync)

/* Seeds chain tasks into a stack from a plain channel: a non-yielding producer sharing its
 * output level with the stack's own (swept) consumer. */
typedef struct {
  uint i;
  uint n;
} ChainSeed;

typedef struct {
  __global ulong* results;
} ChainSeedArgs;

void chain_seed_body(__global const ChainSeed* s, chanflow_ctx* ctx) {
  const ChainFrame f = {{(ulong)(CHANFLOW_ARGS(ctx, ChainSeedArgs)->results + s->i), 0ul, 0u, 0u}, s->n, 0u};
  chanflow_spawn(ctx, 0, f);
}
CHANFLOW_KERNEL_NODE(chain_seed, ChainSeed, chain_seed_body)

/* A Fibonacci-shaped tree whose tasks count how often their bodies ran (a statement that is not
 * idempotent): calls(id, n) = 1 + calls(2id + 1, n - 1) + calls(2id + 2, n - 2) for n >= 2. A
 * task that yields must resume at its flush, not run its body again. */
typedef struct {
  chanflow_task task;
  uint id;
  uint n;
} CountTask;

typedef struct {
  chanflow_frame frame;
  ulong left, right; /* slots 0 and 1 */
} CountCont;

typedef struct {
  __global uint* runs; /* per call id */
} CountArgs;

void count_pre_sync(__global CountTask* t, chanflow_ctx* ctx) {
  atomic_inc(CHANFLOW_ARGS(ctx, CountArgs)->runs + t->id);
  if (t->n < 2u) {
    chanflow_return(ctx, 1ul);
    return;
  }
  const CountCont c = {CHANFLOW_FRAME_INIT, 0ul, 0ul};
  chanflow_spawn_continuation(ctx, c);
  const CountTask left = {CHANFLOW_TASK_INIT, 2u * t->id + 1u, t->n - 1u};
  const CountTask right = {CHANFLOW_TASK_INIT, 2u * t->id + 2u, t->n - 2u};
  chanflow_spawn_child(ctx, 1, left, 0);
  chanflow_spawn_child(ctx, 1, right, 1);
}
CHANFLOW_YIELDING_KERNEL_NODE(count_spawn, CountTask, count_pre_sync)

void count_post_sync(__global CountCont* c, chanflow_ctx* ctx) { chanflow_return(ctx, 1ul + c->left + c->right); }
CHANFLOW_CONTINUATION_NODE(count_sync, CountCont, count_post_sync)

/* Tasks that say where they ran (the work-item's global id + 1, per task id) and spawn nothing,
 * grouped by their `work` (node_macros.cl): from the run's serial depth on, a batch's largest
 * works go to its first work-items. */
typedef struct {
  chanflow_task task;
  uint id;
  int work;
} WorkTask;

typedef struct {
  __global uint* where; /* per task id */
} WorkArgs;

long work_task_work(__global WorkTask* t) { return t->work; }
void work_task_body(__global WorkTask* t, chanflow_ctx* ctx) {
  CHANFLOW_ARGS(ctx, WorkArgs)->where[t->id] = (uint)get_global_id(0) + 1u;
}
CHANFLOW_YIELDING_KERNEL_NODE_BY_WORK(work_task, WorkTask, work_task_body, work_task_work)
