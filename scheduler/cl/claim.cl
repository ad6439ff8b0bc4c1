/* The device scheduler's hold on a channel (schedule.cl is the scheduler): what a level's outputs
 * can take, a claim of a batch from a channel's dispatch head, and in-order deallocation inside a
 * launch, so that a bounded level empties and refills while the launch runs. */

/* CEs of this level (at most `most`) whose spawns its outputs can take now in the worst case:
 * a snapshot, which chanflow_prepay_level makes certain or refuses. A level whose output level
 * is not made yet takes none (the host makes it before the next launch). */
uint chanflow_sched_afford(__global const chanflow_node_env* env, uint most) {
  uint k = most;
  for (uint p = 0; p < env->ports && k > 0u; ++p) {
    const uint need = chanflow_port_need(env, p);
    if (need == 0u) continue;
    volatile __global chanflow_channel* out = (volatile __global chanflow_channel*)env->port[p];
    if (!out) return 0u;
    const long free = (long)out->data_free;
    const ulong fits = free > 0 ? (ulong)free / need : 0ul;
    k = (uint)min((ulong)k, min(fits, (ulong)(out->max_reservation / need)));
  }
  return k;
}

/* In-order deallocation of `ch` inside a launch (the deallocation kernel's, for what a work-group
 * found full): from the data head, every done-count group that is wholly allocated and wholly
 * freed is reset and its credits given back. Only whole groups below the tail (a group the tail
 * stands inside may still be reserved into), at most 64 a call, by one leader at a time (a work-
 * group that finds another at it goes on without). The deallocation kernel between launches
 * does the rest. Returns whether it freed anything (or another group may have). */
#ifdef CHANFLOW_SCHED_ONE_POLL
int chanflow_sched_deallocate(__global chanflow_channel* ch) {
  if (atom_cmpxchg(&ch->dealloc_lock, 0ul, 1ul) != 0ul) return 1; /* another group is at it: maybe */
  chanflow_fence_acq_rel(); /* acquire: the last holder's head */
  const ulong head = ((volatile __global chanflow_channel*)ch)->data_head;
  const ulong tail = atom_add(&ch->data_tail, 0ul);
  const uint group = ch->done_group;
  ulong pos = head;
  for (uint n = 0; n < 64u && pos + group <= tail; ++n) {
    volatile __global uint* done = ch->done + (uint)((pos % ch->capacity) / group);
    if (atomic_add(done, 0u) != group) break;
    atomic_xchg(done, 0u);
    pos += group;
  }
  if (pos != head) {
    ((volatile __global chanflow_channel*)ch)->data_head = pos;
    chanflow_fence_acq_rel(); /* release: the counts reset before the slots can be reserved again */
    atom_add(&ch->data_free, pos - head);
  }
  chanflow_fence_acq_rel();
  atom_xchg(&ch->dealloc_lock, 0ul);
  return pos != head;
}
#endif

/* A collective deallocation's shared values (chanflow_sched_deallocate_group). */
typedef struct {
  ulong head, tail;
  uint locked;
  uint first_busy; /* the first done-count group from the head not wholly freed */
} chanflow_sched_free;

#ifndef CHANFLOW_SCHED_ONE_POLL
/* The same by the whole work-group: each work-item reads one done count, so a call looks at up to
 * a work-group's worth of done-count groups in one round trip to memory and frees the prefix that
 * is wholly freed. (The leader's loop above, a CPU device's, read them one after another, two dependent atomics
 * each: on an H200 a chain reusing one channel freed 64 groups, 4,096 CEs, every ~45 us, and that
 * set its pace.) Collective and uniform; `ch` is the same for every item. */
int chanflow_sched_deallocate_group(__global chanflow_channel* ch, __local chanflow_sched_free* f) {
  const uint lid = chanflow_local_id();
  if (lid == 0) {
    f->locked = atom_cmpxchg(&ch->dealloc_lock, 0ul, 1ul) == 0ul;
    if (f->locked) {
      chanflow_fence_acq_rel(); /* acquire: the last holder's head and resets */
      volatile __global chanflow_channel* v = (volatile __global chanflow_channel*)ch;
      f->head = v->data_head;
      f->tail = v->data_tail;
    }
    f->first_busy = CHANFLOW_WG_SIZE;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (!f->locked) return 1; /* uniform: another group is at it, and may free something */
  const ulong head = f->head, tail = f->tail;
  const uint group = ch->done_group;
  const ulong pos = head + (ulong)lid * group;
  volatile __global uint* done = ch->done + (uint)((pos % ch->capacity) / group);
  if (pos + group > tail || *done != group) atomic_min(&f->first_busy, lid);
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint n = f->first_busy;
  if (lid < n) *done = 0u; /* wholly freed: nobody else touches it until its credits return */
  barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
  if (lid == 0) {
    if (n) {
      chanflow_fence_acq_rel(); /* release: the counts reset before the slots can be reserved again */
      ((volatile __global chanflow_channel*)ch)->data_head = head + (ulong)n * group;
      chanflow_fence_acq_rel();
      atom_add(&ch->data_free, (ulong)n * group);
    }
    chanflow_fence_acq_rel();
    atom_xchg(&ch->dealloc_lock, 0ul);
  }
  return n != 0u;
}

/* Claim credits: the first work-group of a launch sets every entry's channel's to its published CEs
 * not yet claimed (the host's rounds and dispatches between launches move the head without them),
 * while the others wait; from then on enq adds what it publishes and the claims below take them.
 * Collective; `was` a word of local memory it may use. */
void chanflow_sched_set_credits(__global chanflow_sched* s, __local uint* was) {
  const uint lid = chanflow_local_id();
  if (lid == 0) *was = atomic_cmpxchg(&s->credits_set, 0u, 1u);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (*was == 0u) { /* uniform: this group sets them */
    const uint count = min(s->count, (uint)CHANFLOW_SCHED_MAX_ENTRIES);
    for (uint e = lid; e < count; e += CHANFLOW_WG_SIZE) {
      volatile __global chanflow_channel* in = (volatile __global chanflow_channel*)s->entries[e].in;
      in->ctrl_credits = in->ctrl_published - in->ctrl_head;
    }
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
      chanflow_fence_acq_rel(); /* release: the credits before the word that says they are set */
      atomic_xchg(&s->credits_set, 2u);
    }
  } else if (lid == 0) {
    while (*(volatile __global uint*)&s->credits_set != 2u) {
    }
    chanflow_fence_acq_rel(); /* acquire: the credits */
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}

/* Claims up to `most` ready CEs of `ch` for the work-group: the leader takes credits by
 * fetch-and-subtract (what it takes beyond those left it gives back) and moves the dispatch head by
 * fetch-and-add over what it took, so a claim never fails and retries, however many work-groups
 * contend for the channel (a compare-and-swap on the head completes ~1.6 times a µs with ~200
 * contenders: DESIGN.md's device facts). Every position handed out lies below the credits taken,
 * so below the published count; its entry was reserved by a producer (enq reserves before it
 * publishes) whose group writes it without waiting on any other: the work-items read the claimed
 * entries after, waiting on one not written yet. Collective; sets b->first and b->n (0: none). */
void chanflow_sched_claim(__global chanflow_channel* ch, uint most, __local chanflow_batch* b) {
  const uint lid = chanflow_local_id();
  if (lid == 0) {
    const long before = (long)atom_sub(&ch->ctrl_credits, (ulong)most);
    const uint take = before >= (long)most ? most : before > 0l ? (uint)before : 0u;
    if (take < most) atom_add(&ch->ctrl_credits, (ulong)(most - take));
    b->first = take ? atom_add(&ch->ctrl_head, (ulong)take) : 0ul;
    b->n = take;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint take = b->n;
  if (lid < take) {
    const uint ccap = ch->ctrl_capacity;
    const ulong cpos = b->first + lid;
    const ulong tag = (ulong)(uint)(cpos / ccap + 1);
    volatile __global ulong* slot = (volatile __global ulong*)ch->ctrl + cpos % ccap;
    ulong entry = chanflow_load_acquire(slot);
    while ((entry >> CHANFLOW_CTRL_TAG_SHIFT) != tag) entry = chanflow_load_acquire(slot);
    b->index[lid] = (uint)(entry & CHANFLOW_CTRL_INDEX_MASK);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}
#endif
