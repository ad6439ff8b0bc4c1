/* The flush: a work-group's recorded spawns moved into their channels at one uniform point
 * (part of the kernel-node convention, see spawn.cl). */

/* Moves every recorded spawn into its channel: one talloc/enq per port for the work-group.
 * Collective. `task` is the item's CE when the node yields (0 otherwise); `from_port` the first
 * port this item still has to flush. A refused reservation refuses the items that asked on that
 * port (all or nothing for them); they stop there, while the others go on with later ports, so
 * items resumed past a full port are not held back by fresh ones. Returns this item's refused
 * port, or CHANFLOW_NO_PORT. */
uint chanflow_flush(chanflow_ctx* ctx, __global chanflow_task* task, uint from_port,
                    __local chanflow_wg_scratch* wg) {
  __global const chanflow_node_env* env = ctx->env;
  uint cont_index = task ? task->cont_index : 0u;
  uint children = 0;
  uint refused = CHANFLOW_NO_PORT;
  const int joins = env->cont_port != CHANFLOW_NO_PORT || ctx->in_place;
  const ulong up = ctx->link ? ctx->link[1] : 0ul; /* the frame this task returns into, or 0 */
  for (uint p = 0; p < env->ports; ++p) {
    const uint patch_base = chanflow_patch_base(env, p);
    for (uint k = 0; k < CHANFLOW_COUNT(ctx, p); ++k) {
      const uint slot = CHANFLOW_PATCH(ctx, patch_base + k);
      children += slot != 0u && slot != CHANFLOW_FORWARD_SLOT;
    }
  }
  if (children && !joins) chanflow_report(env, CHANFLOW_ERR_NO_CONTINUATION, 0u, 0u);
#ifdef CHANFLOW_SKIP_EMPTY_PORTS
  /* The ports some item of the work-group has CEs for (or prepaid credits to give back): a GPU
   * skips the others' collectives, the whole group alike. A compiled Cilk function has a port
   * per callee and loop leaf (compiled Strassen's task node: 13) and one run spawns on one or
   * two; each port costs a scan and three barriers even when empty. PoCL 3.1 mis-runs barriers
   * under a condition, so a CPU device flushes every port. */
  uint mine = 0u;
  for (uint p = 0; p < env->ports; ++p) /* prepaid credits go back even on ports this item is past */
    if ((p >= from_port && CHANFLOW_COUNT(ctx, p)) || (ctx->prepaid && ctx->prepaid[p])) mine |= 1u << p;
  const uint used = chanflow_wg_or(mine, wg);
#endif
#ifndef CHANFLOW_CPU_DEVICE
  int may_keep = ctx->keep != 0; /* uniform */
#endif
  if (ctx->in_place) { /* before any child is published: the join counter they will count down */
    __global chanflow_frame* self = (__global chanflow_frame*)ctx->link;
    self->pending = children;
    if (children == 0u) ctx->ready_frame = (ulong)self;
  }
  for (uint p = 0; p < env->ports; ++p) {
#ifdef CHANFLOW_SKIP_EMPTY_PORTS
    if (!(used & (1u << p))) { /* no item has anything here: as a flush of nothing, uniformly */
      if (task && refused == CHANFLOW_NO_PORT && p + 1 > from_port) task->resume_port = p + 1;
      continue;
    }
#endif
    /* A sweep's deepest level may name a level not made yet (0): nothing fits there. */
    const int missing = env->port[p] == 0ul;
    __global chanflow_channel* out = missing ? env->in : env->port[p];
    uint n = p >= from_port && refused == CHANFLOW_NO_PORT ? CHANFLOW_COUNT(ctx, p) : 0u;
    if (missing && n > 0) {
      refused = p;
      n = 0;
    }
    const uint words = env->ce_words[p];
    chanflow_ticket t;
    __global uint* dst = (__global uint*)chanflow_talloc_prepaid(out, n, &t, wg, ctx->prepaid ? ctx->prepaid[p] : 0u);
    CHANFLOW_PHASE(wg, CHANFLOW_PART_RESERVE);
    if (!dst) {
      /* Uniform: the work-group's request on this port was refused. */
      if (!env->yielding && chanflow_local_id() == 0) chanflow_report(env, CHANFLOW_ERR_CHANNEL_FULL, p, 0);
      if (n > 0) refused = p;
      n = 0;
    }
    for (uint w = 0; w < n * words; ++w) dst[w] = CHANFLOW_STAGING(ctx, env->staging_offset[p] + w);
    /* The continuation frame returns where this task would have and waits for the children;
     * it is enqueued by the last of them, or by chanflow_join if it has none. Other ports'
     * CEs are enqueued here. One path for every port: PoCL 3.1 mis-runs collectives
     * (barriers) under a condition, even a uniform one. */
    const int is_cont = p == env->cont_port;
    if (is_cont && n > 0) {
      cont_index = t.index;
      if (task) task->cont_index = t.index;
      __global chanflow_frame* f = (__global chanflow_frame*)dst;
      f->ret = ctx->link ? ctx->link[0] : 0ul;
      f->ret_frame = ctx->link ? ctx->link[1] : 0ul;
      f->channel = out;
      f->index = t.index;
      f->pending = children;
      f->scratch = ctx->task_scratch; /* taken by the body (chanflow_task_scratch), or 0 */
      ctx->task_scratch = 0ul;
      if (!f->scratch && env->cont_scratch) {
        f->scratch = chanflow_scratch_take(env->cont_scratch, t.index);
        if (!f->scratch) chanflow_report(env, CHANFLOW_ERR_SCRATCH, env->depth, env->cont_scratch->blocks);
      }
      if (children == 0u) ctx->ready_frame = (ulong)f;
    }
    const uint patch_base = chanflow_patch_base(env, p);
    uint forwarded = 0;
    for (uint k = 0; k < n && !is_cont; ++k) {
      const uint slot = CHANFLOW_PATCH(ctx, patch_base + k);
      if (slot == CHANFLOW_FORWARD_SLOT) { /* joins where this task returns (chanflow_forward_children) */
        __global chanflow_task* child = (__global chanflow_task*)(dst + k * words);
        child->ret = 0ul;
        child->ret_frame = up;
        ++forwarded;
      } else if (slot != 0 && joins) {
        __global chanflow_channel* cont =
            ctx->in_place ? 0 : (__global chanflow_channel*)env->port[env->cont_port];
        const ulong frame = ctx->in_place ? (ulong)ctx->link : (ulong)(cont->data + (size_t)cont_index * cont->ce_bytes);
        __global chanflow_task* child = (__global chanflow_task*)(dst + k * words);
        child->ret = slot == CHANFLOW_VOID_SLOT ? 0ul : frame + CHANFLOW_FRAME_BYTES + 8u * (slot - 1u);
        child->ret_frame = frame;
      }
    }
    /* Counted in before they are published: the frame waits for this task still (it joins after
     * the flush), so its count cannot reach zero meanwhile. */
    if (forwarded && up) atomic_add((volatile __global uint*)&((__global chanflow_frame*)up)->pending, forwarded);
    CHANFLOW_PHASE(wg, CHANFLOW_PART_WRITE);
    if (is_cont) t.n = t.total = 0u; /* frames are enqueued by chanflow_join */
#ifndef CHANFLOW_CPU_DEVICE
    /* Kept for the work-group (ctx->keep: the device scheduler's, schedule.cl): on the first port
     * that is not the continuation's, the first work-group's worth of the spawns (the group's
     * reservation is contiguous: its first CEs), written and not published; the enq below
     * publishes the rest for every group, and its barrier shows the kept ones to this group. A
     * recursion that spawns more than a group's worth so goes on in the group, a batch at a time,
     * and hands its surplus out. Uniform. */
    if (may_keep && !is_cont && t.total > 0u) {
      const uint kept = min(t.total, (uint)CHANFLOW_WG_SIZE);
      if (chanflow_local_id() == 0) {
        ctx->keep->channel = out;
        ctx->keep->index = t.index; /* the leader's offset is 0: the group's first CE */
        ctx->keep->n = kept;
        ctx->keep->listed = 0u;
      }
      may_keep = 0;
      const uint mine = t.offset < kept ? min(t.n, kept - t.offset) : 0u; /* this item's kept CEs */
      t.index += mine;
      t.n -= mine;
      t.offset = max(t.offset + mine, kept) - kept;
      t.total -= kept;
    }
#endif
    enq(out, &t, wg);
    if (task && refused == CHANFLOW_NO_PORT && p + 1 > from_port) task->resume_port = p + 1;
  }
  /* A block the body took that no frame received and no yield keeps for its frame (a base case,
   * or a task with no continuation). */
  if (ctx->task_scratch && refused == CHANFLOW_NO_PORT) {
    chanflow_scratch_give(env->cont_scratch, ctx->task_scratch);
    ctx->task_scratch = 0ul;
  }
  return refused;
}
