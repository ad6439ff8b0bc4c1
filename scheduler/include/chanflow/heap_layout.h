/* The device heap's layout, declared once for host C++ and OpenCL C (scheduler/cl/heap.cl holds
 * the device side, chanflow::DeviceHeap the host side; scheduler/README.md, "The device heap").
 *
 * One SVM allocation: this header, then the arena, then the sink. The arena is cut into blocks
 * of 16-byte units, each a 16-byte chanflow_heap_block followed by its payload, whose size is one
 * of CHANFLOW_HEAP_CLASSES size classes (four per doubling: at most a quarter wasted). A block
 * never changes class and the arena never shrinks: fresh blocks come from `bump`, freed ones go
 * on a free list of their class, one of CHANFLOW_HEAP_SHARDS lists per class so that
 * work-items freeing and allocating at once mostly touch different words (a work-item's shard is
 * a hash of its global id; an allocation tries CHANFLOW_HEAP_PROBE lists from its own before it
 * takes fresh units, and every list once the arena is used up; a freed block goes back to the
 * list of its home shard, where it was first taken, so each shard's lists keep what its own
 * allocations took and the arena stops growing once they hold their shard's peak). A free list is a lock-free stack whose 64-bit head is the top
 * block's unit + 1 in its low CHANFLOW_HEAP_UNIT_BITS bits and, above them, a tag counting the
 * head's changes (so a head read before another work-group popped and pushed the same block
 * again is refused: the ABA problem). */
#ifndef CHANFLOW_HEAP_LAYOUT_H
#define CHANFLOW_HEAP_LAYOUT_H

#ifndef __OPENCL_VERSION__
#include "chanflow/channel_layout.h" /* chanflow_u64, chanflow_u32 */
#define CHANFLOW_HEAP_INLINE static inline
#else
#define CHANFLOW_HEAP_INLINE
#endif

#define CHANFLOW_HEAP_UNIT 16u
#define CHANFLOW_HEAP_CLASSES 120u /* payloads of 16 B to 32 GiB */
#define CHANFLOW_HEAP_SHARDS 128u
#define CHANFLOW_HEAP_PROBE 8u        /* shards an allocation tries before taking fresh units */
#define CHANFLOW_HEAP_LIVE_SHARDS 16u /* counters of blocks live (shard % 16) */
#define CHANFLOW_HEAP_UNIT_BITS 36 /* units of the arena (1 TiB); the tag has the other 28 bits */
#define CHANFLOW_HEAP_UNIT_MASK 0xfffffffffUL
#define CHANFLOW_HEAP_LIVE_STRIDE 16u /* u64 words between two shards' live counts */

/* chanflow_heap_block::state */
#define CHANFLOW_HEAP_USED 0xa110c8edu
#define CHANFLOW_HEAP_FREE 0xf4eef4eeu

/* chanflow_heap_block::class_home: the block's size class, and above it its home shard (the
 * shard of the work-item that took it fresh), whose list it goes back to whoever frees it. */
#define CHANFLOW_HEAP_CLASS_HOME(c, home) ((c) | (home) << 16)
#define CHANFLOW_HEAP_CLASS(w) ((w) & 0xffffu)
#define CHANFLOW_HEAP_HOME(w) ((w) >> 16)

typedef struct chanflow_heap_block {
  chanflow_u32 class_home; /* CHANFLOW_HEAP_CLASS, CHANFLOW_HEAP_HOME */
  chanflow_u32 state; /* CHANFLOW_HEAP_USED while handed out, CHANFLOW_HEAP_FREE on a free list */
  /* On a free list: the next block's unit + 1 (0: the last). Handed out by chanflow_alloca: the
   * payload address of the block its frame took before it (0: the first). */
  chanflow_u64 next;
} chanflow_heap_block;

typedef struct chanflow_heap {
  chanflow_u64 base;       /* the arena's first unit (an SVM address) */
  chanflow_u64 units;      /* the arena's size in units */
  chanflow_u64 bump;       /* units handed out fresh so far (only grows: the high-water mark) */
  chanflow_u64 sink;       /* what a request the heap cannot meet gets (the run has failed) */
  chanflow_u64 sink_bytes;
  chanflow_u64 pad[3];
  chanflow_u64 heads[CHANFLOW_HEAP_CLASSES * CHANFLOW_HEAP_SHARDS]; /* class c, shard s at c * SHARDS + s */
  /* Blocks handed out less blocks given back, counted by shard (a work-item's shard s at
   * (s % LIVE_SHARDS) * CHANFLOW_HEAP_LIVE_STRIDE: a 128-byte line each) modulo 2^64: their sum is the blocks
   * live, one shard's alone means nothing (a block is often freed by another work-item than took
   * it). The host maps none of the arena when none is live. */
  chanflow_u64 live[CHANFLOW_HEAP_LIVE_SHARDS * CHANFLOW_HEAP_LIVE_STRIDE];
} chanflow_heap;

/* Payload bytes of size class c: 16, 32, 48, 64, then four classes per doubling
 * (80, 96, 112, 128, 160, 192, ...). */
CHANFLOW_HEAP_INLINE chanflow_u64 chanflow_heap_class_bytes(chanflow_u32 c) {
  if (c < 4u) return (chanflow_u64)(c + 1u) * 16u;
  const chanflow_u32 g = (c - 4u) / 4u, s = (c - 4u) % 4u;
  return ((chanflow_u64)16u << g) * (5u + s);
}

/* The smallest size class holding `bytes` (CHANFLOW_HEAP_CLASSES if none does). */
CHANFLOW_HEAP_INLINE chanflow_u32 chanflow_heap_class_of(chanflow_u64 bytes) {
  if (bytes <= 64u) return bytes == 0u ? 0u : (chanflow_u32)((bytes - 1u) / 16u);
  if (bytes > chanflow_heap_class_bytes(CHANFLOW_HEAP_CLASSES - 1u)) return CHANFLOW_HEAP_CLASSES;
  const chanflow_u64 m = bytes - 1u;
  chanflow_u32 e = 0u; /* floor(log2(m)), at least 6 */
  while ((m >> (e + 1u)) != 0u) ++e;
  const chanflow_u32 g = e - 6u;
  const chanflow_u32 c = 4u + 4u * g + (chanflow_u32)((m - ((chanflow_u64)64u << g)) / ((chanflow_u64)16u << g));
  return c < CHANFLOW_HEAP_CLASSES ? c : CHANFLOW_HEAP_CLASSES;
}

#endif /* CHANFLOW_HEAP_LAYOUT_H */
