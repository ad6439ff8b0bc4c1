/* The channel's device API with leader-level synchronization (thesis 4.1.2, 4.2.1, Table 4-1).
 * talloc, enq and tfree are work-group collectives: every work-item of the work-group calls
 * them at the same point (a work-item with nothing to do passes 0 / inactive). One leader
 * makes the global atomic on behalf of the whole work-group. Protocol: channels/README.md. */

/* What talloc hands a work-item, to be passed to enq. */
typedef struct {
  ulong pos;    /* data position of this item's first CE */
  uint n;       /* CEs this item reserved */
  uint offset;  /* exclusive prefix of n within the work-group */
  uint total;   /* CEs the whole work-group reserved; 0 after a failed talloc */
} chanflow_ticket;

/* Marks `count` data elements from `pos` as done: padding skipped at the array's end. */
void chanflow_mark_done_range(__global chanflow_channel* ch, ulong pos, uint count) {
  const uint cap = ch->capacity;
  uint index = (uint)(pos % cap);
  while (count > 0) {
    const uint group = index / ch->done_group;
    const uint group_end = (group + 1) * ch->done_group;
    const uint here = min(count, group_end - index);
    atomic_add(&ch->done[group], here);
    CHANFLOW_COUNT_ATOMIC(ch);
    count -= here;
    index = (index + here) % cap;
  }
}

/* Reserves `total` contiguous data elements or nothing. Called by one work-item.
 * A reservation that would straddle the end of the array first skips to index 0; the skipped
 * elements count as done at once so in-order deallocation passes over them. */
int chanflow_reserve_data(__global chanflow_channel* ch, uint total, ulong* base) {
  volatile __global ulong* tail = &ch->data_tail;
  /* A plain read is only a guess: the compare-and-swap below validates it. */
  ulong old = *tail;
  if (total == 0) {
    *base = old;
    return 1;
  }
  const uint cap = ch->capacity;
  /* data_head is written by the aggregator only between dispatches, or moves forward while
   * one runs; a stale value only makes the channel look fuller than it is. */
  const ulong head = *(volatile __global ulong*)&ch->data_head;
  for (;;) {
    const uint index = (uint)(old % cap);
    const uint pad = (index + total > cap) ? cap - index : 0u;
    if (old + pad + total - head > cap) {
      atom_inc(&ch->failed_reservations);
      return 0;
    }
    /* Relaxed CAS (OpenCL 1.2 atomics): the CEs' contents are published by enq's barrier and
     * counter update, not by this reservation. */
    const ulong seen = atom_cmpxchg(tail, old, old + pad + total);
    CHANFLOW_COUNT_ATOMIC(ch);
    if (seen == old) {
      if (pad) {
        chanflow_mark_done_range(ch, old, pad);
        atom_add(&ch->padding_elements, (ulong)pad);
      }
      *base = old + pad;
      return 1;
    }
    atom_inc(&ch->cas_retries);
    old = seen;
  }
}

/* Allocates n CEs for this work-item in channel ch. Collective. Returns a pointer to n
 * contiguous CEs, or NULL for every item of the work-group if the work-group's total does not
 * fit (nothing is reserved then). An item asking for 0 gets a non-NULL pointer it must not
 * dereference. */
__global void* talloc(__global chanflow_channel* ch, uint n, chanflow_ticket* t,
                      __local chanflow_wg_scratch* s) {
  const uint offset = chanflow_wg_exclusive_scan(n, s);
  if (chanflow_local_id() == 0) {
    ulong base = 0;
    s->ok = chanflow_reserve_data(ch, s->total, &base);
    s->data_base = base;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (!s->ok) {
    t->pos = 0;
    t->n = 0;
    t->offset = 0;
    t->total = 0;
    return 0;
  }
  t->pos = s->data_base + offset;
  t->n = n;
  t->offset = offset;
  t->total = s->total;
  return ch->data + (size_t)(t->pos % ch->capacity) * ch->ce_bytes;
}

/* Writes the control entries for a ticket's CEs from control position `first`. */
void chanflow_write_ctrl(__global chanflow_channel* ch, ulong first, const chanflow_ticket* t) {
  const uint index = (uint)(t->pos % ch->capacity);
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
    atom_add(&ch->ctrl_published, (ulong)t->total);
    CHANFLOW_COUNT_ATOMIC(ch);
  }
}

/* Data-array index of the CE at control position ctrl_pos. */
uint chanflow_ce_index(__global const chanflow_channel* ch, ulong ctrl_pos) {
  return (uint)(ch->ctrl[ctrl_pos % ch->ctrl_capacity] & CHANFLOW_CTRL_INDEX_MASK);
}

/* The CE at control position ctrl_pos, handed to this work-item by a dispatch. */
__global void* deq(__global chanflow_channel* ch, ulong ctrl_pos) {
  return ch->data + (size_t)chanflow_ce_index(ch, ctrl_pos) * ch->ce_bytes;
}

/* Signals that this item is finished with the CE at ctrl_pos (if active). Collective: items
 * whose CEs share a done count are merged, and one item per run makes the atomic. */
void tfree(__global chanflow_channel* ch, ulong ctrl_pos, int active,
           __local chanflow_wg_scratch* s) {
  const uint lid = chanflow_local_id();
  const uint none = 0xffffffffu;
  const uint group = active ? chanflow_ce_index(ch, ctrl_pos) / ch->done_group : none;
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
}
