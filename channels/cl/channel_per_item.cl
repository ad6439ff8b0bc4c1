/* The thesis' baseline channel (Figure 4-15): every work-item makes its own global atomics.
 * Same layout and protocol as channel.cl; kept only as the benchmark's point of comparison. */

__global void* chanflow_talloc_per_item(__global chanflow_channel* ch, uint n, chanflow_ticket* t) {
  uint index = 0;
  t->n = 0;
  t->offset = 0;
  t->total = 0;
  if (!chanflow_reserve_data(ch, n, &index, 0u)) return 0;
  t->index = index;
  t->n = n;
  t->total = n;
  return ch->data + (size_t)index * ch->ce_bytes;
}

void chanflow_enq_per_item(__global chanflow_channel* ch, const chanflow_ticket* t) {
  if (t->n == 0) return;
  const ulong first = atom_add(&ch->ctrl_reserve_tail, (ulong)t->n);
  CHANFLOW_COUNT_ATOMIC(ch);
  chanflow_write_ctrl(ch, first, t);
  chanflow_fence_acq_rel(); /* release: entries before the count that publishes them */
  atom_add(&ch->ctrl_published, (ulong)t->n);
  atom_add(&ch->ctrl_credits, (ulong)t->n);
  CHANFLOW_COUNT_ATOMIC(ch);
}

void chanflow_tfree_per_item(__global chanflow_channel* ch, ulong ctrl_pos) {
  atomic_inc(&ch->done[(chanflow_ce_index(ch, ctrl_pos) % ch->capacity) / ch->done_group]);
  CHANFLOW_COUNT_ATOMIC(ch);
}
