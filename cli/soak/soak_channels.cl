/* The channel soak (chanflow soak channels): CEs grown through one channel by work-groups that
 * consume and produce on it in the same launch. With stride 0 the CEs form a heap-numbered tree
 * (id i has children 2i + 1 and 2i + 2 below `limit`: two CEs per work-item's reservation); with
 * stride s > 0 they form s chains (id i has the child i + s; the host seeds 0 .. s - 1). Either
 * way every id in [0, limit) arrives exactly once. Each CE carries a payload derived from its id; every consumer checks it and sets
 * the id's bit in `seen` (a bit already set is a duplicate). A work-group whose talloc is
 * refused records its parents in `retry`: the host produces their children later, so nothing
 * is dropped even at a capacity of one work-group's request. */

uint soak_mix(uint id, uint j) {
  uint x = id * 0x9E3779B1u + j * 0x85EBCA77u + 0x27d4eb2fu;
  x ^= x >> 15;
  x *= 0x2c1b3c6du;
  x ^= x >> 12;
  return x;
}

/* counts: [0] bad payloads, [1] duplicates, [2] retry records, [3] ids out of range */
__kernel __attribute__((reqd_work_group_size(CHANFLOW_WG_SIZE, 1, 1)))
void soak_expand(__global chanflow_channel* ch, ulong begin, uint count, uint limit, uint stride, __global uint* seen,
                 __global uint* retry, uint retry_capacity, __global uint* counts) {
  __local chanflow_wg_scratch wg;
  const uint g = (uint)get_global_id(0);
  const int active = g < count;
  const uint words = ch->ce_bytes / 4u;
  uint id = 0;
  if (active) {
    __global const uint* ce = (__global const uint*)deq(ch, begin + g);
    id = ce[0];
    int ok = id < limit;
    for (uint j = 1; j < words && ok; ++j) ok = ce[j] == soak_mix(id, j);
    if (id >= limit) atomic_inc(&counts[3]);
    else if (!ok) atomic_inc(&counts[0]);
    else if (atomic_or(&seen[id / 32u], 1u << (id % 32u)) & (1u << (id % 32u))) atomic_inc(&counts[1]);
  }
  const uint first = stride ? id + stride : 2u * id + 1u;
  const uint n = !active || first >= limit ? 0u : (!stride && first + 1u < limit ? 2u : 1u);
  chanflow_ticket t;
  __global uint* out = (__global uint*)talloc(ch, n, &t, &wg);
  if (n > 0 && out) {
    for (uint c = 0; c < n; ++c) {
      out[c * words] = first + c;
      for (uint j = 1; j < words; ++j) out[c * words + j] = soak_mix(first + c, j);
    }
  } else if (n > 0) {
    const uint at = atomic_inc(&counts[2]);
    if (at < retry_capacity) retry[at] = id;
  }
  enq(ch, &t, &wg);
  tfree(ch, begin + g, active, &wg);
}
