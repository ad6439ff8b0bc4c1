/* The kernel-node convention: a user writes a body that runs once per CE; the wrapper that
 * CHANFLOW_KERNEL_NODE generates hands each work-item its CE (deq), runs the body, flushes the
 * spawns it recorded at one uniform point (talloc/enq per output port), and frees the CE
 * (tfree). Spawns are recorded per work-item, so a body may spawn inside divergent code
 * (the thesis' software predication, 5.3.1).
 *
 *   typedef struct { uint n; } FibTask;
 *   typedef struct { __global uint* result; } FibArgs;
 *   void fib_body(__global const FibTask* task, chanflow_ctx* ctx) {
 *     if (task->n <= 2) { atomic_inc(CHANFLOW_ARGS(ctx, FibArgs)->result); return; }
 *     FibTask a = {task->n - 1}, b = {task->n - 2};
 *     chanflow_spawn(ctx, CHANFLOW_PORT(fib, fib_tasks), a);   // the edge into channel fib_tasks
 *     chanflow_spawn(ctx, CHANFLOW_PORT(fib, fib_tasks), b);
 *   }
 *   CHANFLOW_KERNEL_NODE(fib, FibTask, fib_body)
 *
 * A port is an output edge (make_edge with Spawns, Children or Continuation); the graph defines
 * CHANFLOW_PORT(kernel, port) for every port of every node it runs, by the edge's name (by
 * default its target node's name), so a kernel never depends on the order edges were made in.
 * Which macro made a kernel is the node's kind (plain, yielding, continuation): the host reads
 * it from the program, it is never stated again.
 *
 * Yielding nodes (CHANFLOW_YIELDING_KERNEL_NODE; wavefront-yield emulation, thesis 4.4): when a
 * port's reservation is refused for the work-group, the items that asked on it stop there (the
 * others go on); each records the port in its CE (chanflow_task::resume_port), keeps what it has
 * not flushed (its records from that port on) in its input's yield state, leaves a restart
 * context (a record for the aggregator, or, in a device sweep, its control entry published
 * again) and keeps its CE. A restart does not run the body again: it takes the records back and
 * resumes the flush at the refused port, so no statement of a body runs twice (a body need not
 * be idempotent) and a continuation reserved before the yield is never reserved twice.
 *
 * Cilk (DESIGN.md decision 8): a pre-sync task spawns its continuation (a CE starting with
 * chanflow_frame) with chanflow_spawn_continuation (its Continuation edge, always port 0), and
 * its children with chanflow_spawn_child(ctx, port, child, slot); the continuation node
 * (CHANFLOW_CONTINUATION_NODE) runs once every child has returned into its slots (a join
 * counter in the frame; the last child enqueues it). Tasks and continuations return values
 * with chanflow_return(ctx, value).
 *
 *   void fib_pre_sync(__global FibFrame* f, chanflow_ctx* ctx) {
 *     if (f->n <= 2) { chanflow_return(ctx, 1); return; }
 *     const FibCont cont = {{0}, 0, 0};                 // slots x, y
 *     chanflow_spawn_continuation(ctx, cont);
 *     const FibFrame a = {{0}, f->n - 1}, b = {{0}, f->n - 2};
 *     chanflow_spawn_child(ctx, CHANFLOW_PORT(fib_spawn, fib), a, 0);
 *     chanflow_spawn_child(ctx, CHANFLOW_PORT(fib_spawn, fib), b, 1);
 *   }
 *   void fib_post_sync(__global FibCont* c, chanflow_ctx* ctx) { chanflow_return(ctx, c->x + c->y); }
 *
 * Build options set by the graph: CHANFLOW_WG_SIZE, CHANFLOW_SPAWN_WORDS (private staging per
 * work-item, in 32-bit words) and CHANFLOW_STAGED_CES (spawns per work-item over all ports). */
#ifndef CHANFLOW_SPAWN_WORDS
#define CHANFLOW_SPAWN_WORDS 1
#endif
#ifndef CHANFLOW_STAGED_CES
#define CHANFLOW_STAGED_CES 1
#endif

#define CHANFLOW_NO_PORT 0xffffffffu
/* Initializers for the headers the library fills at the flush: a task's chanflow_task and a
 * continuation's chanflow_frame. */
#define CHANFLOW_TASK_INIT {0ul, 0ul, 0u, 0u}
#define CHANFLOW_FRAME_INIT {0ul, 0ul, 0, 0u, 0u, 0ul}

/* chanflow_ctx::patch of a child that joins its parent's continuation without a result slot. */
#define CHANFLOW_VOID_SLOT 0xffffffffu
/* ... and of one that joins where its parent returns (chanflow_forward_children). */
#define CHANFLOW_FORWARD_SLOT 0xfffffffeu

/* CEs a batch keeps for its own work-group to run next, under the device scheduler on a GPU
 * (schedule.cl, "kept spawns"): one port's spawns, at most a work-group's worth, reserved and
 * written in their channel but not published; or the frames its joins made ready in one channel
 * (join.cl, "the ascent kept"). */
typedef struct {
  __global chanflow_channel* channel; /* 0: nothing kept */
  uint index;                         /* spawns: the first CE's physical index; the others follow it */
  uint n;
  uint listed;                        /* frames: their physical indices are list[0..n) */
  uint list[CHANFLOW_WG_SIZE];
  /* The device scheduler's: the entry consuming `found_channel`, from the last time it looked. */
  __global chanflow_channel* found_channel;
  uint found;
} chanflow_keep;

/* What a body sees: its environment and its private spawn record. */
typedef struct {
  __global const chanflow_node_env* env;
  __global ulong* link;                   /* the CE's {ret, ret_frame} (tasks and frames), or 0 */
  ulong ready_frame;                      /* this task's continuation, flushed with no children */
  uint in_place;                          /* a continuation that waits again in its own frame */
  uint follower;                          /* a work-group task's work-item other than its leader:
                                             the task's value is the leader's (chanflow_return) */
  ulong task_scratch;                     /* the block chanflow_task_scratch took, until a frame receives it */
  __local const uint* prepaid;            /* credits a sweep took per port for this batch, or 0 */
  __local chanflow_keep* keep;            /* where the flush may keep spawns for the group, or 0 */
  /* The spawn record: CEs staged per port (count), per staged CE its return slot + 1 to patch or 0
   * (patch), the CEs' words (staging); read and written through CHANFLOW_COUNT, CHANFLOW_PATCH and
   * CHANFLOW_STAGING. Indexed by port at run time, so a GPU compiler keeps it in the work-item's
   * stack, off-chip once a group's stacks outgrow L1 (NVIDIA: 440 bytes a work-item for Fib's).
   * Where the graph builds with CHANFLOW_WG_ITEM_WORDS (GraphOptions::spawn_staging), it lives
   * in the work-group's local memory instead, a column per work-item (chanflow_wg_scratch::
   * per_item, words a work-group's size apart: the group's items touch a word together, no bank
   * conflicts). */
#ifdef CHANFLOW_WG_ITEM_WORDS
  __local uint* record; /* this item's column: word i at record[i * CHANFLOW_WG_SIZE] */
#else
  uint count[CHANFLOW_NODE_PORTS];
  uint patch[CHANFLOW_STAGED_CES];
  uint staging[CHANFLOW_SPAWN_WORDS];
#endif
} chanflow_ctx;

#ifdef CHANFLOW_WG_ITEM_WORDS
#if CHANFLOW_WG_ITEM_WORDS < CHANFLOW_NODE_PORTS + CHANFLOW_STAGED_CES + CHANFLOW_SPAWN_WORDS
#error "CHANFLOW_WG_ITEM_WORDS is smaller than the spawn record"
#endif
#define CHANFLOW_COUNT(ctx, p) ((ctx)->record[(p) * CHANFLOW_WG_SIZE])
#define CHANFLOW_PATCH(ctx, k) ((ctx)->record[(CHANFLOW_NODE_PORTS + (k)) * CHANFLOW_WG_SIZE])
#define CHANFLOW_STAGING(ctx, w) \
  ((ctx)->record[(CHANFLOW_NODE_PORTS + CHANFLOW_STAGED_CES + (w)) * CHANFLOW_WG_SIZE])
#else
#define CHANFLOW_COUNT(ctx, p) ((ctx)->count[p])
#define CHANFLOW_PATCH(ctx, k) ((ctx)->patch[k])
#define CHANFLOW_STAGING(ctx, w) ((ctx)->staging[w])
#endif

#define CHANFLOW_ARGS(ctx, type) ((__global type*)(ctx)->env->user_args)

uint chanflow_depth(const chanflow_ctx* ctx) { return ctx->env->depth; }
/* The stack level from which tasks with a serial form run it (CHANFLOW_SERIAL_OFF: none). */
uint chanflow_serial_depth(const chanflow_ctx* ctx) { return ctx->env->serial_depth; }

/* Index in chanflow_ctx::patch of port p's first staged CE. */
uint chanflow_patch_base(__global const chanflow_node_env* env, uint p) {
  uint base = 0;
  for (uint q = 0; q < p; ++q) base += env->max_spawns[q];
  return base;
}

void chanflow_report(__global const chanflow_node_env* env, uint code, uint detail, uint extra);

/* A failed assert of device code (chanflowc prints assert's __assert_fail as this): the run stops
 * after the dispatch, naming the assertion (Graph::name_assertions). The work-item goes on, as
 * OpenCL C has no abort. */
void chanflow_assert_fail(__global const chanflow_node_env* env, uint assertion) {
  chanflow_report(env, CHANFLOW_ERR_ASSERT, assertion, 0u);
}

/* exit(status) or abort() in device code (chanflowc prints them as this): the run stops after the
 * dispatch and the process ends as the first such call said (ExitRequest). The work-item goes on,
 * as for an assertion. */
void chanflow_exit(__global const chanflow_node_env* env, int status, uint aborts) {
  chanflow_report(env, CHANFLOW_ERR_EXIT, (uint)status, aborts);
}

void chanflow_report(__global const chanflow_node_env* env, uint code, uint detail, uint extra) {
  if (atomic_cmpxchg(&env->status->code, CHANFLOW_ERR_NONE, code) == CHANFLOW_ERR_NONE) {
    env->status->node = env->node;
    env->status->detail = detail;
    env->status->extra = extra;
  }
}

/* Records one CE of `bytes` bytes for output `port`; flushed after the body returns. With
 * ret_slot > 0 the CE is a child task of this task's continuation frame (port env->cont_port):
 * at the flush its chanflow_task::ret_frame is pointed at the frame and its ret at the frame's
 * 64-bit slot ret_slot - 1 (none for CHANFLOW_VOID_SLOT). */
void chanflow_spawn_bytes(chanflow_ctx* ctx, uint port, const void* value, uint bytes, uint ret_slot) {
  __global const chanflow_node_env* env = ctx->env;
  if (port >= env->ports) { /* CHANFLOW_NO_PORT: chanflow_spawn_continuation without a continuation */
    chanflow_report(env, port == CHANFLOW_NO_PORT ? CHANFLOW_ERR_NO_CONTINUATION : CHANFLOW_ERR_BAD_PORT, port,
                    env->ports);
    return;
  }
  /* A child returning into a continuation needs one: the flush checks that the node has a
   * continuation port, or waits in its own frame (chanflow_continue_in_place), unless the body
   * forwarded its children (chanflow_forward_children). */
  if (bytes != env->ce_words[port] * 4u) {
    chanflow_report(env, CHANFLOW_ERR_SPAWN_SIZE, port, env->ce_words[port] * 4u);
    return;
  }
  const uint k = CHANFLOW_COUNT(ctx, port);
  if (k >= env->max_spawns[port]) {
    chanflow_report(env, CHANFLOW_ERR_SPAWN_LIMIT, port, env->max_spawns[port]);
    return;
  }
  const uint words = env->ce_words[port];
  const uint at = env->staging_offset[port] + k * words;
  const uint* src = (const uint*)value;
  for (uint w = 0; w < words; ++w) CHANFLOW_STAGING(ctx, at + w) = src[w];
  CHANFLOW_PATCH(ctx, chanflow_patch_base(env, port) + k) = ret_slot;
  CHANFLOW_COUNT(ctx, port) = k + 1;
}

/* The index of port `port` (the edge's name: by default its target node's) of the node running
 * kernel `kernel`, from the #defines the graph generates: chanflow_spawn(ctx,
 * CHANFLOW_PORT(fib_spawn, fib), child). */
#define CHANFLOW_PORT(kernel, port) chanflow_port__##kernel##__##port

#define chanflow_spawn(ctx, port, value) chanflow_spawn_bytes((ctx), (port), &(value), sizeof(value), 0u)
/* Spawns a child task (its CE type starts with chanflow_task) that returns into slot `slot`
 * of this task's continuation: the 64-bit word at byte CHANFLOW_FRAME_BYTES + 8 * slot of the
 * continuation CE. The continuation (chanflow_spawn_continuation) runs once every such child
 * has returned. */
#define chanflow_spawn_child(ctx, port, value, slot) \
  chanflow_spawn_bytes((ctx), (port), &(value), sizeof(value), (slot) + 1u)
/* Spawns a child task that returns nothing (a Cilk function of type void): it counts in this
 * task's continuation's join like any child, and writes no slot. */
#define chanflow_spawn_void_child(ctx, port, value) \
  chanflow_spawn_bytes((ctx), (port), &(value), sizeof(value), CHANFLOW_VOID_SLOT)
/* Spawns this task's continuation frame (a CE starting with chanflow_frame) on the node's
 * continuation port (a Continuation edge; the library makes it port 0). */
#define chanflow_spawn_continuation(ctx, value) \
  chanflow_spawn_bytes((ctx), (ctx)->env->cont_port, &(value), sizeof(value), 0u)

/* In a continuation node: a sync after more spawns, waited for in this same frame rather than a
 * new one on a continuation port. `value` (this node's frame type) is written over the frame
 * after its chanflow_frame header; the children recorded in this run return into its slots, and
 * the last of them makes it ready again. The frame is not freed meanwhile, so a function that
 * syncs several times needs no room for a second frame (a continuation feeding its own level
 * could otherwise fill it and stall). */
void chanflow_continue_in_place_bytes(chanflow_ctx* ctx, const void* value, uint bytes) {
  __global const chanflow_node_env* env = ctx->env;
  if (!env->frames || !ctx->link || bytes != env->in->ce_bytes) {
    chanflow_report(env, CHANFLOW_ERR_NODE_KIND, env->frames, bytes);
    return;
  }
  /* Byte copies: character types may alias the frame's fields (a uint copy of a struct written
   * as longs let the compiler drop the stores). */
  __global uchar* frame = (__global uchar*)ctx->link;
  const uchar* src = (const uchar*)value;
  for (uint b = CHANFLOW_FRAME_BYTES; b < bytes; ++b) frame[b] = src[b];
  ctx->in_place = 1u;
}
#define chanflow_continue_in_place(ctx, value) chanflow_continue_in_place_bytes((ctx), &(value), sizeof(value))

/* A tail sync: a body whose function, after waiting for the children it recorded since its last
 * sync, would only return (nothing of its own to give back) hands them its own return instead of
 * leaving a continuation: each joins the frame this task or continuation returns into (or none,
 * at the root), whose join counter the flush raises by them before publishing them, and no
 * continuation runs (a Cilk part's range split in leaves, a void function's last spawns). The
 * children must not read what ends with this body: its scratch block is given back at its flush
 * (chanflowc forwards only where a function keeps no locals whose address children get). */
void chanflow_forward_children(chanflow_ctx* ctx) {
  for (uint p = 0; p < ctx->env->ports; ++p) {
    const uint base = chanflow_patch_base(ctx->env, p);
    for (uint k = 0; k < CHANFLOW_COUNT(ctx, p); ++k)
      if (CHANFLOW_PATCH(ctx, base + k) != 0u) CHANFLOW_PATCH(ctx, base + k) = CHANFLOW_FORWARD_SLOT;
  }
}

/* Returns `value` from this task or continuation into its result slot. The parent is told
 * (its join counter) when the task has finished, after the flush, not here. */
void chanflow_return(chanflow_ctx* ctx, ulong value) {
  if (ctx->link && ctx->link[0] && !ctx->follower) *(__global ulong*)ctx->link[0] = value;
}

void chanflow_ctx_init(chanflow_ctx* ctx, __global const chanflow_node_env* env, __local chanflow_wg_scratch* wg) {
#ifdef CHANFLOW_WG_ITEM_WORDS
  ctx->record = wg->per_item + chanflow_local_id();
#else
  (void)wg;
#endif
  ctx->env = env;
  ctx->link = 0;
  ctx->ready_frame = 0;
  ctx->in_place = 0;
  ctx->follower = 0;
  ctx->task_scratch = 0;
  ctx->prepaid = 0;
  ctx->keep = 0;
  for (uint p = 0; p < CHANFLOW_NODE_PORTS; ++p) CHANFLOW_COUNT(ctx, p) = 0;
}

/* In a work-group task (CHANFLOW_GROUP_KERNEL_NODE) only the leader, work-item 0, spawns: what
 * another item recorded is reported (CHANFLOW_ERR_GROUP_SPAWN) and dropped. */
void chanflow_group_spawns(chanflow_ctx* ctx) {
  if (!ctx->follower) return;
  for (uint p = 0; p < ctx->env->ports; ++p)
    if (CHANFLOW_COUNT(ctx, p)) {
      chanflow_report(ctx->env, CHANFLOW_ERR_GROUP_SPAWN, p, 0u);
      CHANFLOW_COUNT(ctx, p) = 0u;
    }
}
