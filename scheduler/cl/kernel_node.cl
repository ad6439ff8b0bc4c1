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
 *     chanflow_spawn(ctx, 0, a);
 *     chanflow_spawn(ctx, 0, b);
 *   }
 *   CHANFLOW_KERNEL_NODE(fib, FibTask, fib_body)
 *
 * Yielding nodes (CHANFLOW_YIELDING_KERNEL_NODE; wavefront-yield emulation, thesis 4.4): when a
 * port's reservation is refused for the work-group, the items that asked on it stop there (the
 * others go on); each records the port in its CE (chanflow_task::resume_port), leaves a restart
 * context (a record for the aggregator, or, in a device sweep, its control entry published
 * again) and keeps its CE. A restart re-runs the body on those CEs and flushes only the
 * remaining ports, so a continuation reserved before the yield is never reserved twice. A
 * yielding body is re-run on resume: everything it does before returning must be idempotent
 * (stores, not atomics).
 *
 * Cilk (DESIGN.md decision 8): a pre-sync task spawns its continuation (a CE starting with
 * chanflow_frame) on the port into a continuation stack at its own depth, and its children with
 * chanflow_spawn_child(ctx, port, child, slot); the continuation node
 * (CHANFLOW_CONTINUATION_NODE) runs once every child has returned into its slots (a join
 * counter in the frame; the last child enqueues it). Tasks and continuations return values
 * with chanflow_return(ctx, value).
 *
 *   void fib_pre_sync(__global FibFrame* f, chanflow_ctx* ctx) {
 *     if (f->n <= 2) { chanflow_return(ctx, 1); return; }
 *     const FibCont cont = {{0}, 0, 0};                 // slots x, y
 *     chanflow_spawn(ctx, 0, cont);
 *     const FibFrame a = {{0}, f->n - 1}, b = {{0}, f->n - 2};
 *     chanflow_spawn_child(ctx, 1, a, 0);
 *     chanflow_spawn_child(ctx, 1, b, 1);
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

/* What a body sees: its environment and its private spawn record. */
typedef struct {
  __global const chanflow_node_env* env;
  __global ulong* link;                   /* the CE's {ret, ret_frame} (tasks and frames), or 0 */
  ulong ready_frame;                      /* this task's continuation, flushed with no children */
  __local const uint* prepaid;            /* credits a sweep took per port for this batch, or 0 */
  uint count[CHANFLOW_MAX_PORTS];
  uint patch[CHANFLOW_STAGED_CES];        /* per staged CE: return slot + 1 to patch, or 0 */
  uint staging[CHANFLOW_SPAWN_WORDS];
} chanflow_ctx;

#define CHANFLOW_ARGS(ctx, type) ((__global type*)(ctx)->env->user_args)

uint chanflow_depth(const chanflow_ctx* ctx) { return ctx->env->depth; }

/* Index in chanflow_ctx::patch of port p's first staged CE. */
uint chanflow_patch_base(__global const chanflow_node_env* env, uint p) {
  uint base = 0;
  for (uint q = 0; q < p; ++q) base += env->max_spawns[q];
  return base;
}

void chanflow_report(__global const chanflow_node_env* env, uint code, uint detail, uint extra) {
  if (atomic_cmpxchg(&env->status->code, CHANFLOW_ERR_NONE, code) == CHANFLOW_ERR_NONE) {
    env->status->node = env->node;
    env->status->detail = detail;
    env->status->extra = extra;
  }
}

/* Records one CE of `bytes` bytes for output `port`; flushed after the body returns. With
 * ret_slot > 0 the CE is a child task whose chanflow_task::ret is pointed, at the flush, at
 * 64-bit slot ret_slot - 1 of this task's continuation frame (port env->cont_port). */
void chanflow_spawn_bytes(chanflow_ctx* ctx, uint port, const void* value, uint bytes, uint ret_slot) {
  __global const chanflow_node_env* env = ctx->env;
  if (port >= env->ports) { /* CHANFLOW_NO_PORT: chanflow_spawn_continuation without a continuation */
    chanflow_report(env, port == CHANFLOW_NO_PORT ? CHANFLOW_ERR_NO_CONTINUATION : CHANFLOW_ERR_BAD_PORT, port,
                    env->ports);
    return;
  }
  if (ret_slot != 0u && env->cont_port == CHANFLOW_NO_PORT) {
    chanflow_report(env, CHANFLOW_ERR_NO_CONTINUATION, port, 0u);
    return;
  }
  if (bytes != env->ce_words[port] * 4u) {
    chanflow_report(env, CHANFLOW_ERR_SPAWN_SIZE, port, env->ce_words[port] * 4u);
    return;
  }
  const uint k = ctx->count[port];
  if (k >= env->max_spawns[port]) {
    chanflow_report(env, CHANFLOW_ERR_SPAWN_LIMIT, port, env->max_spawns[port]);
    return;
  }
  const uint words = env->ce_words[port];
  const uint at = env->staging_offset[port] + k * words;
  const uint* src = (const uint*)value;
  for (uint w = 0; w < words; ++w) ctx->staging[at + w] = src[w];
  ctx->patch[chanflow_patch_base(env, port) + k] = ret_slot;
  ctx->count[port] = k + 1;
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
/* Spawns this task's continuation frame (a CE starting with chanflow_frame) on the node's
 * continuation port (a Continuation edge; the library makes it port 0). */
#define chanflow_spawn_continuation(ctx, value) \
  chanflow_spawn_bytes((ctx), (ctx)->env->cont_port, &(value), sizeof(value), 0u)

/* Returns `value` from this task or continuation into its result slot. The parent is told
 * (its join counter) when the task has finished, after the flush, not here. */
void chanflow_return(chanflow_ctx* ctx, ulong value) {
  if (ctx->link && ctx->link[0]) *(__global ulong*)ctx->link[0] = value;
}

void chanflow_ctx_init(chanflow_ctx* ctx, __global const chanflow_node_env* env) {
  ctx->env = env;
  ctx->link = 0;
  ctx->ready_frame = 0;
  ctx->prepaid = 0;
  for (uint p = 0; p < CHANFLOW_MAX_PORTS; ++p) ctx->count[p] = 0;
}

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
  for (uint p = 0; p < env->ports && env->cont_port != CHANFLOW_NO_PORT; ++p) {
    const uint patch_base = chanflow_patch_base(env, p);
    for (uint k = 0; k < ctx->count[p]; ++k) children += ctx->patch[patch_base + k] != 0u;
  }
  for (uint p = 0; p < env->ports; ++p) {
    /* A sweep's deepest level may name a level not made yet (0): nothing fits there. */
    const int missing = env->port[p] == 0ul;
    __global chanflow_channel* out = missing ? env->in : env->port[p];
    uint n = p >= from_port && refused == CHANFLOW_NO_PORT ? ctx->count[p] : 0u;
    if (missing && n > 0) {
      refused = p;
      n = 0;
    }
    const uint words = env->ce_words[p];
    chanflow_ticket t;
    __global uint* dst = (__global uint*)chanflow_talloc_prepaid(out, n, &t, wg, ctx->prepaid ? ctx->prepaid[p] : 0u);
    if (!dst) {
      /* Uniform: the work-group's request on this port was refused. */
      if (!env->yielding && chanflow_local_id() == 0) chanflow_report(env, CHANFLOW_ERR_CHANNEL_FULL, p, 0);
      if (n > 0) refused = p;
      n = 0;
    }
    for (uint w = 0; w < n * words; ++w) dst[w] = ctx->staging[env->staging_offset[p] + w];
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
      if (children == 0u) ctx->ready_frame = (ulong)f;
    }
    const uint patch_base = chanflow_patch_base(env, p);
    for (uint k = 0; k < n && !is_cont; ++k) {
      const uint slot = ctx->patch[patch_base + k];
      if (slot != 0 && env->cont_port != CHANFLOW_NO_PORT) {
        __global chanflow_channel* cont = (__global chanflow_channel*)env->port[env->cont_port];
        const ulong frame = (ulong)(cont->data + (size_t)cont_index * cont->ce_bytes);
        __global chanflow_task* child = (__global chanflow_task*)(dst + k * words);
        child->ret = frame + CHANFLOW_FRAME_BYTES + 8u * (slot - 1u);
        child->ret_frame = frame;
      }
    }
    if (is_cont) t.n = t.total = 0u; /* frames are enqueued by chanflow_join */
    enq(out, &t, wg);
    if (task && refused == CHANFLOW_NO_PORT && p + 1 > from_port) task->resume_port = p + 1;
  }
  return refused;
}

/* Tells the parent that this item's task (or continuation) has returned: `frame` is the
 * chanflow_frame its result slot lies in, or 0. The child that brings a frame's join counter to
 * zero makes it ready (enq_at into the frame's channel); so does a task for its own
 * continuation when that has no children (`own`). Collective; frames of one work-group may lie
 * in different channels, one enq_at per channel. */
void chanflow_join(ulong frame, ulong own, __local chanflow_wg_scratch* wg) {
  const uint lid = chanflow_local_id();
  __global chanflow_frame* f = (__global chanflow_frame*)own;
  int todo = own != 0ul;
  if (frame) {
    mem_fence(CLK_GLOBAL_MEM_FENCE); /* the result slot is written before the count drops */
    __global chanflow_frame* parent = (__global chanflow_frame*)frame;
    if (atomic_dec((volatile __global uint*)&parent->pending) == 1u) {
      f = parent;
      todo = 1;
    }
  }
  for (;;) {
    wg->scan[1][lid] = (uint)todo;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
      uint first = CHANFLOW_WG_SIZE;
      for (uint i = 0; i < CHANFLOW_WG_SIZE && first == CHANFLOW_WG_SIZE; ++i)
        if (wg->scan[1][i]) first = i;
      wg->ok = (int)first;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint first = (uint)wg->ok;
    if (first == CHANFLOW_WG_SIZE) break;
    if (lid == first) wg->data_base = (ulong)f->channel;
    barrier(CLK_LOCAL_MEM_FENCE);
    __global chanflow_channel* chosen = (__global chanflow_channel*)wg->data_base;
    const int mine = todo && f->channel == chosen;
    enq_at(chosen, mine ? f->index : 0u, mine, wg);
    if (mine) todo = 0;
  }
}

/* Whether this item's task has finished: it ran and did not leave a continuation behind to
 * return for it. */
int chanflow_returns(const chanflow_ctx* ctx, int ran) {
  const uint cont = ctx->env->cont_port;
  return ran && (cont == CHANFLOW_NO_PORT || ctx->count[cont] == 0u);
}

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

/* Claims up to a work-group's worth of ready CEs of `ch` for the calling work-item (a leader):
 * returns the first control position, sets *n (0: none ready) and writes the CEs' physical
 * indices to index[] (read before the claim: once claimed, a control entry's slot may be reused
 * by later publications). The head moves by compare-and-swap; only entries whose lap tag shows
 * them written are taken. */
ulong chanflow_claim(__global chanflow_channel* ch, uint* n, __local uint* index) {
  for (uint attempt = 0; attempt < 64u; ++attempt) {
    const ulong head = atom_add(&ch->ctrl_head, 0ul);
    const ulong published = atom_add(&ch->ctrl_published, 0ul);
    if (head >= published) break;
    uint take = (uint)min((ulong)CHANFLOW_WG_SIZE, published - head);
    const uint ccap = ch->ctrl_capacity;
    for (uint k = 0; k < take; ++k) {
      const ulong cpos = head + k;
      const ulong entry = ((volatile __global ulong*)ch->ctrl)[cpos % ccap];
      if ((entry >> CHANFLOW_CTRL_TAG_SHIFT) != (ulong)(uint)(cpos / ccap + 1)) {
        take = k;
        break;
      }
      index[k] = (uint)(entry & CHANFLOW_CTRL_INDEX_MASK);
    }
    if (take == 0) break;
    if (atom_cmpxchg(&ch->ctrl_head, head, head + take) == head) {
      mem_fence(CLK_GLOBAL_MEM_FENCE); /* the CEs are read after the entries that named them */
      *n = take;
      return head;
    }
  }
  *n = 0;
  return 0;
}

/* Takes, for a sweep's work-group about to claim a batch of this level, the credits a full
 * work-group request needs in every output port (all or none: returns whether it got them),
 * so that concurrent work-groups cannot claim more than the outputs can take and then yield.
 * The continuation port is not prepaid while the level holds tasks resumed after reserving
 * their continuation: they need no room there, and must not wait for it (their own frames may
 * be what holds it full). */
/* CEs one work-item of this level may spawn on port p: none on the continuation port while
 * the level holds tasks resumed past their continuation (see chanflow_prepay_level). */
uint chanflow_port_need(__global const chanflow_node_env* env, uint p) {
  const int resumable = env->resumable && *(volatile __global uint*)env->resumable > 0u;
  return p == env->cont_port && resumable ? 0u : env->max_spawns[p];
}

int chanflow_prepay_level(__global const chanflow_node_env* env, __local uint* prepaid) {
  uint p = 0;
  int ok = 1;
  for (; p < env->ports && ok; ++p) {
    __global chanflow_channel* out = (__global chanflow_channel*)env->port[p];
    const uint need = CHANFLOW_WG_SIZE * chanflow_port_need(env, p);
    ok = need == 0u || (out && chanflow_prepay(out, need));
    prepaid[p] = ok ? need : 0u;
  }
  if (!ok)
    for (uint q = 0; q + 1 < p; ++q)
      if (prepaid[q]) {
        atom_add(&((__global chanflow_channel*)env->port[q])->data_free, (ulong)prepaid[q]);
        prepaid[q] = 0u;
      }
  return ok;
}

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
  __local uint target[CHANFLOW_PLAN_MAX_LEVELS][CHANFLOW_MAX_PORTS];
  __local uint need[CHANFLOW_PLAN_MAX_LEVELS][CHANFLOW_MAX_PORTS];
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
    uint groups = 0;
    ulong planned = 0;
    for (uint l = min(plan->levels, entries - base); l-- > 0u;) {
      const uint e = base + l;
      ulong n = min(ready[e], (ulong)(plan->max_groups - groups) * CHANFLOW_WG_SIZE);
      for (uint p = 0; p < ports[e] && n > 0; ++p) {
        if (need[e][p] == 0u) continue;
        uint asked = 0; /* per CE, over every port into the same channel */
        for (uint q = 0; q < ports[e]; ++q) asked += target[e][q] == target[e][p] ? need[e][q] : 0u;
        const long room = target[e][p] == none ? 0 : avail[target[e][p]];
        n = room <= 0 ? 0ul : min(n, (ulong)room / asked);
      }
      for (uint p = 0; p < ports[e] && n > 0; ++p)
        if (need[e][p] != 0u) avail[target[e][p]] -= (long)(n * need[e][p]);
      __global chanflow_node_env* env = (__global chanflow_node_env*)plan->envs + l;
      env->range_begin = head[e];
      env->range_count = (uint)n;
      env->group_first = groups;
      if (n > 0) ((__global chanflow_channel*)env->in)->ctrl_head = head[e] + n;
      groups += (uint)((n + CHANFLOW_WG_SIZE - 1) / CHANFLOW_WG_SIZE);
      planned += n;
    }
    plan->counters->claimed += (uint)planned;
    plan->counters->batches += groups;
    base += plan->levels;
  }
}

typedef struct {
  ulong first;
  uint level;
  uint n;
  uint index[CHANFLOW_WG_SIZE];      /* a sweep's claimed CEs */
  uint prepaid[CHANFLOW_MAX_PORTS];  /* credits taken per output port (chanflow_prepay_level) */
} chanflow_batch;

/* This work-group's batch: in a range or list dispatch its share (in a multi-level range
 * dispatch, of the level its group id falls in); in a sweep (env->sweep_levels
 * levels, env[l] for level l) up to a work-group's worth of the deepest level with ready CEs and
 * room in its outputs, claimed when the work-group starts, so work-groups starting later take
 * what earlier ones produced. Returns the level (CHANFLOW_NO_PORT: nothing to do) and this
 * item's control position and activity. Collective. */
uint chanflow_next_batch(__global const chanflow_node_env* env, ulong begin, uint count, __local chanflow_batch* b,
                         ulong* pos, uint* index, int* active) {
  const uint lid = chanflow_local_id();
  const uint group_base = (uint)get_group_id(0) * CHANFLOW_WG_SIZE;
  const uint levels = env->sweep_levels;
  if (lid == 0) {
    b->n = 0;
    b->level = 0;
    b->first = begin + group_base;
    for (uint p = 0; p < CHANFLOW_MAX_PORTS; ++p) b->prepaid[p] = 0u;
    if (levels == 0u) {
      b->n = count > group_base ? min((uint)CHANFLOW_WG_SIZE, count - group_base) : 0u;
    } else if (env->ranged) {
      const uint group = (uint)get_group_id(0);
      for (uint l = 0; l < levels && b->n == 0u; ++l) {
        __global const chanflow_node_env* e = env + l;
        const uint groups = (e->range_count + CHANFLOW_WG_SIZE - 1u) / CHANFLOW_WG_SIZE;
        if (group < e->group_first || group >= e->group_first + groups) continue;
        const uint offset = (group - e->group_first) * CHANFLOW_WG_SIZE;
        b->level = l;
        b->first = e->range_begin + offset;
        b->n = min((uint)CHANFLOW_WG_SIZE, e->range_count - offset);
      }
    } else {
      for (uint l = levels; l-- > 0u && b->n == 0u;) {
        __global const chanflow_node_env* e = env + l;
        if (!e->in) continue;
        volatile __global chanflow_channel* in = e->in;
        if (in->ctrl_published == in->ctrl_head) continue;
        if (e->room_check && !chanflow_prepay_level(e, b->prepaid)) continue;
        uint n = 0;
        const ulong first = chanflow_claim(e->in, &n, b->index);
        if (n == 0)
          for (uint p = 0; p < e->ports; ++p)
            if (b->prepaid[p]) {
              atom_add(&((__global chanflow_channel*)e->port[p])->data_free, (ulong)b->prepaid[p]);
              b->prepaid[p] = 0u;
            }
        if (n > 0) {
          b->n = n;
          b->level = l;
          b->first = first;
          atomic_add(&env->counters->claimed, n);
          atomic_inc(&env->counters->batches);
        }
      }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint n = b->n;
  *active = lid < n;
  if (levels == 0u && env->positions)
    *pos = *active ? ((__global const ulong*)env->positions)[group_base + lid] : 0ul;
  else
    *pos = b->first + lid;
  const uint level = n > 0u ? b->level : CHANFLOW_NO_PORT;
  if (!*active)
    *index = 0u;
  else if (levels > 0u && !env->ranged)
    *index = b->index[lid];
  else
    *index = chanflow_ce_index(env[level].in, *pos);
  return level;
}

/* The kernel every node macro generates: its batch (chanflow_next_batch), handed to the node's
 * batch function, which every work-group runs, with or without CEs: PoCL 3.1 mis-runs kernels
 * whose collectives (barriers) sit under a condition or in a loop around the batch, even when
 * every work-item takes the same path. */
#define CHANFLOW_NODE_KERNEL(name, kind)                                                        \
  /* The node's kind, for the host (Graph::validate reads the program's kernel names). */       \
  __kernel void name##__chanflow_##kind##_node(void) {}                                         \
  __kernel __attribute__((reqd_work_group_size(CHANFLOW_WG_SIZE, 1, 1))) void name(             \
      __global chanflow_channel* in, ulong begin, uint count, __global const chanflow_node_env* env) { \
    (void)in;                                                                                   \
    __local chanflow_wg_scratch wg;                                                             \
    __local chanflow_batch batch;                                                               \
    ulong pos;                                                                                  \
    uint index;                                                                                 \
    int active;                                                                                 \
    const uint level = chanflow_next_batch(env, begin, count, &batch, &pos, &index, &active);   \
    name##_batch(env + (level == CHANFLOW_NO_PORT ? 0u : level), pos, index, active, batch.prepaid, &wg); \
  }

#define CHANFLOW_BATCH_PROLOGUE(ce_type, is_frame)                                              \
  __global chanflow_channel* in = env->in;                                                      \
  chanflow_ctx ctx;                                                                             \
  chanflow_ctx_init(&ctx, env);                                                                 \
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
                    __local const uint* prepaid, __local chanflow_wg_scratch* wg) {             \
    CHANFLOW_BATCH_PROLOGUE(ce_type, 0u)                                                        \
    if (ce) body(ce, &ctx);                                                                     \
    chanflow_flush(&ctx, 0, 0u, wg);                                                            \
    chanflow_tfree_index(in, index, active, wg);                                                \
  }                                                                                             \
  CHANFLOW_NODE_KERNEL(name, plain)

/* The same for a node that yields when an output is full; ce_type starts with chanflow_task.
 * A task that finishes without a continuation returns to its parent's frame. */
#define CHANFLOW_YIELDING_KERNEL_NODE(name, ce_type, body)                                      \
  void name##_batch(__global const chanflow_node_env* env, ulong pos, uint index, int active,   \
                    __local const uint* prepaid, __local chanflow_wg_scratch* wg) {             \
    CHANFLOW_BATCH_PROLOGUE(ce_type, 0u)                                                        \
    __global chanflow_task* task = (__global chanflow_task*)ce;                                 \
    ctx.link = (__global ulong*)task;                                                           \
    const uint resumed = task ? task->resume_port : 0u;                                         \
    const uint from = resumed & ~(CHANFLOW_TASK_YIELDED | CHANFLOW_TASK_RESUMABLE);             \
    if (resumed & CHANFLOW_TASK_YIELDED) {                                                      \
      task->resume_port = from;                                                                 \
      atomic_inc(&env->counters->restarts);                                                     \
    }                                                                                           \
    /* Counted by the sweep it yielded in; every dispatch of a stack level names the counter. */ \
    if ((resumed & CHANFLOW_TASK_RESUMABLE) && env->resumable) atomic_dec(env->resumable);      \
    if (ce) body(ce, &ctx);                                                                     \
    const uint refused = chanflow_flush(&ctx, task, from, wg);                                  \
    const int yields = refused != CHANFLOW_NO_PORT;                                             \
    chanflow_record_yields(env, task, yields, pos, index, refused, wg);                         \
    chanflow_join(chanflow_returns(&ctx, ce && !yields) ? task->ret_frame : 0ul, ctx.ready_frame, wg); \
    chanflow_tfree_index(in, index, active && !yields, wg);                                     \
  }                                                                                             \
  CHANFLOW_NODE_KERNEL(name, yielding)

/* A post-sync continuation: consumes a continuation stack whose CEs (ce_type) start with
 * chanflow_frame; it runs once all the children returned into the frame's slots, and returns
 * where the task that spawned it would have (chanflow_return). */
#define CHANFLOW_CONTINUATION_NODE(name, ce_type, body)                                         \
  void name##_batch(__global const chanflow_node_env* env, ulong pos, uint index, int active,   \
                    __local const uint* prepaid, __local chanflow_wg_scratch* wg) {             \
    CHANFLOW_BATCH_PROLOGUE(ce_type, 1u)                                                        \
    __global chanflow_frame* frame = (__global chanflow_frame*)ce;                              \
    ctx.link = (__global ulong*)frame;                                                          \
    if (ce) body(ce, &ctx);                                                                     \
    chanflow_flush(&ctx, 0, 0u, wg);                                                            \
    chanflow_join(chanflow_returns(&ctx, ce != 0) ? frame->ret_frame : 0ul, ctx.ready_frame, wg); \
    chanflow_tfree_index(in, index, active, wg);                                                \
  }                                                                                             \
  CHANFLOW_NODE_KERNEL(name, continuation)
