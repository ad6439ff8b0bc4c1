/* Frame scratch (scheduler/cl/scratch.cl) exercised alone: a binary tree `depth` levels deep
 * whose children report into their parent frame's scratch, not into result slots. A leaf
 * writes 1 into word `side` of its parent's block; an internal task's continuation adds the two
 * words of its own block and writes the sum into its parent's block (the root's, into the
 * result), so the root sees 2^depth only if every block was the frame's own while it lived. */
typedef struct {
  chanflow_task task;
  uint depth; /* levels below this task */
  uint side;  /* which word of the parent's block this task reports into */
} TreeTask;

typedef struct {
  chanflow_frame frame;
  uint side;
  uint pad;
} TreeFrame;

typedef struct {
  __global ulong* result;
} TreeArgs;

void tree_report(__global chanflow_frame* parent, uint side, ulong value, __global const TreeArgs* args) {
  __global ulong* block = parent ? (__global ulong*)chanflow_frame_scratch(parent) : 0;
  if (!parent)
    *args->result = value;
  else if (block) /* 0: the pool was empty, which the run reports */
    block[side] = value;
}

#define TREE_LEAKS 2u /* a root's side: it takes a block of its level's pool and never gives it back */

void tree_pre_sync(__global TreeTask* t, chanflow_ctx* ctx) {
  if (t->side == TREE_LEAKS) chanflow_scratch_take(ctx->env->cont_scratch, 0u);
  if (t->depth == 0) {
    tree_report(chanflow_parent_frame(ctx), t->side, 1ul, CHANFLOW_ARGS(ctx, TreeArgs));
    return;
  }
  const TreeFrame f = {CHANFLOW_FRAME_INIT, t->side, 0u};
  chanflow_spawn_continuation(ctx, f);
  for (uint s = 0; s < 2u; ++s) {
    const TreeTask child = {CHANFLOW_TASK_INIT, t->depth - 1u, s};
    chanflow_spawn_void_child(ctx, 1, child);
  }
}
CHANFLOW_YIELDING_KERNEL_NODE(tree_spawn, TreeTask, tree_pre_sync)

void tree_post_sync(__global TreeFrame* f, chanflow_ctx* ctx) {
  __global ulong* own = (__global ulong*)chanflow_frame_scratch(&f->frame);
  if (!own) return;
  const ulong sum = own[0] + own[1];
  own[0] = own[1] = 0xdeadul; /* a block handed to the next frame must not carry these in */
  tree_report((__global chanflow_frame*)f->frame.ret_frame, f->side, sum, CHANFLOW_ARGS(ctx, TreeArgs));
}
CHANFLOW_CONTINUATION_NODE(tree_sync, TreeFrame, tree_post_sync)

/* Task scratch (chanflow_task_scratch, FrameScratch::taken_by_tasks): a Fibonacci-shaped tree
 * (children `depth` - 1 and `depth` - 2, leaves at depth 1 or 0: fib(depth + 1) leaves) whose task
 * keeps the two words its children report into in its own block, taken before it spawns, and
 * passes their addresses down as a Cilk function passes `&x`. The left child goes to stack A,
 * the right to stack B: two ports, so a yield can come between them, after the left child is
 * published. The body writes a poison value into both words before it spawns; a body run again
 * after such a yield would wipe a report a finished left child made (a yield resumes at the
 * flush instead). */
typedef struct {
  chanflow_task task;
  uint depth;
  uint pad;
  __global ulong* out; /* where this task's count goes: a word of its parent's block, or the result */
} PairTask;

typedef struct {
  chanflow_frame frame;
  __global ulong* out;
} PairFrame;

#define PAIR_POISON 0x5eedul

void pair_pre_sync(__global PairTask* t, chanflow_ctx* ctx) {
  if (t->depth <= 1u) {
    *t->out = 1ul;
    return;
  }
  __global ulong* own = (__global ulong*)chanflow_task_scratch(ctx);
  if (!own) return;
  own[0] = own[1] = PAIR_POISON;
  const PairFrame f = {CHANFLOW_FRAME_INIT, t->out};
  chanflow_spawn_continuation(ctx, f);
  for (uint s = 0; s < 2u; ++s) {
    const PairTask child = {CHANFLOW_TASK_INIT, t->depth - 1u - s, 0u, own + s};
    chanflow_spawn_void_child(ctx, 1u + s, child);
  }
}
CHANFLOW_YIELDING_KERNEL_NODE(pair_a, PairTask, pair_pre_sync)
CHANFLOW_YIELDING_KERNEL_NODE(pair_b, PairTask, pair_pre_sync)

void pair_post_sync(__global PairFrame* f, chanflow_ctx* ctx) {
  (void)ctx;
  __global ulong* own = (__global ulong*)chanflow_frame_scratch(&f->frame);
  *f->out = own[0] + own[1];
}
CHANFLOW_CONTINUATION_NODE(pair_sync, PairFrame, pair_post_sync)

/* Atomic floating-point addition: every CE i adds i % 8 + 1 to one float and i + 1 to one
 * double. */
typedef struct {
  __global float* f;
  __global double* d;
} AddArgs;

void add_body(__global const uint* i, chanflow_ctx* ctx) {
  __global const AddArgs* args = CHANFLOW_ARGS(ctx, AddArgs);
  chanflow_atomic_add_float(args->f, (float)(*i % 8u + 1u));
#ifdef cl_khr_fp64
  chanflow_atomic_add_double(args->d, (double)(*i + 1u));
#endif
}
CHANFLOW_KERNEL_NODE(fp_add, uint, add_body)
