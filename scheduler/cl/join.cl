/* Join counters: a task or continuation that has returned tells its parent's frame, and the
 * last child to return makes the frame ready (see spawn.cl). */

/* Tells the parent that this item's task (or continuation) has returned: `frame` is the
 * chanflow_frame its result slot lies in, or 0. The child that brings a frame's join counter to
 * zero makes it ready (chanflow_enq_at into the frame's channel); so does a task for its own
 * continuation when that has no children (`own`). Collective; frames of one work-group may lie
 * in different channels, one chanflow_enq_at per channel.
 *
 * The ascent kept (`keep`: the device scheduler's on a GPU, schedule.cl; 0 elsewhere): where the
 * batch kept no spawns, the frames it made ready in the first of those channels are listed for
 * the group to run next instead of published, as kept spawns are, when that level has no
 * published frame waiting (its claim credits are 0: publishing would make a batch of these alone,
 * after a poll and a claim). A narrow recursion's way back up so stays in the work-group whose
 * children completed each frame. With published frames waiting, ours join them for a fuller
 * batch. `-DCHANFLOW_ASCENT_PUBLISHED` publishes every frame, `-DCHANFLOW_ASCENT_KEPT_ALWAYS`
 * keeps them whatever waits (both for measuring). */
#if !defined(CHANFLOW_CPU_DEVICE) && !defined(CHANFLOW_ASCENT_PUBLISHED)
#define CHANFLOW_ASCENT_KEPT
#endif

void chanflow_join(ulong frame, ulong own, __local chanflow_wg_scratch* wg, __local chanflow_keep* keep) {
  const uint lid = chanflow_local_id();
  __global chanflow_frame* f = (__global chanflow_frame*)own;
  int todo = own != 0ul;
#ifdef CHANFLOW_ASCENT_KEPT
  int may_keep = keep != 0 && keep->n == 0u; /* uniform: the flush's leader set n before its barriers */
#else
  (void)keep;
#endif
  if (frame) {
    /* Release (order.cl): the result slot is written before the count drops, for the child that
     * makes the frame ready, possibly in another work-group of the launch. */
    chanflow_fence_acq_rel();
    __global chanflow_frame* parent = (__global chanflow_frame*)frame;
    if (atomic_dec((volatile __global uint*)&parent->pending) == 1u) {
      chanflow_fence_acq_rel(); /* acquire: every sibling's slot, before the frame is published */
      f = parent;
      todo = 1;
    }
  }
  for (;;) {
    /* The first item with a frame to publish, by a local minimum: the leader's scan of every item
     * it replaced took a dependent local read per item (~256 on a GPU, a few µs a batch). */
    if (lid == 0) wg->ok = (int)CHANFLOW_WG_SIZE;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (todo) atomic_min((volatile __local int*)&wg->ok, (int)lid);
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint first = (uint)wg->ok;
    if (first == CHANFLOW_WG_SIZE) break;
    if (lid == first) {
      wg->data_base = (ulong)f->channel;
#ifdef CHANFLOW_ASCENT_KEPT
      /* Whether to keep this channel's frames, told the group through `listed` (read once). */
      if (may_keep) {
#ifdef CHANFLOW_ASCENT_KEPT_ALWAYS
        keep->listed = 1;
#else
        keep->listed = *(volatile __global ulong*)&f->channel->ctrl_credits == 0ul;
#endif
      }
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    __global chanflow_channel* chosen = (__global chanflow_channel*)wg->data_base;
    const int mine = todo && f->channel == chosen;
#ifdef CHANFLOW_ASCENT_KEPT
    if (may_keep && keep->listed) { /* uniform */
      const uint at = chanflow_wg_exclusive_scan(mine ? 1u : 0u, wg);
      if (mine) keep->list[at] = f->index;
      if (lid == 0) {
        keep->channel = chosen;
        keep->n = wg->total;
      }
      may_keep = 0;
      if (mine) todo = 0;
      continue;
    }
    may_keep = 0;
#endif
    chanflow_enq_at(chosen, mine ? f->index : 0u, mine, wg);
    if (mine) todo = 0;
  }
}

/* Whether this item's task has finished: it ran and did not leave a continuation behind to
 * return for it. */
int chanflow_returns(const chanflow_ctx* ctx, int ran) {
  const uint cont = ctx->env->cont_port;
  return ran && (cont == CHANFLOW_NO_PORT || CHANFLOW_COUNT(ctx, cont) == 0u);
}
