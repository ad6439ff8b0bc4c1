/* The node macros: CHANFLOW_KERNEL_NODE, CHANFLOW_YIELDING_KERNEL_NODE,
 * CHANFLOW_CONTINUATION_NODE and CHANFLOW_GROUP_KERNEL_NODE, each a kernel over its batch plus a
 * marker kernel naming its kind (see spawn.cl for the convention). */

/* The kernel every node macro generates: its batch (chanflow_next_batch), handed to the node's
 * batch function, which every work-group runs, with or without CEs: PoCL 3.1 mis-runs kernels
 * whose collectives (barriers) sit under a condition or in a loop around the batch, even when
 * every work-item takes the same path. */
#define CHANFLOW_NODE_KERNEL(name, kind)                                                        \
  CHANFLOW_NODE_KERNEL_HEAD(name, kind) {                                                       \
    CHANFLOW_NODE_KERNEL_BATCH                                                                  \
    name##_batch(level_env, pos, index, active, batch.prepaid, &wg, 0);                         \
  }                                                                                             \
  CHANFLOW_SCHED_RUN(name, uchar, name##_batch(env, pos, index, active, prepaid, wg, keep))

/* What the device scheduler (schedule.cl) calls for a batch of this node, the same for every kind,
 * and the local memory the node's work-group needs besides the scheduler's own. `keep`: where a
 * task node's flush may keep spawns for the group (0: none may be kept). (Not inlined made no
 * difference to NVIDIA's build of a compiled program's scheduler, 40-50 s for loops.c.) */
#define CHANFLOW_SCHED_RUN(name, local_type, call)                                              \
  typedef local_type name##__chanflow_local;                                                    \
  void name##__chanflow_run(__global const chanflow_node_env* env, ulong pos, uint index, int active, \
                            __local const uint* prepaid, __local chanflow_wg_scratch* wg,       \
                            __local void* group_local, __local ulong* group_ce, __local chanflow_keep* keep) { \
    (void)group_local;                                                                          \
    (void)group_ce;                                                                             \
    (void)keep;                                                                                 \
    call;                                                                                       \
  }

/* The parts every node kernel shares (OpenCL C 1.2 has no variadic macros to pass a batch
 * function more arguments): the marker naming the node's kind and the kernel's signature; then,
 * in its body, its batch and the environment of the batch's level (level_env). */
#define CHANFLOW_NODE_KERNEL_HEAD(name, kind)                                                   \
  /* The node's kind, for the host (Graph::validate reads the program's kernel names). */       \
  __kernel void name##__chanflow_##kind##_node(void) {}                                         \
  __kernel __attribute__((reqd_work_group_size(CHANFLOW_WG_SIZE, 1, 1))) void name(             \
      __global chanflow_channel* in, ulong begin, uint count, __global const chanflow_node_env* env)

#define CHANFLOW_NODE_KERNEL_BATCH                                                              \
  (void)in;                                                                                     \
  __local chanflow_wg_scratch wg;                                                               \
  __local chanflow_batch batch;                                                                 \
  ulong pos;                                                                                    \
  uint index;                                                                                   \
  int active;                                                                                   \
  const uint level = chanflow_next_batch(env, begin, count, &batch, &pos, &index, &active);     \
  CHANFLOW_IDLE_GROUP_LEAVES(level)                                                             \
  __global const chanflow_node_env* level_env = env + (level == CHANFLOW_NO_PORT ? 0u : level);

/* A work-group that found no CEs has nothing to spawn, join or free: on a GPU it leaves before
 * the node's collectives (the whole group at once: `level` is the group's), so the idle groups
 * of a sweep's grid, and every group of a chained pass that finds the levels empty, cost only
 * their start. PoCL 3.1 mis-runs a kernel whose work-groups skip barriers conditionally: on a
 * CPU device every group runs them (the graph sets CHANFLOW_IDLE_GROUPS_LEAVE by device type). */
#ifdef CHANFLOW_IDLE_GROUPS_LEAVE
#define CHANFLOW_IDLE_GROUP_LEAVES(level) \
  if ((level) == CHANFLOW_NO_PORT) return;
#else
#define CHANFLOW_IDLE_GROUP_LEAVES(level)
#endif

#define CHANFLOW_BATCH_PROLOGUE(ce_type, is_frame)                                              \
  __global chanflow_channel* in = env->in;                                                      \
  chanflow_ctx ctx;                                                                             \
  chanflow_ctx_init(&ctx, env, wg);                                                             \
  ctx.prepaid = prepaid;                                                                        \
  if (get_global_id(0) == 0 && in->ce_bytes != sizeof(ce_type))                                 \
    chanflow_report(env, CHANFLOW_ERR_CE_SIZE, in->ce_bytes, (uint)sizeof(ce_type));            \
  if (get_global_id(0) == 0 && env->frames != (is_frame))                                       \
    chanflow_report(env, CHANFLOW_ERR_NODE_KIND, env->frames, (is_frame));                      \
  __global ce_type* ce = (active && in->ce_bytes == sizeof(ce_type) && env->frames == (is_frame)) \
                             ? (__global ce_type*)(in->data + (size_t)index * in->ce_bytes) : 0;

/* Defines kernel `name` consuming CEs of `ce_type` with `body(__global ce_type*, chanflow_ctx*)`. */
#define CHANFLOW_KERNEL_NODE(name, ce_type, body)                                               \
  void name##_batch(__global const chanflow_node_env* env, ulong pos, uint index, int active,   \
                    __local const uint* prepaid, __local chanflow_wg_scratch* wg,               \
                    __local chanflow_keep* keep) {                                              \
    CHANFLOW_BATCH_PROLOGUE(ce_type, 0u)                                                        \
    ctx.keep = keep;                                                                            \
    if (ce) body(ce, &ctx);                                                                     \
    CHANFLOW_PHASE(wg, CHANFLOW_PART_BODY);                                                     \
    chanflow_flush(&ctx, 0, 0u, wg);                                                            \
    CHANFLOW_PHASE(wg, CHANFLOW_PART_PUBLISH);                                                  \
    chanflow_tfree_index(in, index, active, wg);                                                \
    CHANFLOW_PHASE(wg, CHANFLOW_PART_FREE);                                                     \
  }                                                                                             \
  CHANFLOW_NODE_KERNEL(name, plain)

/* The same for a node that yields when an output is full; ce_type starts with chanflow_task.
 * A task that finishes without a continuation returns to its parent's frame. A task that yielded
 * resumes at its flush with the records it kept (chanflow_yield_restore): its body runs once. */
#define CHANFLOW_YIELDING_KERNEL_NODE(name, ce_type, body) \
  CHANFLOW_YIELDING_NODE_ORDERED(name, ce_type, body, (void)0;)

/* The same, its batches at the run's serial depth or deeper grouped by work (sweep.cl,
 * chanflow_group_by_work): `work`, a function `long work(__global ce_type*)`, gives a CE's, and
 * the group's work-items take its CEs largest first. On a CPU device, whose work-group runs on
 * one thread without lanes, and with -DCHANFLOW_UNGROUPED (for measuring), as above. */
#if defined(CHANFLOW_CPU_DEVICE) || defined(CHANFLOW_UNGROUPED)
#define CHANFLOW_YIELDING_KERNEL_NODE_BY_WORK(name, ce_type, body, work) \
  CHANFLOW_YIELDING_KERNEL_NODE(name, ce_type, body)
#else
#define CHANFLOW_YIELDING_KERNEL_NODE_BY_WORK(name, ce_type, body, work)                        \
  CHANFLOW_YIELDING_NODE_ORDERED(name, ce_type, body,                                           \
    if (env->depth >= env->serial_depth && env->in->ce_bytes == sizeof(ce_type)) { /* uniform */ \
      __global ce_type* first = active ? (__global ce_type*)(env->in->data + (size_t)index * sizeof(ce_type)) : 0; \
      chanflow_group_by_work(first ? work(first) : 0l, &pos, &index, &active, wg);              \
    })
#endif

/* A yielding node's batch, `order` run first (it may give the items one another's CEs). */
#define CHANFLOW_YIELDING_NODE_ORDERED(name, ce_type, body, order)                              \
  void name##_batch(__global const chanflow_node_env* env, ulong pos, uint index, int active,   \
                    __local const uint* prepaid, __local chanflow_wg_scratch* wg,               \
                    __local chanflow_keep* keep) {                                              \
    order                                                                                       \
    CHANFLOW_BATCH_PROLOGUE(ce_type, 0u)                                                        \
    ctx.keep = keep;                                                                            \
    __global chanflow_task* task = (__global chanflow_task*)ce;                                 \
    ctx.link = (__global ulong*)task;                                                           \
    const uint resumed = task ? task->resume_port : 0u;                                         \
    const uint from = resumed & ~(CHANFLOW_TASK_YIELDED | CHANFLOW_TASK_RESUMABLE);             \
    if (resumed & CHANFLOW_TASK_YIELDED) {                                                      \
      task->resume_port = from;                                                                 \
      atomic_inc(&env->counters->restarts);                                                     \
      if (from < CHANFLOW_MAX_PORTS) atomic_inc(&env->counters->resumed_at[from]);             \
      chanflow_yield_restore(&ctx, index, from);                                                \
    } else if (ce) {                                                                            \
      body(ce, &ctx);                                                                           \
    }                                                                                           \
    CHANFLOW_PHASE(wg, CHANFLOW_PART_BODY);                                                     \
    /* Counted by the sweep it yielded in; every dispatch of a stack level names the counter. */ \
    if ((resumed & CHANFLOW_TASK_RESUMABLE) && env->resumable) atomic_dec(env->resumable);      \
    const uint refused = chanflow_flush(&ctx, task, from, wg);                                  \
    const int yields = refused != CHANFLOW_NO_PORT;                                             \
    if (yields) chanflow_yield_save(&ctx, index, refused);                                      \
    chanflow_record_yields(env, task, yields, pos, index, refused, wg);                         \
    CHANFLOW_PHASE(wg, CHANFLOW_PART_PUBLISH);                                                  \
    chanflow_join(chanflow_returns(&ctx, ce && !yields) ? task->ret_frame : 0ul, ctx.ready_frame, wg, keep); \
    CHANFLOW_PHASE(wg, CHANFLOW_PART_JOIN);                                                     \
    chanflow_tfree_index(in, index, active && !yields, wg);                                     \
    CHANFLOW_PHASE(wg, CHANFLOW_PART_FREE);                                                     \
  }                                                                                             \
  CHANFLOW_NODE_KERNEL(name, yielding)

/* A post-sync continuation: consumes a continuation stack whose CEs (ce_type) start with
 * chanflow_frame; it runs once all the children returned into the frame's slots, and returns
 * where the task that spawned it would have (chanflow_return). */
#define CHANFLOW_CONTINUATION_NODE(name, ce_type, body)                                         \
  void name##_batch(__global const chanflow_node_env* env, ulong pos, uint index, int active,   \
                    __local const uint* prepaid, __local chanflow_wg_scratch* wg,               \
                    __local chanflow_keep* keep) {                                              \
    CHANFLOW_BATCH_PROLOGUE(ce_type, 1u)                                                        \
    /* A frame's spawns are published (ctx.keep stays 0); the frames its joins make ready may be kept. */ \
    __global chanflow_frame* frame = (__global chanflow_frame*)ce;                              \
    ctx.link = (__global ulong*)frame;                                                          \
    if (ce) body(ce, &ctx);                                                                     \
    CHANFLOW_PHASE(wg, CHANFLOW_PART_BODY);                                                     \
    chanflow_flush(&ctx, 0, 0u, wg);                                                            \
    CHANFLOW_PHASE(wg, CHANFLOW_PART_PUBLISH);                                                  \
    /* Waiting again in place: the frame lives on, and its children may already run it. */      \
    const int again = ce && ctx.in_place;                                                       \
    /* The frame's scratch lives until its continuation has run. */                             \
    if (ce && !again && frame->scratch && env->in_scratch) chanflow_scratch_give(env->in_scratch, frame->scratch); \
    chanflow_join(chanflow_returns(&ctx, ce != 0 && !again) ? frame->ret_frame : 0ul, ctx.ready_frame, wg, keep); \
    CHANFLOW_PHASE(wg, CHANFLOW_PART_JOIN);                                                     \
    chanflow_tfree_index(in, index, active && !again, wg);                                      \
    CHANFLOW_PHASE(wg, CHANFLOW_PART_FREE);                                                     \
  }                                                                                             \
  CHANFLOW_NODE_KERNEL(name, continuation)

/* A work-group task: each work-group takes one CE (a task: ce_type starts with chanflow_task)
 * and every work-item of it runs `body(__global ce_type*, __local local_type*, chanflow_ctx*)`
 * on that CE together, with `local_type` in local memory for the group. For a task too big for
 * one work-item (a tiled product, a sort of a block): the body may use barriers (every item
 * reaches them; the CE is the same for all). The group's leader (work-item 0) holds the CE: only
 * it may spawn (at most the edge's max_per_item per CE), and when the body has run on every
 * item the task returns into its parent's frame, as a task of a yielding node does. A work-group
 * task never yields: admission control gives it room for its spawns; it has no continuation. */
#define CHANFLOW_GROUP_KERNEL_NODE(name, ce_type, local_type, body) \
  CHANFLOW_GROUP_KERNEL_NODE_THEN(name, ce_type, local_type, body, CHANFLOW_NOTHING_AFTER)
#define CHANFLOW_NOTHING_AFTER(task, ctx)

/* ... and `then(task, ctx)`, run by the group's first work-item once every item's part is done
 * (a cilk_for leaf lets go of the block its items read: chanflow_caps_release). */
#define CHANFLOW_GROUP_KERNEL_NODE_THEN(name, ce_type, local_type, body, then)                   \
  void name##_batch(__global const chanflow_node_env* env, ulong pos, uint index, int active,   \
                    __local const uint* prepaid, __local chanflow_wg_scratch* wg,               \
                    __local local_type* group_local, __local ulong* group_ce) {                 \
    CHANFLOW_BATCH_PROLOGUE(ce_type, 0u)                                                        \
    (void)pos;                                                                                  \
    if (chanflow_local_id() == 0) *group_ce = (ulong)ce;                                        \
    barrier(CLK_LOCAL_MEM_FENCE);                                                               \
    __global ce_type* task = (__global ce_type*)*group_ce;                                      \
    ctx.link = (__global ulong*)task;                                                           \
    ctx.follower = chanflow_local_id() != 0;                                                    \
    if (task) body(task, group_local, &ctx);                                                    \
    /* Every item's part of the result is written before the leader returns the task. */       \
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);                                        \
    if (task && !ctx.follower) then(task, &ctx);                                                \
    CHANFLOW_PHASE(wg, CHANFLOW_PART_BODY);                                                     \
    chanflow_group_spawns(&ctx);                                                                \
    chanflow_flush(&ctx, 0, 0u, wg);                                                            \
    CHANFLOW_PHASE(wg, CHANFLOW_PART_PUBLISH);                                                  \
    chanflow_join(chanflow_returns(&ctx, ce != 0) ? ((__global chanflow_task*)ce)->ret_frame : 0ul, 0ul, wg, 0); \
    CHANFLOW_PHASE(wg, CHANFLOW_PART_JOIN);                                                     \
    chanflow_tfree_index(in, index, active, wg);                                                \
    CHANFLOW_PHASE(wg, CHANFLOW_PART_FREE);                                                     \
  }                                                                                             \
  CHANFLOW_NODE_KERNEL_HEAD(name, group) {                                                      \
    __local local_type group_local;                                                             \
    __local ulong group_ce;                                                                     \
    CHANFLOW_NODE_KERNEL_BATCH                                                                  \
    name##_batch(level_env, pos, index, active, batch.prepaid, &wg, &group_local, &group_ce);   \
  }                                                                                             \
  CHANFLOW_SCHED_RUN(name, local_type,                                                          \
                     name##_batch(env, pos, index, active, prepaid, wg, (__local local_type*)group_local, group_ce))

/* Loops chanflowc compiles from cilk_for (compiler/src/cilk_for.cpp), shaped by the device: on a
 * GPU a leaf of the range is a work-group task whose work-items share its iterations and no loop
 * runs inline in its task; on a CPU device (CHANFLOW_CPU_DEVICE), where a work-group is one core's
 * vectorized loop, a leaf is a task per work-item, and a loop of up to CHANFLOW_LOOP_INLINE_CPU
 * iterations runs in the task that reaches it (as a task per work-item would run a data loop's
 * share). The grains are node_layout.h's, which the host's loops use too (cilk_runtime.cpp). */
#ifdef CHANFLOW_CPU_DEVICE
#define CHANFLOW_LEAF_ITEM 0L
#define CHANFLOW_LEAF_ITEMS 1L
#define CHANFLOW_LOOP_INLINE(n) ((long)(n) <= CHANFLOW_LOOP_INLINE_CPU)
#define CHANFLOW_LOOP_GRAIN(n) CHANFLOW_LOOP_GRAIN_CPU((long)(n))
#else
#define CHANFLOW_LEAF_ITEM ((long)get_local_id(0))
#define CHANFLOW_LEAF_ITEMS ((long)get_local_size(0))
#define CHANFLOW_LOOP_INLINE(n) 0
#define CHANFLOW_LOOP_GRAIN(n) CHANFLOW_LOOP_GRAIN_GPU((long)(n))
#endif
