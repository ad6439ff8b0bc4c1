/* Planned sweeps: the one-work-group kernel that gives each level its range before a pass. */

/* Plans the next pass of a round's planned sweeps, on the device, so that passes chain without
 * the host: for every level of every planned stack (in the order given, deepest level first)
 * it takes the ready CEs whose outputs can take every spawn they may make (`max_spawns` per
 * CE and port, charged as it goes, so the pass never finds an output full), writes the level's
 * range into its environment (the multi-level range dispatch of chanflow_next_batch) and moves
 * the channel's dispatch head past it. A pass only reads CEs published before it was launched:
 * coherent on any device, unlike a claimed sweep.
 * Launched as one work-group of any size: its work-items load the levels' counters in parallel
 * into local memory (one barrier, outside any loop or condition: PoCL 3.1 mis-runs the others),
 * then one work-item does the arithmetic from there. */
__kernel void chanflow_plan_batches(__global const chanflow_plan* plans, uint count) {
  __local long avail[CHANFLOW_PLAN_MAX_CHANNELS];  /* free space per output channel id, charged */
  __local uint target[CHANFLOW_PLAN_MAX_LEVELS][CHANFLOW_NODE_PORTS];
  __local uint need[CHANFLOW_PLAN_MAX_LEVELS][CHANFLOW_NODE_PORTS];
  __local ulong head[CHANFLOW_PLAN_MAX_LEVELS];
  __local ulong ready[CHANFLOW_PLAN_MAX_LEVELS];
  __local uint ports[CHANFLOW_PLAN_MAX_LEVELS];
  const uint none = 0xffffffffu;
  const uint lid = (uint)get_local_id(0);
  uint entries = 0;
  for (uint s = 0; s < count; ++s) entries += plans[s].levels;
  entries = min(entries, (uint)CHANFLOW_PLAN_MAX_LEVELS);
  for (uint e = lid; e < entries; e += (uint)get_local_size(0)) {
    uint s = 0, l = e;
    while (l >= plans[s].levels) l -= plans[s++].levels;
    __global const chanflow_node_env* env = plans[s].envs + l;
    volatile __global chanflow_channel* in = env->in;
    const ulong h = in ? in->ctrl_head : 0ul;
    head[e] = h;
    ready[e] = in ? in->ctrl_published - h : 0ul;
    ports[e] = env->ports;
    for (uint p = 0; p < env->ports; ++p) {
      volatile __global chanflow_channel* out = (volatile __global chanflow_channel*)env->port[p];
      const uint id = out ? out->id : none;
      target[e][p] = id < CHANFLOW_PLAN_MAX_CHANNELS ? id : none;
      need[e][p] = chanflow_port_need(env, p);
      if (id < CHANFLOW_PLAN_MAX_CHANNELS) avail[id] = (long)out->data_free; /* same value from every writer */
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid != 0) return;
  uint base = 0;
  for (uint s = 0; s < count && base < entries; ++s) {
    __global const chanflow_plan* plan = plans + s;
    const uint levels = min(plan->levels, entries - base);
    const uint per = levels ? plan->envs[0].group_ces : 1u; /* the same at every level */
    uint groups = 0, busy_levels = 0;
    ulong planned = 0;
    /* What each level takes (into ready[]), deepest first, in whole work-groups' worth. */
    for (uint l = levels; l-- > 0u;) {
      const uint e = base + l;
      ulong n = min(ready[e], (ulong)(plan->max_groups - groups) * per);
      for (uint p = 0; p < ports[e] && n > 0; ++p) {
        if (need[e][p] == 0u) continue;
        uint asked = 0; /* per CE, over every port into the same channel */
        for (uint q = 0; q < ports[e]; ++q) asked += target[e][q] == target[e][p] ? need[e][q] : 0u;
        const long room = target[e][p] == none ? 0 : avail[target[e][p]];
        n = room <= 0 ? 0ul : min(n, (ulong)room / asked);
      }
      for (uint p = 0; p < ports[e] && n > 0; ++p)
        if (need[e][p] != 0u) avail[target[e][p]] -= (long)(n * need[e][p]);
      ready[e] = n;
      groups += (uint)((n + per - 1) / per);
      planned += n;
      busy_levels += n > 0;
    }
    /* A pass that would fill fewer work-groups than spread_groups (twice the device's compute
     * units) spreads its CEs over that many (fewer each, as few as one): a narrow level's tasks
     * then run on as many compute units (compiled Strassen's 49 tasks of its third level, each
     * allocating and staging 32 leaves, had run in one work-group). Not over the whole grid: that
     * follows the batches found, which spreading makes more (Queens 15 went from 0.31 to 1.33 s).
     * At most `target` work-groups in all: sum ceil(n / batch) <= planned / batch + busy_levels. */
    uint batch = per;
    const uint target = min(plan->spread_groups, plan->max_groups);
    if (target > busy_levels && planned < (ulong)target * per) {
      const ulong spread = (planned + (target - busy_levels) - 1) / (target - busy_levels);
      batch = (uint)clamp(spread, 1ul, (ulong)per);
    }
    groups = 0;
    for (uint l = levels; l-- > 0u;) {
      const uint e = base + l;
      const ulong n = ready[e];
      __global chanflow_node_env* env = (__global chanflow_node_env*)plan->envs + l;
      env->range_begin = head[e];
      env->range_count = (uint)n;
      env->group_first = groups;
      env->batch_ces = batch;
      if (n > 0) ((__global chanflow_channel*)env->in)->ctrl_head = head[e] + n;
      groups += (uint)((n + batch - 1) / batch);
    }
    plan->counters->claimed += (uint)planned;
    plan->counters->batches += groups;
    const uint pass = ++plan->counters->passes;
    if (planned) {
      plan->counters->busy_passes += 1u;
      plan->counters->last_busy_pass = pass;
    }
    base += plan->levels;
  }
}
