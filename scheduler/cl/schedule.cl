/* The device scheduler: the aggregator's loop on the device (scheduler/README.md, "The device
 * scheduler"). One launch of as many work-groups as the device keeps resident; each loops: score
 * every watched channel that holds ready CEs under the policy, take a batch of the best one whose
 * outputs can take all its spawns (credits prepaid, so nothing it runs yields), run its node's
 * body on it, and look again. A work-group leaves when nothing is ready and no work-group holds a
 * batch (nothing more can appear), or after `polls` empty polls in a row; the host relaunches
 * while work remains (after in-order deallocation and, where the recursion went deeper, new
 * levels). No work-group ever waits for a particular other one: OpenCL promises no forward
 * progress between work-groups, and a group that leaves early only leaves work to the others or
 * to the next launch.
 *
 * A claim reads CEs other work-groups published in the same launch: enq releases and the claim
 * acquires at device scope (order.cl), so this runs only where chanflow_fence_acq_rel is real
 * (the host checks: claimed_sweeps_hold).
 *
 * The graph's program holds, before this file, what the host generates for the graph
 * (Aggregator::scheduler_source): `chanflow_sched_group_local` (a union of its work-group
 * nodes' local memory), `chanflow_user_policy_score` (a device policy's, or none) and
 * `chanflow_sched_run`, whose switch calls the node bodies (each node macro's
 * name##__chanflow_run), and the policies' scores (policies.cl). */

/* A work-group's view of the search: the best entry of a scan, the entries it tried and could
 * not take since its last batch, and what it decided. */
typedef struct {
  uint best;
  uint entry;
  uint any_ready;
  uint k;      /* CEs the leader prepaid for */
  uint empty;  /* polls in a row that took nothing */
  uint full;   /* an entry with ready CEs and no room in an output, or CHANFLOW_SCHED_NONE */
  uint movable; /* some entry with ready CEs had room for them */
  uint seen;    /* the launch's batches when this group last looked */
  uint still;   /* empty polls in a row in which no batch was held or finished in the launch */
  uint recalled; /* the host asked the launch to end (chanflow_sched::recall) */
  uint held;     /* an entry whose outputs' room the group frees (CHANFLOW_SCHED_NONE: none) */
  uint settled;  /* after a poll that took nothing: leave or poll again */
  uint ready;    /* CEs the poll's scan saw ready, over every entry */
  uint awake_seen, busy_seen; /* the launch's awake and busy counts as the poll's scan read them */
  uint naps;     /* this group's sleeps while it dozed (chanflow_sched_doze) */
  uint lost;     /* the last poll's claim found its CEs taken by other groups first */
  chanflow_sched_free free;
  uint share[CHANFLOW_NODE_PORTS]; /* credits per CE, for a work-group node's batch run CE by CE */
  uint tried[CHANFLOW_SCHED_MAX_ENTRIES / 32];
} chanflow_sched_pick;

#define CHANFLOW_SCHED_NONE 0xffffffffu  /* leave */
#ifdef CHANFLOW_SCHED_ONE_POLL
#define CHANFLOW_SCHED_GROUP_BATCH 1u
#else
#define CHANFLOW_SCHED_GROUP_BATCH 8u
#endif
#define CHANFLOW_SCHED_AGAIN 0xfffffffeu /* nothing taken this poll */


/* A poll that took nothing: whether the group leaves (CHANFLOW_SCHED_NONE) or polls again
 * (CHANFLOW_SCHED_AGAIN, after backing off), given whether its deallocation freed anything. The
 * leader's. */
uint chanflow_sched_settle(__global chanflow_sched* s, __local chanflow_sched_pick* pick, uint e, int freed) {
  /* Nothing ready anywhere and no batch held: nothing more can appear in this launch. A batch
   * finished since the scan published its spawns before it left `busy`, and its own group
   * looks again. Entries tried and refused (no room) count as ready: the group polls on. */
  /* Likewise when what is ready waits for room that nothing in this launch will free: no
   * batch held, and deallocation found nothing finished (the deallocation kernel between
   * launches frees the rest: a partly reserved done-count group). */
  /* And when the launch has gone quiet: no batch held, none finished for `quiet` polls. What
   * is ready then waits for room that in-launch deallocation does not give back (at a
   * capacity of one request per level: a done-count group partly reserved), and a launch that
   * polls on for `polls` only delays the host's deallocation and relaunch (a soak's recursion
   * at 32 CEs per level took 1,611 launches; at 4,096 polls each it ran past 120 s, at 16 it
   * took 3.6 s). A group that is waiting for another's batch sees it held or finished. */
#if !defined(CHANFLOW_SCHED_BACKOFF_LOST) && !defined(CHANFLOW_SCHED_ONE_POLL)
  /* A claim lost to other groups: what they took was there, and the scan ranked the rest. The
   * group polls again at once for the next-best entry (the lost one is marked tried; a poll that
   * finds no untried candidate backs off as below). It backs off instead with
   * -DCHANFLOW_SCHED_BACKOFF_LOST (for measuring). */
  if (pick->lost && !pick->recalled) {
    pick->lost = 0u;
    return CHANFLOW_SCHED_AGAIN;
  }
#endif
  const uint finished = atomic_add(&s->batches, 0u);
  const int none_busy = atomic_add(&s->busy, 0u) == 0u;
  if (finished != pick->seen || !none_busy) {
    pick->seen = finished;
    pick->still = 0u;
  } else {
    ++pick->still;
  }
  if (pick->recalled) {
    atomic_inc(&s->left_recalled);
  } else if ((!pick->any_ready || (!pick->movable && !freed)) && none_busy) {
    atomic_inc(&s->left_idle);
  } else if (++pick->empty >= s->polls) {
    atomic_inc(&s->left_polls);
  } else if (pick->still >= s->quiet) {
    atomic_inc(&s->left_quiet);
  } else {
    /* A new poll may try what this one could not: room may have come back. */
    if (e == CHANFLOW_SCHED_NONE)
      for (uint w = 0; w < CHANFLOW_SCHED_MAX_ENTRIES / 32; ++w) pick->tried[w] = 0u;
    chanflow_backoff(pick->empty);
    return CHANFLOW_SCHED_AGAIN;
  }
  return CHANFLOW_SCHED_NONE;
}

#ifndef CHANFLOW_SCHED_ONE_POLL
/* A scheduler the size of the work. A launch has as many work-groups as the device keeps resident,
 * yet while a recursion is narrow (its first and last levels, a chain) a few hold batches and the
 * rest poll, and the pollers slow the groups that work (on an H200 a narrow level took 5.6 us with
 * 1,056 work-groups, 4.7 with 66). So only the first `awake` work-groups poll; the others doze while
 * some group holds a batch. The work wants the groups holding batches, a group per work-group's
 * worth of ready CEs, and `least` more: a poll raises `awake` to that, and one that found nothing
 * ready lowers it to that. (Lowered by any poll that took nothing, fib 40 ran 5% slower: its
 * pollers lose most claims to one another, 97% of its empty polls, yet the work is there.) The
 * leader, from the counts the poll's scan read beside the entries (a separate round trip to
 * memory before each poll cost fib 40 another 5%). Relaxed: a stale count only wakes or lulls a
 * group a poll late. */
void chanflow_sched_size(__global chanflow_sched* s, __local chanflow_sched_pick* pick) {
  const uint groups = (uint)get_num_groups(0), awake = pick->awake_seen;
  const ulong want = (ulong)pick->busy_seen + ((ulong)pick->ready + CHANFLOW_WG_SIZE - 1u) / CHANFLOW_WG_SIZE + s->least;
  const uint w = (uint)min(want, (ulong)groups);
  if (w > awake)
    atomic_max(&s->awake, w);
  else if (!pick->any_ready && w < awake)
    atomic_min(&s->awake, w);
}

/* Before a poll: a work-group numbered past `awake` (as the last poll saw it) sleeps (nanosleep,
 * ~0.25-2 us at a time) until a poll wants it, the launch is recalled, or no group holds a batch
 * (then it polls, and may leave: nothing more can appear unless it takes what is ready). Its
 * sleeps read two words and touch no channel. The leader's: the others wait for it at the poll's
 * first barrier. */
void chanflow_sched_doze(__global chanflow_sched* s, __local chanflow_sched_pick* pick) {
  if (chanflow_local_id() == 0 && get_group_id(0) >= pick->awake_seen) {
    volatile __global chanflow_sched* v = (volatile __global chanflow_sched*)s;
    const uint me = (uint)get_group_id(0);
    uint naps = 0u;
    while (me >= v->awake && v->busy != 0u && !(s->recall && *(volatile __global uint*)s->recall != 0u))
      chanflow_backoff(2u + naps++);
    pick->naps += naps;
  }
}
#endif

/* One poll: the work-items score the entries in parallel, the leader prepays the best one's
 * outputs, the batch is claimed (by claim credits, chanflow_sched_claim; a CPU device's one poll by
 * compare-and-swap, chanflow_claim), and every item learns the entry (CHANFLOW_SCHED_AGAIN: none
 * this time; CHANFLOW_SCHED_NONE: leave). A work-group
 * that has polled fewer than `patience` times in a row takes only full batches, so that the
 * producers of a level fill it before a thousand pollers take its CEs a few at a time.
 * Collective. */
uint chanflow_sched_poll(__global chanflow_sched* s, __local chanflow_batch* b, __local chanflow_sched_pick* pick) {
  const uint lid = chanflow_local_id();
  const uint count = min(s->count, (uint)CHANFLOW_SCHED_MAX_ENTRIES);
  const int patient = pick->empty < s->patience; /* the last poll's barrier showed it */
  if (lid == 0) {
    pick->best = 0u;
    pick->any_ready = 0u;
    pick->full = CHANFLOW_SCHED_NONE;
    pick->movable = 0u;
    /* Written by the host while the launch runs (a copy on another queue): read past L1, in a
     * shared run only (alone, the header names no word). */
    pick->recalled = s->recall && *(volatile __global uint*)s->recall != 0u;
    pick->ready = 0u;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  uint mine = 0u, ready = 0u;
  for (uint e = lid; e < count; e += CHANFLOW_WG_SIZE) {
    __global const chanflow_sched_entry* entry = s->entries + e;
    volatile __global chanflow_channel* in = (volatile __global chanflow_channel*)entry->in;
    const ulong head = in->ctrl_head, published = in->ctrl_published;
    if (published <= head) continue;
    pick->any_ready = 1u;
    /* capped so that the group's sum cannot wrap: beyond a launch's groups' worth it asks no more */
    ready = (uint)min((ulong)ready + (published - head), (ulong)(UINT_MAX / CHANFLOW_WG_SIZE));
    if (pick->tried[e / 32u] & (1u << (e % 32u))) continue;
    __global const chanflow_node_env* env = (__global const chanflow_node_env*)entry->env;
    chanflow_policy_view v;
    v.ready = published - head;
    /* No room for one CE's spawns: not a candidate (a policy's favourite that cannot move would
     * hide the others), but what its outputs' consumers finished may be freed. */
    if (chanflow_sched_afford(env, 1u) == 0u) {
      pick->full = e;
      continue;
    }
    pick->movable = 1u;
    if (patient && v.ready < env->group_ces) continue;
    v.free = (ulong)max((long)in->data_free, 0l);
    v.level = entry->level;
    v.in_stack = (entry->flags & CHANFLOW_SCHED_IN_STACK) != 0u;
    v.continuation = (entry->flags & CHANFLOW_SCHED_CONTINUATION) != 0u;
    v.node = entry->node;
    v.group_ces = env->group_ces;
    v.pad = 0u;
    const int score = chanflow_policy_score(s->policy, &v);
    if (score < 0) continue;
    const uint packed = ((uint)min(score, 0xfffe) + 1u) << 16 | (0xffffu - e);
    mine = max(mine, packed);
  }
  if (mine) atomic_max(&pick->best, mine);
  if (ready) atomic_add(&pick->ready, ready);
#ifndef CHANFLOW_SCHED_ONE_POLL
  if (lid == CHANFLOW_WG_SIZE - 1u) { /* read beside the entries (the last item scans few or none) */
    volatile __global chanflow_sched* v = (volatile __global chanflow_sched*)s;
    pick->awake_seen = v->awake;
    pick->busy_seen = v->busy;
  }
#endif
  barrier(CLK_LOCAL_MEM_FENCE);
  /* Recalled: take nothing more; the group leaves below. */
  const uint e = pick->best && !pick->recalled ? 0xffffu - (pick->best & 0xffffu) : CHANFLOW_SCHED_NONE;
  __global const chanflow_sched_entry* entry = s->entries + (e == CHANFLOW_SCHED_NONE ? 0u : e);
  __global const chanflow_node_env* env = (__global const chanflow_node_env*)entry->env;
  if (lid == 0) {
    b->n = 0u;
    pick->k = 0u;
    for (uint p = 0; p < CHANFLOW_NODE_PORTS; ++p) b->prepaid[p] = 0u;
    if (e != CHANFLOW_SCHED_NONE) {
      atomic_inc(&s->busy);
      /* A per-item node's group takes up to a work-group's worth. A work-group node's takes up
       * to CHANFLOW_SCHED_GROUP_BATCH of its CEs at once and runs them one after another (one
       * compare-and-swap for several), as many as leave `spread` groups theirs. (Spreading a
       * per-item node's ready CEs too made every batch of fib 30 one CE: a thousand pollers see a
       * level a few CEs at a time; 5 ms became 600.) */
      volatile __global chanflow_channel* in = (volatile __global chanflow_channel*)entry->in;
      const ulong ready = in->ctrl_published - in->ctrl_head;
      const ulong spread = max(s->spread, 1u);
      const uint want = env->group_ces > 1u ? env->group_ces
                                            : (uint)clamp(ready / spread, 1ul, (ulong)CHANFLOW_SCHED_GROUP_BATCH);
      const uint k = chanflow_sched_afford(env, want);
      if (k > 0u && chanflow_prepay_level(env, k, b->prepaid)) pick->k = k;
#ifdef CHANFLOW_SCHED_ONE_POLL
      uint n = 0;
      if (pick->k) b->first = chanflow_claim((__global chanflow_channel*)entry->in, pick->k, &n, b->index);
      b->n = n;
#endif
    }
  }
#ifndef CHANFLOW_SCHED_ONE_POLL
  barrier(CLK_LOCAL_MEM_FENCE);
  if (pick->k) chanflow_sched_claim((__global chanflow_channel*)entry->in, pick->k, b); /* uniform */
#endif
  if (lid == 0) {
    uint chosen = CHANFLOW_SCHED_AGAIN;
    if (e != CHANFLOW_SCHED_NONE) {
      if (b->n > 0u) {
        chosen = e;
        for (uint p = 0; p < env->ports; ++p) { /* what the CEs not claimed would have spawned */
          const uint need = b->prepaid[p] / pick->k, spare = need * (pick->k - b->n);
          if (spare) atom_add(&((__global chanflow_channel*)env->port[p])->data_free, (ulong)spare);
          b->prepaid[p] -= spare;
          pick->share[p] = need;
        }
        atomic_add(&env->counters->claimed, b->n);
        atomic_inc(&env->counters->batches);
        for (uint w = 0; w < CHANFLOW_SCHED_MAX_ENTRIES / 32; ++w) pick->tried[w] = 0u;
      } else {
        chanflow_refund_level(env, b->prepaid, env->ports);
        atomic_dec(&s->busy);
        pick->tried[e / 32u] |= 1u << (e % 32u);
      }
    }
#ifndef CHANFLOW_SCHED_ONE_POLL
    chanflow_sched_size(s, pick);
#endif
    if (chosen == CHANFLOW_SCHED_AGAIN) {
      atomic_inc(&s->empty_polls);
      pick->lost = e != CHANFLOW_SCHED_NONE && pick->k;
      if (pick->lost) /* claimed by others first */
        atomic_inc(&s->polls_lost);
      else if (e != CHANFLOW_SCHED_NONE || (pick->full != CHANFLOW_SCHED_NONE && !pick->movable))
        atomic_inc(&s->polls_no_room);
      /* Work held up for room: free what its outputs' consumers have finished with. */
      pick->held = e != CHANFLOW_SCHED_NONE && !pick->k ? e : pick->full;
#ifdef CHANFLOW_SCHED_ONE_POLL
      int freed = 0;
      if (pick->held != CHANFLOW_SCHED_NONE) {
        __global const chanflow_node_env* held = (__global const chanflow_node_env*)s->entries[pick->held].env;
        for (uint p = 0; p < held->ports; ++p)
          if (held->port[p]) freed |= chanflow_sched_deallocate((__global chanflow_channel*)held->port[p]);
      }
      chosen = chanflow_sched_settle(s, pick, e, freed);
#endif
    } else {
      pick->empty = 0u;
    }
    pick->entry = chosen;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#ifdef CHANFLOW_SCHED_ONE_POLL
  return pick->entry;
#else
  /* Nothing taken: the group frees room together, then the leader settles whether it leaves. */
  const uint chosen = pick->entry;
  if (chosen != CHANFLOW_SCHED_AGAIN) return chosen; /* uniform, as is everything below */
  int freed = 0;
  if (pick->held != CHANFLOW_SCHED_NONE) {
    __global const chanflow_node_env* held = (__global const chanflow_node_env*)s->entries[pick->held].env;
    for (uint p = 0; p < held->ports; ++p)
      if (held->port[p]) freed |= chanflow_sched_deallocate_group((__global chanflow_channel*)held->port[p], &pick->free);
  }
  if (lid == 0) pick->settled = chanflow_sched_settle(s, pick, e, freed);
  barrier(CLK_LOCAL_MEM_FENCE);
  return pick->settled;
#endif
}

/* The leader, once its group's batch (entry e, `ces` CEs) has run (spawns flushed, joins made, CEs
 * freed): the batch's time to its node's counters, since `started` (chanflow_clock_ns), and in a
 * traced run to the timeline; the group stops counting as busy unless it `held` kept spawns. */
void chanflow_sched_done(__global chanflow_sched* s, __global const chanflow_node_env* env, ulong started, uint e,
                         uint ces, int held, __local const chanflow_wg_scratch* wg) {
  (void)wg;
  if (chanflow_local_id() == 0) {
    const ulong now = chanflow_clock_ns(), took = now - started;
    if (took) atom_add(&env->counters->busy_ns, took);
    if (s->spans && took) {
      const uint at = atomic_inc(&s->spans_used);
      if (at < s->span_capacity) {
        __global chanflow_sched_span* span = s->spans + at;
        span->start_ns = started;
        span->end_ns = now;
        span->group = (uint)get_group_id(0);
        span->entry = e;
        span->ces = ces;
#ifdef CHANFLOW_SCHED_PHASES /* a work-group node's batch: its CEs' together */
        for (uint k = 0; k < CHANFLOW_SCHED_PHASES_N; ++k) span->phase_ns[k] = (uint)min(wg->phase[k], (ulong)UINT_MAX);
#else
        for (uint k = 0; k < CHANFLOW_SCHED_PHASES_N; ++k) span->phase_ns[k] = 0u;
#endif
      }
    }
    atomic_inc(&s->batches);
    if (!held) { /* a group that kept spawns stays busy: they are work no other group can see */
      chanflow_fence_acq_rel(); /* release: what the batch published, before it stops counting as busy */
      atomic_dec(&s->busy);
    }
  }
}

/* Runs the batch the poll took (entry e; on a CPU device also CHANFLOW_SCHED_AGAIN: every node's
 * collectives, inactive) on this work-item: its control position, CE and activity as
 * chanflow_next_batch gives them to a claimed sweep's item. */
void chanflow_sched_batch(__global chanflow_sched* s, uint e, __local chanflow_batch* b, __local chanflow_wg_scratch* wg,
                          __local void* group_local, __local ulong* group_ce, __local const uint* none,
                          __local chanflow_sched_pick* pick, __local chanflow_keep* keep) {
  const uint lid = chanflow_local_id();
  const int taken = e < CHANFLOW_SCHED_AGAIN;
  __global const chanflow_sched_entry* entry = s->entries + (taken ? e : 0u);
  __global const chanflow_node_env* env = (__global const chanflow_node_env*)entry->env;
  const uint body = taken ? entry->body : CHANFLOW_SCHED_NONE;
  const ulong started = chanflow_clock_ns(); /* read by the leader only (chanflow_sched_done) */
  if (keep && lid == 0) keep->n = 0u; /* the flush's leader sets it; the group reads it after the batch */
#ifdef CHANFLOW_SCHED_PHASES
  if (lid == 0) {
    for (uint k = 0; k < CHANFLOW_SCHED_PHASES_N; ++k) wg->phase[k] = 0ul;
    wg->phase_at = started;
  }
#endif
#ifndef CHANFLOW_SCHED_ONE_POLL
  if (taken && env->group_ces == 1u) { /* uniform: a work-group node's CEs, one after another */
    const uint n = b->n;
    for (uint i = 0; i < n; ++i)
      chanflow_sched_run(body, env, b->first + i, b->index[i], lid == 0u, pick->share, wg, group_local, group_ce, none,
                         (__global const ulong*)s->envs, 0);
    chanflow_sched_done(s, env, started, e, n, 0, wg);
    return;
  }
#endif
  const int active = taken && lid < b->n;
  const ulong pos = b->first + lid;
  const uint index = active ? b->index[lid] : 0u;
  chanflow_sched_run(body, env, pos, index, active, b->prepaid, wg, group_local, group_ce, none,
                     (__global const ulong*)s->envs, keep);
  if (taken) chanflow_sched_done(s, env, started, e, b->n, keep && keep->n, wg);
}

#ifndef CHANFLOW_SCHED_ONE_POLL
/* Kept spawns. A batch whose flush kept its spawns on one port (at most a work-group's worth,
 * reserved and written, not published: flush.cl) runs them next in the same work-group, as a
 * batch of the level that consumes that port, with its outputs prepaid as a claimed batch's are;
 * the group counts as busy throughout. A narrow recursion so grows inside one work-group, a level
 * costing a batch's own work and no publish, poll or claim, until a batch spawns more than a
 * work-group's worth, which go to the channels for every group. Where the consumer is a work-group
 * node, its outputs lack room, or the host has recalled the launch, the CEs are published as the
 * flush would have and the group polls. The frames a batch's joins made ready and kept (join.cl,
 * listed by index) go the same way: a narrow recursion's ascent runs in the group that completed
 * each frame. Collective; returns the entry to run, or CHANFLOW_SCHED_AGAIN. */
uint chanflow_sched_take_kept(__global chanflow_sched* s, __local chanflow_batch* b, __local chanflow_sched_pick* pick,
                              __local chanflow_keep* keep, __local chanflow_wg_scratch* wg) {
  const uint lid = chanflow_local_id();
  __global chanflow_channel* ch = keep->channel;
  const uint n = keep->n, first = keep->index;
  if (ch != keep->found_channel) { /* uniform: the level that consumes the channel, found once */
    const uint count = min(s->count, (uint)CHANFLOW_SCHED_MAX_ENTRIES);
    if (lid == 0) pick->best = CHANFLOW_SCHED_NONE;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint e = lid; e < count; e += CHANFLOW_WG_SIZE)
      if ((__global chanflow_channel*)s->entries[e].in == ch) atomic_min(&pick->best, e);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
      keep->found = pick->best;
      keep->found_channel = ch;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const uint e = keep->found;
  if (lid == 0) {
    pick->k = 0u;
    /* The recall is read beside the prepay's atomics, not before them. */
    const uint recall = s->recall ? *(volatile __global uint*)s->recall : 0u;
    if (e != CHANFLOW_SCHED_NONE) {
      __global const chanflow_node_env* env = (__global const chanflow_node_env*)s->entries[e].env;
      for (uint p = 0; p < CHANFLOW_NODE_PORTS; ++p) b->prepaid[p] = 0u;
      if (env->group_ces > 1u && chanflow_prepay_level(env, n, b->prepaid)) {
        if (recall) {
          chanflow_refund_level(env, b->prepaid, env->ports);
        } else {
          pick->k = n;
          b->first = 0ul; /* no control positions: a batch that never yields has no use for them */
          b->n = n;
          atom_add(&ch->ctrl_kept, (ulong)n);
          atomic_add(&env->counters->claimed, n);
          atomic_inc(&env->counters->batches);
        }
      }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint mine = lid < n ? (keep->listed ? keep->list[lid] : first + lid) : 0u; /* this item's CE */
  if (pick->k) { /* uniform */
    if (lid < n) b->index[lid] = mine;
    barrier(CLK_LOCAL_MEM_FENCE);
    return e;
  }
  const chanflow_ticket t = {mine, lid < n ? 1u : 0u, lid, n};
  enq(ch, &t, wg);
  if (lid == 0) {
    keep->n = 0u;
    chanflow_fence_acq_rel(); /* release: the entries published before the group stops counting as busy */
    atomic_dec(&s->busy);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  return CHANFLOW_SCHED_AGAIN;
}
#endif

__kernel __attribute__((reqd_work_group_size(CHANFLOW_WG_SIZE, 1, 1))) void chanflow_schedule(__global chanflow_sched* s) {
  __local chanflow_wg_scratch wg;
  __local chanflow_batch batch;
  __local chanflow_sched_pick pick;
  __local chanflow_sched_group_local group_local;
  __local ulong group_ce;
  __local uint none[CHANFLOW_NODE_PORTS]; /* no credits: what the nodes not chosen give back */
  for (uint w = chanflow_local_id(); w < CHANFLOW_SCHED_MAX_ENTRIES / 32; w += CHANFLOW_WG_SIZE) pick.tried[w] = 0u;
  for (uint p = chanflow_local_id(); p < CHANFLOW_NODE_PORTS; p += CHANFLOW_WG_SIZE) none[p] = 0u;
  if (chanflow_local_id() == 0) {
    pick.empty = 0u;
    pick.seen = 0u;
    pick.still = 0u;
    pick.naps = 0u;
    pick.lost = 0u;
    pick.awake_seen = (uint)get_num_groups(0); /* the first poll reads it */
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#ifdef CHANFLOW_SCHED_ONE_POLL
  /* PoCL 3.1 mis-runs barriers inside loops and under conditions (a switch's too): a work-group
   * polls once and runs every node's collectives, and a launch's later work-groups (a CPU device
   * runs them one after another on each core) take what earlier ones made. */
  const uint e = chanflow_sched_poll(s, &batch, &pick);
  chanflow_sched_batch(s, e, &batch, &wg, &group_local, &group_ce, none, &pick, 0);
#else
  __local chanflow_keep keep;
  if (chanflow_local_id() == 0) keep.found_channel = 0; /* the entries are this launch's */
  chanflow_sched_set_credits(s, &pick.k);
  for (;;) {
    chanflow_sched_doze(s, &pick);
    uint e = chanflow_sched_poll(s, &batch, &pick);
    if (e == CHANFLOW_SCHED_NONE) break;
    while (e != CHANFLOW_SCHED_AGAIN) { /* uniform */
      chanflow_sched_batch(s, e, &batch, &wg, &group_local, &group_ce, none, &pick, &keep);
      barrier(CLK_LOCAL_MEM_FENCE);
      e = keep.n ? chanflow_sched_take_kept(s, &batch, &pick, &keep, &wg) : CHANFLOW_SCHED_AGAIN;
    }
  }
  if (chanflow_local_id() == 0 && pick.naps) atomic_add(&s->naps, pick.naps);
#endif
}
