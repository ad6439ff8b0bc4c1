/* Wavefront-yield emulation: restart contexts of the items whose reservation was refused
 * (see spawn.cl and scheduler/README.md). */

/* Writes restart contexts for the items that must yield (collective; one atomic per group).
 * In a range or list dispatch a context is a record the aggregator keeps and restarts; in a
 * sweep it is the CE's own control entry, published again in its channel, which a later claim
 * of that level restarts. The task's flags say, before it can be claimed again, that it
 * yielded and whether its level counts it as resumable (its next run, however dispatched,
 * takes it out again). */
void chanflow_record_yields(__global const chanflow_node_env* env, __global chanflow_task* task, int yields,
                            ulong ctrl_pos, uint index, uint port, __local chanflow_wg_scratch* wg) {
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
