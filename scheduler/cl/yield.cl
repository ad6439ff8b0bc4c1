/* Wavefront-yield emulation: what a yielded task keeps (its yield state), and restart contexts of
 * the items whose reservation was refused (see spawn.cl and scheduler/README.md). */

/* A task's yield state: the slot of its CE in the input's yield-state area. Its layout, in 32-bit
 * words: the task scratch block (2 words), the record count of every port, then the return slots
 * and the staged words of the ports, each at the offset the flush uses (chanflow_patch_base,
 * chanflow_node_env::staging_offset). The host sizes a slot the same way (yield_state_bytes). */
__global uint* chanflow_yield_state(__global const chanflow_node_env* env, uint index) {
  return (__global uint*)(env->yield_state + (size_t)(index % env->in->capacity) * env->yield_state_bytes);
}

/* Keeps what a task refused at port `refused` has not flushed: its records from that port on, the
 * counts of all (the continuation's says whether the task returns by itself), and its task scratch
 * block if no frame received it. Before the restart context is published (chanflow_record_yields
 * fences), so whoever restarts the task sees it. */
void chanflow_yield_save(const chanflow_ctx* ctx, uint index, uint refused) {
  __global const chanflow_node_env* env = ctx->env;
  if (!env->yield_state) {
    chanflow_report(env, CHANFLOW_ERR_YIELD_STATE, env->depth, 0u);
    return;
  }
  __global uint* state = chanflow_yield_state(env, index);
  *(__global ulong*)state = ctx->task_scratch;
  __global uint* counts = state + 2;
  __global uint* patch = counts + env->ports;
  __global uint* staging = patch + chanflow_patch_base(env, env->ports);
  for (uint p = 0; p < env->ports; ++p) {
    const uint n = CHANFLOW_COUNT(ctx, p);
    counts[p] = n;
    if (p < refused) continue;
    const uint base = chanflow_patch_base(env, p);
    for (uint k = 0; k < n; ++k) patch[base + k] = CHANFLOW_PATCH(ctx, base + k);
    const uint from = env->staging_offset[p];
    for (uint w = from; w < from + n * env->ce_words[p]; ++w) staging[w] = CHANFLOW_STAGING(ctx, w);
  }
}

/* The other half: a restarted task takes back what chanflow_yield_save kept, instead of running
 * its body again. */
void chanflow_yield_restore(chanflow_ctx* ctx, uint index, uint from_port) {
  __global const chanflow_node_env* env = ctx->env;
  if (!env->yield_state) {
    chanflow_report(env, CHANFLOW_ERR_YIELD_STATE, env->depth, 0u);
    return;
  }
  __global const uint* state = chanflow_yield_state(env, index);
  ctx->task_scratch = *(__global const ulong*)state;
  __global const uint* counts = state + 2;
  __global const uint* patch = counts + env->ports;
  __global const uint* staging = patch + chanflow_patch_base(env, env->ports);
  for (uint p = 0; p < env->ports; ++p) {
    const uint n = counts[p];
    CHANFLOW_COUNT(ctx, p) = n;
    if (p < from_port) continue;
    const uint base = chanflow_patch_base(env, p);
    for (uint k = 0; k < n; ++k) CHANFLOW_PATCH(ctx, base + k) = patch[base + k];
    const uint from = env->staging_offset[p];
    for (uint w = from; w < from + n * env->ce_words[p]; ++w) CHANFLOW_STAGING(ctx, w) = staging[w];
  }
}

/* Writes restart contexts for the items that must yield (collective; one atomic per group).
 * In a range or list dispatch a context is a record the aggregator keeps and restarts; in a
 * sweep it is the CE's own control entry, published again in its channel, which a later claim
 * of that level restarts. The task's flags say, before it can be claimed again, that it
 * yielded and whether its level counts it as resumable (its next run, however dispatched,
 * takes it out again). */
void chanflow_record_yields(__global const chanflow_node_env* env, __global chanflow_task* task, int yields,
                            ulong ctrl_pos, uint index, uint port, __local chanflow_wg_scratch* wg) {
#ifndef CHANFLOW_CPU_DEVICE
  /* Uniform: a group none of whose items yields (every batch whose outputs were prepaid) records
   * nothing, and skips the scan and the publish below. PoCL 3.1 mis-runs barriers under a
   * condition: a CPU device runs them all. */
  if (!chanflow_wg_or(yields ? 1u : 0u, wg)) return;
#endif
  const int sweep = env->sweep_levels != 0u && (!env->ranged || env->planned);
  const uint offset = chanflow_wg_exclusive_scan(yields ? 1u : 0u, wg);
  const uint total = wg->total;
  if (chanflow_local_id() == 0) wg->data_base = total ? atomic_add(&env->counters->yields, total) : 0u;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (yields && !sweep) {
    const uint at = (uint)wg->data_base + offset;
    if (at < env->yield_capacity) {
      env->yields[at].ctrl_pos = ctrl_pos;
      env->yields[at].blocked_port = port;
      env->yields[at].depth = env->depth;
    } else {
      chanflow_report(env, CHANFLOW_ERR_YIELD_SPACE, at, env->yield_capacity);
    }
  }
  /* In a sweep, a task published again past its continuation is counted (see resumable). */
  const int counted = yields && sweep && port > env->cont_port && env->cont_port != CHANFLOW_NO_PORT;
  if (counted) {
    atomic_inc(&env->counters->partial_yields);
    if (env->resumable) atomic_inc(env->resumable);
  }
  if (yields) task->resume_port |= CHANFLOW_TASK_YIELDED | (counted && env->resumable ? CHANFLOW_TASK_RESUMABLE : 0u);
  const chanflow_ticket again = {index, yields && sweep ? 1u : 0u, offset, sweep ? total : 0u};
  enq(env->in, &again, wg); /* publishes after the flags (enq fences before it counts) */
}
