/* The channel's device API with leader-level synchronization (thesis 4.1.2, 4.2.1, Table 4-1).
 * talloc, enq and tfree are work-group collectives: every work-item of the work-group calls
 * them at the same point (a work-item with nothing to do passes 0 / inactive). One leader
 * makes the global atomic on behalf of the whole work-group. Protocol: channels/README.md. */

/* What talloc hands a work-item, to be passed to enq. */
typedef struct {
  uint index;   /* physical data-array index of this item's first CE (may exceed capacity) */
  uint n;       /* CEs this item reserved */
  uint offset;  /* exclusive prefix of n within the work-group */
  uint total;   /* CEs the whole work-group reserved; 0 after a failed talloc */
} chanflow_ticket;

/* Reserves `total` contiguous data elements or nothing; called by one work-item. Returns the
 * physical index of the first (see channel_layout.h). Two atomics, no retry loop: thousands of
 * work-groups contending on one compare-and-swap cost O(n^2) attempts on a GPU. */
int chanflow_reserve_data(__global chanflow_channel* ch, uint total, uint* index, uint prepaid) {
  *index = 0;
  if (prepaid > 0 && total <= prepaid) {
    /* Credits taken beforehand (chanflow_prepay): only the positions remain; the rest goes back. */
    if (prepaid > total) atom_add(&ch->data_free, (ulong)(prepaid - total));
    if (total == 0) return 1;
    const ulong pos = atom_add(&ch->data_tail, (ulong)total);
    CHANFLOW_COUNT_ATOMIC(ch);
    *index = (uint)(pos % ch->capacity);
    return 1;
  }
  if (prepaid > 0) atom_add(&ch->data_free, (ulong)prepaid);
  if (total == 0) return 1;
  if (total > ch->max_reservation) {
    atom_inc(&ch->oversized_requests);
    atom_inc(&ch->failed_reservations);
    return 0;
  }
  /* Relaxed (OpenCL 1.2 atomics): the CEs are published by enq's barrier and counter, not
   * by the reservation. Credits may dip below zero while a refused request gives its back;
   * a request racing with that sees too few and fails, never overflows the channel. */
  const long before = (long)atom_sub(&ch->data_free, (ulong)total);
  CHANFLOW_COUNT_ATOMIC(ch);
  if (before < (long)total) {
    atom_add(&ch->data_free, (ulong)total);
    atom_inc(&ch->failed_reservations);
    CHANFLOW_COUNT_ATOMIC(ch);
    return 0;
  }
  const ulong pos = atom_add(&ch->data_tail, (ulong)total);
  CHANFLOW_COUNT_ATOMIC(ch);
  *index = (uint)(pos % ch->capacity);
  return 1;
}

/* Takes `credits` of ch's free space ahead of a talloc (by one work-item, for its work-group),
 * or nothing: returns whether it did. The talloc that follows passes them as `prepaid`. */
int chanflow_prepay(__global chanflow_channel* ch, uint credits) {
  if (credits == 0) return 1;
  if (credits > ch->max_reservation) return 0;
  const long before = (long)atom_sub(&ch->data_free, (ulong)credits);
  if (before < (long)credits) {
    atom_add(&ch->data_free, (ulong)credits);
    return 0;
  }
  return 1;
}

/* talloc with `prepaid` credits already taken by chanflow_prepay (uniform; 0: none): a total
 * within them always succeeds, and what it does not use goes back. */
__global void* chanflow_talloc_prepaid(__global chanflow_channel* ch, uint n, chanflow_ticket* t,
                                       __local chanflow_wg_scratch* s, uint prepaid) {
  const uint offset = chanflow_wg_exclusive_scan(n, s);
  if (chanflow_local_id() == 0) {
    uint index = 0;
    s->ok = chanflow_reserve_data(ch, s->total, &index, prepaid);
    s->data_base = index;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (!s->ok) {
    t->index = 0;
    t->n = 0;
    t->offset = 0;
    t->total = 0;
    return 0;
  }
  t->index = (uint)s->data_base + offset;
  t->n = n;
  t->offset = offset;
  t->total = s->total;
  if (ch->live)
    for (uint k = 0; k < n; ++k) {
      const uint slot = (t->index + k) % ch->capacity, bit = 1u << (slot % 32u);
      if (atomic_or(ch->live + slot / 32u, bit) & bit)
        atomic_or((volatile __global uint*)&ch->errors, CHANFLOW_CHANNEL_ERR_REALLOCATED);
    }
  return ch->data + (size_t)t->index * ch->ce_bytes;
}

/* Allocates n CEs for this work-item in channel ch. Collective. Returns a pointer to n
 * contiguous CEs, or NULL for every item of the work-group if the work-group's total does not
 * fit (nothing is reserved then). An item asking for 0 gets a non-NULL pointer it must not
 * dereference. */
__global void* talloc(__global chanflow_channel* ch, uint n, chanflow_ticket* t,
                      __local chanflow_wg_scratch* s) {
  return chanflow_talloc_prepaid(ch, n, t, s, 0u);
}

/* Writes the control entries for a ticket's CEs from control position `first`. */
void chanflow_write_ctrl(__global chanflow_channel* ch, ulong first, const chanflow_ticket* t) {
  const uint index = t->index;
  const uint ccap = ch->ctrl_capacity;
  for (uint k = 0; k < t->n; ++k) {
    const ulong cpos = first + k;
    const ulong tag = (ulong)(uint)(cpos / ccap + 1) << CHANFLOW_CTRL_TAG_SHIFT;
    ch->ctrl[cpos % ccap] = tag | (ulong)(index + k);
  }
}

/* Makes the CEs of a talloc visible to the aggregator. Collective; a failed talloc's ticket
 * makes it a no-op. Never waits on another work-group: each control entry carries its own
 * ready tag, and ctrl_published counts entries already written. */
void enq(__global chanflow_channel* ch, const chanflow_ticket* t, __local chanflow_wg_scratch* s) {
  const uint lid = chanflow_local_id();
  if (lid == 0 && t->total > 0) {
    /* Always fits: live control entries never exceed the data capacity, half the array. */
    s->ctrl_base = atom_add(&ch->ctrl_reserve_tail, (ulong)t->total);
    CHANFLOW_COUNT_ATOMIC(ch);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  chanflow_write_ctrl(ch, s->ctrl_base + t->offset, t);
  /* The CEs and control entries of the whole work-group are written before the leader
   * counts them as published. */
  barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
  if (lid == 0 && t->total > 0) {
    /* A release at device scope (order.cl): the group's CE and control-entry stores, which the
     * barrier showed this item, are visible to any work-group of the launch whose acquire reads
     * the count (a claim: scheduler/cl/sweep.cl); on a CPU device it orders them for the compiler. */
    chanflow_fence_acq_rel();
    atom_add(&ch->ctrl_published, (ulong)t->total);
    atom_add(&ch->ctrl_credits, (ulong)t->total); /* after: credits never exceed published - head */
    CHANFLOW_COUNT_ATOMIC(ch);
  }
}

/* Makes one CE per active item visible, named by its physical data index: a CE reserved
 * earlier, possibly by another work-group (a continuation frame enqueued by the last child to
 * return into it). Collective; `ch` is the same for every item. */
void chanflow_enq_at(__global chanflow_channel* ch, uint index, int active, __local chanflow_wg_scratch* s) {
  const uint offset = chanflow_wg_exclusive_scan(active ? 1u : 0u, s);
  const chanflow_ticket t = {index, active ? 1u : 0u, offset, s->total};
  enq(ch, &t, s);
}

/* Physical data-array index of the CE at control position ctrl_pos. */
uint chanflow_ce_index(__global const chanflow_channel* ch, ulong ctrl_pos) {
  return (uint)(ch->ctrl[ctrl_pos % ch->ctrl_capacity] & CHANFLOW_CTRL_INDEX_MASK);
}

/* The CE at control position ctrl_pos, handed to this work-item by a dispatch. */
__global void* deq(__global chanflow_channel* ch, ulong ctrl_pos) {
  return ch->data + (size_t)chanflow_ce_index(ch, ctrl_pos) * ch->ce_bytes;
}

/* Signals that this item is finished with the CE at physical index `index` (if active). Collective: items
 * whose CEs share a done count are merged, and one item per run makes the atomic. */
void chanflow_tfree_index(__global chanflow_channel* ch, uint index, int active, __local chanflow_wg_scratch* s) {
  const uint lid = chanflow_local_id();
  const uint none = 0xffffffffu;
  const uint group = active ? (index % ch->capacity) / ch->done_group : none;
  if (active && ch->live) { /* checked frees: the CE must be allocated, and is no longer */
    const uint slot = index % ch->capacity, bit = 1u << (slot % 32u);
    if (!(atomic_and(ch->live + slot / 32u, ~bit) & bit))
      atomic_or((volatile __global uint*)&ch->errors, CHANFLOW_CHANNEL_ERR_NOT_LIVE);
  }
#ifndef CHANFLOW_CPU_DEVICE
  /* A GPU: each item counts its own CE (an atomic nobody waits for). The first item of a run of
   * one done-count group counting the whole run read the run's entries one after another, ~1 µs
   * for a run of 64. No barrier: nothing in the group reads the counts. */
  (void)lid;
  (void)s;
  if (group != none) atomic_inc(&ch->done[group]);
  CHANFLOW_COUNT_ATOMIC(ch);
#else
  __local uint* groups = s->scan[1];
  groups[lid] = group;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (group != none && (lid == 0 || groups[lid - 1] != group)) {
    uint count = 1;
    for (uint j = lid + 1; j < CHANFLOW_WG_SIZE && groups[j] == group; ++j) ++count;
    /* Relaxed: the aggregator reads done counts only after the dispatch has completed. */
    atomic_add(&ch->done[group], count);
    CHANFLOW_COUNT_ATOMIC(ch);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#endif
}

/* The same for the CE at control position ctrl_pos. */
void tfree(__global chanflow_channel* ch, ulong ctrl_pos, int active, __local chanflow_wg_scratch* s) {
  chanflow_tfree_index(ch, active ? chanflow_ce_index(ch, ctrl_pos) : 0u, active, s);
}
