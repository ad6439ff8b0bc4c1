/* `chanflow bench messages`: CEs from a kernel on one rank to a kernel on another. The producing
 * rank's kernel enqueues CEs into its outbound channel with leader-level reservations, each CE
 * naming itself (its number, then words derived from it); the consuming rank's kernel deqs the
 * CEs that landed in its inbound channel, checks every word and counts each number it saw. */

ulong word_of(ulong id, uint j) { return id * 0x9E3779B97F4A7C15ul + j; }

__kernel __attribute__((reqd_work_group_size(CHANFLOW_WG_SIZE, 1, 1)))
void produce_remote(__global chanflow_channel* ch, ulong base, uint n, __global uint* failed) {
  __local chanflow_wg_scratch wg;
  const uint g = (uint)get_global_id(0);
  const uint want = g < n ? 1u : 0u;
  chanflow_ticket t;
  __global ulong* ce = (__global ulong*)talloc(ch, want, &t, &wg);
  if (want) {
    if (ce) {
      ce[0] = base + g;
      for (uint j = 1; j < ch->ce_bytes / 8; ++j) ce[j] = word_of(base + g, j);
    } else {
      atomic_inc(failed);
    }
  }
  enq(ch, &t, &wg);
}

__kernel __attribute__((reqd_work_group_size(CHANFLOW_WG_SIZE, 1, 1)))
void consume_remote(__global chanflow_channel* ch, ulong begin, uint count, ulong total, __global uint* seen,
                    __global uint* bad) {
  __local chanflow_wg_scratch wg;
  const uint g = (uint)get_global_id(0);
  const int active = g < count;
  if (active) {
    __global const ulong* ce = (__global const ulong*)deq(ch, begin + g);
    const ulong id = ce[0];
    int right = id < total;
    for (uint j = 1; j < ch->ce_bytes / 8; ++j) right = right && ce[j] == word_of(id, j);
    if (right) atomic_inc(&seen[id]);
    else atomic_inc(bad);
  }
  tfree(ch, begin + g, active, &wg);
}
