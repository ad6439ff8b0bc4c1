/* Channel throughput kernels: phase 1, every work-item talloc+enq one CE; phase 2, every
 * work-item deq+tfree one CE and reports the id it found (the host checks none is lost or
 * duplicated). *_leader use the work-group collectives, *_per_item the baseline channel. */

void fill(__global uint* ce, uint id, uint words) {
  ce[0] = id;
  for (uint j = 1; j < words; ++j) ce[j] = id ^ (j * 0x9E3779B9u);
}

uint check(__global const uint* ce, uint words) {
  const uint id = ce[0];
  for (uint j = 1; j < words; ++j)
    if (ce[j] != (id ^ (j * 0x9E3779B9u))) return 0xffffffffu;
  return id;
}

__kernel __attribute__((reqd_work_group_size(CHANFLOW_WG_SIZE, 1, 1)))
void produce_leader(__global chanflow_channel* ch, uint n, __global uint* failed) {
  __local chanflow_wg_scratch wg;
  const uint g = (uint)get_global_id(0);
  const uint want = g < n ? 1u : 0u;
  chanflow_ticket t;
  __global uint* ce = (__global uint*)talloc(ch, want, &t, &wg);
  if (want) {
    if (ce) fill(ce, g, ch->ce_bytes / 4);
    else atomic_inc(failed);
  }
  enq(ch, &t, &wg);
}

__kernel __attribute__((reqd_work_group_size(CHANFLOW_WG_SIZE, 1, 1)))
void consume_leader(__global chanflow_channel* ch, ulong begin, uint count, __global uint* out) {
  __local chanflow_wg_scratch wg;
  const uint g = (uint)get_global_id(0);
  const int active = g < count;
  if (active) out[g] = check((__global const uint*)deq(ch, begin + g), ch->ce_bytes / 4);
  tfree(ch, begin + g, active, &wg);
}

__kernel __attribute__((reqd_work_group_size(CHANFLOW_WG_SIZE, 1, 1)))
void produce_per_item(__global chanflow_channel* ch, uint n, __global uint* failed) {
  const uint g = (uint)get_global_id(0);
  if (g >= n) return;
  chanflow_ticket t;
  __global uint* ce = (__global uint*)chanflow_talloc_per_item(ch, 1u, &t);
  if (!ce) {
    atomic_inc(failed);
    return;
  }
  fill(ce, g, ch->ce_bytes / 4);
  chanflow_enq_per_item(ch, &t);
}

__kernel __attribute__((reqd_work_group_size(CHANFLOW_WG_SIZE, 1, 1)))
void consume_per_item(__global chanflow_channel* ch, ulong begin, uint count, __global uint* out) {
  const uint g = (uint)get_global_id(0);
  if (g >= count) return;
  out[g] = check((__global const uint*)deq(ch, begin + g), ch->ce_bytes / 4);
  chanflow_tfree_per_item(ch, begin + g);
}
