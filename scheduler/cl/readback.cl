/* What the host reads once a device-scheduler launch has ended, gathered into one block on the
 * device so that it is one copy to the host (Aggregator::enqueue_readback): the scheduler's
 * header, the launch counters, every channel's header, the resumable counts, the status and the
 * frame scratch census. Read piece by piece they were six copies and a census launch, each copy
 * ~20 us on NVIDIA's OpenCL (`chanflow bench launch`, its copy table).
 *
 * Work-groups 0 .. pool_count-1 each count one frame scratch pool's blocks still taken into
 * taken[group] (`pools`: their headers' addresses): the end-of-run check that every frame gave its
 * block back, counted here rather than by reading the bitmaps back (a GPU's levels hold up to 2^20
 * frames, and reading every level's bitmap took ~10 ms a run on an H200). The rounds launch it
 * with no pieces for the census alone. Work-group pool_count copies the pieces. A piece may also reset its source for
 * the next launch, word by word after reading it: zeroed, or copied from a template (the header
 * as the host laid it out), so that a launch over an unchanged graph needs no write before it.
 * Built as a program of its own (Aggregator::readback_kernel): a graph's program, and its build
 * in the driver's cache, do not change with it. */
__kernel void chanflow_readback(__global const chanflow_readback_piece* pieces, uint count,
                                __global const ulong* pools, uint pool_count, __global uint* taken) {
  __local uint blocks;
  const uint group = get_group_id(0), lid = get_local_id(0), size = get_local_size(0);
  if (lid == 0u) blocks = 0u;
  barrier(CLK_LOCAL_MEM_FENCE); /* not under a condition: PoCL 3.1 mis-runs those */
  if (group < pool_count) {
    __global const chanflow_scratch_pool* pool = (__global const chanflow_scratch_pool*)pools[group];
    const uint words = pool->words, tail = pool->blocks % 32u;
    uint n = 0u;
    for (uint w = lid; w < words; w += size) {
      uint bits = pool->bitmap[w];
      if (w == words - 1u && tail != 0u) bits &= (1u << tail) - 1u; /* bits past the last block stay set */
      n += popcount(bits);
    }
    if (n != 0u) atomic_add(&blocks, n);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (group < pool_count && lid == 0u) taken[group] = blocks;
  if (group != pool_count) return;
  for (uint p = 0u; p < count; ++p) {
    __global uint* src = (__global uint*)pieces[p].src;
    __global uint* dst = (__global uint*)pieces[p].dst;
    const ulong reset = pieces[p].reset;
    __global const uint* from = reset > CHANFLOW_READBACK_ZERO ? (__global const uint*)reset : 0;
    for (uint w = lid; w < pieces[p].words; w += size) {
      dst[w] = src[w];
      if (reset == CHANFLOW_READBACK_ZERO) src[w] = 0u;
      else if (from) src[w] = from[w];
    }
  }
}
