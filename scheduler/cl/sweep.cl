/* Device sweeps: how a work-group finds its batch in a range, restart-list or sweep dispatch,
 * claims ready CEs and prepays its outputs (claimed sweeps; scheduler/README.md). */

/* Claims up to `most` (a work-group's worth) ready CEs of `ch` for the calling work-item (a leader):
 * returns the first control position, sets *n (0: none ready) and writes the CEs' physical
 * indices to index[] (read before the claim: once claimed, a control entry's slot may be reused
 * by later publications). The head moves by compare-and-swap; only entries whose lap tag shows
 * them written are taken. */
ulong chanflow_claim(__global chanflow_channel* ch, uint most, uint* n, __local uint* index) {
  for (uint attempt = 0; attempt < 64u; ++attempt) {
    const ulong head = atom_add(&ch->ctrl_head, 0ul);
    const ulong published = atom_add(&ch->ctrl_published, 0ul);
    if (head >= published) break;
    /* Acquire (order.cl): the entries and CEs counted in `published` are read after it. */
    chanflow_fence_acq_rel();
    uint take = (uint)min((ulong)most, published - head);
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
      *n = take;
      return head;
    }
  }
  *n = 0;
  return 0;
}

/* CEs one work-item of this level may spawn on port p: none on the continuation port while
 * the level holds tasks resumed past their continuation (see chanflow_prepay_level). */
uint chanflow_port_need(__global const chanflow_node_env* env, uint p) {
  const int resumable = env->resumable && *(volatile __global uint*)env->resumable > 0u;
  return p == env->cont_port && resumable ? 0u : env->max_spawns[p];
}

/* Gives back the credits `prepaid` holds for the first `ports` output ports of this level. */
void chanflow_refund_level(__global const chanflow_node_env* env, __local uint* prepaid, uint ports) {
  for (uint q = 0; q < ports; ++q)
    if (prepaid[q]) {
      atom_add(&((__global chanflow_channel*)env->port[q])->data_free, (ulong)prepaid[q]);
      prepaid[q] = 0u;
    }
}

/* Takes, for a work-group about to claim up to `k` CEs of this level (a sweep's: a full work-
 * group; the device scheduler's: what it can afford), the credits their spawns need in every
 * output port (all or none: returns whether it got them), so that concurrent work-groups cannot
 * claim more than the outputs can take and then yield. The continuation port is not prepaid
 * while the level holds tasks resumed after reserving their continuation: they need no room
 * there, and must not wait for it (their own frames may be what holds it full). */
int chanflow_prepay_level(__global const chanflow_node_env* env, uint k, __local uint* prepaid) {
  uint p = 0;
  int ok = 1;
  for (; p < env->ports && ok; ++p) {
    __global chanflow_channel* out = (__global chanflow_channel*)env->port[p];
    const uint need = k * chanflow_port_need(env, p);
    ok = need == 0u || (out && chanflow_prepay(out, need));
    prepaid[p] = ok ? need : 0u;
  }
  if (!ok) chanflow_refund_level(env, prepaid, p - 1u);
  return ok;
}

typedef struct {
  ulong first;
  uint level;
  uint n;
  uint index[CHANFLOW_WG_SIZE];      /* a sweep's claimed CEs (at most env->group_ces) */
  uint prepaid[CHANFLOW_NODE_PORTS];  /* credits taken per output port (chanflow_prepay_level) */
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
  const uint per = env->group_ces; /* the same in every level's environment */
  /* A range or list dispatch's share: group_ces, or fewer where the host spread a narrow launch. */
  const uint share = env->batch_ces ? env->batch_ces : per;
  const uint group_base = (uint)get_group_id(0) * share;
  const uint levels = env->sweep_levels;
  if (lid == 0) {
    b->n = 0;
    b->level = 0;
    b->first = begin + group_base;
    for (uint p = 0; p < CHANFLOW_NODE_PORTS; ++p) b->prepaid[p] = 0u;
    if (levels == 0u) {
      b->n = count > group_base ? min(share, count - group_base) : 0u;
    } else if (env->ranged) {
      const uint group = (uint)get_group_id(0);
      for (uint l = 0; l < levels && b->n == 0u; ++l) {
        __global const chanflow_node_env* e = env + l;
        const uint batch = e->batch_ces ? e->batch_ces : per;
        const uint groups = (e->range_count + batch - 1u) / batch;
        if (group < e->group_first || group >= e->group_first + groups) continue;
        const uint offset = (group - e->group_first) * batch;
        b->level = l;
        b->first = e->range_begin + offset;
        b->n = min(batch, e->range_count - offset);
      }
    } else {
      for (uint l = levels; l-- > 0u && b->n == 0u;) {
        __global const chanflow_node_env* e = env + l;
        if (!e->in || e->unclaimed) continue;
        volatile __global chanflow_channel* in = e->in;
        if (in->ctrl_published == in->ctrl_head) continue;
        if (e->room_check && !chanflow_prepay_level(e, per, b->prepaid)) continue;
        uint n = 0;
        const ulong first = chanflow_claim(e->in, per, &n, b->index);
        if (n == 0) chanflow_refund_level(e, b->prepaid, e->ports);
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

/* Serial levels grouped by work. A task at the run's serial depth runs its whole subtree in its
 * work-item, and a warp takes as long as its largest subtree: lanes given subtrees of every size
 * idle behind the one that is not done. So a task node that names the work of a CE (the
 * compiler's measure: a parameter each call of itself makes smaller, fib's n) has its serial
 * batches reordered before the body: the work-group's CEs go to its work-items largest work
 * first (ties in claim order), so the lanes of a warp hold subtrees of about one size. Every
 * item keeps the CE it is given throughout the batch (its control position, index and activity
 * move with it), so what depends on them (yields, joins, frees) is unchanged. Collective: six
 * barriers and a pass over the group's keys in local memory; the caller's condition must be the
 * group's. `work`: the item's CE's (ignored for an inactive item, which goes last). */
void chanflow_group_by_work(long work, ulong* pos, uint* index, int* active, __local chanflow_wg_scratch* wg) {
  const uint lid = chanflow_local_id();
  __local uint* keys = wg->scan[0];
  __local uint* from = wg->scan[1];
  /* Order-preserving as unsigned: an active item's key is at least 1, an inactive one's 0. */
  const uint key = *active ? (uint)(clamp(work, -0x7fffffffl, 0x7fffffffl) + 0x80000000l) : 0u;
  barrier(CLK_LOCAL_MEM_FENCE); /* the scratch's last user is done with it */
  keys[lid] = key;
  barrier(CLK_LOCAL_MEM_FENCE);
  uint rank = 0u; /* items before this one: more work, or as much and earlier */
  for (uint j = 0; j < CHANFLOW_WG_SIZE; ++j) {
    const uint k = keys[j];
    rank += (k > key || (k == key && j < lid)) ? 1u : 0u;
  }
  from[rank] = lid;
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint src = from[lid]; /* the item whose CE this one takes */
  keys[lid] = *active ? *index : 0xffffffffu;
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint taken = keys[src];
  from[lid] = (uint)*pos;
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint low = from[src];
  keys[lid] = (uint)(*pos >> 32);
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint high = keys[src];
  barrier(CLK_LOCAL_MEM_FENCE);
  *active = taken != 0xffffffffu;
  *index = *active ? taken : 0u;
  *pos = (ulong)high << 32 | low;
}
