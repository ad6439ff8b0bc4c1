/* In-order deallocation (thesis 4.1.2, t11 of Figure 4-2), run by the aggregator as a small kernel
 * after each round's dispatches, in the same in-order queue: no work-item of the round can still
 * be freeing CEs, so plain reads and writes suffice, and the host learns the new heads with the
 * one header read it makes anyway instead of reading every done-count window back.
 *
 * From data_head (always on a group boundary), every done-count group whose count equals the CEs
 * allocated in it is freed: its count is zeroed, the head advances, the credits return. When the
 * tail stands inside the last group and everything allocated there is done, the channel is empty:
 * the group's unallocated rest is skipped (the tail moves to the boundary), or a request as large
 * as the channel could never be granted while those slots waited for allocations. */

/* One work-group per channel (`channels` holds header addresses). The work-items test the live
 * window's groups in parallel, a local minimum finds the first incomplete one, and the complete
 * groups before it are reset in parallel, rather than one GPU thread walking the counts one
 * dependent load at a time. */
__kernel void chanflow_deallocate(__global const ulong* channels, uint count) {
  __local uint first_incomplete;
  __local uint double_free;
  if (get_group_id(0) >= count) return;
  __global chanflow_channel* ch = (__global chanflow_channel*)channels[get_group_id(0)];
  const uint lid = (uint)get_local_id(0);
  const uint width = (uint)get_local_size(0);
  const ulong head = ch->data_head, tail = ch->data_tail;
  const uint group_size = ch->done_group;
  const ulong live_groups = (tail - head + group_size - 1) / group_size;  /* head is on a boundary */
  ulong freed_groups = 0;
  if (lid == 0) double_free = 0;
  for (ulong base = 0; base < live_groups; base += width) {
    if (lid == 0) first_incomplete = width;
    barrier(CLK_LOCAL_MEM_FENCE);
    const ulong i = base + lid;
    uint group = 0;
    if (i < live_groups) {
      const ulong pos = head + i * group_size;
      const ulong allocated = min((ulong)group_size, tail - pos);
      group = (uint)((pos % ch->capacity) / group_size);
      const uint done = ch->done[group];
      if (done > allocated) double_free = 1;
      if (done != allocated) atomic_min(&first_incomplete, lid);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint complete = (uint)min((ulong)first_incomplete, live_groups - base);
    if (lid < complete) ch->done[group] = 0;
    freed_groups += complete;
    if (complete < width) break; /* uniform: every item read the same first_incomplete */
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    if (double_free) ch->errors |= CHANFLOW_CHANNEL_ERR_OVERFREE;
    if (freed_groups > 0) {
      const ulong new_head = head + freed_groups * group_size;
      /* A complete last group that the tail stands inside: the channel is empty; skip the
       * group's unallocated rest so the head stays on a boundary. */
      const ulong new_tail = max(tail, new_head);
      ch->data_free += new_head - head - (new_tail - tail);
      ch->data_tail = new_tail;
      ch->data_head = new_head;
    }
  }
}
