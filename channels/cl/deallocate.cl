/* In-order deallocation (thesis 4.1.2, t11 of Figure 4-2), run by the aggregator as a tiny kernel
 * after each round's dispatches, in the same in-order queue: no work-item of the round can still
 * be freeing CEs, so plain reads and writes suffice, and the host learns the new heads with the
 * one header read it makes anyway instead of reading every done-count window back.
 *
 * From data_head (always on a group boundary), every done-count group whose count equals the CEs
 * allocated in it is freed: its count is zeroed, the head advances, the credits return. When the
 * tail stands inside the last group and everything allocated there is done, the channel is empty:
 * the group's unallocated rest is skipped (the tail moves to the boundary), or a request as large
 * as the channel could never be granted while those slots waited for allocations. */

#define CHANFLOW_ERROR_DOUBLE_FREE 1ul

void chanflow_deallocate_channel(__global chanflow_channel* ch) {
  const ulong head = ch->data_head, tail = ch->data_tail;
  const uint group_size = ch->done_group;
  ulong new_head = head, new_tail = tail;
  while (new_head < tail) {
    const uint group = (uint)((new_head % ch->capacity) / group_size);
    const ulong allocated = min((ulong)group_size, tail - new_head);
    const uint done = ch->done[group];
    if (done > allocated) {
      ch->errors |= CHANFLOW_ERROR_DOUBLE_FREE;
      break;
    }
    if (done != allocated) break;
    ch->done[group] = 0;
    if (allocated < group_size) new_tail = new_head + group_size;
    new_head += group_size;
  }
  if (new_head != head) {
    ch->data_free += (tail - head) - (new_tail - new_head);
    ch->data_tail = new_tail;
    ch->data_head = new_head;
  }
}

/* One work-item per channel; `channels` holds header addresses. */
__kernel void chanflow_deallocate(__global const ulong* channels, uint count) {
  const uint i = (uint)get_global_id(0);
  if (i < count) chanflow_deallocate_channel((__global chanflow_channel*)channels[i]);
}
