/* Test kernels for the channel suites: a binary tree of CEs grown through one channel by
 * kernels that consume and produce at once, plus probes for single channel calls.
 * A CE with id i holds i in word 0 and mix(i, j) in word j; its depth is log2(i + 1). */

uint mix(uint id, uint j) {
  uint x = id * 0x9E3779B1u + j * 0x85EBCA77u + 0x27d4eb2fu;
  x ^= x >> 15;
  x *= 0x2c1b3c6du;
  x ^= x >> 12;
  return x;
}

uint depth_of(uint id) { return 31u - clz(id + 1u); }

void write_ce(__global uint* ce, uint id, uint words) {
  ce[0] = id;
  for (uint j = 1; j < words; ++j) ce[j] = mix(id, j);
}

int check_ce(__global const uint* ce, uint words) {
  for (uint j = 1; j < words; ++j)
    if (ce[j] != mix(ce[0], j)) return 0;
  return 1;
}

/* Consumes [begin, begin + count): counts each id in seen, spawns the two children of every
 * CE shallower than max_depth. A work-group whose talloc fails records its parents in
 * retry (the host seeds their children later), so nothing is lost. */
__kernel __attribute__((reqd_work_group_size(CHANFLOW_WG_SIZE, 1, 1)))
void expand(__global chanflow_channel* ch, ulong begin, uint count, uint max_depth,
            __global uint* seen, uint seen_len, __global uint* retry, __global uint* retry_count,
            __global uint* errors) {
  __local chanflow_wg_scratch wg;
  const uint g = (uint)get_global_id(0);
  const int active = g < count;
  const uint words = ch->ce_bytes / 4;
  uint id = 0;
  if (active) {
    __global const uint* ce = (__global const uint*)deq(ch, begin + g);
    id = ce[0];
    if (id >= seen_len || !check_ce(ce, words)) atomic_inc(&errors[0]);
    else atomic_inc(&seen[id]);
  }
  const uint n = (active && depth_of(id) < max_depth) ? 2u : 0u;
  chanflow_ticket t;
  __global uint* out = (__global uint*)talloc(ch, n, &t, &wg);
  if (n > 0) {
    if (out) {
      write_ce(out, 2u * id + 1u, words);
      write_ce(out + words, 2u * id + 2u, words);
    } else {
      retry[atomic_inc(retry_count)] = id;
    }
  }
  enq(ch, &t, &wg);
  tfree(ch, begin + g, active, &wg);
}

/* The per-work-item baseline channel doing the same tree expansion. */
__kernel __attribute__((reqd_work_group_size(CHANFLOW_WG_SIZE, 1, 1)))
void expand_per_item(__global chanflow_channel* ch, ulong begin, uint count, uint max_depth,
                     __global uint* seen, uint seen_len, __global uint* retry,
                     __global uint* retry_count, __global uint* errors) {
  const uint g = (uint)get_global_id(0);
  if (g >= count) return;
  const uint words = ch->ce_bytes / 4;
  __global const uint* ce = (__global const uint*)deq(ch, begin + g);
  const uint id = ce[0];
  if (id >= seen_len || !check_ce(ce, words)) atomic_inc(&errors[0]);
  else atomic_inc(&seen[id]);
  if (depth_of(id) < max_depth) {
    chanflow_ticket t;
    __global uint* out = (__global uint*)chanflow_talloc_per_item(ch, 2u, &t);
    if (out) {
      write_ce(out, 2u * id + 1u, words);
      write_ce(out + words, 2u * id + 2u, words);
      chanflow_enq_per_item(ch, &t);
    } else {
      retry[atomic_inc(retry_count)] = id;
    }
  }
  chanflow_tfree_per_item(ch, begin + g);
}

/* Every item asks for want[g] CEs and records what talloc told it (pos: the physical index of
 * its first CE); got_null[g] = 1 when it received NULL. Successful items fill their CEs with ids g * 1024 + k and, if publish, enq. */
__kernel __attribute__((reqd_work_group_size(CHANFLOW_WG_SIZE, 1, 1)))
void reserve_probe(__global chanflow_channel* ch, __global const uint* want,
                   __global ulong* pos, __global uint* offset, __global uint* total,
                   __global uint* got_null, uint publish) {
  __local chanflow_wg_scratch wg;
  const uint g = (uint)get_global_id(0);
  const uint words = ch->ce_bytes / 4;
  chanflow_ticket t;
  __global uint* out = (__global uint*)talloc(ch, want[g], &t, &wg);
  got_null[g] = out == 0;
  pos[g] = t.index;
  offset[g] = t.offset;
  total[g] = t.total;
  if (out)
    for (uint k = 0; k < t.n; ++k) write_ce(out + k * words, g * 1024u + k, words);
  if (publish) enq(ch, &t, &wg);
}

/* Reads the ids of [begin, begin + count) into ids and frees those whose slot (data index
 * modulo capacity) lies outside [skip_lo, skip_hi). */
__kernel __attribute__((reqd_work_group_size(CHANFLOW_WG_SIZE, 1, 1)))
void free_except(__global chanflow_channel* ch, ulong begin, uint count, uint skip_lo,
                 uint skip_hi, __global uint* ids) {
  __local chanflow_wg_scratch wg;
  const uint g = (uint)get_global_id(0);
  const uint index = g < count ? chanflow_ce_index(ch, begin + g) % ch->capacity : 0u;
  if (g < count) ids[g] = ((__global const uint*)deq(ch, begin + g))[0];
  const int active = g < count && (index < skip_lo || index >= skip_hi);
  tfree(ch, begin + g, active, &wg);
}

/* Frees the CEs of [begin, begin + count) whose slot lies in [lo, hi). */
__kernel __attribute__((reqd_work_group_size(CHANFLOW_WG_SIZE, 1, 1)))
void free_only(__global chanflow_channel* ch, ulong begin, uint count, uint lo, uint hi) {
  __local chanflow_wg_scratch wg;
  const uint g = (uint)get_global_id(0);
  const uint index = g < count ? chanflow_ce_index(ch, begin + g) % ch->capacity : 0u;
  tfree(ch, begin + g, g < count && index >= lo && index < hi, &wg);
}

/* Frees the CE at physical index `index` twice (by work-item 0, two collective tfrees): the
 * double free the done counts alone miss while the group holds other live CEs. */
__kernel __attribute__((reqd_work_group_size(CHANFLOW_WG_SIZE, 1, 1)))
void free_twice(__global chanflow_channel* ch, uint index) {
  __local chanflow_wg_scratch wg;
  const int mine = get_local_id(0) == 0;
  chanflow_tfree_index(ch, index, mine, &wg);
  chanflow_tfree_index(ch, index, mine, &wg);
}
